"""Keras's image preprocessing layers (Resizing, CenterCrop, RandomCrop, RandomRotation,
RandomZoom, RandomTranslation, RandomContrast, RandomBrightness, RandomFlip) and their
projective transform: the same numbers as Keras 3.15 / TensorFlow 2.21 on the cases of
tests/data/keras_image_reference.npz (written by benchmarks/keras_image_reference.py; the
geometric layers there have one-point factor ranges, so their parameters are fixed),
exact geometric identities, per-image randomness, inference, gradients and the image
tutorial's model. TensorFlow is never imported here."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.keras import layers
from tapegrad.keras.layers.image_transform import (projective_transform, rotation_matrix,
                                                   translation_matrix, zoom_matrix)

DATA = np.load(pathlib.Path(__file__).parent / "data" / "keras_image_reference.npz",
               allow_pickle=False)
MANIFEST = json.loads(str(DATA["manifest"]))
MODES = ("reflect", "wrap", "constant", "nearest")


def _config(config):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in config.items()}


@pytest.mark.parametrize("case", MANIFEST["layers"], ids=lambda c: c["name"])
def test_layers_match_keras(case):
    layer = getattr(layers, case["class"])(**_config(case["config"]))
    x = DATA[f"layer/{case['name']}/input"]
    out = layer(x, training=True).numpy()
    expected = DATA[f"layer/{case['name']}/output"]
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)
    if x.ndim == 4:  # a functional model gets the same shape
        assert tuple(layer(keras.Input(batch_shape=x.shape)).shape) == out.shape


@pytest.mark.parametrize("key", MANIFEST["transforms"])
def test_transform_matches_tensorflow(key):
    name, interpolation, fill_mode = key.split("/")
    out = projective_transform(DATA["transform/images"], DATA[f"transform/{name}"],
                               interpolation, fill_mode, 0.5)
    np.testing.assert_array_equal(out.numpy(), DATA[f"transform_out/{key}"])


def test_matrices_match_keras():
    angle = tf.constant(DATA["matrix/rotation/angle"])
    np.testing.assert_array_equal(rotation_matrix(angle, 5, 7).numpy(),
                                  DATA["matrix/rotation"])
    zooms = DATA["matrix/zoom/zooms"]
    np.testing.assert_array_equal(
        zoom_matrix(tf.constant(zooms[:, 1]), tf.constant(zooms[:, 0]), 6, 9).numpy(),
        DATA["matrix/zoom"])
    shifts = DATA["matrix/translation/shifts"]
    np.testing.assert_array_equal(
        translation_matrix(tf.constant(shifts[:, 0]), tf.constant(shifts[:, 1])).numpy(),
        DATA["matrix/translation"])


def _image(shape=(1, 5, 5, 2), seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


@pytest.mark.parametrize("turns,k", [(0.25, 1), (0.5, 2), (-0.25, 3)])
def test_quarter_turns_are_rot90(turns, k):
    x = _image()
    nearest = layers.RandomRotation((turns, turns), interpolation="nearest")(x)
    np.testing.assert_array_equal(nearest.numpy(), np.rot90(x, k, axes=(1, 2)))
    # bilinear: cos(pi / 2) is -4e-8 in float32, so the points are off by about 1e-7
    bilinear = layers.RandomRotation((turns, turns))(x)
    np.testing.assert_allclose(bilinear.numpy(), np.rot90(x, k, axes=(1, 2)), atol=1e-5)


# TensorFlow's fill modes as NumPy paddings; its wrap is exact for shifts up to size - 2
# (beyond, it clamps: the "far" transforms above check that rule against TensorFlow)
PADS = {"reflect": "symmetric", "wrap": "wrap", "nearest": "edge", "constant": "constant"}


@pytest.mark.parametrize("fill_mode", MODES)
@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
@pytest.mark.parametrize("dx,dy", [(2, -1), (-3, 3), (0, 0), (4, 3), (-4, -2)])
def test_integer_shifts_are_padded_shifts(fill_mode, interpolation, dx, dy):
    x = _image((2, 5, 6, 1), seed=1)
    t = translation_matrix(tf.constant(np.float32([dx, dx])), tf.constant(np.float32([dy, dy])))
    out = projective_transform(x, t, interpolation, fill_mode, fill_value=-7.0).numpy()
    pad = 6
    kwargs = {"constant_values": -7.0} if fill_mode == "constant" else {}
    padded = np.pad(x, [(0, 0), (pad, pad), (pad, pad), (0, 0)], PADS[fill_mode], **kwargs)
    expected = padded[:, pad - dy:pad - dy + 5, pad - dx:pad - dx + 6]
    np.testing.assert_array_equal(out, expected)


def test_zoom_zero_and_translation_zero_are_the_identity():
    x = _image((3, 6, 7, 2), seed=2)
    for layer in (layers.RandomZoom(0.0), layers.RandomZoom(0.0, 0.0, fill_mode="constant"),
                  layers.RandomTranslation(0.0, 0.0), layers.RandomRotation(0.0)):
        np.testing.assert_array_equal(layer(x).numpy(), x)


def test_nan_inf_and_zero_projection():
    x = _image((1, 4, 4, 1), seed=3)
    x[0, 1, 1, 0] = np.nan
    shift = np.float32([[1, 0, 1, 0, 1, 0, 0, 0]])  # reads one pixel to the right
    out = projective_transform(x, shift, "nearest", "constant", 9.0).numpy()
    assert np.isnan(out[0, 1, 0, 0]) and np.isnan(out).sum() == 1
    assert (out[0, :, 3, 0] == 9.0).all()
    # k = 0 on the column x = 2: the fill value, as TensorFlow
    singular = np.float32([[1, 0, 0, 0, 1, 0, -0.5, 0]])
    out = projective_transform(np.ones((1, 3, 4, 1), "float32"), singular, "bilinear",
                               "reflect", 4.0).numpy()
    assert (out[0, :, 2, 0] == 4.0).all()


def test_channels_first_single_image_and_float64():
    x = _image((2, 5, 6, 3), seed=4)
    t = rotation_matrix(tf.constant(np.float32([20.0, -50.0])), 5, 6)
    last = projective_transform(x, t, "bilinear", "reflect").numpy()
    first = projective_transform(np.transpose(x, (0, 3, 1, 2)), t, "bilinear", "reflect",
                                 data_format="channels_first").numpy()
    np.testing.assert_array_equal(np.transpose(first, (0, 2, 3, 1)), last)
    wide = projective_transform(x.astype(np.float64), t, "bilinear", "reflect")
    assert wide.dtype == tf.float64  # interpolated in float32, as TensorFlow's kernel
    np.testing.assert_array_equal(wide.numpy(), last.astype(np.float64))
    single = layers.RandomRotation((0.1, 0.1))(x[0]).numpy()
    np.testing.assert_array_equal(single, layers.RandomRotation((0.1, 0.1))(x[:1]).numpy()[0])


@pytest.mark.parametrize("make", [lambda: layers.RandomRotation(0.2),
                                  lambda: layers.RandomZoom(0.3, 0.2),
                                  lambda: layers.RandomTranslation(0.3, 0.3),
                                  lambda: layers.RandomContrast(0.5),
                                  lambda: layers.RandomBrightness(0.3)])
def test_random_per_image_and_only_while_training(make):
    x = np.repeat(np.random.default_rng(5).uniform(0, 255, (1, 6, 6, 2)), 4, axis=0)
    x = x.astype(np.float32)
    layer = make()
    out = layer(x).numpy()
    assert len({out[i].tobytes() for i in range(4)}) == 4  # each image its own draw
    assert not np.array_equal(layer(x).numpy(), out)  # and each call
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    model = keras.Sequential([keras.Input((6, 6, 2)), layer])
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)
    seeded = [type(layer).from_config({**layer.get_config(), "seed": 7})(x).numpy()
              for _ in range(2)]
    np.testing.assert_array_equal(*seeded)
    f = tf.function(lambda images: layer(images))  # a trace draws anew on every call
    assert not np.array_equal(f(x).numpy(), f(x).numpy())


def test_contrast_and_brightness_rules():
    x = np.random.default_rng(6).uniform(50, 200, (8, 4, 5, 3)).astype(np.float32)
    out = layers.RandomContrast(0.5)(x).numpy()
    mean = x.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(out.mean(axis=(1, 2), keepdims=True), mean, rtol=1e-4)
    centred, scaled = x - mean, out - mean
    factor = (centred * scaled).sum(axis=(1, 2, 3)) / (centred ** 2).sum(axis=(1, 2, 3))
    np.testing.assert_allclose(scaled, factor[:, None, None, None] * centred, atol=2e-3)
    assert (factor >= 1 - 1e-5).all() and (factor <= 1.5 + 1e-5).all()  # (0, 0.5), as Keras
    assert len(set(np.round(factor, 4))) == 8
    clipped = layers.RandomContrast((0.9, 1.0), value_range=(60, 190))(x).numpy()
    assert clipped.min() >= 60 and clipped.max() <= 190
    delta = layers.RandomBrightness(0.25, value_range=(0, 1000))(x + 300).numpy() - (x + 300)
    np.testing.assert_allclose(delta, delta[:, :1, :1, :1] * np.ones_like(delta), atol=1e-3)
    assert (np.abs(delta) <= 250 + 1e-3).all()
    assert layers.RandomBrightness(0.9)(x).numpy().max() <= 255
    ints = layers.RandomBrightness(0.5)(x.astype(np.uint8)).numpy()
    assert ints.dtype == np.float32 and ints.min() >= 0 and ints.max() <= 255
    assert layers.RandomContrast(0.5)(x.astype(np.uint8), training=False).dtype == tf.uint8


def test_flip_as_keras():
    x = np.arange(2 * 3 * 4 * 1, dtype=np.uint8).reshape(2, 3, 4, 1)
    both = layers.RandomFlip()
    for _ in range(6):  # Keras 3.15: one coin per image flips both axes or neither
        out = both(x).numpy()
        assert out.dtype == np.float32
        for i in range(2):
            assert np.array_equal(out[i], x[i]) or np.array_equal(out[i], x[i, ::-1, ::-1])
    assert both(x, training=False).dtype == tf.float32
    first = layers.RandomFlip("vertical", data_format="channels_first", seed=3)
    out = first(np.transpose(x, (0, 3, 1, 2))).numpy()
    assert all(np.array_equal(o[0], x[i, :, :, 0]) or np.array_equal(o[0], x[i, ::-1, :, 0])
               for i, o in enumerate(out))
    with pytest.raises(ValueError, match="rank 3"):
        both(np.zeros((3, 4), np.float32))


def test_random_crop():
    x = np.random.default_rng(7).normal(size=(3, 7, 9, 2)).astype(np.float32)
    crop = layers.RandomCrop(4, 5)
    offsets = set()
    for _ in range(10):
        out = crop(x).numpy()
        found = [(i, j) for i in range(4) for j in range(5)
                 if np.array_equal(out, x[:, i:i + 4, j:j + 5])]
        assert len(found) == 1  # one offset for the batch, as in Keras
        offsets.add(found[0])
    assert len(offsets) > 1
    # inference, or an image not larger on both axes: the centred window of the target's
    # aspect ratio, resized (Keras's documented rule)
    expected = layers.Resizing(4, 5, crop_to_aspect_ratio=True)(x).numpy()
    np.testing.assert_array_equal(crop(x, training=False).numpy(), expected)
    np.testing.assert_array_equal(layers.RandomCrop(7, 4)(x).numpy(),
                                  layers.CenterCrop(7, 4)(x).numpy())
    assert layers.RandomCrop(10, 12)(x).shape == (3, 10, 12, 2)
    np.testing.assert_array_equal(layers.RandomCrop(7, 9)(x).numpy(), x)
    cf = layers.RandomCrop(4, 5, data_format="channels_first", seed=1)(
        np.transpose(x, (0, 3, 1, 2)))
    assert cf.shape == (3, 2, 4, 5)


def test_factor_and_argument_errors_as_keras():
    with pytest.raises(ValueError, match=r"in the range \[-1, 1\]. Received: factor=1.5"):
        layers.RandomRotation(1.5)
    for bad in [(0.1,), "a", (-2, -1.5)]:
        with pytest.raises(ValueError, match="The `factor` argument"):
            layers.RandomRotation(bad)
    assert layers.RandomRotation((0.5, -0.5)).factor == (-0.5, 0.5)
    with pytest.raises(ValueError, match=r"\(-1.0, 1.0\]. Received: input_number=-1.0"):
        layers.RandomZoom(-1.0)
    assert layers.RandomZoom(1.0).height_lower == -1.0
    with pytest.raises(ValueError, match="Received: input_number=2"):
        layers.RandomZoom(0.1, (0.1, 2))
    with pytest.raises(ValueError, match=r"\[-1.0, 1.0\]. Received: input_number=-1.5"):
        layers.RandomTranslation(0.1, -1.5)
    with pytest.raises(NotImplementedError, match="Unknown `fill_mode` x"):
        layers.RandomRotation(0.1, fill_mode="x")
    with pytest.raises(NotImplementedError, match="Unknown `interpolation` bicubic"):
        layers.RandomZoom(0.1, interpolation="bicubic")
    with pytest.raises(ValueError, match="in the range \\[0, 1\\]"):
        layers.RandomContrast(-0.2)
    with pytest.raises(ValueError, match="`value_range` argument"):
        layers.RandomBrightness(0.1, value_range=3)
    assert layers.RandomBrightness(0.1, value_range=(1, 0)).value_range == [0, 1]
    x = np.zeros((1, 4, 4, 1), np.float32)
    with pytest.raises(ValueError, match="Only one of"):
        layers.Resizing(2, 2, crop_to_aspect_ratio=True, pad_to_aspect_ratio=True)(x)
    with pytest.raises(ValueError, match="Invalid value for argument `interpolation`"):
        layers.Resizing(2, 2, interpolation="foo")(x)
    with pytest.raises(tf.errors.UnimplementedError):
        layers.Resizing(2, 2, interpolation="bicubic")(x)
    with pytest.raises(ValueError, match="rank 3 \\(single image\\) or 4"):
        layers.RandomRotation(0.1)(np.zeros((2, 3), np.float32))


def test_gradient_is_the_derivative_of_the_sampling():
    # linear in the images: central differences are exact up to float32 rounding
    x = _image((1, 4, 5, 1), seed=8).astype(np.float64)
    w = _image((1, 4, 5, 1), seed=9)
    t = np.float32([[1.3, 0.2, -0.6, -0.1, 0.8, 0.7, 0.0, 0.0]])
    for mode in MODES:
        def loss(images):
            return tf.reduce_sum(projective_transform(images, t, "bilinear", mode, 0.0) * w)
        xt = tf.constant(x.astype(np.float32))
        with tf.GradientTape() as tape:
            tape.watch(xt)
            value = loss(xt)
        grad = tape.gradient(value, xt).numpy()
        numeric = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[idx] = 0.5
            numeric[idx] = (loss(x + e).numpy() - loss(x - e).numpy()) / 1.0
        np.testing.assert_allclose(grad, numeric, atol=1e-5)
    # through a layer: a quarter turn (nearest) moves the cotangent back by the inverse
    images = tf.constant(_image((2, 5, 5, 1), seed=10))
    cotangent = _image((2, 5, 5, 1), seed=11)
    with tf.GradientTape() as tape:
        tape.watch(images)
        out = layers.RandomRotation((0.25, 0.25), interpolation="nearest")(images)
        value = tf.reduce_sum(out * cotangent)
    np.testing.assert_array_equal(tape.gradient(value, images).numpy(),
                                  np.rot90(cotangent, -1, axes=(1, 2)))
    resized = tf.constant(_image((1, 3, 4, 1), seed=11))
    with tf.GradientTape() as tape:
        tape.watch(resized)
        value = tf.reduce_sum(layers.Resizing(5, 7)(resized))
    assert tape.gradient(value, resized) is not None


def test_image_classification_tutorial_model(tmp_path):
    augmentation = keras.Sequential([layers.RandomFlip("horizontal"),
                                     layers.RandomRotation(0.1), layers.RandomZoom(0.1)])
    model = keras.Sequential([
        keras.Input((24, 24, 3)), augmentation, layers.Rescaling(1.0 / 255),
        layers.Conv2D(4, 3, padding="same", activation="relu"), layers.MaxPooling2D(),
        layers.Conv2D(8, 3, padding="same", activation="relu"), layers.MaxPooling2D(),
        layers.Dropout(0.2), layers.Flatten(), layers.Dense(16, activation="relu"),
        layers.Dense(3)])
    model.compile(optimizer="adam", metrics=["accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(12)
    x = rng.uniform(0, 255, (32, 24, 24, 3)).astype(np.float32)
    y = rng.integers(0, 3, 32)
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()
    predicted = model.predict(x[:6], verbose=0)
    np.testing.assert_array_equal(model.predict(x[:6], verbose=0), predicted)  # inactive
    path = tmp_path / "tutorial.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(x[:6], verbose=0), predicted)
    rotation = loaded.layers[0].layers[1]
    assert isinstance(rotation, layers.RandomRotation) and rotation.factor == (-0.1, 0.1)
    assert not np.array_equal(loaded.layers[0](x[:2]).numpy(), x[:2])  # active again
