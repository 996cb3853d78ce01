"""``keras.ops``' ``angle``, ``polar``, ``kaiser`` and ``nextafter``, with Keras 3's
dtypes (TensorFlow backend).

>>> from tapegrad.keras import ops
>>> ops.angle([-1.0, 2.0]).numpy().astype(float).round(4).tolist(), ops.kaiser(3, 0.0).numpy().tolist()
([3.1416, 0.0], [1.0, 1.0, 1.0])
"""
import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.ops.extra import _t
from tapegrad.keras.ops.numeric import result_type
from tapegrad.ops.elementwise_ops import complex as _complex

__all__ = ["angle", "polar", "kaiser", "nextafter"]


def angle(x):
    """The argument of each (complex) element, atan2(imag, real): pi for negative reals,
    0 for the others; integers and int64 give ``floatx``.

    >>> angle([-2, 3]).numpy().astype(float).round(4).tolist()
    [3.1416, 0.0]
    """
    x = _t(x)
    if x.dtype.kind == "c":
        return tf.math.atan2(tf.math.imag(x), tf.math.real(x))
    x = tf.cast(x, backend.floatx() if x.dtype.kind in "biu" else x.dtype)
    return tf.math.atan2(tf.zeros_like(x), x)


def polar(abs_, angle):
    """The complex numbers ``abs_ * (cos(angle) + i sin(angle))`` (complex64 from float32,
    complex128 from float64).

    >>> z = polar([2.0], [0.0])
    >>> z.dtype.name, tf.math.real(z).numpy().tolist()
    ('complex64', [2.0])
    """
    r, theta = _t(abs_), _t(angle)
    return _complex(r * tf.cos(theta), r * tf.sin(theta))


def kaiser(x, beta):
    """The Kaiser window of ``x`` points, I0(beta sqrt(1 - (2n / (x - 1) - 1)^2)) / I0(beta),
    as float32.

    >>> kaiser(3, 1.0).numpy().astype(float).round(4).tolist()
    [0.7898, 1.0, 0.7898]
    """
    n = int(np.asarray(_t(x).numpy()))
    if n < 1:
        raise InvalidArgumentError(f"window_length must be positive, got {n} [Op:Kaiser]")
    return tf.constant(np.kaiser(n, float(beta)), "float32")


_TINY = 2.0 ** -1074  # the smallest float64 (subnormal)


def nextafter(x1, x2):
    """The next float64 after ``x1`` toward ``x2`` (``x2`` where they are equal), cast to
    the operands' promoted float dtype, as Keras's TensorFlow backend: for float32 this
    rounds back to ``x1`` (a zero becomes a zero signed toward ``x2``). Not differentiable.

    >>> bool(nextafter(np.float64(1.0), 2.0).numpy() - 1.0 == 2.0 ** -52)
    True
    """
    dtype = result_type(x1, x2, 1.0)
    a = tf.stop_gradient(tf.cast(_t(x1), "float64"))
    b = tf.stop_gradient(tf.cast(_t(x2), "float64"))
    direction = tf.cast(b > a, "float64") - tf.cast(b < a, "float64")  # (no inf - inf)
    finite = tf.where(tf.math.is_inf(a), tf.zeros_like(a), a)  # infinities are set apart
    mag = tf.abs(finite)
    # the binary exponent of |a|, corrected where log2 rounds across a power of two
    e = tf.math.floor(tf.math.log(tf.where(mag > 0, mag, tf.ones_like(mag))) / np.log(2.0))
    two = tf.constant(2.0, "float64")
    e = tf.where(tf.pow(two, e) > mag, e - 1.0, e)
    e = tf.where(tf.pow(two, e + 1.0) <= mag, e + 1.0, e)
    away = direction == tf.sign(a)
    # a step toward zero from a power of two is half as long
    e = tf.where(tf.logical_and(tf.logical_not(away), tf.pow(two, e) == mag), e - 1.0, e)
    step = tf.pow(two, tf.maximum(e, -1022.0) - 52.0)
    moved = finite + direction * step
    moved = tf.where(mag == 0, direction * _TINY, moved)
    big = np.finfo(np.float64).max
    moved = tf.where(tf.math.is_inf(a), tf.sign(a) * big, moved)
    out = tf.where(a == b, b, tf.where(tf.math.is_nan(a) | tf.math.is_nan(b), a + b, moved))
    return tf.cast(out, dtype)
