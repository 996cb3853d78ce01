"""Keras's random image augmentation layers: ``RandomRotation``, ``RandomZoom``,
``RandomTranslation`` (one projective transform per image, ``image_transform``),
``RandomContrast`` and ``RandomBrightness``.

They act while training (their default, as in Keras: a model's ``fit`` and a plain call)
and pass the images through at inference (``predict``, ``training=False``); the geometric
ones still cast to the layer's dtype there, as Keras does. Inputs are one image
(3-D) or a batch (4-D), ``channels_last`` or ``channels_first``; each image of a batch
draws its own parameters. They compose differentiable ops, so a ``GradientTape`` gives
the exact derivative of the output with respect to the images.

>>> import numpy as np
>>> from tapegrad import keras
>>> rotate = keras.layers.RandomRotation(0.1, seed=1)
>>> images = np.ones((2, 8, 8, 3), "float32")
>>> rotate(images).shape, bool((rotate(images, training=False).numpy() == images).all())
(TensorShape([2, 8, 8, 3]), True)
"""
import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend, random
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.image_transform import (FILL_MODES, INTERPOLATIONS,
                                                   projective_transform, rotation_matrix,
                                                   translation_matrix, zoom_matrix)


class ImageLayer(Layer):
    """What Keras's image preprocessing layers share: ``data_format``, a ``seed`` (an
    own generator, or the global one), the rank check, and the image axes."""

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.data_format = backend.standardize_data_format(data_format)
        self._seeds = random.SeedGenerator(seed) if seed is not None else None

    def _images(self, inputs):
        """The inputs as a tensor, and whether they are one image (rank 3)."""
        x = tf.convert_to_tensor(inputs)
        if len(x.shape) not in (3, 4):
            raise ValueError("Expected image tensor to have rank 3 (single image) or 4 "
                             f"(batch of images). Received: data.shape={tuple(x.shape)}")
        return x, len(x.shape) == 3

    def _hw_axes(self, rank):
        return (rank - 2, rank - 1) if self.data_format == "channels_first" else (
            rank - 3, rank - 2)

    def _uniform(self, shape, low, high, dtype=None):
        return tf.random.uniform(shape, minval=low, maxval=high, dtype=dtype or tf.float32,
                                 seed=self._seeds.next() if self._seeds else None)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format, "seed": self.seed}


def factor_range(factor, bounds=(-1, 1)):
    """Keras's ``_set_factor``: a number f gives (max(-|f|, low), |f|), a pair is
    sorted; either must lie within ``bounds``."""
    message = ("The `factor` argument should be a number (or a list of two numbers) in "
               f"the range [{bounds[0]}, {bounds[1]}]. Received: factor={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(message)
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)):
        if factor < bounds[0] or factor > bounds[1]:
            raise ValueError(message)
        return max(-abs(factor), bounds[0]), abs(factor)
    raise ValueError(message)


def _axis_factor(factor, name, what, low_open):
    """RandomZoom's and RandomTranslation's factor: each bound in [-1, 1] ((-1, 1] for
    zoom)."""
    message = (f"The `{what}` argument{'s' if ' and ' in what else ''} should be a number "
               "(or a list of two numbers) in the range "
               f"{'(' if low_open else '['}-1.0, 1.0]. ")

    def check(v):
        if v > 1.0 or v < -1.0 or (low_open and v == -1.0):
            raise ValueError(message + f"Received: input_number={v}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(message + f"Received: {name}={factor}")
        check(factor[0])
        check(factor[1])
        return tuple(sorted(factor))
    if isinstance(factor, (int, float)):
        check(factor)
        return -abs(factor), abs(factor)
    raise ValueError(message + f"Received: {name}={factor}")


class _Transform(ImageLayer):
    """A layer that moves pixels by a random projective transform per image."""

    def __init__(self, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if fill_mode not in FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one "
                                      f"{FILL_MODES}.")
        if interpolation not in INTERPOLATIONS:
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected "
                                      f"of one {INTERPOLATIONS}.")
        self.fill_mode, self.interpolation, self.fill_value = (fill_mode, interpolation,
                                                               fill_value)

    def call(self, inputs, training=True):
        x, single = self._images(inputs)
        x = tf.cast(x, self._dtype)
        if not training:
            return x
        images = tf.expand_dims(x, 0) if single else x
        h_axis, w_axis = self._hw_axes(4)
        h, w = int(images.shape[h_axis]), int(images.shape[w_axis])
        transforms = self._transforms(int(images.shape[0]), h, w)
        out = projective_transform(images, transforms, self.interpolation, self.fill_mode,
                                   self.fill_value, self.data_format)
        return out[0] if single else out

    def get_config(self):
        return {**super().get_config(), "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "interpolation": self.interpolation}


class RandomRotation(_Transform):
    """Rotates each image by a random angle in ``factor`` (fractions of a full turn:
    0.1 is up to 36 degrees either way; positive is counter-clockwise) about its centre.

    >>> import numpy as np
    >>> from tapegrad import keras
    >>> keras.layers.RandomRotation((0.2, 0.3)).factor
    (0.2, 0.3)
    """

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.factor = factor_range(factor or 0.0)

    def _transforms(self, n, h, w):
        angle = self._uniform([n], self.factor[0] * 360.0, self.factor[1] * 360.0)
        return rotation_matrix(angle, h, w)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class RandomZoom(_Transform):
    """Zooms each image about its centre by a random factor: ``height_factor`` (and
    ``width_factor``, or the same zoom on both axes when None) in (-1, 1]; a positive
    value zooms out (the image appears smaller), a negative one zooms in."""

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        what = "height_factor` and `width_factor"
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _axis_factor(
            height_factor, "height_factor", what, True)
        if width_factor is not None:
            self.width_lower, self.width_upper = _axis_factor(
                width_factor, "width_factor", what, True)

    def _transforms(self, n, h, w):
        height_zoom = self._uniform([n], 1.0 + self.height_lower, 1.0 + self.height_upper)
        width_zoom = height_zoom if self.width_factor is None else self._uniform(
            [n], 1.0 + self.width_lower, 1.0 + self.width_upper)
        return zoom_matrix(height_zoom, width_zoom, h, w)

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}


class RandomTranslation(_Transform):
    """Moves each image by a random fraction of its height (``height_factor``, positive
    is down) and width (``width_factor``, positive is right), each in [-1, 1]."""

    def __init__(self, height_factor, width_factor, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _axis_factor(
            height_factor, "height_factor", "factor", False)
        self.width_lower, self.width_upper = _axis_factor(
            width_factor, "width_factor", "factor", False)

    def _transforms(self, n, h, w):
        dy = self._uniform([n], self.height_lower, self.height_upper) * np.float32(h)
        dx = self._uniform([n], self.width_lower, self.width_upper) * np.float32(w)
        return translation_matrix(dx, dy)

    def get_config(self):
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}


class _PerImage(ImageLayer):
    """A layer that changes each image's values by one random number per image."""

    def __init__(self, factor, value_range=(0, 255), seed=None, bounds=(-1, 1), **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.factor = factor_range(factor or 0.0, bounds)
        self.value_range = value_range

    def call(self, inputs, training=True):
        x, single = self._images(inputs)
        if not training:
            return x
        if x.dtype.kind != "f":  # Keras fails (contrast) or wraps around (brightness)
            x = tf.cast(x, self._dtype)
        n = 1 if single else int(x.shape[0])
        shape = [1, 1, 1] if single else [n, 1, 1, 1]
        out = self._apply(x, shape)
        return tf.clip_by_value(out, tf.cast(self.value_range[0], out.dtype),
                                tf.cast(self.value_range[1], out.dtype))

    def get_config(self):
        return {**super().get_config(), "factor": self.factor,
                "value_range": self.value_range}


class RandomContrast(_PerImage):
    """Scales each image's distance from its mean (per channel) by a random factor in
    ``[1 - lower, 1 + upper]`` of ``factor`` (Keras 3.15 reads a number f as
    (0, f): the contrast only grows), then clips to ``value_range``."""
    _config_omits = ("bounds",)

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        super().__init__(factor, value_range, seed, bounds=(0, 1), **kwargs)

    def _apply(self, x, shape):
        h_axis, w_axis = self._hw_axes(len(x.shape))
        factor = self._uniform(shape, 1.0 - self.factor[0], 1.0 + self.factor[1],
                               dtype=x.dtype)
        mean = tf.reduce_mean(tf.reduce_mean(x, axis=h_axis, keepdims=True), axis=w_axis,
                              keepdims=True)
        return (x - mean) * factor + mean


class RandomBrightness(_PerImage):
    """Adds to each image a random ``delta * (high - low)`` of its ``value_range``, delta
    in ``factor``'s range (a number f: [-f, f]), then clips to the range."""
    _config_omits = ("bounds",)

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
            raise ValueError("The `value_range` argument should be a list of two numbers. "
                             f"Received: value_range={value_range}")
        super().__init__(factor, sorted(value_range), seed, **kwargs)

    def _apply(self, x, shape):
        span = self.value_range[1] - self.value_range[0]
        delta = self._uniform(shape, self.factor[0], self.factor[1]) * np.float32(span)
        return x + tf.cast(delta, x.dtype)
