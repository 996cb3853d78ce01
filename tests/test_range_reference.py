"""``tf.range`` computes TensorFlow's values (``start + i * delta`` in the result's dtype)
and sizes, and raises its errors: tests/data/tf_range_reference.json, written by
benchmarks/tf_range_reference.py with TensorFlow 2.21."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf

REF = json.loads((pathlib.Path(__file__).parent / "data" / "tf_range_reference.json")
                 .read_text())


@pytest.mark.parametrize("case", REF["cases"], ids=lambda c: repr(c["args"]))
def test_range_gives_tensorflows_values(case):
    start, limit, delta, dtype = case["args"]
    if "error" in case:
        with pytest.raises(getattr(tf.errors, case["error"])):
            tf.range(start, limit, delta, dtype=dtype)
        return
    r = tf.range(start, limit, delta, dtype=dtype).numpy()
    assert r.dtype == np.dtype(case["dtype"])
    assert r.view(f"u{r.dtype.itemsize}").tolist() == case["bits"]
