"""TensorFlow names that programs call beside the math: TensorShape, executing_eagerly,
name_scope, meshgrid, sequence_mask, tf.nn.dropout and tf.nn.top_k (TensorFlow 2.21's
answers, checked by hand against it)."""
import numpy as np
import pytest

import tapegrad as tf


def test_tensor_shape_as_tensorflow_has_it():
    s = tf.TensorShape([None, 3])
    assert s.as_list() == [None, 3] and s.rank == s.ndims == 2 and s[1] == 3
    assert s[1:] == tf.TensorShape([3]) and s == (None, 3) and s != (2, 3)
    assert not s.is_fully_defined() and s.num_elements() is None
    assert tf.TensorShape([2, 3]).num_elements() == 6 and len(tf.TensorShape([2, 3])) == 2
    assert s.concatenate([4]).as_list() == [None, 3, 4]
    assert s.is_compatible_with([5, 3]) and not s.is_compatible_with([5, 4])
    assert s.merge_with([5, None]).as_list() == [5, 3]
    assert str(s) == "(None, 3)" and repr(s) == "TensorShape([None, 3])"
    unknown = tf.TensorShape(None)
    assert unknown.rank is None and str(unknown) == "<unknown>"
    with pytest.raises(ValueError, match="unknown TensorShape"):
        unknown.as_list()
    with pytest.raises(ValueError, match="not compatible"):
        s.merge_with([1, 2])
    sig = tf.function(lambda x: x * 2.0,
                      input_signature=[tf.TensorSpec(tf.TensorShape([None, 3]), tf.float32)])
    assert sig(tf.ones((2, 3))).shape == (2, 3)


def test_executing_eagerly_and_name_scope():
    assert tf.executing_eagerly()
    seen = []

    @tf.function
    def f(x):
        seen.append(tf.executing_eagerly())
        with tf.name_scope("block") as scope:
            seen.append(scope)
            return x + 1.0
    assert float(f(tf.constant(1.0))) == 2.0
    assert seen == [False, "block/"]


def test_meshgrid_and_sequence_mask():
    x, y = tf.meshgrid([1, 2, 3], [4, 5])
    assert x.numpy().tolist() == [[1, 2, 3], [1, 2, 3]]
    assert y.numpy().tolist() == [[4, 4, 4], [5, 5, 5]]
    a, b, c = tf.meshgrid([1.0, 2.0], [3.0, 4.0, 5.0], [6.0] * 4)
    assert a.shape == b.shape == c.shape == (3, 2, 4)
    i, j = tf.meshgrid([1.0, 2.0], [3.0, 4.0, 5.0], indexing="ij")
    np.testing.assert_array_equal(i.numpy(), np.meshgrid([1.0, 2.0], [3.0, 4.0, 5.0],
                                                         indexing="ij")[0])
    # collocation grids of a PINN: the derivative reaches each axis' points
    xs, ts = tf.constant([0.1, 0.2]), tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([xs, ts])
        gx, gt = tf.meshgrid(xs, ts)
        u = tf.reduce_sum(gx ** 2 * gt)
    np.testing.assert_allclose(tape.gradient(u, xs).numpy(), 2 * xs.numpy() * 6.0)
    np.testing.assert_allclose(tape.gradient(u, ts).numpy(), [0.05] * 3)
    with pytest.raises(ValueError, match="indexing"):
        tf.meshgrid([1], [2], indexing="ji")
    assert tf.sequence_mask([1, 3, 2], 4).numpy().tolist() == [
        [True, False, False, False], [True, True, True, False], [True, True, False, False]]
    assert tf.sequence_mask([[1, 3], [2, 0]]).shape == (2, 2, 3)
    assert tf.sequence_mask([1, 2], 3, dtype=tf.float32).numpy().tolist() == [
        [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]


def test_nn_dropout_scales_and_masks_as_tensorflow():
    x = tf.ones((400, 5))
    y = tf.nn.dropout(x, rate=0.25, seed=3).numpy()
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}
    assert 0.15 < np.mean(y == 0) < 0.35
    rows = tf.nn.dropout(x, rate=0.5, noise_shape=[400, 1]).numpy()
    assert all(len(set(r)) == 1 for r in rows)     # whole rows kept or dropped
    np.testing.assert_array_equal(tf.nn.dropout(x, rate=0.0).numpy(), x.numpy())

    @tf.function
    def f(x):
        return tf.nn.dropout(x, 0.5)
    a, b = f(tf.ones(64)).numpy(), f(tf.ones(64)).numpy()
    assert not np.array_equal(a, b)       # a fresh mask per call, traced too
    with tf.GradientTape() as tape:
        tape.watch(x)
        d = tf.nn.dropout(x, 0.5, seed=4)
        total = tf.reduce_sum(d)
    g = tape.gradient(total, x).numpy()
    np.testing.assert_array_equal(g, d.numpy())  # x is ones: the gradient is the mask / keep
    with pytest.raises(ValueError, match=r"range \[0, 1\)"):
        tf.nn.dropout(x, rate=1.0)
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dropout(tf.ones(3, tf.int32), rate=0.5)
    assert tf.nn.top_k([1, 5, 3], 2).values.numpy().tolist() == [5, 3]
