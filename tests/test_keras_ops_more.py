"""keras.ops' NumPy-style functions of tapegrad/keras/ops/more_numeric.py give Keras 3.15's
values and dtypes (tests/data/keras_ops_more_reference.json, written by
benchmarks/keras_ops_more_reference.py with the TensorFlow backend), and NumPy's answers
where Keras's TensorFlow backend departs from NumPy (vstack of 1-D tensors, isclose of
infinities); ``argmin`` is TensorFlow's (no wrap of unsigned or most-negative integers)."""
import json
import pathlib

import numpy as np
import pytest

from benchmarks.keras_ops_more_reference import encode, run
from tapegrad.keras import ops

REF = json.loads((pathlib.Path(__file__).parent / "data" / "keras_ops_more_reference.json")
                 .read_text())["cases"]
GOT = run(ops, np)


def _same(a, b):
    if "items" in a or "items" in b:
        return ("items" in a and "items" in b and len(a["items"]) == len(b["items"])
                and all(_same(x, y) for x, y in zip(a["items"], b["items"])))
    if "error" in a or "error" in b:
        return a == b
    if a["dtype"] != b["dtype"] or a["shape"] != b["shape"]:
        return False
    if a["dtype"].startswith("float"):
        x = np.array(a["values"], dtype=float)
        y = np.array(b["values"], dtype=float)
        return np.allclose(x, y, rtol=2e-6, atol=1e-6, equal_nan=True)
    return a["values"] == b["values"]


@pytest.mark.parametrize("case", sorted(REF))
def test_keras_ops_give_keras_values_and_dtypes(case):
    assert _same(GOT[case], REF[case]), (GOT[case], REF[case])


def test_numpy_answers_where_the_tensorflow_backend_departs():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    assert _same(encode(ops.vstack([a, a]), np), encode(np.vstack([a, a]), np))
    n = np.array([np.inf, -np.inf, np.nan, 1.0], np.float32)
    np.testing.assert_array_equal(ops.isclose(n, n).numpy(), np.isclose(n, n))
    np.testing.assert_array_equal(ops.isclose(n, n[::-1], equal_nan=True).numpy(),
                                  np.isclose(n, n[::-1], equal_nan=True))


def test_argmin_does_not_negate():
    assert int(ops.argmin(np.array([0, 5], np.uint8))) == 0
    assert int(ops.argmin(np.array([np.iinfo(np.int32).min, 5], np.int32))) == 0
    assert int(ops.argmin(np.array([True, False]))) == 1
    np.testing.assert_array_equal(
        ops.argmin(np.array([[3, 1], [0, 4]]), axis=1, keepdims=True).numpy(), [[1], [0]])


def test_errors():
    with pytest.raises(ValueError, match="same number"):
        ops.moveaxis(np.zeros((2, 3)), [0, 1], [0])
    with pytest.raises(ValueError, match="constant_values"):
        ops.pad(np.zeros((2, 2)), 1, mode="reflect", constant_values=1.0)
    with pytest.raises(ValueError, match="1-D or 2-D"):
        ops.diag(np.zeros((2, 2, 2)))
