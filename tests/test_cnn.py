"""Whole CNNs: second-order derivatives (WGAN-GP penalty, Hessian-vector products), Jacobians
with respect to inputs and weights, sparsity patterns, compiled, chunked and saved programs."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import check_grads


def _params(seed=0, dtype=np.float64):
    rng = np.random.RandomState(seed)
    return [tf.constant(a.astype(dtype)) for a in (
        rng.standard_normal((3, 3, 1, 4)) * 0.5,    # conv 3x3, 4 filters
        rng.standard_normal(4) * 0.1,
        rng.standard_normal((3, 3, 4, 6)) * 0.3,    # conv 3x3 stride 2, 6 filters
        rng.standard_normal((3 * 3 * 6, 3)) * 0.2)]  # dense 3


def cnn(x, w1, b1, w2, w3, pool=True):
    h = tf.tanh(tf.nn.bias_add(tf.nn.conv2d(x, w1, 1, "SAME"), b1))
    if pool:
        h = tf.nn.max_pool2d(h, 2, 1, "SAME") + tf.nn.avg_pool2d(h, 3, 1, "SAME")
    h = tf.tanh(tf.nn.conv2d(h, w2, 2, "VALID", dilations=1))
    return tf.matmul(tf.reshape(h, (h.shape[0], -1)), w3)


def _x(n=2, seed=1, dtype=np.float64):
    return tf.constant(np.random.RandomState(seed).standard_normal((n, 8, 8, 1)).astype(dtype))


def test_cnn_derivatives_of_order_two_match_central_differences():
    x, ps = _x(), _params()
    f = lambda x, w1, w2: tf.reduce_sum(tf.sin(cnn(x, w1, ps[1], w2, ps[3])))
    check_grads(f, [x.numpy(), ps[0].numpy(), ps[2].numpy()], modes=("fwd", "rev"), order=2)


def test_wgan_gp_gradient_penalty_differentiates_through_the_conv_gradient():
    x, ps = _x(3), _params()

    def penalty(w1, w2):
        with tf.GradientTape() as inner:
            inner.watch(x)
            d = tf.reduce_sum(cnn(x, w1, ps[1], w2, ps[3], pool=False), axis=1)
        g = inner.gradient(d, x)
        norm = tf.sqrt(tf.reduce_sum(g * g, axis=(1, 2, 3)))
        return tf.reduce_mean((norm - 1.0) ** 2)

    check_grads(penalty, [ps[0].numpy(), ps[2].numpy()], modes=("rev", "fwd"), order=1)


def test_hessian_vector_product_of_a_cnn_loss():
    x, ps = _x(), _params()
    labels = tf.constant(np.random.RandomState(3).standard_normal((2, 3)))

    def grad(w2):
        with tf.GradientTape() as t:
            t.watch(w2)
            loss = tf.reduce_mean((cnn(x, ps[0], ps[1], w2, ps[3]) - labels) ** 2)
        return t.gradient(loss, w2)

    w2, v = ps[2], tf.constant(np.random.RandomState(4).standard_normal(ps[2].shape))
    with tf.autodiff.ForwardAccumulator(w2, v) as acc:
        g = grad(w2)
    hvp = acc.jvp(g).numpy()
    eps = 1e-5
    fd = (grad(w2 + eps * v).numpy() - grad(w2 - eps * v).numpy()) / (2 * eps)
    np.testing.assert_allclose(hvp, fd, rtol=1e-5, atol=1e-8)
    with tf.GradientTape() as outer:      # reverse over reverse gives the same product
        outer.watch(w2)
        gv = tf.reduce_sum(grad(w2) * v)
    np.testing.assert_allclose(outer.gradient(gv, w2).numpy(), hvp, rtol=1e-9, atol=1e-12)


def test_jacobian_with_respect_to_filters_batches_over_filters():
    x, ps = _x(), _params()
    w2 = ps[2]
    with tf.GradientTape(persistent=True) as t:
        t.watch(w2)
        y = cnn(x, ps[0], ps[1], w2, ps[3])
        elements = [y[i, j] for i in range(2) for j in range(3)]
    jac = t.jacobian(y, w2, experimental_use_pfor=True).numpy()
    rows = [t.gradient(e, w2).numpy() for e in elements]
    np.testing.assert_allclose(jac.reshape(6, *w2.shape), np.stack(rows), rtol=1e-10,
                               atol=1e-12)


def test_batch_jacobian_under_a_small_memory_budget_is_chunked_and_equal():
    x, ps = _x(4), _params()

    def jac():
        with tf.GradientTape() as t:
            t.watch(x)
            y = cnn(x, *ps[:3], ps[3])
        return t.batch_jacobian(y, x).numpy()
    full = jac()
    tf.config.set_memory_budget(64 << 10)
    try:
        small = jac()
    finally:
        tf.config.set_memory_budget(None)
    np.testing.assert_allclose(small, full, rtol=1e-12, atol=1e-14)
    eps = 1e-6
    for i in (0, 37):   # a column of the Jacobian by central differences
        e = np.zeros(x.shape)
        e.reshape(4, -1)[:, i] = eps
        d = (cnn(x + e, *ps).numpy() - cnn(x - e, *ps).numpy()) / (2 * eps)
        np.testing.assert_allclose(full.reshape(4, 3, -1)[:, :, i], d, rtol=1e-5, atol=1e-8)


_W = np.random.RandomState(0).standard_normal((3, 2, 2))


@pytest.mark.parametrize("fn,n", [
    (lambda x: tf.nn.conv1d(x, _W, 2, "SAME"), 12),
    (lambda x: tf.nn.max_pool1d(x, 3, 2, "SAME"), 12),
    (lambda x: tf.nn.avg_pool1d(x, 2, 1, "VALID"), 12),
    (lambda x: tf.nn.conv1d_transpose(x, _W, [1, 12, 2], 2, "SAME"), 6),
])
def test_sparsity_pattern_matches_the_dense_jacobian(fn, n):
    x = tf.constant(np.random.RandomState(2).standard_normal((1, n, 2)))
    pat = tf.sparsity.pattern(lambda v: tf.reshape(fn(tf.reshape(v, x.shape)), (-1,)),
                              tf.reshape(x, (-1,)), kind="jacobian")
    with tf.GradientTape() as t:
        t.watch(x)
        y = fn(x)
    dense = t.jacobian(y, x).numpy().reshape(pat.shape) != 0
    if "max_pool" in str(fn.__code__.co_names):
        # structural: the whole window, of which the values pick one element
        assert (pat >= dense).all()
        window = tf.sparsity.pattern(
            lambda v: tf.reshape(tf.nn.avg_pool1d(tf.reshape(v, x.shape), 3, 2, "SAME"), (-1,)),
            tf.reshape(x, (-1,)), kind="jacobian")
        np.testing.assert_array_equal(pat, window)
    else:
        np.testing.assert_array_equal(pat, dense)


def test_compiled_cnn_batch_jacobian_saves_and_loads(tmp_path):
    ps = _params(dtype=np.float32)

    @tf.function
    def jac(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = cnn(x, *ps)
        return t.batch_jacobian(y, x)

    x = _x(5, dtype=np.float32)
    with tf.GradientTape() as t:
        t.watch(x)
        y = cnn(x, *ps)
    eager = t.batch_jacobian(y, x).numpy()
    np.testing.assert_allclose(jac(x).numpy(), eager, rtol=1e-5, atol=1e-6)
    concrete = jac.get_concrete_function(x)
    assert "_conv_input_grad(" in concrete.source()
    path = str(tmp_path / "cnn_jac.tgz")
    tf.saved.save(concrete, path)
    loaded = tf.saved.load(path)
    x2 = _x(5, seed=9, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(loaded(x2)), jac(x2).numpy(), rtol=1e-6, atol=1e-7)


def test_eager_training_step_repeats_through_the_derivative_cache():
    # the same tape structure many times: the compiled pass must equal the interpreter's
    ps = [tf.Variable(p) for p in _params()]
    x = _x(3)
    grads = []
    for _ in range(4):
        with tf.GradientTape() as t:
            loss = tf.reduce_sum(cnn(x, *ps) ** 2)
        grads.append([g.numpy() for g in t.gradient(loss, ps)])
    tf.config.set_derivative_cache(False)
    try:
        with tf.GradientTape() as t:
            loss = tf.reduce_sum(cnn(x, *ps) ** 2)
        ref = [g.numpy() for g in t.gradient(loss, ps)]
    finally:
        tf.config.set_derivative_cache(True)
    for gs in grads:
        for a, b in zip(gs, ref):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_a_none_batch_dimension_is_traced_once():
    ps = _params(dtype=np.float32)

    @tf.function(input_signature=[tf.TensorSpec([None, 8, 8, 1], tf.float32)])
    def jac(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = cnn(x, *ps)
        return t.batch_jacobian(y, x)

    for n in (9, 13, 11):
        x = _x(n, seed=n, dtype=np.float32)
        with tf.GradientTape() as t:
            t.watch(x)
            y = cnn(x, *ps)
        np.testing.assert_allclose(jac(x).numpy(), t.batch_jacobian(y, x).numpy(), rtol=1e-5,
                                   atol=1e-6)
    assert jac.trace_count == 1


def test_sparse_hessian_through_convolution_and_pooling_equals_dense():
    w = tf.constant(np.random.RandomState(5).standard_normal((3, 1, 2)))

    def f(v):
        x = tf.reshape(v, (1, 16, 1))
        h = tf.tanh(tf.nn.conv1d(x, w, 1, "SAME"))
        h = tf.nn.max_pool1d(h, 2, 2, "VALID") + tf.nn.avg_pool1d(h, 3, 2, "SAME")
        return tf.reduce_sum(tf.sin(h))

    v = tf.constant(np.random.RandomState(6).standard_normal(16))
    pat = tf.sparsity.pattern(f, v)
    assert not pat.all()  # local windows: a banded pattern, not dense
    np.testing.assert_allclose(tf.hessian(f, sparse=True)(v).numpy(),
                               tf.hessian(f, sparse=False)(v).numpy(), rtol=1e-10, atol=1e-12)
