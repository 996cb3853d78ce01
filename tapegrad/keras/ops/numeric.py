"""Keras's dtype rules and ``keras.ops``' elementwise functions and reductions.

>>> from tapegrad.keras import ops
>>> ops.add([1, 2], 0.5).dtype.name, ops.sum([True, True]).dtype.name
('float32', 'int32')
"""
import builtins  # sum, max, min, any, all and abs are Keras's names below

import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend


def _python_scalar(x):
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def _dtype(x):
    return np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)


def result_type(*args):
    """The dtype Keras gives an operation of ``args``: JAX's promotion, with Python
    scalars weak (they adopt a tensor's dtype, a float making an integer tensor
    ``floatx``)."""
    strong = [_dtype(a) for a in args if not _python_scalar(a)]
    weak = [a for a in args if _python_scalar(a)]
    if not strong:
        if builtins.any(isinstance(a, float) for a in weak):
            return np.dtype(backend.floatx())
        if builtins.all(isinstance(a, bool) for a in weak):
            return np.dtype(bool)
        return np.dtype("int32")
    out = strong[0]
    for d in strong[1:]:
        out = _promote(out, d)
    if out.kind in "biu" and builtins.any(isinstance(a, float) for a in weak):
        return np.dtype(backend.floatx())
    if out.kind == "b" and builtins.any(not isinstance(a, bool) for a in weak):
        return np.dtype("int32")
    return out


def _promote(a, b):
    if a == b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if (a.kind == "f") != (b.kind == "f"):  # an integer meets a float: the float's dtype
        return a if a.kind == "f" else b
    return np.promote_types(a, b)


def convert_to_tensor(x, dtype=None, sparse=None):
    if isinstance(x, tf.Tensor):
        return x if dtype is None else tf.cast(x, dtype)
    if dtype is None and _python_scalar(x):
        dtype = result_type(x)
    if dtype is None and isinstance(x, (list, tuple)):
        a = np.asarray(x)
        dtype = backend.floatx() if a.dtype.kind == "f" else (
            "int32" if a.dtype.kind in "iu" else a.dtype)
    return tf.convert_to_tensor(np.asarray(x, dtype=dtype) if dtype is not None else x)


def convert_to_numpy(x):
    return np.asarray(x)


def cast(x, dtype):
    return tf.cast(convert_to_tensor(x), backend.standardize_dtype(dtype))


def _binary(fn):
    def op(x1, x2):
        d = result_type(x1, x2)
        return fn(cast(x1, d), cast(x2, d))
    op.__name__ = fn.__name__
    op.__doc__ = "Elementwise, after Keras's dtype promotion of the operands."
    return op


add = _binary(tf.add)
subtract = _binary(tf.subtract)
multiply = _binary(tf.multiply)
maximum = _binary(tf.maximum)
minimum = _binary(tf.minimum)
power = _binary(tf.pow)
matmul = _binary(tf.matmul)
equal = _binary(tf.equal)
not_equal = _binary(tf.not_equal)
greater = _binary(tf.greater)
greater_equal = _binary(tf.greater_equal)
less = _binary(tf.less)
less_equal = _binary(tf.less_equal)


def divide(x1, x2):
    """True division; integers divide in ``floatx`` (as a float result)."""
    d = result_type(x1, x2, 1.0)
    return tf.divide(cast(x1, d), cast(x2, d))


true_divide = divide


def logical_and(x1, x2):
    return tf.logical_and(cast(x1, "bool"), cast(x2, "bool"))


def logical_or(x1, x2):
    return tf.logical_or(cast(x1, "bool"), cast(x2, "bool"))


def logical_not(x):
    return tf.logical_not(cast(x, "bool"))


def _floating(fn, doc):
    def op(x):
        x = convert_to_tensor(x)
        if x.dtype.kind in "biu":
            x = tf.cast(x, backend.floatx())
        return fn(x)
    op.__name__ = fn.__name__
    op.__doc__ = doc + " Integers compute in ``floatx``."
    return op


exp = _floating(tf.exp, "e ** x.")
log = _floating(tf.math.log, "The natural logarithm.")
log1p = _floating(tf.math.log1p, "log(1 + x).")
expm1 = _floating(tf.math.expm1, "exp(x) - 1.")
sqrt = _floating(tf.sqrt, "The square root.")
rsqrt = _floating(tf.math.rsqrt, "1 / sqrt(x).")
sin = _floating(tf.sin, "The sine.")
cos = _floating(tf.cos, "The cosine.")
tan = _floating(tf.tan, "The tangent.")
tanh = _floating(tf.tanh, "The hyperbolic tangent.")
erf = _floating(tf.math.erf, "The error function.")
reciprocal = _floating(tf.math.reciprocal, "1 / x.")


def negative(x):
    return tf.negative(convert_to_tensor(x))


def abs(x):
    return tf.abs(convert_to_tensor(x))


absolute = abs


def square(x):
    x = convert_to_tensor(x)
    return tf.square(tf.cast(x, "int32") if x.dtype.kind == "b" else x)


def sign(x):
    return tf.sign(convert_to_tensor(x))


def floor(x):
    return _floating(tf.floor, "")(x)


def ceil(x):
    return _floating(tf.math.ceil, "")(x)


def round(x, decimals=0):
    x = convert_to_tensor(x)
    if decimals == 0:
        return tf.round(x) if x.dtype.kind == "f" else x
    factor = 10.0 ** decimals
    return tf.round(x * factor) / factor


def clip(x, x_min, x_max):
    x = convert_to_tensor(x)
    if x.dtype.kind == "b":
        x = tf.cast(x, "int32")
    return tf.clip_by_value(x, tf.cast(x_min, x.dtype), tf.cast(x_max, x.dtype))


def where(condition, x1=None, x2=None):
    if x1 is None and x2 is None:
        return tuple(tf.unstack(tf.cast(tf.where(cast(condition, "bool")), "int32"), axis=1))
    d = result_type(x1, x2)
    return tf.where(cast(condition, "bool"), cast(x1, d), cast(x2, d))


# -- reductions ------------------------------------------------------------------------
def _axis(axis):
    return list(axis) if isinstance(axis, tuple) else axis


def sum(x, axis=None, keepdims=False):
    """The sum; ``bool``, ``int8`` and ``int16`` sum as ``int32``, ``uint8`` and ``uint16``
    as ``uint32`` (JAX's rule, which Keras follows)."""
    x = convert_to_tensor(x)
    if x.dtype.name in ("bool", "int8", "int16"):
        x = tf.cast(x, "int32")
    elif x.dtype.name in ("uint8", "uint16"):
        x = tf.cast(x, "uint32")
    return tf.reduce_sum(x, axis=_axis(axis), keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    """The mean; integers and booleans average in ``floatx``."""
    x = convert_to_tensor(x)
    if x.dtype.kind in "biu":
        x = tf.cast(x, result_type(x, 1.0))
    return tf.reduce_mean(x, axis=_axis(axis), keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    """The population variance (NumPy's ``ddof=0``)."""
    x = convert_to_tensor(x)
    if x.dtype.kind in "biu":
        x = tf.cast(x, result_type(x, 1.0))
    return tf.math.reduce_variance(x, axis=_axis(axis), keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    return sqrt(var(x, axis=axis, keepdims=keepdims))


def max(x, axis=None, keepdims=False, initial=None):
    out = tf.reduce_max(convert_to_tensor(x), axis=_axis(axis), keepdims=keepdims)
    return out if initial is None else maximum(out, initial)


def min(x, axis=None, keepdims=False, initial=None):
    out = tf.reduce_min(convert_to_tensor(x), axis=_axis(axis), keepdims=keepdims)
    return out if initial is None else minimum(out, initial)


amax, amin = max, min


def prod(x, axis=None, keepdims=False, dtype=None):
    """The product; booleans and 8/16-bit integers multiply in int32 (uint32), as Keras's."""
    x = convert_to_tensor(x, dtype)
    if dtype is None and x.dtype.name in ("bool", "int8", "int16"):
        x = tf.cast(x, "int32")
    elif dtype is None and x.dtype.name in ("uint8", "uint16"):
        x = tf.cast(x, "uint32")
    return tf.reduce_prod(x, axis=_axis(axis), keepdims=keepdims)


def all(x, axis=None, keepdims=False):
    return tf.reduce_all(cast(x, "bool"), axis=_axis(axis), keepdims=keepdims)


def any(x, axis=None, keepdims=False):
    return tf.reduce_any(cast(x, "bool"), axis=_axis(axis), keepdims=keepdims)


def argmax(x, axis=None, keepdims=False, _find=None):
    """The index of the largest entry (of the flattened tensor for ``axis=None``), as
    ``int32``."""
    x = convert_to_tensor(x)
    if x.dtype.kind == "f" and len(x.shape):
        # Keras computes in float32 at least and ranks -0.0 below +0.0, as the smallest
        # negative normal number (its fix for backends that flush to zero)
        x = tf.cast(x, np.promote_types(x.dtype, np.float32))
        negative_zero = tf.logical_and(tf.equal(x, 0.0), tf.less(tf.math.atan2(x, -1.0), 0.0))
        x = tf.where(negative_zero, -np.finfo(x.dtype).tiny, x)
    flat = axis is None
    out = (_find or tf.argmax)(tf.reshape(x, [-1]) if flat else x, axis=0 if flat else axis,
                               output_type="int32")
    if keepdims:
        out = tf.reshape(out, [1] * len(x.shape)) if flat else tf.expand_dims(out, axis)
    return out


def argmin(x, axis=None, keepdims=False):
    """The index of the smallest entry (TensorFlow's argmin: ``-x`` would wrap unsigned
    integers and the most negative int)."""
    return argmax(x, axis, keepdims, _find=tf.argmin)


def cumsum(x, axis=None, dtype=None):
    x = convert_to_tensor(x, dtype)
    return tf.cumsum(tf.reshape(x, [-1]), axis=0) if axis is None else tf.cumsum(x, axis)


def norm(x, ord=None, axis=None, keepdims=False):
    x = convert_to_tensor(x)
    if x.dtype.kind in "biu":
        x = tf.cast(x, backend.floatx())
    return tf.norm(x, ord="euclidean" if ord is None else ord, axis=_axis(axis),
                   keepdims=keepdims)


__all__ = [_n for _n in list(globals()) if not _n.startswith("_")
           and _n not in ("builtins", "np", "tf", "backend")]
