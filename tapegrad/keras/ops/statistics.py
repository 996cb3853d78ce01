"""``keras.ops``' ``unique``, ``argpartition``, ``histogram``, ``corrcoef``, ``correlate``
and the NaN-aware quantiles (``nanquantile``, ``nanpercentile``, ``nanmedian``), with
Keras 3's results and dtypes (TensorFlow backend).

>>> from tapegrad.keras import ops
>>> ops.unique([3, 1, 3]).numpy().tolist(), float(ops.nanmedian([1.0, float("nan"), 3.0]))
([1, 3], 2.0)
"""
import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.ops.extra import _float, _t
from tapegrad.keras.ops.numeric import result_type
from tapegrad.ops.binning_ops import searchsorted as _searchsorted
from tapegrad.ops.diag_ops import diag_part as _diag_part
from tapegrad.ops.sort_ops import top_k as _top_k
from tapegrad.ops.unique_ops import _concrete

__all__ = ["unique", "argpartition", "histogram", "corrcoef", "correlate", "nanquantile",
           "nanpercentile", "nanmedian"]


def unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False,
           axis=None, size=None, fill_value=None):
    """The distinct elements (or slices along ``axis``) of ``x``: sorted, or in the order
    of their first occurrence; with the index of each one's first occurrence, each
    element's index into them and their counts, as asked. ``size`` truncates or pads the
    values (with ``fill_value``, 0 by default), the first-occurrence indices (with 1) and
    the counts (with 0). Its length depends on the values, so ``x`` must be concrete.

    >>> [t.numpy().tolist() for t in unique([2, 0, 2], sorted=False, return_counts=True)]
    [[2, 0], [2, 1]]
    """
    x = _concrete(_t(x), "unique")
    v = np.asarray(x.numpy())
    if sorted and v.dtype == bool:  # the sort's negation has no bool kernel
        raise InvalidArgumentError("Value for attr 'T' of bool is not in the list of allowed "
                                   "values [Op:Neg]")
    if axis is None:
        v, axis = v.reshape(-1), 0
    axis %= max(v.ndim, 1)
    values, first, inverse, counts = np.unique(v, return_index=True, return_inverse=True,
                                               return_counts=True, axis=axis)
    inverse = inverse.reshape(-1)
    if not sorted:  # first-occurrence order
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        values, first, counts, inverse = (np.take(values, order, axis=axis), first[order],
                                          counts[order], rank[inverse])
    if size is not None:
        n = values.shape[axis]
        values = np.take(values, np.arange(min(n, size)), axis=axis)
        pad = [(0, 0)] * values.ndim
        pad[axis] = (0, max(size - n, 0))
        fill = 0 if fill_value is None else fill_value
        values = np.pad(values, pad, constant_values=np.asarray(fill).astype(values.dtype))
        first = np.pad(first[:size], (0, max(size - n, 0)), constant_values=1)
        counts = np.pad(counts[:size], (0, max(size - n, 0)))
    out = [tf.constant(values, x.dtype)]
    for wanted, a in ((return_index, first), (return_inverse, inverse),
                      (return_counts, counts)):
        if wanted:
            out.append(tf.constant(a.astype(np.int32)))
    return out[0] if len(out) == 1 else tuple(out)


def argpartition(x, kth, axis=-1):
    """Indices that partition ``x`` along ``axis``: those of the ``kth + 1`` smallest
    values, in increasing order, then the rest in decreasing order (``kth`` clipped to the
    axis). As Keras's TensorFlow backend, the values are compared as int32 (floats are
    truncated).

    >>> argpartition([4, 1, 8, 2], 1).numpy().tolist()
    [1, 3, 2, 0]
    """
    x = tf.cast(_t(x), "int32")
    if axis is None:
        x, axis = tf.reshape(x, [-1]), 0
    axis %= x.ndim
    perm = list(range(x.ndim))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    x = tf.transpose(x, perm)
    n = x.shape[-1]
    k = min(max(int(kth), 0), n - 1)
    low = _top_k(-x, k + 1).indices
    taken = tf.reduce_sum(tf.one_hot(low, n, dtype="int32"), axis=-2) > 0
    rest = tf.where(taken, tf.constant(np.iinfo(np.int32).min, "int32"), x)
    high = _top_k(rest, n - k - 1).indices
    return tf.transpose(tf.concat([low, high], axis=-1), perm)


def histogram(x, bins=10, range=None):
    """Counts of the 1-D ``x`` in ``bins`` equal bins over ``range`` (the values' minimum
    and maximum by default; values outside it are left out, the maximum falls in the
    last bin), and the ``bins + 1`` edges, both in ``x``'s dtype.

    >>> [t.numpy().tolist() for t in histogram([0.0, 1.0, 1.0, 4.0], bins=2)]
    [[3.0, 1.0], [0.0, 2.0, 4.0]]
    """
    x = _t(x)
    if x.ndim != 1:
        raise ValueError(f"Input tensor must be 1-dimensional. Received: input.shape="
                         f"{tuple(x.shape)}")
    if bins < 1:
        raise InvalidArgumentError("Indices and updates specified for empty output. "
                                   "[Op:ScatterNd]")
    if range is None:
        low, high = tf.reduce_min(x), tf.reduce_max(x)
    else:
        low, high = (tf.cast(_t(v), x.dtype) for v in range)
    edges = tf.linspace(tf.cast(low, _float(x).dtype), tf.cast(high, _float(x).dtype),
                        bins + 1)
    edges = tf.cast(edges, x.dtype)
    inside = tf.cast(tf.logical_and(x >= low, x <= high), x.dtype)
    which = _searchsorted(edges[1:-1], x, side="right")
    counts = tf.reduce_sum(tf.one_hot(which, bins, dtype=x.dtype) * tf.expand_dims(inside, 1),
                           axis=0)
    return counts, edges


def corrcoef(x):
    """Pearson correlation coefficients of the rows of ``x`` (the variables; columns are
    observations), clipped to [-1, 1]; integers compute in ``floatx``.

    >>> corrcoef([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]).numpy().tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    x = _float(x)
    if x.ndim == 0:
        return tf.constant(float("nan"), backend.floatx())
    if x.ndim != 2:
        raise InvalidArgumentError(f"In[0] and In[1] has different ndims: {list(x.shape)} vs. "
                                   f"{list(x.shape)} [Op:MatMul]")
    centered = x - tf.reduce_mean(x, axis=-1, keepdims=True)
    cov = tf.matmul(centered, centered, transpose_b=True) / tf.constant(x.shape[-1] - 1,
                                                                         x.dtype)
    std = tf.sqrt(_diag_part(cov))
    corr = cov / (tf.expand_dims(std, 1) * tf.expand_dims(std, 0))
    return tf.clip_by_value(corr, tf.constant(-1.0, x.dtype), tf.constant(1.0, x.dtype))


def correlate(x1, x2, mode="valid"):
    """The cross-correlation of two 1-D sequences, ``sum_k x1[n + k] * x2[k]``, as NumPy's
    (real inputs): ``valid`` where they overlap fully, ``full`` everywhere, ``same`` the
    middle ``max(len)`` of ``full``. Integers compute in float32 (int64 in float64).

    >>> correlate([1.0, 2.0, 3.0], [0.0, 1.0], mode="full").numpy().tolist()
    [1.0, 2.0, 3.0, 0.0]
    """
    if mode not in ("valid", "same", "full"):
        raise ValueError(f"Invalid mode: '{mode}'. Mode must be one of: 'full', 'same', "
                         "'valid'.")
    a, b = _t(x1), _t(x2)
    dtype = result_type(a, b)
    dtype = ("float64" if dtype == np.int64 else dtype.name
             if dtype.name in ("float16", "bfloat16", "float64") else "float32")
    a, b = tf.cast(a, dtype), tf.cast(b, dtype)
    n, m = a.shape[0], b.shape[0]
    if mode != "valid":
        a = tf.pad(a, [[m - 1, m - 1]])
    if a.shape[0] < m:
        raise InvalidArgumentError(f"Computed output size would be negative: "
                                   f"{a.shape[0] - m + 1} [input_size: {a.shape[0]}, "
                                   f"effective_filter_size: {m}, stride: 1] [Op:Conv2D]")
    out = tf.reshape(tf.nn.conv1d(tf.reshape(a, [1, -1, 1]), tf.reshape(b, [m, 1, 1]), 1,
                                  "VALID"), [-1])
    if mode == "same":
        length = max(n, m)
        start = (n + m - 1 - length) // 2
        out = out[start:start + length]
    return out


# ---- NaN-aware quantiles -----------------------------------------------------------------
def _row_quantiles(rows, q, method):
    """Quantiles ``q`` (a vector) of each row of the 2-D ``rows``, its NaNs left out (NaN
    where a row has none): ``(rows, len(q))``."""
    nan = tf.math.is_nan(rows)
    valid = tf.reduce_sum(tf.cast(tf.logical_not(nan), "int32"), axis=1, keepdims=True)
    # NaNs sorted to the end, as +inf, then zeros: only the first `valid` entries are read
    ordered = tf.sort(tf.where(nan, tf.constant(np.inf, rows.dtype), rows), axis=1)
    ordered = tf.where(tf.expand_dims(tf.range(rows.shape[1]), 0) < valid, ordered,
                       tf.zeros_like(ordered))
    last = tf.cast(tf.maximum(valid - 1, 0), rows.dtype)
    pos = tf.expand_dims(q, 0) * last
    lo, hi = tf.math.floor(pos), tf.math.ceil(pos)
    if method == "lower":
        pos = lo
    elif method == "higher":
        pos = hi
    elif method == "nearest":
        pos = tf.round(pos)  # half to even, as NumPy
    elif method not in ("linear", "midpoint"):
        raise ValueError(f"Invalid value of `method`: {method}")
    take = lambda p: tf.gather(ordered, tf.cast(p, "int32"), axis=1, batch_dims=1)  # noqa: E731
    if method == "linear":
        a, b = take(lo), take(hi)
        out = a + (b - a) * (pos - lo)
    elif method == "midpoint":
        out = (take(lo) + take(hi)) / tf.constant(2.0, rows.dtype)
    else:
        out = take(pos)
    return tf.where(valid > 0, out, tf.fill(tf.shape(out), np.array(np.nan, rows.dtype.name)))


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    """``quantile`` over the values that are not NaN (NaN where all are): NumPy's methods
    ``linear``, ``lower``, ``higher``, ``nearest`` and ``midpoint``, ``q``'s axes first;
    integers compute in ``floatx``.

    >>> nanquantile([[1.0, float("nan"), 3.0]], 0.5, axis=1).numpy().tolist()
    [2.0]
    """
    x = _float(x)
    # q in floatx before x's dtype, as Keras (a float64 x sees float32's q)
    q = tf.cast(tf.cast(_t(q), backend.floatx()), x.dtype)
    axes = (list(range(x.ndim)) if axis is None else
            sorted(a % x.ndim for a in ([axis] if isinstance(axis, int) else axis)))
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = tf.transpose(x, kept + axes) if x.ndim else x
    kept_shape = [x.shape[d] for d in kept]
    rows = tf.reshape(moved, [int(np.prod(kept_shape)), -1])
    out = _row_quantiles(rows, tf.reshape(q, [-1]), method)  # (rows, len(q))
    out = tf.reshape(tf.transpose(out), list(q.shape) + kept_shape)
    if keepdims:
        shape = list(q.shape) + [1 if d in axes else x.shape[d] for d in range(x.ndim)]
        out = tf.reshape(out, shape)
    return out


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    """``nanquantile`` of ``q / 100``."""
    q = tf.cast(_t(q), backend.floatx()) / tf.constant(100.0, backend.floatx())
    return nanquantile(x, q, axis=axis, method=method, keepdims=keepdims)


def nanmedian(x, axis=None, keepdims=False):
    """The median of the values that are not NaN; ``axis=()`` returns ``x``."""
    if isinstance(axis, (tuple, list)) and not axis:
        return _t(x)
    return nanquantile(x, 0.5, axis=axis, keepdims=keepdims)
