"""Real TensorFlow/Keras programs (session 12's probe: tf.signal's FFTs, inverse STFTs,
Keras 3 weight paths, training loops of the guides), run as written with ``import tapegrad
as tf`` and compared with what TensorFlow 2.21 / Keras 3.15 computed for the same fixed
weights (tests/data/real_programs_s12.json, made by
benchmarks/real_programs_s12_reference.py from the same program text).

Tolerances: the programs compute in float32 (a few in float64). One FFT or layer differs
from TensorFlow's by a few float32 ulps (rtol 1e-6 relative to the largest value); a
program chains up to a few dozen of them and a few optimizer steps, so values are compared
with rtol 2e-4 and an atol of 2e-5 times the result's largest magnitude (sums of
cancelling terms, such as the small bins of a spectrum, keep only absolute accuracy)."""
import json
import os

import numpy as np
import pytest

import tapegrad as tf

import _real_programs_s12 as programs

with open(os.path.join(os.path.dirname(__file__), "data", "real_programs_s12.json")) as _f:
    REF = json.load(_f)["results"]


def _decode(entry):
    if entry["dtype"] == "str":
        return np.array(entry["data"], dtype=str).reshape(entry["shape"])
    data = np.array(entry["data"])
    if entry["dtype"].startswith("complex"):
        data = data[..., 0] + 1j * data[..., 1] if data.size else data
    return data.astype(entry["dtype"]).reshape(entry["shape"])


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", programs.NAMES + tuple(
    pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="Keras on TensorFlow's Adam "
                                            "squares unsummed IndexedSlices rows"))
    for n in programs.XFAIL_NAMES))
def test_program_matches_tensorflow(name):
    got = programs.run(tf, name)
    keys = sorted(k.split("/", 1)[1] for k in REF if k.startswith(name + "/"))
    assert sorted(got) == keys
    for key in keys:
        want, have = _decode(REF[f"{name}/{key}"]), np.asarray(got[key])
        assert have.shape == want.shape, key
        if want.dtype.kind in "fc":
            assert have.dtype == want.dtype, key
            scale = float(np.max(np.abs(want))) if want.size else 1.0
            np.testing.assert_allclose(have, want, rtol=2e-4, atol=2e-5 * max(scale, 1.0),
                                       err_msg=key)
        else:
            np.testing.assert_array_equal(have, want, err_msg=key)


@pytest.mark.parametrize("call, error, message", [
    (lambda: tf.signal.fft(tf.constant([1.0, 2.0])), tf.errors.InvalidArgumentError,
     "Value for attr 'Tcomplex' of float is not in the list of allowed values: complex64, "
     "complex128"),
    (lambda: tf.signal.ifft2d(tf.constant([1.0 + 0j, 2.0])), tf.errors.InvalidArgumentError,
     "Input must have rank of at least 2 but got: [2]"),
    (lambda: tf.signal.rfft2d(tf.constant([[1, 2]])), ValueError,
     "RFFT requires tf.float32 or tf.float64 inputs"),
    (lambda: tf.signal.irfft2d(tf.constant([[1.0, 2.0]])), ValueError,
     "IRFFT requires tf.complex64 or tf.complex128 inputs"),
    (lambda: tf.signal.rfft2d(tf.ones((2, 2)), fft_length=[2]),
     tf.errors.InvalidArgumentError, "fft_length must have shape [2]"),
    (lambda: tf.signal.overlap_and_add(tf.ones((4,)), 2), ValueError,
     "Shape (4,) must have rank at least 2"),
    (lambda: tf.signal.inverse_stft(tf.ones((4,), tf.complex64), 4, 2), ValueError,
     "Shape (4,) must have rank at least 2"),
    (lambda: tf.signal.overlap_and_add(tf.ones((3, 4)), 0), tf.errors.InvalidArgumentError,
     ""),
])
def test_fft_errors_are_tensorflows(call, error, message):
    # TensorFlow 2.21's error types and messages (benchmarks/real_programs_s12_reference.py
    # does not make these: they were read off TensorFlow by hand, as the s11 ones)
    import re
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_fft_ops_derivatives_to_second_order():
    # the op layer's crops and pads around the primitives, in float64 (the primitives'
    # own rules: tests/test_primitives.py SPECS). A cropping rfft / irfft gets the true
    # gradient here; TensorFlow 2.21's fails with "Incompatible shapes".
    from tapegrad.testing import check_grads
    rng = np.random.default_rng(30)
    image, re, im = rng.normal(size=(2, 5, 6)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4))

    def parts(z):
        return tf.math.real(z) ** 2 + tf.math.imag(z)
    check_grads(lambda x: parts(tf.signal.rfft2d(x, fft_length=[4, 8])), [image], order=2)
    check_grads(lambda x: parts(tf.signal.rfft(x, fft_length=[4])), [image], order=2)
    check_grads(lambda a, b: tf.signal.irfft2d(tf.complex(a, b), fft_length=[5, 4]) ** 2,
                [re, im], order=2)
    check_grads(lambda a, b: tf.signal.irfft(tf.complex(a, b), fft_length=[4]) ** 2,
                [re, im], order=2)
    check_grads(lambda a, b: parts(tf.signal.ifft3d(tf.complex(a, b))),
                [image, image[::-1]], order=2)
    check_grads(lambda x: tf.abs(tf.signal.fftshift(tf.signal.fft(tf.complex(x, x * x)))),
                [re], order=2)
    wave = rng.normal(size=(2, 40))
    check_grads(lambda w: tf.signal.inverse_stft(tf.signal.stft(w, 12, 4), 12, 4) ** 2,
                [wave], order=2)
    check_grads(lambda f: tf.signal.overlap_and_add(f, 3) ** 2, [rng.normal(size=(2, 4, 7))],
                order=2)


def test_stft_of_long_frames_is_the_float64_transform_rounded():
    # the FFT primitive: float32 spectra of 1024-sample frames within float32 rounding of
    # the exact (float64) transform of the same float32 frames
    rng = np.random.default_rng(31)
    x = rng.normal(size=(2, 4096)).astype(np.float32)
    got = tf.signal.stft(x, 1024, 512).numpy()
    frames = np.stack([x[:, i * 512:i * 512 + 1024] for i in range(7)], axis=1)
    window = tf.signal.hann_window(1024).numpy().astype(np.float64)
    want = np.fft.rfft(frames.astype(np.float64) * window)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, want, atol=2e-6 * np.abs(want).max())
    y = tf.signal.inverse_stft(tf.signal.stft(x, 1024, 256), 1024, 256,
                               window_fn=tf.signal.inverse_stft_window_fn(256))
    np.testing.assert_allclose(y.numpy()[:, 768:-768], x[:, 768:y.shape[1] - 768], atol=1e-5)


def test_keras_weight_paths_follow_the_scopes_they_are_made_in():
    keras = tf.keras
    assert not hasattr(tf.Variable(1.0), "path")  # as tf.Variable: only Keras weights
    inner = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="d")], name="in")
    outer = keras.Sequential([keras.Input((3,)), inner], name="out")
    assert [w.path for w in outer.weights] == ["in/d/kernel", "in/d/bias"]
    layer = keras.layers.Dense(2, name="reused")
    a = keras.Input((2,))
    model = keras.Model(a, layer(layer(a)))
    assert [w.path for w in model.weights] == ["reused/kernel", "reused/bias"]
    cell_rnn = keras.layers.RNN([keras.layers.LSTMCell(2, name="c1"),
                                 keras.layers.GRUCell(2, name="c2")], name="rnn")
    cell_rnn(np.ones((1, 2, 3), np.float32))
    # Keras 3.15: rnn/stacked_rnn_cells/c1/kernel, ... (the stack's name is numbered)
    assert cell_rnn.cell.name.startswith("stacked_rnn_cells")
    assert cell_rnn.weights[0].path == f"rnn/{cell_rnn.cell.name}/c1/kernel"
    assert keras.layers.Dense(2, name="x").add_weight(shape=(1,), name="w").path == "x/w"
