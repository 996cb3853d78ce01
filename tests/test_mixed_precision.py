"""keras.mixed_precision against Keras 3.15 (tests/data/mixed_precision_reference.json,
made by benchmarks/mixed_precision_reference.py): policies, layer dtypes, autocast of
float32 weights to float16 inside a call, and dynamic loss scaling in training."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from benchmarks.mixed_precision_reference import build, inputs

keras = tf.keras
mp = keras.mixed_precision
REF = json.loads((pathlib.Path(__file__).parent / "data" /
                  "mixed_precision_reference.json").read_text())


@pytest.fixture
def mixed():
    mp.set_global_policy("mixed_float16")
    try:
        yield
    finally:
        mp.set_global_policy("float32")


def test_policies():
    p = mp.Policy("mixed_float16")
    assert (p.name, p.compute_dtype, p.variable_dtype) == ("mixed_float16", "float16",
                                                           "float32")
    assert repr(p) == '<DTypePolicy "mixed_float16">' and mp.DTypePolicy is mp.Policy
    assert mp.DTypePolicy(None) == mp.DTypePolicy("float32")
    assert mp.global_policy().name == "float32"
    with pytest.raises(ValueError, match="Cannot convert 'foo' to a mixed precision"):
        mp.DTypePolicy("foo")
    with pytest.raises(TypeError, match="'name' must be a string"):
        mp.DTypePolicy(3)
    with pytest.raises(ValueError, match="Invalid `policy` argument"):
        mp.set_global_policy(None)
    with pytest.raises(ValueError, match="NumPy, its only array library, has no bfloat16"):
        mp.set_global_policy("mixed_bfloat16")
    assert mp.global_policy().name == "float32"


def test_guide_model_dtypes_and_training_match_keras(mixed):
    x, y, w = inputs()
    model = build(keras)
    model.set_weights(w)
    for layer in model.layers[1:]:
        ref = REF["layers"][layer.name]
        assert (layer.compute_dtype, layer.variable_dtype, layer.dtype,
                layer.dtype_policy.name) == (ref["compute"], ref["variable"], ref["dtype"],
                                             ref["policy"])
        assert layer.output.dtype.name == REF["outputs"][layer.name]
        for v in layer.weights:
            assert v.dtype.name == "float32"
    opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1),
                                              initial_scale=2.0 ** 20, dynamic_growth_steps=2)
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    for ref in REF["steps"]:  # overflowing steps are skipped and halve the scale
        loss = model.train_on_batch(x, y)
        assert float(opt.dynamic_scale.numpy()) == ref["scale"]
        assert int(opt.step_counter.numpy()) == ref["counter"]
        assert int(opt.iterations.numpy()) == ref["iterations"]
        np.testing.assert_allclose(float(loss), ref["loss"], rtol=2e-3)
    for got, want in zip(model.get_weights(), REF["weights"]):
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-3)
    pred = model(x)
    assert pred.dtype.name == REF["prediction_dtype"]
    np.testing.assert_allclose(pred.numpy(), REF["prediction"], rtol=2e-2, atol=2e-3)


def test_compile_wraps_the_optimizer_and_fit_runs(mixed):
    x, y, _ = inputs()
    model = build(keras)
    model.compile(optimizer=keras.optimizers.RMSprop(), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    assert type(model.optimizer).__name__ == REF["compiled_optimizer"]
    hist = model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert np.all(np.isfinite(hist.history["loss"]))
    assert model.predict(x, verbose=0).dtype == np.float32
    plain = build(keras)
    plain.compile(optimizer="sgd", loss="mse", auto_scale_loss=False)
    assert type(plain.optimizer).__name__ == "SGD"


def test_jit_train_step_scales_losses(mixed):
    x, y, _ = inputs()
    model = build(keras)
    model.compile(optimizer=keras.optimizers.LossScaleOptimizer(
        keras.optimizers.SGD(0.1), initial_scale=2.0 ** 20, dynamic_growth_steps=2),
        loss="sparse_categorical_crossentropy", jit_compile=True)
    x_, y_, w = inputs()
    model.set_weights(w)
    scales = []
    for _ in range(4):
        model.train_on_batch(x, y)
        scales.append(float(model.optimizer.dynamic_scale.numpy()))
    assert scales == [r["scale"] for r in REF["steps"][:4]]


def test_autocast_gradients_reach_float32_variables(mixed):
    layer = keras.layers.Dense(3)
    x = np.ones((2, 4), np.float32)
    with tf.GradientTape() as tape:
        out = layer(x)
        loss = tf.reduce_sum(tf.cast(out, tf.float32))
    assert out.dtype.name == "float16"
    grads = tape.gradient(loss, layer.trainable_variables)
    assert [g.dtype.name for g in grads] == ["float32", "float32"]
    np.testing.assert_allclose(grads[0].numpy(), np.full((4, 3), 2.0))
    # outside a call the attribute is the float32 variable again
    assert type(layer.kernel) is tf.Variable and layer.kernel.dtype.name == "float32"


def test_layer_dtype_argument_and_config():
    layer = keras.layers.Dense(2, dtype="mixed_float16")
    assert layer.dtype_policy.name == "mixed_float16" and layer.compute_dtype == "float16"
    config = layer.get_config()
    assert config["dtype"] == {"module": "keras", "class_name": "DTypePolicy",
                               "config": {"name": "mixed_float16"}, "registered_name": None}
    again = keras.layers.Dense.from_config(config)
    assert again.dtype_policy == mp.DTypePolicy("mixed_float16")
    assert keras.layers.Dense(2).get_config()["dtype"] == "float32"


def test_loss_scale_optimizer_arguments():
    inner = keras.optimizers.SGD()
    with pytest.raises(ValueError, match="does not support `clipnorm`"):
        keras.optimizers.LossScaleOptimizer(inner, clipnorm=1.0)
    with pytest.raises(ValueError, match="does not support arguments: `foo`"):
        keras.optimizers.LossScaleOptimizer(inner, foo=1)
    with pytest.raises(ValueError, match="no longer supports `dynamic=False`"):
        keras.optimizers.LossScaleOptimizer(inner, dynamic=False)
    opt = mp.LossScaleOptimizer(inner, initial_scale=4.0)
    assert float(opt.scale_loss(tf.constant(1.5))) == 6.0
    config = opt.get_config()
    assert config["initial_scale"] == 4.0 and config["dynamic_growth_steps"] == 2000
    again = keras.optimizers.LossScaleOptimizer.from_config(config)
    assert type(again.inner_optimizer).__name__ == "SGD" and again.initial_scale == 4.0
