"""TensorFlow's CPU kernels' rules where NumPy's differ, checked against an explicit model of
the kernel (TensorFlow's own numbers for the same points are in tests/test_tf_edges.py):
ArgMax/ArgMin skip NaN, sorts keep equal elements in index order and sort unsigned and the
most negative integers correctly in descending order, a Cholesky factor that fails is NaN, a
triangular solve with a zero on the diagonal substitutes, and singular matrices and integer
negative powers raise TensorFlow's errors in compiled and saved programs as eagerly.
"""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras


def scan(row, largest):
    """TensorFlow's ArgMax (ArgMin): from (0, the lowest (highest) finite value), move to
    each element strictly larger (smaller) than the one held; NaN compares false."""
    best, held = 0, np.finfo(row.dtype).min if largest else np.finfo(row.dtype).max
    for i, v in enumerate(row):
        if (v > held) if largest else (v < held):
            best, held = i, v
    return best


def random_rows(rng, dtype, shape):
    x = rng.integers(-3, 4, shape).astype(dtype)
    for value, p in ((np.nan, 0.3), (np.inf, 0.1), (-np.inf, 0.1),
                     (np.finfo(dtype).max, 0.05), (np.finfo(dtype).min, 0.05)):
        x[rng.random(shape) < p] = value
    return x


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_argmax_and_argmin_follow_the_kernels_scan(dtype):
    rng = np.random.default_rng(11)
    f = tf.function(lambda x, axis: (tf.argmax(x, axis), tf.argmin(x, axis)))
    for _ in range(60):
        x = random_rows(rng, dtype, (int(rng.integers(1, 5)), int(rng.integers(1, 40))))
        for axis in (0, 1):
            rows = np.moveaxis(x, axis, -1)
            want_max = [scan(r, True) for r in rows]
            want_min = [scan(r, False) for r in rows]
            for got_max, got_min in [(tf.argmax(x, axis), tf.argmin(x, axis)), f(x, axis)]:
                assert got_max.numpy().tolist() == want_max, (x, axis)
                assert got_min.numpy().tolist() == want_min, (x, axis)


def test_argmax_batches_and_saves_with_the_kernels_rule(tmp_path):
    x = np.array([[np.nan, 1.0, 3.0], [np.nan, np.nan, np.nan], [-np.inf, np.nan, 2.0]],
                 np.float32)
    want = [2, 0, 2]
    assert tf.vectorized_map(tf.argmax, x).numpy().tolist() == want
    signed = tf.function(lambda v: tf.argmax(v, axis=1),
                         input_signature=[tf.TensorSpec([3, 3], tf.float32)])
    tf.saved_model.save(signed, tmp_path / "argmax.tgz")
    assert tf.saved_model.load(tmp_path / "argmax.tgz")(x).numpy().tolist() == want


def test_keras_argmax_ranks_negative_zero_below_zero_and_skips_nan():
    z = np.array([[-0.0, 0.0, np.nan], [0.0, -0.0, -1e-45]], np.float32)
    assert keras.ops.argmax(z, axis=1).numpy().tolist() == [1, 0]
    assert keras.ops.argmin(z, axis=1).numpy().tolist() == [0, 1]
    assert keras.ops.argmax(z.astype(np.float16), axis=1).dtype == np.int32


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int8", "int32", "int64"])
def test_descending_sorts_of_integers_put_the_largest_first(dtype):
    info = np.iinfo(dtype)
    v = np.array([0, info.max, info.min, 1, info.max, 0], dtype)
    want = np.argsort(-v.astype(object), kind="stable")
    got = tf.argsort(v, direction="DESCENDING").numpy()
    assert got.tolist() == want.tolist()
    assert tf.sort(v, direction="DESCENDING").numpy().tolist() == v[want].tolist()
    top = tf.math.top_k(v, 2)
    assert top.values.numpy().tolist() == v[want[:2]].tolist()


def test_sorts_of_bools_and_complex_numbers_raise_as_in_tensorflow():
    for v in (np.array([True, False]), np.array([1j, 2], np.complex64)):
        for call in (tf.sort, tf.argsort, lambda x: tf.math.top_k(x, 1),
                     lambda x: tf.sort(x, direction="DESCENDING")):
            with pytest.raises(tf.errors.InvalidArgumentError, match="not in the list"):
                call(v)


def test_sorts_keep_equal_elements_in_index_order_without_being_asked():
    x = np.tile(np.array([2.0, 1.0, 2.0, -0.0, 0.0], np.float32), 40)
    for direction, keys in (("ASCENDING", x), ("DESCENDING", -x)):
        want = np.argsort(keys, kind="stable")
        assert tf.argsort(x, direction=direction).numpy().tolist() == want.tolist()


def test_compiled_top_k_returns_values_and_indices():
    out = tf.function(lambda v: tf.math.top_k(v, 2))(tf.constant([1.0, 3.0, 2.0]))
    assert out.values.numpy().tolist() == [3.0, 2.0]
    assert out.indices.numpy().tolist() == [1, 2]
    values, indices = out
    assert isinstance(values, tf.Tensor) and indices.dtype == np.int32


def test_a_failed_cholesky_factor_is_nan_in_its_own_matrix_only():
    good = np.array([[4.0, 2.0], [2.0, 3.0]])
    bad = np.array([[1.0, 2.0], [2.0, 1.0]])
    for run in (tf.linalg.cholesky, tf.function(tf.linalg.cholesky)):
        got = run(np.stack([good, bad, good])).numpy()
        np.testing.assert_allclose(got[0], np.linalg.cholesky(good))
        np.testing.assert_allclose(got[2], np.linalg.cholesky(good))
        assert np.isnan(got[1][np.tril_indices(2)]).all() and got[1][0, 1] == 0


def substitute(a, b):
    """Forward substitution, one row at a time, in IEEE arithmetic."""
    x = np.zeros_like(b)
    with np.errstate(all="ignore"):
        for i in range(len(a)):
            x[i] = (b[i] - a[i, :i] @ x[:i]) / a[i, i]
    return x


def test_triangular_solve_with_a_zero_pivot_substitutes():
    a = np.array([[2.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 3.0]])
    b = np.array([[1.0, 0.0], [2.0, 0.5], [3.0, -1.0]])
    f = tf.function(lambda a, b, lower, adjoint: tf.linalg.triangular_solve(
        a, b, lower=lower, adjoint=adjoint))
    np.testing.assert_array_equal(tf.linalg.triangular_solve(a, b).numpy(), substitute(a, b))
    np.testing.assert_array_equal(f(a, b, True, False).numpy(), substitute(a, b))
    # the upper triangle of a.T, and the adjoint of a: back substitution of the reversed rows
    flip = substitute(a.T[::-1, ::-1].copy(), b[::-1].copy())[::-1]
    np.testing.assert_array_equal(f(a.T.copy(), b, False, False).numpy(), flip)
    np.testing.assert_array_equal(f(a, b, True, True).numpy(), flip)
    # a regular matrix keeps the LU solve
    r = a + np.eye(3)
    np.testing.assert_allclose(f(r, b, True, False).numpy(), np.linalg.solve(r, b))


@pytest.mark.parametrize("call,message", [
    (lambda a: tf.linalg.inv(a), "Input is not invertible."),
    (lambda a: tf.linalg.solve(a, tf.ones((2, 1), tf.float64)), "Input matrix is not invertible."),
])
def test_singular_matrices_raise_tensorflows_error_compiled_and_saved(call, message, tmp_path):
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    signed = tf.function(call, input_signature=[tf.TensorSpec([2, 2], tf.float64)])
    tf.saved_model.save(signed, tmp_path / "m.tgz")
    loaded = tf.saved_model.load(tmp_path / "m.tgz")
    for run in (call, tf.function(call), loaded):
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            run(tf.constant(s))


def test_integer_negative_powers_raise_tensorflows_error_compiled():
    x, y = tf.constant([2, 3]), tf.constant([1, -1])
    for run in (lambda a, b: a ** b, tf.function(lambda a, b: a ** b),
                tf.function(lambda a, b: tf.pow(a, b))):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Integers to negative integer powers are not allowed"):
            run(x, y)
    assert tf.function(lambda a, b: a ** b)(x, tf.constant([2, 0])).numpy().tolist() == [4, 1]
