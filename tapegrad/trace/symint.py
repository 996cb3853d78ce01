"""``SymInt``: a size of a trace for all sizes, as an integer that records how it is used.

Arithmetic (``+ - * // %``, ``divmod``, ``abs``, shifts, masks) gives new ``SymInt``\\ s with
an exact expression of the traced sizes; comparisons and truth tests are recorded as guards
in the trace's ``Sizes`` (``ctx``); every other read of the value pins the size. See
``trace/symbolic.py`` for how a trace uses them.
"""
import numbers
import operator

import numpy as np

from tapegrad.primitives.gather import Index

_BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
           "floordiv": operator.floordiv, "mod": operator.mod}
_COMPARE = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
            "gt": operator.gt, "ge": operator.ge}


class SymInt:
    """A size known now (``value``) and as an expression of the traced sizes (``expr``).

    Not an ``int`` subclass on purpose: CPython reads an int subclass's value directly, never
    asking it, in ``range(n)``, ``seq[n]``, ``seq[:n]``, ``[x] * n``, ``math.gcd`` and
    NumPy's array constructors, so a size could leave unguarded. A plain object must be
    asked (``__index__``, ``__int__``, ``__array__``), and each of those pins the size.
    ``vals`` holds the value at the traced sizes and at the probe sizes.
    """

    __slots__ = ("value", "vals", "expr", "ctx")

    def __init__(self, vals, expr, ctx):
        self.value = int(vals[0])
        self.vals, self.expr, self.ctx = vals, expr, ctx

    def _binary(self, other, op, swap=False):
        if isinstance(other, SymInt):
            ovals, oexpr = other.vals, other.expr
        elif isinstance(other, (int, np.integer)) and not isinstance(other, (bool, np.bool_)):
            ovals, oexpr = (int(other),) * 2, int(other)
        elif isinstance(other, (bool, np.bool_)):
            return self._binary(int(other), op, swap)
        else:  # a float or anything else: the value leaves the tracked world
            a, b = (other, self._pinned()) if swap else (self._pinned(), other)
            return _BINARY[op](a, b)
        f = _BINARY[op]
        a, b = (ovals, self.vals) if swap else (self.vals, ovals)
        value = f(a[0], b[0])
        try:
            probe = f(a[1], b[1])
        except ZeroDivisionError:
            self.ctx.taint("a size expression divides by zero at the probe size")
            probe = value
        return SymInt((value, probe), (op, oexpr, self.expr) if swap else
                      (op, self.expr, oexpr), self.ctx)

    def __add__(self, o): return self._binary(o, "add")
    def __radd__(self, o): return self._binary(o, "add", True)
    def __sub__(self, o): return self._binary(o, "sub")
    def __rsub__(self, o): return self._binary(o, "sub", True)
    def __mul__(self, o): return self._binary(o, "mul")
    def __rmul__(self, o): return self._binary(o, "mul", True)
    def __floordiv__(self, o): return self._binary(o, "floordiv")
    def __rfloordiv__(self, o): return self._binary(o, "floordiv", True)
    def __mod__(self, o): return self._binary(o, "mod")
    def __rmod__(self, o): return self._binary(o, "mod", True)
    def __neg__(self): return self._binary(0, "sub", True)
    def __pos__(self): return self

    def _compare(self, other, op):
        if isinstance(other, SymInt):
            b, bv = other.expr, other.value
        elif isinstance(other, (int, np.integer)):
            b = bv = int(other)
        elif isinstance(other, (float, np.floating)):
            return _COMPARE[op](self._pinned(), other)
        else:
            return NotImplemented
        result = _COMPARE[op](self.value, bv)
        self.ctx.guard(op, self.expr, b, result)
        return result

    def __eq__(self, o): return self._compare(o, "eq")
    def __ne__(self, o): return self._compare(o, "ne")
    def __lt__(self, o): return self._compare(o, "lt")
    def __le__(self, o): return self._compare(o, "le")
    def __gt__(self, o): return self._compare(o, "gt")
    def __ge__(self, o): return self._compare(o, "ge")

    def __bool__(self):
        return self._compare(0, "ne")

    def __hash__(self):
        self.ctx.pin(self)
        return hash(self.value)

    def _pinned(self):
        self.ctx.pin(self)
        return self.value

    # Every other way Python reads an int either stays an expression (abs and divmod ask
    # the comparisons and arithmetic above; shifts and low-bit masks are // * %) or pins
    # the size: int's own methods would otherwise hand out the plain value unguarded.
    def __abs__(self): return self if self >= 0 else -self
    def __divmod__(self, o): return self // o, self % o
    def __rdivmod__(self, o): return o // self, o % self
    def __trunc__(self): return self
    __floor__ = __ceil__ = __trunc__

    def __round__(self, ndigits=None):
        return self if ndigits is None or ndigits >= 0 else round(self._pinned(), ndigits)

    def __lshift__(self, o):
        return self * (1 << o) if _small_nonneg(o) else self._pinned() << o

    def __rshift__(self, o):
        return self // (1 << o) if _small_nonneg(o) else self._pinned() >> o

    def __and__(self, o):  # n & (2**k - 1) is n % 2**k for every int n
        if _small_nonneg(o) and (int(o) & (int(o) + 1)) == 0:
            return self % (int(o) + 1)
        return self._pinned() & o

    def __rand__(self, o): return self.__and__(o)
    def __or__(self, o): return self._pinned() | o
    def __ror__(self, o): return o | self._pinned()
    def __xor__(self, o): return self._pinned() ^ o
    def __rxor__(self, o): return o ^ self._pinned()
    def __rlshift__(self, o): return o << self._pinned()
    def __rrshift__(self, o): return o >> self._pinned()
    def __invert__(self): return -self - 1
    def __int__(self): return self._pinned()
    def __index__(self): return self._pinned()
    def __float__(self): return float(self._pinned())
    def __complex__(self): return complex(self._pinned())
    def __truediv__(self, o): return self._pinned() / o
    def __rtruediv__(self, o): return o / self._pinned()
    def __pow__(self, o, mod=None): return pow(self._pinned(), o, mod)
    def __rpow__(self, o, mod=None): return pow(o, self._pinned(), mod)
    def __format__(self, spec): return format(self._pinned(), spec)
    def bit_length(self): return self._pinned().bit_length()
    def bit_count(self): return self._pinned().bit_count()
    def to_bytes(self, *a, **k): return self._pinned().to_bytes(*a, **k)
    def as_integer_ratio(self): return self._pinned(), 1
    def conjugate(self): return self
    real = numerator = property(conjugate)
    imag = property(lambda self: 0)
    denominator = property(lambda self: 1)
    def __copy__(self): return self
    def __deepcopy__(self, memo): return self

    def __array__(self, dtype=None, copy=None):  # np.asarray(n), np.zeros(n), np.prod
        return np.asarray(self._pinned(), dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        # NumPy computing with a size (np.sqrt(x.shape[0])): the result leaves the tracked
        # world, so the trace holds for these sizes only. (NumPy asks an int subclass here;
        # np.asarray(n) and np.float32(n) it does not ask: the leak scan sees those values.)
        ins = []
        for i in inputs:
            if isinstance(i, SymInt):
                i = i._pinned()
            ins.append(i)
        return getattr(ufunc, method)(*ins, **kwargs)

    def __repr__(self):  # text can be parsed or measured (len(str(n))): it pins
        return repr(self._pinned())

    __str__ = __repr__

    def __reduce__(self):  # a pickle is the plain size
        return int, (self._pinned(),)


numbers.Integral.register(SymInt)


def _small_nonneg(o):
    return type(o) is int and 0 <= o < 64


def evaluate(expr, leaf):
    """The value of a ``SymInt`` expression; ``leaf(expr)`` gives ``("s", k)`` symbols and
    ``("v", name, axis)`` dimensions of program values."""
    if type(expr) is int:
        return expr
    tag = expr[0]
    if tag in ("s", "v"):
        return leaf(expr)
    return _BINARY[tag](evaluate(expr[1], leaf), evaluate(expr[2], leaf))


def subst(v, f):
    """``v`` (a param: int, tuple, slice, ``Index``...) with each ``SymInt`` replaced by
    ``f(sym)``; None if it holds none (so params without sizes are kept as they are)."""
    if isinstance(v, SymInt):
        return f(v)
    if type(v) is tuple:
        parts = [subst(x, f) for x in v]
        if all(p is None for p in parts):
            return None
        return tuple(x if p is None else p for x, p in zip(v, parts))
    if type(v) is slice:
        parts = subst((v.start, v.stop, v.step), f)
        return None if parts is None else slice(*parts)
    if type(v) is Index:
        key = subst(v.key, f)
        return None if key is None else Index(key)
    return None
