"""Tensors made from shapes and values (no gradient, except linspace's): zeros, ones, fill,
eye, range, linspace, one_hot."""
import builtins

import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.core.tensor import full as _full
from tapegrad.errors import InvalidArgumentError, NotFoundError
from tapegrad.ops._convert import axis1, static_shape, tensor
from tapegrad.ops.shape_ops import broadcast_to, cast, concat, expand_dims, transpose

__all__ = ["zeros", "ones", "zeros_like", "ones_like", "fill", "eye", "range", "linspace",
           "one_hot", "meshgrid", "sequence_mask"]

_wrap = Tensor._wrap


def _dtype(dtype, default=_dt.float32):
    return _dt.as_dtype(dtype) or default


def _filled(shape, value, dtype):
    """``full``, where a string tensor's zero is the empty string and it has no one."""
    if dtype.kind == "O":
        if value:
            raise InvalidArgumentError("Value for attr 'T' of string is not in the list of "
                                       "allowed values (ones of a string dtype) [Op:OnesLike]")
        return _wrap(np.full(shape, b"", dtype=object))
    return _full(shape, value, dtype)


def zeros(shape, dtype=_dt.float32, name=None):
    """A tensor of zeros.

    >>> import tapegrad as tf
    >>> tf.zeros([2]).numpy().tolist()
    [0.0, 0.0]
    """
    return _filled(static_shape(shape), 0, _dtype(dtype))


def ones(shape, dtype=_dt.float32, name=None):
    """A tensor of ones."""
    return _filled(static_shape(shape), 1, _dtype(dtype))


def zeros_like(input, dtype=None, name=None):
    """Zeros with the shape (and dtype) of ``input``."""
    x = tensor(input)
    return _filled(x.shape, 0, _dt.as_dtype(dtype) or x.dtype)


def ones_like(input, dtype=None, name=None):
    """Ones with the shape (and dtype) of ``input``."""
    x = tensor(input)
    return _filled(x.shape, 1, _dt.as_dtype(dtype) or x.dtype)


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` filled with ``value``."""
    v = convert_to_tensor(value)
    return _full(static_shape(dims), v._value, v.dtype)


def eye(num_rows, num_columns=None, batch_shape=None, dtype=_dt.float32, name=None):
    """Identity matrices (optionally batched)."""
    m = np.eye(int(num_rows), None if num_columns is None else int(num_columns),
               dtype=_dtype(dtype))
    if batch_shape is not None:
        m = np.broadcast_to(m, tuple(static_shape(batch_shape)) + m.shape).copy()
    return _wrap(m)


def range(start, limit=None, delta=1, dtype=None, name="range"):
    """Like Python's range, as a tensor; int32 for ints, float32 for floats. TensorFlow's
    arithmetic, in the result's dtype: the size ``ceil(|(limit - start) / delta|)`` and
    the values ``start + i * delta`` (float32 ``range(0., 1., .3)`` ends in 0.90000004,
    not NumPy's 0.9).

    >>> import tapegrad as tf
    >>> tf.range(0.0, 1.0, 0.3).numpy().tolist()[-1]
    0.9000000357627869
    """
    if limit is None:
        start, limit = 0, start
    args = (start, limit, delta)
    vals = [float(v) if isinstance(v, Tensor) and v.dtype.kind == "f" else
            (int(v) if isinstance(v, Tensor) else v) for v in args]
    dtype = _range_dtype(args) if dtype is None else np.dtype(_dt.as_dtype(dtype))
    _range_kernel(dtype)
    t = dtype.type
    with np.errstate(over="ignore"):
        s, lim, d = (t(v) for v in vals)
    if d == 0:
        raise InvalidArgumentError(f"Requires delta != 0: {d}")
    if (d > 0 and s > lim) or (d < 0 and s < lim):
        raise InvalidArgumentError(
            f"Requires start {'<=' if d > 0 else '>='} limit when delta "
            f"{'>' if d > 0 else '<'} 0: {s}/{lim}")
    if np.dtype(t).kind in "iu":
        size = int((abs(int(lim) - int(s)) + abs(int(d)) - 1) // abs(int(d)))
    else:
        size = int(np.ceil(np.abs((lim - s) / d)))
    with np.errstate(over="ignore", invalid="ignore"):
        return _wrap(s + np.arange(size).astype(t) * d)


_RANGE_ORDER = [np.dtype(d) for d in ("int32", "int64", "float16", "float32", "float64")]


def _range_dtype(args):
    """TensorFlow's inferred dtype: the widest of the arguments' dtypes in its order int32,
    int64, float16, float32, float64 (Python ints are int32, or int64 past its range, Python
    floats float32, NumPy values keep theirs); any other dtype fails TensorFlow's assertion."""
    dts = []
    for v in args:
        if isinstance(v, (Tensor, np.generic, np.ndarray)):
            d = np.dtype(v.dtype)
        elif isinstance(v, bool):
            d = np.dtype(bool)
        elif isinstance(v, int):
            d = np.dtype(np.int32 if -2**31 <= v < 2**31 else np.int64)
        else:
            d = np.dtype(np.float32)
        if d not in _RANGE_ORDER:
            raise AssertionError(f"tf.range: arguments of dtype {d.name} (TensorFlow infers "
                                 "the dtype from int32, int64, float16, float32 and float64)")
        dts.append(d)
    return max(dts, key=_RANGE_ORDER.index)


def _range_kernel(dtype):
    """TensorFlow's errors for a ``dtype=`` its Range kernel on the CPU lacks."""
    if dtype in _RANGE_ORDER:
        return
    if dtype.kind == "b":
        raise TypeError("Cannot convert 0 to EagerTensor of dtype bool")
    if dtype.kind == "c" or dtype == np.uint8:
        raise InvalidArgumentError(
            f"Value for attr 'Tidx' of {dtype.name} is not in the list of allowed values: "
            "bfloat16, half, float, double, int8, int16, int32, int64, uint16, uint32, uint64")
    raise NotFoundError(f"Could not find device for node: {{{{node Range}}}} = "
                        f"Range[Tidx=DT_{dtype.name.upper()}] (no CPU kernel for {dtype.name})")


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` inclusive, along a new
    ``axis`` (``start`` and ``stop`` broadcast). TensorFlow's arithmetic: the inner values
    are ``start + i * delta`` with ``delta = (stop - start) / (num - 1)`` in the inputs'
    float dtype (integers divide as float64), the ends exactly ``start`` and ``stop``; it
    differentiates with respect to both.

    >>> import tapegrad as tf
    >>> tf.linspace(0.0, 1.0, 5).numpy().tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    >>> tf.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=1).numpy().tolist()
    [[0.0, 0.5, 1.0], [1.0, 2.0, 3.0]]
    """
    start = convert_to_tensor(start)
    stop = convert_to_tensor(stop, dtype=start.dtype)
    n = int(num)
    if n < 0:
        raise InvalidArgumentError(f"Requires num >= 0: {n}")
    shape = np.broadcast_shapes(tuple(start.shape), tuple(stop.shape))
    ax = axis + len(shape) + 1 if axis < 0 else axis
    first = expand_dims(broadcast_to(start, shape), ax)
    last = expand_dims(broadcast_to(stop, shape), ax)
    delta = (last - first) / max(n - 1, 1)  # true division: integers give float64
    first, last = cast(first, delta.dtype), cast(last, delta.dtype)
    steps = np.arange(1, max(n - 1, 1), dtype=np.dtype(delta.dtype))
    inner = first + delta * _wrap(steps.reshape([-1 if a == ax else 1
                                                 for a in builtins.range(len(shape) + 1)]))
    out = concat([first, inner, last], axis=ax)
    index = [builtins.slice(None)] * (len(shape) + 1)
    index[ax] = builtins.slice(0, n)
    return out[tuple(index)]


def one_hot(indices, depth, on_value=None, off_value=None, axis=-1, dtype=None, name=None):
    """One-hot vectors of length ``depth``; indices outside [0, depth) give all off_value.

    Composed of ``equal`` and ``where``, so it works on traced indices in ``tf.function``.
    The dtype is ``dtype``, else on_value's (a Python int gives int32), else float32.

    >>> import tapegrad as tf
    >>> tf.one_hot([0, 2, -1], 3).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """
    from tapegrad.primitives import elementwise
    i = tensor(indices)
    if i.dtype.kind == "O":  # (TensorFlow's kernel check for strings; floats: TypeError)
        raise InvalidArgumentError("Value for attr 'TI' of string is not in the list of "
                                   "allowed values: uint8, int8, int32, int64 [Op:OneHot]")
    if i.dtype.kind not in "iu":
        raise TypeError(f"Value for attr 'TI' of {i.dtype.name} is not in the list of allowed "
                        "values: uint8, int8, int32, int64 (one_hot indices must be integers).")
    dt = _dt.as_dtype(dtype)
    if dt is None:
        given = [convert_to_tensor(v) for v in (on_value, off_value) if v is not None]
        dt = given[0].dtype if given else _dt.float32
    on = convert_to_tensor(1 if on_value is None else on_value, dtype=dt)
    off = convert_to_tensor(0 if off_value is None else off_value, dtype=dt)
    hot = bind(elementwise.equal_p, expand_dims(i, -1), _wrap(np.arange(int(depth), dtype=i.dtype)))
    out = bind(elementwise.where_p, hot, on, off)
    if axis != -1:
        a = axis1(axis, out.ndim, "one_hot")
        perm = list(builtins.range(out.ndim - 1))
        perm.insert(a, out.ndim - 1)
        out = transpose(out, perm)
    return out


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D tensors: with ``indexing='xy'`` (the default, Cartesian)
    the first two axes are swapped, with ``'ij'`` (matrix) each output has the inputs' sizes
    in order. Differentiable in each input.

    >>> import tapegrad as tf
    >>> x, y = tf.meshgrid([1, 2, 3], [4, 5])
    >>> x.numpy().tolist(), y.numpy().tolist()
    ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
    """
    from tapegrad.ops.shape_ops import reshape
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Unsupported keyword arguments: {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError("indexing parameter must be either 'xy' or 'ij'")
    xs = [tensor(a) for a in args]
    if not xs:
        return []
    sizes = [int(np.prod(x.shape)) for x in xs]
    if indexing == "xy" and len(xs) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xs):
        place = i if indexing == "ij" or len(xs) < 2 or i > 1 else 1 - i
        shape = [1] * len(xs)
        shape[place] = sizes[place]
        out.append(broadcast_to(reshape(x, shape), sizes))
    return out


def sequence_mask(lengths, maxlen=None, dtype=_dt.bool_, name=None):
    """``mask[..., j] = j < lengths[...]``: one row of ``maxlen`` (default: the largest
    length) per length.

    >>> import tapegrad as tf
    >>> tf.sequence_mask([1, 3], 4).numpy().tolist()
    [[True, False, False, False], [True, True, True, False]]
    """
    lengths = tensor(lengths)
    if lengths.dtype.kind not in "iu":
        raise TypeError(f"lengths must be integral, got {lengths.dtype.name}")
    if maxlen is None:
        maxlen = int(np.max(np.asarray(lengths._value))) if lengths.shape and \
            int(np.prod(lengths.shape)) else 0
    maxlen = int(tensor(maxlen)._value) if not isinstance(maxlen, int) else maxlen
    steps = range(maxlen, dtype=lengths.dtype)
    mask = steps < expand_dims(lengths, -1)
    return mask if _dt.as_dtype(dtype) == _dt.bool_ else cast(mask, dtype)

