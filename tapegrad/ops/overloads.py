"""Python operators on Tensor, each with its reflected form."""
from tapegrad.core.tensor import Tensor
from tapegrad.ops import array_ops as A
from tapegrad.ops import linalg_ops as L
from tapegrad.ops import math_ops as M


def _flip(f):
    return lambda self, other: f(other, self)


def install():
    for name, f in [("add", M.add), ("sub", M.subtract), ("mul", M.multiply),
                    ("truediv", M.divide), ("floordiv", M.floordiv), ("mod", M.floormod),
                    ("pow", M.pow), ("matmul", L.matmul)]:
        setattr(Tensor, f"__{name}__", lambda self, other, f=f: f(self, other))
        setattr(Tensor, f"__r{name}__", _flip(f))
    Tensor.__neg__ = lambda self: M.negative(self)
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = lambda self: M.abs(self)
    Tensor.__invert__ = lambda self: M.logical_not(self)
    Tensor.__and__ = lambda self, o: M.logical_and(self, o)
    Tensor.__or__ = lambda self, o: M.logical_or(self, o)
    Tensor.__xor__ = lambda self, o: M.logical_xor(self, o)
    Tensor.__eq__ = lambda self, o: M.equal(self, o) if o is not None else False
    Tensor.__ne__ = lambda self, o: M.not_equal(self, o) if o is not None else True
    Tensor.__lt__ = lambda self, o: M.less(self, o)
    Tensor.__le__ = lambda self, o: M.less_equal(self, o)
    Tensor.__gt__ = lambda self, o: M.greater(self, o)
    Tensor.__ge__ = lambda self, o: M.greater_equal(self, o)
    Tensor.__getitem__ = lambda self, key: A.getitem(self, key)
    Tensor.T = property(lambda self: A.transpose(self))
