"""Same numbers as Keras 3: every layer, loss, metric, schedule and optimizer case of
tests/data/keras_reference.npz (written by real Keras with the TensorFlow backend, see
benchmarks/keras_reference.py) is rebuilt in tapegrad from the same weights and compared
to float32 precision. TensorFlow is never imported here."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras

DATA = np.load(pathlib.Path(__file__).parent / "data" / "keras_reference.npz",
               allow_pickle=False)
MANIFEST = json.loads(str(DATA["manifest"]))
RTOL, ATOL = 2e-6, 2e-6


def _close(actual, expected, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=rtol, atol=atol)


def _by_name(kind):
    return {c["name"]: c for c in MANIFEST[kind]}


@pytest.mark.parametrize("case", MANIFEST["layers"], ids=lambda c: c["name"])
def test_layer_outputs_match_keras(case):
    name = case["name"]
    layer = getattr(keras.layers, case["class"])(**case["config"])
    inputs = [DATA[f"layer/{name}/input{i}"] for i in range(case["inputs"])]
    arg = inputs if len(inputs) > 1 else inputs[0]
    layer(arg)
    assert [w.name for w in layer.weights] == case["weight_names"]
    layer.set_weights([DATA[f"layer/{name}/weight{i}"] for i in range(case["weights"])])
    out = layer(arg, **case["kwargs"])
    _close(out, DATA[f"layer/{name}/output"], rtol=1e-5, atol=1e-6)
    for i, w in enumerate(layer.weights):  # BatchNormalization's moving statistics
        _close(w, DATA[f"layer/{name}/after{i}"])


@pytest.mark.parametrize("case", MANIFEST["losses"], ids=lambda c: c["name"])
def test_losses_match_keras(case):
    name = case["name"]
    if "activation" in case:
        prefix = f"lossact/{name}"
        y_pred = getattr(keras.activations, case["activation"])(DATA[f"{prefix}/logits"])
        value = getattr(keras.losses, case["class"])(**case["config"])(
            DATA[f"{prefix}/y_true"], y_pred)
    elif "function" in case:
        prefix = f"lossfn/{name}"
        value = getattr(keras.losses, case["function"])(DATA[f"{prefix}/y_true"],
                                                       DATA[f"{prefix}/y_pred"])
    else:
        prefix = f"loss/{name}"
        loss = getattr(keras.losses, case["class"])(**case["config"])
        sw = DATA[f"{prefix}/sample_weight"] if case["weighted"] else None
        value = loss(DATA[f"{prefix}/y_true"], DATA[f"{prefix}/y_pred"], sample_weight=sw)
    assert value.dtype == np.float32
    _close(value, DATA[f"{prefix}/value"], rtol=1e-5)


@pytest.mark.parametrize("case", MANIFEST["metrics"], ids=lambda c: c["name"])
def test_metrics_match_keras(case):
    name = case["name"]
    metric = getattr(keras.metrics, case["class"])()
    for step in range(2):
        sw = DATA[f"metric/{name}/sample_weight{step}"]
        if case["class"] == "Mean":
            metric.update_state(DATA[f"metric/{name}/values{step}"], sample_weight=sw)
        else:
            metric.update_state(DATA[f"metric/{name}/y_true{step}"],
                                DATA[f"metric/{name}/y_pred{step}"], sample_weight=sw)
    _close(metric.result(), DATA[f"metric/{name}/result"], rtol=1e-6)
    metric.reset_state()
    assert float(metric.result()) == 0.0


@pytest.mark.parametrize("case", MANIFEST["schedules"], ids=lambda c: c["name"])
def test_schedules_match_keras(case):
    schedule = getattr(keras.optimizers.schedules, case["class"])(**case["config"])
    values = [float(schedule(tf.constant(s, dtype=tf.int64))) for s in case["steps"]]
    _close(values, DATA[f"schedule/{case['name']}/values"], rtol=1e-6, atol=1e-8)


def _optimizer(case):
    config = dict(case["config"])
    schedule = config.pop("schedule", None)
    if schedule is not None:
        config["learning_rate"] = getattr(keras.optimizers.schedules, schedule[0])(
            **schedule[1])
    return getattr(keras.optimizers, case["class"])(**config)


def _train(case, compiled, dtype=np.float32):
    x = tf.constant(DATA["optimizer/x"].astype(dtype))
    w = tf.Variable(DATA["optimizer/w0"].astype(dtype))
    b = tf.Variable(DATA["optimizer/b0"].astype(dtype))
    opt = _optimizer(case)

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w) + b) ** 2) + 0.1 * tf.reduce_sum(
                w ** 2)
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
    if compiled:
        step = tf.function(step)
    for _ in range(20):
        step()
    assert int(opt.iterations) == 20
    return w.numpy(), b.numpy()


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
@pytest.mark.parametrize("case", MANIFEST["optimizers"], ids=lambda c: c["name"])
def test_optimizer_weights_after_20_steps_match_keras(case, compiled):
    ours = _train(case, compiled)
    # 20 steps can amplify float32 rounding: the same run in float64 measures how much, and
    # the distance to Keras must stay within a few times that (plus float32 resolution)
    exact = _train(case, False, np.float64)
    for mine, ref, hi, key in zip(ours, (DATA[f"optimizer/{case['name']}/w"],
                                         DATA[f"optimizer/{case['name']}/b"]), exact, "wb"):
        tol = 2e-6 + 2e-5 * np.abs(ref) + 4 * np.abs(hi - mine)
        assert np.all(np.abs(mine - ref) <= tol), (key, mine - ref, hi - mine)


def test_fit_matches_keras():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                              keras.layers.Dense(1)])
    model.set_weights([DATA[f"fit/init{i}"] for i in range(4)])
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
    hist = model.fit(DATA["fit/x"], DATA["fit/y"], batch_size=6, epochs=3, shuffle=False,
                     verbose=0)
    _close(hist.history["loss"], DATA["fit/loss"], rtol=1e-5)
    _close(hist.history["mae"], DATA["fit/mae"], rtol=1e-5)
    for i, w in enumerate(model.get_weights()):
        _close(w, DATA[f"fit/final{i}"], rtol=1e-5, atol=1e-6)
    _close(model.evaluate(DATA["fit/x"], DATA["fit/y"], verbose=0), DATA["fit/evaluate"],
           rtol=1e-5)
    _close(model.predict(DATA["fit/x"][:5], verbose=0), DATA["fit/predict"], rtol=1e-5,
           atol=1e-6)


def test_reference_covers_every_required_name():
    layers = {c["class"] for c in MANIFEST["layers"]}
    assert {"Dense", "BatchNormalization", "LayerNormalization", "Embedding", "Activation",
            "ReLU", "LeakyReLU", "Softmax", "Concatenate", "Add", "Multiply", "Flatten",
            "Reshape", "ZeroPadding2D", "UpSampling2D", "GlobalAveragePooling2D",
            "GlobalMaxPooling2D", "Dropout", "Conv1D", "Conv2D", "Conv2DTranspose",
            "MaxPooling1D", "MaxPooling2D", "AveragePooling2D"} <= layers
    assert {c["class"] for c in MANIFEST["optimizers"]} == {
        "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Nadam"}
    assert {c.get("class") for c in MANIFEST["losses"]} >= {
        "MeanSquaredError", "MeanAbsoluteError", "Huber", "BinaryCrossentropy",
        "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "KLDivergence"}
