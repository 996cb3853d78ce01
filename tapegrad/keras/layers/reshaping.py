"""Spatial reshaping layers: ``ZeroPadding2D``, ``UpSampling2D``,
``Permute``, ``RepeatVector``.

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.layers.UpSampling2D()(np.ones((1, 2, 3, 4))).shape
TensorShape([1, 4, 6, 4])
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec


def _pair(value, name):
    if isinstance(value, int):
        return ((value, value), (value, value))
    if len(value) != 2:
        raise ValueError(f"`{name}` should have two elements. Received: {name}={value}.")
    return tuple((v, v) if isinstance(v, int) else tuple(v) for v in value)


class ZeroPadding2D(Layer):
    """Zero rows and columns around the images of a ``(batch, h, w, c)`` tensor."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        self.padding = _pair(padding, "padding")
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        (top, bottom), (left, right) = self.padding
        if self.data_format == "channels_first":
            return tf.pad(inputs, [[0, 0], [0, 0], [top, bottom], [left, right]])
        return tf.pad(inputs, [[0, 0], [top, bottom], [left, right], [0, 0]])

    def get_config(self):
        return {**super().get_config(), "padding": self.padding,
                "data_format": self.data_format}


class UpSampling2D(Layer):
    """Repeats rows and columns ``size`` times (``interpolation='nearest'``), or resizes by
    ``size`` with bilinear interpolation (``'bilinear'``, TensorFlow's ``tf.image.resize``)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        if interpolation not in ("nearest", "bilinear"):
            raise NotImplementedError(f"UpSampling2D: interpolation='{interpolation}' is not "
                                      "implemented in tapegrad.keras ('nearest' and "
                                      "'bilinear' are).")
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.interpolation = interpolation
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        sh, sw = self.size
        if self.interpolation == "bilinear":  # Keras's: tf.image.resize, no antialiasing
            first = self.data_format == "channels_first"
            x = tf.transpose(inputs, (0, 2, 3, 1)) if first else inputs
            x = tf.image.resize(x, (x.shape[1] * sh, x.shape[2] * sw), method="bilinear")
            return tf.transpose(x, (0, 3, 1, 2)) if first else x
        if self.data_format == "channels_first":
            b, c, h, w = inputs.shape
            x = tf.reshape(inputs, (b, c, h, 1, w, 1))
            x = tf.broadcast_to(x, (b, c, h, sh, w, sw))
            return tf.reshape(x, (b, c, h * sh, w * sw))
        b, h, w, c = inputs.shape
        x = tf.reshape(inputs, (b, h, 1, w, 1, c))
        x = tf.broadcast_to(x, (b, h, sh, w, sw, c))
        return tf.reshape(x, (b, h * sh, w * sw, c))

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}


class Permute(Layer):
    """Permutes the non-batch axes: ``dims`` counts from 1."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError("Invalid permutation argument `dims` for Permute Layer. The set "
                             "of indices in `dims` must be consecutive and start from 1. "
                             f"Received dims={dims}")

    def call(self, inputs):
        return tf.transpose(inputs, (0,) + self.dims)


class RepeatVector(Layer):
    """``(batch, d)`` to ``(batch, n, d)``."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = n
        self.input_spec = InputSpec(ndim=2)

    def call(self, inputs):
        return tf.tile(tf.expand_dims(inputs, 1), [1, self.n, 1])
