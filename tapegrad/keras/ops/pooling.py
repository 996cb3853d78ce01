"""``keras.ops``' adaptive pools, ``unfold`` and ``fold`` (Keras 3's TensorFlow backend):
each adaptive window and each patch is a static gather, so they trace and differentiate.

>>> import numpy as np
>>> from tapegrad.keras import ops
>>> ops.adaptive_average_pool(np.arange(5.0).reshape(1, 5, 1), 2).numpy().ravel().tolist()
[1.0, 3.0]
"""
import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.ops.extra import _t
from tapegrad.ops.segment_ops import unsorted_segment_sum as _segment_sum

__all__ = ["adaptive_average_pool", "adaptive_max_pool", "unfold", "fold"]


def _adaptive(reduce, name, inputs, output_size, data_format):
    x = _t(inputs)
    rank = x.ndim - 2
    if rank not in (1, 2, 3):
        raise ValueError(f"{name} supports 1D, 2D, or 3D inputs only.")
    sizes = (output_size,) * rank if isinstance(output_size, int) else tuple(output_size)
    first = 2 if backend.standardize_data_format(data_format) == "channels_first" else 1
    for i, out in enumerate(sizes):
        axis, n = first + i, x.shape[first + i]
        # window j covers [floor(j n / out), ceil((j + 1) n / out)), as PyTorch's
        parts = [reduce(tf.gather(x, np.arange(j * n // out, -(-(j + 1) * n // out)), axis=axis),
                        axis=axis, keepdims=True) for j in range(out)]
        x = tf.concat(parts, axis=axis)
    return x


def adaptive_average_pool(inputs, output_size, data_format=None):
    """The mean over each of ``output_size`` near-equal windows per spatial axis (1, 2 or
    3 of them), whatever the input's size."""
    return _adaptive(tf.reduce_mean, "adaptive_average_pool", inputs, output_size, data_format)


def adaptive_max_pool(inputs, output_size, data_format=None):
    """The maximum over each of ``output_size`` near-equal windows per spatial axis."""
    return _adaptive(tf.reduce_max, "adaptive_max_pool", inputs, output_size, data_format)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _patches(height, width, kernel_size, dilation, padding, stride):
    """The flat index into the padded ``(H + 2 ph) x (W + 2 pw)`` plane of each patch
    element, ``(kh * kw * L,)`` in (kernel row, kernel column, patch) order, and L."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel_size, dilation, padding, stride))
    hp, wp = height + 2 * ph, width + 2 * pw
    oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    rows = (np.arange(kh) * dh)[:, None] + (np.arange(oh) * sh)[None, :]
    cols = (np.arange(kw) * dw)[:, None] + (np.arange(ow) * sw)[None, :]
    index = rows[:, None, :, None] * wp + cols[None, :, None, :]  # (kh, kw, oh, ow)
    return index.reshape(-1), kh * kw, oh * ow, (ph, pw), (hp, wp)


def unfold(x, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding patches of an ``(N, C, H, W)`` batch as columns: ``(N, C * kh * kw, L)``
    (PyTorch's ``unfold``; channels vary slowest within a column).

    >>> unfold(np.arange(4.0).reshape(1, 1, 2, 2), 1).numpy().tolist()
    [[[0.0, 1.0, 2.0, 3.0]]]
    """
    x = _t(x)
    if x.ndim != 4:
        raise ValueError(f"Input must be a 4D tensor. Received: input.shape={tuple(x.shape)}")
    n, c, h, w = x.shape
    index, k, length, (ph, pw), (hp, wp) = _patches(h, w, kernel_size, dilation, padding,
                                                    stride)
    flat = tf.reshape(tf.pad(x, [[0, 0], [0, 0], [ph, ph], [pw, pw]]), [n, c, hp * wp])
    return tf.reshape(tf.gather(flat, index, axis=2), [n, c * k, length])


def fold(x, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The inverse arrangement of ``unfold``: columns ``(N, C * kh * kw, L)`` summed back
    into an ``(N, C, *output_size)`` batch (overlapping patches add).

    >>> fold(np.ones((1, 4, 1)), (2, 2), 2).numpy().tolist()
    [[[[1.0, 1.0], [1.0, 1.0]]]]
    """
    x = _t(x)
    if x.ndim != 3:
        raise ValueError(f"Input must be a 3D tensor. Received: input.shape={tuple(x.shape)}")
    height, width = _pair(output_size)
    index, k, length, (ph, pw), (hp, wp) = _patches(height, width, kernel_size, dilation,
                                                    padding, stride)
    n, ck, columns = x.shape
    if ck % k or columns != length:  # Keras's backend fails in a reshape
        raise InvalidArgumentError(f"Expected input's shape (N, C * {k}, {length}) for output_size "
                         f"{(height, width)}. Received: input.shape={tuple(x.shape)} [Op:Reshape]")
    c = ck // k
    values = tf.transpose(tf.reshape(x, [n, c, k * length]), [2, 0, 1])
    plane = tf.transpose(_segment_sum(values, index, hp * wp), [1, 2, 0])
    plane = tf.reshape(plane, [n, c, hp, wp])
    return plane[:, :, ph:ph + height, pw:pw + width]
