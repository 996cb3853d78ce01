"""Weight constraints (keras.constraints, a layer's kernel_constraint=, tf.Variable(constraint=))
against Keras 3.15 (tests/data/keras_constraints_reference.npz, made by
benchmarks/keras_constraints_reference.py). Before, a layer's constraint was stored and never
applied: training gave unconstrained weights without an error."""
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras

REF = np.load(pathlib.Path(__file__).parent / "data" / "keras_constraints_reference.npz")
C = keras.constraints
CASES = {"maxnorm": C.MaxNorm(1.5), "maxnorm012": C.MaxNorm(2.0, axis=[0, 1, 2]),
         "nonneg": C.NonNeg(), "unitnorm": C.UnitNorm(), "unitnorm3": C.UnitNorm(axis=3),
         "minmax": C.MinMaxNorm(0.5, 1.0, rate=0.5, axis=[0, 1, 2]),
         "minmax_default": C.MinMaxNorm()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_constraint_gives_keras_values(name):
    got = CASES[name](tf.constant(REF["w"])).numpy()
    np.testing.assert_allclose(got, REF["c/" + name], rtol=2e-6, atol=1e-7)
    assert np.isfinite(got).all()


def _model():
    return keras.Sequential([
        keras.Input((6, 6, 2)),
        keras.layers.Conv2D(4, 3, kernel_constraint=C.UnitNorm(axis=[0, 1, 2]),
                            bias_constraint="non_neg"),
        keras.layers.Flatten(),
        keras.layers.Dense(5, kernel_constraint=C.MaxNorm(0.7), bias_constraint=C.NonNeg()),
        keras.layers.Dense(3, kernel_constraint=C.MinMaxNorm(0.2, 0.9, rate=0.7)),
    ])


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "compiled"])
def test_fit_applies_constraints_after_each_update_as_keras(jit):
    model = _model()
    n = len(model.get_weights())
    model.set_weights([REF[f"init/{i}"] for i in range(n)])
    model.compile(optimizer=keras.optimizers.SGD(0.3), loss="mse", run_eagerly=not jit)
    model.fit(REF["x"], REF["y"], batch_size=16, epochs=3, shuffle=False, verbose=0)
    for i, w in enumerate(model.get_weights()):
        np.testing.assert_allclose(w, REF[f"fit/{i}"], rtol=2e-5, atol=2e-6)
    kernel = model.layers[2].kernel.numpy()
    assert np.linalg.norm(kernel, axis=0).max() <= 0.7 + 1e-6
    assert (model.layers[2].bias.numpy() >= 0).all()


def test_variable_constraint_is_applied_by_optimizers_not_by_assign():
    v = tf.Variable([3.0, -4.0], constraint=C.NonNeg())
    assert isinstance(v.constraint, C.NonNeg)
    v.assign([-1.0, 2.0])  # assign never applies it, as in TensorFlow
    np.testing.assert_array_equal(v.numpy(), [-1.0, 2.0])
    opt = keras.optimizers.SGD(1.0)
    opt.apply_gradients([(tf.constant([1.0, -1.0]), v)])
    np.testing.assert_array_equal(v.numpy(), [0.0, 3.0])

    @tf.function
    def step(g):
        opt.apply_gradients([(g, v)])
    step(tf.constant([-2.0, 5.0]))
    np.testing.assert_array_equal(v.numpy(), [2.0, 0.0])


def test_wgan_weight_clipping_constraint_class():
    # the WGAN critic's ClipConstraint, as tutorials write it
    class ClipConstraint(keras.constraints.Constraint):
        def __init__(self, clip_value):
            self.clip_value = clip_value

        def __call__(self, weights):
            return tf.clip_by_value(weights, -self.clip_value, self.clip_value)

        def get_config(self):
            return {"clip_value": self.clip_value}

    critic = keras.Sequential([keras.Input((4,)), keras.layers.Dense(
        8, kernel_constraint=ClipConstraint(0.01)), keras.layers.Dense(1)])
    critic.compile(optimizer=keras.optimizers.RMSprop(0.05), loss="mse")
    critic.fit(np.ones((8, 4), "float32"), np.ones((8, 1), "float32"), epochs=2, verbose=0)
    assert np.abs(critic.layers[0].kernel.numpy()).max() <= 0.01 + 1e-9
    assert np.abs(critic.layers[1].kernel.numpy()).max() > 0.01  # unconstrained


def test_configs_serialize_and_restore_constraints(tmp_path):
    layer = keras.layers.Dense(3, kernel_constraint="max_norm", bias_constraint=C.NonNeg())
    cfg = layer.get_config()
    assert cfg["kernel_constraint"] == {"module": "keras.constraints", "class_name": "MaxNorm",
                                        "config": {"max_value": 2, "axis": 0},
                                        "registered_name": None}
    assert cfg["bias_constraint"]["class_name"] == "NonNeg"
    again = keras.layers.Dense.from_config(cfg)
    again.build((None, 2))
    assert isinstance(again.kernel.constraint, C.MaxNorm)
    model = _model()
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded.layers[2].kernel.constraint, C.MaxNorm)
    assert loaded.layers[2].kernel.constraint.max_value == 0.7


def test_bad_identifiers_and_arguments_get_keras_and_tf_errors():
    with pytest.raises(ValueError, match="Could not interpret constraint identifier: 3"):
        C.get(3)
    with pytest.raises(ValueError, match="Argument `constraint` must be None or a callable"):
        tf.Variable(1.0, constraint=3)
    with pytest.raises(ValueError, match="Invalid variable aggregation mode: mean"):
        tf.Variable(1.0, aggregation="mean")
    assert C.get(None) is None and isinstance(C.get("UnitNorm"), C.UnitNorm)
    v = tf.Variable(1.0, aggregation=tf.VariableAggregation.SUM,
                    synchronization=tf.VariableSynchronization.ON_READ, trainable=None)
    assert v.aggregation is tf.VariableAggregation.SUM and v.trainable is False
    assert tf.Variable(1.0).synchronization is tf.VariableSynchronization.AUTO
