"""Shape layers of volumes (``(batch, depth, height, width, channels)``, as a 3-D U-Net or a
CT-scan classifier uses them): ``UpSampling3D``, ``ZeroPadding3D``, ``Cropping3D``.

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.layers.UpSampling3D((1, 2, 2))(np.ones((1, 2, 3, 3, 4))).shape
TensorShape([1, 2, 6, 6, 4])
>>> keras.layers.Cropping3D(((1, 0), 1, (0, 2)))(np.ones((1, 4, 5, 6, 2))).shape
TensorShape([1, 3, 3, 4, 2])
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec


def _three_pairs(value, name):
    """An int, three ints or three (before, after) pairs as three pairs (Keras's forms)."""
    if isinstance(value, int):
        value = (value,) * 3
    if not hasattr(value, "__len__") or len(value) != 3:
        raise ValueError(f"`{name}` should have 3 elements. Received: {name}={value}.")
    pairs = tuple((v, v) if isinstance(v, int) else tuple(v) for v in value)
    if any(len(p) != 2 or not all(isinstance(v, int) and v >= 0 for v in p) for p in pairs):
        raise ValueError(f"`{name}` should be an int, a tuple of 3 ints or a tuple of 3 tuples "
                         f"of 2 non-negative ints. Received: {name}={value}.")
    return pairs


def _spatial_axes(data_format):
    return (2, 3, 4) if data_format == "channels_first" else (1, 2, 3)


class UpSampling3D(Layer):
    """Repeats each voxel ``size = (d, h, w)`` times along the three spatial axes."""

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        size = (size,) * 3 if isinstance(size, int) else tuple(size)
        if len(size) != 3 or not all(isinstance(s, int) and s > 0 for s in size):
            raise ValueError(f"The `size` argument must be a tuple of 3 positive integers. "
                             f"Received: size={size}")
        self.size = size
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        x = inputs
        for axis, times in zip(_spatial_axes(self.data_format), self.size):
            if times != 1:
                x = tf.repeat(x, times, axis=axis)
        return x

    def get_config(self):
        return {**super().get_config(), "size": self.size, "data_format": self.data_format}


class ZeroPadding3D(Layer):
    """Zeros before and after each spatial axis of a volume."""

    def __init__(self, padding=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        self.padding = _three_pairs(padding, "padding")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        pad = [[0, 0]] * 5
        for axis, pair in zip(_spatial_axes(self.data_format), self.padding):
            pad[axis] = list(pair)
        return tf.pad(inputs, pad)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding,
                "data_format": self.data_format}


class Cropping3D(Layer):
    """Drops ``(before, after)`` voxels of each spatial axis of a volume."""

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        self.cropping = _three_pairs(cropping, "cropping")
        self.input_spec = InputSpec(ndim=5)

    def call(self, inputs):
        index = [slice(None)] * 5
        for axis, (before, after) in zip(_spatial_axes(self.data_format), self.cropping):
            n = inputs.shape[axis]
            if n is not None and before + after >= n:
                raise ValueError(f"`cropping` parameter of `Cropping3D` layer must be smaller "
                                 f"than the input length. Received: "
                                 f"inputs.shape={tuple(inputs.shape)}, "
                                 f"cropping={self.cropping}")
            index[axis] = slice(before, n - after)
        return inputs[tuple(index)]

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping,
                "data_format": self.data_format}
