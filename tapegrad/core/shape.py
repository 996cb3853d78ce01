"""``TensorShape``: the ``.shape`` of a tensor, TensorFlow's API on a tuple.

A ``TensorShape`` is a ``tuple`` subclass, so everything a tuple does keeps working
(``x.shape == (2, 3)``, unpacking, ``len``, hashing, ``np.zeros(x.shape)``), and it adds
TensorFlow's methods (``as_list``, ``rank``, ``num_elements``, ``merge_with`` ...). A slice
is a ``TensorShape`` again, an integer index a dimension (an int, or ``None`` where unknown;
inside ``tf.function`` a ``SymInt`` for a symbolic size). ``TensorShape(None)`` has no known
rank: it is an empty tuple of a subclass whose ``len``, iteration and ``as_list`` raise
TensorFlow's ``ValueError``.

Tensors build theirs from the NumPy shape without checking it (``from_tuple``); hot internal
paths read the NumPy shape itself.

>>> import tapegrad as tf
>>> s = tf.zeros((2, 3)).shape
>>> s, s.as_list(), s[1:], s == (2, 3), s.num_elements()
(TensorShape([2, 3]), [2, 3], TensorShape([3]), True, 6)
"""
import numbers

import numpy as np

__all__ = ["TensorShape", "Dimension", "as_shape", "from_tuple"]

_tnew = tuple.__new__
_tget = tuple.__getitem__
_teq = tuple.__eq__


def _dim(d):
    """One dimension, checked as TensorFlow checks it."""
    if d is None or type(d) is int and d >= 0:
        return d
    if isinstance(d, Dimension):
        return d.value
    if isinstance(d, numbers.Integral) and not isinstance(d, (int, np.integer)):
        return d  # a symbolic size (trace/symint.py): reading its value would bind the trace
    try:
        v = d.__index__()
    except (AttributeError, TypeError):
        raise TypeError("Dimension value must be integer or None or have an __index__ method, "
                        f"got value '{d!r}' with type '{type(d)}'") from None
    if v < 0:
        raise ValueError(f"Dimension {v} must be >= 0")
    return v


class Dimension:
    """One dimension of a ``TensorShape.dims`` list (TensorFlow's ``Dimension``):
    ``value`` is its int, or None where unknown.

    >>> import tapegrad as tf
    >>> tf.zeros((2, 3)).shape.dims[1].value
    3
    """

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = _dim(value)

    def __eq__(self, other):
        other = other.value if isinstance(other, Dimension) else other
        if self.value is None or other is None:
            return None
        return self.value == other

    def __ne__(self, other):
        eq = self.__eq__(other)
        return None if eq is None else not eq

    def __hash__(self):
        return hash(self.value)

    def __int__(self):
        return int(self.value)

    def __index__(self):
        return self.value.__index__()

    def __repr__(self):
        return f"Dimension({self.value!r})"

    def __str__(self):
        return "?" if self.value is None else str(self.value)


class TensorShape(tuple):
    """The dimensions of a tensor (ints, or None where unknown), as a tuple with
    TensorFlow's methods; ``TensorShape(None)`` has an unknown rank.

    >>> import tapegrad as tf
    >>> s = tf.TensorShape([None, 3])
    >>> s.rank, s[1], s.is_fully_defined(), s.concatenate([4]).as_list()
    (2, 3, False, [None, 3, 4])
    """

    __slots__ = ()

    def __new__(cls, dims=None):
        if dims is None:
            return _tnew(_UnknownShape)
        if isinstance(dims, TensorShape):
            return dims if type(dims) is cls or not dims._known else _tnew(cls, dims)
        if isinstance(dims, (int, np.integer, Dimension)):
            dims = (dims,)
        try:
            it = iter(dims)
        except TypeError:
            raise TypeError(f"Cannot convert {dims!r} to a TensorShape") from None
        return _tnew(cls, [_dim(d) for d in it])

    _known = True

    def __getnewargs__(self):
        return (list(self),)

    # -- facts -------------------------------------------------------------------------
    @property
    def rank(self):
        """The number of dimensions (None where unknown)."""
        return len(self)

    @property
    def ndims(self):
        return self.rank

    @property
    def dims(self):
        """A list of ``Dimension`` objects (None where the rank is unknown)."""
        return [Dimension(d) for d in self]

    def as_list(self):
        """The dimensions as a list (``ValueError`` where the rank is unknown)."""
        return list(self)

    def num_elements(self):
        """The product of the dimensions, or None unless fully defined."""
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self:
            n *= d
        return n

    def is_fully_defined(self):
        for d in self:
            if d is None:
                return False
        return True

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    # -- compatibility -----------------------------------------------------------------
    def is_compatible_with(self, other):
        """True where every dimension is equal or unknown in one of the two."""
        other = as_shape(other)
        if not (self._known and other._known):
            return True
        return len(self) == len(other) and all(
            a is None or b is None or a == b for a, b in zip(self, other))

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are incompatible")

    def merge_with(self, other):
        """The most specific shape compatible with both (``ValueError`` where none is)."""
        other = as_shape(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        if not self._known:
            return other
        if not other._known:
            return self
        return TensorShape([a if a is not None else b for a, b in zip(self, other)])

    def most_specific_compatible_shape(self, other):
        """The shape whose dimensions are kept where both agree, unknown elsewhere."""
        other = as_shape(other)
        if not (self._known and other._known) or len(self) != len(other):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self, other)])

    def is_subtype_of(self, other):
        other = as_shape(other)
        if not other._known:
            return True
        if not self._known or len(self) != len(other):
            return False
        return all(b is None or a == b for a, b in zip(self, other))

    def concatenate(self, other):
        other = as_shape(other)
        if not (self._known and other._known):
            return TensorShape(None)
        return _tnew(TensorShape, tuple.__add__(self, other))

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return as_shape(other).concatenate(self)

    # -- rank checks -------------------------------------------------------------------
    def assert_has_rank(self, rank):
        if self._known and len(self) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def with_rank(self, rank):
        self.assert_has_rank(rank)
        return self if self._known else TensorShape([None] * rank)

    def with_rank_at_least(self, rank):
        if self._known and len(self) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank):
        if self._known and len(self) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_same_rank(self, other):
        other = as_shape(other)
        if self._known and other._known and len(self) != len(other):
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    # -- the tuple protocol, as TensorFlow's --------------------------------------------
    def __getitem__(self, key):
        if key.__class__ is slice:
            return _tnew(TensorShape, _tget(self, key))
        return _tget(self, key)

    def __eq__(self, other):
        cls = other.__class__
        if cls is tuple or cls is TensorShape:
            return _teq(self, other)
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return False
        return other._known and _teq(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __lt__(self, other):  # TensorFlow's shapes have no order
        raise TypeError(f"ordering is not supported between a TensorShape and "
                        f"'{type(other).__name__}'")

    __le__ = __gt__ = __ge__ = __lt__

    def __mul__(self, other):
        return NotImplemented

    __rmul__ = __mul__

    def __str__(self):
        inner = ", ".join(str(d) for d in self)
        return f"({inner},)" if len(self) == 1 else f"({inner})"

    def __repr__(self):
        return f"TensorShape({list(self)!r})"


class _UnknownShape(TensorShape):
    """``TensorShape(None)``: no known rank (an empty tuple underneath)."""

    __slots__ = ()
    _known = False

    def __reduce__(self):
        return TensorShape, (None,)

    @property
    def rank(self):
        return None

    @property
    def dims(self):
        return None

    def as_list(self):
        raise ValueError("as_list() is not defined on an unknown TensorShape.")

    def is_fully_defined(self):
        return False

    def __len__(self):
        raise ValueError("Cannot take the length of shape with unknown rank.")

    def __iter__(self):
        raise ValueError("Cannot iterate over a shape with unknown rank.")

    def __bool__(self):
        return False

    def __contains__(self, item):
        return False

    def __getitem__(self, key):
        if key.__class__ is not slice:
            return None
        if key.step is not None and key.step != 1:
            raise ValueError("Steps are not yet handled")
        start, stop = key.start, key.stop
        if stop is None or start is not None and (start < 0 or stop < 0) or stop < 0:
            return self
        return TensorShape([None] * max(stop - (start or 0), 0))

    def __eq__(self, other):
        return isinstance(other, _UnknownShape) or other is None

    def __hash__(self):
        return hash(None)

    def __str__(self):
        return "<unknown>"

    def __repr__(self):
        return "TensorShape(None)"


_UnknownShape.__name__ = _UnknownShape.__qualname__ = "TensorShape"


def as_shape(shape):
    """``shape`` as a ``TensorShape`` (itself where it is one)."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def from_tuple(shape):
    """A ``TensorShape`` of a tuple of checked dimensions (a NumPy shape), unchecked."""
    return _tnew(TensorShape, shape)
