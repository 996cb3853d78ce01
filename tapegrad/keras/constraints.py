"""``keras.constraints``: functions of a weight that a Keras optimizer applies to it after
each update (``kernel_constraint=`` of a layer, ``tf.Variable(constraint=)``), with Keras 3's
formulas: norms over ``axis``, rescaled by ``desired / (epsilon + norm)``.

>>> import tapegrad as tf
>>> tf.keras.constraints.NonNeg()(tf.constant([-1.0, 2.0])).numpy().tolist()
[0.0, 2.0]
"""
import inspect

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend


class Constraint:
    """The base class: the identity; override ``__call__(w)``."""

    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _norms(w, axis):
    return tf.sqrt(tf.reduce_sum(tf.square(w), axis=axis, keepdims=True))


class MaxNorm(Constraint):
    """Rescale the weights along ``axis`` whose norm exceeds ``max_value``.

    >>> import tapegrad as tf
    >>> w = tf.keras.constraints.MaxNorm(1.0)(tf.constant([[3.0], [4.0]]))
    >>> [round(float(a), 4) for a in w[:, 0]]
    [0.6, 0.8]
    """

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        w = tf.convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = tf.clip_by_value(norms, 0, self.max_value)
        return tf.cast(w, norms.dtype) * (desired / (backend.epsilon() + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """The weights, with negative entries set to zero."""

    def __call__(self, w):
        return tf.maximum(tf.convert_to_tensor(w), 0)


class UnitNorm(Constraint):
    """The weights divided by their norm along ``axis``."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = tf.convert_to_tensor(w)
        norms = _norms(w, self.axis)
        return tf.cast(w, norms.dtype) / (backend.epsilon() + norms)

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Move each norm along ``axis`` towards ``[min_value, max_value]`` by ``rate``."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        w = tf.convert_to_tensor(w)
        norms = _norms(w, self.axis)
        desired = (self.rate * tf.clip_by_value(norms, self.min_value, self.max_value)
                   + (1 - self.rate) * norms)
        return tf.cast(w, norms.dtype) * (desired / (backend.epsilon() + norms))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm
_BY_NAME = {c.__name__: c for c in (Constraint, MaxNorm, MinMaxNorm, NonNeg, UnitNorm)}
_BY_NAME.update({"constraint": Constraint, "max_norm": MaxNorm, "min_max_norm": MinMaxNorm,
                 "non_neg": NonNeg, "unit_norm": UnitNorm})


def serialize(constraint):
    from tapegrad.keras.serialization import serialize_keras_object
    return serialize_keras_object(constraint)


def deserialize(config, custom_objects=None):
    from tapegrad.keras.serialization import deserialize_keras_object
    return deserialize_keras_object(config, custom_objects=custom_objects)


def get(identifier):
    """A constraint from None, a name (``'non_neg'``, ``'MaxNorm'``), a config dict, a
    class or a callable.

    >>> import tapegrad as tf
    >>> type(tf.keras.constraints.get("max_norm")).__name__
    'MaxNorm'
    """
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        obj = deserialize(identifier)
    elif isinstance(identifier, str):
        obj = _BY_NAME.get(identifier)
    else:
        obj = identifier
    if callable(obj):
        return obj() if inspect.isclass(obj) else obj
    raise ValueError(f"Could not interpret constraint identifier: {identifier}")


__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "max_norm",
           "min_max_norm", "non_neg", "unit_norm", "get", "serialize", "deserialize"]
