"""``tf.unique`` and ``tf.unique_with_counts``: the distinct elements of a vector in the
order of their first occurrence (TensorFlow's), with each element's index into them. The
output's length depends on the values, so the input must be concrete (not traced)."""
import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.ops._convert import tensor


def _unique(x, out_idx):
    x = tensor(x)
    if getattr(x, "_symbolic", False):
        raise NotImplementedError("tf.unique needs concrete values: its output's length "
                                  "depends on them (call it outside tf.function).")
    if x.ndim != 1:
        raise InvalidArgumentError(f"unique expects a 1D vector. [Op:Unique] (got shape "
                                   f"{list(x.shape)})")
    v = np.asarray(x._value)
    # equal_nan=False: NaN != NaN, so each NaN is its own element, as in TensorFlow's hash
    # table; -0.0 equals 0.0 and the first occurrence's sign is kept
    _, first, inverse, counts = np.unique(v, return_index=True, return_inverse=True,
                                          return_counts=True, equal_nan=False)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    idx = np.dtype(out_idx).type
    return (tensor(v[first[order]]), tensor(rank[inverse.reshape(-1)].astype(idx)),
            tensor(counts[order].astype(idx)))


def unique(x, out_idx="int32", name=None):
    """``(y, idx)``: the distinct elements of ``x`` in order of first occurrence, and
    ``x == tf.gather(y, idx)``.

    >>> import tapegrad as tf
    >>> y, idx = tf.unique([3, 1, 3, 2])
    >>> y.numpy().tolist(), idx.numpy().tolist()
    ([3, 1, 2], [0, 1, 0, 2])
    """
    y, idx, _ = _unique(x, out_idx)
    return y, idx


def unique_with_counts(x, out_idx="int32", name=None):
    """``(y, idx, count)``: ``unique``'s outputs and how often each element occurs.

    >>> import tapegrad as tf
    >>> [t.numpy().tolist() for t in tf.unique_with_counts([3, 1, 3])]
    [[3, 1], [0, 1, 0], [2, 1]]
    """
    return _unique(x, out_idx)
