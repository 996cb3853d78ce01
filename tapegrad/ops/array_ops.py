"""Shape manipulation, indexing and creation, with TensorFlow's names and signatures."""
import builtins
import math as _math

import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.dispatch import bind
from tapegrad.core import hooks
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, convert_to_tensor, holds_size, is_size, sizes_now
from tapegrad.core.tensor import full as _full
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops._convert import axis1, like, static_shape, tensor
from tapegrad.ops._convert import cast as _cast
from tapegrad.primitives import shape as shape_prims

_wrap = Tensor._wrap


def cast(x, dtype, name=None):
    """Convert to ``dtype``; the gradient flows back between floating dtypes only.

    >>> import tapegrad as tf
    >>> tf.cast([1.7], tf.int32).numpy().tolist()
    [1]
    """
    x = tensor(x)
    dtype = _dt.as_dtype(dtype)
    if x.dtype == dtype:
        return x
    return _cast(x, dtype)


def identity(input, name=None):
    """The same values (recorded, so a tape sees a new tensor)."""
    x = tensor(input)
    return bind(shape_prims.reshape_p, x, shape=tuple(x.shape))


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
    (2, 3)
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
    xs = _tensors_like(values)
    if not xs:
        raise ValueError("concat: needs at least one tensor.")
    dt = np.result_type(*[x.dtype for x in xs])
    xs = [cast(x, dt) for x in xs]
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
    (2,)
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
    return [bind(shape_prims.getitem_p, x, index=shape_prims.Index(key + (i,)))
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
        out.append(bind(shape_prims.getitem_p, x, index=shape_prims.Index((slice(None),) * a
                                                      + (slice(start, start + s),))))
        start += s
    return out


def tile(input, multiples, name=None):
    """Repeat the tensor ``multiples[i]`` times along axis i (composed: reshape, broadcast)."""
    x = tensor(input)
    m = static_shape(multiples)
    if len(m) != x.ndim:
        raise ValueError(f"tile: multiples {m} must have one entry per axis of shape "
                         f"{tuple(x.shape)}.")
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
    return bind(shape_prims.getitem_p, x, index=shape_prims.Index(key))


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


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Take slices of ``params`` along ``axis`` at ``indices``.

    >>> import tapegrad as tf
    >>> tf.gather([10.0, 20.0, 30.0], [2, 0]).numpy().tolist()
    [30.0, 10.0]
    """
    x = tensor(params)
    i = tensor(indices)
    if i.dtype.kind not in "iu":
        raise TypeError(f"gather: indices must be integers, got {i.dtype.name}.")
    if batch_dims:  # the leading batch_dims axes are shared: one gather per batch index
        b = int(batch_dims) + (i.ndim if batch_dims < 0 else 0)
        a = axis1(b if axis is None else axis, x.ndim, "gather")
        if not 0 <= b <= i.ndim or b > a:
            raise ValueError(f"batch_dims must be in [-{i.ndim}, {i.ndim}] and at most axis "
                             f"({a}), got {batch_dims}.")
        if b:
            from tapegrad.ops.gather_ops import batched_gather
            return batched_gather(x, i, a, b)
    a = axis1(0 if axis is None else axis, x.ndim, "gather")
    if not getattr(i, "_symbolic", False):
        iv = np.asarray(i._value)
        n = x.shape[a]
        if iv.size and (iv.min() < -n or iv.max() >= n):
            raise IndexError(f"gather: indices {iv.tolist()} out of range [0, {n}) for axis "
                             f"{a} of shape {tuple(x.shape)}.")
    return bind(shape_prims.take_p, x, i, axis=a)


def gather_nd(params, indices, batch_dims=0, name=None):
    """Gather slices of ``params`` addressed by the last axis of ``indices``.

    Composed from gather on the leading axes flattened into one.

    >>> import tapegrad as tf
    >>> tf.gather_nd([[1.0, 2.0], [3.0, 4.0]], [[1, 0], [0, 1]]).numpy().tolist()
    [3.0, 2.0]
    """
    from tapegrad.ops import math_ops
    x = tensor(params)
    i = tensor(indices)
    if i.dtype.kind not in "iu":
        raise TypeError(f"gather_nd: indices must be integers, got {i.dtype.name}.")
    if batch_dims:
        raise NotImplementedError("gather_nd: batch_dims other than 0 is not supported yet.")
    if i.ndim < 1 or i.shape[-1] > x.ndim:
        raise ValueError(f"gather_nd: indices of shape {tuple(i.shape)} do not address params of "
                         f"shape {tuple(x.shape)}: the last axis must be at most {x.ndim} long.")
    k = i.shape[-1]
    dims = tuple(x.shape[:k])
    if not getattr(i, "_symbolic", False):
        iv = np.asarray(i._value)
        if iv.size and ((iv < 0).any() or (iv >= np.array(dims, dtype=np.int64)).any()):
            raise IndexError(f"gather_nd: indices {iv.tolist()} out of range for params of "
                             f"shape {tuple(x.shape)}.")
    # row-major strides turn each index tuple into one flat index (traced indices work too)
    strides = np.cumprod((1,) + dims[:0:-1])[::-1].astype(i.dtype) if k else np.zeros(0, i.dtype)
    flat = math_ops.reduce_sum(i * _wrap(strides), axis=-1)
    xf = reshape(x, (int(np.prod(dims)),) + tuple(x.shape[k:]))
    return bind(shape_prims.take_p, xf, flat, axis=0)


def _norm_index(key, x):
    """Turn a Python index into a static ``Index``; tensors in it must be concrete."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            if getattr(k, "_symbolic", False):
                raise TypeError("Indexing with a traced tensor: use tf.gather instead.")
            k = np.asarray(k._value)
            if k.ndim == 0 and k.dtype.kind in "iu":
                k = int(k)
        elif isinstance(k, list):
            k = np.asarray(k)
        elif isinstance(k, np.integer):
            k = int(k)
        elif isinstance(k, slice):
            k = slice(*(int(v) if isinstance(v, (Tensor, np.integer)) else v
                        for v in (k.start, k.stop, k.step)))
        if isinstance(k, np.ndarray) and k.dtype.kind not in "iub":
            raise TypeError(f"Only integers, slices, ellipsis, tf.newaxis and integer or "
                            f"boolean tensors are valid indices, got {k.dtype}.")
        out.append(k)
    return shape_prims.Index(tuple(out))


def _key_now(key):
    return tuple(slice(*sizes_now((k.start, k.stop, k.step))) if type(k) is slice
                 else k.value if is_size(k) else k for k in key)


def getitem(x, key):
    """``x[key]``: ints, slices with steps, Ellipsis, None, integer and boolean arrays."""
    x = tensor(x)
    idx = _norm_index(key, x)
    try:  # a zero-strided array checks the index without allocating x's size
        np.broadcast_to(np.empty((), bool), sizes_now(x.shape))[_key_now(idx.key)]
    except IndexError as e:
        raise IndexError(f"Index {key!r} is out of range for a tensor of shape "
                         f"{tuple(x.shape)}: {e}") from None
    return bind(shape_prims.getitem_p, x, index=idx)


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


# ---- creation (no gradient) -------------------------------------------------------------
def _dtype(dtype, default=_dt.float32):
    return _dt.as_dtype(dtype) or default


def zeros(shape, dtype=_dt.float32, name=None):
    """A tensor of zeros.

    >>> import tapegrad as tf
    >>> tf.zeros([2]).numpy().tolist()
    [0.0, 0.0]
    """
    return _full(static_shape(shape), 0, _dtype(dtype))


def ones(shape, dtype=_dt.float32, name=None):
    """A tensor of ones."""
    return _full(static_shape(shape), 1, _dtype(dtype))


def zeros_like(input, dtype=None, name=None):
    """Zeros with the shape (and dtype) of ``input``."""
    x = tensor(input)
    return _full(x.shape, 0, _dt.as_dtype(dtype) or x.dtype)


def ones_like(input, dtype=None, name=None):
    """Ones with the shape (and dtype) of ``input``."""
    x = tensor(input)
    return _full(x.shape, 1, _dt.as_dtype(dtype) or x.dtype)


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
    """Like Python's range, as a tensor; int32 for ints, float32 for floats."""
    if limit is None:
        start, limit = 0, start
    vals = [float(v) if isinstance(v, Tensor) and v.dtype.kind == "f" else
            (int(v) if isinstance(v, Tensor) else v) for v in (start, limit, delta)]
    if vals[2] == 0:
        raise ValueError("range: delta must not be zero.")
    if dtype is None:
        dtype = _dt.float32 if any(isinstance(v, float) for v in vals) else _dt.int32
    return _wrap(np.arange(*vals).astype(_dt.as_dtype(dtype)))


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


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """``tf.print``: print tensors' values (to stderr by default, as TensorFlow).

    Runs eagerly only. Inside ``tapegrad.function`` it cannot be staged into the compiled
    program (which has no side effects), and printing once at tracing time would be wrong,
    so it raises; use Python's ``print`` for trace-time messages there.

    >>> import sys, tapegrad as tf
    >>> tf.print("x:", tf.constant([1, 2, 3]), output_stream=sys.stdout)
    x: [1 2 3]
    """
    import sys
    from tapegrad.core.state import STATE
    from tapegrad.util import nest
    if STATE.stack.tracers or any(getattr(t, "_symbolic", False) for t in nest.flatten(inputs)):
        raise NotImplementedError(
            "tapegrad.print cannot run inside tapegrad.function (or vmap): the compiled "
            "program has no side effects. Call it outside, or use Python's print, which "
            "runs once at tracing time.")
    edge = None if summarize is None else int(summarize)
    opts = {"separator": " "}
    if edge is not None and edge >= 0:
        opts.update(threshold=2 * edge, edgeitems=edge)
    else:
        opts.update(threshold=sys.maxsize)

    def fmt(v):
        if isinstance(v, Tensor):
            a = np.asarray(v._value)
            return str(a.item()) if a.ndim == 0 else np.array2string(a, **opts)
        if isinstance(v, (list, tuple)):
            parts = [fmt(e) for e in v]
            return ("[" + ", ".join(parts) + "]") if isinstance(v, list) else \
                ("(" + ", ".join(parts) + ")")
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k!r}: {fmt(e)}" for k, e in v.items()) + "}"
        return str(v)

    stream = sys.stderr if output_stream is None else output_stream
    if isinstance(stream, str):  # TensorFlow's "file://..." and named streams
        stream = sys.stdout if stream in ("stdout", "sys.stdout") else sys.stderr
    builtins.print(sep.join(fmt(v) for v in inputs), end=end, file=stream)


# The public ops are the functions defined here: `from ... import *` must not re-export helpers
# (NumPy, primitive modules, conversion functions) into tapegrad's namespaces.
__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and callable(_v) and getattr(_v, "__module__", "") == __name__]


# ---- sorting ----------------------------------------------------------------------------------
def _direction(direction):
    d = str(direction).upper()
    if d not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    return d == "DESCENDING"


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """Indices that sort ``values`` along ``axis`` (int32, no gradient).

    >>> import tapegrad as tf
    >>> tf.argsort([3.0, 1.0, 2.0]).numpy().tolist()
    [1, 2, 0]
    """
    from tapegrad.primitives.sorting import argsort_p
    x = tensor(values)
    return bind(argsort_p, x, axis=axis1(axis, x.ndim, "argsort"),
                descending=_direction(direction), stable=bool(stable))


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis``; the gradient goes back to where each value came from.

    >>> import tapegrad as tf
    >>> tf.sort([3.0, 1.0, 2.0], direction="DESCENDING").numpy().tolist()
    [3.0, 2.0, 1.0]
    """
    from tapegrad.primitives.sorting import take_along_axis_p
    x = tensor(values)
    a = axis1(axis, x.ndim, "sort")
    idx = argsort(x, axis=a, direction=direction, stable=True)
    return bind(take_along_axis_p, x, idx, axis=a)


def top_k(input, k=1, sorted=True, name=None):
    """The ``k`` largest entries of the last axis and their indices: ``(values, indices)``.

    >>> import tapegrad as tf
    >>> values, indices = tf.math.top_k([1.0, 5.0, 3.0], k=2)
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([5.0, 3.0], [1, 2])
    """
    from tapegrad.primitives.sorting import take_along_axis_p
    x = tensor(input)
    k = int(k)
    if x.ndim == 0 or not 0 <= k <= x.shape[-1]:
        raise ValueError(f"top_k: k={k} must be between 0 and the last dimension of a tensor "
                         f"of shape {tuple(x.shape)}.")
    idx = argsort(x, axis=-1, direction="DESCENDING", stable=True)[..., :k]
    return TopKV2(bind(take_along_axis_p, x, idx, axis=x.ndim - 1), idx)


class TopKV2(tuple):
    """``(values, indices)`` with both names, as ``tf.math.top_k`` returns."""

    def __new__(cls, values, indices):
        return super().__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])


def boolean_mask(tensor_, mask, axis=None, name=None):
    """The entries of ``tensor_`` where ``mask`` (concrete, bool) is True, flattened over
    the mask's axes.

    >>> import tapegrad as tf
    >>> tf.boolean_mask([1.0, 2.0, 3.0], [True, False, True]).numpy().tolist()
    [1.0, 3.0]
    """
    x = tensor(tensor_)
    m = tensor(mask)
    if m.dtype.kind != "b":
        raise TypeError(f"boolean_mask: mask must be bool, got {m.dtype.name}.")
    if getattr(m, "_symbolic", False):
        raise TypeError("boolean_mask: the mask must be concrete (the result's size depends "
                        "on it); use tf.where inside a traced function.")
    a = 0 if axis is None else axis1(axis, x.ndim, "boolean_mask")
    if tuple(x.shape[a:a + m.ndim]) != tuple(m.shape):
        raise ValueError(f"boolean_mask: mask shape {tuple(m.shape)} does not match the "
                         f"dimensions {tuple(x.shape[a:a + m.ndim])} of the tensor at axis {a}.")
    return getitem(x, (slice(None),) * a + (np.asarray(m._value),))


__all__ += ["argsort", "sort", "top_k", "boolean_mask"]

hooks.install(stack=stack)  # convert_to_tensor of a list holding tensors (core/tensor.py)
