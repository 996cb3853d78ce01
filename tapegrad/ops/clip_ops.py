"""``tf.clip_by_global_norm`` and ``tf.linalg.global_norm``, with TensorFlow's arithmetic:
the norm is the square root of twice the summed ``l2_loss`` of the tensors, and the scale
``clip_norm * min(1 / norm, 1 / clip_norm)`` is NaN for an infinite or NaN norm; and
``tf.dtypes.saturate_cast``, a clamp then a cast."""
import numpy as np

from tapegrad.core.dtypes import as_dtype
from tapegrad.core.tensor import Tensor
from tapegrad.ops import array_ops, math_ops, nn_ops
from tapegrad.ops._convert import tensor
from tapegrad.ops.indexed_slices import rows_of


def _sequence(t_list):
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")
    return list(t_list)


def global_norm(t_list, name=None):
    """sqrt(sum of the squared entries of every tensor); None entries are ignored.

    >>> import tapegrad as tf
    >>> float(tf.linalg.global_norm([tf.constant([3.0]), tf.constant([[4.0]])]))
    5.0
    """
    values = [tensor(rows_of(t)[0]) for t in _sequence(t_list) if t is not None]
    if not values:
        return tensor(0.0)
    half = [nn_ops.l2_loss(v) for v in values]
    return math_ops.sqrt(math_ops.reduce_sum(array_ops.stack(half)) * 2)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """``(clipped, norm)``: every tensor scaled by ``clip_norm / max(norm, clip_norm)``,
    where ``norm`` is their ``global_norm`` (or ``use_norm``); None entries stay None,
    and an infinite or NaN norm makes every entry NaN, as in TensorFlow.

    >>> import tapegrad as tf
    >>> clipped, norm = tf.clip_by_global_norm([tf.constant([3.0]), tf.constant([4.0])], 1.0)
    >>> [round(float(c), 6) for c in clipped], float(norm)
    ([0.6, 0.8], 5.0)
    """
    t_list = _sequence(t_list)
    norm = global_norm(t_list) if use_norm is None else tensor(use_norm)
    c = array_ops.cast(clip_norm, norm.dtype)
    scale = c * math_ops.minimum(1.0 / norm, 1.0 / c)
    scale = scale + (norm - norm)  # NaN where the norm is not finite
    clipped = [None if t is None else _scaled(t, scale) for t in t_list]
    return clipped, norm


def _scaled(t, scale):
    rows, wrap = rows_of(t)  # tf.IndexedSlices: its rows scaled, as TensorFlow
    rows = tensor(rows)
    return wrap(rows * array_ops.cast(scale, rows.dtype))


def _range(dtype):
    """The finite extremes of a numeric dtype, exactly (Python ints, or the floats' own)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return int(info.min), int(info.max)
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return info.min, info.max
    raise TypeError(f"Cannot find minimum value of {dtype.name}.")


def _limit(value, src, toward_zero_if):
    """``value`` in the source dtype, moved toward zero while ``toward_zero_if`` holds of it
    (a float limit that rounds beyond the target's range)."""
    if src.kind in "iu":
        return src.type(int(value))
    v = src.type(value)
    while toward_zero_if(v):
        v = np.nextafter(v, src.type(0))
    return v


def saturate_cast(value, dtype, name=None):
    """``value`` cast to ``dtype``, clamped first to the part of ``dtype``'s range that the
    input's dtype can represent (TensorFlow's saturate_cast: float32 3e9 to int32 is
    2147483520, the largest float32 below 2**31). A complex input to a real dtype keeps its
    real part.

    >>> import tapegrad as tf
    >>> tf.dtypes.saturate_cast([300.7, -5.2, 12.9], tf.uint8).numpy().tolist()
    [255, 0, 12]
    """
    x = tensor(value)
    out = np.dtype(as_dtype(dtype))
    real_out = _REAL.get(out, out)
    if x.dtype.kind == "c":
        if out.kind == "c":  # real and imaginary parts clamped alike
            parts = [_clamp(f(x), real_out) for f in (math_ops.real, math_ops.imag)]
            return array_ops.cast(math_ops.complex(*parts), out)
        x = math_ops.real(x)
    return array_ops.cast(_clamp(x, real_out), out)


_REAL = {np.dtype("complex64"): np.dtype("float32"), np.dtype("complex128"): np.dtype("float64")}


def _clamp(x, target):
    """``x`` clamped, in its own dtype, to the values that fit ``target``'s range. The
    limits are found exactly (Python ints, exact float comparisons): TensorFlow compares in
    a promoted dtype, which rounds int64's 2**63 - 1 up to 2**63 and lets the limit
    overflow (its float64 -> int64 of 1e30 is -2**63)."""
    src = x.dtype
    (s_lo, s_hi), (d_lo, d_hi) = _range(src), _range(target)
    # compared exactly: float16's -65504 against -2**63 would overflow converting the int
    lo = _limit(max(s_lo, d_lo, key=_exact), src,
                lambda v: np.isfinite(v) and _exact(v) < _exact(d_lo))
    hi = _limit(min(s_hi, d_hi, key=_exact), src,
                lambda v: np.isfinite(v) and _exact(v) > _exact(d_hi))
    return math_ops.clip_by_value(x, tensor(np.array(lo, src)), tensor(np.array(hi, src)))


def _exact(v):
    """A number as an exact rational (floats too), for comparisons across dtypes."""
    from fractions import Fraction
    return Fraction(int(v)) if isinstance(v, (int, np.integer)) else Fraction(float(v))
