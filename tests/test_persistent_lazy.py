"""A persistent tape used after its block records its gradient computations lazily."""
import gc
import weakref

import numpy as np

import tapegrad as tf


def test_first_order_gradient_after_exit_records_nothing():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x ** 3
    n = len(tape._entries)
    for _ in range(10):
        dy_dx = tape.gradient(y, x)
    assert float(dy_dx) == 12.0
    assert len(tape._entries) == n          # no growth: first-order costs nothing extra


def test_second_order_after_exit_is_recomputed_on_demand():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x ** 3
    dy_dx = tape.gradient(y, x)
    assert float(tape.gradient(dy_dx, x)) == 12.0      # 6x, the lesson's value
    x64 = tf.constant(np.array([0.3, -1.2]))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x64)
        y = tf.reduce_sum(tf.sin(x64) * x64)
    g = tape.gradient(y, x64)
    h = tape.jacobian(g, x64)
    xv = x64.numpy()
    np.testing.assert_allclose(np.diag(h.numpy()), 2 * np.cos(xv) - xv * np.sin(xv))
    third = tape.gradient(tape.gradient(g, x64), x64)
    np.testing.assert_allclose(third.numpy(), -3 * np.sin(xv) - xv * np.cos(xv), rtol=1e-12)


def test_forgotten_results_free_their_bookkeeping():
    gc_was = gc.isenabled()
    gc.disable()
    try:
        x = tf.Variable(np.ones(5))
        with tf.GradientTape(persistent=True) as tape:
            y = tf.reduce_sum(tf.exp(x))
        for _ in range(50):
            tape.gradient(y, x)
        assert not tape._lazy
        g = tape.gradient(y, x)
        assert len(tape._lazy) == 1
        ref = weakref.ref(tape)
        del tape
        assert ref() is None                  # no reference cycle through the bookkeeping
        assert g.shape == (5,)
    finally:
        if gc_was:
            gc.enable()
