"""``keras.ops`` and ``keras.activations`` on a functional model's ``KerasTensor`` objects, as
Keras 3 allows (``x1, x2 = ops.split(x, 2, axis=-1)`` between two layers): given a
``KerasTensor`` (among its arguments, or in a list or tuple of them) the function records
a node of a ``Lambda`` layer named after it and returns its symbolic outputs; given
anything else it computes as before. TensorFlow's own functions (``tf.*``) refuse a
``KerasTensor`` with ``ValueError``, as on TensorFlow.

>>> from tapegrad import keras
>>> inputs = keras.Input((4,))
>>> first, second = keras.ops.split(inputs, 2, axis=-1)
>>> gated = first * keras.activations.sigmoid(second)
>>> model = keras.Model(inputs, gated)
>>> [round(float(v), 4) for v in model(keras.ops.ones((1, 4)))[0]]
[0.7311, 0.7311]
"""
import functools


def _symbolic(values):
    for a in values:
        if getattr(a, "_keras_symbolic", False):
            return True
        if type(a) in (list, tuple) and any(getattr(x, "_keras_symbolic", False) for x in a):
            return True
    return False


def accepts_keras_tensors(fn):
    """``fn``, recording a functional-API node when an argument is a ``KerasTensor``."""
    @functools.wraps(fn)
    def op(*args, **kwargs):
        if _symbolic(args) or (kwargs and _symbolic(kwargs.values())):
            from tapegrad.keras.layers.symbolic import op_node
            return op_node(fn, args, kwargs)
        return fn(*args, **kwargs)
    return op
