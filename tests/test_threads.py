"""Tapes in different threads share variables safely."""
import threading

import numpy as np

import tapegrad as tf


def test_threads_reading_one_variable_get_their_own_gradients():
    v = tf.Variable(np.array([1.0, 2.0, 3.0]))
    errors = []

    def work(scale):
        try:
            for _ in range(300):
                with tf.GradientTape() as t:
                    y = tf.reduce_sum(v * v) * scale
                    y = y + tf.reduce_sum(v) * 0.0
                g = t.gradient(y, v)
                np.testing.assert_allclose(g.numpy(), 2 * scale * v.numpy())
        except Exception as e:  # reported to the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in (1.0, 2.0, 3.0, 4.0)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]
