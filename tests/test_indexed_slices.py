"""tf.IndexedSlices as TensorFlow 2.21 has it: made dense by summing repeated rows, taken by
every op, clipped row-wise by clip_by_norm / clip_by_global_norm, a composite tensor for
tf.is_tensor and tf.nest(expand_composites=True), and taken by Keras optimizers as its dense
sum. The expected values are NumPy's (np.add.at for the dense sum, TensorFlow's clip
formulas); the error messages are TensorFlow 2.21's."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import check_grads

VALUES = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
INDICES = np.array([0, 2, 0], np.int32)


def _slices():
    return tf.IndexedSlices(tf.constant(VALUES), tf.constant(INDICES), tf.constant([3, 2]))


def _dense(values=VALUES, indices=INDICES, rows=3):
    out = np.zeros((rows,) + values.shape[1:], values.dtype)
    np.add.at(out, indices, values)
    return out


def test_fields_and_shape():
    s = _slices()
    assert s.shape == tf.TensorShape([3, 2]) and s.dtype == tf.float32
    np.testing.assert_array_equal(s.values.numpy(), VALUES)
    np.testing.assert_array_equal(s.indices.numpy(), INDICES)
    np.testing.assert_array_equal(s.dense_shape.numpy(), [3, 2])
    unknown = tf.IndexedSlices(tf.constant(VALUES[:1]), tf.constant([1]))
    assert unknown.dense_shape is None and unknown.shape.rank is None


def test_dense_sum_of_repeated_rows():
    got = tf.convert_to_tensor(_slices())
    np.testing.assert_array_equal(got.numpy(), _dense())
    assert got.dtype == tf.float32
    # every op converts it the same way
    np.testing.assert_array_equal(tf.add(_slices(), 1.0).numpy(), _dense() + 1)
    np.testing.assert_array_equal(tf.math.multiply(_slices(), 2.0).numpy(), _dense() * 2)
    assert float(tf.reduce_sum(_slices())) == float(VALUES.sum())
    np.testing.assert_array_equal((-_slices()).values.numpy(), -VALUES)


def test_errors_are_tensorflows():
    with pytest.raises(ValueError, match="Tensor conversion requested for IndexedSlices for "
                                         "argument `value` without dense_shape"):
        tf.convert_to_tensor(tf.IndexedSlices(tf.constant(VALUES[:1]), tf.constant([1])))
    with pytest.raises(ValueError, match="Incompatible tensor conversion requested to `dtype` "
                                         "float64 for IndexedSlices"):
        tf.convert_to_tensor(_slices(), dtype=tf.float64)
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \*"):
        _slices() * 2
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \+"):
        _slices() + _slices()


def test_clip_by_norm_clips_the_rows():
    got = tf.clip_by_norm(_slices(), 1.0)
    assert isinstance(got, tf.IndexedSlices)
    norm = np.sqrt((VALUES.astype(np.float64) ** 2).sum())  # of the rows, not the dense sum
    np.testing.assert_allclose(got.values.numpy(), VALUES / norm, rtol=1e-6)
    np.testing.assert_array_equal(got.indices.numpy(), INDICES)


def test_clip_by_global_norm_counts_the_rows():
    other = np.array([3.0], np.float32)
    clipped, norm = tf.clip_by_global_norm([_slices(), tf.constant(other)], 1.0)
    want = np.sqrt((VALUES.astype(np.float64) ** 2).sum() + 9.0)
    np.testing.assert_allclose(float(norm), want, rtol=1e-6)
    assert isinstance(clipped[0], tf.IndexedSlices)
    np.testing.assert_allclose(clipped[0].values.numpy(), VALUES / want, rtol=1e-6)
    np.testing.assert_allclose(clipped[1].numpy(), other / want, rtol=1e-6)
    np.testing.assert_allclose(float(tf.linalg.global_norm([_slices()])),
                               np.sqrt((VALUES.astype(np.float64) ** 2).sum()), rtol=1e-6)


def test_composite_tensor():
    s = _slices()
    sp = tf.SparseTensor([[0, 0]], [1.0], [2, 2])
    assert tf.is_tensor(s) and tf.is_tensor(sp) and not isinstance(s, tf.Tensor)
    assert tf.nest.flatten(s) == [s]
    parts = tf.nest.flatten(s, expand_composites=True)
    assert [p.shape for p in parts] == [(3, 2), (3,), (2,)]
    assert len(tf.nest.flatten([sp, 1.0], expand_composites=True)) == 4
    doubled = tf.nest.map_structure(lambda x: x * 2, {"g": s}, expand_composites=True)["g"]
    assert isinstance(doubled, tf.IndexedSlices)
    np.testing.assert_array_equal(doubled.values.numpy(), VALUES * 2)
    np.testing.assert_array_equal(doubled.indices.numpy(), INDICES * 2)
    rebuilt = tf.nest.pack_sequence_as(sp, [t * 1 for t in tf.nest.flatten(
        sp, expand_composites=True)], expand_composites=True)
    np.testing.assert_array_equal(tf.sparse.to_dense(rebuilt).numpy(), [[1.0, 0.0], [0.0, 0.0]])


def test_gradient_through_the_dense_sum():
    idx = tf.constant([0, 0, 1])

    def f(v):
        return tf.convert_to_tensor(tf.IndexedSlices(v * v, idx, tf.constant([3])))

    check_grads(f, [np.array([0.5, -1.5, 2.0])], order=2)
    v = tf.Variable([1.0, 2.0, 3.0])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(f(v) * tf.constant([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(t.gradient(y, v).numpy(), [2.0, 4.0, 60.0])


def test_inside_function():
    @tf.function
    def f(a):
        return tf.convert_to_tensor(tf.IndexedSlices(a, tf.constant([1, 1]), tf.constant([3])))

    np.testing.assert_array_equal(f(tf.constant([1.0, 2.0])).numpy(), [0.0, 3.0, 0.0])


def test_sgd_takes_the_dense_sum():
    # SGD's step is linear: the slices' sum gives the same bits (Keras's squaring
    # optimizers: tests/test_sparse_optimizers.py)
    values = np.array([1.0, 2.0], np.float32)
    slices = tf.IndexedSlices(tf.constant(values), tf.constant([0, 0]), tf.constant([3]))
    a, b = tf.Variable([0.5, 0.0, -1.0]), tf.Variable([0.5, 0.0, -1.0])
    opt_a = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    opt_b = tf.keras.optimizers.SGD(0.1, momentum=0.9)
    for _ in range(2):
        opt_a.apply_gradients([(slices, a)])
        opt_b.apply_gradients([(tf.constant(_dense(values, [0, 0])), b)])
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), [0.5, 0.0, -1.0])


def test_user_conversion_protocol():
    class Celsius:  # a user's class with TensorFlow's __tf_tensor__ protocol
        def __init__(self, v):
            self.v = v

        def __tf_tensor__(self, dtype=None, name=None):
            return tf.constant(self.v, dtype=dtype)

    assert float(tf.convert_to_tensor(Celsius(2.5))) == 2.5
    assert float(tf.add(Celsius(2.5), 1.0)) == 3.5


def test_tf_function_takes_and_returns_composite_tensors():
    # a train step returning its gradients: an embedding's is IndexedSlices, as in TensorFlow
    v = tf.Variable(np.ones((4, 2), np.float32))
    w = tf.Variable(np.ones(2, np.float32))

    @tf.function
    def grads(ids):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.gather(v, ids) * w * 2.0)
        return tape.gradient(y, [v, w])

    g, gw = grads(tf.constant([3, 3, 0]))
    assert isinstance(g, tf.IndexedSlices) and type(g.values) is tf.Tensor
    assert g.indices.numpy().tolist() == [3, 3, 0] and g.dense_shape.numpy().tolist() == [4, 2]
    np.testing.assert_array_equal(g.values.numpy(), np.full((3, 2), 2.0, np.float32))
    np.testing.assert_array_equal(gw.numpy(), [6.0, 6.0])

    @tf.function
    def doubled(s):
        return tf.convert_to_tensor(s) * 2.0

    np.testing.assert_array_equal(doubled(g).numpy(), [[4, 4], [0, 0], [0, 0], [8, 8]])

    @tf.function
    def densified(s):
        return tf.sparse.to_dense(s) + 1.0

    for where, value in (([0, 1], 5.0), ([0, 1], 7.0), ([1, 2], 7.0)):  # indices are static
        want = np.ones((2, 3), np.float32)
        want[tuple(where)] += value
        got = densified(tf.sparse.SparseTensor([where], [value], [2, 3]))
        np.testing.assert_array_equal(got.numpy(), want)
