"""tapegrad.keras: ``class_weight`` and ``weighted_metrics`` in ``fit``, channels-first
image layers and the image data format setting, with Keras's errors for bad input."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras


def _model(seed=0):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"], weighted_metrics=["accuracy"])
    return model


def _data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(12, 4)).astype("float32"), rng.integers(0, 3, 12)


def test_class_weight_is_a_sample_weight_per_class():
    x, y = _data()
    weights = {0: 0.5, 1: 2.0}
    a, b = _model(), _model()
    b.set_weights(a.get_weights())
    ha = a.fit(x, y, class_weight=weights, batch_size=4, shuffle=False, epochs=2, verbose=0)
    sw = np.array([weights.get(int(c), 1.0) for c in y], "float32")
    hb = b.fit(x, y, sample_weight=sw, batch_size=4, shuffle=False, epochs=2, verbose=0)
    np.testing.assert_allclose(ha.history["loss"], hb.history["loss"], rtol=1e-6)
    assert ha.history["weighted_accuracy"] == hb.history["weighted_accuracy"]
    for wa, wb in zip(a.get_weights(), b.get_weights()):  # float32 rounding apart
        np.testing.assert_allclose(wa, wb, rtol=1e-6, atol=1e-9)


def test_class_weight_on_a_dataset_equals_arrays():
    x, y = _data()
    weights = {"0": 3.0, 2: 0.1}  # keys that int() accepts, as in Keras
    a, b = _model(), _model()
    b.set_weights(a.get_weights())
    a.fit(x, y, class_weight=weights, batch_size=4, shuffle=False, verbose=0)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
    b.fit(ds, class_weight=weights, verbose=0)
    for wa, wb in zip(a.get_weights(), b.get_weights()):
        np.testing.assert_allclose(wa, wb, rtol=1e-6, atol=1e-7)


def test_class_weight_errors_are_keras_errors():
    x, y = _data()
    model = _model()
    with pytest.raises(ValueError, match="You cannot `class_weight` and `sample_weight`"):
        model.fit(x, y, class_weight={0: 1.0}, sample_weight=np.ones(12), verbose=0)
    with pytest.raises(ValueError, match="must be a dict-like mapping"):
        model.fit(x, y, class_weight=[1.0, 2.0], verbose=0)
    with pytest.raises(ValueError, match="Received an invalid key: 'a'"):
        model.fit(x, y, class_weight={"a": 1.0}, verbose=0)
    with pytest.raises(ValueError, match="only supported for Models with a single output"):
        model.fit(x, [y, y], class_weight={0: 1.0}, verbose=0)
    ds = tf.data.Dataset.from_tensor_slices((x, y, np.ones(12, "float32"))).batch(4)
    with pytest.raises(ValueError, match="You cannot `class_weight` and `sample_weight`"):
        model.fit(ds, class_weight={0: 1.0}, verbose=0)


def test_weighted_metrics_names_and_bad_metrics_argument():
    x, y = _data()
    model = _model()
    logs = model.evaluate(x, y, sample_weight=np.linspace(0, 1, 12), verbose=0,
                          return_dict=True)
    assert sorted(logs) == ["accuracy", "loss", "weighted_accuracy"]
    with pytest.raises(ValueError, match="Expected `weighted_metrics` argument to be a list"):
        model.compile(loss="mse", weighted_metrics="mae")


def test_channels_first_cnn_equals_channels_last_on_transposed_images():
    rng = np.random.default_rng(1)
    images = rng.normal(size=(3, 2, 8, 8)).astype("float32")  # NCHW

    def cnn(fmt):
        return keras.Sequential([
            keras.Input((2, 8, 8) if fmt == "channels_first" else (8, 8, 2)),
            keras.layers.Conv2D(4, 3, padding="same", activation="relu", data_format=fmt),
            keras.layers.MaxPooling2D(data_format=fmt),
            keras.layers.ZeroPadding2D(1, data_format=fmt),
            keras.layers.UpSampling2D(data_format=fmt),
            keras.layers.AveragePooling2D(2, data_format=fmt),
            keras.layers.Conv2DTranspose(3, 2, strides=2, data_format=fmt),
            keras.layers.GlobalAveragePooling2D(data_format=fmt),
            keras.layers.Dense(2)])
    first, last = cnn("channels_first"), cnn("channels_last")
    last.set_weights(first.get_weights())  # Keras keeps the kernel shapes in both formats
    np.testing.assert_allclose(first.predict(images, verbose=0),
                               last.predict(images.transpose(0, 2, 3, 1), verbose=0),
                               rtol=1e-5, atol=1e-6)
    # Flatten(channels_first) orders the features as channels_last does
    flat_first = keras.layers.Flatten(data_format="channels_first")(images)
    np.testing.assert_array_equal(flat_first, images.transpose(0, 2, 3, 1).reshape(3, -1))


def test_image_data_format_setting_and_errors():
    assert keras.backend.image_data_format() == "channels_last"
    keras.backend.set_image_data_format("channels_first")
    try:
        assert keras.layers.Conv2D(2, 3).data_format == "channels_first"
        assert keras.layers.Conv2D(2, 3)(np.ones((1, 3, 5, 5), "float32")).shape == (1, 2, 3, 3)
    finally:
        keras.backend.set_image_data_format("channels_last")
    with pytest.raises(ValueError, match="The `data_format` argument must be one of"):
        keras.layers.Conv2D(2, 3, data_format="NCHW")
    with pytest.raises(ValueError, match="must be one of"):
        keras.backend.set_image_data_format("channels_middle")
    conv = keras.layers.Conv2D(2, 3, data_format="channels_first")
    conv(np.ones((1, 3, 5, 5), "float32"))
    with pytest.raises(ValueError, match="expected axis 1 of input shape to have value 3"):
        conv(np.ones((1, 4, 5, 5), "float32"))
