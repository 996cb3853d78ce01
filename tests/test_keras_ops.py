"""``keras.ops`` and ``keras.random``, which Keras 3's guides and examples use in place of
``tf.*``: NumPy's values and argument conventions, Keras's dtype rules (JAX's promotion,
weak Python scalars, integer means and transcendental functions in floatx), derivatives
checked against central differences, and seeded draws."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import ops
from tapegrad.testing import check_grads

I32 = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
F64 = np.array([[0.5, 2.0, -0.0], [1.0, 4.0, 9.0]])


@pytest.mark.parametrize("args, dtype", [
    ((I32, np.ones(3, np.float16)), "float16"),  # an integer meets a float: the float's
    ((I32, 1.5), "float32"),                      # a Python float makes integers floatx
    ((I32, 2), "int32"),                          # a Python int adopts the tensor's dtype
    ((np.array([True]), 1), "int32"),
    ((np.ones(2, np.float32), F64[0, :2]), "float64"),
    ((np.ones(2, np.int8), np.ones(2, np.int32)), "int32"),
    ((np.ones(2, np.uint8), np.ones(2, np.int8)), "int16"),
])
def test_binary_operations_promote_as_keras(args, dtype):
    out = ops.add(*args)
    assert out.dtype.name == dtype
    np.testing.assert_array_equal(out.numpy(), np.add(*[np.asarray(a, np.float64)
                                                        for a in args]).astype(dtype))


def test_division_reductions_and_transcendentals_of_integers():
    assert ops.divide(I32, I32).dtype.name == "float32"
    np.testing.assert_allclose(ops.divide(I32, 2).numpy(), I32 / 2)
    assert ops.divide(F64, 2.0).dtype.name == "float64"
    assert ops.exp(I32).dtype.name == "float32" and ops.sqrt(np.int8(4)).numpy() == 2.0
    assert ops.mean(I32).dtype.name == "float32" and float(ops.mean(I32)) == pytest.approx(
        I32.mean())
    assert ops.sum(np.array([True, True, False])).dtype.name == "int32"
    assert ops.sum(np.ones(3, np.int8)).dtype.name == "int32"
    assert ops.sum(np.ones(3, np.uint8)).dtype.name == "uint32"
    np.testing.assert_array_equal(ops.sum(I32, axis=(0, 1), keepdims=True).numpy(), [[5]])
    np.testing.assert_allclose(ops.var(F64, axis=1).numpy(), F64.var(1))  # population
    np.testing.assert_allclose(ops.std(I32).numpy(), I32.std(), rtol=1e-6)
    assert ops.argmax(I32).dtype.name == "int32" and int(ops.argmax(I32)) == 4  # flattened
    np.testing.assert_array_equal(ops.argmax(F64, axis=1, keepdims=True).numpy(), [[1], [2]])
    np.testing.assert_array_equal(ops.argmin(I32, axis=0).numpy(), [0, 0, 1])
    np.testing.assert_array_equal(ops.cumsum(I32).numpy(), np.cumsum(I32))


def test_numpy_style_shapes_and_creation():
    a, b = ops.split(F64, 3, axis=1)[0], ops.split(F64, [1, 2], axis=1)
    np.testing.assert_array_equal(a.numpy(), F64[:, :1])
    assert [p.shape for p in b] == [(2, 1), (2, 1), (2, 1)]
    assert ops.concatenate([I32, F64]).shape == (4, 3)  # axis 0, promoted to float64
    assert ops.concatenate([I32, F64]).dtype.name == "float64"
    assert ops.stack([F64, F64], axis=1).shape == (2, 2, 3)
    assert ops.expand_dims(np.ones(3), (0, 2)).shape == (1, 3, 1)
    assert ops.tile(np.ones(3), (2, 1)).shape == (2, 3)
    np.testing.assert_array_equal(ops.take(I32, [0, 4]).numpy(), [1, 5])
    np.testing.assert_array_equal(ops.repeat(I32, 2).numpy(), np.repeat(I32, 2))
    np.testing.assert_array_equal(ops.flip(I32, axis=1).numpy(), I32[:, ::-1])
    np.testing.assert_array_equal(ops.transpose(I32).numpy(), I32.T)
    assert ops.shape(I32) == (2, 3) and ops.ndim(I32) == 2
    assert ops.arange(5).dtype.name == "int32" and ops.arange(0, 2, 0.5).dtype.name == "float32"
    np.testing.assert_array_equal(ops.arange(1.0, 4).numpy(), [1.0, 2.0, 3.0])
    assert ops.ones((2, 3)).dtype.name == "float32" and ops.full((2,), 3).dtype.name == "float32"
    assert ops.zeros((2,), dtype="int32").dtype.name == "int32"
    np.testing.assert_allclose(ops.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    assert ops.convert_to_tensor([1, 2]).dtype.name == "int32"
    assert ops.convert_to_tensor([1.0, 2]).dtype.name == "float32"
    assert ops.convert_to_tensor(F64).dtype.name == "float64"
    np.testing.assert_array_equal(ops.clip(I32, 0, 3).numpy(), np.clip(I32, 0, 3))
    assert ops.clip(np.array([True, False]), 0, 1).dtype.name == "int32"
    assert ops.where(np.array([True, False]), np.ones(2, np.float16), 2).dtype.name == "float16"
    rows, cols = ops.where(I32 > 0)
    np.testing.assert_array_equal(rows.numpy(), np.nonzero(I32 > 0)[0])
    np.testing.assert_array_equal(cols.numpy(), np.nonzero(I32 > 0)[1])
    np.testing.assert_allclose(ops.dot(F64, F64.T).numpy(), F64 @ F64.T)
    np.testing.assert_array_equal(ops.one_hot(np.array([0, 2]), 3).numpy(), np.eye(3)[[0, 2]])


def test_nan_inf_and_signed_zero_pass_through():
    x = np.array([np.nan, np.inf, -np.inf, -0.0, 1.0])
    np.testing.assert_array_equal(ops.abs(x).numpy(), np.abs(x))
    np.testing.assert_array_equal(np.signbit(ops.negative(np.array([0.0])).numpy()), [True])
    np.testing.assert_array_equal(ops.maximum(x, 0.0).numpy()[[1, 2, 4]], [np.inf, 0, 1])
    assert np.isnan(ops.maximum(x, 0.0).numpy()[0])  # NaN propagates
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(ops.sum(x[1:3]).numpy(), np.nan)  # inf - inf


def test_keras_ops_gelu_defaults_to_the_tanh_approximation():
    x = np.array([-1.0, 0.5, 2.0])
    tanh_form = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(ops.gelu(x).numpy(), tanh_form, rtol=1e-12)
    exact = keras.activations.gelu(x).numpy()  # the activation is the exact form
    assert not np.allclose(exact, tanh_form, rtol=1e-9)


@pytest.mark.parametrize("fn", [
    lambda x, y: ops.mean(ops.square(x - y), axis=1),
    lambda x, y: ops.sum(ops.exp(0.5 * x) * y, axis=0),
    lambda x, y: ops.std(x, axis=1) + ops.var(y),
    lambda x, y: ops.norm(ops.concatenate([x, y], axis=1), axis=1),
    lambda x, y: ops.einsum("ij,kj->ik", x, y) + ops.dot(x, ops.transpose(y)),
    lambda x, y: ops.softmax(x) * ops.log_softmax(y, axis=0) + ops.gelu(x),
    lambda x, y: ops.where(x > y, ops.sqrt(ops.abs(x) + 1.0), ops.log1p(ops.square(y))),
])
def test_derivatives_match_central_differences(fn):
    rng = np.random.default_rng(0)
    check_grads(fn, [rng.normal(size=(3, 4)), rng.normal(size=(3, 4))], order=2)


def test_keras_random_seeds():
    gen = keras.random.SeedGenerator(1337)
    a, b = keras.random.normal((4,), seed=gen), keras.random.normal((4,), seed=gen)
    assert not np.array_equal(a.numpy(), b.numpy())  # the generator advances
    again = keras.random.SeedGenerator(1337)
    np.testing.assert_array_equal(keras.random.normal((4,), seed=again).numpy(), a.numpy())
    np.testing.assert_array_equal(keras.random.uniform((3,), seed=5).numpy(),
                                  keras.random.uniform((3,), seed=5).numpy())  # stateless
    u = keras.random.uniform((1000,), minval=2.0, maxval=3.0, seed=gen).numpy()
    assert u.dtype == np.float32 and 2.0 <= u.min() and u.max() < 3.0
    r = keras.random.randint((1000,), 0, 4, seed=gen).numpy()
    assert r.dtype == np.int32 and set(r) == {0, 1, 2, 3}
    x = np.ones((100, 100), "float32")
    d = keras.random.dropout(x, 0.25, seed=gen).numpy()
    assert set(np.unique(d)) == {0.0, np.float32(1 / 0.75)}
    assert abs((d == 0).mean() - 0.25) < 0.03
    s = keras.random.shuffle(np.arange(10), seed=gen).numpy()
    assert sorted(s) == list(range(10))
    with pytest.raises(ValueError, match="SeedGenerator"):
        keras.random.normal((2,), seed="abc")


def test_a_seed_generator_inside_tf_function_draws_fresh_numbers():
    gen = keras.random.SeedGenerator(3)
    draw = tf.function(lambda: keras.random.normal((3,), seed=gen))
    first, second = draw().numpy(), draw().numpy()
    assert not np.array_equal(first, second)  # not one seed baked into the trace
