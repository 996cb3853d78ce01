"""Real TensorFlow/Keras programs (session 11's probe), run as written with ``import
tapegrad as tf`` and compared with what TensorFlow 2.21 / Keras 3.15 computed for the same
fixed weights (tests/data/real_programs_s11.npz, made by
benchmarks/real_programs_s11_reference.py from the same program text)."""
import os

import numpy as np
import pytest

import tapegrad as tf

import _real_programs_s11 as programs

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "real_programs_s11.npz"))


def _check(name, tmp_path, rtol=2e-4, atol=2e-5):
    got = programs.run(tf, name, str(tmp_path))
    keys = sorted(k.split("/", 1)[1] for k in REF.files if k.startswith(name + "/"))
    assert sorted(got) == keys
    for key in keys:
        want, have = REF[f"{name}/{key}"], np.asarray(got[key])
        assert have.shape == want.shape, key
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=key)
        else:
            np.testing.assert_array_equal(have, want, err_msg=key)
    return got


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", programs.NAMES)
def test_program_matches_tensorflow(name, tmp_path):
    _check(name, tmp_path)


def test_char_rnn_prediction_mask_is_a_sparse_tensor_densified():
    # the tutorial's mask: -inf at the [UNK] id, zero elsewhere, added to float32 logits
    mask = tf.sparse.to_dense(tf.SparseTensor(values=[-float("inf")], indices=[[0]],
                                              dense_shape=[4]))
    assert mask.dtype == tf.float32
    np.testing.assert_array_equal(mask.numpy(), [-np.inf, 0.0, 0.0, 0.0])
    logits = tf.constant([[5.0, 1.0, 2.0, 0.5]]) + mask
    assert int(tf.argmax(logits, axis=-1)[0]) == 2


def test_sparse_tensor_parts_default_value_and_gradient():
    st = tf.SparseTensor(indices=[[0, 1], [2, 3]], values=[1.0, 2.0], dense_shape=[3, 4])
    assert st.indices.dtype == tf.int64 and st.dense_shape.dtype == tf.int64
    assert st.shape == (3, 4) and st.dtype == tf.float32
    want = np.full((3, 4), -1.0, np.float32)
    want[0, 1], want[2, 3] = 1.0, 2.0
    np.testing.assert_array_equal(tf.sparse.to_dense(st, default_value=-1.0).numpy(), want)
    v = tf.Variable([1.0, 2.0])
    weights = tf.reshape(tf.range(12.0), (3, 4))
    with tf.GradientTape() as tape:
        dense = tf.sparse.to_dense(tf.SparseTensor([[0, 1], [2, 3]], v, [3, 4]))
        loss = tf.reduce_sum(dense * weights)
    np.testing.assert_array_equal(tape.gradient(loss, v).numpy(), [1.0, 11.0])
    back = tf.sparse.from_dense([[0, 2], [3, 0]])
    assert back.indices.numpy().tolist() == [[0, 1], [1, 0]]
    assert back.values.numpy().tolist() == [2, 3] and back.values.dtype == tf.int32
    ordered = tf.sparse.reorder(tf.SparseTensor([[2, 3], [0, 1]], [1.0, 2.0], [3, 4]))
    assert ordered.indices.numpy().tolist() == [[0, 1], [2, 3]]
    assert ordered.values.numpy().tolist() == [2.0, 1.0]
    np.testing.assert_array_equal(
        tf.sparse.sparse_dense_matmul(st, tf.ones((4, 2))).numpy(), [[1, 1], [0, 0], [2, 2]])


@pytest.mark.parametrize("indices, message", [
    ([[2, 3], [0, 1]], "indices[1] = [0,1] is out of order. Many sparse ops require sorted"),
    ([[0, 1], [0, 1]], "indices[1] = [0,1] is repeated"),
    ([[0, 1], [3, 0]], "indices[1] = [3,0] is out of bounds: need 0 <= index < [3,4]"),
])
def test_sparse_to_dense_refuses_bad_indices_as_tensorflow_does(indices, message):
    # TensorFlow 2.21's errors (scatter_nd would add duplicates up: a silent wrong number)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message.replace("[", r"\[")):
        tf.sparse.to_dense(tf.SparseTensor(indices, [1.0, 2.0], [3, 4]))


def test_sparse_tensor_static_shape_checks():
    with pytest.raises(ValueError, match="Dimensions 1 and 2 are not compatible"):
        tf.SparseTensor([[0]], [1.0, 2.0], [3])
    with pytest.raises(ValueError, match="Dimensions 1 and 2 are not compatible"):
        tf.SparseTensor([[0]], [1.0], [3, 3])


def test_legacy_backend_errors_are_tensorflows():
    K = tf.keras.backend
    x = K.constant(np.ones((3, 4)))
    with pytest.raises(tf.errors.InvalidArgumentError):  # TF: SelectV2 must be broadcastable
        K.switch(K.constant([1.0, 0.0, 1.0]) > 0.5, x, x)
    with pytest.raises(RuntimeError, match="Use tf.GradientTape instead"):
        K.gradients(K.sum(x), [x])
    with pytest.raises(ValueError, match="Cannot perform batch_dot over axis 0"):
        K.batch_dot(x, x, axes=0)
    with pytest.raises(ValueError, match="Cannot apply softmax to a tensor that is 1D"):
        K.softmax(K.constant([1.0, 2.0]))
    with pytest.raises(AttributeError, match="no attribute 'not_a_function'"):
        _ = K.not_a_function


def test_empty_list_takes_the_dtype_asked_for():
    # TensorFlow: [] converts to any dtype (K.switch concatenates a shape with one)
    assert tf.convert_to_tensor([], dtype=tf.int32).dtype == tf.int32
    assert tf.constant([[], []], dtype=tf.bool).shape == (2, 0)
    assert tf.concat([tf.constant([2, 3]), []], 0).numpy().tolist() == [2, 3]
    with pytest.raises(TypeError, match="Cannot convert"):
        tf.convert_to_tensor([1.0], dtype=tf.int32)
