"""TensorFlow's framework names that programs call beside the math: ``executing_eagerly``,
``name_scope`` (names are not kept: a scope only yields its name, as TF's does) and
``TensorShape`` (a shape whose dimensions may be unknown).

>>> import tapegrad as tf
>>> tf.TensorShape([None, 3]).as_list(), tf.executing_eagerly()
([None, 3], True)
"""
import builtins
import contextlib

import numpy as np

from tapegrad.core.shape import Dimension, TensorShape  # noqa: F401 (tf.TensorShape)
from tapegrad.core.state import STATE

__all__ = ["executing_eagerly", "name_scope", "TensorShape", "Dimension", "slice",
           "get_static_value", "no_op", "group", "identity_n", "control_dependencies"]


def executing_eagerly():
    """False while ``tf.function`` traces, else True."""
    return not STATE.stack.tracers


@contextlib.contextmanager
def name_scope(name):
    """A context whose value is the scope's name with a trailing ``/`` (``'block/'``)."""
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name for name_scope must be a string, got {name!r}")
    yield "" if not name else name.rstrip("/") + "/"


def _ints(v, what):
    try:
        return [int(i) for i in np.asarray(v).reshape(-1)]
    except (TypeError, ValueError):
        raise TypeError(f"tf.slice: {what} must be integers, got {v!r}") from None


def slice(input_, begin, size, name=None):  # noqa: A001 - TensorFlow's name
    """The block of ``input_`` from ``begin`` of extent ``size`` (-1: to the end), with
    TensorFlow's ``InvalidArgumentError`` for a block outside it.

    >>> import tapegrad as tf
    >>> tf.slice(tf.reshape(tf.range(6), (2, 3)), [0, 1], [-1, 2]).numpy().tolist()
    [[1, 2], [4, 5]]
    """
    from tapegrad.errors import InvalidArgumentError
    from tapegrad.ops._convert import tensor
    x = tensor(input_)
    shape = x._raw_shape
    begin, size = _ints(begin, "begin"), _ints(size, "size")
    if len(begin) != len(shape) or len(size) != len(shape):
        raise InvalidArgumentError(f"Expected begin and size arguments to be 1-D tensors of "
                                   f"size {len(shape)}, but got shapes [{len(begin)}] and "
                                   f"[{len(size)}] instead.")
    index = []
    for i, (b, s, n) in enumerate(zip(begin, size, shape)):
        if not 0 <= b <= n:
            raise InvalidArgumentError(f"Expected begin[{i}] in [0, {n}], but got {b}")
        s = n - b if s == -1 else s
        if not 0 <= s <= n - b:
            raise InvalidArgumentError(f"Expected size[{i}] in [0, {n - b}], but got {s}")
        index.append(builtins.slice(b, b + s))
    return x[tuple(index)]


def get_static_value(tensor_, partial=False):
    """The NumPy value of a tensor known now (None for a symbolic one inside
    ``tf.function``); other values as NumPy arrays."""
    from tapegrad.core.tensor import Tensor
    if isinstance(tensor_, Tensor):
        return None if getattr(tensor_, "_symbolic", False) else tensor_.numpy()
    return np.asarray(tensor_) if not isinstance(tensor_, (int, float)) else tensor_


def no_op(name=None):
    """Nothing (TensorFlow's placeholder operation; tapegrad runs in program order)."""
    return None


def group(*inputs, name=None):
    """None: tapegrad runs every staged operation in program order, grouped or not."""
    return None


def identity_n(input, name=None):  # noqa: A002 - TensorFlow's name
    """``tf.identity`` of each tensor of the list."""
    from tapegrad.ops.shape_ops import identity
    return [identity(t) for t in input]


@contextlib.contextmanager
def control_dependencies(control_inputs):
    """A context without effect: staged operations (prints, assertions, assignments) run
    in program order anyway, so the dependencies TensorFlow adds are already there."""
    yield
