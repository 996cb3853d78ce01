"""What converted code calls (``ag__`` in it): each decides at trace time, per value.

A predicate or iterable with a value (a Python object, a concrete tensor) runs as Python
would run it, so code whose control flow does not depend on symbolic tensors computes
exactly what it computed before conversion. A symbolic one (traced, or batched by vmap) is
staged by ``tapegrad.autograph.staging`` as ``cond`` / ``while_loop``.

>>> import tapegrad as tf
>>> from tapegrad.autograph import operators as ag
>>> ag.and_(lambda: 0, lambda: 1 / 0), ag.or_(lambda: [], lambda: "b"), ag.not_(3)
(0, 'b', False)
"""
import builtins

import numpy as np

from tapegrad.autograph import conversion
from tapegrad.autograph.staging import (Undefined, UndefinedReturnValue, as_value,  # noqa: F401
                                        staged_if, staged_loop, symbolic)
from tapegrad.control_flow import ops as cf_ops
from tapegrad.core import dtypes
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.ops import array_ops, math_ops
from tapegrad.util import nest


def if_stmt(cond, body, orelse, get_state, set_state, names, opts):
    """``if cond: body() else: orelse()``; a symbolic ``cond`` stages a ``cond``."""
    cond = as_value(cond)
    if symbolic(cond):
        _predicate(cond, "if")
        staged_if(cond, body, orelse, get_state, set_state, names)
    elif cond:
        body()
    else:
        orelse()


def while_stmt(test, body, get_state, set_state, names, opts):
    """``while test(): body()``; once ``test()`` is symbolic, the rest is a ``while_loop``."""
    while True:
        c = as_value(test())
        if symbolic(c):
            _predicate(c, "while")
            staged_loop(test, body, get_state, set_state, names, opts)
            return
        if not c:
            return
        body()


def for_stmt(iterable, extra_test, body, get_state, set_state, names, opts):
    """``for x in iterable: body(x)`` while ``extra_test()`` holds (``break``, ``return``).

    A range with symbolic bounds (``for i in tf.range(n)``) is a ``while_loop`` with a
    counter. Anything else iterates in Python, as before conversion: a list, a concrete
    tensor, or a traced tensor, whose first dimension is static in tapegrad. When a
    ``break`` under a symbolic predicate makes ``extra_test`` symbolic, the remaining
    iterations each run under a ``cond`` of it, which is what the loop means."""
    if isinstance(iterable, SymbolicRange):
        staged_loop(extra_test, body, get_state, set_state, names, opts,
                    counter=iterable.bounds())
        return
    for x in iterable:
        if extra_test is not None:
            go = as_value(extra_test())
            if symbolic(go):
                if_stmt(go, lambda x=x: body(x), lambda: None, get_state, set_state, names,
                        opts)
                continue
            if not go:
                break
        body(x)


def retval(value, do_return, always):
    """The converted function's result: ``value`` if it returned (``always``: every path
    does), else None as Python's falling off the end."""
    if symbolic(do_return) and not always:
        raise ValueError("the else branch must also have a return statement.")
    if always or do_return:
        return value
    return None


def checked(value):
    """``value``, once none of its parts is undefined (a function's result)."""
    for v in nest.flatten(value) if isinstance(value, (list, tuple, dict)) else [value]:
        if isinstance(v, Undefined):
            v.fail()
    return value


def if_exp(cond, body, orelse):
    """``body() if cond else orelse()``; a symbolic ``cond`` makes a ``tapegrad.cond``."""
    cond = as_value(cond)
    if symbolic(cond):
        return cf_ops.cond(cond, body, orelse)
    return body() if cond else orelse()


def and_(*operands):
    """``a and b and ...`` of thunks: Python's, or ``logical_and`` once one is symbolic."""
    v = operands[0]()
    for k in builtins.range(1, len(operands)):
        if symbolic(as_value(v)):
            return math_ops.logical_and(v, _bool(and_(*operands[k:])))
        if not v:
            return v
        v = operands[k]()
    return v


def or_(*operands):
    """``a or b or ...`` of thunks: Python's, or ``logical_or`` once one is symbolic."""
    v = operands[0]()
    for k in builtins.range(1, len(operands)):
        if symbolic(as_value(v)):
            return math_ops.logical_or(v, _bool(or_(*operands[k:])))
        if v:
            return v
        v = operands[k]()
    return v


def not_(x):
    """``not x``: Python's, or ``logical_not`` of a symbolic tensor."""
    x = as_value(x)
    return math_ops.logical_not(x) if symbolic(x) else not x


def _bool(x):
    x = as_value(x)
    return x if isinstance(x, Tensor) else convert_to_tensor(bool(x))


def _predicate(p, what):
    if p.dtype != np.bool_ or tuple(p.shape) != ():
        raise TypeError(f"the condition of a tensor-dependent `{what}` must be a boolean "
                        f"scalar; got {p.dtype.name} of shape {tuple(p.shape)}. Reduce it "
                        "(tf.reduce_any / tf.reduce_all) or compare it first.")


def callee(f):
    """What converted code calls for ``f``: a user's Python function converted, else ``f``."""
    return conversion.convert(f)


# -- for over a range with symbolic bounds -------------------------------------------------------
class SymbolicRange:
    """``tf.range(...)``/``range(...)`` with a symbolic bound, iterated by ``for_stmt``."""

    def __init__(self, start, limit=None, delta=1, dtype=None, name=None):
        if limit is None:
            start, limit = 0, start
        self.args, self.dtype = (start, limit, delta), dtype

    def bounds(self):
        """``(start, limit, delta)`` as tensors of TensorFlow's inferred dtype."""
        vals = [as_value(v) for v in self.args]
        dt = dtypes.as_dtype(self.dtype) if self.dtype is not None else max(
            (v.dtype if isinstance(v, Tensor) else
             np.dtype("float32") if isinstance(v, float) else np.dtype("int32")
             for v in vals), key=_RANGE_ORDER.index)
        return tuple(math_ops.cast(v, dt) if isinstance(v, Tensor)
                     else convert_to_tensor(v, dtype=dt) for v in vals)


_RANGE_ORDER = [np.dtype(d) for d in ("int32", "int64", "float16", "float32", "float64")]


def for_iter(f, *args, **kwargs):
    """The iterable of ``for x in f(*args)``: a ``SymbolicRange`` for a range of symbolic
    bounds, else the call's result."""
    if (f is array_ops.range or f is builtins.range) and any(
            symbolic(as_value(a)) for a in list(args) + list(kwargs.values())):
        return SymbolicRange(*args, **kwargs)
    return callee(f)(*args, **kwargs)
