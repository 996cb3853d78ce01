"""Depthwise and separable convolutions: ``DepthwiseConv1D/2D``, ``SeparableConv1D/2D``.

Both are grouped convolutions (``keras.ops.depthwise_conv``: one group per input channel), so
they differentiate to any order and compile like ``Conv2D``. The depthwise kernel has
Keras's shape ``kernel_size + (channels, depth_multiplier)``; output channel
``c * depth_multiplier + m`` is channel ``c`` convolved with its filter ``m``, as in
``tf.nn.depthwise_conv2d``. A separable convolution follows it with a pointwise
(``1 x 1``) convolution of kernel ``(1,) * rank + (channels * depth_multiplier, filters)``.

>>> import numpy as np
>>> from tapegrad import keras
>>> layer = keras.layers.SeparableConv2D(8, 3, padding="same", depth_multiplier=2)
>>> layer(np.ones((1, 6, 6, 3))).shape, [tuple(w.shape) for w in layer.weights]
(TensorShape([1, 6, 6, 8]), [(3, 3, 3, 2), (1, 1, 6, 8), (8,)])
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import activations, backend, initializers
from tapegrad.keras.layers.base import Layer
from tapegrad.keras import ops
from tapegrad.keras.layers.convolutional import _tuple
from tapegrad.keras.layers.input_spec import InputSpec


class _DepthwiseConv(Layer):
    rank = 2

    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.depth_multiplier = depth_multiplier
        self.kernel_size = _tuple(kernel_size, self.rank, "kernel_size")
        self.strides = _tuple(strides, self.rank, "strides")
        self.dilation_rate = _tuple(dilation_rate, self.rank, "dilation_rate")
        padding = str(padding).lower()
        if padding not in ("valid", "same"):
            raise ValueError("The `padding` argument must be one of 'valid', 'same'. "
                             f"Received: padding={padding}")
        self.padding = padding
        self.data_format = backend.standardize_data_format(data_format)
        self._cf = self.data_format == "channels_first"
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.depthwise_regularizer, self.bias_regularizer = (depthwise_regularizer,
                                                             bias_regularizer)
        self.depthwise_constraint, self.bias_constraint = depthwise_constraint, bias_constraint
        self.input_spec = InputSpec(min_ndim=self.rank + 2)
        if depth_multiplier is not None and depth_multiplier <= 0:
            raise ValueError("Invalid value for argument `depth_multiplier`. Expected a "
                             "strictly positive value. Received "
                             f"depth_multiplier={depth_multiplier}.")
        if not all(self.kernel_size):
            raise ValueError("The argument `kernel_size` cannot contain 0. Received "
                             f"kernel_size={self.kernel_size}.")
        if not all(self.strides):
            raise ValueError("The argument `strides` cannot contains 0. Received "
                             f"strides={self.strides}")

    def _channels(self, input_shape):
        return input_shape[1] if self._cf else input_shape[-1]

    def _build_depthwise(self, input_shape, weight_name):
        channels = self._channels(input_shape)
        self.input_spec = InputSpec(min_ndim=self.rank + 2,
                                    axes={1 if self._cf else -1: channels})
        kernel = self.add_weight(name=weight_name,
                                 shape=self.kernel_size + (channels, self.depth_multiplier),
                                 initializer=self.depthwise_initializer,
                                 regularizer=self.depthwise_regularizer,
                                 constraint=self.depthwise_constraint)
        return channels, kernel

    def _add_bias(self, width):
        if not self.use_bias:
            return None
        return self.add_weight(name="bias", shape=(width,), initializer=self.bias_initializer,
                               regularizer=self.bias_regularizer,
                               constraint=self.bias_constraint)

    def build(self, input_shape):
        channels, self.kernel = self._build_depthwise(input_shape, "kernel")
        self.bias = self._add_bias(channels * self.depth_multiplier)

    def _depthwise(self, inputs, kernel):
        # keras.ops' convolutions, as Keras's layers: they take strides and dilations > 1
        # together (Keras's Conv layers refuse them)
        return ops.depthwise_conv(inputs, kernel, self.strides, self.padding, self.data_format,
                                  self.dilation_rate)

    def _finish(self, x):
        if self.bias is not None:
            width = self.bias.shape[0]
            x = x + (tf.reshape(self.bias, (width,) + (1,) * self.rank) if self._cf
                     else self.bias)
        return self.activation(x)

    def call(self, inputs):
        return self._finish(self._depthwise(inputs, self.kernel))

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate,
                "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias}


class DepthwiseConv1D(_DepthwiseConv):
    """Each channel of ``(batch, steps, channels)`` convolved with its own filters."""
    rank = 1


class DepthwiseConv2D(_DepthwiseConv):
    """Each channel of ``(batch, height, width, channels)`` convolved with its own filters.

    >>> import numpy as np
    >>> from tapegrad import keras
    >>> keras.layers.DepthwiseConv2D(3, depth_multiplier=2)(np.ones((1, 5, 5, 3))).shape
    TensorShape([1, 3, 3, 6])
    """
    rank = 2

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), **kwargs):
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, **kwargs)


class _SeparableConv(_DepthwiseConv):
    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None,
                 **kwargs):
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, activation, use_bias, depthwise_initializer,
                         bias_initializer, depthwise_regularizer, bias_regularizer,
                         activity_regularizer, depthwise_constraint, bias_constraint, **kwargs)
        if filters is not None and filters <= 0:
            raise ValueError("Invalid value for argument `filters`. Expected a strictly "
                             f"positive value. Received filters={filters}.")
        self.filters = filters
        self.pointwise_initializer = initializers.get(pointwise_initializer)
        self.pointwise_regularizer = pointwise_regularizer
        self.pointwise_constraint = pointwise_constraint

    def build(self, input_shape):
        channels, self.depthwise_kernel = self._build_depthwise(input_shape, "depthwise_kernel")
        self.pointwise_kernel = self.add_weight(
            name="pointwise_kernel",
            shape=(1,) * self.rank + (channels * self.depth_multiplier, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint)
        self.bias = self._add_bias(self.filters)

    def call(self, inputs):
        return self._finish(ops.separable_conv(
            inputs, self.depthwise_kernel, self.pointwise_kernel, self.strides, self.padding,
            self.data_format, self.dilation_rate))

    def get_config(self):
        return {**super().get_config(), "filters": self.filters}


class SeparableConv1D(_SeparableConv):
    """A depthwise 1D convolution followed by a pointwise one."""
    rank = 1


class SeparableConv2D(_SeparableConv):
    """A depthwise 2D convolution followed by a pointwise (1 x 1) one."""
    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1), **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         **kwargs)


SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D
