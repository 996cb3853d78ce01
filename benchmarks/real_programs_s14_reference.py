"""Reference data of tests/test_real_programs_s14.py: the programs of
tests/_real_programs_s14.py run with TensorFlow 2.21 / Keras 3.15 in the bench venv.

    python -m benchmarks.real_programs_s14_reference tests/data/real_programs_s14.json

Each result is stored as ``{"dtype", "shape", "data"}`` with the values flattened
(complex ones as ``[real, imag]`` pairs, strings as they are); floats keep every digit
(``repr`` round-trips)."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import _real_programs_s14 as programs  # noqa: E402


def encode(value):
    """A NumPy array as JSON-ready data."""
    a = np.asarray(value)
    if a.dtype.kind == "c":
        data = [[float(v.real), float(v.imag)] for v in a.ravel()]
    elif a.dtype.kind in "US":
        data = [str(v) for v in a.ravel()]
    elif a.dtype.kind == "b":
        data = [bool(v) for v in a.ravel()]
    elif a.dtype.kind in "iu":
        data = [int(v) for v in a.ravel()]
    else:
        data = [float(v) for v in a.ravel()]
    kind = "str" if a.dtype.kind in "US" else a.dtype.name
    return {"dtype": kind, "shape": list(a.shape), "data": data}


def run_all(tf):
    """Every program's results, keyed ``program/name``."""
    out = {}
    for name in programs.NAMES + programs.XFAIL_NAMES:
        for key, value in programs.run(tf, name).items():
            out[f"{name}/{key}"] = encode(value)
    return out


def main(path):
    import tensorflow as tf
    tf.config.set_visible_devices([], "GPU")
    with open(path, "w") as f:
        json.dump({"source": "TensorFlow " + tf.__version__ + ", Keras "
                   + tf.keras.__version__, "results": run_all(tf)}, f)


if __name__ == "__main__":
    main(sys.argv[1])
