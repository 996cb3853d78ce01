"""``keras.ops``: Keras 3's NumPy-style operations (``ops.sum``, ``ops.exp``, ...), which
its examples use in place of ``tf.*``.

They follow Keras's rules where those differ from TensorFlow's: tensors of different
dtypes are promoted as JAX does (``int32`` with ``float16`` is ``float16``; a Python float
with an integer tensor is ``floatx``), transcendental functions and ``mean`` of integers
compute in ``floatx``, ``sum`` of ``bool``/``int8``/``int16`` gives ``int32``, and the
axes, defaults and argument names are NumPy's (``concatenate(xs, axis=0)``,
``split(x, 3)``, ``var`` and ``std`` of the population).

>>> from tapegrad.keras import ops
>>> float(ops.mean(ops.arange(4))), ops.sum(ops.ones((2, 3)), axis=0).numpy().tolist()
(1.5, [2.0, 2.0, 2.0])
"""
import builtins  # sum, max, min, any, all and abs are Keras's names below

import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import activations, backend
from tapegrad.ops.gather_ops import repeat as _repeat


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
    x = convert_to_tensor(x, dtype)
    return tf.reduce_prod(x, axis=_axis(axis), keepdims=keepdims)


def all(x, axis=None, keepdims=False):
    return tf.reduce_all(cast(x, "bool"), axis=_axis(axis), keepdims=keepdims)


def any(x, axis=None, keepdims=False):
    return tf.reduce_any(cast(x, "bool"), axis=_axis(axis), keepdims=keepdims)


def argmax(x, axis=None, keepdims=False):
    """The index of the largest entry (of the flattened tensor for ``axis=None``), as
    ``int32``."""
    x = convert_to_tensor(x)
    flat = axis is None
    out = tf.argmax(tf.reshape(x, [-1]) if flat else x, axis=0 if flat else axis,
                    output_type="int32")
    if keepdims:
        out = tf.reshape(out, [1] * len(x.shape)) if flat else tf.expand_dims(out, axis)
    return out


def argmin(x, axis=None, keepdims=False):
    return argmax(negative(x) if _dtype(x).kind != "b" else logical_not(x), axis, keepdims)


def cumsum(x, axis=None, dtype=None):
    x = convert_to_tensor(x, dtype)
    return tf.cumsum(tf.reshape(x, [-1]), axis=0) if axis is None else tf.cumsum(x, axis)


def norm(x, ord=None, axis=None, keepdims=False):
    x = convert_to_tensor(x)
    if x.dtype.kind in "biu":
        x = tf.cast(x, backend.floatx())
    return tf.norm(x, ord="euclidean" if ord is None else ord, axis=_axis(axis),
                   keepdims=keepdims)


# -- shapes ----------------------------------------------------------------------------
def shape(x):
    """The shape, a tuple (None for a size unknown while tracing)."""
    return tuple(convert_to_tensor(x).shape)


def ndim(x):
    return len(shape(x))


def size(x):
    return int(np.prod(shape(x)))


def reshape(x, newshape):
    return tf.reshape(convert_to_tensor(x), newshape)


def transpose(x, axes=None):
    return tf.transpose(convert_to_tensor(x), perm=axes)


def expand_dims(x, axis):
    x = convert_to_tensor(x)
    for a in sorted(axis) if isinstance(axis, (list, tuple)) else [axis]:
        x = tf.expand_dims(x, a)
    return x


def squeeze(x, axis=None):
    return tf.squeeze(convert_to_tensor(x), axis=axis)


def _joined(xs):
    d = result_type(*xs)
    return [cast(x, d) for x in xs]


def concatenate(xs, axis=0):
    return tf.concat(_joined(xs), axis=axis)


def stack(x, axis=0):
    return tf.stack(_joined(x), axis=axis)


def split(x, indices_or_sections, axis=0):
    """NumPy's split: into ``n`` equal parts, or at the given indices."""
    x = convert_to_tensor(x)
    if isinstance(indices_or_sections, int):
        return tf.split(x, indices_or_sections, axis=axis)
    bounds = [0, *indices_or_sections, x.shape[axis]]
    return tf.split(x, [b - a for a, b in zip(bounds[:-1], bounds[1:])], axis=axis)


def tile(x, repeats):
    x = convert_to_tensor(x)
    repeats = [repeats] if isinstance(repeats, int) else list(repeats)
    if len(repeats) < len(x.shape):
        repeats = [1] * (len(x.shape) - len(repeats)) + repeats
    elif len(repeats) > len(x.shape):
        x = tf.reshape(x, [1] * (len(repeats) - len(x.shape)) + list(x.shape))
    return tf.tile(x, repeats)


def repeat(x, repeats, axis=None):
    return _repeat(convert_to_tensor(x), repeats, axis=axis)


def broadcast_to(x, shape):
    return tf.broadcast_to(convert_to_tensor(x), shape)


def take(x, indices, axis=None):
    x = convert_to_tensor(x)
    if axis is None:
        x, axis = tf.reshape(x, [-1]), 0
    return tf.gather(x, indices, axis=axis)


def flip(x, axis=None):
    x = convert_to_tensor(x)
    axes = range(len(x.shape)) if axis is None else (
        axis if isinstance(axis, (list, tuple)) else [axis])
    return tf.reverse(x, list(axes))


# -- creation --------------------------------------------------------------------------
def _float(dtype):
    return backend.standardize_dtype(dtype) if dtype is not None else backend.floatx()


def zeros(shape, dtype=None):
    return tf.zeros(shape, dtype=_float(dtype))


def ones(shape, dtype=None):
    return tf.ones(shape, dtype=_float(dtype))


def full(shape, fill_value, dtype=None):
    return tf.fill(shape, tf.cast(fill_value, _float(dtype)))


def zeros_like(x, dtype=None):
    return tf.zeros_like(convert_to_tensor(x), dtype=dtype)


def ones_like(x, dtype=None):
    return tf.ones_like(convert_to_tensor(x), dtype=dtype)


def eye(N, M=None, k=0, dtype=None):
    return tf.constant(np.eye(N, M, k, dtype=_float(dtype)))


identity = eye


def arange(start, stop=None, step=1, dtype=None):
    """NumPy's arange; integers give ``int32``, a float among the bounds ``floatx``."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = result_type(*(v if _python_scalar(v) else convert_to_tensor(v)
                              for v in (start, stop, step)))
    return tf.range(tf.cast(start, dtype), tf.cast(stop, dtype), tf.cast(step, dtype))


def linspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    values = np.linspace(np.asarray(start), np.asarray(stop), num, endpoint=endpoint,
                         axis=axis)
    return tf.constant(values.astype(_float(dtype)))


# -- linear algebra and neural-network functions -----------------------------------------
def einsum(subscripts, *operands):
    return tf.einsum(subscripts, *_joined(operands))


def dot(x1, x2):
    """NumPy's dot: a product for scalars, the matrix product otherwise."""
    x1, x2 = _joined([x1, x2])
    if len(x1.shape) == 0 or len(x2.shape) == 0:
        return x1 * x2
    if len(x2.shape) == 1:
        return tf.tensordot(x1, x2, [[len(x1.shape) - 1], [0]])
    return tf.tensordot(x1, x2, [[len(x1.shape) - 1], [len(x2.shape) - 2]])


def stop_gradient(variable):
    return tf.stop_gradient(variable)


def one_hot(x, num_classes, axis=-1, dtype=None):
    return tf.one_hot(convert_to_tensor(x), num_classes, axis=axis, dtype=_float(dtype))


relu = activations.relu
relu6 = activations.relu6
sigmoid = activations.sigmoid
softplus = activations.softplus
softsign = activations.softsign
silu = swish = activations.silu
elu = activations.elu
selu = activations.selu
log_sigmoid = activations.log_sigmoid


def leaky_relu(x, negative_slope=0.2):
    return activations.leaky_relu(x, negative_slope)


def gelu(x, approximate=True):
    """Keras's ``ops.gelu`` is the tanh approximation by default (``activations.gelu`` is
    the exact one)."""
    return activations.gelu(x, approximate=approximate)


def softmax(x, axis=-1):
    return tf.nn.softmax(convert_to_tensor(x), axis=axis)


def log_softmax(x, axis=-1):
    return tf.nn.log_softmax(convert_to_tensor(x), axis=axis)
