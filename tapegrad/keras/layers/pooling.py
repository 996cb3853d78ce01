"""Pooling layers, on ``tf.nn``'s pools; the global ones reduce over all spatial axes.
``data_format='channels_first'`` takes ``(batch, channels, ...)`` inputs.

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.layers.GlobalAveragePooling2D()(np.ones((2, 3, 3, 4))).shape
TensorShape([2, 4])
>>> keras.layers.MaxPooling2D()(np.ones((2, 4, 5, 3))).shape
TensorShape([2, 2, 2, 3])
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec


class _Pooling(Layer):
    rank = 2
    op = None

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        r = self.rank
        self.pool_size = (pool_size,) * r if isinstance(pool_size, int) else tuple(pool_size)
        strides = self.pool_size if strides is None else strides
        self.strides = (strides,) * r if isinstance(strides, int) else tuple(strides)
        padding = padding.lower()
        if padding not in ("valid", "same"):
            raise ValueError("The `padding` argument must be one of 'valid', 'same'. "
                             f"Received: padding={padding}")
        self.padding = padding
        self.input_spec = InputSpec(ndim=r + 2)

    def call(self, inputs):
        nc = self.data_format == "channels_first"
        return type(self).op(inputs, list(self.pool_size), list(self.strides),
                             self.padding.upper(), ("NCW", "NCHW", "NCDHW")[self.rank - 1] if nc
                             else ("NWC", "NHWC", "NDHWC")[self.rank - 1])

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size,
                "strides": self.strides, "padding": self.padding,
                "data_format": self.data_format}


class MaxPooling1D(_Pooling):
    rank = 1

    @staticmethod
    def op(x, ksize, strides, padding, data_format):
        return tf.nn.max_pool1d(x, ksize, strides, padding, data_format)


class MaxPooling2D(_Pooling):
    @staticmethod
    def op(x, ksize, strides, padding, data_format):
        return tf.nn.max_pool2d(x, ksize, strides, padding, data_format)


class AveragePooling1D(_Pooling):
    rank = 1

    def __init__(self, pool_size, strides=None, padding="valid", **kwargs):
        super().__init__(pool_size, strides, padding, **kwargs)  # no default size (Keras)

    @staticmethod
    def op(x, ksize, strides, padding, data_format):
        return tf.nn.avg_pool1d(x, ksize, strides, padding, data_format)


class AveragePooling2D(_Pooling):
    def __init__(self, pool_size, strides=None, padding="valid", **kwargs):
        super().__init__(pool_size, strides, padding, **kwargs)

    @staticmethod
    def op(x, ksize, strides, padding, data_format):
        return tf.nn.avg_pool2d(x, ksize, strides, padding, data_format)


class MaxPooling3D(_Pooling):
    rank = 3

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", **kwargs):
        super().__init__(pool_size, strides, padding, **kwargs)

    @staticmethod
    def op(x, ksize, strides, padding, data_format):
        return tf.nn.max_pool3d(x, ksize, strides, padding, data_format)


class AveragePooling3D(_Pooling):
    rank = 3

    def __init__(self, pool_size, strides=None, padding="valid", **kwargs):
        super().__init__(pool_size, strides, padding, **kwargs)

    @staticmethod
    def op(x, ksize, strides, padding, data_format):
        return tf.nn.avg_pool3d(x, ksize, strides, padding, data_format)


MaxPool1D, MaxPool2D, MaxPool3D, AvgPool1D, AvgPool2D, AvgPool3D = (
    MaxPooling1D, MaxPooling2D, MaxPooling3D, AveragePooling1D, AveragePooling2D,
    AveragePooling3D)


class _GlobalPooling(Layer):
    rank = 2
    reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        if type(self).reduce is tf.reduce_mean and inputs.dtype.kind in "iub":
            inputs = tf.cast(inputs, "float32")  # Keras's mean of integers is float32
        first = 2 if self.data_format == "channels_first" else 1
        axes = list(range(first, first + self.rank))
        return type(self).reduce(inputs, axis=axes, keepdims=self.keepdims)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


class GlobalAveragePooling1D(_GlobalPooling):
    """The mean over the steps; with a mask (``(batch, steps)``, from an
    ``Embedding(mask_zero=True)`` say) the mean of the unmasked steps only."""
    rank, reduce = 1, tf.reduce_mean

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(data_format=data_format, keepdims=keepdims, **kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            return super().call(inputs)
        cf = self.data_format == "channels_first"
        steps = 2 if cf else 1
        keep = tf.cast(tf.expand_dims(mask, 1 if cf else 2), "bool")
        inputs = tf.where(keep, inputs, tf.zeros_like(inputs))
        weights = tf.cast(keep, inputs.dtype)
        return (tf.reduce_sum(inputs, axis=steps, keepdims=self.keepdims)
                / tf.reduce_sum(weights, axis=steps, keepdims=self.keepdims))

    def compute_mask(self, inputs, previous_mask=None):
        return None


class GlobalAveragePooling2D(_GlobalPooling):
    rank, reduce = 2, tf.reduce_mean


class GlobalMaxPooling1D(_GlobalPooling):
    rank, reduce = 1, tf.reduce_max


class GlobalMaxPooling2D(_GlobalPooling):
    rank, reduce = 2, tf.reduce_max


class GlobalAveragePooling3D(_GlobalPooling):
    rank, reduce = 3, tf.reduce_mean


class GlobalMaxPooling3D(_GlobalPooling):
    rank, reduce = 3, tf.reduce_max
