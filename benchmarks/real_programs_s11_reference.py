"""Reference data of tests/test_real_programs_s11.py: the programs of
tests/_real_programs_s11.py run with TensorFlow 2.21 / Keras 3.15 in the bench venv.

    python -m benchmarks.real_programs_s11_reference tests/data/real_programs_s11.npz
"""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import _real_programs_s11 as programs  # noqa: E402


def run_all(tf):
    """Every program's results, keyed ``program/name``."""
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for name in programs.NAMES:
            for key, value in programs.run(tf, name, d).items():
                out[f"{name}/{key}"] = np.asarray(value)
    return out


def main(path):
    import tensorflow as tf
    np.savez_compressed(path, **run_all(tf))


if __name__ == "__main__":
    main(sys.argv[1])
