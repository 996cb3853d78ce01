"""The Keras guide "Save, serialize, and export models", run with ``import tapegrad as tf``:
registered custom objects (a function, layers, a subclassed model) saved and reloaded,
``custom_object_scope``, ``get_custom_objects``, ``to_json`` / ``model_from_json``,
``clone_model`` and weights-only saving."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras

from _keras_programs import CustomDense


@keras.saving.register_keras_serializable(package="guide", name="custom_fn")
def custom_fn(x):
    return x ** 2


@keras.saving.register_keras_serializable(package="guide")
class ScaleLayer(keras.layers.Layer):
    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


# the guides' layer with its weights made in build(), registered as the guide does
CustomLayer = keras.saving.register_keras_serializable(package="guide", name="custom_layer")(
    CustomDense)


@keras.saving.register_keras_serializable(package="guide", name="custom_model")
class CustomModel(keras.Model):
    def __init__(self, hidden_units, **kwargs):
        super().__init__(**kwargs)
        self.hidden_units = hidden_units
        self.dense_layers = [keras.layers.Dense(u) for u in hidden_units]

    def call(self, inputs):
        x = inputs
        for layer in self.dense_layers:
            x = layer(x)
        return x

    def get_config(self):
        return {"hidden_units": self.hidden_units}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _functional():
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(4,))
    x = ScaleLayer(0.5)(CustomLayer(8)(inputs))
    return keras.Model(inputs, keras.layers.Activation(custom_fn)(x))


def test_registered_objects_save_and_load(tmp_path):
    model = CustomModel([8, 8, 3])
    model(tf.ones((1, 5)))
    model.compile(optimizer="adam", loss="mse")
    model.fit(np.ones((4, 5)), np.ones((4, 3)), verbose=0)
    model.save(tmp_path / "custom_model.keras")
    loaded = keras.saving.load_model(tmp_path / "custom_model.keras")
    assert type(loaded) is CustomModel and loaded.hidden_units == [8, 8, 3]
    x = np.random.default_rng(0).random((2, 5))
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)
    functional = _functional()
    functional.save(tmp_path / "functional.keras")
    again = keras.models.load_model(tmp_path / "functional.keras")
    np.testing.assert_allclose(again(x[:, :4]).numpy(), functional(x[:, :4]).numpy(),
                               rtol=1e-6)
    names = keras.saving.get_custom_objects()
    assert names["guide>custom_fn"] is custom_fn and names["guide>ScaleLayer"] is ScaleLayer
    assert keras.saving.get_registered_name(CustomModel) == "guide>custom_model"


def test_custom_object_scope_and_get_custom_objects():
    class Doubler(keras.layers.Layer):  # not registered
        def call(self, x):
            return 2 * x
    inputs = keras.Input((3,))
    config = keras.Model(inputs, Doubler()(inputs)).get_config()
    with pytest.raises(TypeError, match="Could not locate class 'Doubler'"):
        keras.Model.from_config(config)
    with keras.saving.custom_object_scope({"Doubler": Doubler}) as scope:
        assert isinstance(scope, keras.saving.CustomObjectScope)
        rebuilt = keras.Model.from_config(config)
        assert keras.saving.get_custom_objects().get("Doubler") is None  # the scope's own
    np.testing.assert_array_equal(rebuilt(np.ones((1, 3))).numpy(), [[2.0, 2.0, 2.0]])
    with pytest.raises(TypeError, match="Could not locate class"):
        keras.Model.from_config(config)  # the scope has ended
    keras.utils.get_custom_objects()["Doubler"] = Doubler
    try:
        assert type(keras.Model.from_config(config).layers[1]) is Doubler
    finally:
        del keras.saving.get_custom_objects()["Doubler"]


def test_to_json_and_model_from_json():
    model = _functional()
    text = model.to_json()
    assert '"class_name": "Functional"' in text
    clone = keras.models.model_from_json(text)
    assert [type(layer) for layer in clone.layers] == [type(layer) for layer in model.layers]
    clone.set_weights(model.get_weights())
    x = np.random.default_rng(0).random((2, 4))
    np.testing.assert_allclose(clone(x).numpy(), model(x).numpy(), rtol=1e-6)
    seq = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    assert keras.models.model_from_json(seq.to_json()).output_shape == (None, 2)


def test_clone_model_makes_new_layers_with_fresh_weights():
    model = _functional()
    clone = keras.models.clone_model(model)
    assert clone.output_shape == model.output_shape
    assert all(a is not b for a, b in zip(clone.layers, model.layers))
    assert [a.name for a in clone.layers] == [b.name for b in model.layers]  # as Keras
    assert not np.array_equal(clone.get_weights()[0], model.get_weights()[0])
    clone.set_weights(model.get_weights())
    x = np.random.default_rng(1).random((3, 4))
    np.testing.assert_allclose(clone(x).numpy(), model(x).numpy(), rtol=1e-6)
    # a shared layer stays shared in the clone
    inputs = keras.Input((2,))
    shared = keras.layers.Dense(2)
    twice = keras.Model(inputs, shared(shared(inputs)))
    cloned = keras.models.clone_model(twice)
    assert len(cloned.layers) == 2 and len(cloned.weights) == 2
    seq = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(1)])
    seq_clone = keras.models.clone_model(seq)
    assert seq_clone.built and len(seq_clone.layers) == 2 and seq_clone.output_shape == (None, 1)
    seen = []

    def clone_function(layer):
        seen.append(layer.name)
        return layer.__class__.from_config(layer.get_config())
    keras.models.clone_model(seq, clone_function=clone_function)
    assert seen == [layer.name for layer in seq.layers]
    sub = CustomModel([3])
    sub(np.ones((1, 2)))
    sub_clone = keras.models.clone_model(sub)
    assert type(sub_clone) is CustomModel and sub_clone.hidden_units == [3]


def test_weights_only_saving(tmp_path):
    model = _functional()
    path = str(tmp_path / "model.weights.h5")
    model.save_weights(path)
    other = keras.models.clone_model(model)
    other.load_weights(path)
    x = np.random.default_rng(0).random((2, 4))
    np.testing.assert_array_equal(other(x).numpy(), model(x).numpy())
