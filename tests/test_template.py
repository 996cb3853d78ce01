"""reduce_retracing / None dimensions: after two traces at different sizes of one dimension,
other sizes reuse a template of the program without running the Python function."""
import numpy as np

import tapegrad as tf

RNG = np.random.default_rng(0)


def _counting(fn, **kw):
    calls = []

    def wrapped(*args):
        calls.append(1)
        return fn(*args)
    return tf.function(wrapped, **kw), calls


def test_reduce_retracing_traces_twice_then_reuses():
    f, calls = _counting(lambda x: tf.reshape(tf.tanh(x) * 2.0, [-1]), reduce_retracing=True)
    for n in (2, 5, 7, 11):
        x = RNG.standard_normal((n, 3)).astype(np.float32)
        np.testing.assert_allclose(f(x).numpy(), (np.tanh(x) * 2).reshape(-1), rtol=1e-6)
    assert f.trace_count == 2 and len(calls) == 2


def test_none_dimension_signature_reuses_the_question_jacobian_program():
    w1 = tf.constant(RNG.standard_normal((3, 8)).astype(np.float32))
    w2 = tf.constant(RNG.standard_normal((8, 2)).astype(np.float32))

    def jac(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.matmul(tf.tanh(tf.matmul(x, w1)), w2)
        return g.batch_jacobian(y, x)
    f, calls = _counting(jac, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    for n in (4, 6, 9, 1):
        x = tf.constant(RNG.standard_normal((n, 3)).astype(np.float32))
        np.testing.assert_allclose(f(x).numpy(), jac(x).numpy(), rtol=1e-5, atol=1e-6)
    assert len(calls) == 1  # one trace with a symbolic batch size


def test_a_mean_over_the_varying_dimension_is_reused_after_the_relaxed_trace():
    # the 1 / n of the mean is staged from the symbolic size (trace/symbolic.py)
    f, calls = _counting(lambda x: tf.reduce_mean(x, axis=0), reduce_retracing=True)
    for n in (2, 4, 7, 3):
        x = RNG.standard_normal((n, 3)).astype(np.float32)
        np.testing.assert_allclose(f(x).numpy(), x.mean(0), rtol=1e-6)
    assert len(calls) == 2


def test_a_size_that_enters_quadratically_is_exact_not_guessed():
    # reshape to n * n: the relaxed trace's param is the expression n * n, not a linear fit
    f, calls = _counting(lambda x: tf.reshape(x[:, None] * x[None, :], [-1]),
                         reduce_retracing=True)
    for n in (2, 3, 5, 8):
        x = RNG.standard_normal(n)
        np.testing.assert_allclose(f(x).numpy(), np.outer(x, x).reshape(-1), rtol=1e-12)
    assert len(calls) == 2


def test_templates_keep_variables_updates_and_differentiability():
    w = tf.Variable(np.ones(3))

    def step(x):
        loss = tf.reduce_sum(tf.matmul(x, tf.reshape(w, [3, 1])) ** 2)
        w.assign_sub(0.01 * tf.ones([3]))
        return loss
    f, calls = _counting(step, reduce_retracing=True)
    for n in (2, 4, 6):
        before = w.numpy()
        x = RNG.standard_normal((n, 3))
        np.testing.assert_allclose(float(f(x)), np.sum((x @ before) ** 2), rtol=1e-12)
        np.testing.assert_allclose(w.numpy(), before - 0.01)
    assert len(calls) == 2
    x = tf.constant(RNG.standard_normal((8, 3)))
    with tf.GradientTape() as t:
        t.watch(x)
        y = f(x)
    np.testing.assert_allclose(t.gradient(y, x).numpy(),
                               2 * (x.numpy() @ (w.numpy() + 0.01))[:, None]
                               * (w.numpy() + 0.01)[None, :], rtol=1e-6)
