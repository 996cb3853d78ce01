"""Keras's ``StringLookup`` and ``TextVectorization`` give Keras 3.15's vocabularies, indices,
vectors and error types, and models holding a TextVectorization fit as in Keras
(tests/data/keras_text.json, written by benchmarks/keras_text_reference.py from the same
expressions with Keras on TensorFlow). Numbers are compared with rtol 1e-5: a fit chains a
few float32 steps, which differ from TensorFlow's by an ulp or two."""
import json
import pathlib
import warnings

import numpy as np
import pytest

import tapegrad as tf

from benchmarks.keras_text_reference import CORPUS, run

REF = json.loads((pathlib.Path(__file__).parent / "data" / "keras_text.json")
                 .read_text())["cases"]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    GOT = run(tf, tf.keras, np, sorted(REF))


def _same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            abs(a - b) <= 1e-5 * max(abs(a), abs(b), 1.0)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("case", sorted(REF))
def test_text_layers_match_keras(case):
    assert _same(GOT[case], REF[case]), (GOT[case], REF[case])


def test_string_lookup_round_trips_its_config():
    layer = tf.keras.layers.StringLookup(vocabulary=["a", "b"], mask_token="")
    again = tf.keras.layers.StringLookup.from_config(layer.get_config())
    assert again.get_vocabulary() == ["", "[UNK]", "a", "b"]
    assert again(["b", "", "q"]).numpy().tolist() == [3, 0, 1]


def test_text_vectorization_round_trips_its_config_and_vocabulary_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("cat\ndog\n")
    layer = tf.keras.layers.TextVectorization(vocabulary=str(path), output_sequence_length=3)
    assert layer.get_vocabulary() == ["", "[UNK]", "cat", "dog"]
    again = tf.keras.layers.TextVectorization.from_config(layer.get_config())
    assert again(["the dog"]).numpy().tolist() == [[1, 3, 0]]


def test_text_layers_refuse_traced_strings():
    layer = tf.keras.layers.TextVectorization(vocabulary=["cat"])
    with pytest.raises(NotImplementedError, match="tf.function"):
        tf.function(lambda s: layer(s))(tf.constant(CORPUS))


def test_unsupported_options_say_so():
    with pytest.raises(NotImplementedError, match="FarmHash"):
        tf.keras.layers.StringLookup(num_oov_indices=2)
