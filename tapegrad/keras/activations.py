"""``tf.keras.activations``: activation functions, also accepted by name in layers.

>>> from tapegrad import keras
>>> keras.activations.get("relu")([-1.0, 2.0]).numpy().tolist()
[0.0, 2.0]
"""
import math
import weakref

from tapegrad.keras import _tf as tf
from tapegrad.keras.symbolic_ops import accepts_keras_tensors

# Keras (TensorFlow backend) keeps the logits on the output of its softmax and sigmoid
# (``_keras_logits``), and its crossentropies compute from those logits, the stable form.
# tapegrad tensors have no room for an attribute: the logits live here, by the output's id.
_LOGITS = {}


def _remember_logits(out, logits):
    key = id(out)
    _LOGITS[key] = (weakref.ref(out, lambda _, key=key: _LOGITS.pop(key, None)), logits)
    return out


def logits_of(t):
    """The logits ``t`` was computed from by ``softmax`` or ``sigmoid`` here, or None."""
    entry = _LOGITS.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def _t(x):
    return tf.convert_to_tensor(x)


def linear(x):
    """The identity."""
    return _t(x)


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0), with Keras's optional slope below ``threshold`` and cap ``max_value``."""
    x = _t(x)
    # Keras's composition, so the kinks (x == threshold, x == max_value) get its gradients
    if negative_slope != 0.0:
        if max_value is None and threshold == 0:
            return tf.nn.leaky_relu(x, alpha=negative_slope)
        negative = tf.nn.relu(-x + threshold if threshold != 0 else -x)
    clip = max_value is not None
    if threshold != 0:
        y = tf.where(x > tf.cast(threshold, x.dtype), x, tf.zeros_like(x))
    elif max_value == 6:
        y, clip = tf.nn.relu6(x), False
    else:
        y = tf.nn.relu(x)
    if clip:
        y = tf.clip_by_value(y, tf.cast(0.0, y.dtype), tf.cast(max_value, y.dtype))
    if negative_slope != 0.0:
        y = y - negative_slope * negative
    return y


def leaky_relu(x, negative_slope=0.2):
    return tf.nn.leaky_relu(x, alpha=negative_slope)


def relu6(x):
    return tf.nn.relu6(x)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along ``axis``."""
    x = _t(x)
    if x.ndim <= 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input: {x}")
    return _remember_logits(tf.nn.softmax(x, axis=axis), x)


def log_softmax(x, axis=-1):
    return tf.nn.log_softmax(x, axis=axis)


def elu(x, alpha=1.0):
    """``tf.nn.elu``, its negative branch scaled by ``alpha`` as Keras does."""
    x = _t(x)
    y = tf.nn.elu(x)
    return y if alpha == 1.0 else tf.where(x > 0, y, alpha * y)


def selu(x):
    return tf.nn.selu(x)


def celu(x, alpha=1.0):
    x = _t(x)
    return tf.maximum(x, 0.0) + alpha * tf.math.expm1(tf.minimum(x, 0.0) / alpha)


def softplus(x):
    return tf.math.softplus(x)


def softsign(x):
    return tf.nn.softsign(x)


def silu(x):
    """x * sigmoid(x) (also ``'swish'``)."""
    return tf.nn.silu(x)


def gelu(x, approximate=False):
    return tf.nn.gelu(x, approximate=approximate)


def tanh(x):
    return tf.tanh(x)


def sigmoid(x):
    x = _t(x)
    return _remember_logits(tf.sigmoid(x), x)


def exponential(x):
    return tf.exp(x)


def hard_sigmoid(x):
    """relu6(x + 3) / 6, Keras 3's form."""
    return tf.nn.relu6(_t(x) + 3.0) / 6.0


def hard_silu(x):
    x = _t(x)
    return x * hard_sigmoid(x)


def hard_tanh(x):
    return tf.clip_by_value(x, -1.0, 1.0)


def log_sigmoid(x):
    return tf.math.log_sigmoid(x)


def mish(x):
    x = _t(x)
    return x * tf.tanh(tf.math.softplus(x))


def tanh_shrink(x):
    x = _t(x)
    return x - tf.tanh(x)


def glu(x, axis=-1):
    a, b = tf.split(x, 2, axis=axis)
    return a * tf.sigmoid(b)


# each also builds a functional-API node from a KerasTensor (keras/symbolic_ops.py)
(linear, relu, leaky_relu, relu6, softmax, log_softmax, elu, selu, celu, softplus, softsign,
 silu, gelu, tanh, sigmoid, exponential, hard_sigmoid, hard_silu, hard_tanh, log_sigmoid,
 mish, tanh_shrink, glu) = map(accepts_keras_tensors, (
    linear, relu, leaky_relu, relu6, softmax, log_softmax, elu, selu, celu, softplus,
    softsign, silu, gelu, tanh, sigmoid, exponential, hard_sigmoid, hard_silu, hard_tanh,
    log_sigmoid, mish, tanh_shrink, glu))
_ALL = {f.__name__: f for f in (
    linear, relu, leaky_relu, relu6, softmax, log_softmax, elu, selu, celu, softplus,
    softsign, silu, gelu, tanh, sigmoid, exponential, hard_sigmoid, hard_silu, hard_tanh,
    log_sigmoid, mish, tanh_shrink, glu)}
_ALL["swish"] = silu
_ALL["hard_swish"] = hard_silu
del math


def get(identifier):
    """An activation function from a name, a callable, or None (the identity).

    >>> from tapegrad import keras
    >>> keras.activations.get(None) is keras.activations.linear
    True
    """
    if identifier is None:
        return linear
    obj = _ALL.get(identifier) if isinstance(identifier, str) else identifier
    if callable(obj):
        return obj
    raise ValueError(f"Could not interpret activation function identifier: {identifier}")


def serialize(activation):
    name = getattr(activation, "__name__", None)
    if name in _ALL and _ALL[name] is activation:
        return name
    raise ValueError(f"Unknown activation function '{activation}' cannot be serialized.")


def deserialize(config, custom_objects=None):
    if custom_objects and config in custom_objects:
        return custom_objects[config]
    return get(config)
