"""``Dataset.scan`` and ``Dataset.group_by_window`` (and their ``tf.data.experimental``
transformations): the pipelines of benchmarks/tf_reference_data.py, run here with tapegrad,
give TensorFlow 2.21's elements in its order (the unfinished windows by increasing key)
and its errors (tests/data/tf_data_grouping.json). TensorFlow is never imported here."""
import json
import pathlib

import pytest

import tapegrad as tf
from benchmarks.tf_reference_data import cases

REFERENCE = json.loads((pathlib.Path(__file__).parent / "data" / "tf_data_grouping.json")
                       .read_text())["cases"]
CASES = cases(tf)


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith("error_")])
def test_elements_match_tensorflow(name):
    assert json.loads(json.dumps(CASES[name]())) == REFERENCE[name]  # tuples as lists


@pytest.mark.parametrize("name", [n for n in CASES if n.startswith("error_")])
def test_errors_match_tensorflow(name):
    kind, message = REFERENCE[name]
    errors = {"ValueError": ValueError, "TypeError": TypeError,
              "InvalidArgumentError": tf.errors.InvalidArgumentError}
    with pytest.raises(errors[kind]) as info:
        CASES[name]()
    if kind != "InvalidArgumentError" and "Tensor conversion" not in message:
        assert str(info.value) == message.replace("<dtype: 'float32'>", "float32").replace(
            "<dtype: 'int64'>", "int64")


def test_specs_cardinality_and_streaming():
    ds = tf.data.Dataset.range(10).group_by_window(lambda x: x % 3, lambda k, w: w.batch(4),
                                                   window_size=4)
    assert ds.element_spec == tf.TensorSpec([None], tf.int64)
    assert int(ds.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    scanned = tf.data.Dataset.range(6).scan(tf.constant(0.5), lambda s, x: (s * 2, s))
    assert scanned.element_spec == tf.TensorSpec([], tf.float32)
    assert int(scanned.cardinality()) == 6
    # an infinite input streams: windows come out as they fill
    endless = tf.data.Dataset.range(10 ** 9).group_by_window(
        lambda x: x % 2, lambda k, w: w.batch(2), window_size=2)
    assert [b.numpy().tolist() for b in endless.take(3)] == [[0, 2], [1, 3], [4, 6]]
    running = tf.data.Dataset.range(10 ** 9).repeat().scan(
        tf.constant(0, tf.int64), lambda s, x: (s + x, s + x))
    assert [int(v) for v in running.take(4)] == [0, 1, 3, 6]
