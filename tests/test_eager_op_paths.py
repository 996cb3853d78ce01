"""The short paths of eager ops (session 9, issue 13: the per-op cost of small eager
programs) compute what their general paths compute: the same values, dtypes, gradients and
errors, eager and in tf.function.

- ``tf.matmul`` of Variables (a dense layer's kernel) binds at once, as of Tensors;
- ``tf.reduce_sum`` of a concrete tensor over all axes skips the argument normalisation;
- a binary ufunc's merged-rows test (``primitives/families.py``) stops at the first fact
  that rules merging out (equal sizes, long rows), on both sides of each threshold.
"""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.errors import InvalidArgumentError
from tapegrad.primitives import families as F
from tapegrad.util.rows import EAGER_K, EAGER_ROWS

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf on purpose
RNG = np.random.default_rng(9)


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def _special(shape, dtype=np.float32):
    x = RNG.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[:5] = [np.nan, np.inf, -np.inf, -0.0, 0.0][:flat.size]
    return x


# ---- matmul of Variables ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_matmul_of_variables_equals_matmul_of_tensors(dtype):
    a = (_special((5, 4)) * 3).astype(dtype)
    b = (RNG.standard_normal((4, 3)) * 3).astype(dtype)
    want = tf.matmul(tf.constant(a), tf.constant(b)).numpy()
    for x, y in ((tf.Variable(a), tf.Variable(b)), (tf.constant(a), tf.Variable(b)),
                 (tf.Variable(a), tf.constant(b))):
        got = tf.matmul(x, y)
        assert type(got) is tf.Tensor
        _same(got.numpy(), want)


def test_matmul_of_variables_differentiates_as_of_tensors():
    x = tf.constant(RNG.standard_normal((5, 4)).astype(np.float32))
    w0 = RNG.standard_normal((4, 3)).astype(np.float32)
    w = tf.Variable(w0)
    with tf.GradientTape() as g:
        y = tf.reduce_sum(tf.tanh(tf.matmul(x, w)))
    gv = g.gradient(y, w)
    wt = tf.constant(w0)
    with tf.GradientTape() as g:
        g.watch(wt)
        y2 = tf.reduce_sum(tf.tanh(tf.matmul(x, wt)))
    _same(y.numpy(), y2.numpy())
    _same(gv.numpy(), g.gradient(y2, wt).numpy())
    # the value read is the variable's current one, after an assignment too
    w.assign(w0 * 2)
    _same(tf.matmul(x, w).numpy(), tf.matmul(x, tf.constant(w0 * 2)).numpy())


def test_matmul_of_variables_in_a_function_equals_eager():
    x = tf.constant(RNG.standard_normal((5, 4)).astype(np.float32))
    w = tf.Variable(RNG.standard_normal((4, 3)).astype(np.float32))

    def step():
        with tf.GradientTape() as g:
            y = tf.reduce_sum(tf.matmul(x, w) ** 2)
        return y, g.gradient(y, w)
    eager, compiled = step(), tf.function(step)()
    for a, b in zip(eager, compiled):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


@pytest.mark.parametrize("make", [tf.Variable, tf.constant])
def test_matmul_of_variables_keeps_the_errors(make):
    f32 = np.ones((2, 2), np.float32)
    with pytest.raises(InvalidArgumentError):  # a vector: TensorFlow's rank error
        tf.matmul(make(f32), tf.Variable(np.ones(2, np.float32)))
    with pytest.raises(InvalidArgumentError):  # int with float: TensorFlow's dtype error
        tf.matmul(make(f32), tf.Variable(np.ones((2, 2), np.int32)))
    with pytest.raises((InvalidArgumentError, ValueError)):  # inner sizes differ
        tf.matmul(make(f32), tf.Variable(np.ones((3, 2), np.float32)))
    flags = tf.matmul(make(f32 * 2), tf.Variable(np.arange(4, dtype=np.float32).reshape(2, 2)),
                      transpose_b=True)
    _same(flags.numpy(), (f32 * 2) @ np.arange(4, dtype=np.float32).reshape(2, 2).T)


# ---- reduce_sum over all axes -------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.complex64])
@pytest.mark.parametrize("shape", [(), (7,), (3, 4), (2, 3, 4)])
def test_reduce_sum_of_a_tensor_equals_the_general_path(dtype, shape):
    x = (_special(shape, np.float64) * 5 if np.dtype(dtype).kind in "fc"
         else RNG.integers(0, 9, shape)).astype(dtype)
    t = tf.constant(x)
    fast = tf.reduce_sum(t)
    general = tf.reduce_sum(t, axis=list(range(len(shape))), keepdims=0)
    _same(fast.numpy(), general.numpy())
    _same(tf.reduce_sum(x).numpy(), fast.numpy())  # an array: converted first
    assert tf.reduce_sum(t, keepdims=True).shape == (1,) * len(shape)


def test_reduce_sum_of_bools_raises_as_before():
    with pytest.raises(InvalidArgumentError, match="bool is not in the list"):
        tf.reduce_sum(tf.constant([True, False]))


def test_reduce_sum_fast_path_differentiates():
    x = tf.constant(_special((3, 4), np.float64))
    with tf.GradientTape() as g:
        g.watch(x)
        y = tf.reduce_sum(x * x)
    _same(g.gradient(y, x).numpy(), 2 * x.numpy())
    _same(tf.function(lambda v: tf.reduce_sum(v * v))(x).numpy(), y.numpy())


# ---- reduce_mean over axes of one element in all (Keras's MSE over a last axis of 1) ------
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("shape, axis, keepdims", [
    ((6, 1), -1, False), ((6, 1), 1, True), ((1, 1), None, False), ((), None, False),
    ((4, 3), [], False), ((6, 2), -1, False), ((0, 1), -1, False), ((3, 1, 1), [1, 2], True)])
def test_reduce_mean_of_one_element_is_the_element(dtype, shape, axis, keepdims):
    # one element: the value itself, as TensorFlow copies it (no division by 1); more: the
    # sum divided by the count, as before; eager, in tf.function and in the gradient alike
    x = (_special(shape, np.float64) * 5).astype(dtype)
    t = tf.constant(x)
    got = tf.reduce_mean(t, axis=axis, keepdims=keepdims)
    ax = tuple(range(len(shape))) if axis is None else tuple(
        a % len(shape) for a in (axis if isinstance(axis, list) else [axis]))
    count = int(np.prod([shape[a] for a in ax])) if ax else 1
    if count == 1:
        _same(got.numpy(), x.reshape(got.shape))
    elif count > 1:
        _same(got.numpy(), (np.sum(x, axis=ax, keepdims=keepdims, dtype=dtype)
                            / dtype(count)).astype(dtype))
    f = tf.function(lambda v: tf.reduce_mean(v, axis=axis, keepdims=keepdims))
    _same(f(t).numpy(), got.numpy())
    if np.dtype(dtype).kind == "f":
        with tf.GradientTape() as g:
            g.watch(t)
            y = tf.reduce_sum(tf.reduce_mean(t * t, axis=axis, keepdims=keepdims))
        want = 2 * x / dtype(max(count, 1))
        _same(g.gradient(y, t).numpy(), want.astype(dtype))


# ---- the merged-rows test of binary ufuncs ------------------------------------------------
@pytest.mark.parametrize("a_shape, b_shape", [
    ((EAGER_ROWS, 1), (1, EAGER_ROWS)),          # equal sizes, other shapes: an outer sum
    ((64, 64), (64, 64)),                        # equal shapes at EAGER_ROWS elements
    ((EAGER_ROWS, EAGER_K + 1), (EAGER_K + 1,)),  # rows one longer than EAGER_K
    ((EAGER_ROWS, EAGER_K), (EAGER_K,)),         # rows of EAGER_K: merged
    ((EAGER_ROWS // 2, EAGER_K), (EAGER_K,)),    # too few rows
    ((), (0,)),                                  # a 0-d value and an empty array
    ((1,), (0,)),
    ((EAGER_ROWS, 4), ()),                       # a 0-d operand
])
@pytest.mark.parametrize("ufunc", [np.add, np.subtract, np.multiply, np.true_divide])
def test_binary_ufunc_equals_numpy_on_both_sides_of_the_merge_test(a_shape, b_shape, ufunc):
    run = {np.add: tf.add, np.subtract: tf.subtract, np.multiply: tf.multiply,
           np.true_divide: tf.divide}[ufunc]
    a, b = _special(a_shape), _special(b_shape)
    for x, y in ((a, b), (b, a)):
        _same(run(tf.constant(x), tf.constant(y)).numpy(), ufunc(x, y))
        prim_impl = F.recycling(ufunc, ufunc)
        _same(prim_impl(x, y), ufunc(x, y))
    impl = F.recycling(ufunc, ufunc)
    _same(impl(a, 2.0), ufunc(a, 2.0))  # a Python scalar: the ufunc's own rule
    _same(impl(np.float32(2.0), a), ufunc(np.float32(2.0), a))
