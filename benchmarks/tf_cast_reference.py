"""TensorFlow's float -> integer casts (``tf.cast`` and ``tf.dtypes.saturate_cast``) of NaN,
±inf, out-of-range and ordinary values, for tests/test_cast_edges.py. Run in the bench
environment:

    /work/venv-bench/bin/python -m benchmarks.tf_cast_reference

For each source float dtype and integer target it stores the inputs and TensorFlow's
results on one tensor whose length is a multiple of 64 (every element takes the kernels'
vector path), and element by element on tensors of one element (the scalar path, which
for int8, int16, uint8, uint16 and uint32 wraps instead of saturating: README).
"""
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "tf_cast_reference.npz"
SOURCES = ("float16", "float32", "float64")
TARGETS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def values(dtype):
    """Specials, every power of two around each integer range's ends (and its neighbours),
    and random values of every magnitude, in ``dtype``."""
    rng = np.random.default_rng(20261209)
    v = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5,
         2.5, -2.7, 127.9, -128.9, 255.9, 256.0, -129.0, 65535.9, 65536.0, 1e30, -1e30]
    for e in (7, 8, 15, 16, 31, 32, 53, 63, 64):
        for s in (1, -1):
            p = s * 2.0 ** e
            v += [p, p - 1, p + 1, p * (1 - 2 ** -20), p * (1 + 2 ** -20), p - 0.5]
    v += list(rng.normal(size=64) * 10.0 ** rng.integers(0, 20, 64))
    with np.errstate(over="ignore"):
        a = np.array(v, np.float64).astype(dtype)
    return a


def main():
    import tensorflow as tf

    arrays = {"tensorflow_version": np.array(tf.__version__)}
    for src in SOURCES:
        x = values(src)
        n = -(-x.size // 64) * 64
        padded = np.concatenate([x, np.zeros(n - x.size, src)])
        arrays[f"{src}/x"] = x
        for dst in TARGETS:
            block = tf.cast(tf.constant(padded), dst).numpy()[:x.size]
            one = np.array([tf.cast(tf.constant(x[i:i + 1]), dst).numpy()[0]
                            for i in range(x.size)], dst)
            sat = tf.dtypes.saturate_cast(tf.constant(padded), dst).numpy()[:x.size]
            arrays[f"{src}/{dst}/block"] = block
            arrays[f"{src}/{dst}/one"] = one
            arrays[f"{src}/{dst}/saturate"] = sat
    np.savez(OUT, **arrays)
    print(f"wrote {OUT} (TensorFlow {tf.__version__})")


if __name__ == "__main__":
    main()
