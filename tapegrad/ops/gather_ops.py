"""``tf.repeat`` and ``tf.nn.embedding_lookup``, composed of gather (so both differentiate,
batch and trace through the primitives' rules)."""
import numpy as np

from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops._convert import axis1, tensor
from tapegrad.ops.array_ops import gather, reshape
from tapegrad.ops.linalg_ops import clip_by_norm


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
    rows = gather(p, i)
    if max_norm is not None:
        # each looked-up row (all axes after the ids' axes) is clipped as a whole
        rows = clip_by_norm(rows, max_norm, axes=list(range(i.ndim, rows.ndim)))
    return rows
