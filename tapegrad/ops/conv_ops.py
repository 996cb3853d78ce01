"""Convolution with TensorFlow's names, arguments and errors (``tf.nn.conv2d``...).

Everything is brought to the primitives' one layout (``primitives/conv.py``): channels last,
explicit ``(lo, hi)`` padding pairs. Channels-first formats (``NCHW``) are transposed in and
out (TensorFlow refuses them on the CPU; tapegrad runs them). Output shapes follow
TensorFlow's formulas: 'VALID' gives ``ceil((n - (k-1)*d) / s)``, 'SAME' gives ``ceil(n / s)``
with the padding split low-first. Pooling, which shares these helpers, is in
``ops/pool_ops.py``.
"""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError, UnimplementedError
from tapegrad.ops._convert import static_shape, tensor
from tapegrad.ops.array_ops import reshape as _reshape
from tapegrad.ops.array_ops import transpose as _transpose
from tapegrad.primitives import conv

_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}


# ---- argument normalisation ------------------------------------------------------------------
def _channels_first(data_format, d, fn):
    if data_format is None:
        return False
    if d in _FORMATS and data_format in _FORMATS[d]:
        return data_format == _FORMATS[d][1]
    raise InvalidArgumentError(f"{fn}: data_format {data_format!r} is not one of "
                               f"{_FORMATS.get(d, ('N...C', 'NC...'))} for {d} spatial axes")


def _per_axis(v, d, fn, what, channels_first, default=1, lists_only=False):
    """Strides, dilations or ksize: an int, or a list of 1, d or d + 2 ints (TF's forms)."""
    if v is None:
        return (default,) * d
    if isinstance(v, Tensor):
        v = v.numpy().tolist()
    if isinstance(v, (int, np.integer)):
        if lists_only:
            raise TypeError(f"Expected list for '{what}' argument to '{fn}' Op, not {v}.")
        v = [int(v)]
    v = [int(s) for s in v]
    if len(v) == 1:
        v = v * d
    elif len(v) == d + 2:
        outer = (v[0], v[1]) if channels_first else (v[0], v[-1])
        v = v[2:] if channels_first else v[1:-1]
        if outer != (1, 1):
            raise UnimplementedError(f"{fn}: {what} in the batch and depth dimensions must be "
                                     f"1, got {outer}")
    elif len(v) != d:
        raise ValueError(f"{fn}: {what} should be of length 1, {d} or {d + 2}, got {len(v)}")
    return tuple(v)


def _padding(padding, spatial, kernel, strides, dilations, channels_first, fn):
    """TensorFlow's padding argument as explicit (lo, hi) pairs of the spatial axes."""
    d = len(spatial)
    if isinstance(padding, str):
        if padding == "VALID":
            return ((0, 0),) * d
        if padding != "SAME":
            raise InvalidArgumentError(f"Value for attr 'padding' of \"{padding}\" is not in the "
                                       "list of allowed values: \"SAME\", \"VALID\", \"EXPLICIT\"")
        pads = []
        for n, k, s, r in zip(spatial, kernel, strides, dilations):
            out = -(-n // s) if s > 0 else 0
            total = max((out - 1) * s + (k - 1) * r + 1 - n, 0)
            pads.append((total // 2, total - total // 2))
        return tuple(pads)
    pairs = [tuple(int(q) for q in pr) for pr in padding]
    if any(len(pr) != 2 for pr in pairs) or len(pairs) not in (d, d + 2):
        raise ValueError(f"{fn}: explicit padding needs {d + 2} [before, after] pairs, got "
                         f"{padding!r}")
    if len(pairs) == d + 2:
        outer = pairs[:2] if channels_first else [pairs[0], pairs[-1]]
        if any(outer[0]) or any(outer[1]):
            raise InvalidArgumentError("Nonzero explicit padding in the batch or depth "
                                       "dimensions is not supported")
        pairs = pairs[2:] if channels_first else pairs[1:-1]
    if any(q < 0 for pr in pairs for q in pr):
        raise InvalidArgumentError("All elements of explicit_paddings must be nonnegative")
    return tuple(pairs)


def _geometry(fn, spatial, kernel, strides, dilations, padding):
    try:
        return conv.check_geometry(fn, spatial, kernel, strides, dilations, padding)
    except ValueError as e:
        raise InvalidArgumentError(str(e)) from None


def _to_last(x, channels_first):
    if not channels_first:
        return x
    return _transpose(x, (0,) + tuple(range(2, x.ndim)) + (1,))


def _to_first(y, channels_first):
    if not channels_first:
        return y
    return _transpose(y, (0, y.ndim - 1) + tuple(range(1, y.ndim - 1)))


def _flatten_batch(x, d, fn):
    """Inputs of rank > d + 2 carry extra batch axes (TF's batch_shape): fold them into one."""
    if x.ndim < d + 2:
        raise ValueError(f"{fn}: Shape must be rank {d + 2} but is rank {x.ndim} "
                         f"(input shape {tuple(x.shape)})")
    lead = tuple(x.shape[:x.ndim - d - 1])
    if len(lead) == 1:
        return x, None
    return _reshape(x, (-1,) + tuple(x.shape[-d - 1:])), lead


def _unflatten(y, lead):
    return y if lead is None else _reshape(y, lead + tuple(y.shape[1:]))


def _operands(input, filters, d, fn):
    x = tensor(input)
    w = tensor(filters, None if isinstance(filters, Tensor) else x.dtype)
    if w.dtype != x.dtype:
        raise InvalidArgumentError(f"cannot compute {fn} as input #1(zero-based) was expected to "
                                   f"be a {x.dtype.name} tensor but is a {w.dtype.name} tensor")
    if w.ndim != d + 2:
        raise InvalidArgumentError(f"{fn}: convolution filter must be {d + 2}-dimensional: "
                                   f"{list(w.shape)}")
    return x, w


# ---- convolution -----------------------------------------------------------------------------
def _conv(input, filters, d, strides, padding, data_format, dilations, fn, lists_only=False):
    cf = _channels_first(data_format, d, fn)
    x, w = _operands(input, filters, d, fn)
    x, lead = _flatten_batch(x, d, fn)
    strides = _per_axis(strides, d, fn, "strides", cf, lists_only=lists_only)
    dilations = _per_axis(dilations, d, fn, "dilations", cf)
    if any(s < 1 for s in strides):
        raise InvalidArgumentError(f"{fn}: strides should be larger than 0, got {strides}")
    if any(r < 1 for r in dilations):
        raise InvalidArgumentError(f"{fn}: dilated rates should be larger than 0, got "
                                   f"{dilations}")
    x = _to_last(x, cf)
    c, cg, co = x.shape[-1], w.shape[-2], w.shape[-1]
    if cg < 1 or c % cg:
        raise InvalidArgumentError(f"input depth must be evenly divisible by filter depth: "
                                   f"{c} vs {cg}")
    groups = c // cg
    if co % groups:
        raise InvalidArgumentError(f"output depth must be evenly divisible by number of "
                                   f"groups: {co} vs {groups}")
    spatial, kernel = tuple(x.shape[1:-1]), tuple(w.shape[:d])
    pads = _padding(padding, spatial, kernel, strides, dilations, cf, fn)
    _geometry(fn, spatial, kernel, strides, dilations, pads)
    y = bind(conv.conv_p, x, w, strides=strides, dilations=dilations, padding=pads, groups=groups)
    return _unflatten(_to_first(y, cf), lead)


def convolution(input, filters, strides=None, padding="VALID", data_format=None,
                dilations=None, name=None):
    """N-d convolution (1-, 2- or 3-D, from the filter's rank), as ``tf.nn.convolution``.

    Filters are ``(K..., C_in / groups, C_out)``; a filter of fewer input channels than the
    input makes a grouped convolution.

    >>> import tapegrad as tf
    >>> x = tf.ones((1, 5, 5, 1)); w = tf.ones((3, 3, 1, 2))
    >>> tf.nn.convolution(x, w, padding="SAME").shape
    TensorShape([1, 5, 5, 2])
    """
    w = tensor(filters)
    d = w.ndim - 2
    if d not in (1, 2, 3):
        raise ValueError(f"convolution: filters of rank {w.ndim}; expected 3, 4 or 5")
    cf = _channels_first(data_format, d, "convolution")
    s = _per_axis(strides, d, "convolution", "strides", cf)
    r = _per_axis(dilations, d, "convolution", "dilations", cf)
    if max(s) > 1 and max(r) > 1:
        raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                         f"Received: strides={list(s)} and dilation_rate={list(r)}")
    return _conv(input, filters, d, s, padding, data_format, r, "convolution")


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):
    """1-D convolution of ``(N, W, C)`` inputs with ``(K, C_in, C_out)`` filters.

    >>> import tapegrad as tf
    >>> tf.nn.conv1d(tf.ones((1, 5, 2)), tf.ones((3, 2, 4)), 1, "VALID").shape
    TensorShape([1, 3, 4])
    """
    return _conv(input, filters, 1, stride, padding, data_format, dilations, "conv1d")


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """2-D convolution of ``(N, H, W, C)`` inputs with ``(KH, KW, C_in, C_out)`` filters.

    >>> import tapegrad as tf
    >>> tf.nn.conv2d(tf.ones((1, 6, 6, 1)), tf.ones((3, 3, 1, 4)), 2, "SAME").shape
    TensorShape([1, 3, 3, 4])
    """
    return _conv(input, filters, 2, strides, padding, data_format, dilations, "conv2d")


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):
    """3-D convolution; ``strides`` is a list of 5, as in TensorFlow.

    >>> import tapegrad as tf
    >>> tf.nn.conv3d(tf.ones((1, 4, 4, 4, 1)), tf.ones((2, 2, 2, 1, 3)), [1] * 5, "VALID").shape
    TensorShape([1, 3, 3, 3, 3])
    """
    return _conv(input, filters, 3, strides, padding, data_format, dilations, "conv3d",
                 lists_only=True)


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None,
                     name=None):
    """Each input channel convolved with its own ``channel_multiplier`` filters.

    ``filter`` is ``(KH, KW, C, M)``; the output has ``C * M`` channels, channel ``c * M + m``.

    >>> import tapegrad as tf
    >>> tf.nn.depthwise_conv2d(tf.ones((1, 5, 5, 3)), tf.ones((3, 3, 3, 2)), [1, 1, 1, 1],
    ...                        "VALID").shape
    TensorShape([1, 3, 3, 6])
    """
    fn = "depthwise_conv2d"
    cf = _channels_first(data_format, 2, fn)
    x = tensor(input)
    w = tensor(filter, None if isinstance(filter, Tensor) else x.dtype)
    if w.ndim != 4:
        raise InvalidArgumentError(f"{fn}: filter must be 4-dimensional: {list(w.shape)}")
    if x.ndim != 4:
        raise ValueError(f"{fn}: Shape must be rank 4 but is rank {x.ndim}")
    c = x.shape[1] if cf else x.shape[-1]
    if w.shape[2] != c:
        raise InvalidArgumentError(f"input and filter must have the same depth: {c} vs "
                                   f"{w.shape[2]}")
    w = _reshape(w, (w.shape[0], w.shape[1], 1, w.shape[2] * w.shape[3]))
    return _conv(x, w, 2, strides, padding, data_format, dilations, fn, lists_only=True)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,
                     data_format=None, dilations=None, name=None):
    """``depthwise_conv2d`` then a pointwise (1 x 1) convolution, as TensorFlow's.

    ``depthwise_filter`` is ``(KH, KW, C, M)``, ``pointwise_filter`` ``(1, 1, C * M, C_out)``.

    >>> import tapegrad as tf
    >>> tf.nn.separable_conv2d(tf.ones((1, 5, 5, 3)), tf.ones((3, 3, 3, 2)),
    ...                        tf.ones((1, 1, 6, 4)), [1, 1, 1, 1], "VALID").shape
    TensorShape([1, 3, 3, 4])
    """
    p = tensor(pointwise_filter)
    if p.ndim != 4:
        raise ValueError(f"Shape must be rank 4 but is rank {p.ndim} for the pointwise "
                         f"filter {list(p.shape)}")
    if p.shape[0] != 1 or p.shape[1] != 1:
        raise ValueError(f"Dimensions {p.shape[0]} and {p.shape[1]} of the pointwise filter "
                         f"{list(p.shape)} are not compatible with 1")
    depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format,
                                 dilations)
    return _conv(depthwise, p, 2, [1, 1, 1, 1], "VALID", data_format, None,
                 "separable_conv2d")


# ---- transposed convolution ------------------------------------------------------------------
def _conv_transpose(input, filters, output_shape, d, strides, padding, data_format, dilations,
                    fn):
    cf = _channels_first(data_format, d, fn)
    y, w = _operands(input, filters, d, fn)
    if y.ndim != d + 2:
        raise ValueError(f"{fn}: Shape must be rank {d + 2} but is rank {y.ndim}")
    shape = static_shape(output_shape)
    if len(shape) != d + 2:
        raise ValueError(f"{fn}: output_shape must have {d + 2} elements, got {list(shape)}")
    strides = _per_axis(strides, d, fn, "strides", cf)
    dilations = _per_axis(dilations, d, fn, "dilations", cf)
    if any(s < 1 for s in strides):
        raise InvalidArgumentError(f"{fn}: strides should be larger than 0, got {strides}")
    if any(r < 1 for r in dilations):
        raise InvalidArgumentError(f"{fn}: dilated rates should be larger than 0")
    y = _to_last(y, cf)
    n, c = shape[0], (shape[1] if cf else shape[-1])
    spatial = tuple(shape[2:] if cf else shape[1:-1])
    if w.shape[-1] != y.shape[-1]:
        raise InvalidArgumentError(f"{fn}: filter and out_backprop must have the same out_depth "
                                   f"({w.shape[-1]} vs {y.shape[-1]})")
    if w.shape[-2] != c:
        raise InvalidArgumentError(f"{fn}: filter and input_sizes must have the same in_depth "
                                   f"({w.shape[-2]} vs {c})")
    if n != y.shape[0]:
        raise InvalidArgumentError(f"{fn}: input_sizes batch {n} differs from out_backprop's "
                                   f"{y.shape[0]}")
    kernel = tuple(w.shape[:d])
    pads = _padding(padding, spatial, kernel, strides, dilations, cf, fn)
    out = _geometry(fn, spatial, kernel, strides, dilations, pads)
    if out != tuple(y.shape[1:-1]):
        raise InvalidArgumentError(f"{fn}: size of out_backprop doesn't match computed: actual "
                                   f"= {tuple(y.shape[1:-1])}, computed = {out} for output "
                                   f"{spatial}")
    x = bind(conv.conv_input_grad_p, y, w, input_spatial=spatial, strides=strides,
             dilations=dilations, padding=pads, groups=1)
    return _to_first(x, cf)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",
                     dilations=None, name=None):
    """The transpose (gradient) of ``conv1d``; ``filters`` is ``(K, C_out, C_in)``.

    >>> import tapegrad as tf
    >>> tf.nn.conv1d_transpose(tf.ones((1, 3, 4)), tf.ones((3, 2, 4)), [1, 6, 2], 2).shape
    TensorShape([1, 6, 2])
    """
    return _conv_transpose(input, filters, output_shape, 1, strides, padding, data_format,
                           dilations, "conv1d_transpose")


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC",
                     dilations=None, name=None):
    """The transpose (gradient) of ``conv2d``; ``filters`` is ``(KH, KW, C_out, C_in)``.

    >>> import tapegrad as tf
    >>> tf.nn.conv2d_transpose(tf.ones((1, 3, 3, 4)), tf.ones((3, 3, 2, 4)), [1, 6, 6, 2],
    ...                        2).shape
    TensorShape([1, 6, 6, 2])
    """
    return _conv_transpose(input, filters, output_shape, 2, strides, padding, data_format,
                           dilations, "conv2d_transpose")


def conv3d_transpose(input, filters, output_shape, strides, padding="SAME",
                     data_format="NDHWC", dilations=None, name=None):
    """The transpose (gradient) of ``conv3d``; ``filters`` is ``(KD, KH, KW, C_out, C_in)``.

    >>> import tapegrad as tf
    >>> tf.nn.conv3d_transpose(tf.ones((1, 2, 2, 2, 4)), tf.ones((2, 2, 2, 1, 4)),
    ...                        [1, 4, 4, 4, 1], 2).shape
    TensorShape([1, 4, 4, 4, 1])
    """
    return _conv_transpose(input, filters, output_shape, 3, strides, padding, data_format,
                           dilations, "conv3d_transpose")


def bias_add(value, bias, data_format=None, name=None):
    """``value + bias`` along the channel axis (last, or axis 1 for 'NC...' formats).

    >>> import tapegrad as tf
    >>> tf.nn.bias_add(tf.zeros((2, 3)), [1.0, 2.0, 3.0]).numpy()[0].tolist()
    [1.0, 2.0, 3.0]
    """
    x = tensor(value)
    b = tensor(bias, None if isinstance(bias, Tensor) else x.dtype)
    if x.ndim < 2:
        raise InvalidArgumentError(f"Input tensor must be at least 2D: {list(x.shape)}")
    if b.ndim != 1:
        raise InvalidArgumentError(f"Biases must be 1D: {list(b.shape)}")
    first = data_format is not None and data_format.startswith("NC")
    c = x.shape[1] if first else x.shape[-1]
    if b.shape[0] != c:
        raise InvalidArgumentError(f"Must provide as many biases as the channel dimension of the "
                                   f"input tensor: {list(b.shape)} vs. {list(x.shape)}")
    if first:
        b = _reshape(b, (c,) + (1,) * (x.ndim - 2))
    return x + b
