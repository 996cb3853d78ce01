"""TensorFlow's ``tf.range`` values, sizes and errors for float and integer arguments, for
tests/test_range_reference.py. Run in the bench environment:

    /work/venv-bench/bin/python -m benchmarks.tf_range_reference
"""
import json
import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "tf_range_reference.json"
CASES = [
    (0.0, 1.0, 0.3, None), (0.0, 10.0, 0.1, None), (0.0, 10.0, 0.1, "float64"),
    (1.5, -3.0, -0.7, None), (0.1, 100.0, 0.37, None), (0.0, 1.0, 0.1, None),
    (-2.5, 2.5, 0.5, "float64"), (1e8, 1e8 + 100, 7.0, None), (0.0, 1.0, 1e-3, None),
    (5, 0, -2, None), (0, 10, 3, None), (-7, 7, 4, "int64"), (3, 3, 1, None),
    (0.0, 0.95, 0.05, None), (0, 5, 1, "float32"), (2.0, 2.0, 0.5, None),
    (5, 0, 1, None), (0, 5, -1, None), (0, 5, 0, None), (0.0, 1.0, 0.0, None),
]


def main():
    import numpy as np
    import tensorflow as tf

    out = []
    for start, limit, delta, dtype in CASES:
        try:
            r = tf.range(start, limit, delta, dtype=dtype).numpy()
            out.append({"args": [start, limit, delta, dtype], "dtype": str(r.dtype),
                        "values": [float(v) if r.dtype.kind == "f" else int(v) for v in r],
                        "bits": np.asarray(r).view(f"u{r.dtype.itemsize}").tolist()})
        except Exception as e:  # noqa: BLE001 - the error type is the reference
            out.append({"args": [start, limit, delta, dtype], "error": type(e).__name__})
    OUT.write_text(json.dumps({"tensorflow_version": tf.__version__, "cases": out},
                              indent=1) + "\n")
    print(f"wrote {OUT} (TensorFlow {tf.__version__})")


if __name__ == "__main__":
    main()
