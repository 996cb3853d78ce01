"""``tf.slice``, ``tf.ensure_shape``, ``tf.get_static_value``, ``tf.identity_n`` and the
ordering no-ops (``no_op``, ``group``, ``control_dependencies``) as TensorFlow 2.21 has them
(values, and its error types, checked by hand against it), eagerly and in ``tf.function``."""
import numpy as np
import pytest

import tapegrad as tf


def test_slice():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(tf.slice(x, [1, 0], [2, -1]).numpy(), x[1:3, :])
    np.testing.assert_array_equal(tf.slice(x, [0, 3], [3, 1]).numpy(), x[:, 3:4])
    assert tf.slice(x, [3, 4], [0, 0]).shape == (0, 0)
    for begin, size, match in (([1, 0], [5, 1], "size"), ([-1, 0], [1, 1], "begin"),
                               ([1], [1], "1-D")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=match):
            tf.slice(x, begin, size)
    f = tf.function(lambda a: tf.slice(a, [0, 1], [2, 2]))
    np.testing.assert_array_equal(f(tf.constant(x)).numpy(), x[0:2, 1:3])
    v = tf.Variable(x.astype(np.float32))
    with tf.GradientTape() as t:
        y = tf.reduce_sum(tf.slice(v, [1, 1], [1, 2]))
    np.testing.assert_array_equal(t.gradient(y, v).numpy(),
                                  np.pad(np.ones((1, 2)), ((1, 1), (1, 1))))


def test_ensure_shape():
    x = tf.zeros((3, 4))
    assert tf.ensure_shape(x, [3, None]) is x
    with pytest.raises(tf.errors.InvalidArgumentError, match="not compatible"):
        tf.ensure_shape(x, [3, 5])
    g = tf.function(lambda a: tf.ensure_shape(a, [None, 5]))
    with pytest.raises(ValueError, match="not compatible"):
        g(x)


def test_static_values_and_ordering_no_ops():
    x = tf.constant([1, 2])
    np.testing.assert_array_equal(tf.get_static_value(x), [1, 2])
    assert tf.get_static_value(3) == 3
    seen = []

    @tf.function
    def f(a):
        seen.append((tf.get_static_value(a), int(tf.get_static_value(tf.constant(2)))))
        with tf.control_dependencies([a]):
            b = tf.identity_n([a, a * 2])
        tf.group(*b)
        tf.no_op()
        return b

    out = f(x)
    assert seen == [(None, 2)]
    np.testing.assert_array_equal(out[1].numpy(), [2, 4])
