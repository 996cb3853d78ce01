"""``keras.ops``' activations of Keras 3 (``celu``, ``glu``, the shrinks, ``squareplus``...),
NaN-aware reductions, bitwise operations, linear algebra, segments, scatters and slices,
quantiles and control flow, with Keras 3's dtypes (TensorFlow backend).

>>> from tapegrad.keras import ops
>>> float(ops.nansum([1.0, float("nan"), 2.0])), float(ops.median([3.0, 1.0, 2.0]))
(3.0, 2.0)
"""
import builtins

import numpy as np

from tapegrad import bitwise as _bitwise
from tapegrad import linalg as _linalg
from tapegrad.batching.vmap import vectorized_map as _vectorized_map
from tapegrad.control_flow import ops as _control_flow
from tapegrad.keras import _tf as tf
from tapegrad.ops import scatter_ops as _scatter
from tapegrad.ops.binning_ops import searchsorted as _searchsorted
from tapegrad.ops.framework_ops import slice as _slice
from tapegrad.ops.functional_ops import map_fn as _map_fn
from tapegrad.keras.ops.extra import _float, _t
from tapegrad.keras.ops.numeric import cast, result_type


def _c(v, x):
    return tf.constant(v, x.dtype)


# ---- activations -------------------------------------------------------------------------
def celu(x, alpha=1.0):
    """max(x, 0) + min(alpha (exp(x / alpha) - 1), 0)."""
    x = _float(x)
    a = _c(alpha, x)
    return tf.maximum(x, 0) + tf.minimum(a * tf.math.expm1(x / a), 0)


def glu(x, axis=-1):
    """The gated linear unit: the first half times the sigmoid of the second."""
    a, b = tf.split(_float(x), 2, axis=axis)
    return a * tf.sigmoid(b)


def hard_shrink(x, threshold=0.5):
    x = _float(x)
    return tf.where(tf.abs(x) > _c(threshold, x), x, tf.zeros_like(x))


def hard_tanh(x):
    x = _float(x)
    return tf.clip_by_value(x, _c(-1.0, x), _c(1.0, x))


def soft_shrink(x, threshold=0.5):
    x = _float(x)
    t = _c(threshold, x)
    return tf.where(x > t, x - t, tf.where(x < -t, x + t, tf.zeros_like(x)))


def sparse_plus(x):
    """0 below -1, (x + 1)**2 / 4 up to 1, x above."""
    x = _float(x)
    one = _c(1.0, x)
    return tf.where(x <= -one, tf.zeros_like(x),
                    tf.where(x < one, tf.square(x + one) / _c(4.0, x), x))


def squareplus(x, b=4):
    """(x + sqrt(x**2 + b)) / 2."""
    x = _float(x)
    return (x + tf.sqrt(tf.square(x) + _c(b, x))) / _c(2.0, x)


def tanh_shrink(x):
    x = _float(x)
    return x - tf.tanh(x)


def threshold(x, threshold, default_value):
    """x where x > threshold, else ``default_value``."""
    x = _float(x)
    return tf.where(x > _c(threshold, x), x, tf.fill(tf.shape(x), _c(default_value, x)))


def sparse_sigmoid(x):
    """0 below -1, (x + 1) / 2 up to 1, 1 above."""
    x = _float(x)
    return tf.clip_by_value((x + _c(1.0, x)) / _c(2.0, x), _c(0.0, x), _c(1.0, x))


# ---- NaN-aware reductions ----------------------------------------------------------------
def _nan_fill(x, v):
    x = _t(x)
    if x.dtype.kind not in "fc":
        return x, None
    nan = tf.math.is_nan(x)
    return tf.where(nan, tf.fill(tf.shape(x), _c(v, x)), x), nan


def nansum(x, axis=None, keepdims=False):
    x, _ = _nan_fill(x, 0.0)
    if x.dtype.kind in "biu" and x.dtype.itemsize < 4:
        x = tf.cast(x, "int32")
    return tf.reduce_sum(x, axis=axis, keepdims=keepdims)


def nanprod(x, axis=None, keepdims=False):
    x, _ = _nan_fill(x, 1.0)
    return tf.reduce_prod(x, axis=axis, keepdims=keepdims)


def nanmean(x, axis=None, keepdims=False):
    x = _float(x)
    filled, nan = _nan_fill(x, 0.0)
    count = tf.reduce_sum(tf.cast(tf.logical_not(nan), x.dtype), axis=axis, keepdims=keepdims)
    return tf.reduce_sum(filled, axis=axis, keepdims=keepdims) / count


def nanmax(x, axis=None, keepdims=False):
    x, _ = _nan_fill(x, -np.inf)
    return tf.reduce_max(x, axis=axis, keepdims=keepdims)


def nanmin(x, axis=None, keepdims=False):
    x, _ = _nan_fill(x, np.inf)
    return tf.reduce_min(x, axis=axis, keepdims=keepdims)


def nanvar(x, axis=None, keepdims=False):
    """The population variance of the values that are not NaN."""
    x = _float(x)
    m = nanmean(x, axis=axis, keepdims=True)
    dev, _ = _nan_fill(tf.square(x - m), 0.0)
    nan = tf.math.is_nan(x)
    count = tf.reduce_sum(tf.cast(tf.logical_not(nan), x.dtype), axis=axis, keepdims=keepdims)
    return tf.reduce_sum(dev, axis=axis, keepdims=keepdims) / count


def nanstd(x, axis=None, keepdims=False):
    return tf.sqrt(nanvar(x, axis=axis, keepdims=keepdims))


# ---- bitwise -----------------------------------------------------------------------------
def _ints(x, y):
    d = result_type(x, y)
    return cast(x, d), cast(y, d)


def bitwise_and(x, y):
    return _bitwise.bitwise_and(*_ints(x, y))


def bitwise_or(x, y):
    return _bitwise.bitwise_or(*_ints(x, y))


def bitwise_xor(x, y):
    return _bitwise.bitwise_xor(*_ints(x, y))


def bitwise_invert(x):
    x = _t(x)
    return tf.logical_not(x) if x.dtype.kind == "b" else _bitwise.invert(x)


bitwise_not = bitwise_invert


def bitwise_left_shift(x, y):
    """x * 2**y, wrapping as a shift does (shifts of 0 to the width - 1)."""
    a, b = _ints(x, y)
    return a * tf.pow(tf.ones_like(b) * 2, b)


def bitwise_right_shift(x, y):
    """The arithmetic shift: floor division by 2**y."""
    a, b = _ints(x, y)
    return tf.math.floordiv(a, tf.pow(tf.ones_like(b) * 2, b))


left_shift = bitwise_left_shift
right_shift = bitwise_right_shift


# ---- linear algebra ----------------------------------------------------------------------
def cholesky(x, upper=False):
    c = _linalg.cholesky(_float(x))
    return _linalg.adjoint(c) if upper else c


def det(x):
    return _linalg.det(_float(x))


def inv(x):
    return _linalg.inv(_float(x))


def solve(a, b):
    a, b = _float(a), _float(b)
    return _linalg.solve(a, tf.cast(b, a.dtype))


def solve_triangular(a, b, lower=False):
    a, b = _float(a), _float(b)
    squeeze = b.ndim == a.ndim - 1
    b = b[..., None] if squeeze else b
    x = _linalg.triangular_solve(a, tf.cast(b, a.dtype), lower=lower)
    return x[..., 0] if squeeze else x


def slogdet(x):
    return tuple(_linalg.slogdet(_float(x)))


def logdet(x):
    return _linalg.logdet(_float(x))


def eigh(x):
    return tuple(_linalg.eigh(_float(x)))


def lstsq(a, b, rcond=None):
    """The least-squares solution of a x = b (by the pseudo-inverse)."""
    a, b = _float(a), _float(b)
    return tf.matmul(pinv(a), tf.cast(b, a.dtype))


def pinv(x, rcond=None):
    return _linalg.pinv(_float(x))


def matrix_rank(x, tol=None):
    """The number of singular values above the tolerance (NumPy's default one)."""
    x = _float(x)
    s = _linalg.svd(x, compute_uv=False)
    if tol is None:
        eps = np.finfo(x.dtype).eps
        tol = tf.reduce_max(s, axis=-1, keepdims=True) * _c(eps * builtins.max(x.shape[-2:]), x)
    return tf.reduce_sum(tf.cast(s > tol, "int32"), axis=-1)


# ---- segments, sorting, scatters, slices -------------------------------------------------
def _num_segments(ids, num_segments):
    return int(np.max(np.asarray(ids))) + 1 if num_segments is None else num_segments


def segment_sum(data, segment_ids, num_segments=None, sorted=False):
    return tf.math.unsorted_segment_sum(_t(data), _t(segment_ids),
                                        _num_segments(segment_ids, num_segments))


def segment_max(data, segment_ids, num_segments=None, sorted=False):
    return tf.math.unsorted_segment_max(_t(data), _t(segment_ids),
                                        _num_segments(segment_ids, num_segments))


def searchsorted(sorted_sequence, values, side="left"):
    return tf.cast(_searchsorted(_t(sorted_sequence), _t(values), side=side), "int32")


def bincount(x, weights=None, minlength=0, sparse=False):
    x = _t(x)
    n = builtins.max(int(np.max(np.asarray(x))) + 1 if x.shape[-1] else 0, minlength)
    if weights is None:
        return tf.math.bincount(x, minlength=n, maxlength=n)
    w = _t(weights)
    return tf.math.unsorted_segment_sum(w, x, n)


def slice(inputs, start_indices, shape):
    return _slice(_t(inputs), list(start_indices), list(shape))


def slice_update(inputs, start_indices, updates):
    """``inputs`` with the block at ``start_indices`` replaced by ``updates``."""
    x, u = _t(inputs), tf.cast(_t(updates), _t(inputs).dtype)
    grids = np.meshgrid(*[np.arange(s, s + n) for s, n in zip(start_indices, u.shape)],
                        indexing="ij")
    idx = np.stack(grids, -1).reshape(-1, x.ndim)
    return _scatter.tensor_scatter_nd_update(x, idx, tf.reshape(u, [-1]))


def scatter(indices, values, shape):
    """Zeros of ``shape`` with ``values`` added at ``indices`` (duplicates sum)."""
    return _scatter.scatter_nd(_t(indices), _t(values), list(shape))


def scatter_update(inputs, indices, updates):
    x = _t(inputs)
    return _scatter.tensor_scatter_nd_update(x, _t(indices), tf.cast(_t(updates), x.dtype))


# ---- quantiles ---------------------------------------------------------------------------
def quantile(x, q, axis=None, method="linear", keepdims=False):
    """NumPy's quantiles (``linear``, ``lower``, ``higher``, ``nearest``, ``midpoint``)
    along ``axis`` (all values for None); integers compute in ``floatx``."""
    x = _float(x)
    qt = tf.cast(_t(q), x.dtype)
    if axis is None:
        y, ax = tf.reshape(x, [-1]), 0
    else:
        ax = axis % x.ndim
        y = x
    perm = [a for a in range(y.ndim) if a != ax] + [ax]
    y = tf.sort(tf.transpose(y, perm), axis=-1)
    n = y.shape[-1]
    pos = qt * _c(n - 1, x)
    lo = tf.math.floor(pos)
    hi = tf.math.ceil(pos)
    if method == "lower":
        pos = lo
    elif method == "higher":
        pos = hi
    elif method == "nearest":
        pos = tf.round(pos)  # half to even, as NumPy
    elif method not in ("linear", "midpoint"):
        raise ValueError(f"Invalid value of `method`: {method}")
    gather = lambda p: tf.gather(y, tf.cast(p, "int32"), axis=-1)  # noqa: E731
    if method == "linear":
        frac = pos - lo
        a, b = gather(lo), gather(hi)
        out = a + (b - a) * frac
    elif method == "midpoint":
        out = (gather(lo) + gather(hi)) / _c(2.0, x)
    else:
        out = gather(pos)
    if qt.ndim:  # the quantiles' axis first, as NumPy
        out = tf.transpose(out, [out.ndim - 1] + list(range(out.ndim - 1)))
    if keepdims:
        if axis is None:
            out = tf.reshape(out, list(qt.shape) + [1] * x.ndim)
        else:
            out = tf.expand_dims(out, ax + (1 if qt.ndim else 0))
    return out


def percentile(x, q, axis=None, method="linear", keepdims=False):
    q = tf.cast(_t(q), _float(x).dtype) / tf.constant(100.0, _float(x).dtype)
    return quantile(x, q, axis=axis, method=method, keepdims=keepdims)


def median(x, axis=None, keepdims=False):
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


# ---- control flow ------------------------------------------------------------------------
def cond(pred, true_fn, false_fn):
    return _control_flow.cond(pred, true_fn, false_fn)


def fori_loop(lower, upper, body_fun, init_val):
    """``body_fun(i, val)`` for i in [lower, upper)."""
    return _control_flow.while_loop(lambda i, v: i < upper, lambda i, v: (i + 1, body_fun(i, v)),
                          (lower, init_val))[1]


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    """``loop_vars`` updated by ``body`` while ``cond`` holds: a tuple stays a tuple, a
    single value a single value."""
    single = not isinstance(loop_vars, (tuple, list))
    lv = (loop_vars,) if single else tuple(loop_vars)
    out = _control_flow.while_loop(lambda *v: cond(*v),
                        lambda *v: (lambda r: tuple(r) if isinstance(r, (tuple, list))
                                    else (r,))(body(*v)),
                        lv, maximum_iterations=maximum_iterations)
    return out[0] if single else tuple(out)


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """JAX's ``lax.scan``: ``(carry, stacked ys)`` of ``carry, y = f(carry, x)``."""
    xs_t = None if xs is None else _t(xs)
    n = xs_t.shape[0] if xs_t is not None else length
    order = range(n - 1, -1, -1) if reverse else range(n)
    carry, ys = init, [None] * n
    for i in order:
        carry, ys[i] = f(carry, None if xs_t is None else xs_t[i])
    return _t(carry), tf.stack([_t(y) for y in ys])


def map(f, xs):
    return _map_fn(f, _t(xs))


def vectorized_map(function, elements):
    return _vectorized_map(function, elements)


__all__ = [_n for _n in list(globals()) if not _n.startswith("_")
           and _n not in ("builtins", "np", "tf", "backend", "cast", "convert_to_tensor", "result_type")]
