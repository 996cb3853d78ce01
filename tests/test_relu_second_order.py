"""relu's, relu6's and leaky_relu's derivatives differentiate to connected zeros, as
TensorFlow's ReluGrad, Relu6Grad and LeakyReluGrad do: a second derivative through a kink is zeros, never None, so an optimizer still
steps (by its moments) a variable that reaches a loss only through relu's gradient."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.primitives.elementwise import step_p

X = np.array([-1.5, -0.0, 0.0, 0.5, 2.0, 6.0, 7.0, np.nan, np.inf, -np.inf], np.float32)


def _grads(f, x):
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = tf.reduce_sum(f(x) ** 2)
        g = t1.gradient(y, x)
        z = tf.reduce_sum(g)
    return g, t2.gradient(z, x)


@pytest.mark.parametrize("name, lo, hi", [("relu", 0.0, None), ("relu6", 0.0, 6.0)])
def test_second_derivative_is_zeros_connected(name, lo, hi):
    f = getattr(tf.nn, name)
    x = tf.Variable(X)
    g, h = _grads(f, x)
    inside = (X > lo) & (X < hi) if hi is not None else X > lo
    # d/dx relu(x)^2 = 2 relu(x) [x inside]; its derivative 2 [x inside] (the mask: 0 at NaN)
    expected = np.where(inside, 2.0, 0.0).astype(np.float32)
    assert h is not None
    np.testing.assert_array_equal(h.numpy(), expected)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = tf.reduce_sum(f(x))
        first = t1.gradient(y, x)
    second = t2.gradient(first, x)
    np.testing.assert_array_equal(first.numpy(), inside.astype(np.float32))
    np.testing.assert_array_equal(second.numpy(), np.zeros_like(X))


@pytest.mark.parametrize("name", ["relu", "relu6", "leaky_relu"])
def test_compiled_second_derivative_matches_eager_bits(name):
    f = getattr(tf.nn, name)
    x = tf.Variable(X * 3.0)
    eager = [t.numpy() for t in _grads(f, x)]
    step = tf.function(lambda: _grads(f, x))
    for _ in range(2):
        got = [t.numpy() for t in step()]
        for a, b in zip(got, eager):
            np.testing.assert_array_equal(a, b)


def test_gradient_penalty_reaches_a_bias_behind_relu():
    # a WGAN-GP-style penalty: |d out / d x|^2 depends on the bias only through relu's mask,
    # so its gradient for the bias is zeros (TensorFlow's), and Adam moves nothing but is given
    # a gradient (None would skip the variable)
    w = tf.Variable([[1.0, -2.0], [0.5, 1.0]])
    b = tf.Variable([0.1, -0.3])
    x = tf.constant([[0.3, 0.2], [-1.0, 2.0]])
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            inner.watch(x)
            out = tf.reduce_sum(tf.nn.relu(tf.matmul(x, w) + b))
        gx = inner.gradient(out, x)
        penalty = tf.reduce_sum(gx * gx)
    gw, gb = outer.gradient(penalty, [w, b])
    assert gb is not None
    np.testing.assert_array_equal(gb.numpy(), np.zeros(2, np.float32))
    # the weight's gradient by central differences of the penalty (float64)
    def pen(wv):
        m = (x.numpy().astype(np.float64) @ wv + b.numpy()) > 0
        gxv = m.astype(np.float64) @ wv.T
        return float(np.sum(gxv * gxv))
    w0, eps = w.numpy().astype(np.float64), 1e-6
    num = np.zeros_like(w0)
    for i in np.ndindex(w0.shape):
        d = np.zeros_like(w0)
        d[i] = eps
        num[i] = (pen(w0 + d) - pen(w0 - d)) / (2 * eps)
    np.testing.assert_allclose(gw.numpy(), num, rtol=1e-5, atol=1e-6)


def test_step_values_and_dtypes():
    for dt in (np.float32, np.float64, np.int32):
        v = np.array([-2, 0, 3], dt)
        out = step_p.impl(v)
        assert out.dtype == dt
        np.testing.assert_array_equal(out, np.array([0, 0, 1], dt))
    np.testing.assert_array_equal(step_p.impl(np.array([np.nan, -0.0, np.inf])), [0.0, 0.0, 1.0])


@pytest.mark.parametrize("alpha", [0.2, 0.01, 1.5])
def test_leaky_relu_derivatives(alpha):
    x = tf.Variable(X)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = tf.nn.leaky_relu(x, alpha=alpha)
            s = tf.reduce_sum(y * y)
        g = t1.gradient(s, x)
        z = tf.reduce_sum(g)
    h = t2.gradient(z, x)
    a = np.float32(alpha)
    pos = X > 0
    np.testing.assert_array_equal(y.numpy(), np.where(pos, X, X * a))
    # d/dx y^2 = 2 y y' with y' = 1 or alpha (a select: NaN takes alpha's branch)
    np.testing.assert_array_equal(g.numpy(), np.where(pos, 2 * X, (2 * (X * a)) * a))
    np.testing.assert_array_equal(h.numpy(), np.where(pos, np.float32(2), (2 * a) * a))
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            s = tf.reduce_sum(tf.nn.leaky_relu(x, alpha=alpha))
        first = t1.gradient(s, x)
    second = t2.gradient(first, x)
    np.testing.assert_array_equal(first.numpy(), np.where(pos, np.float32(1), a))
    assert second is not None
    np.testing.assert_array_equal(second.numpy(), np.zeros_like(X))


def test_leaky_relu_keras_layer_and_integers():
    layer = tf.keras.layers.LeakyReLU(negative_slope=0.1)
    x = tf.constant([[-2.0, 3.0]])
    np.testing.assert_array_equal(layer(x).numpy(), np.where(x.numpy() > 0, x.numpy(),
                                                              x.numpy() * np.float32(0.1)))
    out = tf.nn.leaky_relu(tf.constant([-2, 3]))
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), [np.float32(-2) * np.float32(0.2), 3.0])
