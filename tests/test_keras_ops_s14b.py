"""keras.ops' angle, polar, kaiser, nextafter, cholesky_inverse, lu_factor, stft, istft, the
adaptive pools, unfold, fold, rearrange, associative_scan, get_item and jvp give Keras 3.15's values and
dtypes (tests/data/keras_ops_s14b_reference.json, written by
benchmarks/keras_ops_s14b_reference.py with the TensorFlow backend) and errors; derivatives
by central differences in float64; the keras.ops.numpy / linalg / nn namespaces hold Keras's
names, keras.ops.image its colour conversions and Sobel edges."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf

from benchmarks.keras_ops_s14b_reference import run
from tapegrad.keras import ops
from tapegrad.keras.ops.catalog import KERAS_NAMES
from tapegrad.testing import check_grads
from test_keras_ops_more import _same

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "keras_ops_s14b_reference.json")
                  .read_text())
REF = DATA["cases"]
GOT = run(ops, np, sorted(REF))


@pytest.mark.parametrize("case", sorted(REF))
def test_keras_ops_give_keras_values_and_dtypes(case):
    assert _same(GOT[case], REF[case]), (GOT[case], REF[case])


RNG = np.random.default_rng(141)
X = np.array([-1.7, -0.4, 0.3, 0.8, 2.2])
S = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
L = np.linalg.cholesky(S)
SIG = np.sin(np.arange(16) * 0.7) + 0.1 * np.arange(16)
IMG = RNG.normal(size=(1, 5, 4, 2))
NCHW = RNG.normal(size=(1, 2, 4, 3))
SMOOTH = {
    "angle": (ops.angle, [X]),
    "polar_real": (lambda r, t: ops.real(ops.polar(r, t)), [X, X[::-1]]),
    "polar_imag": (lambda r, t: ops.imag(ops.polar(r, t)), [X, X[::-1]]),
    "cholesky_inverse": (ops.cholesky_inverse, [L]),
    "cholesky_inverse_upper": (lambda u: ops.cholesky_inverse(u, upper=True), [L.T]),
    "lu_factor": (lambda a: ops.lu_factor(a)[0], [np.array([[0.5, 2.0, 1.0], [1.0, 1.0, 0.3],
                                                              [3.0, 0.2, 1.0]])]),
    "stft_real": (lambda x: ops.stft(x, 6, 3, 8)[0], [SIG]),
    "stft_imag": (lambda x: ops.stft(x, 6, 3, 8, window="hamming", center=False)[1], [SIG]),
    "istft": (lambda r, i: ops.istft((r, i), 8, 4, 8), [np.asarray(v) for v in
                                                       ops.stft(SIG, 8, 4, 8)]),
    "adaptive_average_pool": (lambda x: ops.adaptive_average_pool(x, (2, 3)), [IMG]),
    "adaptive_max_pool": (lambda x: ops.adaptive_max_pool(x, 3, data_format="channels_first"),
                          [IMG]),
    "unfold": (lambda x: ops.unfold(x, 2, padding=1, stride=(1, 2)), [NCHW]),
    "fold": (lambda x: ops.fold(x, (4, 3), 2, padding=1), [RNG.normal(size=(1, 8, 20))]),
    "rearrange": (lambda x: ops.rearrange(x, "a (b c) d -> (d a) c b", c=2), [NCHW[0]]),
    "associative_scan": (lambda x: ops.associative_scan(lambda a, b: a * b + b, x), [X / 2.0]),
    "associative_scan_pairs": (
        lambda x, y: ops.associative_scan(lambda a, b: (a[0] * b[0], a[1] * b[0] + b[1]),
                                          (x, y), reverse=True)[1], [X / 2.0, X[::-1]]),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_derivatives_by_central_differences(name):
    f, args = SMOOTH[name]
    check_grads(f, args, order=2)


def test_inverses_and_factors_rebuild_their_matrices():
    np.testing.assert_allclose(ops.cholesky_inverse(L).numpy() @ S, np.eye(3), atol=1e-12)
    a = RNG.normal(size=(4, 4))
    lu, p = (t.numpy() for t in ops.lu_factor(a))
    lower, upper = np.tril(lu, -1) + np.eye(4), np.triu(lu)
    np.testing.assert_allclose(a, (lower @ upper)[p], atol=1e-12)
    x = RNG.normal(size=(2, 2, 5, 4))
    np.testing.assert_allclose(ops.fold(ops.unfold(x, 2, stride=2), (5, 4), 2, stride=2)
                               .numpy()[..., :4, :], x[..., :4, :])
    # Hann windows 2 apart overlap fully away from the two ends
    np.testing.assert_allclose(ops.istft(ops.stft(SIG, 8, 2, 8), 8, 2, 8, length=16)[2:-2],
                               SIG[2:-2], atol=1e-12)


def test_nextafter_steps_one_float64():
    x = np.array([-2.5, 0.0, 1.0, 2.0 ** -1030, 4.0, -np.inf, 5e-324, 3.0])
    for toward in (10.0, -np.inf, 0.0, 3.0):
        np.testing.assert_array_equal(ops.nextafter(x, toward).numpy(), np.nextafter(x, toward))


def test_in_a_tf_function_as_eagerly():
    def f(x, img):
        r, i = ops.stft(x, 6, 3, 8)
        return (ops.istft((r, i), 6, 3, 8), ops.adaptive_max_pool(img, 2),
                ops.fold(ops.unfold(img, 2), (5, 4), 2),
                ops.associative_scan(lambda a, b: a + b, x), ops.lu_factor(img[0, 0, :4])[0])
    x, img = np.float32(SIG), np.float32(RNG.normal(size=(1, 2, 5, 4)))
    for got, want in zip(tf.function(f)(x, img), f(x, img)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["numpy", "linalg", "nn", "image"])
def test_namespaces_hold_kerass_names_that_keras_ops_has(name):
    assert list(KERAS_NAMES[name]) == DATA["namespaces"][name]
    module = getattr(ops, name)
    if name == "image":  # its functions are its own, as in Keras (not in keras.ops)
        assert set(module.__all__) < set(KERAS_NAMES[name])
        assert not any(hasattr(ops, n) for n in KERAS_NAMES[name])
        return
    present = [n for n in KERAS_NAMES[name] if hasattr(ops, n)]
    assert module.__all__ == present and len(present) > 0.8 * len(KERAS_NAMES[name])
    assert all(getattr(module, n) is getattr(ops, n) for n in present)


def test_keras_style_namespace_imports_work():
    from tapegrad.keras.ops import linalg, nn
    from tapegrad.keras.ops import numpy as knp
    x = knp.arange(6.0)
    np.testing.assert_allclose(nn.softmax(x), ops.softmax(x))
    np.testing.assert_allclose(linalg.inv(knp.eye(2) * 2.0), np.eye(2) / 2.0)
    assert float(knp.sum(x)) == 15.0 and knp.histogram is ops.histogram


@pytest.mark.parametrize("call, error", [
    (lambda: ops.kaiser(0, 1.0), tf.errors.InvalidArgumentError),
    (lambda: ops.cholesky_inverse(X), ValueError), (lambda: ops.cholesky_inverse(S[:2]), ValueError),
    (lambda: ops.lu_factor(S[:2]), ValueError), (lambda: ops.lu_factor(np.stack([S, S])),
                                                 tf.errors.InvalidArgumentError),
    (lambda: ops.stft(SIG, 8, 0, 8), ValueError), (lambda: ops.stft(SIG, 8, 4, 4), ValueError),
    (lambda: ops.stft(SIG, 8, 4, 8, window="kaiser"), ValueError),
    (lambda: ops.stft(np.arange(16), 8, 4, 8), TypeError),
    (lambda: ops.stft(SIG, 4, 2, 4, window=np.ones(3)), ValueError),
    (lambda: ops.istft(SIG, 8, 4, 8), ValueError),
    (lambda: ops.adaptive_average_pool(X, 2), ValueError),
    (lambda: ops.unfold(NCHW[0], 2), ValueError), (lambda: ops.fold(NCHW, (4, 3), 2), ValueError),
    (lambda: ops.fold(np.ones((1, 8, 7)), (4, 3), 2), tf.errors.InvalidArgumentError),
    (lambda: ops.rearrange(NCHW, "a b c d -> a b"), tf.errors.InvalidArgumentError),
    (lambda: ops.rearrange(NCHW, "a b c -> a b c"), tf.errors.InvalidArgumentError),
    (lambda: ops.associative_scan(lambda a, b: a, (X, X[:2])), ValueError),
    (lambda: ops.associative_scan(None, X), TypeError),
])
def test_bad_input_gets_keras_error(call, error):
    with pytest.raises(error):
        call()


RGB = np.abs(np.sin(np.arange(2 * 3 * 4 * 3) * 0.9 + 0.2)).reshape(2, 3, 4, 3)
IMAGE_SMOOTH = {
    "rgb_to_grayscale": (ops.image.rgb_to_grayscale, [RGB]),
    "rgb_to_hsv": (ops.image.rgb_to_hsv, [RGB]),
    "hsv_to_rgb": (lambda x: ops.image.hsv_to_rgb(x, data_format="channels_first"),
                   [np.transpose(RGB, (0, 3, 1, 2)) * 0.9 + 0.02]),
    "sobel_edges": (ops.image.sobel_edges, [RGB]),
}


@pytest.mark.parametrize("name", sorted(IMAGE_SMOOTH))
def test_image_derivatives_by_central_differences(name):
    f, args = IMAGE_SMOOTH[name]
    check_grads(f, args, order=2)


def test_hsv_round_trips():
    np.testing.assert_allclose(ops.image.hsv_to_rgb(ops.image.rgb_to_hsv(RGB)), RGB, atol=1e-12)


@pytest.mark.parametrize("call", [
    lambda: ops.image.rgb_to_grayscale(RGB[0, 0]), lambda: ops.image.rgb_to_grayscale(RGB[..., :2]),
    lambda: ops.image.rgb_to_hsv(np.ones((2, 2, 3), np.int32)),
    lambda: ops.image.hsv_to_rgb(RGB[0, 0]),
])
def test_image_bad_input_gets_kerass_value_error(call):
    with pytest.raises(ValueError):
        call()
