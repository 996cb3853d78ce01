"""Real TensorFlow/Keras programs (session 11's probe), run as written with ``import
tapegrad as tf`` and compared with what TensorFlow 2.21 / Keras 3.15 computed for the same
fixed weights (tests/data/real_programs_s11.npz, made by
benchmarks/real_programs_s11_reference.py from the same program text)."""
import os
import re

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


def test_signal_derivatives_to_second_order():
    # stft, irfft and dct are products with constant matrices: their derivatives of any
    # order come from matmul's, gather's and complex's rules
    from tapegrad.testing import check_grads
    rng = np.random.default_rng(19)
    wave = rng.normal(size=(2, 24))
    check_grads(lambda w: tf.abs(tf.signal.stft(w, 8, 5, fft_length=8)) ** 2, [wave], order=2)
    check_grads(lambda w: tf.signal.irfft(tf.signal.rfft(w) * tf.signal.rfft(w)), [wave],
                order=2)
    check_grads(lambda w: tf.signal.dct(w, type=3, norm="ortho") ** 2, [wave], order=2)
    check_grads(lambda w: tf.signal.frame(w, 5, 3, pad_end=True) ** 3, [wave], order=2)


def test_signal_round_trips():
    rng = np.random.default_rng(20)
    x = tf.constant(rng.normal(size=(3, 17)))
    np.testing.assert_allclose(tf.signal.irfft(tf.signal.rfft(x), fft_length=[17]).numpy(),
                               x.numpy(), atol=1e-12)
    np.testing.assert_allclose(tf.signal.idct(tf.signal.dct(x, norm="ortho"), norm="ortho")
                               .numpy(), x.numpy(), atol=1e-12)
    np.testing.assert_allclose(tf.signal.rfft(x).numpy(), np.fft.rfft(x.numpy()), atol=1e-12)


@pytest.mark.parametrize("call, error, message", [
    (lambda: tf.signal.rfft(tf.constant([1, 2, 3])), ValueError,
     "RFFT requires tf.float32 or tf.float64 inputs"),
    (lambda: tf.signal.irfft(tf.constant([1.0, 2.0])), ValueError,
     "IRFFT requires tf.complex64 or tf.complex128 inputs"),
    (lambda: tf.signal.rfft(tf.constant([1.0, 2.0]), fft_length=3), TypeError,
     "object is not iterable"),
    (lambda: tf.signal.hann_window(3, dtype=tf.int32), ValueError,
     "dtype must be a floating point type. Found <dtype: 'int32'>"),
    (lambda: tf.signal.stft(tf.constant([1, 2, 3, 4, 5]), 2, 1), ValueError,
     "dtype must be a floating point type"),
    (lambda: tf.signal.frame(tf.range(10.0), 3, 0), tf.errors.InvalidArgumentError,
     "Integer division by zero"),
    (lambda: tf.signal.dct(tf.constant([1.0, 2.0]), type=5), ValueError,
     "Types I, II, III and IV"),
    (lambda: tf.signal.dct(tf.constant([1.0, 2.0]), type=1, norm="ortho"), ValueError,
     "Normalization is not supported for the Type-I DCT."),
    (lambda: tf.signal.dct(tf.constant([1.0]), type=1), ValueError,
     "Type-I DCT requires the dimension to be greater than one."),
    (lambda: tf.signal.dct(tf.constant([1.0, 2.0]), axis=0), NotImplementedError,
     "axis must be -1. Got: 0"),
    (lambda: tf.signal.dct(tf.constant([1.0, 2.0]), norm="foo"), ValueError,
     "Unknown normalization. Expected None or 'ortho', got: foo"),
    (lambda: tf.signal.dct(tf.constant([1.0, 2.0]), n=0), ValueError,
     "n should be a positive integer or None"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(num_mel_bins=0), ValueError,
     "num_mel_bins must be positive. Got: 0"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(lower_edge_hertz=-1.0), ValueError,
     "lower_edge_hertz must be non-negative. Got: -1.0"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(lower_edge_hertz=4000.0), ValueError,
     "lower_edge_hertz 4000.0 >= upper_edge_hertz 3800.0"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(sample_rate=0), ValueError,
     "sample_rate must be positive. Got: 0"),
    (lambda: tf.signal.linear_to_mel_weight_matrix(upper_edge_hertz=5000.0), ValueError,
     "upper_edge_hertz must not be larger than the Nyquist frequency"),
])
def test_signal_errors_are_tensorflows(call, error, message):
    # TensorFlow 2.21's error types and messages
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_convlstm2d_saves_and_reloads_with_its_cell_arguments(tmp_path):
    keras = tf.keras
    model = keras.Sequential([
        keras.Input((3, 6, 6, 1)),
        keras.layers.ConvLSTM2D(2, 3, padding="same", return_sequences=True, use_bias=False,
                                kernel_regularizer="l2"),
        keras.layers.ConvLSTM2D(2, (3, 3), strides=2)])
    x = np.random.default_rng(21).normal(size=(2, 3, 6, 6, 1)).astype(np.float32)
    y = model(x)
    config = model.layers[0].get_config()
    assert config["kernel_size"] == (3, 3) and config["use_bias"] is False
    assert config["kernel_regularizer"]["class_name"] == "L2"
    model.save(tmp_path / "convlstm.keras")
    again = keras.models.load_model(tmp_path / "convlstm.keras")
    np.testing.assert_array_equal(again(x).numpy(), y.numpy())
    assert len(again.layers[0].weights) == 2 and again.layers[0].losses
    with pytest.raises(NotImplementedError, match="dropout"):
        keras.layers.ConvLSTM2D(2, 3, dropout=0.1)


@pytest.mark.parametrize("how", ["eager", "function"])
def test_second_derivatives_of_a_complex_modulus_are_tensorflows(how):
    # d|z|/dx = x / r; its derivatives w b^2 / r^3 and -w a b / r^3 (TensorFlow 2.21 gives
    # them: its ComplexAbsGrad is g z / |z|); z / |z| was sign(z), whose derivative is 0
    rng = np.random.default_rng(22)
    a, b = rng.normal(size=3), rng.normal(size=3)
    w = np.array([1.0, 2.0, 3.0])

    def second(x, y):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch([x, y])
            with tf.GradientTape() as inner:
                inner.watch(x)
                modulus = tf.reduce_sum(tf.abs(tf.complex(x, y)))
            s = tf.reduce_sum(inner.gradient(modulus, x) * w)
        return outer.gradient(s, x), outer.gradient(s, y)

    run = tf.function(second) if how == "function" else second
    hxx, hxy = run(tf.constant(a), tf.constant(b))
    r = np.hypot(a, b)
    np.testing.assert_allclose(hxx.numpy(), w * b ** 2 / r ** 3, rtol=1e-12)
    np.testing.assert_allclose(hxy.numpy(), -w * a * b / r ** 3, rtol=1e-12)
    from tapegrad.testing import check_grads
    check_grads(lambda x, y: tf.abs(tf.complex(x, y)) ** 3, [a, b], order=2)
    z = tf.constant([0j, 3 - 4j])
    with tf.GradientTape() as tape:
        tape.watch(z)
        total = tf.reduce_sum(tf.abs(z))
    np.testing.assert_allclose(tape.gradient(total, z).numpy(), [0, 0.6 - 0.8j])  # 0 at 0


@pytest.mark.parametrize("make", [
    lambda: tf.keras.layers.LSTM(2, use_bias=False, unit_forget_bias=False),
    lambda: tf.keras.layers.GRU(2, use_bias=False, reset_after=False),
    lambda: tf.keras.layers.SimpleRNN(2, use_bias=False)])
def test_recurrent_layers_without_bias_reload(make, tmp_path):
    # the cell's arguments (use_bias...) were dropped on load as unknown to the layer
    model = tf.keras.Sequential([tf.keras.Input((3, 4)), make()])
    x = np.random.default_rng(23).normal(size=(2, 3, 4)).astype(np.float32)
    model.save(tmp_path / "rnn.keras")
    again = tf.keras.models.load_model(tmp_path / "rnn.keras")
    assert again.layers[0].cell.use_bias is False
    np.testing.assert_array_equal(again(x).numpy(), model(x).numpy())
