"""Indexing with TensorFlow's names: ``x[key]``, gather, gather_nd, boolean_mask."""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor, convert_to_tensor, is_size, sizes_now
from tapegrad.ops._convert import axis1, tensor
from tapegrad.ops.shape_ops import reshape
from tapegrad.primitives import elementwise
from tapegrad.primitives import gather as gather_prims
from tapegrad.tape import sparse_rows
from tapegrad.primitives.bounds import check_indices_p, nd_message
from tapegrad.errors import InvalidArgumentError

__all__ = ["gather", "gather_nd", "getitem", "boolean_mask"]

_wrap = Tensor._wrap


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
    if i.dtype.name not in ("int16", "int32", "int64"):  # TensorFlow's GatherV2 kernels
        raise InvalidArgumentError(f"Value for attr 'Tindices' of {i.dtype.name} is not in the "
                                   "list of allowed values: int16, int32, int64 [Op:GatherV2]")
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
    # take checks the indices (eager or compiled): TensorFlow's InvalidArgumentError for
    # one outside [0, n), a negative one included (NumPy would count it from the end)
    return bind(gather_prims.take_p, x, i, axis=a)


def row_gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """``tf.gather`` as programs call it: ``gather``, whose output a tape knows for a
    TensorFlow ``Gather`` (a source read only through such gathers on its first axis gets a
    ``tf.IndexedSlices`` gradient, tape/sparse_rows.py). tapegrad's own ops gather with
    ``gather``: where TensorFlow's kernels give dense gradients, so do they.

    >>> import tapegrad as tf
    >>> tf.gather([[1.0, 2.0], [3.0, 4.0]], [1]).numpy().tolist()
    [[3.0, 4.0]]
    """
    return sparse_rows.mark(gather(params, indices, validate_indices, axis, batch_dims))


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
        err = nd_message(i._value, tuple(x.shape), "gather_nd") if k and np.size(i._value) else None
        if err is not None:
            raise InvalidArgumentError(err + " [Op:GatherNd]")
    elif k:  # the flat index below would hide a component out of range: checked when run
        i = bind(check_indices_p, i, bound=tuple(x.shape), what="gather_nd")
    # row-major strides turn each index tuple into one flat index (traced indices work too)
    strides = np.cumprod((1,) + dims[:0:-1])[::-1].astype(i.dtype) if k else np.zeros(0, i.dtype)
    flat = math_ops.reduce_sum(i * _wrap(strides), axis=-1)
    xf = reshape(x, (int(np.prod(dims)),) + tuple(x.shape[k:]))
    return bind(gather_prims.take_p, xf, flat, axis=0)


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
    return gather_prims.Index(tuple(out))


def _key_now(key):
    return tuple(slice(*sizes_now((k.start, k.stop, k.step))) if type(k) is slice
                 else k.value if is_size(k) else k for k in key)


def _symbolic_scalar_index(key, x):
    """``x[i]`` / ``x[:, i]`` with a symbolic integer scalar ``i`` (a staged loop's counter)
    as a gather, negative ``i`` counting from the end as in TensorFlow; None otherwise."""
    key = key if isinstance(key, tuple) else (key,)
    sym = [a for a, k in enumerate(key) if isinstance(k, Tensor) and getattr(k, "_symbolic", False)]
    if len(sym) != 1 or len(key) > x.ndim or any(
            not (isinstance(k, slice) and k == slice(None)) for a, k in enumerate(key)
            if a != sym[0]):
        return None
    axis, i = sym[0], key[sym[0]]
    if i.ndim != 0 or i.dtype.kind not in "iu":
        return None
    n = convert_to_tensor(x.shape[axis], dtype=i.dtype)
    i = bind(elementwise.where_p, i < 0, i + n, i)
    return bind(gather_prims.take_p, x, i, axis=axis)


_PLAIN = {}  # a plain key's bounds -> its Index (slices are unhashable before Python 3.12)
_BOUND = (int, type(None))


def _plain_index(key):
    """The ``Index`` of a key of ints and slices of ints or None (``x[:, 1:2]``: the common
    case, ~3 us instead of ~10 us by ``_norm_index`` and the broadcast check), or None for
    any other key."""
    if type(key) is not tuple:
        key = (key,)
    parts = []
    for k in key:
        t = type(k)
        if t is slice:
            b = (k.start, k.stop, k.step)
            if type(b[0]) not in _BOUND or type(b[1]) not in _BOUND or type(b[2]) not in _BOUND:
                return None
            parts.append(b)
        elif t is int:
            parts.append(k)
        else:
            return None
    parts = tuple(parts)
    idx = _PLAIN.get(parts)
    if idx is None:
        if len(_PLAIN) >= 1024:
            _PLAIN.clear()
        idx = _PLAIN[parts] = gather_prims.Index(key)
    return idx


def getitem(x, key):
    """``x[key]``: ints, slices with steps, Ellipsis, None, integer and boolean arrays; a
    symbolic integer scalar alone, or with ``:`` elsewhere, gathers along its axis."""
    if type(x) is Tensor and type(x._value) is np.ndarray:  # a concrete tensor
        idx = _plain_index(key)
        if idx is not None:
            try:  # the view itself checks the index (NumPy's own IndexError)
                x._value[idx.key]
            except IndexError as e:
                raise IndexError(f"Index {key!r} is out of range for a tensor of shape "
                                 f"{tuple(x.shape)}: {e}") from None
            return bind(gather_prims.getitem_p, x, index=idx)
    x = tensor(x)
    taken = _symbolic_scalar_index(key, x)
    if taken is not None:
        return taken
    idx = _norm_index(key, x)
    try:  # a zero-strided array checks the index without allocating x's size
        np.broadcast_to(np.empty((), bool), sizes_now(x.shape))[_key_now(idx.key)]
    except IndexError as e:
        raise IndexError(f"Index {key!r} is out of range for a tensor of shape "
                         f"{tuple(x.shape)}: {e}") from None
    return bind(gather_prims.getitem_p, x, index=idx)


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
