"""``keras.ops``' convolutions and pools, with Keras 3's arguments: ``padding`` is
``'valid'`` or ``'same'``, ``data_format`` ``'channels_last'`` (the default) or
``'channels_first'``, strides and sizes an int or one per spatial axis; the rank comes
from the input (``inputs.ndim - 2`` spatial axes). Kernels have Keras's shapes:
``conv`` ``(K..., C_in / groups, C_out)``, ``depthwise_conv`` ``(K..., C, multiplier)``,
``conv_transpose`` ``(K..., C_out, C_in)``.

>>> import numpy as np
>>> from tapegrad.keras import ops
>>> ops.depthwise_conv(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 2)), padding="same").shape
TensorShape([1, 5, 5, 6])
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend

_NC = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_NL = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


def _setup(inputs, padding, data_format):
    x = tf.convert_to_tensor(inputs)
    rank = x.ndim - 2
    if rank not in (1, 2, 3):
        raise ValueError(f"Inputs to convolutions and pools must have 3, 4 or 5 dimensions "
                         f"(batch, spatial axes, channels). Received: inputs.shape="
                         f"{tuple(x.shape)}")
    padding = str(padding).lower()
    if padding not in ("valid", "same"):
        raise ValueError("The `padding` argument must be one of 'valid', 'same'. Received: "
                         f"padding={padding}")
    cf = backend.standardize_data_format(data_format) == "channels_first"
    return x, rank, padding.upper(), (_NC if cf else _NL)[rank], cf


def _per_axis(value, rank):
    return [int(value)] * rank if isinstance(value, int) else [int(v) for v in value]


def _convolve(x, kernel, rank, strides, padding, fmt, dilation_rate):
    # tf.nn.conv1d/2d/3d (not convolution, which refuses strides and dilations > 1 together:
    # Keras's backend takes them)
    if rank == 3:
        return tf.nn.conv3d(x, kernel, [1] + _per_axis(strides, 3) + [1], padding,
                            data_format=fmt, dilations=[1] + _per_axis(dilation_rate, 3) + [1])
    op = tf.nn.conv1d if rank == 1 else tf.nn.conv2d
    return op(x, kernel, _per_axis(strides, rank), padding, data_format=fmt,
              dilations=_per_axis(dilation_rate, rank))


def conv(inputs, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """An N-d convolution (cross-correlation); a kernel of fewer input channels than the
    input makes it grouped."""
    x, rank, padding, fmt, _ = _setup(inputs, padding, data_format)
    return _convolve(x, tf.convert_to_tensor(kernel, x.dtype), rank, strides, padding, fmt,
                     dilation_rate)


def depthwise_conv(inputs, kernel, strides=1, padding="valid", data_format=None,
                   dilation_rate=1):
    """Each input channel convolved with its own ``multiplier`` filters: output channel
    ``c * multiplier + m`` (one group per input channel)."""
    x, rank, padding, fmt, _ = _setup(inputs, padding, data_format)
    k = tf.convert_to_tensor(kernel, x.dtype)
    shape = tuple(k.shape)
    grouped = tf.reshape(k, shape[:-2] + (1, shape[-2] * shape[-1]))
    return _convolve(x, grouped, rank, strides, padding, fmt, dilation_rate)


def separable_conv(inputs, depthwise_kernel, pointwise_kernel, strides=1, padding="valid",
                   data_format=None, dilation_rate=1):
    """``depthwise_conv`` followed by a pointwise (``1 x ... x 1``) ``conv``."""
    x = depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return conv(x, pointwise_kernel, 1, "valid", data_format, 1)


def deconv_output_length(length, kernel_size, padding, output_padding, stride, dilation):
    """Keras's output size of a transposed convolution along one axis."""
    kernel_size = kernel_size + (kernel_size - 1) * (dilation - 1)
    if output_padding is None:
        if padding == "valid":
            return length * stride + max(kernel_size - stride, 0)
        return length * stride
    pad = kernel_size // 2 if padding == "same" else 0
    return (length - 1) * stride + kernel_size - 2 * pad + output_padding


def conv_transpose(inputs, kernel, strides=1, padding="valid", output_padding=None,
                   data_format=None, dilation_rate=1):
    """The transpose (gradient) of ``conv``, its output size as Keras computes it."""
    x, rank, pad, fmt, cf = _setup(inputs, padding, data_format)
    k = tf.convert_to_tensor(kernel, x.dtype)
    strides, dilations = _per_axis(strides, rank), _per_axis(dilation_rate, rank)
    ops = [None] * rank if output_padding is None else _per_axis(output_padding, rank)
    spatial = x.shape[2:] if cf else x.shape[1:-1]
    sizes = [deconv_output_length(n, kk, pad.lower(), op, s, d) for n, kk, op, s, d in zip(
        spatial, k.shape[:rank], ops, strides, dilations)]
    filters = k.shape[-2]
    shape = [x.shape[0], filters] + sizes if cf else [x.shape[0]] + sizes + [filters]
    op = (tf.nn.conv1d_transpose, tf.nn.conv2d_transpose, tf.nn.conv3d_transpose)[rank - 1]
    return op(x, k, shape, strides=strides, padding=pad, data_format=fmt, dilations=dilations)


def _pool(op, inputs, pool_size, strides, padding, data_format):
    x, rank, padding, fmt, _ = _setup(inputs, padding, data_format)
    size = _per_axis(pool_size, rank)
    strides = size if strides is None else _per_axis(strides, rank)
    return op(x, size, strides, padding, data_format=fmt)


def max_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """The maximum of each window (``strides`` default to ``pool_size``)."""
    return _pool(tf.nn.max_pool, inputs, pool_size, strides, padding, data_format)


def average_pool(inputs, pool_size, strides=None, padding="valid", data_format=None):
    """The mean of each window; with ``'same'`` padding, of its part inside the input."""
    return _pool(tf.nn.avg_pool, inputs, pool_size, strides, padding, data_format)


def moments(x, axes, keepdims=False, synchronized=False):
    """The mean and (population) variance over ``axes``."""
    return tf.nn.moments(tf.convert_to_tensor(x), axes=list(axes) if not isinstance(
        axes, int) else [axes], keepdims=keepdims)


def normalize(x, axis=-1, order=2, epsilon=None):
    """``x`` divided by its ``order``-norm along ``axis``, as Keras 3: for ``order=2``,
    ``x * rsqrt(max(sum(x**2), epsilon**2))``, else ``x / max(norm, epsilon)``
    (``epsilon`` defaults to ``keras.config.epsilon()``).

    >>> from tapegrad.keras import ops
    >>> ops.normalize([[3.0, 4.0]]).numpy().astype(float).round(3).tolist()
    [[0.6, 0.8]]
    """
    if not isinstance(order, int) or not order >= 1:
        raise ValueError(f"Argument `order` must be an int >= 1. Received: order={order}")
    x = tf.convert_to_tensor(x)
    if x.ndim == 0:
        x = tf.expand_dims(x, 0)
    eps = backend.epsilon() if epsilon is None else epsilon
    if order == 2:
        square_sum = tf.reduce_sum(tf.square(x), axis=axis, keepdims=True)
        return x * tf.math.rsqrt(tf.maximum(square_sum, tf.cast(eps * eps, x.dtype)))
    norm = tf.norm(x, ord=order, axis=axis, keepdims=True)
    return x / tf.maximum(norm, tf.cast(eps, x.dtype))


__all__ = ["conv", "depthwise_conv", "separable_conv", "conv_transpose", "max_pool",
           "average_pool", "moments", "normalize"]
