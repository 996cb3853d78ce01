"""TensorFlow's framework names that programs call beside the math: ``executing_eagerly``,
``name_scope`` (names are not kept: a scope only yields its name, as TF's does) and
``TensorShape`` (a shape whose dimensions may be unknown).

>>> import tapegrad as tf
>>> tf.TensorShape([None, 3]).as_list(), tf.executing_eagerly()
([None, 3], True)
"""
import contextlib

from tapegrad.core.shape import Dimension, TensorShape  # noqa: F401 (tf.TensorShape)
from tapegrad.core.state import STATE

__all__ = ["executing_eagerly", "name_scope", "TensorShape", "Dimension"]


def executing_eagerly():
    """False while ``tf.function`` traces, else True."""
    return not STATE.stack.tracers


@contextlib.contextmanager
def name_scope(name):
    """A context whose value is the scope's name with a trailing ``/`` (``'block/'``)."""
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name for name_scope must be a string, got {name!r}")
    yield "" if not name else name.rstrip("/") + "/"
