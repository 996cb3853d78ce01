"""TensorFlow's results at the edges, case by case: indices out of range (gather, gather_nd,
batch_dims, segment ids, scatters, embeddings), eager and inside ``tf.function``, raise
TensorFlow's InvalidArgumentError with its message; means of nothing are +nan (its sign
bit too). The reference values were made by TensorFlow 2.21 / Keras 3.15
(``benchmarks/tf_edge_reference.py`` wrote ``tests/data/tf_edge_reference.json``); each case
runs the same source here with tapegrad."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from benchmarks.tf_edge_reference import decode, run

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "tf_edge_reference.json").read_text())
CASES = DATA["cases"]


def same(got, want):
    """Equal values, dtype and shape; bit for bit (NaN's sign included)."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
    assert got.tobytes() == want.tobytes(), (got, want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_matches_tensorflow(name):
    case = CASES[name]
    r = run(tf, keras, case["src"], [decode(x) for x in case["args"]], case["mode"])
    if "error" in case:
        assert r[0] == "error", f"TensorFlow raises {case['error']}, tapegrad gave {r[1]}"
        assert r[1] == case["error"]["type"]
        assert case["error"]["message"] in r[2]
    else:
        assert r[0] == "value", f"tapegrad raised {r[1]}: {r[2]}"
        want = [decode(o) for o in case["out"]]
        assert len(r[1]) == len(want)
        for g, w in zip(r[1], want):
            same(g, w)


def test_traced_gather_reuses_its_program_and_checks_every_call():
    """The check is in the compiled program: one trace, good and bad indices alternately."""
    p = tf.constant([1.0, 2.0, 3.0])
    f = tf.function(lambda i: tf.gather(p, i))
    for _ in range(2):
        assert f(tf.constant([2, 0])).numpy().tolist() == [3.0, 1.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = -1 is not"):
            f(tf.constant([2, -1]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 3 is not"):
            f(tf.constant([3, 0]))
    assert f.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32"])
def test_take_checks_every_index_dtype(dtype):
    from tapegrad.primitives.gather import _take
    x = np.arange(6.0).reshape(3, 2)
    hi = np.iinfo(dtype).max
    np.testing.assert_array_equal(_take(x, np.array([2, 0], dtype), 0), x[[2, 0]])
    bad = [np.array([0, 3], dtype), np.array([hi], dtype)]
    if np.dtype(dtype).kind == "i":
        bad += [np.array([-1], dtype), np.array([np.iinfo(dtype).min], dtype)]
    for i in bad:
        with pytest.raises(tf.errors.InvalidArgumentError, match="is not in"):
            _take(x, i, 0)
    assert _take(x, np.zeros(0, dtype), 0).shape == (0, 2)


def test_gather_gradient_and_vmap_keep_checking():
    p = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(p)
        y = tf.reduce_sum(tf.gather(p, [2, 2, 0]))
    assert tape.gradient(y, p).numpy().tolist() == [1.0, 0.0, 2.0]
    f = tf.vectorized_map(lambda i: tf.gather(p, i), tf.constant([[0], [2]]))
    assert f.numpy().tolist() == [[1.0], [3.0]]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.vectorized_map(lambda i: tf.gather(p, i), tf.constant([[0], [3]]))
