"""``tf.tensor_scatter_nd_update``, ``_add``, ``_sub``, ``_max`` and ``_min``: a copy of
``tensor`` with the slices addressed by the last axis of ``indices`` replaced by, added to,
or compared with ``updates`` (max and min: the primitives of
``primitives/scatter_extremes.py``).

Composed of primitives on the addressed axes flattened into one (as ``gather_nd``): the
additions are a ``take_add`` (a scatter: its gradient is a gather, TensorFlow's); an update
gathers, for each addressed slice, the last update that names it (the position found by a
segment max of the update positions), and selects it over the tensor. So duplicate indices
give the last update, as TensorFlow's CPU kernel, and the updates it overwrote get a zero
gradient (TensorFlow gives each duplicate the full gradient of the slice, though only the
last one reaches the output). Indices may be traced.

>>> import tapegrad as tf
>>> tf.tensor_scatter_nd_update([0.0, 0.0, 0.0], [[2], [0]], [5.0, 6.0]).numpy().tolist()
[6.0, 0.0, 5.0]
"""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError, NotFoundError
from tapegrad.ops import math_ops
from tapegrad.ops._convert import tensor
from tapegrad.ops.array_ops import gather, range as _range, reshape, zeros
from tapegrad.primitives import scatter_extremes, segments
from tapegrad.primitives.bounds import check_indices_p, nd_message
from tapegrad.primitives.gather import take_add_p

_wrap = Tensor._wrap


def _flat(tensor_, indices, updates, op):
    """(tensor flattened over the addressed axes, flat indices, updates flattened likewise,
    the number of addressed slices), with TensorFlow's checks."""
    t = tensor(tensor_)
    i = tensor(indices)
    u = tensor(updates, t.dtype)
    if i.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be int32 or int64, got {i.dtype.name}.")
    if i.ndim < 1 or i.shape[-1] > t.ndim:
        raise InvalidArgumentError(f"Index innermost dimension length must be <= tensor rank; "
                                   f"saw: {i.shape[-1] if i.ndim else 0} vs. {t.ndim} [Op:{op}]")
    k = i.shape[-1]
    dims = tuple(t.shape[:k])
    want = tuple(i.shape[:-1]) + tuple(t.shape[k:])
    if tuple(u.shape) != want:
        raise InvalidArgumentError(f"updates must have shape {list(want)} for indices of shape "
                                   f"{list(i.shape)} into a tensor of shape {list(t.shape)}, "
                                   f"got {list(u.shape)} [Op:{op}]")
    if not getattr(i, "_symbolic", False):
        err = nd_message(i._value, tuple(t.shape), "scatter_nd") if k and np.size(i._value) else None
        if err is not None:
            raise InvalidArgumentError(f"{err} [Op:{op}]")
    elif k:  # the flat index below would hide a component out of range: checked when run
        i = bind(check_indices_p, i, bound=tuple(t.shape), what="scatter_nd")
    slices = int(np.prod(dims, dtype=np.int64))
    strides = np.cumprod((1,) + dims[:0:-1])[::-1].astype(i.dtype) if k else np.zeros(0, i.dtype)
    flat = math_ops.reduce_sum(i * _wrap(strides), axis=-1) if k else \
        math_ops.reduce_sum(i, axis=-1)
    m = int(np.prod(i.shape[:-1], dtype=np.int64))
    rest = tuple(t.shape[k:])
    return (reshape(t, (slices,) + rest), reshape(flat, (m,)), reshape(u, (m,) + rest), slices)


def _scattered(op, tensor_, indices, updates, sign):
    t = tensor(tensor_)
    tf_, flat, uf, slices = _flat(t, indices, updates, op)
    added = bind(take_add_p, uf, flat, axis=0, size=slices)
    out = tf_ + added if sign > 0 else tf_ - added
    return reshape(out, tuple(t.shape))


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` added at ``indices`` (duplicates add up).

    >>> import tapegrad as tf
    >>> tf.tensor_scatter_nd_add([1.0, 1.0], [[0], [0]], [2.0, 3.0]).numpy().tolist()
    [6.0, 1.0]
    """
    return _scattered("TensorScatterAdd", tensor, indices, updates, 1)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` subtracted at ``indices`` (duplicates add up).

    >>> import tapegrad as tf
    >>> tf.tensor_scatter_nd_sub([1.0, 1.0], [[1]], [2.0]).numpy().tolist()
    [1.0, -1.0]
    """
    return _scattered("TensorScatterSub", tensor, indices, updates, -1)


def scatter_nd(indices, updates, shape, name=None):
    """Zeros of ``shape`` (concrete) with ``updates`` added at ``indices`` (duplicates add
    up), in the updates' dtype.

    >>> import tapegrad as tf
    >>> tf.scatter_nd([[2], [0], [2]], [1.0, 2.0, 3.0], [4]).numpy().tolist()
    [2.0, 0.0, 4.0, 0.0]
    """
    u = tensor(updates)
    if getattr(shape, "_symbolic", False):
        raise TypeError("scatter_nd: the shape must be concrete (it sets the output's shape).")
    shape = tuple(int(d) for d in np.asarray(shape._value if isinstance(shape, Tensor) else
                                             shape, dtype=np.int64).reshape(-1))
    return _scattered("ScatterNd", zeros(shape, u.dtype), indices, u, 1)


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """``tensor`` with the slices at ``indices`` replaced by ``updates`` (the last of
    duplicates wins). The gradient reaches ``tensor`` off the updated slices, and each
    update that reaches the output."""
    t = _as_tensor(tensor)
    tf_, flat, uf, slices = _flat(t, indices, updates, "TensorScatterUpdate")
    m = uf.shape[0]
    # the position of the last update naming each slice, -1 (the int lowest) where none does
    positions = _range(m, dtype=flat.dtype)
    last = bind(segments.unsorted_segment_max_p, positions, flat, num_segments=slices)
    hit = last >= 0
    picked = gather(uf, math_ops.where(hit, last, 0)) if m else tf_
    hit = reshape(hit, (slices,) + (1,) * (tf_.ndim - 1))
    return reshape(math_ops.where(hit, picked, tf_), tuple(t.shape))


def _extreme(prim, op, tensor_, indices, updates):
    t = tensor(tensor_)
    if t.dtype.kind in "bc":  # TensorFlow has no kernel for them
        raise NotFoundError(f"{op}: no kernel for {t.dtype.name} tensors [Op:{op}]")
    tf_, flat, uf, _ = _flat(t, indices, updates, op)
    return reshape(bind(prim, tf_, flat, uf), tuple(t.shape))


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """``tensor`` with each slice at ``indices`` the max of itself and its updates (a NaN in
    ``tensor`` stays, a NaN update changes nothing, as TensorFlow's kernel). The gradient
    is shared among the elements equal to the result, as TensorFlow's.

    >>> import tapegrad as tf
    >>> tf.tensor_scatter_nd_max([1.0, 5.0, 2.0], [[0], [1], [0]], [4.0, 3.0, 6.0]).numpy().tolist()
    [6.0, 5.0, 2.0]
    """
    return _extreme(scatter_extremes.scatter_max_p, "TensorScatterMax", tensor, indices,
                    updates)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """``tensor`` with each slice at ``indices`` the min of itself and its updates (see
    ``tensor_scatter_nd_max``).

    >>> import tapegrad as tf
    >>> tf.tensor_scatter_nd_min([1.0, 5.0, 2.0], [[0], [1]], [4.0, 3.0]).numpy().tolist()
    [1.0, 3.0, 2.0]
    """
    return _extreme(scatter_extremes.scatter_min_p, "TensorScatterMin", tensor, indices,
                    updates)


_as_tensor = tensor

__all__ = ["scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
           "tensor_scatter_nd_max", "tensor_scatter_nd_min"]
