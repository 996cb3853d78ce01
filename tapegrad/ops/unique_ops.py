"""``tf.unique`` and ``tf.unique_with_counts`` (the distinct elements of a vector in the
order of their first occurrence, TensorFlow's, with each element's index into them), and
``tf.math.bincount``. Their output's length depends on the values, so the input must be
concrete (not traced)."""
import numpy as np

from tapegrad.errors import InvalidArgumentError, NotFoundError
from tapegrad.ops._convert import tensor


def _concrete(x, op):
    x = tensor(x)
    if getattr(x, "_symbolic", False):
        raise NotImplementedError(f"tf.{op} needs concrete values: its output's length "
                                  "depends on them (call it outside tf.function).")
    return x


def _unique(x, out_idx):
    x = _concrete(x, "unique")
    if x.ndim != 1:
        raise InvalidArgumentError(f"unique expects a 1D vector. [Op:Unique] (got shape "
                                   f"{list(x.shape)})")
    v = np.asarray(x._value)
    if v.dtype.kind == "c":  # (registered, but no CPU kernel)
        raise NotFoundError(f"Could not find device for node: {{{{node Unique}}}} = Unique[T="
                            f"DT_{v.dtype.name.upper()}, out_idx=DT_{np.dtype(out_idx).name.upper()}]")
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


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype="int32", name=None,
             axis=None, binary_output=False):
    """Counts (or summed ``weights``) of each value ``0 .. n - 1`` of the integers ``arr``,
    ``n = max(arr) + 1`` (at least ``minlength``, at most ``maxlength``: larger values are
    dropped); the counts are ``dtype``, summed weights the weights' dtype.

    >>> import tapegrad as tf
    >>> tf.math.bincount([1, 1, 3]).numpy().tolist()
    [0, 2, 0, 1]
    """
    if axis not in (None, 0):  # 0: all of arr, as None
        raise NotImplementedError("tf.math.bincount: axis=-1 (per row) is not implemented.")
    a = np.asarray(_concrete(arr, "math.bincount")._value)
    if a.dtype.name not in ("int32", "int64"):  # TensorFlow's Bincount kernels
        raise InvalidArgumentError(f"Value for attr 'Tidx' of {a.dtype.name} is not in the "
                                   "list of allowed values: int32, int64 [Op:Bincount]")
    if a.size and a.min() < 0:
        raise InvalidArgumentError("Input arr must be non-negative!")
    n = int(a.max()) + 1 if a.size else 0
    if minlength is not None:
        n = max(n, int(minlength))
    if maxlength is not None:
        n = min(n, int(maxlength))
    w = None if weights is None else np.asarray(_concrete(weights, "math.bincount")._value)
    keep = a.ravel() < n
    flat = a.ravel()[keep]
    if binary_output:
        out = np.zeros(n, np.dtype(dtype) if w is None else w.dtype)
        out[flat] = 1
        return tensor(out)
    if w is None:
        return tensor(np.bincount(flat, minlength=n)[:n].astype(np.dtype(dtype)))
    wf = np.broadcast_to(w, a.shape).ravel()[keep]
    out = np.zeros(n, wf.dtype)
    np.add.at(out, flat, wf)
    return tensor(out)
