"""Values and gradients at the edges (0, -0.0, NaN, inf, ties), where TensorFlow's kernels
make choices of their own: a differential run against TensorFlow found each case here.

The expected numbers are the rule each kernel follows, computed here with NumPy, never
copied from a run; second derivatives are checked by central differences in float64.
"""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import assert_same_bits

NAN, INF = np.nan, np.inf


def _grad(f, x, upstream=None):
    x = tf.constant(np.asarray(x, np.float64))
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    ct = None if upstream is None else tf.constant(np.asarray(upstream, np.float64))
    return y.numpy(), t.gradient(y, x, output_gradients=ct).numpy()


def _fd(f, x, h=1e-5):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_relu6_keeps_nan_and_masks_by_multiplying():
    x = np.array([-1.0, 0.0, 3.0, 6.0, 7.0, NAN])
    y, g = _grad(tf.nn.relu6, x, upstream=np.full(6, INF))
    np.testing.assert_array_equal(y, np.minimum(np.maximum(x, 0), 6))  # NaN stays NaN
    with np.errstate(invalid="ignore"):  # TensorFlow's Relu6Grad: g * (0 < x < 6)
        np.testing.assert_array_equal(g, INF * ((x > 0) & (x < 6)))
    assert np.isnan(y[-1]) and np.isnan(g[0])


@pytest.mark.parametrize("op,keep_x", [(tf.maximum, np.greater_equal),
                                       (tf.minimum, np.less_equal)])
def test_maximum_minimum_route_the_gradient_by_a_select(op, keep_x):
    xs = np.array([-1.0, 0.0, 2.0, NAN, 1.0])
    ys = np.array([0.0, 0.0, 1.0, 1.0, NAN])
    x, y = tf.constant(xs), tf.constant(ys)
    up = tf.constant(np.full(5, INF))
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, y])
        z = op(x, y)
    gx, gy = t.gradient(z, [x, y], output_gradients=up)
    mask = keep_x(xs, ys)  # False at NaN: the gradient goes to y, as TensorFlow's
    np.testing.assert_array_equal(gx.numpy(), np.where(mask, INF, 0.0))
    np.testing.assert_array_equal(gy.numpy(), np.where(mask, 0.0, INF))


def test_clip_by_value_blocks_a_nonfinite_cotangent_outside_the_range():
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0])
    _, g = _grad(lambda v: tf.clip_by_value(v, -1.0, 1.0), x, upstream=np.full(5, NAN))
    assert np.array_equal(np.isnan(g), np.abs(x) <= 1.0)
    np.testing.assert_array_equal(g[np.abs(x) > 1.0], 0.0)


@pytest.mark.parametrize("name,scale,alpha", [("elu", 1.0, 1.0),
                                              ("selu", 1.0507009873554805, 1.6732632423543772)])
def test_elu_and_selu_take_the_linear_branch_at_zero_and_nan(name, scale, alpha):
    f = getattr(tf.nn, name)
    x = np.array([0.0, -0.0, NAN, -1.0])
    y, g = _grad(f, x)
    np.testing.assert_array_equal(g[:3], scale)  # TensorFlow's branch: x < 0
    np.testing.assert_allclose(g[3], scale * alpha * np.exp(-1.0), rtol=1e-15)
    assert np.isnan(y[2])
    xv = tf.constant([0.0, 0.5, -0.5])
    with tf.GradientTape() as t2:
        t2.watch(xv)
        with tf.GradientTape() as t1:
            t1.watch(xv)
            out = f(xv)
        d1 = t1.gradient(out, xv)
    d2 = t2.gradient(d1, xv).numpy()
    assert d2[0] == 0.0 and d2[1] == 0.0
    np.testing.assert_allclose(d2[2], scale * alpha * np.exp(-0.5), rtol=1e-7)


def test_keras_elu_with_alpha_scales_the_negative_branch():
    x = tf.constant([-1.0, 0.0, 2.0])
    got = tf.keras.activations.elu(x, alpha=0.5).numpy()
    np.testing.assert_allclose(got, [0.5 * np.expm1(-1.0), 0.0, 2.0], rtol=1e-6)


def test_sign_has_a_zero_gradient_and_abs_a_zero_second_derivative():
    x = tf.constant([-2.0, 0.0, 3.0])
    with tf.GradientTape(persistent=True) as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            a = tf.abs(x)
        ga = t1.gradient(a, x)
        s = tf.sign(x)
    np.testing.assert_array_equal(t2.gradient(s, x).numpy(), 0.0)  # TensorFlow: zeros
    np.testing.assert_array_equal(t2.gradient(ga, x).numpy(), 0.0)


@pytest.mark.parametrize("f,formula", [
    (tf.sqrt, lambda x, dy: dy / (2 * np.sqrt(x))),
    (tf.math.rsqrt, lambda x, dy: -0.5 * (dy / np.sqrt(x)) * (1 / np.sqrt(x)) ** 2),
    (tf.math.reciprocal, lambda x, dy: -dy / x / x),
])
def test_a_zero_cotangent_gives_a_zero_gradient_even_at_zero(f, formula):
    x = np.array([0.0, 0.0, 4.0, 4.0, -1.0])
    dy = np.array([0.0, -0.0, 0.0, 1.0, 0.0])
    _, g = _grad(f, x, upstream=dy)
    np.testing.assert_array_equal(g[[0, 1, 2, 4]], 0.0)  # TensorFlow's SqrtGrad & co.
    np.testing.assert_allclose(g[3], formula(4.0, 1.0), rtol=1e-15)


def test_a_masked_norm_of_a_zero_row_has_a_finite_gradient():
    """The pairwise-distance pattern: sqrt of a zero row, masked out after the sqrt."""
    x = tf.constant([[0.0, 0.0], [3.0, 4.0]])
    mask = tf.constant([0.0, 1.0])
    with tf.GradientTape() as t:
        t.watch(x)
        loss = tf.reduce_sum(mask * tf.sqrt(tf.reduce_sum(x * x, axis=1)))
    np.testing.assert_allclose(t.gradient(loss, x).numpy(), [[0.0, 0.0], [0.6, 0.8]])


def test_second_derivatives_through_the_gradient_primitives_are_not_cut_at_a_zero_cotangent():
    """d/dx of d/dy [x / sqrt(x^2 + y^2)] at (0, 1) is -1: the cotangent reaching rsqrt is x,
    0 there, and its derivative must survive (a select after the formula would cut it)."""
    def gy_of(xv, yv):
        x, y = tf.constant(xv), tf.constant(yv)
        with tf.GradientTape() as t:
            t.watch(y)
            z = tf.math.l2_normalize(tf.stack([x, y]), axis=0)[0]
        return t.gradient(z, y)

    x = tf.constant(0.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = tf.constant(1.0)
            t1.watch(y)
            z = tf.math.l2_normalize(tf.stack([x, y]), axis=0)[0]
        gy = t1.gradient(z, y)
    got = float(t2.gradient(gy, x))
    fd = _fd(lambda v: float(gy_of(v, 1.0)), 0.0)
    np.testing.assert_allclose(got, fd, rtol=1e-6)
    np.testing.assert_allclose(got, -1.0, rtol=1e-12)


@pytest.mark.parametrize("f", [tf.sqrt, tf.math.rsqrt, tf.math.reciprocal, tf.nn.relu6,
                               tf.sign, lambda v: tf.maximum(v, 0.5)])
def test_compiled_gradients_equal_eager_bit_for_bit(f):
    rng = np.random.default_rng(3)
    xv = np.concatenate([np.abs(rng.standard_normal(20)) * 8, [0.0, -0.0, INF, NAN, 6.0]])
    dy = np.concatenate([rng.standard_normal(20), [0.0, -0.0, 1.0, 0.0, INF]])
    x, ct = tf.constant(xv), tf.constant(dy)

    def grads(x, ct):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = f(x)
            g = t1.gradient(y, x, output_gradients=ct)
        return g, t2.gradient(g, x, unconnected_gradients="zero")

    with np.errstate(all="ignore"):
        eager = grads(x, ct)
        compiled = tf.function(grads)(x, ct)
    for a, b in zip(eager, compiled):
        assert_same_bits(a.numpy(), b.numpy())


@pytest.mark.parametrize("reverse", [False, True])
def test_exclusive_cumsum_is_a_shifted_sum_not_a_difference(reverse):
    x = np.array([[1.0, 1e20, 3.0, -np.inf, 2.0], [np.inf, 1.0, 2.0, 3.0, 4.0]])
    got = tf.math.cumsum(tf.constant(x), axis=1, exclusive=True, reverse=reverse).numpy()
    xs = x[:, ::-1] if reverse else x
    want = np.zeros_like(xs)
    for j in range(1, xs.shape[1]):  # the definition: the sum of the entries before j
        want[:, j] = want[:, j - 1] + xs[:, j - 1]
    want = want[:, ::-1] if reverse else want
    assert_same_bits(got, want)
    f = tf.function(lambda v: tf.math.cumsum(v, axis=1, exclusive=True, reverse=reverse))
    assert_same_bits(f(tf.constant(x)).numpy(), got)


def test_adjoints_conjugate_complex_matrices():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    b = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    ah = a.conj().T
    np.testing.assert_allclose(tf.linalg.adjoint(a).numpy(), ah)
    np.testing.assert_allclose(tf.linalg.matrix_transpose(a, conjugate=True).numpy(), ah)
    np.testing.assert_allclose(tf.linalg.matrix_transpose(a).numpy(), a.T)
    np.testing.assert_allclose(tf.matmul(a, b, adjoint_a=True).numpy(), ah @ b)
    np.testing.assert_allclose(tf.matmul(b, a, adjoint_b=True, transpose_a=True).numpy(),
                               b.T @ ah)
    np.testing.assert_allclose(tf.linalg.solve(a, b, adjoint=True).numpy(),
                               np.linalg.solve(ah, b))
    np.testing.assert_allclose(tf.linalg.inv(a, adjoint=True).numpy(), np.linalg.inv(ah))
    low = np.tril(a) + 3 * np.eye(3)
    np.testing.assert_allclose(
        tf.linalg.triangular_solve(low, b, lower=True, adjoint=True).numpy(),
        np.linalg.solve(low.conj().T, b))
    with pytest.raises(ValueError):
        tf.matmul(a, b, transpose_a=True, adjoint_a=True)
