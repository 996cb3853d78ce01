"""Python operators on Tensor, each with its reflected form.

The arithmetic operators are the hottest path of eager code, so each one checks the common
case (two tensors of one dtype, or a tensor and a Python number) before falling back to the
general conversion rules.
"""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.ops import array_ops
from tapegrad.ops import bitwise_ops
from tapegrad.ops import linalg_ops
from tapegrad.ops import math_ops
from tapegrad.ops._convert import binary, like
from tapegrad.primitives import elementwise

_NUMBER = (int, float)
_PLAIN = (Tensor, Variable)  # concrete values (a Variable is read by bind)
_BOOL = np.dtype(bool)
_STRING = np.dtype(object)  # tf.string: only + (concatenation) of its arithmetic
_wrap = Tensor._wrap


def _fast(prim, general):
    """``x <op> y`` and its reflection: the common cases bound directly, the rest (and every
    bool, which arithmetic refuses as TensorFlow does) by ``general``, the op's function."""
    def op(self, other):
        if type(other) in _PLAIN and type(self) in _PLAIN:  # the hottest case, no properties
            a, b = self._value.dtype, other._value.dtype
            if (a is b or a == b) and a is not _BOOL and a is not _STRING:
                return bind(prim, self, other)
        elif type(other) in _NUMBER:  # (a bool tensor refuses them in like)
            try:
                return bind(prim, self, like(other, self))
            except TypeError:
                if self.dtype.kind == "O":  # a string tensor: TensorFlow's error, by the op
                    return general(self, other)
                raise
        elif isinstance(other, Tensor):
            if other.dtype == self.dtype and other.dtype.kind not in "bO":
                return bind(prim, self, other)
        elif type(other) is np.ndarray and other.dtype == self.dtype and \
                other.dtype.kind not in "bO":
            return bind(prim, self, _wrap(other))
        return general(self, other)

    def rop(self, other):
        if type(other) in _NUMBER:
            return bind(prim, like(other, self), self)
        if type(other) is np.ndarray and other.dtype == self.dtype and \
                other.dtype.kind not in "bO":
            return bind(prim, _wrap(other), self)
        return general(other, self)
    return op, rop


def _multiply(x, y):
    """``*``: of bools the logical and (TensorFlow's ``__mul__``), of numbers the product."""
    x, y = binary(x, y, "mul")
    return (math_ops.logical_and if x.dtype.kind == "b" else math_ops.multiply)(x, y)


def _logical_or_bitwise(logical, bitwise):
    """``&``, ``|``, ``^`` as TensorFlow: logical of bools, bitwise of integers (an error
    for floats)."""
    def op(x, y):
        x, y = binary(x, y, logical.__name__)
        return (logical if x.dtype.kind == "b" else bitwise)(x, y)
    return op


def _flip(f):
    return lambda self, other: f(other, self)


def install():
    for name, prim, general in [("add", elementwise.add_p, math_ops.add),
                                ("sub", elementwise.sub_p, math_ops.subtract),
                                ("mul", elementwise.mul_p, _multiply),
                                ("truediv", elementwise.div_p, math_ops.divide),
                                ("pow", elementwise.pow_p, math_ops.pow)]:
        op, rop = _fast(prim, general)
        setattr(Tensor, f"__{name}__", op)
        setattr(Tensor, f"__r{name}__", rop)
    div, rdiv = Tensor.__truediv__, Tensor.__rtruediv__

    def __truediv__(self, other):  # integers divide in a float dtype, as tf.math.truediv
        d = self._value.dtype if type(self) in _PLAIN else self.dtype  # (no property call)
        return math_ops.divide(self, other) if d.kind in "iu" else div(self, other)

    def __rtruediv__(self, other):
        return math_ops.divide(other, self) if self.dtype.kind in "iu" else rdiv(self, other)
    Tensor.__truediv__, Tensor.__rtruediv__ = __truediv__, __rtruediv__
    pow_op = Tensor.__pow__

    def __pow__(self, other):
        d = self._value.dtype if type(self) in _PLAIN else self.dtype  # (no property call)
        if type(other) is int and -64 <= other <= 64 and d.kind in "fc":
            return bind(elementwise.integer_pow_p, self, y=other)
        if type(other) is float or d.kind not in "ifc":  # (TF: no uint or bool Pow)
            return math_ops.pow(self, other)
        return pow_op(self, other)
    Tensor.__pow__ = __pow__
    for name, f in [("floordiv", math_ops.floordiv), ("mod", math_ops.floormod),
                    ("matmul", linalg_ops.matmul)]:
        setattr(Tensor, f"__{name}__", lambda self, other, f=f: f(self, other))
        setattr(Tensor, f"__r{name}__", _flip(f))
    neg = elementwise.neg_p

    def __neg__(self):  # (bool and unsigned integers raise in negative, as in TensorFlow)
        d = self._value.dtype if type(self) in _PLAIN else self.dtype
        return bind(neg, self) if d.kind in "ifc" else math_ops.negative(self)
    Tensor.__neg__ = __neg__
    Tensor.__pos__ = lambda self: self
    Tensor.__abs__ = lambda self: math_ops.abs(self)
    Tensor.__invert__ = lambda self: (math_ops.logical_not if self.dtype.kind == "b"
                                      else bitwise_ops.invert)(self)
    for name, logical, bitwise in [("and", math_ops.logical_and, bitwise_ops.bitwise_and),
                                   ("or", math_ops.logical_or, bitwise_ops.bitwise_or),
                                   ("xor", math_ops.logical_xor, bitwise_ops.bitwise_xor)]:
        f = _logical_or_bitwise(logical, bitwise)
        setattr(Tensor, f"__{name}__", f)
        setattr(Tensor, f"__r{name}__", _flip(f))
    Tensor.__eq__ = lambda self, o: math_ops.equal(self, o) if o is not None else False
    Tensor.__ne__ = lambda self, o: math_ops.not_equal(self, o) if o is not None else True
    Tensor.__lt__ = lambda self, o: math_ops.less(self, o)
    Tensor.__le__ = lambda self, o: math_ops.less_equal(self, o)
    Tensor.__gt__ = lambda self, o: math_ops.greater(self, o)
    Tensor.__ge__ = lambda self, o: math_ops.greater_equal(self, o)
    Tensor.__getitem__ = lambda self, key: array_ops.getitem(self, key)
    Tensor.T = property(lambda self: array_ops.transpose(self))
