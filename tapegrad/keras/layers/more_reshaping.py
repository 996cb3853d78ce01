"""More shape layers: ``ZeroPadding1D``, ``UpSampling1D``, ``Cropping1D``, ``Cropping2D``.

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.layers.Cropping2D(((1, 0), (0, 2)))(np.ones((1, 4, 5, 3))).shape
TensorShape([1, 3, 3, 3])
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec


def _two(value, name):
    """An int or a pair of non-negative ints as a pair (Keras's standardize_tuple)."""
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, int) and v >= 0 for v in pair):
        raise ValueError(f"The `{name}` argument must be a tuple of 2 integers. Received "
                         f"{name}={value}")
    return pair


class ZeroPadding1D(Layer):
    """Zeros before and after the steps of a ``(batch, steps, features)`` tensor."""

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        self.padding = _two(padding, "padding")
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        pad = [[0, 0], [0, 0], list(self.padding)] if self.data_format == "channels_first" \
            else [[0, 0], list(self.padding), [0, 0]]
        return tf.pad(inputs, pad)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding,
                "data_format": self.data_format}


class UpSampling1D(Layer):
    """Repeats each step ``size`` times."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError(f"Expected an integer value for `size`, got {type(size)}.")
        if size <= 0:
            raise ValueError(f"Argument `size` should be a positive integer. Received: "
                             f"size={size}")
        self.size = size
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        b, n, f = inputs.shape
        x = tf.broadcast_to(tf.reshape(inputs, (b, n, 1, f)), (b, n, self.size, f))
        return tf.reshape(x, (b, n * self.size, f))

    def get_config(self):
        return {**super().get_config(), "size": self.size}


def _crop(x, axis, before, after, layer):
    n = x.shape[axis]
    if before + after >= n:
        raise ValueError(f"`cropping` parameter of `{layer}` layer must be smaller than the "
                         f"input length. Received: inputs.shape={tuple(x.shape)}, "
                         f"cropping={(before, after)}")
    index = [slice(None)] * x.ndim
    index[axis] = slice(before, n - after)
    return x[tuple(index)]


class Cropping1D(Layer):
    """Drops ``cropping = (before, after)`` steps of a ``(batch, steps, features)`` tensor."""

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(**kwargs)
        self.cropping = _two(cropping, "cropping")
        self.input_spec = InputSpec(ndim=3)

    def call(self, inputs):
        return _crop(inputs, 1, *self.cropping, "Cropping1D")

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping}


class Cropping2D(Layer):
    """Drops rows and columns: ``cropping`` is an int, ``(rows, cols)`` (symmetric) or
    ``((top, bottom), (left, right))``."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        if isinstance(cropping, int):
            if cropping < 0:
                raise ValueError(f"`cropping` cannot be negative. Received: "
                                 f"cropping={cropping}.")
            cropping = (cropping, cropping)
        if not hasattr(cropping, "__len__") or len(cropping) != 2:
            raise ValueError(f"`cropping` should have two elements. Received: "
                             f"cropping={cropping}.")
        self.cropping = (_two(cropping[0], "1st entry of cropping"),
                         _two(cropping[1], "2nd entry of cropping"))
        self.input_spec = InputSpec(ndim=4)

    def call(self, inputs):
        first = 2 if self.data_format == "channels_first" else 1
        x = _crop(inputs, first, *self.cropping[0], "Cropping2D")
        return _crop(x, first + 1, *self.cropping[1], "Cropping2D")

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping,
                "data_format": self.data_format}
