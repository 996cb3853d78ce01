"""Keras 3's ``keras.ops`` results (values and dtypes) for the functions of
tapegrad/keras/ops/math_more.py, linalg_more.py, signal_more.py, pooling.py, einops.py,
image.py and ``associative_scan``, for tests/test_keras_ops_s14b.py, in the form of
benchmarks/keras_ops_more_reference.py (an expression over ``ops`` and ``np`` per case; an
exception's type is its result), and the names of Keras's ``keras.ops`` sub-namespaces.
Run in the bench environment:

    KERAS_BACKEND=tensorflow /work/venv-bench/bin/python -m benchmarks.keras_ops_s14b_reference
"""
import json
import os
import pathlib

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from benchmarks import keras_ops_more_reference as more  # noqa: E402
from benchmarks.keras_ops_more_reference import F, I, M  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_ops_s14b_reference.json")
S = "np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], 'float32')"
L = f"np.linalg.cholesky({S})"
SIG = "np.sin(np.arange(32, dtype='float32') * 0.4)"
SIG2 = "np.cos(np.arange(40, dtype='float32') * 0.3).reshape(2, 20)"
IMG = "np.sin(np.arange(2 * 7 * 5 * 3, dtype='float32')).reshape(2, 7, 5, 3)"
SEQ = "np.sin(np.arange(2 * 9 * 3, dtype='float32')).reshape(2, 9, 3)"
VOL = "np.sin(np.arange(1 * 5 * 4 * 6 * 2, dtype='float32')).reshape(1, 5, 4, 6, 2)"
NCHW = "(np.arange(2 * 2 * 5 * 4, dtype='float32').reshape(2, 2, 5, 4) / 10.0)"
T = "np.arange(24, dtype='float32').reshape(2, 3, 4)"
C = "ops.convert_to_tensor"
RGB = "np.abs(np.sin(np.arange(2 * 4 * 5 * 3, dtype='float32'))).reshape(2, 4, 5, 3)"
GREYS = ("np.array([[[[0.5, 0.5, 0.5], [0.0, 0.0, 0.0], [1.0, 1.0, 0.2], [0.3, 0.9, 0.9], "
         "[0.7, 0.2, 0.7]]]], 'float32')")
# (Keras's TensorFlow backend reads a NumPy input's shape as a tensor's in the
# channels_last adaptive pools, so those inputs are tensors)
CASES = [
    f"ops.angle({F})", f"ops.angle({I})", "ops.angle(np.array([1 + 1j, -2 + 0.5j, -3 - 0j], 'complex64'))",
    "ops.angle(np.array([1, -2], 'int64'))", f"ops.angle({F}.astype('float64'))",
    f"ops.real(ops.polar({F}, {F}[::-1]))", f"ops.imag(ops.polar({F}, {F}[::-1]))",
    f"ops.dtype(ops.polar({F}, {F}))", f"ops.dtype(ops.polar({F}.astype('float64'), {F}.astype('float64')))",
    "ops.kaiser(5, 2.0)", "ops.kaiser(6, 0.0)", "ops.kaiser(1, 3.0)", "ops.kaiser(7, 14.0)", "ops.kaiser(0, 1.0)",
    f"ops.nextafter({F}.astype('float64'), 10.0)", f"ops.nextafter({F}.astype('float64'), -np.inf)",
    f"ops.nextafter({F}, 10.0)", f"ops.nextafter({I}, {I}[::-1])", f"ops.nextafter({F}, {F})",
    "ops.nextafter(np.array([1.0, 0.0, 2.0 ** -1030, -4.0, np.inf], 'float64'), 0.5)",
    f"ops.cholesky_inverse({L})", f"ops.cholesky_inverse({L}.T, upper=True)",
    f"ops.cholesky_inverse({L}.astype('float64'))", f"ops.cholesky_inverse({M})",
    f"ops.cholesky_inverse({L}[0])", f"ops.cholesky_inverse(np.stack([{L}, {L} * 2.0]))",
    f"ops.lu_factor({S})", f"ops.lu_factor({M}[:, :3])", "ops.lu_factor(np.array([[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 1.0]], 'float32'))",
    f"ops.lu_factor({M})", f"ops.lu_factor(np.stack([{S}, {S}[::-1]]))",
    f"ops.lu_factor({S}.astype('float64'))",
    # stft / istft
    f"ops.stft({SIG}, 8, 4, 8)", f"ops.stft({SIG}, 6, 3, 8)", f"ops.stft({SIG2}, 8, 4, 16, window='hamming')",
    f"ops.stft({SIG}, 8, 4, 8, center=False)", f"ops.stft({SIG}, 8, 4, 8, window=None)",
    f"ops.stft({SIG}, 4, 2, 4, window=np.array([0.1, 0.5, 0.5, 0.1], 'float32'))",
    f"ops.stft({SIG}.astype('float64'), 8, 4, 8)", f"ops.stft({SIG}, 8, 4, 4)",
    f"ops.stft({SIG}, 8, 0, 8)", f"ops.stft({SIG}, 8, 4, 8, window='kaiser')",
    "ops.stft(np.arange(16, dtype='int32'), 8, 4, 8)", f"ops.stft({SIG}, 4, 2, 4, window=np.ones(3, 'float32'))",
    f"ops.istft(ops.stft({SIG}, 8, 4, 8), 8, 4, 8)", f"ops.istft(ops.stft({SIG}, 8, 4, 8), 8, 4, 8, length=20)",
    f"ops.istft(ops.stft({SIG2}, 6, 2, 8, window='hamming'), 6, 2, 8, window='hamming')",
    f"ops.istft(ops.stft({SIG}, 8, 4, 8, center=False), 8, 4, 8, center=False)",
    f"ops.istft(ops.stft({SIG}, 8, 4, 8, window=None), 8, 4, 8, window=None)",
    f"ops.istft(ops.stft({SIG}, 8, 2, 8), 8, 2, 8, length=30)",
    f"ops.istft(ops.stft({SIG}.astype('float64'), 8, 4, 8), 8, 4, 8)",
    # adaptive pools
    f"ops.adaptive_average_pool(ops.convert_to_tensor({IMG}), 3)", f"ops.adaptive_average_pool(ops.convert_to_tensor({IMG}), (4, 2))",
    f"ops.adaptive_max_pool(ops.convert_to_tensor({IMG}), 3)", f"ops.adaptive_max_pool(ops.convert_to_tensor({IMG}), (2, 5))",
    f"ops.adaptive_average_pool(ops.convert_to_tensor({SEQ}), 4)", f"ops.adaptive_max_pool(ops.convert_to_tensor({SEQ}), 4)",
    f"ops.adaptive_average_pool(ops.convert_to_tensor({SEQ}), 9)", f"ops.adaptive_max_pool(ops.convert_to_tensor({SEQ}), 2)",
    f"ops.adaptive_average_pool(ops.convert_to_tensor({IMG}), 3, data_format='channels_first')",
    f"ops.adaptive_max_pool(ops.convert_to_tensor({IMG}), (2, 2), data_format='channels_first')",
    f"ops.adaptive_average_pool(ops.convert_to_tensor({VOL}), (2, 3, 4))", f"ops.adaptive_max_pool(ops.convert_to_tensor({VOL}), 2)",
    f"ops.adaptive_average_pool(ops.convert_to_tensor({IMG}), 9)", f"ops.adaptive_average_pool({F}, 2)",
    # unfold / fold
    f"ops.unfold({NCHW}, 2)", f"ops.unfold({NCHW}, (2, 3), stride=2)", f"ops.unfold({NCHW}, 3, padding=1)",
    f"ops.unfold({NCHW}, 2, dilation=2)", f"ops.unfold({NCHW}, (3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1))",
    f"ops.unfold({NCHW}[0], 2)",
    f"ops.fold(ops.unfold({NCHW}, 2), (5, 4), 2)", f"ops.fold(ops.unfold({NCHW}, 3, padding=1), (5, 4), 3, padding=1)",
    f"ops.fold(ops.unfold({NCHW}, (2, 3), stride=2), (5, 4), (2, 3), stride=2)",
    f"ops.fold(ops.unfold({NCHW}, 2, dilation=2), (5, 4), 2, dilation=2)",
    "ops.fold(np.arange(2 * 8 * 6, dtype='float32').reshape(2, 8, 6), (3, 4), 2)",
    f"ops.fold({NCHW}, (5, 4), 2)",
    # rearrange
    f"ops.rearrange({T}, 'a b c -> c a b')", f"ops.rearrange({T}, 'a b c -> a (b c)')",
    f"ops.rearrange({T}, 'a b c -> (a b) c')", f"ops.rearrange({T}, 'a (b1 b2) c -> a b1 b2 c', b1=3)",
    f"ops.rearrange({T}, 'a b (c1 c2) -> (c2 a) b c1', c2=2)", f"ops.rearrange({T}, 'a b c -> (c b a)')",
    f"ops.rearrange({T}, 'a b c->c b a')", f"ops.rearrange({I}, 'x -> x')",
    f"ops.rearrange({T}, 'a b c -> a b')",
    # associative scan
    f"ops.associative_scan(lambda a, b: a + b, {F})", f"ops.associative_scan(lambda a, b: a * b, {M}, axis=1)",
    f"ops.associative_scan(ops.maximum, {F}, reverse=True)", f"ops.associative_scan(lambda a, b: a + b, {M}, reverse=True, axis=1)",
    f"ops.associative_scan(lambda a, b: (a[0] + b[0], a[1] * b[1]), ({F}, {F} + 1.0))",
    f"ops.associative_scan(lambda a, b: a + b, {I})",
    f"ops.associative_scan(lambda a, b: {{'x': a['x'] + b['x']}}, {{'x': {M}}})['x']",
    "ops.associative_scan(lambda a, b: a + b, np.arange(7, dtype='float32'))",
    f"ops.associative_scan(lambda a, b: (a[0] + b[0], a[1] + b[1]), ({F}, {F}[:3]))",
    # get_item, jvp (Keras's ForwardAccumulator takes tensors, not NumPy arrays)
    f"ops.get_item({M}, 1)", f"ops.get_item({M}, (slice(None), 2))", f"ops.get_item({M}, (0, -1))",
    f"ops.get_item({F}, slice(1, 3))",
    f"ops.jvp(lambda x: ops.sin(x) * x, ({C}({F}),), ({C}({F}[::-1]),))",
    f"ops.jvp(lambda x, y: (x * y, ops.sum(x)), ({C}({F}), {C}({F} + 1.0)), ({C}({F}[::-1]), "
    f"{C}({F})))",
    f"ops.jvp(lambda x: (x * 2.0, ops.max(x)), ({C}({F}),), ({C}({F}),), has_aux=True)",
    f"ops.jvp(lambda x, y: x * 2.0, ({C}({F}), {C}({F})), ({C}({F}), {C}({F})))",
    f"ops.jvp(lambda x: ops.sum(x), ({C}(np.arange(3)),), ({C}(np.ones(3, 'int32')),))",
    # keras.ops.image
    f"ops.image.rgb_to_grayscale({RGB})", f"ops.image.rgb_to_grayscale({RGB}[0])",
    f"ops.image.rgb_to_grayscale(np.transpose({RGB}, (0, 3, 1, 2)), data_format='channels_first')",
    f"ops.image.rgb_to_grayscale(({RGB} * 255).astype('uint8'))",
    f"ops.image.rgb_to_grayscale(({RGB} * 255).astype('int32'))",
    f"ops.image.rgb_to_grayscale({RGB}[..., :1])", f"ops.image.rgb_to_grayscale({RGB}[..., :2])",
    f"ops.image.rgb_to_grayscale({RGB}[0, 0])",
    f"ops.image.rgb_to_hsv({RGB})", f"ops.image.rgb_to_hsv({GREYS})",
    f"ops.image.rgb_to_hsv(np.transpose({RGB}[0], (2, 0, 1)), data_format='channels_first')",
    f"ops.image.rgb_to_hsv({RGB}.astype('float64'))", f"ops.image.rgb_to_hsv(({RGB} * 255).astype('int32'))",
    f"ops.image.hsv_to_rgb({RGB})", f"ops.image.hsv_to_rgb(ops.image.rgb_to_hsv({RGB}))",
    f"ops.image.hsv_to_rgb(np.transpose({RGB}, (0, 3, 1, 2)), data_format='channels_first')",
    f"ops.image.hsv_to_rgb({RGB}[0, 0])",
    f"ops.image.sobel_edges({RGB})",
    f"ops.image.sobel_edges(np.transpose({RGB}, (0, 3, 1, 2)), data_format='channels_first')",
]
NAMESPACES = ("numpy", "linalg", "nn", "image", "math", "core")


def run(ops, np, cases=CASES):
    return more.run(ops, np, cases)


def main():
    import keras

    more.write(OUT, CASES)
    data = json.loads(OUT.read_text())
    # each namespace's public names; None where keras.ops has no such namespace
    data["namespaces"] = {n: sorted(a for a in dir(getattr(keras.ops, n)) if not a.startswith("_"))
                          if hasattr(keras.ops, n) else None for n in NAMESPACES}
    OUT.write_text(json.dumps(data) + "\n")


if __name__ == "__main__":
    main()
