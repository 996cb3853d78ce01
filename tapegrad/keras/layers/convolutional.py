"""Convolution layers: ``Conv1D/2D/3D`` and their transposes ``Conv1D/2D/3DTranspose``, on
``tf.nn.convolution`` and ``tf.nn.conv*d_transpose``, with Keras 3's weight shapes and
output sizes. ``data_format='channels_first'`` takes ``(batch, channels, ...)`` inputs
(the kernel keeps its shape, as in Keras).

>>> import numpy as np
>>> from tapegrad import keras
>>> conv = keras.layers.Conv2D(4, 3, padding="same", activation="relu")
>>> conv(np.ones((2, 8, 8, 3))).shape, conv.kernel.shape
(TensorShape([2, 8, 8, 4]), TensorShape([3, 3, 3, 4]))
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import activations, backend, initializers, ops
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec


def _tuple(value, rank, name):
    if isinstance(value, int):
        return (value,) * rank
    value = tuple(int(v) for v in value)
    if len(value) != rank:
        raise ValueError(f"The `{name}` argument must be a tuple of {rank} integers. "
                         f"Received {name}={value}")
    return value


_NC_FORMATS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


class _Conv(Layer):
    rank = 2

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.data_format = backend.standardize_data_format(data_format)
        self._cf = self.data_format == "channels_first"
        if not isinstance(filters, int) or filters <= 0:
            raise ValueError("Invalid value for argument `filters`. Expected a strictly "
                             f"positive value. Received filters={filters}.")
        self.filters, self.groups = filters, groups
        self.kernel_size = _tuple(kernel_size, self.rank, "kernel_size")
        self.strides = _tuple(strides, self.rank, "strides")
        self.dilation_rate = _tuple(dilation_rate, self.rank, "dilation_rate")
        padding = padding.lower()
        if padding not in ("valid", "same", "causal") or (padding == "causal" and
                                                            self.rank != 1):
            raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. "
                             f"Received: padding={padding}")
        if filters % groups:
            raise ValueError("The number of filters must be evenly divisible by the number "
                             f"of groups. Received: groups={groups}, filters={filters}.")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with "
                             f"`dilation_rate > 1`. Received: strides={self.strides} and "
                             f"dilation_rate={self.dilation_rate}")
        self.padding = padding
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(min_ndim=self.rank + 2)

    def _kernel_shape(self, channels):
        if channels % self.groups:
            raise ValueError("The number of input channels must be evenly divisible by the "
                             f"number of groups. Received groups={self.groups}, but the "
                             f"input has {channels} channels.")
        return self.kernel_size + (channels // self.groups, self.filters)

    def build(self, input_shape):
        channels_axis = 1 if self._cf else -1
        channels = input_shape[channels_axis]
        self.kernel = self.add_weight(name="kernel", shape=self._kernel_shape(channels),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=(self.filters,),
                                    initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={channels_axis: channels})

    def _convolve(self, inputs):
        padding = self.padding.upper()
        if self.padding == "causal":
            left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
            pads = [[0, 0], [0, 0], [left, 0]] if self._cf else [[0, 0], [left, 0], [0, 0]]
            inputs = tf.pad(inputs, pads)
            padding = "VALID"
        return tf.nn.convolution(inputs, self.kernel, strides=list(self.strides),
                                 padding=padding, dilations=list(self.dilation_rate),
                                 data_format=_NC_FORMATS[self.rank] if self._cf else None)

    def call(self, inputs):
        x = self._convolve(inputs)
        if self.bias is not None:
            x = x + (tf.reshape(self.bias, (self.filters,) + (1,) * self.rank) if self._cf
                     else self.bias)
        return self.activation(x)

    def get_config(self):
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "groups": self.groups,
                "activation": activations.serialize(self.activation),
                "use_bias": self.use_bias}


class Conv1D(_Conv):
    """1D convolution over ``(batch, steps, channels)``; ``padding='causal'`` pads the left."""
    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, **kwargs)


class Conv2D(_Conv):
    """2D convolution over ``(batch, height, width, channels)``."""
    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, **kwargs)


class Conv3D(_Conv):
    """3D convolution over ``(batch, depth, height, width, channels)``."""
    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", **kwargs):
        super().__init__(filters, kernel_size, strides=strides, padding=padding, **kwargs)


class _ConvTranspose(_Conv):
    """The transpose (gradient) of a convolution: upsamples by ``strides``."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid",
                 output_padding=None, **kwargs):
        if str(padding).lower() == "causal":
            raise ValueError("The `padding` argument must be one of 'valid', 'same'. "
                             f"Received: padding={padding}")
        super().__init__(filters, kernel_size, strides=strides, padding=padding, **kwargs)
        self.output_padding = None if output_padding is None else _tuple(
            output_padding, self.rank, "output_padding")
        if self.output_padding is not None:
            for op, s in zip(self.output_padding, self.strides):
                if op >= s:
                    raise ValueError(f"Strides {self.strides} must be greater than output "
                                     f"padding {self.output_padding}.")

    def _kernel_shape(self, channels):
        return self.kernel_size + (self.filters, channels)

    def _convolve(self, inputs):
        return ops.conv_transpose(inputs, self.kernel, self.strides, self.padding,
                                  self.output_padding, self.data_format, self.dilation_rate)

    def get_config(self):
        config = {**super().get_config(), "output_padding": self.output_padding}
        config.pop("groups")  # Keras's transposes have none
        return config


class Conv1DTranspose(_ConvTranspose):
    """The transpose of a 1D convolution, over ``(batch, steps, channels)``."""
    rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 **kwargs):
        super().__init__(filters, kernel_size, strides, padding, output_padding, **kwargs)


class Conv2DTranspose(_ConvTranspose):
    """The transpose of a 2D convolution, over ``(batch, height, width, channels)``."""
    rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 output_padding=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, output_padding, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    """The transpose of a 3D convolution (Keras's argument order: ``data_format`` before
    ``output_padding``)."""
    rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, output_padding=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, output_padding,
                         data_format=data_format, **kwargs)


Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution1DTranspose, Convolution2DTranspose, Convolution3DTranspose = (
    Conv1DTranspose, Conv2DTranspose, Conv3DTranspose)
