"""tf.sort, tf.argsort, tf.math.top_k and tf.boolean_mask: values against NumPy, gradients."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import check_grads

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
def test_sort_and_argsort_match_numpy(axis, direction):
    x = RNG.standard_normal((4, 5))
    want = np.sort(x, axis=axis)
    if direction == "DESCENDING":
        want = np.flip(want, axis=axis)
    np.testing.assert_array_equal(tf.sort(x, axis=axis, direction=direction).numpy(), want)
    idx = tf.argsort(x, axis=axis, direction=direction).numpy()
    np.testing.assert_array_equal(np.take_along_axis(x, idx, axis=axis), want)
    assert idx.dtype == np.int32


def test_sort_gradient_goes_to_the_picked_elements():
    x = RNG.standard_normal(6)
    check_grads(lambda v: tf.sort(v) * tf.range(6, dtype=tf.float64), [x], order=2)
    xv = tf.constant(x)
    with tf.GradientTape() as t:
        t.watch(xv)
        y = tf.sort(xv)[-1] * 3.0          # 3 * max
    g = t.gradient(y, xv).numpy()
    np.testing.assert_array_equal(g, np.where(np.arange(6) == np.argmax(x), 3.0, 0.0))


def test_top_k_values_indices_and_gradient():
    x = np.array([[1.0, 5.0, 3.0, 4.0], [2.0, 0.0, 9.0, 7.0]])
    v, i = tf.math.top_k(x, k=2)
    np.testing.assert_array_equal(v.numpy(), [[5.0, 4.0], [9.0, 7.0]])
    np.testing.assert_array_equal(i.numpy(), [[1, 3], [2, 3]])
    r = tf.math.top_k(x, k=1)
    assert r.values.shape == (2, 1) and r.indices.shape == (2, 1)
    check_grads(lambda a: tf.math.top_k(a, k=2).values ** 2, [RNG.standard_normal((3, 5))],
                order=2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Had 4, needed 5"):
        tf.math.top_k(x, k=5)  # (TensorFlow's error; a ValueError too, as its tracing's)


def test_sort_under_vmap_and_in_a_compiled_function():
    xs = RNG.standard_normal((3, 5))
    np.testing.assert_array_equal(tf.vmap(tf.sort)(xs).numpy(), np.sort(xs, axis=-1))
    f = tf.function(lambda a: tf.sort(a, direction="DESCENDING"))
    np.testing.assert_array_equal(f(tf.constant(xs)).numpy(), -np.sort(-xs, axis=-1))


def test_boolean_mask_and_its_errors():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(tf.boolean_mask(x, [True, False]).numpy(), [[0.0, 1.0, 2.0]])
    np.testing.assert_array_equal(tf.boolean_mask(x, [[True, False, True], [False, True, False]])
                                  .numpy(), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(tf.boolean_mask(x, [False, True, True], axis=1).numpy(),
                                  [[1.0, 2.0], [4.0, 5.0]])
    with pytest.raises(ValueError, match="mask shape"):
        tf.boolean_mask(x, [True, False, True])
    with pytest.raises(TypeError, match="bool"):
        tf.boolean_mask(x, [1, 0])
    with pytest.raises(ValueError, match="direction"):
        tf.sort(x, direction="UP")
