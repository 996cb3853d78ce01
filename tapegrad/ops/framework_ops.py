"""TensorFlow's framework names that programs call beside the math: ``executing_eagerly``,
``name_scope`` (names are not kept: a scope only yields its name, as TF's does) and
``TensorShape`` (a shape whose dimensions may be unknown).

>>> import tapegrad as tf
>>> tf.TensorShape([None, 3]).as_list(), tf.executing_eagerly()
([None, 3], True)
"""
import contextlib

from tapegrad.core.state import STATE

__all__ = ["executing_eagerly", "name_scope", "TensorShape"]


def executing_eagerly():
    """False while ``tf.function`` traces, else True."""
    return not STATE.stack.tracers


@contextlib.contextmanager
def name_scope(name):
    """A context whose value is the scope's name with a trailing ``/`` (``'block/'``)."""
    if name is not None and not isinstance(name, str):
        raise ValueError(f"name for name_scope must be a string, got {name!r}")
    yield "" if not name else name.rstrip("/") + "/"


def _dim(d):
    if d is None:
        return None
    d = int(getattr(d, "value", d)) if not isinstance(d, int) else d
    if d < 0:
        raise ValueError(f"Dimension {d} must be >= 0")
    return d


class TensorShape:
    """Dimensions (ints, or None where unknown), or no known rank at all
    (``TensorShape(None)``); compares equal to a tuple or list of the same dimensions.

    >>> import tapegrad as tf
    >>> s = tf.TensorShape([None, 3])
    >>> s.rank, s[1], s.is_fully_defined(), s.concatenate([4]).as_list()
    (2, 3, False, [None, 3, 4])
    """

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if isinstance(dims, TensorShape):
            dims = dims._dims
        self._dims = None if dims is None else tuple(_dim(d) for d in (
            [dims] if isinstance(dims, int) else dims))

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    @property
    def rank(self):
        return None if self._dims is None else len(self._dims)

    ndims = rank

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_fully_defined(self):
        return self._dims is not None and None not in self._dims

    def concatenate(self, other):
        other = TensorShape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def is_compatible_with(self, other):
        other = TensorShape(other)
        if self._dims is None or other._dims is None:
            return True
        return len(self._dims) == len(other._dims) and all(
            a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other):
        other = TensorShape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            return TensorShape(None) if isinstance(key, slice) else None
        got = self._dims[key]
        return TensorShape(got) if isinstance(key, slice) else got

    def __eq__(self, other):
        try:
            other = TensorShape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self):
        return hash(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        inner = ", ".join("None" if d is None else str(d) for d in self._dims)
        return f"({inner},)" if len(self._dims) == 1 else f"({inner})"

    def __repr__(self):
        return "TensorShape(None)" if self._dims is None else f"TensorShape({self.as_list()})"
