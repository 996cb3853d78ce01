"""``tf.keras.backend``'s functions of the Keras 2 era (``K.mean``, ``K.clip``, ``K.switch``...),
which TensorFlow 2.21 still exports under ``tf.keras.backend`` and which custom losses and
metrics in Stack Overflow answers are written with. Each is the TensorFlow operation it
always was; the few with a twist keep it (``sqrt`` clips at zero, ``clip`` raises a max
below the min to the min, ``mean`` of booleans is a float mean, ``zeros``/``ones``/``eye``
of a static shape are Variables).

>>> from tapegrad.keras import backend as K
>>> float(K.mean(K.clip(K.constant([-1.0, 0.5, 3.0]), 0.0, 1.0)))
0.5
"""
import builtins
import math as _math

import numpy as np

from tapegrad.control_flow.ops import cond as _cond
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend as _config
from tapegrad.ops import functional_ops as _functional
from tapegrad.ops.gather_ops import repeat as _repeat
from tapegrad.ops import special_ops as _special
from tapegrad.keras.legacy_backend_nn import (  # noqa: F401 - exported as K.*
    _tensor, relu, elu, hard_sigmoid, softsign, softmax, l2_normalize, stop_gradient, bias_add, binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy)


def _floatx_if_bool(x):
    x = _tensor(x)
    return tf.cast(x, _config.floatx()) if x.dtype == tf.bool else x


# -- values, variables and shapes ----------------------------------------------------------
def variable(value, dtype=None, name=None, constraint=None):
    """A ``tf.Variable`` of ``value`` in ``dtype`` (floatx by default)."""
    return tf.Variable(value, dtype=tf.as_dtype(dtype or _config.floatx()), name=name,
                       constraint=constraint)


def constant(value, dtype=None, shape=None, name=None):
    """``tf.constant`` in floatx unless ``dtype`` is given.

    >>> from tapegrad.keras import backend as K
    >>> K.constant([1, 2]).dtype.name
    'float32'
    """
    return tf.constant(value, dtype=dtype or _config.floatx(), shape=shape)


def _filled(fill, shape, dtype, name):
    v = fill(shape, dtype=tf.as_dtype(dtype or _config.floatx()))
    return variable(v, dtype or _config.floatx(), name) if builtins.all(v.shape) else v


def zeros(shape, dtype=None, name=None):
    """Zeros of ``shape``: a Variable when no dimension is 0 (as tf.keras makes it)."""
    return _filled(tf.zeros, shape, dtype, name)


def ones(shape, dtype=None, name=None):
    """Ones of ``shape``: a Variable when no dimension is 0 (as tf.keras makes it)."""
    return _filled(tf.ones, shape, dtype, name)


def eye(size, dtype=None, name=None):
    """The identity matrix of ``size`` as a Variable."""
    dtype = dtype or _config.floatx()
    return variable(tf.eye(size, dtype=tf.as_dtype(dtype)), dtype, name)


def zeros_like(x, dtype=None, name=None):
    return tf.zeros_like(x, dtype=dtype)


def ones_like(x, dtype=None, name=None):
    return tf.ones_like(x, dtype=dtype)


def get_value(x):
    """The value of a tensor or Variable as a NumPy array (other objects unchanged)."""
    return x.numpy() if isinstance(x, tf.Tensor) else x


def batch_get_value(tensors):
    return [x.numpy() for x in tensors]


def set_value(x, value):
    """Assign ``value`` (converted to the Variable's dtype) to the Variable ``x``."""
    x.assign(np.asarray(value, dtype=np.dtype(x.dtype.name)))


def batch_set_value(tuples):
    for x, value in tuples:
        set_value(x, value)


def eval(x):
    return get_value(x)


def update(x, new_x):
    return x.assign(new_x)


def update_add(x, increment):
    return x.assign_add(increment)


def update_sub(x, decrement):
    return x.assign_sub(decrement)


def moving_average_update(x, value, momentum):
    """``x -= (x - value) * (1 - momentum)``, in place."""
    momentum = tf.cast(momentum, x.dtype)
    return x.assign_sub((x - tf.cast(value, x.dtype)) * (1 - momentum))


def cast_to_floatx(x):
    """A tensor cast to floatx; anything else becomes a NumPy array of floatx."""
    if isinstance(x, tf.Tensor):
        return tf.cast(x, _config.floatx())
    return np.asarray(x, dtype=_config.floatx())


def dtype(x):
    """The dtype's name (``'float32'``)."""
    return tf.as_dtype(x.dtype).name


def ndim(x):
    return len(x.shape)


def count_params(x):
    return _math.prod(tuple(x.shape))


def is_sparse(tensor):
    from tapegrad.ops.sparse_ops import SparseTensor
    return isinstance(tensor, SparseTensor)


def to_dense(tensor):
    from tapegrad.ops.sparse_ops import to_dense as densify
    return densify(tensor) if is_sparse(tensor) else tensor


def is_keras_tensor(x):
    from tapegrad.keras.layers.symbolic import KerasTensor
    return isinstance(x, KerasTensor)


def gradients(loss, variables):
    raise RuntimeError("tf.gradients is not supported when eager execution is enabled. "
                       "Use tf.GradientTape instead.")


# -- the functions that are TensorFlow's operations under their Keras 2 names -------------
# fmt: off
abs = tf.abs
square = tf.square
exp = tf.exp
log = tf.math.log
pow = tf.pow
sign = tf.sign
round = tf.round
sin = tf.sin
cos = tf.cos
maximum = tf.maximum
minimum = tf.minimum
equal = tf.equal
not_equal = tf.not_equal
greater = tf.greater
greater_equal = tf.greater_equal
less = tf.less
less_equal = tf.less_equal
sigmoid = tf.sigmoid
tanh = tf.tanh
softplus = tf.math.softplus
cast = tf.cast
reshape = tf.reshape
gather = tf.gather
shape = tf.shape
# fmt: on


# -- reductions ---------------------------------------------------------------------------
def sum(x, axis=None, keepdims=False):
    return tf.reduce_sum(x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return tf.reduce_prod(x, axis, keepdims)


def max(x, axis=None, keepdims=False):
    return tf.reduce_max(x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return tf.reduce_min(x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    """``reduce_mean``; booleans count as floatx 0 and 1.

    >>> from tapegrad.keras import backend as K
    >>> float(K.mean(K.constant([1.0, 2.0]) > 1.5))
    0.5
    """
    return tf.reduce_mean(_floatx_if_bool(x), axis, keepdims)


def std(x, axis=None, keepdims=False):
    return tf.reduce_std(_floatx_if_bool(x), axis=axis, keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    return tf.reduce_variance(_floatx_if_bool(x), axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims=False):
    return tf.reduce_any(tf.cast(x, tf.bool), axis, keepdims)


def all(x, axis=None, keepdims=False):
    return tf.reduce_all(tf.cast(x, tf.bool), axis, keepdims)


def argmax(x, axis=-1):
    return tf.argmax(x, axis)


def argmin(x, axis=-1):
    return tf.argmin(x, axis)


def cumsum(x, axis=0):
    return tf.cumsum(x, axis=axis)


def cumprod(x, axis=0):
    return _special.cumprod(x, axis=axis)


# -- elementwise --------------------------------------------------------------------------


def sqrt(x):
    """``sqrt(max(x, 0))``: tf.keras clips negative inputs to zero first."""
    x = _tensor(x)
    return tf.sqrt(tf.maximum(x, tf.constant(0.0, dtype=x.dtype)))


def clip(x, min_value, max_value):
    """``clip_by_value``; a Python max below the Python min is raised to the min, and None
    means unbounded.

    >>> from tapegrad.keras import backend as K
    >>> K.clip(K.constant([0.0, 5.0]), 1.0, 0.5).numpy()
    array([1., 1.], dtype=float32)
    """
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)):
        max_value = builtins.max(max_value, min_value)
    min_value = -np.inf if min_value is None else min_value
    max_value = np.inf if max_value is None else max_value
    return tf.clip_by_value(x, min_value, max_value)


def switch(condition, then_expression, else_expression):
    """``tf.cond`` for a scalar condition (the expressions may be callables), ``tf.where``
    for a tensor one, whose missing trailing axes are tiled along the expressions'."""
    condition = tf.cast(condition, tf.bool)
    cond_ndim = ndim(condition)
    if not cond_ndim:
        then_fn = then_expression if callable(then_expression) else lambda: then_expression
        else_fn = else_expression if callable(else_expression) else lambda: else_expression
        return _cond(condition, then_fn, else_fn)
    if callable(then_expression):
        then_expression = then_expression()
    if callable(else_expression):
        else_expression = else_expression()
    expr_ndim = ndim(then_expression)
    if cond_ndim > expr_ndim:
        raise ValueError("Rank of `condition` should be less than or equal to rank of "
                         f"`then_expression` and `else_expression`. ndim(condition)={cond_ndim}"
                         f", ndim(then_expression)={expr_ndim}")
    if cond_ndim > 1:
        ndim_diff = expr_ndim - cond_ndim
        cond_shape = tf.concat([tf.shape(condition), [1] * ndim_diff], axis=0)
        condition = tf.reshape(condition, cond_shape)
        expr_shape = tf.shape(then_expression)
        shape_diff = expr_shape - cond_shape
        tile_shape = tf.where(shape_diff > 0, expr_shape, tf.ones_like(expr_shape))
        condition = tf.tile(condition, tile_shape)
    return tf.where(condition, then_expression, else_expression)


# -- shapes -------------------------------------------------------------------------------

def flatten(x):
    return tf.reshape(x, [-1])


def batch_flatten(x):
    """``(batch, d1, d2, ...)`` -> ``(batch, d1 * d2 * ...)``."""
    return tf.reshape(x, tf.stack([-1, tf.reduce_prod(tf.shape(x)[1:])]))


def expand_dims(x, axis=-1):
    return tf.expand_dims(x, axis)


def squeeze(x, axis):
    return tf.squeeze(x, [axis])


def permute_dimensions(x, pattern):
    return tf.transpose(x, perm=pattern)


def transpose(x):
    return tf.transpose(x)


def concatenate(tensors, axis=-1):
    if axis < 0:
        rank = ndim(_tensor(tensors[0]))
        axis = axis % rank if rank else 0
    return tf.concat(tensors, axis)


def stack(x, axis=0):
    return tf.stack(x, axis=axis)


def tile(x, n):
    return tf.tile(x, [n] if isinstance(n, int) else n)


def repeat(x, n):
    """Repeat a 2-D ``(batch, d)`` tensor ``n`` times: ``(batch, n, d)``."""
    if ndim(x) != 2:
        raise ValueError(f"Expected a 2D tensor, but got a tensor with {ndim(x)} dimensions "
                         f"(input shape: {tuple(x.shape)})")
    return tf.tile(tf.expand_dims(x, 1), [1, n, 1])


def repeat_elements(x, rep, axis):
    return _repeat(x, rep, axis=axis)


def reverse(x, axes):
    return tf.reverse(x, [axes] if isinstance(axes, int) else axes)


def one_hot(indices, num_classes):
    return tf.one_hot(indices, depth=num_classes, axis=-1)


def arange(start, stop=None, step=1, dtype="int32"):
    """``tf.range`` in int32 (or ``dtype``); a negative lone ``start`` gives an empty range."""
    if stop is None and start < 0:
        start = 0
    result = tf.range(start, limit=stop, delta=step)
    return result if dtype == "int32" else tf.cast(result, dtype)


def dot(x, y):
    """Keras's ``dot``: for ranks above 2, the last axis of ``x`` against the second-to-last
    of ``y`` (Theano's ``dot``), other axes kept in order."""
    x, y = _tensor(x), _tensor(y)
    if ndim(x) > 2 or ndim(y) > 2:
        x_shape, y_shape = tuple(x.shape), tuple(y.shape)
        perm = list(range(ndim(y)))
        perm = [perm.pop(-2)] + perm
        xt = tf.reshape(x, [-1, x_shape[-1]])
        yt = tf.reshape(tf.transpose(y, perm=perm), [y_shape[-2], -1])
        return tf.reshape(tf.matmul(xt, yt), x_shape[:-1] + y_shape[:-2] + y_shape[-1:])
    return tf.matmul(x, y)


def batch_dot(x, y, axes=None):
    """The dot product of each batch row of ``x`` with that of ``y`` over ``axes``."""
    x, y = _tensor(x), _tensor(y)
    x_shape, y_shape = tuple(x.shape), tuple(y.shape)
    x_ndim, y_ndim = len(x_shape), len(y_shape)
    if x_ndim < 2 or y_ndim < 2:
        raise ValueError("Cannot do batch_dot on inputs with rank < 2. Received inputs with "
                         f"tf.shapes {x_shape} and {y_shape}.")
    if x_shape[0] != y_shape[0]:
        raise ValueError("Cannot do batch_dot on inputs with different batch sizes. Received "
                         f"inputs with tf.shapes {x_shape} and {y_shape}.")
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [x_ndim - 1, y_ndim - 1] if y_ndim == 2 else [x_ndim - 1, y_ndim - 2]
    axes = [axes[0] % x_ndim, axes[1] % y_ndim]
    if 0 in axes:
        raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not batched,"
                         " add a dummy batch dimension to your inputs using K.expand_dims(x, 0)")
    a0, a1 = axes
    if x_shape[a0] != y_shape[a1]:
        raise ValueError(f"Cannot do batch_dot on inputs with tf.shapes {x_shape} and "
                         f"{y_shape} with axes={axes}. x.shape[{a0}] != y.shape[{a1}] "
                         f"({x_shape[a0]} != {y_shape[a1]}).")
    x_rest = [i for i in range(1, x_ndim) if i != a0]
    y_rest = [i for i in range(1, y_ndim) if i != a1]
    letters = "abcdefghijklmnopqrstuvw"
    xs = ["z"] + [None] * (x_ndim - 1)
    ys = ["z"] + [None] * (y_ndim - 1)
    xs[a0] = ys[a1] = "y"
    it = iter(letters)
    for i in x_rest:
        xs[i] = next(it)
    for i in y_rest:
        ys[i] = next(it)
    out = "z" + "".join(xs[i] for i in x_rest) + "".join(ys[i] for i in y_rest)
    result = tf.einsum(f"{''.join(xs)},{''.join(ys)}->{out}", x, y)
    if len(result.shape) == 1:
        result = tf.expand_dims(result, 1)
    return result


# -- control flow and random --------------------------------------------------------------
def map_fn(fn, elems, name=None, dtype=None):
    return _functional.map_fn(fn, elems, dtype=dtype)


def foldl(fn, elems, initializer=None, name=None):
    return _functional.foldl(fn, elems, initializer=initializer)


def foldr(fn, elems, initializer=None, name=None):
    return _functional.foldr(fn, elems, initializer=initializer)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return tf.random.normal(shape, mean=mean, stddev=stddev,
                            dtype=dtype or _config.floatx(), seed=seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return tf.random.uniform(shape, minval=minval, maxval=maxval,
                             dtype=dtype or _config.floatx(), seed=seed)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return tf.random.truncated_normal(shape, mean, stddev, dtype=dtype or _config.floatx(),
                                      seed=seed)


def random_bernoulli(shape, p=0.0, dtype=None, seed=None):
    dtype = dtype or _config.floatx()
    return tf.where(tf.random.uniform(shape, dtype=dtype, seed=seed) <= p,
                    tf.ones(shape, dtype=dtype), tf.zeros(shape, dtype=dtype))


def dropout(x, level, noise_shape=None, seed=None):
    return tf.nn.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


NAMES = tuple(n for n in dir() if not n.startswith("_") and n not in (
    "builtins", "np", "tf", "NAMES"))
