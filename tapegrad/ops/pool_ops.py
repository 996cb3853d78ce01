"""Pooling with TensorFlow's names, arguments and errors (``tf.nn.max_pool2d``, ``tf.nn.pool``...).

The argument helpers are the convolutions' (``ops/conv_ops.py``): channels-first formats are
transposed in and out, 'SAME'/'VALID' become explicit ``(lo, hi)`` pairs. Dilated pooling
(``tf.nn.pool(..., dilations=r)``, 'VALID' only, as in TensorFlow) is ordinary pooling of
the ``prod(r)`` interleaved sub-grids (TensorFlow's space-to-batch), written with reshapes
and transposes so every rule of the pooling primitives carries over.
"""
import math

from tapegrad.core.dispatch import bind
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops._convert import static_shape, tensor
from tapegrad.ops.array_ops import getitem as _getitem
from tapegrad.ops.array_ops import pad as _pad
from tapegrad.ops.array_ops import reshape as _reshape
from tapegrad.ops.array_ops import transpose as _transpose
from tapegrad.ops.conv_ops import (_channels_first, _geometry, _padding, _per_axis, _to_first,
                                   _to_last)
from tapegrad.primitives import pooling


# ---- pooling ---------------------------------------------------------------------------------
def _pool(prim, input, ksize, strides, padding, data_format, d, fn):
    x = tensor(input)
    if d is None:
        if x.ndim not in (3, 4, 5):
            raise ValueError(f"`input.shape.rank` must be 3, 4 or 5. Received: "
                             f"input.shape={tuple(x.shape)} of rank {x.ndim}.")
        d = x.ndim - 2
    elif x.ndim != d + 2:
        raise InvalidArgumentError(f"{fn}: tensor_in_shape must have {d} spatial dimensions, "
                                   f"got shape {tuple(x.shape)}")
    cf = _channels_first(data_format, d, fn)
    window = _per_axis(ksize, d, fn, "ksize", cf)
    strides = _per_axis(strides, d, fn, "strides", cf)
    if any(k < 1 for k in window):
        raise InvalidArgumentError(f"Sliding window ksize must be positive, got {window}")
    if any(s < 1 for s in strides):
        raise InvalidArgumentError(f"Stride must be > 0, but got {strides}")
    if prim is pooling.avg_pool_p and not isinstance(padding, str):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    if prim is pooling.avg_pool_p and x.dtype.kind != "f":
        raise InvalidArgumentError(f"{fn}: Value for attr 'T' of {x.dtype.name} is not in the "
                                   "list of allowed values: half, bfloat16, float, double")
    if x.dtype.kind not in "iuf" or (d == 3 and x.dtype.kind != "f"):  # MaxPool3D: floats only
        raise InvalidArgumentError(f"{fn}: Value for attr 'T' of {x.dtype.name} is not in the "
                                   "list of allowed values: half, bfloat16, float"
                                   + ("" if d == 3 else ", double, int32, int64, uint8, int16, "
                                      "int8, uint16"))
    x = _to_last(x, cf)
    spatial = tuple(x.shape[1:-1])
    pads = _padding(padding, spatial, window, strides, (1,) * d, cf, fn)
    _geometry(fn, spatial, window, strides, (1,) * d, pads)
    y = bind(prim, x, window=window, strides=strides, padding=pads)
    return _to_first(y, cf)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):
    """Max pooling of a rank 3, 4 or 5 input (1-, 2-, 3-D).

    >>> import tapegrad as tf
    >>> tf.nn.max_pool(tf.reshape(tf.range(4.0), (1, 4, 1)), 2, 2, "VALID").numpy().ravel()
    array([1., 3.], dtype=float32)
    """
    return _pool(pooling.max_pool_p, input, ksize, strides, padding, data_format, None, "max_pool")


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """1-D max pooling of ``(N, W, C)``."""
    return _pool(pooling.max_pool_p, input, ksize, strides, padding, data_format, 1, "max_pool1d")


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """2-D max pooling of ``(N, H, W, C)``.

    >>> import tapegrad as tf
    >>> tf.nn.max_pool2d(tf.ones((1, 5, 5, 3)), 2, 2, "SAME").shape
    TensorShape([1, 3, 3, 3])
    """
    return _pool(pooling.max_pool_p, input, ksize, strides, padding, data_format, 2, "max_pool2d")


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """3-D max pooling of ``(N, D, H, W, C)``."""
    return _pool(pooling.max_pool_p, input, ksize, strides, padding, data_format, 3, "max_pool3d")


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):
    """Average pooling; with 'SAME' each window divides by its number of real elements.

    >>> import tapegrad as tf
    >>> tf.nn.avg_pool(tf.reshape(tf.range(3.0), (1, 3, 1)), 2, 2, "SAME").numpy().ravel()
    array([0.5, 2. ], dtype=float32)
    """
    return _pool(pooling.avg_pool_p, input, ksize, strides, padding, data_format, None, "avg_pool")


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """1-D average pooling of ``(N, W, C)``."""
    return _pool(pooling.avg_pool_p, input, ksize, strides, padding, data_format, 1, "avg_pool1d")


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """2-D average pooling of ``(N, H, W, C)``."""
    return _pool(pooling.avg_pool_p, input, ksize, strides, padding, data_format, 2, "avg_pool2d")


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):
    """3-D average pooling of ``(N, D, H, W, C)``."""
    return _pool(pooling.avg_pool_p, input, ksize, strides, padding, data_format, 3, "avg_pool3d")


def _pool_list(v, d, what):
    """tf.nn.pool's strides / dilation_rate: None or a list of d positive ints."""
    if v is None:
        return (1,) * d
    v = static_shape(v)
    if len(v) != d:
        raise ValueError(f"`len({what})` should be {d}. Received: {what}={list(v)} of length "
                         f"{len(v)}")
    if any(s < 1 for s in v):
        raise ValueError(f"all values of `{what}` must be positive. Received: {what}={list(v)}")
    return tuple(int(s) for s in v)


def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None,
         dilations=None, name=None):
    """``tf.nn.pool``: 'MAX' or 'AVG' pooling with an N-d ``window_shape``, maybe dilated.

    A dilation ``r`` spaces the window's elements ``r`` apart: output ``i`` reduces
    ``x[i], x[i + r], ..., x[i + (k-1)*r]``. As in TensorFlow, dilated pooling takes 'VALID'
    padding and unit strides.

    >>> import tapegrad as tf
    >>> tf.nn.pool(tf.ones((1, 4, 4, 1)), [2, 2], "AVG", strides=[2, 2]).shape
    TensorShape([1, 2, 2, 1])
    >>> x = tf.reshape(tf.range(6.0), (1, 6, 1))
    >>> tf.nn.pool(x, [2], "MAX", dilations=[3]).numpy().ravel()
    array([3., 4., 5.], dtype=float32)
    """
    window = tuple(int(k) for k in static_shape(window_shape))
    d = len(window)
    if not 1 <= d <= 3:
        raise ValueError(f"`len(window_shape)` must be 1, 2, or 3. Received: window_shape="
                         f"{list(window)} of length {d}")
    x = tensor(input)
    if x.ndim != d + 2:
        raise ValueError(f"Shape {tuple(x.shape)} must have rank {d + 2}")
    rates = _pool_list(dilations, d, "dilation_rate")
    strides = _pool_list(strides, d, "strides")
    if max(strides) > 1 and max(rates) > 1:
        raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                         f"Received: strides={list(strides)} and dilation_rate={list(rates)}")
    if padding == "SAME" and max(rates) > 1:
        raise ValueError(f"pooling with 'SAME' padding is not implemented for `dilation_rate` "
                         f"> 1. Received: padding={padding} and dilation_rate={list(rates)}")
    if any(s > k for s, k in zip(strides, window)):
        raise ValueError(f"`strides` > `window_shape` not supported due to inconsistency between "
                         f"CPU and GPU implementations. Received: strides={list(strides)} and "
                         f"window_shape={list(window)}")
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"{d}-D {pooling_type} pooling is not supported.")
    prim = pooling.max_pool_p if pooling_type == "MAX" else pooling.avg_pool_p
    if max(rates) == 1:
        return _pool(prim, x, list(window), list(strides), padding, data_format, d, "pool")
    return _dilated_pool(prim, x, window, rates, padding, data_format)


def _dilated_pool(prim, x, window, rates, padding, data_format):
    """Pooling with windows whose elements lie ``rates`` apart ('VALID', unit strides).

    Positions ``j * r + b`` of an axis, for one phase ``b``, form a sub-grid on which the
    dilated window is an ordinary one: the input (padded up to multiples of ``rates``; those
    elements reach only outputs that are cut off) splits into its ``prod(rates)`` sub-grids,
    stacked along the batch, is pooled, and is interleaved back.
    """
    d = len(window)
    cf = _channels_first(data_format, d, "pool")
    x = _to_last(x, cf)
    if padding != "VALID":  # (TensorFlow's error for an unknown padding string first)
        _padding(padding, tuple(x.shape[1:-1]), window, (1,) * d, rates, False, "pool")
        raise ValueError(f"pool: dilated pooling takes padding 'VALID', got {padding!r}")
    n, spatial, c = x.shape[0], tuple(x.shape[1:-1]), x.shape[-1]
    out = _geometry("pool", spatial, window, (1,) * d, rates, ((0, 0),) * d)
    sub = tuple(-(-s // r) for s, r in zip(spatial, rates))  # sub-grid lengths
    grow = [q * r - s for q, r, s in zip(sub, rates, spatial)]
    if any(grow):
        x = _pad(x, [[0, 0]] + [[0, g] for g in grow] + [[0, 0]])
    x = _reshape(x, (n,) + tuple(v for q, r in zip(sub, rates) for v in (q, r)) + (c,))
    perm = tuple(2 + 2 * a for a in range(d)) + (0,) + tuple(1 + 2 * a for a in range(d)) \
        + (2 * d + 1,)
    x = _reshape(_transpose(x, perm), (math.prod(rates) * n,) + sub + (c,))
    y = _pool(prim, x, list(window), [1] * d, "VALID", None, d, "pool")
    pooled = tuple(y.shape[1:-1])
    y = _reshape(y, tuple(rates) + (n,) + pooled + (c,))
    back = [0] * len(perm)
    for i, p in enumerate(perm):
        back[p] = i
    y = _reshape(_transpose(y, back), (n,) + tuple(o * r for o, r in zip(pooled, rates)) + (c,))
    y = _getitem(y, (slice(None),) + tuple(slice(0, o) for o in out))
    return _to_first(y, cf)
