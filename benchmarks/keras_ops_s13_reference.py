"""Keras 3's ``keras.ops`` results (values and dtypes) for the functions of
tapegrad/keras/ops/spectral.py, for tests/test_keras_ops_s13.py, in the form of
benchmarks/keras_ops_more_reference.py (an expression over ``ops`` and ``np`` per case; an
exception's type is its result). Run in the bench environment:

    KERAS_BACKEND=tensorflow /work/venv-bench/bin/python -m benchmarks.keras_ops_s13_reference
"""
import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from benchmarks import keras_ops_more_reference as more  # noqa: E402
from benchmarks.keras_ops_more_reference import F, I, M, N  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_ops_s13_reference.json")
Z = "np.array([0.5, -1.0, 2.0, 0.0], 'float32')"
Q = "np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]], 'float32')"
P = "np.array([0.1, 0.6, 0.9, 0.3], 'float32')"
T = "np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]], 'float32')"
P = "np.array([0.1, 0.6, 0.9, 0.3], 'float32')"
T = "np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]], 'float32')"
S = "np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], 'float32')"
CASES = [
    # FFTs on (real, imag) pairs
    f"ops.fft(({Z}, {Z}[::-1]))", f"ops.fft(({M}, {M} * 0.5))", f"ops.fft2(({M}, {M}[::-1]))",
    f"ops.ifft2(({M}, {M}[::-1]))", f"ops.rfft({Z})", f"ops.rfft({M})", f"ops.rfft({Z}, 6)",
    f"ops.rfft({Z}, 3)", f"ops.irfft(({Z}[:3], {Z}[1:]))", f"ops.irfft(({Z}[:3], {Z}[1:]), 4)",
    f"ops.irfft(({M}, {M}), 5)", f"ops.fft({Z})", f"ops.fft(({Z}, {Z}[:3]))",
    "ops.fft((np.array([1, 2], 'int32'), np.array([0, 0], 'int32')))",
    # decompositions (signs of QR and SVD factors are LAPACK's in both)
    f"ops.qr({Q})", f"ops.qr({Q}, mode='complete')", f"ops.qr({S})", f"ops.qr({Q}, mode='r')",
    f"ops.svd({Q}, compute_uv=False)", f"ops.svd({S}, compute_uv=False)",
    # elementwise
    "ops.erfinv(np.array([-0.9, -0.3, 0.0, 0.5, 0.99], 'float32'))", f"ops.erfinv({I})",
    "ops.erfinv(np.array([0.25, -0.5], 'float16'))", f"ops.i0({F})", f"ops.i0({I})",
    "ops.i0(np.array([1, 2], 'int64'))", "ops.i0(np.array([0.5], 'float64'))",
    f"ops.fabs({F})", f"ops.fabs({I})", "ops.fabs(np.array([True, False]))",
    f"ops.fmax({N}, {N}[::-1])", f"ops.fmin({N}, {N}[::-1])", f"ops.fmax({I}, 2)",
    f"ops.fmin({I}, 2.5)", f"ops.fmax({F}, np.nan)", f"ops.fmin({M}, {F}[:4])",
    f"ops.ldexp({F}, np.array(2, 'int32'))", f"ops.ldexp({I}, {I})",
    "ops.ldexp(np.array([np.inf, 0.0, 3.0], 'float32'), np.array([3, 3, -2], 'int32'))",
    f"ops.ldexp({F}, {F})",
    # NaN-aware
    f"ops.nanargmax({N})", f"ops.nanargmin({N})", f"ops.nanargmax({I})",
    "ops.nanargmax(np.array([[np.nan, 1.0, 3.0], [np.nan, np.nan, np.nan]], 'float32'), axis=1)",
    "ops.nanargmin(np.array([[np.nan, 1.0], [np.nan, np.nan]], 'float32'), axis=1, keepdims=True)",
    f"ops.nanargmin({M}, axis=0)",
    f"ops.nancumsum({N})", f"ops.nancumprod({N})", f"ops.nancumsum({M}, axis=1)",
    f"ops.nancumprod({I})", f"ops.nancumsum({I}, dtype='float32')",
    "ops.dsplit(np.arange(12, dtype='float32').reshape(1, 2, 6), 3)",
    "ops.dsplit(np.arange(12, dtype='float32').reshape(1, 2, 6), [1, 4])",
    # segments, distances, frames, top-k
    f"ops.segment_min({F}, np.array([0, 0, 1, 1, 1, 3]))",
    f"ops.segment_prod({F}, np.array([0, 0, 1, 1, 1, 3]))",
    f"ops.segment_min({F}, np.array([0, 0, 1, 1, 2, 2]), sorted=True)",
    f"ops.segment_prod({I}, np.array([1, 0, 1, 0, 2]), num_segments=4)",
    f"ops.segment_min({M}, np.array([1, 0, 1]))",
    f"ops.segment_min({F}, np.array([0, 0, 1, 1, 2, 2]), num_segments=3, sorted=True)",
    f"ops.cdist({Q}, {Q}[:2])", f"ops.cdist({M}[None], {M}[None, :2])", f"ops.cdist({F}, {F})",
    f"ops.cdist({Q}, {M})",
    f"ops.extract_sequences({F}, 2, 2)", f"ops.extract_sequences({M}, 3, 1)",
    f"ops.extract_sequences({I}, 2, 3)",
    f"ops.in_top_k(np.array([0, 2, 3]), {M}, 2)", f"ops.in_top_k(np.array([3, 0, 1]), {M}, 1)",
    # cross-entropies, multi-hot, PSNR
    f"ops.binary_crossentropy({P}, {P}[::-1])", f"ops.binary_crossentropy({P}, {F}[:4], True)",
    "ops.binary_crossentropy(np.array([0.0, 1.0], 'float32'), np.array([0.0, 1.0], 'float32'))",
    f"ops.binary_crossentropy({P}, {P}[:3])",
    f"ops.categorical_crossentropy({T}, {T}[::-1])",
    f"ops.categorical_crossentropy({T}, {M}[:, :3], True)",
    f"ops.categorical_crossentropy({T}, {M}[:, :3] * 0.1 + 1.0, True, axis=0)",
    f"ops.categorical_crossentropy({T}, {T}[:2])",
    f"ops.sparse_categorical_crossentropy(np.array([2, 0, 1]), {T}[::-1])",
    f"ops.sparse_categorical_crossentropy(np.array([[2], [0], [1]]), {M}[:, :3], True)",
    f"ops.sparse_categorical_crossentropy(np.array([2, 0]), {T})",
    f"ops.sparse_categorical_crossentropy(np.array([2, 0, 1]), {T}, axis=0)",
    "ops.multi_hot(np.array([[0, 2], [1, 1]]), 3)", "ops.multi_hot(np.array([1, 3]), 4)",
    "ops.multi_hot(np.array([[0, 2]]), 3, dtype='int32')",
    "ops.multi_hot(np.array([[0, 2]]), 3, dtype='bool')",
    f"ops.psnr({P}, {P}[::-1], 1.0)", f"ops.psnr({M}, {M} * 0.9, 6.0)",
    f"ops.psnr({P}, {Z}[:3], 1.0)",
    f"ops.sparsemax({F})", f"ops.sparsemax({M} * 0.3)", f"ops.sparsemax({M} * 0.3, axis=0)",
    "ops.sparsemax(np.array([0.1, 0.2], 'float64'))",
    "ops.depth_to_space(np.arange(48, dtype='float32').reshape(1, 2, 2, 12), 2)",
    "ops.depth_to_space(np.arange(48, dtype='float32').reshape(1, 12, 2, 2), 2, 'channels_first')",
    "ops.depth_to_space(np.arange(40, dtype='float32').reshape(1, 2, 2, 10), 2)",
    "ops.depth_to_space(np.arange(48, dtype='float32').reshape(1, 2, 2, 12), 1)",
    "ops.space_to_depth(np.arange(48, dtype='float32').reshape(1, 4, 4, 3), 2)",
    "ops.space_to_depth(np.arange(96, dtype='int32').reshape(2, 3, 4, 4), 2, 'channels_first')",
    "ops.space_to_depth(np.arange(36, dtype='float32').reshape(1, 3, 4, 3), 2)",
    f"ops.rms_normalization({M})", f"ops.rms_normalization({M}, axis=0)",
    f"ops.rms_normalization({M}, scale={M}[0], epsilon=0.1)",
    f"ops.rms_normalization({M}, axis=(0, 1))",
    "ops.rms_normalization(np.array([1.0, 2.0], 'float16'))",
    "ops.rms_normalization(np.array([1.0, 2.0], 'float64'))",
    f"ops.nonzero({I})", f"ops.nonzero({M})", "ops.nonzero(np.array([True, False, True]))",
]


def run(ops, np, cases=CASES):
    return more.run(ops, np, cases)


def main():
    more.write(OUT, CASES)


if __name__ == "__main__":
    main()
