"""Shape manipulation with TensorFlow's names: reshape, transpose, concat, split, pad, ..."""
import builtins
import math as _math

import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.dispatch import bind
from tapegrad.core import hooks
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, convert_to_tensor, holds_size, sizes_now
from tapegrad.errors import InvalidArgumentError, UnimplementedError
from tapegrad.ops._convert import axis1, like, static_shape, tensor
from tapegrad.ops._kinds import mismatch, same_kind
from tapegrad.ops._convert import cast as _cast
from tapegrad.primitives import gather as gather_prims, shape as shape_prims

__all__ = ["cast", "identity", "stop_gradient", "reshape", "broadcast_to", "transpose",
           "expand_dims", "squeeze", "concat", "stack", "unstack", "split", "tile", "reverse",
           "pad", "size", "shape", "rank"]

_wrap = Tensor._wrap


def cast(x, dtype, name=None):
    """Convert to ``dtype``; the gradient flows back between floating dtypes only.

    >>> import tapegrad as tf
    >>> tf.cast([1.7], tf.int32).numpy().tolist()
    [1]
    """
    x = tensor(x)
    if isinstance(dtype, Tensor):  # tf.cast(x, x): TensorFlow takes no tensor as a dtype
        raise TypeError(f"Cannot convert the argument `type_value`: {dtype!r} to a "
                        "TensorFlow DType.")
    dtype = _dt.as_dtype(dtype)
    if x.dtype == dtype:
        return x
    if x.dtype.kind == "O" or dtype.kind == "O":  # tf.strings.to_number / as_string do
        raise UnimplementedError(f"Cast {_dt.name(x.dtype)} to {_dt.name(dtype)} is not "
                                 "supported [Op:Cast]")
    return _cast(x, dtype)


def identity(input, name=None):
    """The same values (recorded, so a tape sees a new tensor)."""
    x = tensor(input)
    return bind(shape_prims.reshape_p, x, shape=tuple(x._raw_shape))


def stop_gradient(input, name=None):
    """The same values, with no gradient flowing through.

    >>> import tapegrad as tf
    >>> x = tf.Variable(2.0)
    >>> with tf.GradientTape() as t:
    ...     y = tf.stop_gradient(x) * x
    >>> float(t.gradient(y, x))
    2.0
    """
    return bind(shape_prims.stop_gradient_p, tensor(input))


def reshape(tensor_, shape, name=None):
    """Reshape; ``shape`` may hold one -1 and scalar tensors.

    >>> import tapegrad as tf
    >>> tf.reshape(tf.range(6), [2, -1]).shape
    TensorShape([2, 3])
    """
    x = tensor(tensor_)
    shape = static_shape(shape)
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        n = _math.prod(x.shape)
        if shape.count(-1) > 1 or known == 0 or n % known:
            raise ValueError(f"reshape: cannot reshape a tensor of shape {tuple(x.shape)} "
                             f"to {shape}.")
        shape = tuple(n // known if s == -1 else s for s in shape)
    if _math.prod(shape) != _math.prod(x.shape):
        raise ValueError(f"reshape: cannot reshape a tensor with {_math.prod(x.shape)} "
                         f"elements of shape {tuple(x.shape)} to shape {shape}.")
    if len(shape) == x.ndim and shape == tuple(x.shape):  # rank first: fewer size guards
        return x
    return bind(shape_prims.reshape_p, x, shape=shape)


def broadcast_to(input, shape, name=None):
    """Broadcast to ``shape`` (NumPy rules)."""
    x = tensor(input)
    shape = static_shape(shape)
    if shape == tuple(x.shape):
        return x
    try:
        np.broadcast_shapes(sizes_now(x.shape), sizes_now(shape))
    except ValueError:
        raise ValueError(f"broadcast_to: cannot broadcast shape {tuple(x.shape)} to "
                         f"{shape}.") from None
    return bind(shape_prims.broadcast_to_p, x, shape=shape)


def transpose(a, perm=None, conjugate=False, name=None):
    """Permute axes; by default reverse them."""
    x = tensor(a)
    if perm is None:
        perm = tuple(builtins.range(x.ndim))[::-1]
    perm = tuple(int(p) % builtins.max(x.ndim, 1) for p in static_shape(perm))
    if sorted(perm) != list(builtins.range(x.ndim)):
        raise ValueError(f"transpose: perm {perm} is not a permutation of the {x.ndim} axes "
                         f"of a tensor of shape {tuple(x.shape)}.")
    if perm == tuple(builtins.range(x.ndim)):
        return x
    return bind(shape_prims.transpose_p, x, perm=perm)


def expand_dims(input, axis, name=None):
    """Insert a size-1 axis at ``axis``."""
    x = tensor(input)
    a = int(axis)
    if not -x.ndim - 1 <= a <= x.ndim:
        raise ValueError(f"expand_dims: axis {a} is out of range for rank {x.ndim}.")
    a = a % (x.ndim + 1)
    shape = tuple(x.shape[:a]) + (1,) + tuple(x.shape[a:])
    return bind(shape_prims.reshape_p, x, shape=shape)


def squeeze(input, axis=None, name=None):
    """Remove size-1 axes (all of them, or those in ``axis``)."""
    x = tensor(input)
    if axis is None:
        shape = tuple(s for s in x.shape if s != 1)
    else:
        ax = [axis1(a, x.ndim, "squeeze") for a in ([axis] if np.ndim(axis) == 0 else axis)]
        for a in ax:
            if x.shape[a] != 1:
                raise ValueError(f"squeeze: cannot squeeze axis {a} of size {x.shape[a]} "
                                 f"(shape {tuple(x.shape)}).")
        shape = tuple(s for i, s in enumerate(x.shape) if i not in ax)
    if len(shape) == x.ndim and shape == tuple(x.shape):  # rank first: fewer size guards
        return x
    return bind(shape_prims.reshape_p, x, shape=shape)


def _tensors_like(values):
    """The values as tensors, Python numbers and lists taking the dtype of the first tensor
    among them (TensorFlow's rule: ``tf.stack([tf.constant(1.0), 2])`` is float32)."""
    first = next((v for v in values if isinstance(v, Tensor)), None)
    if first is None:
        return [tensor(v) for v in values]
    return [v if isinstance(v, Tensor) else like(v, first) for v in values]


def concat(values, axis, name=None):
    """Join tensors along an existing axis.

    >>> import tapegrad as tf
    >>> tf.concat([[1.0], [2.0, 3.0]], 0).numpy().tolist()
    [1.0, 2.0, 3.0]
    """
    values = list(values) if not isinstance(values, Tensor) else values
    xs = _tensors_like(values)
    if not xs:
        raise ValueError("concat: needs at least one tensor.")
    # one dtype: the first tensor's; other values (lists, NumPy arrays) are converted to it,
    # a tensor of another dtype is TensorFlow's error (it has no promotion, not even of
    # float16 with float32), and so is a list that does not convert (TypeError)
    first = next((v for v in values if isinstance(v, Tensor)), None)
    dt = xs[0].dtype if first is None else first.dtype
    out = []
    for v, x in zip(values, xs):
        if x.dtype != dt:
            if isinstance(v, Tensor) or not same_kind(xs[0] if first is None else first, x):
                if not isinstance(v, (Tensor, np.ndarray, np.generic)):
                    raise TypeError(f"Cannot convert {v!r} to EagerTensor of dtype {dt.name}")
                mismatch("ConcatV2", xs[0] if first is None else first, x)
            x = cast(x, dt)
        out.append(x)
    xs = out
    nd = xs[0].ndim
    ax = axis1(axis, nd, "concat")
    for x in xs:
        if x.ndim != nd or any(s != t for i, (s, t) in enumerate(zip(x.shape, xs[0].shape))
                               if i != ax):
            raise ValueError("concat: shapes " + ", ".join(str(tuple(v.shape)) for v in xs)
                             + f" do not match outside axis {ax}.")
    if len(xs) == 1:
        return xs[0]
    return bind(shape_prims.concat_p, *xs, axis=ax)


def stack(values, axis=0, name=None):
    """Join tensors along a new axis.

    >>> import tapegrad as tf
    >>> tf.stack([1.0, 2.0]).shape
    TensorShape([2])
    """
    xs = _tensors_like(values)
    if not xs:
        raise ValueError("stack: needs at least one tensor.")
    shape0 = tuple(xs[0].shape)
    for x in xs:
        if tuple(x.shape) != shape0:
            raise ValueError("stack: shapes " + ", ".join(str(tuple(v.shape)) for v in xs)
                             + " must all be equal.")
    a = axis1(axis, xs[0].ndim + 1, "stack")
    return concat([expand_dims(x, a) for x in xs], a) if len(xs) > 1 else expand_dims(xs[0], a)


def unstack(value, num=None, axis=0, name=None):
    """Split along ``axis`` into a list of tensors of one rank less."""
    x = tensor(value)
    a = axis1(axis, x.ndim, "unstack")
    if num is not None and int(num) != x.shape[a]:
        raise ValueError(f"unstack: num={num} does not match axis {a} of size {x.shape[a]} "
                         f"(shape {tuple(x.shape)}).")
    key = (slice(None),) * a
    return [bind(gather_prims.getitem_p, x, index=gather_prims.Index(key + (i,)))
            for i in builtins.range(x.shape[a])]


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Split along ``axis`` into equal parts, or into parts of the given sizes."""
    x = tensor(value)
    a = axis1(axis, x.ndim, "split")
    n = x.shape[a]
    if np.ndim(num_or_size_splits) == 0:
        k = int(num_or_size_splits)
        if k <= 0 or n % k:
            raise ValueError(f"split: dimension {a} of size {n} cannot be split into {k} "
                             "equal parts.")
        sizes = [n // k] * k
    else:
        sizes = [int(s) for s in num_or_size_splits]
        if sizes.count(-1) == 1:
            sizes[sizes.index(-1)] = n - (sum(sizes) + 1)
        if sum(sizes) != n or builtins.min(sizes) < 0:
            raise ValueError(f"split: sizes {sizes} do not add up to {n}, the size of axis {a}.")
    out, start = [], 0
    for s in sizes:
        out.append(bind(gather_prims.getitem_p, x, index=gather_prims.Index((slice(None),) * a
                                                      + (slice(start, start + s),))))
        start += s
    return out


def tile(input, multiples, name=None):
    """Repeat the tensor ``multiples[i]`` times along axis i (composed: reshape, broadcast)."""
    x = tensor(input)
    m = static_shape(multiples)
    if len(m) != x.ndim:  # (an InvalidArgumentError is a ValueError: TF raises either)
        raise InvalidArgumentError(f"Expected multiples argument to be a vector of length "
                                   f"{x.ndim} but got length {len(m)}")
    for i, k in enumerate(m):  # (TensorFlow's checks, eager and compiled alike)
        if k < 0:
            raise InvalidArgumentError(f"Expected multiples[{i}] >= 0, but got {k}")
    if x.dtype == np.uint16:
        raise UnimplementedError("TileOp : The input data type is not supported, DataType : "
                                 f"uint16, Dimension : {x.ndim}")
    inter = []
    big = []
    for s, k in zip(x.shape, m):
        inter += [1, s]
        big += [k, s]
    y = broadcast_to(reshape(x, inter), big)
    return reshape(y, [s * k for s, k in zip(x.shape, m)])


def reverse(tensor_, axis, name=None):
    """Reverse the order of elements along the given axes."""
    x = tensor(tensor_)
    ax = {axis1(a, x.ndim, "reverse") for a in static_shape(axis)}
    key = tuple(slice(None, None, -1) if i in ax else slice(None) for i in builtins.range(x.ndim))
    return bind(gather_prims.getitem_p, x, index=gather_prims.Index(key))


def pad(tensor_, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pad with ``paddings[i] = [before, after]`` along axis i.

    ``mode`` is 'CONSTANT', 'REFLECT' or 'SYMMETRIC' (the last two composed of slices).
    """
    x = tensor(tensor_)
    p = np.asarray(paddings._value if isinstance(paddings, Tensor) else paddings)
    if p.shape != (x.ndim, 2) or (p < 0).any():
        raise ValueError(f"pad: paddings must be non-negative with shape ({x.ndim}, 2) for a "
                         f"tensor of shape {tuple(x.shape)}, got {p.tolist()}.")
    pads = tuple((int(a), int(b)) for a, b in p)
    mode = mode.upper()
    if mode == "CONSTANT" and x.dtype.kind == "O":  # strings pad with b"" (eagerly)
        fill = convert_to_tensor(b"" if constant_values == 0 else constant_values,
                                 dtype=x.dtype)
        out = np.full(tuple(n + lo + hi for n, (lo, hi) in zip(x._raw_shape, pads)),
                      fill.numpy(), dtype=object)
        out[tuple(slice(lo, lo + n) for n, (lo, _) in zip(x._raw_shape, pads))] = x._value
        return _wrap(out)
    if mode == "CONSTANT":
        return bind(shape_prims.pad_p, x, paddings=pads, constant_values=float(constant_values))
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f"pad: unknown mode {mode!r}; use CONSTANT, REFLECT or SYMMETRIC.")
    off = 1 if mode == "REFLECT" else 0  # REFLECT skips the edge element, SYMMETRIC repeats it
    for a, (lo, hi) in enumerate(pads):
        n = x.shape[a]
        if lo + off > n or hi + off > n:
            raise ValueError(f"pad: {mode} padding {lo, hi} too large for axis {a} of size {n} "
                             f"(at most {n - off} on each side).")
        pre = (slice(None),) * a
        parts = [x[pre + (_reversed(off, lo + off),)]] if lo else []
        parts.append(x)
        if hi:
            parts.append(x[pre + (_reversed(n - off - hi, n - off),)])
        x = concat(parts, a) if len(parts) > 1 else x
    return x


def _reversed(start, stop):
    """The slice that reads elements start..stop-1 backwards (stop -1 would mean 'the end')."""
    return slice(stop - 1, start - 1 if start > 0 else None, -1)


def size(input, out_type=np.int32, name=None):
    """Number of elements, as a scalar tensor."""
    n = _math.prod(tensor(input).shape)
    if holds_size(n) and STATE.stack.tracers:
        return convert_to_tensor(n, dtype=out_type)
    return _wrap(np.asarray(int(n), dtype=out_type))


def shape(input, out_type=np.int32, name=None):
    """The shape as a 1-D integer tensor."""
    shp = tuple(tensor(input).shape)
    if holds_size(shp) and STATE.stack.tracers:  # staged: the sizes are symbolic in this trace
        return convert_to_tensor(list(shp), dtype=out_type)
    return _wrap(np.asarray(shp, dtype=out_type))


def rank(input, name=None):
    """The number of axes, as a scalar int32 tensor.

    >>> import tapegrad as tf
    >>> int(tf.rank(tf.zeros([2, 3])))
    2
    """
    return _wrap(np.asarray(tensor(input).ndim, dtype=np.int32))




hooks.install(stack=stack)  # convert_to_tensor of a list holding tensors (core/tensor.py)
