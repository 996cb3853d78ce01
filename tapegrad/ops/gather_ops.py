"""``tf.repeat``, ``tf.roll``, ``tf.nn.embedding_lookup`` and ``gather`` with ``batch_dims``,
composed of gather (so both differentiate,
batch and trace through the primitives' rules)."""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops._convert import axis1, tensor
from tapegrad.ops import math_ops
from tapegrad.ops.array_ops import concat, gather, range as _range, reshape, transpose
from tapegrad.tape import sparse_rows
from tapegrad.ops.linalg_ops import clip_by_norm
from tapegrad.primitives.bounds import check_indices_p, gather_message


def repeat(input, repeats, axis=None, name=None):
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened input when
    ``axis`` is None); ``repeats`` is one int or one per element along the axis.

    >>> import tapegrad as tf
    >>> tf.repeat([[1, 2], [3, 4]], [1, 2], axis=0).numpy().tolist()
    [[1, 2], [3, 4], [3, 4]]
    """
    x = tensor(input)
    if axis is None:
        x, axis = reshape(x, [-1]), 0
    a = axis1(axis, x.ndim, "repeat")
    r = repeats._value if isinstance(repeats, Tensor) else np.asarray(repeats)
    if r.dtype.kind not in "iu" or r.ndim > 1:
        raise TypeError(f"repeat: `repeats` must be an integer or a 1-D list of integers, "
                        f"got {repeats!r}.")
    n = x.shape[a]
    if r.ndim == 1 and r.shape[0] not in (1, n):
        raise ValueError(f"Dimensions {n} and {r.shape[0]} are not compatible")
    if np.any(r < 0):
        raise InvalidArgumentError(f"repeat: `repeats` must be >= 0, got {r.tolist()}.")
    index = np.repeat(np.arange(n, dtype=np.int64), np.broadcast_to(r, (n,)))
    return gather(x, index, axis=a)


def embedding_lookup(params, ids, max_norm=None, name=None):
    """The rows of ``params`` at ``ids`` (any shape): ``gather(params, ids)``; with
    ``max_norm``, rows whose L2 norm exceeds it are scaled down to it.

    >>> import tapegrad as tf
    >>> table = tf.constant([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    >>> tf.nn.embedding_lookup(table, [[2, 0]]).numpy().tolist()
    [[[4.0, 5.0], [0.0, 1.0]]]
    """
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError("embedding_lookup: sharded params (a list of several "
                                      "tensors) are not supported; concatenate them.")
        params = params[0]
    p, i = tensor(params), tensor(ids)
    if i.dtype.kind not in "iu":
        raise TypeError(f"embedding_lookup: ids must be integers, got {i.dtype.name}.")
    if not getattr(i, "_symbolic", False):
        iv = np.asarray(i._value).reshape(-1)
        n = p.shape[0]
        bad = np.flatnonzero((iv < 0) | (iv >= n))
        if bad.size:
            k = int(bad[0])
            raise InvalidArgumentError(f"indices[{k}] = {int(iv[k])} is not in [0, {n})")
    rows = sparse_rows.mark(gather(p, i))  # TensorFlow's Gather: IndexedSlices gradients
    if max_norm is not None:
        # each looked-up row (all axes after the ids' axes) is clipped as a whole
        rows = clip_by_norm(rows, max_norm, axes=list(range(i.ndim, rows.ndim)))
    return rows


def roll(input, shift, axis, name=None):
    """Shift elements along ``axis`` cyclically by ``shift`` (ints, or lists of them: shifts
    of one axis add up). A concrete shift is two slices and a concat; a traced one a gather.

    >>> import tapegrad as tf
    >>> tf.roll([1, 2, 3, 4, 5], shift=2, axis=0).numpy().tolist()
    [4, 5, 1, 2, 3]
    """
    x = tensor(input)
    shifts, axes = _listed(shift, "shift"), _listed(axis, "axis")
    if len(shifts) != len(axes):
        raise InvalidArgumentError(f"shift and axis must have the same size, got "
                                   f"{len(shifts)} and {len(axes)} [Op:Roll]")
    total = {}
    for s, a in zip(shifts, axes):
        a = axis1(int(a), x.ndim, "roll")
        if isinstance(s, Tensor) and s._symbolic:
            total[a] = total.get(a, 0) + s  # a traced shift: summed as a tensor
        else:
            total[a] = total.get(a, 0) + int(getattr(s, "_value", s))
    for a, s in total.items():
        n = x.shape[a]
        if n == 0:
            continue
        if isinstance(s, Tensor):  # element i comes from (i - s) mod n
            index = math_ops.floormod(_range(n, dtype=s.dtype) - s, n)
            x = gather(x, index, axis=a)
            continue
        s %= n
        if s:
            pre = (slice(None),) * a
            x = concat([x[pre + (slice(n - s, None),)], x[pre + (slice(0, n - s),)]], a)
    return x


def _listed(v, what):
    """A scalar or list argument as a list; a traced scalar stays a tensor (only a shift
    may be traced)."""
    if isinstance(v, Tensor):
        if v._symbolic:
            if v.ndim != 0 or what != "shift":
                raise TypeError(f"roll: a traced {what} must be a scalar shift.")
            return [v]
        v = v._value
    return [v] if np.ndim(v) == 0 else list(np.asarray(v).reshape(-1))


def batched_gather(x, i, axis, batch_dims):
    """``gather`` with ``batch_dims``: for each index of the leading ``batch_dims`` axes
    (shared by params and indices) a gather along ``axis``; one ``take`` on the batch folded
    into the gathered axis, with each batch's indices offset into its block."""
    b = batch_dims
    if tuple(x.shape[:b]) != tuple(i.shape[:b]):
        k = next(d for d in range(b) if x.shape[d] != i.shape[d])
        raise InvalidArgumentError(f"params.shape[{k}]: {x.shape[k]} should be equal to "
                                   f"indices.shape[{k}]: {i.shape[k]} [Op:GatherV2]")
    n = x.shape[axis]
    if not getattr(i, "_symbolic", False):
        err = gather_message(i._value, n)
        if err is not None:
            raise InvalidArgumentError(f"{err} [Op:GatherV2]")
    else:  # the floormod below would wrap an index out of range: checked when run
        i = bind(check_indices_p, i, bound=(n,), what="gather")
    batch = tuple(x.shape[:b])
    nb = int(np.prod(batch, dtype=np.int64))
    mid, rest = tuple(x.shape[b:axis]), tuple(x.shape[axis + 1:])
    # params as (batch * n, mid..., rest...): the gathered axis next to the batch, folded
    xm = transpose(x, tuple(range(b)) + (axis,) + tuple(range(b, axis))
                   + tuple(range(axis + 1, x.ndim)))
    xm = reshape(xm, (nb * n,) + mid + rest)
    inner = tuple(i.shape[b:])
    offsets = np.arange(nb, dtype=i.dtype).reshape((nb,) + (1,) * len(inner)) * n
    flat = reshape(math_ops.floormod(i, n), (nb,) + inner) + Tensor._wrap(offsets)
    out = gather(xm, flat, axis=0)  # (batch, inner..., mid..., rest...)
    ni, nm = len(inner), len(mid)
    perm = (0,) + tuple(range(1 + ni, 1 + ni + nm)) + tuple(range(1, 1 + ni)) + tuple(
        range(1 + ni + nm, out.ndim))
    return reshape(transpose(out, perm), batch + mid + inner + rest)
