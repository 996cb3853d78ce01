"""custom_gradient and recompute_grad beyond the TF-behaviour basics, and per-thread tapes."""
import threading

import numpy as np
import pytest

import tapegrad as tf


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


def test_second_order_through_a_custom_gradient():
    x = tf.constant(np.array([0.3, -1.1]))
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = tf.reduce_sum(log1pexp(x))
        g = t1.gradient(y, x)
    h = t2.gradient(g, x)
    s = 1 / (1 + np.exp(-x.numpy()))
    np.testing.assert_allclose(g.numpy(), s, rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), s * (1 - s), rtol=1e-12)


def test_forward_mode_follows_the_function_as_written():
    x = tf.constant(0.7, dtype=tf.float64)
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0, dtype=tf.float64)) as acc:
        y = log1pexp(x)
    assert float(acc.jvp(y)) == pytest.approx(1 / (1 + np.exp(-0.7)), rel=1e-12)


def test_the_custom_rule_is_used_not_the_real_derivative():
    @tf.custom_gradient
    def straight_through_round(x):
        return tf.round(x), lambda dy: dy
    x = tf.constant([0.2, 1.7])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(straight_through_round(x) * 3.0)
    np.testing.assert_allclose(t.gradient(y, x).numpy(), [3.0, 3.0])


def test_several_outputs_get_their_own_upstream():
    @tf.custom_gradient
    def two(x):
        def grad(da, db):
            return da * 2.0 + db * 5.0
        return (x * 2.0, x * 5.0), grad
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        a, b = two(x)
        y = a + 10.0 * b
    assert float(t.gradient(y, x)) == 52.0


def test_recompute_grad_with_a_variable_and_no_kept_intermediates():
    w = tf.Variable(np.array([1.5, -0.5]))
    calls = []

    def layer(x):
        calls.append(1)
        return tf.reduce_sum(tf.tanh(x * w))
    f = tf.recompute_grad(layer)
    x = tf.constant(np.array([0.2, 0.4]))
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    n_entries = len(t._entries)
    gx, gw = t.gradient(y, [x, w])
    d = 1 - np.tanh(x.numpy() * w.numpy()) ** 2
    np.testing.assert_allclose(gx.numpy(), d * w.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), d * x.numpy(), rtol=1e-12)
    assert len(calls) == 2                  # once forward, once to recompute
    assert n_entries <= 3                   # the custom op and the variable read, no tanh


def test_wrong_number_of_gradients_is_an_error():
    @tf.custom_gradient
    def f(x, y):
        return x * y, lambda dz: dz
    x, y = tf.constant(1.0), tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = f(x, y)
    with pytest.raises(ValueError, match="expected to return 2 gradients"):
        t.gradient(z, [x, y])


def test_tapes_are_per_thread():
    x = tf.constant(3.0)
    seen = {}

    def other():
        # this thread's operation must not be recorded by the main thread's tape
        seen["y"] = x * x
        seen["active"] = len(tf.core.state.STATE.stack.recorders)

    with tf.GradientTape() as t:
        t.watch(x)
        th = threading.Thread(target=other)
        th.start()
        th.join()
        z = x * 2.0
    assert seen["active"] == 0
    assert len(t._entries) == 1            # only this thread's z = x * 2
    assert float(t.gradient(z, x)) == 2.0


def test_a_sparse_hessian_through_a_custom_gradient_op():
    # a tape holding a custom_gradient operation is keyed and propagated by sparsity like
    # any other (its operation has no dependency kind: it counts as dense)
    @tf.custom_gradient
    def square(x):
        return x * x, lambda dy: dy * 2.0 * x

    def g(x):
        return tf.reduce_sum(square(x) * x)
    x = tf.constant(np.arange(1.0, 9.0))
    got = tf.hessian(g, sparse=True)(x).numpy()
    want = tf.hessian(g, sparse=False)(x).numpy()
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(np.diag(got), 6.0 * np.arange(1.0, 9.0))


@tf.custom_gradient
def _half_gradient_square(x):
    return x * x, lambda g: g * 0.5


def _uses_it(x):
    return tf.reduce_sum(_half_gradient_square(x[:2])) + tf.reduce_sum(x[2:] * 0.2)


def test_a_tape_over_a_tf_function_uses_the_custom_gradient():
    # The trace (no tape inside) holds the forward operations only; differentiating the
    # program gave the plain gradient [2, 4, 0.2]. TensorFlow gives grad_fn's.
    want = np.array([0.5, 0.5, 0.2], np.float32)
    x = tf.constant([1.0, 2.0, 3.0])
    f = tf.function(_uses_it)
    for _ in range(2):  # the first call traces under the tape, the second reuses the trace
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x)
        np.testing.assert_array_equal(t.gradient(y, x).numpy(), want)
        assert float(y) == float(_uses_it(x))
    np.testing.assert_array_equal(tf.grad(f)(x).numpy(), want)
    cf = f.get_concrete_function(x)
    with tf.GradientTape() as t:
        t.watch(x)
        y = cf(x)
    np.testing.assert_array_equal(t.gradient(y, x).numpy(), want)
    assert float(f(x)) == float(_uses_it(x))  # no tape: the compiled program runs
    jvps = []
    for fn in (f, _uses_it):  # forward mode follows the function as written, as eagerly
        with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 1.0, 1.0])) as acc:
            y = fn(x)
        jvps.append(float(acc.jvp(y)))
    assert jvps[0] == jvps[1]


def test_a_tape_inside_the_function_keeps_the_custom_gradient():
    @tf.function
    def grad(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = _uses_it(x)
        return t.gradient(y, x)

    np.testing.assert_array_equal(grad(tf.constant([1.0, 2.0, 3.0])).numpy(),
                                  np.array([0.5, 0.5, 0.2], np.float32))


def test_saving_a_program_without_its_custom_gradient_is_refused(tmp_path):
    x = tf.constant([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="custom_gradient"):
        tf.saved.save(tf.function(_uses_it).get_concrete_function(x), str(tmp_path / "f.tgz"))
