"""String tensors (``tf.string``: object arrays of bytes) and ``tf.strings`` give TensorFlow
2.21's values, dtypes and error types (tests/data/strings.json, written by
benchmarks/strings_reference.py from the same expressions)."""
import json
import pathlib
import warnings

import numpy as np
import pytest

import tapegrad as tf

from benchmarks.strings_reference import run

REF = json.loads((pathlib.Path(__file__).parent / "data" / "strings.json").read_text())["cases"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    GOT = run(tf, np, sorted(REF))


@pytest.mark.parametrize("case", sorted(REF))
def test_strings_match_tensorflow(case):
    assert GOT[case] == REF[case]


def test_values_are_bytes_and_the_dtype_is_called_string():
    t = tf.constant(["a", "b c"])
    assert t.dtype == tf.string and tf.as_dtype("string") == tf.string
    assert repr(t) == "tapegrad.Tensor([b'a' b'b c'], shape=(2,), dtype=string)"
    assert tf.constant("é").numpy() == "é".encode()
    assert tf.TensorSpec([None], tf.string).__repr__() == \
        "TensorSpec(shape=(None,), dtype=tf.string, name=None)"


def test_tapes_ignore_strings():
    x = tf.Variable(2.0)
    s = tf.constant(["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tf.GradientTape() as tape:
            tape.watch(s)
            y = x * x
            same = tf.reduce_sum(tf.cast(s == "a", tf.float32)) * x
        grads = tape.gradient([y, same], [x, s])
    assert float(grads[0]) == 2 * 2.0 + 1.0 and grads[1] is None  # d(x*x + 1*x)/dx


def test_string_ops_refuse_traced_inputs():
    f = tf.function(lambda s: tf.strings.lower(s))
    with pytest.raises(NotImplementedError, match="tf.function"):
        f(tf.constant(["A"]))
    g = tf.function(lambda s: tf.reshape(s, [-1]) == "a")  # moves and comparisons trace
    assert g(tf.constant([["a"], ["b"]])).numpy().tolist() == [True, False]


def test_ragged_tensor_rows():
    rt = tf.strings.split(["a b", "", "c d e"])
    assert len(rt) == 3 and rt.ragged_rank == 1 and rt.dtype == tf.string
    assert rt.row_lengths().numpy().tolist() == [2, 0, 3]
    assert rt[-1].numpy().tolist() == [b"c", b"d", b"e"]
    assert rt.to_tensor(shape=[None, 2]).numpy().tolist() == [[b"a", b"b"], [b"", b""],
                                                               [b"c", b"d"]]
    nested = tf.strings.split([["a b"], ["c"]])
    assert nested.ragged_rank == 2 and nested[1].to_list() == [[b"c"]]
    assert nested.to_tensor().shape == (2, 1, 2)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.RaggedTensor.from_row_splits([1, 2], [0, 3])
    assert tf.is_tensor(rt)
