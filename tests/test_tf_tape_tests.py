"""TensorFlow's own tape tests (backprop, forwardprop, custom_gradient, tf.function),
translated to tapegrad's public API: the points of issue 9, item 7.

Each test says which behaviour of TensorFlow it checks; expected values are derivatives
computed by hand or central differences, never numbers copied from a run of tapegrad.
"""
import numpy as np

import tapegrad as tf


# ==== a source the tape never watched ==============================================================
def test_an_unwatched_tensor_used_by_a_recorded_op_gets_none():
    # backprop_test: only watched tensors and outputs of recorded ops are on the tape
    x, c = tf.constant(3.0), tf.constant(2.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        b = c * 2.0            # not recorded: c is not watched
        y = b * x              # recorded (x is watched), but b never was
        z = x * 5.0            # computed from a watched tensor: on the tape
        w = z * b
    assert t.gradient(y, b) is None
    assert float(t.gradient(w, z)) == 4.0
    assert t.gradient(y, [x, b])[1] is None
    np.testing.assert_array_equal(t.gradient(y, b, unconnected_gradients="zero").numpy(), 0.0)
    assert t.jacobian(y, b) is None
    assert float(t.jacobian(w, z)) == 4.0


def test_an_unwatched_source_that_is_also_the_target_is_seeded_with_ones():
    # TensorFlow seeds a target that is also a source, watched or not
    c = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as t:
        y = c * 3.0
    assert float(t.gradient(c, c)) == 1.0
    assert float(t.gradient(y, y)) == 1.0
    assert t.gradient(y, [y, c])[1] is None


def test_a_variable_not_watched_gets_none_even_when_read():
    v = tf.Variable(2.0, trainable=False)   # not watched automatically
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = v * x
    gx, gv = t.gradient(y, [x, v])
    assert float(gx) == 2.0 and gv is None


def test_batch_jacobian_of_an_unwatched_source_is_zeros():
    x = tf.constant(np.ones((2, 3)))
    c = tf.constant(np.full((2, 3), 2.0))
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * c
    np.testing.assert_array_equal(t.batch_jacobian(y, c).numpy(), np.zeros((2, 3, 3)))
