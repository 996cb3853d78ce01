"""keras.ops' functions of tapegrad/keras/ops/spectral.py give Keras 3.15's values and dtypes
(tests/data/keras_ops_s13_reference.json, written by benchmarks/keras_ops_s13_reference.py
with the TensorFlow backend) and errors; derivatives by central differences in float64."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf

from benchmarks.keras_ops_s13_reference import run
from tapegrad.keras import ops
from tapegrad.testing import check_grads
from test_keras_ops_more import _same

REF = json.loads((pathlib.Path(__file__).parent / "data" / "keras_ops_s13_reference.json")
                 .read_text())["cases"]
GOT = run(ops, np, sorted(REF))


@pytest.mark.parametrize("case", sorted(REF))
def test_keras_ops_give_keras_values_and_dtypes(case):
    assert _same(GOT[case], REF[case]), (GOT[case], REF[case])


X = np.array([-1.7, -0.4, 0.3, 0.8, 2.2])
A = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]])
SMOOTH = {
    "fft": (lambda r, i: ops.fft((r, i)), [X, X[::-1]]),
    "fft_imag": (lambda r, i: ops.fft((r, i))[1], [X, X[::-1]]),
    "fft2": (lambda r, i: ops.fft2((r, i)), [A, A[::-1]]),
    "ifft2": (lambda r, i: ops.ifft2((r, i))[1], [A, A[::-1]]),
    "rfft": (lambda x: ops.rfft(x), [X]), "rfft_len": (lambda x: ops.rfft(x, 8)[1], [X]),
    "irfft": (lambda r, i: ops.irfft((r, i), 4), [X[:3], X[1:4]]),
    "erfinv": (ops.erfinv, [X / 3.0]), "i0": (ops.i0, [X]), "fabs": (ops.fabs, [X]),
    "fmax": (ops.fmax, [X, X[::-1] + 0.1]), "fmin": (ops.fmin, [X, X[::-1] + 0.1]),
    "ldexp": (lambda x: ops.ldexp(x, np.array([1, -2, 0, 3, 2])), [X]),
    "nancumsum": (ops.nancumsum, [X]), "nancumprod": (ops.nancumprod, [X]),
    "segment_min": (lambda x: ops.segment_min(x, np.array([0, 0, 1, 1, 2])), [X]),
    "segment_prod": (lambda x: ops.segment_prod(x, np.array([0, 0, 1, 1, 2])), [X]),
    "cdist": (ops.cdist, [A, A[:2] + 0.3]),
    "extract_sequences": (lambda x: ops.extract_sequences(x, 2, 1), [X]),
    "qr_r": (lambda a: ops.qr(a)[1], [A]), "qr_q": (lambda a: ops.qr(a)[0], [A]),
    "svd_s": (lambda a: ops.svd(a, compute_uv=False), [A]),
    "binary_crossentropy": (lambda p: ops.binary_crossentropy(np.array([0.2, 0.7, 1.0]), p),
                            [np.array([0.3, 0.6, 0.8])]),
    "binary_crossentropy_logits": (
        lambda z: ops.binary_crossentropy(np.array([0.2, 0.7, 1.0]), z, from_logits=True),
        [X[:3]]),
    "categorical_crossentropy": (lambda p: ops.categorical_crossentropy(A[:, :1] * 0 + 0.5, p),
                                 [np.abs(A[:, :1]) + 0.2]),
    "categorical_crossentropy_logits": (
        lambda z: ops.categorical_crossentropy(np.full((3, 2), 0.5), z, from_logits=True), [A]),
    "sparse_categorical_crossentropy": (
        lambda p: ops.sparse_categorical_crossentropy(np.array([1, 0, 1]), p),
        [np.abs(A) / 5.0 + 0.05]),
    "sparse_categorical_crossentropy_logits": (
        lambda z: ops.sparse_categorical_crossentropy(np.array([1, 0, 1]), z, from_logits=True),
        [A]),
    "psnr": (lambda a, b: ops.psnr(a, b, 2.0), [X, X[::-1]]),
    "sparsemax": (lambda z: ops.sparsemax(z * 0.4), [X]),
    "depth_to_space": (lambda z: ops.depth_to_space(z, 2), [np.arange(24.0).reshape(1, 1, 3, 8)]),
    "space_to_depth": (lambda z: ops.space_to_depth(z, 2, "channels_first"),
                       [np.arange(24.0).reshape(1, 3, 2, 4)]),
    "rms_normalization": (lambda z, s: ops.rms_normalization(z, s), [A, A[0]]),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_derivatives_by_central_differences(name):
    f, args = SMOOTH[name]
    check_grads(f, args, order=2)


def test_svd_factors_rebuild_the_matrix_and_differentiate():
    u, s, vh = ops.svd(A, full_matrices=False)
    np.testing.assert_allclose((u * s[None]) @ vh, A, atol=1e-12)
    assert [tuple(v.shape) for v in ops.svd(A)] == [(3, 3), (2,), (2, 2)]
    # u diag(s) vh differentiates as the identity, through the factors' derivatives
    check_grads(lambda a: ops.matmul(ops.svd(a, full_matrices=False)[0]
                                     * ops.svd(a, full_matrices=False)[1][None],
                                     ops.svd(a, full_matrices=False)[2]), [A], order=1)


def test_in_a_tf_function_as_eagerly():
    f = tf.function(lambda r, i: ops.fft2((r, i))[0] + ops.nancumsum(r, axis=1) + ops.fmax(r, i))
    r, i = np.float32(A), np.float32(A[::-1])
    np.testing.assert_allclose(f(r, i), ops.fft2((r, i))[0] + ops.nancumsum(r, axis=1)
                               + ops.fmax(r, i), rtol=1e-6)


@pytest.mark.parametrize("call, error", [
    (lambda: ops.fft(X), ValueError), (lambda: ops.irfft([X]), ValueError),
    (lambda: ops.qr(A, mode="r"), ValueError), (lambda: ops.fabs(np.complex64(1j)), TypeError),
    (lambda: ops.ldexp(X, X), TypeError), (lambda: ops.cdist(X, X), ValueError),
    (lambda: ops.segment_min(X, [0, 0, 1, 1, 2], num_segments=3, sorted=True), ValueError),
    (lambda: ops.binary_crossentropy(X, X[:2]), ValueError),
    (lambda: ops.sparse_categorical_crossentropy([0, 1, 0], A, axis=0), ValueError),
    (lambda: ops.psnr(X, X[:2], 1.0), ValueError),
    (lambda: ops.depth_to_space(np.ones((1, 2, 2, 4)), 1), ValueError),
    (lambda: ops.space_to_depth(np.ones((1, 3, 2, 4)), 2), tf.errors.InvalidArgumentError),
])
def test_bad_input_gets_keras_error(call, error):
    with pytest.raises(error):
        call()
