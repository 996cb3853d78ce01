"""Keras's ``IntegerLookup``: the same indices, vectors, dtypes and vocabularies as Keras
3.15 on the cases of tests/data/keras_lookup_reference.npz (written by
benchmarks/keras_lookup_reference.py; ``adapt`` included), the same numbers inside
``tf.function`` and in a trained model, configs, and Keras's error types. TensorFlow is
never imported here."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import layers

DATA = np.load(pathlib.Path(__file__).parent / "data" / "keras_lookup_reference.npz",
               allow_pickle=False)
MANIFEST = json.loads(str(DATA["manifest"]))


@pytest.mark.parametrize("case", MANIFEST["calls"], ids=lambda c: f"{c['name']}-{c['input']}")
def test_lookup_matches_keras(case):
    layer = layers.IntegerLookup(**case["config"])
    x = DATA[f"input/{case['input']}"]
    out = layer(x).numpy()
    expected = DATA[f"call/{case['name']}/{case['input']}"]
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)
    assert layer.get_vocabulary() == DATA[f"vocab/{case['name']}"].tolist()
    assert layer.vocabulary_size() == int(DATA[f"vocab_size/{case['name']}"])
    assert tuple(layer.compute_output_shape(x.shape)) == out.shape
    traced = tf.function(lambda t: layer(t))
    np.testing.assert_array_equal(traced(tf.constant(x)).numpy(), out)
    again = layers.IntegerLookup.from_config(layer.get_config())
    np.testing.assert_array_equal(again(x).numpy(), out)


@pytest.mark.parametrize("case", MANIFEST["adapt"], ids=lambda c: c["name"])
def test_adapt_learns_keras_vocabulary(case):
    layer = layers.IntegerLookup(**case["config"])
    data = DATA[f"adapt_data/{case['data']}"]
    layer.adapt(data)
    assert layer.get_vocabulary() == DATA[f"adapt/{case['name']}/vocab"].tolist()
    out = layer(np.array([[36, 42, 7, 0, 3, 2]])).numpy()
    expected = DATA[f"adapt/{case['name']}/out"]
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    batched = layers.IntegerLookup(**case["config"])
    batched.adapt(iter([data[i:i + 2] for i in range(0, len(data), 2)]))  # batches alike
    if case["name"] != "tf_idf" and case["name"] != "tf_idf_pad":  # documents are rows
        assert batched.get_vocabulary() == layer.get_vocabulary()


def test_errors_are_keras():
    with pytest.raises(ValueError, match="repeated term"):
        layers.IntegerLookup(vocabulary=[1, 2, 1])
    with pytest.raises(ValueError, match="larger than the maximum vocab size"):
        layers.IntegerLookup(vocabulary=[1, 2, 3], max_tokens=3)
    with pytest.raises(ValueError, match="Unknown value for `output_mode`"):
        layers.IntegerLookup(output_mode="foo")
    with pytest.raises(ValueError, match="must be `'int'` when `invert` is true"):
        layers.IntegerLookup(invert=True, output_mode="multi_hot")
    with pytest.raises(ValueError, match="must be greater than 1"):
        layers.IntegerLookup(max_tokens=1)
    with pytest.raises(ValueError, match="Found reserved mask token"):
        layers.IntegerLookup(vocabulary=[1, 0, 2], mask_token=0)
    with pytest.raises(ValueError, match="`idf_weights` argument must also be provided"):
        layers.IntegerLookup(vocabulary=[1, 2], output_mode="tf_idf")
    with pytest.raises(RuntimeError, match="you must set the layer's vocabulary"):
        layers.IntegerLookup(output_mode="multi_hot")(np.array([1]))
    with pytest.raises(InvalidArgumentError, match=r"found OOV values \[1001\]"):
        layers.IntegerLookup(vocabulary=[12, 36], num_oov_indices=0)(np.array([12, 1001]))
    with pytest.raises(ValueError, match="Cannot adapt layer"):
        layers.IntegerLookup(vocabulary=[1, 2]).adapt(np.array([1, 2]))
    with pytest.raises(NotImplementedError, match="sparse"):
        layers.IntegerLookup(vocabulary=[1, 2], output_mode="count", sparse=True)


def test_lookup_feeds_an_embedding_in_a_trained_model():
    lookup = layers.IntegerLookup(vocabulary=[3, 10, 20, 7])
    inputs = keras.Input((4,), dtype="int64")
    x = layers.Embedding(lookup.vocabulary_size(), 2)(lookup(inputs))
    model = keras.Model(inputs, layers.Dense(1)(layers.Flatten()(x)))
    model.compile(optimizer="sgd", loss="mse")
    ids = np.array([[3, 10, 99, 7], [20, 20, 3, 0]])
    model.fit(ids, np.ones((2, 1)), epochs=2, verbose=0)
    assert model(ids).shape == (2, 1)
    inverse = layers.IntegerLookup(vocabulary=lookup.get_vocabulary(), invert=True)
    np.testing.assert_array_equal(inverse(lookup(ids)).numpy(),
                                  [[3, 10, -1, 7], [20, 20, 3, -1]])
