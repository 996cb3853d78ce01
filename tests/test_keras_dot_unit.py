"""keras.layers.Dot, UnitNormalization, Identity and keras.ops.normalize: Keras 3.15's
values (benchmarks/keras_dot_reference.py), gradients, models that use them, errors."""
import os

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.testing import check_grads

L = keras.layers
REF = np.load(os.path.join(os.path.dirname(__file__), "data", "keras_dot_reference.npz"))
DOT_CASES = {"a": ((1, 2), False), "b": (1, False), "c": (-1, True), "d": ((3, 1), False),
             "e": ((2, 1), True), "f": ((1, 1), False)}


@pytest.mark.parametrize("key", sorted(DOT_CASES))
def test_dot_matches_keras(key):
    axes, norm = DOT_CASES[key]
    got = L.Dot(axes=axes, normalize=norm)([REF[key + "/x"], REF[key + "/y"]]).numpy()
    want = REF[key + "/out"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("key", ["a", "d", "e"])
def test_dot_differentiates(key):
    axes, norm = DOT_CASES[key]
    layer = L.Dot(axes=axes, normalize=norm, dtype="float64")
    x, y = REF[key + "/x"].astype("float64"), REF[key + "/y"].astype("float64")
    check_grads(lambda x, y: layer([x, y]), (x, y), order=2)


def test_unit_normalization_matches_keras_and_keeps_zero_vectors_finite():
    z = REF["unit/x"]
    np.testing.assert_allclose(L.UnitNormalization()(z).numpy(), REF["unit/last"], rtol=1e-6)
    np.testing.assert_allclose(L.UnitNormalization(axis=[1, 2])(z).numpy(), REF["unit/12"],
                               rtol=1e-6)
    x = tf.constant(np.zeros((2, 3)))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(L.UnitNormalization()(x) * [1.0, 2.0, 3.0])
    g = tape.gradient(y, x).numpy()   # the clamp's branch: x * 1e12, slope 1e12 per weight
    np.testing.assert_allclose(g, np.broadcast_to([1e12, 2e12, 3e12], (2, 3)), rtol=1e-6)
    check_grads(lambda x: L.UnitNormalization(axis=1, dtype="float64")(x),
                (REF["unit/x"][1:].astype("float64"),), order=2)
    with pytest.raises(TypeError, match="axis"):
        L.UnitNormalization(axis="last")


def test_ops_normalize_orders_and_epsilon():
    x = np.array([[3.0, -4.0], [0.0, 0.0]])
    np.testing.assert_allclose(keras.ops.normalize(x).numpy(), [[0.6, -0.8], [0.0, 0.0]])
    np.testing.assert_allclose(keras.ops.normalize(x, order=1).numpy(),
                               [[3 / 7, -4 / 7], [0.0, 0.0]])
    with pytest.raises(ValueError, match="order"):
        keras.ops.normalize(x, order=0)


def test_a_siamese_model_of_cosine_similarity_trains():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(32, 6)).astype("float32"), rng.normal(size=(32, 6)).astype(
        "float32")
    target = (np.sum(a * b, axis=1, keepdims=True) > 0).astype("float32")
    enc = keras.Sequential([keras.Input((6,)), L.Dense(8, activation="tanh")])
    ia, ib = keras.Input((6,)), keras.Input((6,))
    sim = L.Dot(axes=1, normalize=True)([enc(ia), enc(ib)])
    model = keras.Model([ia, ib], L.Dense(1, activation="sigmoid")(sim))
    assert model.output_shape == (None, 1)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy")
    first = model.evaluate([a, b], target, verbose=0)
    model.fit([a, b], target, epochs=10, verbose=0)
    assert model.evaluate([a, b], target, verbose=0) < first
    assert L.dot([enc(ia), enc(ib)], axes=1).shape == (None, 1)


def test_identity_passes_everything_through():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(L.Identity()(x).numpy(), x)
    out = L.Identity()([x, x + 1])
    np.testing.assert_array_equal(out[1].numpy(), x + 1)
    model = keras.Sequential([keras.Input((3,)), L.Identity(), L.Dense(2)])
    assert model(x).shape == (2, 2)


def test_dot_bad_arguments_get_keras_errors():
    with pytest.raises(TypeError, match="axes"):
        L.Dot(axes="x")
    with pytest.raises(ValueError, match="two elements"):
        L.Dot(axes=(1, 2, 3))
    with pytest.raises(ValueError, match="Incompatible input shapes"):
        L.Dot(axes=1)([np.ones((2, 3)), np.ones((2, 4))])
    with pytest.raises(ValueError, match="axis 0"):
        L.Dot(axes=0)([np.ones((2, 3)), np.ones((2, 3))])
    with pytest.raises(ValueError, match="list of 2 inputs"):
        L.Dot(axes=1)([np.ones((2, 3))])
