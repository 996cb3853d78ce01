"""More of ``keras.ops``' NumPy-style functions: inverse and hyperbolic trigonometry, integer
division, NaN tests, sorting, triangles and diagonals, padding, stacking, axes moves, with
Keras 3's dtype rules (numeric.py: integers compute transcendental functions in ``floatx``;
tensors promote as JAX does).

>>> from tapegrad.keras import ops
>>> ops.triu(ops.ones((2, 2))).numpy().tolist(), ops.argsort([3, 1, 2]).numpy().tolist()
([[1.0, 1.0], [0.0, 1.0]], [1, 2, 0])
"""
import builtins

import numpy as np

from tapegrad import linalg as _linalg
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.ops.numeric import _binary, _floating, cast, convert_to_tensor, result_type
from tapegrad.ops.gather_ops import roll as _roll

arccos = _floating(tf.math.acos, "The inverse cosine.")
arcsin = _floating(tf.math.asin, "The inverse sine.")
arctan = _floating(tf.math.atan, "The inverse tangent.")
arccosh = _floating(tf.math.acosh, "The inverse hyperbolic cosine.")
arcsinh = _floating(tf.math.asinh, "The inverse hyperbolic sine.")
arctanh = _floating(tf.math.atanh, "The inverse hyperbolic tangent.")
cosh = _floating(tf.math.cosh, "The hyperbolic cosine.")
sinh = _floating(tf.math.sinh, "The hyperbolic sine.")
log2 = _floating(lambda x: tf.math.log(x) / tf.math.log(tf.constant(2.0, x.dtype)),
                 "The base-2 logarithm.")
log10 = _floating(lambda x: tf.math.log(x) / tf.math.log(tf.constant(10.0, x.dtype)),
                  "The base-10 logarithm.")
floor_divide = _binary(tf.math.floordiv)
mod = _binary(tf.math.floormod)
logical_xor = _binary(lambda a, b: tf.math.logical_xor(tf.cast(a, "bool"), tf.cast(b, "bool")))


def _float_pair(x1, x2):
    d = result_type(x1, x2, 1.0)
    return cast(x1, d), cast(x2, d)


def arctan2(x1, x2):
    """The angle of the point ``(x2, x1)``; integers compute in ``floatx``."""
    return tf.math.atan2(*_float_pair(x1, x2))


def logaddexp(x1, x2):
    """``log(exp(x1) + exp(x2))`` without overflow; integers compute in ``floatx``."""
    a, b = _float_pair(x1, x2)
    big = tf.maximum(a, b)
    same = tf.equal(a, b)  # the same infinity twice: a - b would be NaN; the sum is big
    rest = tf.math.log1p(tf.exp(-tf.abs(_apart(a, b, same))))
    return tf.where(same, big + np.log(2.0).astype(big.dtype.name), big + rest)


def _apart(a, b, same):
    """``a - b``, 0 where ``same`` (without the NaN, or NumPy's warning, of inf - inf)."""
    zero = tf.zeros_like(a)
    return tf.where(same, zero, a) - tf.where(same, zero, b)


def divide_no_nan(x1, x2):
    """``x1 / x2``, 0 where ``x2`` is 0; integers divide in ``floatx``."""
    return tf.math.divide_no_nan(*_float_pair(x1, x2))


def trunc(x):
    """Rounded toward zero (integers unchanged)."""
    x = convert_to_tensor(x)
    if x.dtype.kind in "biu":
        return x
    return tf.where(x < 0, tf.math.ceil(x), tf.floor(x))


def _is(test, ints):
    def op(x):
        x = convert_to_tensor(x)
        if x.dtype.kind in "biu":
            return tf.fill(x.shape, ints) if x.shape else tf.constant(ints)
        return test(x)
    op.__name__ = test.__name__
    op.__doc__ = f"Elementwise ``{test.__name__}`` (integers: all {ints})."
    return op


isnan = _is(tf.math.is_nan, False)
isinf = _is(tf.math.is_inf, False)
isfinite = _is(tf.math.is_finite, True)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NaN replaced by ``nan``, infinities by ``posinf`` / ``neginf`` (the dtype's largest
    and smallest finite values by default)."""
    x = convert_to_tensor(x)
    if x.dtype.kind not in "fc":
        return x
    info = np.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = tf.where(tf.math.is_nan(x), tf.cast(nan, x.dtype), x)
    x = tf.where(tf.equal(x, np.inf), tf.cast(posinf, x.dtype), x)
    return tf.where(tf.equal(x, -np.inf), tf.cast(neginf, x.dtype), x)


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """``|x1 - x2| <= atol + rtol * |x2|`` elementwise (NumPy's rule)."""
    d = result_type(x1, x2)
    a, b = cast(x1, d), cast(x2, d)
    if d.kind not in "fc":
        return tf.equal(a, b)
    same = tf.equal(a, b)  # equal infinities are close, as in NumPy; other ones are not
    finite = tf.logical_and(tf.math.is_finite(a), tf.math.is_finite(b))
    near = tf.abs(_apart(a, b, same)) <= atol + rtol * tf.abs(b)
    close = tf.logical_or(same, tf.logical_and(finite, near))
    if equal_nan:
        close = tf.logical_or(close, tf.logical_and(tf.math.is_nan(a), tf.math.is_nan(b)))
    return close


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Whether ``isclose`` holds everywhere."""
    return tf.reduce_all(isclose(x1, x2, rtol, atol, equal_nan))


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` over ``axis``, without overflow."""
    x = convert_to_tensor(x)
    if x.dtype.kind in "biu":
        x = tf.cast(x, backend.floatx())
    return tf.math.reduce_logsumexp(x, axis=axis, keepdims=keepdims)


def cumprod(x, axis=None, dtype=None):
    """The running product (of the flattened tensor for ``axis=None``); ``bool`` as
    ``int32``."""
    x = convert_to_tensor(x, dtype)
    if x.dtype.kind == "b":
        x = tf.cast(x, "int32")
    return tf.math.cumprod(tf.reshape(x, [-1]), axis=0) if axis is None else \
        tf.math.cumprod(x, axis)


def count_nonzero(x, axis=None):
    """The number of nonzero entries, as ``int32``."""
    return tf.cast(tf.math.count_nonzero(convert_to_tensor(x), axis=axis), "int32")


# -- sorting ---------------------------------------------------------------------------
def _sortable(x, axis):
    x = convert_to_tensor(x)
    if x.dtype.kind == "b":
        x = tf.cast(x, "uint8")
    return (tf.reshape(x, [-1]), -1) if axis is None else (x, axis)


def sort(x, axis=-1):
    """Sorted along ``axis`` (of the flattened tensor for ``axis=None``)."""
    dtype = convert_to_tensor(x).dtype
    x, axis = _sortable(x, axis)
    return tf.cast(tf.sort(x, axis=axis), dtype)


def argsort(x, axis=-1):
    """The indices that sort ``x`` along ``axis`` (stable), as ``int32``."""
    x, axis = _sortable(x, axis)
    return tf.cast(tf.argsort(x, axis=axis, stable=True), "int32")


def top_k(x, k, sorted=True):
    """The ``k`` largest entries of the last axis and their indices (``int32``)."""
    values, indices = tf.math.top_k(convert_to_tensor(x), k=k, sorted=sorted)
    return values, tf.cast(indices, "int32")


# -- shapes ----------------------------------------------------------------------------
def ravel(x):
    """The entries as a 1-D tensor."""
    return tf.reshape(convert_to_tensor(x), [-1])


def moveaxis(x, source, destination):
    """Axes ``source`` moved to ``destination`` (ints or sequences), the others in order."""
    x = convert_to_tensor(x)
    n = x.ndim
    src = [s % n for s in np.atleast_1d(source).tolist()]
    dst = [d % n for d in np.atleast_1d(destination).tolist()]
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number "
                         f"of elements, but they have {len(src)} and {len(dst)}.")
    order = [a for a in range(n) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tf.transpose(x, order)


def swapaxes(x, axis1, axis2):
    """Axes ``axis1`` and ``axis2`` exchanged."""
    x = convert_to_tensor(x)
    order = list(range(x.ndim))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return tf.transpose(x, order)


def roll(x, shift, axis=None):
    """Entries shifted cyclically along ``axis`` (of the flattened tensor for None)."""
    x = convert_to_tensor(x)
    if axis is None:
        return tf.reshape(_roll(tf.reshape(x, [-1]), shift, 0), x.shape)
    return _roll(x, shift, axis)


def _triangle(x, k, lower):
    x = convert_to_tensor(x)
    n, m = x.shape[-2], x.shape[-1]
    keep = np.tri(n, m, k, dtype=bool) if lower else ~np.tri(n, m, k - 1, dtype=bool)
    return tf.where(keep, x, tf.zeros_like(x))


def tril(x, k=0):
    """The lower triangle of the last two axes (entries above diagonal ``k`` zeroed)."""
    return _triangle(x, k, True)


def triu(x, k=0):
    """The upper triangle of the last two axes (entries below diagonal ``k`` zeroed)."""
    return _triangle(x, k, False)


def diagonal(x, offset=0, axis1=0, axis2=1):
    """Diagonal ``offset`` of the plane ``(axis1, axis2)``, as a last axis."""
    x = moveaxis(convert_to_tensor(x), [axis1, axis2], [-2, -1])
    n, m = x.shape[-2], x.shape[-1]
    rows = np.arange(builtins.max(0, -offset), n)
    rows = rows[rows + offset < m]
    flat = tf.reshape(x, list(x.shape[:-2]) + [n * m])
    return tf.gather(flat, rows * m + rows + offset, axis=-1)


def diag(x, k=0):
    """The matrix with 1-D ``x`` on diagonal ``k``, or diagonal ``k`` of 2-D ``x``."""
    x = convert_to_tensor(x)
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError(f"`x` must be 1-D or 2-D, got shape {x.shape}")
    d = _linalg.diag(x)
    a = builtins.abs(k)
    return tf.pad(d, [[0, a], [a, 0]] if k > 0 else [[a, 0], [0, a]])


def trace(x, offset=0, axis1=0, axis2=1):
    """The sum of diagonal ``offset``; ``bool`` sums as ``int32``."""
    d = diagonal(x, offset, axis1, axis2)
    if d.dtype.kind == "b":
        d = tf.cast(d, "int32")
    return tf.reduce_sum(d, axis=-1)


def outer(x1, x2):
    """The outer product of the flattened ``x1`` and ``x2``."""
    d = result_type(x1, x2)
    return tf.reshape(cast(x1, d), [-1, 1]) * tf.reshape(cast(x2, d), [1, -1])


def tensordot(x1, x2, axes=2):
    """``tf.tensordot`` after Keras's dtype promotion."""
    d = result_type(x1, x2)
    return tf.tensordot(cast(x1, d), cast(x2, d), axes)


def pad(x, pad_width, mode="constant", constant_values=None):
    """NumPy's ``pad``: ``pad_width`` an int, a pair, or a pair per axis."""
    x = convert_to_tensor(x)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2)).tolist()
    mode = mode.upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(f"Unsupported padding mode {mode.lower()!r}.")
    if constant_values is not None and mode != "CONSTANT":
        raise ValueError("Argument `constant_values` can only be provided when "
                         f"`mode == 'constant'`. Received: mode={mode.lower()}")
    return tf.pad(x, widths, mode=mode, constant_values=0 if constant_values is None
                  else constant_values)


def unstack(x, num=None, axis=0):
    """The slices along ``axis``, as a list."""
    return tf.unstack(convert_to_tensor(x), num=num, axis=axis)


def _joined(xs):
    xs = [convert_to_tensor(x) for x in xs]
    d = result_type(*xs)
    return [tf.cast(x, d) for x in xs]


def hstack(xs):
    """Concatenated along axis 1 (axis 0 for 1-D tensors)."""
    xs = _joined(xs)
    return tf.concat(xs, 0 if builtins.all(x.ndim == 1 for x in xs) else 1)


def vstack(xs):
    """1-D tensors as rows, concatenated along axis 0."""
    xs = [tf.reshape(x, [1, -1]) if x.ndim == 1 else x for x in _joined(xs)]
    return tf.concat(xs, 0)


def meshgrid(*x, indexing="xy"):
    """Coordinate grids (``indexing='xy'`` or ``'ij'``)."""
    return tf.meshgrid(*[convert_to_tensor(v) for v in x], indexing=indexing)


def full_like(x, fill_value, dtype=None):
    """A tensor of ``x``'s shape filled with ``fill_value``."""
    x = convert_to_tensor(x)
    return tf.fill(x.shape, tf.cast(fill_value, dtype or x.dtype))


def copy(x):
    """A copy of ``x``."""
    return tf.identity(convert_to_tensor(x))


# -- activations -----------------------------------------------------------------------
def hard_sigmoid(x):
    """``relu6(x + 3) / 6``."""
    x = convert_to_tensor(x)
    return tf.nn.relu6(x + 3.0) / 6.0


def hard_silu(x):
    """``x * hard_sigmoid(x)``."""
    x = convert_to_tensor(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu

__all__ = [_n for _n in list(globals()) if not _n.startswith("_")
           and _n not in ("builtins", "np", "tf", "backend", "cast", "convert_to_tensor",
                          "result_type")]
