"""Max pooling differentiates twice as TensorFlow's MaxPoolGrad does: the pooling gradient
(``max_pool_scatter``) has, in the incoming cotangent, the forward selection as its derivative
(``max_pool_gather``, TensorFlow's MaxPoolGradGrad) and, in x, a connected zero. So a
second derivative through max pooling is zeros, not None (a gradient penalty on a CNN, a
saliency Hessian), for every variant: 1-, 2-, 3-D, 'SAME'/'VALID', strides, NCHW."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import assert_same_bits, check_batching, check_grads

RNG = np.random.default_rng(11)

VARIANTS = [  # (label, pooling function, input shape)
    ("1d SAME", lambda x: tf.nn.max_pool1d(x, 3, 2, "SAME"), (2, 9, 3)),
    ("1d VALID", lambda x: tf.nn.max_pool1d(x, 2, 1, "VALID"), (1, 6, 2)),
    ("2d SAME", lambda x: tf.nn.max_pool2d(x, 3, 2, "SAME"), (2, 7, 8, 2)),
    ("2d VALID strides", lambda x: tf.nn.max_pool2d(x, [2, 3], [1, 2], "VALID"), (2, 7, 8, 2)),
    ("2d tiled", lambda x: tf.nn.max_pool2d(x, 2, 2, "VALID"), (2, 6, 6, 3)),
    ("2d NCHW", lambda x: tf.nn.max_pool2d(x, 2, 2, "SAME", data_format="NCHW"), (1, 2, 5, 5)),
    ("3d SAME", lambda x: tf.nn.max_pool3d(x, 2, 2, "SAME"), (1, 5, 6, 4, 2)),
    ("3d VALID", lambda x: tf.nn.max_pool3d(x, [3, 2, 2], [1, 2, 1], "VALID"), (1, 5, 6, 4, 2)),
    ("pool dilated", lambda x: tf.nn.pool(x, [2, 2], "MAX", dilations=[2, 1]), (1, 6, 5, 2)),
]
IDS = [v[0] for v in VARIANTS]


def _second(f, x, loss):
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = loss(f(x))
        g = t1.gradient(y, x)
        z = tf.reduce_sum(g * tf.constant(np.linspace(-1.0, 2.0, int(np.prod(g.shape)))
                                          .reshape(g.shape).astype(g.dtype)))
    return g, t2.gradient(z, x)


@pytest.mark.parametrize("label,f,shape", VARIANTS, ids=IDS)
def test_second_derivative_of_a_linear_loss_is_connected_zeros(label, f, shape):
    # d/dx sum(max_pool(x)) is a 0/1 selection, piecewise constant in x: TensorFlow gives zeros
    x = tf.Variable(RNG.standard_normal(shape).astype(np.float32))
    g, h = _second(f, x, tf.reduce_sum)
    assert h is not None
    assert_same_bits(h.numpy(), np.zeros(shape, np.float32))
    with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
        with tf.GradientTape() as t:
            y = tf.reduce_sum(f(x))
        g = t.gradient(y, x)
    assert_same_bits(acc.jvp(g).numpy(), np.zeros(shape, np.float32))


@pytest.mark.parametrize("label,f,shape", VARIANTS, ids=IDS)
def test_second_derivatives_match_central_differences(label, f, shape):
    # y * y + w * y: the Hessian is the selection's outer product (gather then scatter) plus
    # the connected zeros, in both modes
    w = RNG.standard_normal(f(tf.zeros(shape, tf.float64)).shape)
    check_grads(lambda x: f(x) * f(x) + w * f(x), [RNG.standard_normal(shape)],
                modes=("fwd", "rev"), order=2)


def _first_max(x, window):
    """Brute force, 1-D VALID stride 1 (N, W, C): the index of each window's first maximum."""
    n, w, c = x.shape
    out = w - window + 1
    idx = np.zeros((n, out, c), int)
    for b, o, ch in np.ndindex(n, out, c):
        idx[b, o, ch] = o + int(np.argmax(x[b, o:o + window, ch]))
    return idx


@pytest.mark.parametrize("d", [1, 2, 3])
def test_ties_go_to_the_first_maximum_at_both_orders(d):
    # integers as floats: many ties. TensorFlow's MaxPoolGrad (1-D, 2-D) and MaxPoolGradGrad
    # (all) take the first maximum of each window; the gradient of the cotangent too
    xs = RNG.integers(0, 3, (2, 9, 2)).astype(np.float64)
    idx = _first_max(xs, 3)
    x = tf.constant(xs.reshape((2, 9) + (1,) * (d - 1) + (2,)))
    pool = {1: lambda v: tf.nn.max_pool1d(v, 3, 1, "VALID"),
            2: lambda v: tf.nn.max_pool2d(v, [3, 1], 1, "VALID"),
            3: lambda v: tf.nn.max_pool3d(v, [3, 1, 1], 1, "VALID")}[d]
    c = tf.Variable(RNG.standard_normal((2, 7) + (1,) * (d - 1) + (2,)))
    u = RNG.standard_normal(x.shape)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = pool(x)
        g = t1.gradient(y, x, output_gradients=c)
        z = tf.reduce_sum(g * u)
    gg = t2.gradient(z, c)
    cv, uv = c.numpy().reshape(2, 7, 2), u.reshape(2, 9, 2)
    want_g = np.zeros((2, 9, 2))
    want_gg = np.zeros((2, 7, 2))
    for b, o, ch in np.ndindex(2, 7, 2):
        want_g[b, idx[b, o, ch], ch] += cv[b, o, ch]
        want_gg[b, o, ch] = uv[b, idx[b, o, ch], ch]
    np.testing.assert_allclose(g.numpy().reshape(2, 9, 2), want_g, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(gg.numpy().reshape(2, 7, 2), want_gg)


def test_gradient_penalty_through_a_cnn_with_max_pooling():
    # a WGAN-GP-style penalty |d out / d x|^2 through conv -> relu -> max pool -> dense: the
    # bias before the pooling reaches the penalty only through the selections, so its gradient
    # is zeros, not None (Adam still gets it); the filter's by central differences (float64)
    x = tf.constant(RNG.standard_normal((2, 6, 6, 1)))
    w = tf.Variable(RNG.standard_normal((3, 3, 1, 2)))
    b = tf.Variable(RNG.standard_normal(2) * 0.1)
    v = tf.constant(RNG.standard_normal((18, 1)))

    def penalty(wv, bv):
        with tf.GradientTape() as inner:
            inner.watch(x)
            h = tf.nn.max_pool2d(tf.nn.conv2d(x, wv, 1, "SAME") + bv, 2, 2, "VALID")
            out = tf.reduce_sum(tf.matmul(tf.reshape(h, (2, 18)), v))
        gx = inner.gradient(out, x)
        return tf.reduce_sum(gx * gx)

    with tf.GradientTape() as outer:
        p = penalty(w, b)
    gw, gb = outer.gradient(p, [w, b])
    assert gb is not None
    assert_same_bits(gb.numpy(), np.zeros(2))
    w0, eps = w.numpy(), 1e-6
    num = np.zeros_like(w0)
    for i in np.ndindex(w0.shape):
        d = np.zeros_like(w0)
        d[i] = eps
        num[i] = (float(penalty(tf.constant(w0 + d), b)) - float(penalty(tf.constant(w0 - d), b))
                  ) / (2 * eps)
    np.testing.assert_allclose(gw.numpy(), num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("label,f,shape", VARIANTS, ids=IDS)
def test_compiled_second_derivatives_equal_eager_bits(label, f, shape):
    xs = np.round(RNG.standard_normal(shape) * 2).astype(np.float32)  # ties
    x = tf.Variable(xs)
    loss = lambda y: tf.reduce_sum(y * y)
    eager = [t.numpy() for t in _second(f, x, loss)]
    step = tf.function(lambda: _second(f, x, loss))
    for _ in range(2):
        for got, want in zip(step(), eager):
            assert_same_bits(got.numpy(), want)


def test_batched_second_derivative_equals_a_loop():
    def hvp(x):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.reduce_sum(tf.nn.max_pool2d(x, 2, 2, "SAME") ** 2)
            g = t1.gradient(y, x)
            z = tf.reduce_sum(g)
        return t2.gradient(z, x)
    check_batching(hvp, [RNG.standard_normal((3, 1, 5, 5, 2))])


def test_integer_3d_max_pool_is_tensorflows_error():
    # MaxPool3D takes floats only (1-D and 2-D pooling take integers)
    with pytest.raises(tf.errors.InvalidArgumentError, match="'T' of int32"):
        tf.nn.max_pool3d(tf.ones((1, 2, 2, 2, 1), tf.int32), 2, 1, "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="'T' of bool"):
        tf.nn.max_pool2d(tf.constant(np.ones((1, 2, 2, 1), bool)), 2, 1, "VALID")
    assert tf.nn.max_pool2d(tf.ones((1, 2, 2, 1), tf.int32), 2, 1, "VALID").dtype == np.int32
