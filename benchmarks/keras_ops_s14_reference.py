"""Keras 3's ``keras.ops`` results (values and dtypes) for the functions of
tapegrad/keras/ops/attention.py, statistics.py and signal_extra.py, for
tests/test_keras_ops_s14.py, in the form of benchmarks/keras_ops_more_reference.py (an
expression over ``ops`` and ``np`` per case; an exception's type is its result). Run in the
bench environment:

    KERAS_BACKEND=tensorflow /work/venv-bench/bin/python -m benchmarks.keras_ops_s14_reference
"""
import json
import os
import pathlib
import subprocess
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")

from benchmarks import keras_ops_more_reference as more  # noqa: E402
from benchmarks.keras_ops_more_reference import F, I, M  # noqa: E402

OUT = (pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
       / "keras_ops_s14_reference.json")
# attention's query (B, T, N, H) = (2, 3, 2, 4), key and value (B, S, N, H) = (2, 5, 2, 4)
QRY = "np.sin(np.arange(48, dtype='float32')).reshape(2, 3, 2, 4)"
KEY = "np.cos(np.arange(80, dtype='float32') * 0.7).reshape(2, 5, 2, 4)"
VAL = "(np.arange(80, dtype='float32').reshape(2, 5, 2, 4) / 40.0 - 1.0)"
Q4 = "np.sin(np.arange(96, dtype='float32') * 0.3).reshape(2, 3, 4, 4)"
MASK = "(np.arange(30).reshape(1, 1, 3, 10)[..., :5] % 3 != 1)"
BIAS = "(np.arange(15, dtype='float32').reshape(1, 1, 3, 5) * 0.1)"
V4 = "np.array([0.5, -1.0, 2.0, 0.25], 'float32')"
W4 = "np.array([0.5, 1.0, 2.0, 4.0], 'float32')"
U = "np.array([3, 1, 3, 2, 1, 7, 3], 'int32')"
R = "np.array([[1, 2], [0, 5], [1, 2], [0, 5], [1, 1]], 'int32')"
NM = ("np.array([[1.0, np.nan, 3.0, 2.0], [np.nan, np.nan, np.nan, np.nan], "
      "[4.0, 5.0, np.nan, 0.0]], 'float32')")
S = "np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], 'float32')"
CASES = [
    # dot_product_attention
    f"ops.dot_product_attention({QRY}, {KEY}, {VAL})",
    f"ops.dot_product_attention({QRY}, {KEY}, {VAL}, scale=0.5)",
    f"ops.dot_product_attention({QRY}, {KEY}, {VAL}, bias={BIAS})",
    f"ops.dot_product_attention({QRY}, {KEY}, {VAL}, mask={MASK})",
    f"ops.dot_product_attention({QRY}, {KEY}, {VAL}, bias={BIAS}, mask={MASK}, scale=0.3)",
    f"ops.dot_product_attention({QRY}, {KEY}[:, :3], {VAL}[:, :3], is_causal=True)",
    f"ops.dot_product_attention({QRY}, {KEY}, {VAL}, is_causal=True)",
    f"ops.dot_product_attention({QRY}, {KEY}, {VAL}, mask={MASK}, is_causal=True)",
    f"ops.dot_product_attention({Q4}, {KEY}, {VAL})",
    f"ops.dot_product_attention({Q4}, {KEY}[:, :, :1], {VAL}[:, :, :1])",
    f"ops.dot_product_attention({QRY}.astype('float64'), {KEY}.astype('float64'), "
    f"{VAL}.astype('float64'), bias={BIAS}.astype('float64'))",
    f"ops.dot_product_attention({QRY}.astype('float16'), {KEY}.astype('float16'), "
    f"{VAL}.astype('float16'), is_causal=True)",
    f"ops.dot_product_attention({QRY}, {KEY}.astype('float64'), {VAL})",
    f"ops.dot_product_attention({QRY}[0], {KEY}[0], {VAL}[0])",
    f"ops.dot_product_attention({QRY}, {KEY}, {VAL}, flash_attention=True)",
    f"ops.dot_product_attention({QRY}, {KEY}, {VAL}, attn_logits_soft_cap=2.0)",
    # batch and layer normalization
    f"ops.batch_normalization({M}, {V4}, {W4}, -1)",
    f"ops.batch_normalization({M}, {V4}, {W4}, axis=-1, offset={V4}, scale={W4}, epsilon=0.1)",
    f"ops.batch_normalization({M}, {V4}[:3], {W4}[:3], axis=0, offset={V4}[:3])",
    f"ops.batch_normalization({M}, {V4}[:3], {W4}[:3], axis=0, scale={W4}[:3])",
    f"ops.batch_normalization({M}.astype('float64'), {V4}.astype('float64'), "
    f"{W4}.astype('float64'), -1)",
    f"ops.batch_normalization({M}[None], {V4}[:3], {W4}[:3], 1)",
    f"ops.layer_normalization({M})", f"ops.layer_normalization({M}, axis=0)",
    f"ops.layer_normalization({M}, {W4}, {V4})",
    f"ops.layer_normalization({M}, {W4}[:3], {V4}[:3], axis=0, epsilon=0.5)",
    f"ops.layer_normalization({M}, axis=(0, 1))", f"ops.layer_normalization({M}, axis=[1, 0])",
    f"ops.layer_normalization({M}, {M}, axis=(0, 1))",
    f"ops.layer_normalization({M}.astype('float16'))",
    f"ops.layer_normalization({M}.astype('float64'), beta={V4}.astype('float64'))",
    f"ops.layer_normalization({I})", f"ops.layer_normalization({F}, rms_scaling=True)",
    f"ops.layer_normalization({M}, {W4}, rms_scaling=True)",
    # control flow and vectorize
    f"ops.switch(1, [lambda x: x + 1.0, lambda x: x * 2.0], {M})",
    f"ops.switch(0, [lambda x, y: x + y, lambda x, y: x - y], {M}, {M}[0])",
    f"ops.switch(5, [lambda x: x + 1.0, lambda x: x * 2.0], {M})",
    f"ops.switch(-3, [lambda x: x + 1.0, lambda x: x * 2.0], {M})",
    "ops.switch(np.array(1), [lambda: np.float32(1.0), lambda: np.float32(2.0)])",
    # unique, argpartition, histogram
    f"ops.unique({U})", f"ops.unique({U}, return_counts=True)",
    f"ops.unique({U}, return_index=True, return_inverse=True, return_counts=True)",
    f"ops.unique({U}, sorted=False, return_inverse=True)",
    f"ops.unique({U}, sorted=False, return_index=True, return_counts=True)",
    f"ops.unique({U}, size=6, fill_value=-1)", f"ops.unique({U}, size=2, return_counts=True)",
    f"ops.unique({U}, size=6, return_index=True, return_counts=True)",
    f"ops.unique({R}, axis=0)", f"ops.unique({R}, axis=0, return_inverse=True, return_counts=True)",
    f"ops.unique({R}, axis=1)", f"ops.unique({R})",
    "ops.unique(np.array([0.5, -1.0, 0.5, 2.0], 'float32'), return_inverse=True)",
    "ops.unique(np.array([True, False, True]))",
    f"ops.argpartition({I}, 2)", "ops.argpartition(np.array([4, 1, 8, 2], 'int32'), 0)", f"ops.argpartition({I}, 4)",
    "ops.argpartition(np.array([5, -3, 2, -8, 0, 4], 'int32'), 3)",
    "ops.argpartition(np.array([5, 3, 5, 1, 3], 'int32'), 1)",
    "ops.argpartition(np.array([4, 1, 8, 2], 'int32'), -2)", f"ops.argpartition({I}, 9)",
    f"ops.argpartition({I}, 2, axis=None)",
    "ops.argpartition(np.array([2.7, 1.2, 3.9, 0.4], 'float32'), 1)",
    f"ops.histogram({F})", f"ops.histogram({F}, bins=4)", f"ops.histogram({F}, 3, (0.0, 2.0))",
    f"ops.histogram({M}, 5)", f"ops.histogram({F}.astype('float64'), 2)",
    f"ops.histogram({I}, 4)", f"ops.histogram({F}, 0)",
    # correlation
    f"ops.corrcoef({M})", f"ops.corrcoef({M} * {M})", f"ops.corrcoef({F})",
    "ops.corrcoef(np.array([[1, 2, 4], [3, 1, 0]], 'int32'))",
    f"ops.corrcoef({M}.astype('float64'))",
    f"ops.correlate({F}, {V4}[:3])", f"ops.correlate({F}, {V4}[:3], mode='same')",
    f"ops.correlate({F}, {V4}[:3], mode='full')", f"ops.correlate({F}, {V4}, mode='same')",
    f"ops.correlate({F}, {V4}, mode='full')", f"ops.correlate({V4}[:3], {F}, mode='same')",
    f"ops.correlate({V4}[:3], {F})", f"ops.correlate({I}, {I}[:2], mode='full')",
    f"ops.correlate({F}.astype('float64'), {V4}[:2].astype('float64'))",
    f"ops.correlate({F}, {V4}, mode='middle')",
    # NaN-aware quantiles
    f"ops.nanmedian({NM})", f"ops.nanmedian({NM}, axis=1)", f"ops.nanmedian({NM}, axis=0)",
    f"ops.nanmedian({NM}, axis=1, keepdims=True)", f"ops.nanmedian({M}, axis=1)",
    f"ops.nanmedian({NM}, keepdims=True)",
    f"ops.nanquantile({NM}, 0.25)", f"ops.nanquantile({NM}, [0.1, 0.9], axis=1)",
    f"ops.nanquantile({NM}, 0.4, axis=1, method='lower')",
    f"ops.nanquantile({NM}, 0.4, axis=1, method='higher')",
    f"ops.nanquantile({NM}, 0.6, axis=1, method='nearest')",
    f"ops.nanquantile({NM}, 0.4, axis=0, method='midpoint')",
    f"ops.nanquantile({NM}, [0.5, 0.75], axis=0, keepdims=True)",
    f"ops.nanquantile({NM}, 0.5, axis=(0, 1))",
    f"ops.nanquantile({NM}.astype('float64'), 0.3, axis=1)",
    f"ops.nanquantile({I}, 0.5)",
    f"ops.nanpercentile({NM}, 30.0, axis=1)", f"ops.nanpercentile({NM}, [10, 50])",
    f"ops.nanpercentile({NM}, 50, axis=0, method='lower', keepdims=True)",
]

# Keras's TensorFlow backend refuses vectorize (its vmap takes no in_axes) and nanquantile
# of several quantiles along an axis (a map_fn signature error): these come from Keras's
# JAX backend, the same keras.ops functions
JAX_CASES = [
    f"ops.vectorize(lambda a, b: a * b + 1.0)({M}, {M}[0])",
    f"ops.vectorize(lambda a, b: ops.sum(a * b), signature='(n),(n)->()')({M}, {M}[1])",
    f"ops.vectorize(lambda a: ops.sort(a), signature='(n)->(n)')({M}[:, ::-1])",
    f"ops.vectorize(lambda a: (ops.max(a), ops.min(a)), signature='(n)->(),()')({M})",
    f"ops.vectorize(lambda a, b: ops.matmul(a, b), signature='(m,n),(n,k)->(m,k)')"
    f"(np.stack([{M}, {M} * 0.5]), {M}.T)",
    f"ops.vectorize(lambda a: a * 2)({I})",
    f"ops.vectorize(lambda a, b: a - b)({M}[:, :1], {M}[0])",
    f"ops.vectorize(lambda a, b: ops.sum(a * b), signature='(n),(n)->()')({M}, {M}[1, :3])",
    f"ops.nanquantile({NM}, [0.1, 0.9], axis=1)",
    f"ops.nanpercentile({NM}, [25.0, 50.0, 80.0], axis=0, keepdims=True)",
]


def run(ops, np, cases=CASES):
    return more.run(ops, np, cases)


def main():
    if sys.argv[1:] == ["--jax"]:  # the child process: print the JAX backend's results
        import keras
        import numpy as np

        print(json.dumps(run(keras.ops, np, JAX_CASES)))
        return
    more.write(OUT, CASES)
    env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
    child = subprocess.run([sys.executable, "-m", "benchmarks.keras_ops_s14_reference",
                            "--jax"], env=env, capture_output=True, text=True, check=True)
    data = json.loads(OUT.read_text())
    data["cases"].update(json.loads(child.stdout.strip().splitlines()[-1]))
    OUT.write_text(json.dumps(data) + "\n")
    print(f"added {len(JAX_CASES)} cases from Keras's JAX backend")


if __name__ == "__main__":
    main()
