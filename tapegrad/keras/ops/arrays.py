"""``keras.ops``' shapes, creation, linear algebra and neural-network functions.

>>> from tapegrad.keras import ops
>>> [p.shape for p in ops.split(ops.ones((2, 6)), [1, 4], axis=1)]
[TensorShape([2, 1]), TensorShape([2, 3]), TensorShape([2, 2])]
"""
import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import activations, backend
from tapegrad.keras.ops.numeric import _python_scalar, cast, convert_to_tensor, result_type
from tapegrad.ops.gather_ops import repeat as _repeat


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
    indices = convert_to_tensor(indices)
    # Keras's take counts a negative index from the end (tf.gather refuses it)
    if indices.dtype.kind == "i" and getattr(indices, "_symbolic", False):
        n = tf.cast(tf.shape(x)[axis], indices.dtype)
        indices = tf.where(indices < 0, indices + n, indices)
    elif indices.dtype.kind == "i":
        n = x.shape[axis]
        iv = indices.numpy()
        indices = tf.constant(np.where(iv < 0, iv + n, iv).astype(iv.dtype))
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


__all__ = [_n for _n in list(globals()) if not _n.startswith("_")
           and _n not in ("np", "tf", "activations", "backend", "cast", "convert_to_tensor",
                          "result_type")]
