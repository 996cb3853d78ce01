"""Keras's ``CategoryEncoding`` and ``Discretization``: the same numbers and dtypes as Keras
3.15 on the cases of tests/data/keras_categorical_reference.npz (written by
benchmarks/keras_categorical_reference.py; ``adapt``'s approximate quantiles included),
errors, configs, and use in a trained model. TensorFlow is never imported here."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import layers

DATA = np.load(pathlib.Path(__file__).parent / "data" / "keras_categorical_reference.npz",
               allow_pickle=False)
MANIFEST = json.loads(str(DATA["manifest"]))


@pytest.mark.parametrize("case", MANIFEST["layers"], ids=lambda c: c["name"])
def test_layers_match_keras(case):
    layer = getattr(layers, case["class"])(**case["config"])
    x = DATA[f"layer/{case['name']}/input"]
    out = layer(x, **case["kwargs"]).numpy()
    expected = DATA[f"layer/{case['name']}/output"]
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)
    assert tuple(layer.compute_output_shape(x.shape)) == out.shape
    again = type(layer).from_config(layer.get_config())
    np.testing.assert_array_equal(again(x, **case["kwargs"]).numpy(), out)
    traced = tf.function(lambda t: layer(t, **case["kwargs"]))  # crashed on multi_hot/count
    np.testing.assert_array_equal(traced(tf.constant(x)).numpy(), out)


@pytest.mark.parametrize("case", MANIFEST["adapt"], ids=lambda c: c["name"])
def test_adapt_finds_keras_boundaries(case):
    data = DATA[f"adapt/{case['name']}/data"]
    whole = layers.Discretization(num_bins=case["num_bins"], epsilon=case["epsilon"])
    whole.adapt(data)
    np.testing.assert_array_equal(whole.bin_boundaries, DATA[f"adapt/{case['name']}/boundaries"])
    batched = layers.Discretization(num_bins=case["num_bins"], epsilon=case["epsilon"])
    batched.adapt([data[i:i + 7] for i in range(0, len(data), 7)])
    np.testing.assert_array_equal(batched.bin_boundaries, DATA[f"adapt/{case['name']}/batched"])
    dataset = layers.Discretization(num_bins=case["num_bins"], epsilon=case["epsilon"])
    dataset.adapt(tf.data.Dataset.from_tensor_slices(data).batch(7))
    np.testing.assert_array_equal(dataset.bin_boundaries, batched.bin_boundaries)
    # the adapted layer keeps num_bins and its boundaries through its config
    loaded = layers.Discretization.from_config(whole.get_config())
    assert loaded.num_bins == case["num_bins"] and loaded.bin_boundaries == whole.bin_boundaries


def test_errors_as_keras():
    with pytest.raises(ValueError, match="Unknown arg for output_mode: int"):
        layers.CategoryEncoding(3, output_mode="int")
    with pytest.raises(ValueError, match="num_tokens must be set"):
        layers.CategoryEncoding()
    with pytest.raises(ValueError, match=">= 1"):
        layers.CategoryEncoding(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        layers.CategoryEncoding(3)(np.array([[0, -1]]))
    with pytest.raises(ValueError, match="`count_weights` is not used"):
        layers.CategoryEncoding(3)(np.array([[0, 1]]), count_weights=np.ones((1, 2)))
    with pytest.raises(ValueError, match="Both `num_bins` and `bin_boundaries`"):
        layers.Discretization([1.0], num_bins=3)
    with pytest.raises(ValueError, match="either `num_bins` or `bin_boundaries`"):
        layers.Discretization()
    with pytest.raises(ValueError, match="Unknown value for `output_mode`"):
        layers.Discretization([1.0], output_mode="foo")
    with pytest.raises(ValueError, match="Cannot adapt"):
        layers.Discretization([1.0]).adapt(np.ones(3))
    with pytest.raises(ValueError, match="call `adapt"):
        layers.Discretization(num_bins=3)(np.ones(3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="sorted boundaries"):
        layers.Discretization([1.0, 0.0])(np.ones(3))
    with pytest.raises(NotImplementedError):
        layers.CategoryEncoding(3, sparse=True)


def test_in_a_trained_model(tmp_path):
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 6, (64, 3))
    numbers = rng.normal(size=(64, 1)).astype(np.float32)
    y = (ids[:, 0] > 2).astype(np.float32) + (numbers[:, 0] > 0)
    cat_in, num_in = keras.Input((3,), dtype="int64"), keras.Input((1,))
    bins = layers.Discretization(num_bins=4)
    bins.adapt(numbers)
    merged = layers.Concatenate()([layers.CategoryEncoding(6, "count")(cat_in),
                                   layers.CategoryEncoding(4, "one_hot")(bins(num_in))])
    model = keras.Model([cat_in, num_in], layers.Dense(1)(merged))
    model.compile("adam", "mse")
    history = model.fit([ids, numbers], y, epochs=2, batch_size=16, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    predicted = model.predict([ids[:5], numbers[:5]], verbose=0)
    path = tmp_path / "categorical.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict([ids[:5], numbers[:5]], verbose=0), predicted)
