"""Still more of ``keras.ops``, each with Keras 3's dtypes (TensorFlow backend): elementwise
functions (``cbrt``, ``hypot``, ``sinc``, ``gcd``...), array helpers (``diff``, ``rot90``,
``kron``, ``take_along_axis``...), windows, the NaN-aware reductions, bitwise operations, the
linear algebra of ``keras.ops`` (``solve``, ``lstsq``...), segments, scatters and slices,
quantiles, and the control flow (``cond``, ``fori_loop``, ``while_loop``, ``scan``, ``map``).

>>> from tapegrad.keras import ops
>>> ops.diff([1.0, 4.0, 9.0]).numpy().tolist(), int(ops.gcd(12, 18))
([3.0, 5.0], 6)
"""
import builtins
import math

import numpy as np

from tapegrad import linalg as _linalg
from tapegrad.keras import _tf as tf
from tapegrad.ops.binning_ops import searchsorted as _searchsorted
from tapegrad.keras import backend
from tapegrad.keras.ops.numeric import (_floating, cast, convert_to_tensor,
                                        result_type)


def _t(x):
    return convert_to_tensor(x)


def _float(x):
    x = _t(x)
    return tf.cast(x, backend.floatx()) if x.dtype.kind in "biu" else x


def _float_pair(x1, x2):
    d = result_type(x1, x2, 1.0)
    return cast(x1, d), cast(x2, d)


# ---- elementwise -------------------------------------------------------------------------
cbrt = _floating(lambda x: tf.sign(x) * tf.pow(tf.abs(x), tf.constant(1.0 / 3.0, x.dtype)),
                 "The real cube root.")
deg2rad = _floating(lambda x: x * tf.constant(math.pi / 180.0, x.dtype), "Degrees to radians.")
rad2deg = _floating(lambda x: x * tf.constant(180.0 / math.pi, x.dtype), "Radians to degrees.")
exp2 = _floating(lambda x: tf.pow(tf.constant(2.0, x.dtype), x), "2 ** x.")
erfc = _floating(tf.math.erfc, "The complementary error function.")


def hypot(x1, x2):
    """sqrt(x1**2 + x2**2); integers compute in ``floatx``."""
    a, b = _float_pair(x1, x2)
    return tf.sqrt(a * a + b * b)


def heaviside(x1, x2):
    """0 where x1 < 0, x2 where x1 == 0, 1 where x1 > 0."""
    a, b = _float_pair(x1, x2)
    return tf.where(a < 0, tf.zeros_like(a), tf.where(a > 0, tf.ones_like(a), b + 0 * a))


def logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2), without overflow."""
    a, b = _float_pair(x1, x2)
    # one comparison picks both, so at a tie their derivatives split the tie alike
    first = a >= b
    big, small = tf.where(first, a, b), tf.where(first, b, a)
    ln2 = tf.constant(math.log(2.0), a.dtype)
    return big + tf.math.log1p(tf.exp((small - big) * ln2)) / ln2


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0; integers compute in ``floatx``."""
    x = _float(x)
    px = x * tf.constant(math.pi, x.dtype)
    safe = tf.where(tf.equal(x, 0), tf.ones_like(px), px)
    return tf.where(tf.equal(x, 0), tf.ones_like(px), tf.sin(safe) / safe)


def signbit(x):
    """Whether the sign bit is set (also for -0.0 and NaNs with it)."""
    x = _t(x)
    if x.dtype.kind == "b":
        return tf.zeros_like(x, "bool")
    if x.dtype.kind in "iu":
        return tf.less(x, 0)
    # the sign of -0.0 and of a NaN is no comparison's: 1 / x tells -0.0 apart
    return tf.logical_or(x < 0, tf.logical_and(tf.equal(x, 0), 1 / x < 0))


def fmod(x1, x2):
    """The remainder with the sign of x1 (C's ``fmod``): the floor remainder, moved by one
    divisor where its sign differs from x1's (both exact)."""
    d = result_type(x1, x2)
    if d.kind == "b":
        d = np.dtype("int32")
    a, b = cast(x1, d), cast(x2, d)
    r = tf.math.floormod(a, b)
    wrong = tf.logical_and(tf.not_equal(r, 0), tf.not_equal(r < 0, a < 0))
    return tf.where(wrong, r - b, r)


def gcd(x1, x2):
    """The greatest common divisor of integers (non-negative)."""
    d = result_type(x1, x2)
    a = np.gcd(np.asarray(cast(x1, d)), np.asarray(cast(x2, d)))
    return tf.convert_to_tensor(a.astype(d))


def lcm(x1, x2):
    """The least common multiple of integers (non-negative)."""
    d = result_type(x1, x2)
    a = np.lcm(np.asarray(cast(x1, d)), np.asarray(cast(x2, d)))
    return tf.convert_to_tensor(a.astype(d))


def isneginf(x):
    x = _t(x)
    return tf.logical_and(tf.math.is_inf(x), x < 0) if x.dtype.kind == "f" else \
        tf.zeros_like(x, "bool")


def isposinf(x):
    x = _t(x)
    return tf.logical_and(tf.math.is_inf(x), x > 0) if x.dtype.kind == "f" else \
        tf.zeros_like(x, "bool")


def isreal(x):
    x = _t(x)
    return tf.equal(tf.math.imag(x), 0) if x.dtype.kind == "c" else tf.ones_like(x, "bool")


def real(x):
    x = _t(x)
    return tf.math.real(x) if x.dtype.kind == "c" else x


def imag(x):
    x = _t(x)
    return tf.math.imag(x) if x.dtype.kind == "c" else tf.zeros_like(x)


def conj(x):
    x = _t(x)
    return tf.math.conj(x) if x.dtype.kind == "c" else x


conjugate = conj


# ---- arrays ------------------------------------------------------------------------------
def fliplr(x):
    return tf.reverse(_t(x), [1])


def flipud(x):
    return tf.reverse(_t(x), [0])


def rot90(array, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (NumPy's direction)."""
    x = _t(array)
    a0, a1 = (a % x.ndim for a in axes)
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    k %= 4
    if k == 1:
        return tf.transpose(tf.reverse(x, [a1]), perm)
    if k == 2:
        return tf.reverse(x, [a0, a1])
    if k == 3:
        return tf.reverse(tf.transpose(x, perm), [a1])
    return x


def diff(a, n=1, axis=-1):
    """The ``n``-th differences along ``axis``."""
    x = _t(a)
    axis %= x.ndim
    for _ in range(n):
        hi = [slice(None)] * x.ndim
        lo = list(hi)
        hi[axis], lo[axis] = slice(1, None), slice(None, -1)
        x = x[tuple(hi)] - x[tuple(lo)]
    return x


def append(x1, x2, axis=None):
    a, b = _t(x1), _t(x2)
    d = result_type(a, b)
    a, b = tf.cast(a, d), tf.cast(b, d)
    if axis is None:
        return tf.concat([tf.reshape(a, [-1]), tf.reshape(b, [-1])], 0)
    return tf.concat([a, b], axis)


def average(x, axis=None, weights=None):
    """The (weighted) mean; integers compute in ``floatx``."""
    x = _float(x)
    if weights is None:
        return tf.reduce_mean(x, axis=axis)
    w = tf.cast(_t(weights), x.dtype)
    if axis is not None and w.ndim == 1 and x.ndim > 1:
        shape = [1] * x.ndim
        shape[axis] = -1
        w = tf.reshape(w, shape)
    w = w * tf.ones_like(x)
    return tf.reduce_sum(x * w, axis=axis) / tf.reduce_sum(w, axis=axis)


def ptp(x, axis=None, keepdims=False):
    """Max minus min."""
    x = _t(x)
    return tf.reduce_max(x, axis=axis, keepdims=keepdims) - \
        tf.reduce_min(x, axis=axis, keepdims=keepdims)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule along ``axis``."""
    y = _float(y)
    axis %= y.ndim
    hi = [slice(None)] * y.ndim
    lo = list(hi)
    hi[axis], lo[axis] = slice(1, None), slice(None, -1)
    mid = (y[tuple(hi)] + y[tuple(lo)]) / tf.constant(2.0, y.dtype)
    if x is None:
        return tf.reduce_sum(mid, axis=axis) * tf.constant(dx, y.dtype)
    return tf.reduce_sum(mid * diff(tf.cast(_t(x), y.dtype), axis=axis), axis=axis)


def vander(x, N=None, increasing=False):
    x = _t(x)
    n = x.shape[0] if N is None else N
    powers = tf.range(n) if increasing else tf.range(n - 1, -1, -1)
    return tf.pow(x[:, None], tf.cast(powers, x.dtype)[None, :])


def tri(N, M=None, k=0, dtype=None):
    """Ones on and below the ``k``-th diagonal of an N x M matrix."""
    M = N if M is None else M
    rows, cols = np.arange(N)[:, None], np.arange(M)[None, :]
    return tf.convert_to_tensor((cols <= rows + k).astype(dtype or backend.floatx()))


def diagflat(x, k=0):
    x = tf.reshape(_t(x), [-1])
    n = x.shape[0] + builtins.abs(k)
    return _linalg.diag(x, k=k, num_rows=n, num_cols=n)


def kron(x1, x2):
    a, b = _t(x1), _t(x2)
    d = result_type(a, b)
    a, b = tf.cast(a, d), tf.cast(b, d)
    (m, n), (p, q) = a.shape, b.shape
    return tf.reshape(a[:, None, :, None] * b[None, :, None, :], [m * p, n * q])


def inner(x1, x2):
    a, b = _t(x1), _t(x2)
    d = result_type(a, b)
    a, b = tf.cast(a, d), tf.cast(b, d)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tf.tensordot(a, b, [[a.ndim - 1], [b.ndim - 1]])


def vdot(x1, x2):
    a, b = _t(x1), _t(x2)
    d = result_type(a, b)
    return tf.reduce_sum(tf.reshape(conj(tf.cast(a, d)), [-1]) * tf.reshape(tf.cast(b, d), [-1]))


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors along the last axes."""
    a, b = _t(x1), _t(x2)
    d = result_type(a, b)
    a, b = tf.cast(a, d), tf.cast(b, d)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return tf.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


def dstack(xs):
    xs = [_t(x) for x in xs]
    xs = [x[:, :, None] if x.ndim == 2 else x[None, :, None] if x.ndim == 1 else x for x in xs]
    return tf.concat(xs, 2)


def _split_equal(x, n, axis):
    return list(tf.split(_t(x), n, axis=axis))


def hsplit(x, indices_or_sections):
    return _split_equal(x, indices_or_sections, 1 if _t(x).ndim > 1 else 0)


def vsplit(x, indices_or_sections):
    return _split_equal(x, indices_or_sections, 0)


def array_split(x, indices_or_sections, axis=0):
    """Split into ``n`` nearly equal parts (the first ones one longer)."""
    x = _t(x)
    n, size = indices_or_sections, x.shape[axis]
    sizes = [size // n + (1 if i < size % n else 0) for i in range(n)]
    return list(tf.split(x, sizes, axis=axis))


def empty(shape, dtype=None):
    return tf.zeros(shape, dtype or backend.floatx())


def empty_like(x, dtype=None):
    return tf.zeros_like(_t(x), dtype=dtype)


def array(x, dtype=None):
    return convert_to_tensor(x, dtype=dtype)


def is_tensor(x):
    return tf.is_tensor(x)


def dtype(x):
    return backend.standardize_dtype(_t(x).dtype)


def saturate_cast(x, dtype):
    """Cast, clipping to the target dtype's range first."""
    x = _t(x)
    dtype = np.dtype(backend.standardize_dtype(dtype))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if x.dtype.kind == "f":
            lo, hi = tf.constant(info.min, x.dtype), tf.constant(info.max, x.dtype)
        else:
            wide = "int64" if x.dtype.kind in "iub" else x.dtype
            x = tf.cast(x, wide)
            lo, hi = tf.constant(info.min, wide), tf.constant(builtins.min(info.max, 2**63 - 1), wide)
        x = tf.clip_by_value(x, lo, hi)
    return tf.cast(x, dtype)


def select(condlist, choicelist, default=0):
    """The first choice whose condition holds, else ``default``."""
    choices = [_t(c) for c in choicelist]
    d = result_type(*choices, default)
    out = tf.cast(tf.ones_like(choices[0]), d) * tf.cast(_t(default), d)
    for c, v in reversed(list(zip(condlist, choices))):
        out = tf.where(tf.cast(_t(c), "bool"), tf.cast(v, d), out)
    return out


def take_along_axis(x, indices, axis=None):
    x, idx = _t(x), tf.cast(_t(indices), "int64")
    if axis is None:
        x, axis = tf.reshape(x, [-1]), 0
    axis %= x.ndim
    idx = tf.where(idx < 0, idx + x.shape[axis], idx)
    return _take_along(x, idx, axis)


def _take_along(x, idx, axis):
    # move the axis last, gather with batch dims over the others
    perm = [a for a in range(x.ndim) if a != axis] + [axis]
    inv = np.argsort(perm).tolist()
    xt, it = tf.transpose(x, perm), tf.transpose(idx, perm)
    shape = [builtins.max(a, b) for a, b in zip(xt.shape[:-1], it.shape[:-1])]
    xt = tf.broadcast_to(xt, shape + [xt.shape[-1]])
    it = tf.broadcast_to(it, shape + [it.shape[-1]])
    return tf.transpose(tf.gather(xt, it, axis=-1, batch_dims=len(shape)), inv)


def unravel_index(indices, shape):
    idx = _t(indices)
    out, rest = [], idx
    for s in reversed(shape[1:]):
        out.append(tf.math.floormod(rest, s))
        rest = tf.math.floordiv(rest, s)
    out.append(rest)
    return tuple(reversed(out))


def digitize(x, bins):
    """The index of each value's bin (``bins`` increasing): NumPy's ``right=False``."""
    x, b = _t(x), tf.cast(_t(bins), _t(x).dtype)
    return tf.reshape(tf.cast(_searchsorted(b, tf.reshape(x, [-1]), side="right"), "int32"),
                      x.shape)


def isin(x1, x2):
    a, b = _t(x1), tf.reshape(_t(x2), [-1])
    d = result_type(a, b)
    return tf.reduce_any(tf.equal(tf.cast(a, d)[..., None], tf.cast(b, d)), axis=-1)


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    d = dtype or backend.floatx()
    e = tf.linspace(tf.cast(start, d), tf.cast(stop, d), num) if endpoint else \
        tf.cast(start, d) + (tf.cast(stop, d) - tf.cast(start, d)) * tf.cast(tf.range(num), d) / num
    return tf.pow(tf.cast(base, d), e)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    d = dtype or backend.floatx()
    lo, hi = tf.math.log(tf.cast(start, d)), tf.math.log(tf.cast(stop, d))
    out = tf.exp(tf.linspace(lo, hi, num))
    if endpoint and num > 1:  # the ends exactly
        out = tf.concat([tf.cast(start, d)[None], out[1:-1], tf.cast(stop, d)[None]], 0)
    return out


def _window(x, f):
    n = int(x)
    if n == 1:
        return tf.ones([1], backend.floatx())
    k = np.arange(n, dtype=np.float64)
    return tf.convert_to_tensor(f(k, n).astype(backend.floatx()))


def bartlett(x):
    return _window(x, lambda k, n: 1 - np.abs(2 * k / (n - 1) - 1))


def blackman(x):
    return _window(x, lambda k, n: 0.42 - 0.5 * np.cos(2 * np.pi * k / (n - 1))
                   + 0.08 * np.cos(4 * np.pi * k / (n - 1)))


def hamming(x):
    return _window(x, lambda k, n: 0.54 - 0.46 * np.cos(2 * np.pi * k / (n - 1)))


def hanning(x):
    return _window(x, lambda k, n: 0.5 - 0.5 * np.cos(2 * np.pi * k / (n - 1)))


__all__ = [_n for _n in list(globals()) if not _n.startswith("_")
           and _n not in ("builtins", "math", "np", "tf", "backend", "cast", "convert_to_tensor", "result_type")]
