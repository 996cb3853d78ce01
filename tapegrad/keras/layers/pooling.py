"""Pooling layers (channels last). The global ones reduce over all spatial axes.

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.layers.GlobalAveragePooling2D()(np.ones((2, 3, 3, 4))).shape
(2, 4)
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec


class _GlobalPooling(Layer):
    rank = 2
    reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last"):
            raise NotImplementedError("tapegrad.keras supports data_format='channels_last' "
                                      "only.")
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def call(self, inputs):
        axes = list(range(1, self.rank + 1))
        return type(self).reduce(inputs, axis=axes, keepdims=self.keepdims)


class GlobalAveragePooling1D(_GlobalPooling):
    rank, reduce = 1, tf.reduce_mean


class GlobalAveragePooling2D(_GlobalPooling):
    rank, reduce = 2, tf.reduce_mean


class GlobalMaxPooling1D(_GlobalPooling):
    rank, reduce = 1, tf.reduce_max


class GlobalMaxPooling2D(_GlobalPooling):
    rank, reduce = 2, tf.reduce_max
