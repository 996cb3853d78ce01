"""The graph IR: a small, immutable, straight-line SSA program over tapegrad's primitives.

Data structures (``ir/core.py``)
--------------------------------
``Var(name, shape, dtype)``
    A NamedTuple. ``name`` is a Python identifier unique within its program; ``shape`` is a
    tuple of non-negative ints (shapes are static: a program is specialised to the shapes it
    was traced at); ``dtype`` is a ``np.dtype``. Two uses of a value are two equal ``Var``s.

``Const(var, value)``
    A frozen dataclass: ``var`` bound to a read-only NumPy array with exactly ``var``'s shape
    and dtype. Constants with one repeated value are stored as zero-strided broadcasts.

``Equation(prim, inputs, params, outs)``
    A NamedTuple: ``outs = prim(*inputs, **params)``. ``prim`` is the registered
    ``Primitive`` object (``prim.name`` is its stable name, ``PRIMITIVES[name]`` finds it);
    ``inputs`` is a tuple of ``Var``s; ``params`` a tuple of ``(key, value)`` pairs sorted by
    key (``eqn.kwargs`` gives the dict), with the static values the primitive's rules take;
    ``outs`` a tuple of ``Var``s, of length 1 for every primitive except those that declare
    ``multiple_results = True`` (then ``abstract`` returns a list of ``(shape, dtype)`` and
    ``impl``/``bind`` return a tuple; reserved for control flow).

``Program(inputs, captures, constants, equations, outputs, updates=(), name='program')``
    A frozen dataclass. ``inputs``: the flattened positional tensor arguments. ``captures``:
    one ``Var`` per captured ``tf.Variable``; the caller feeds each variable's current value
    (variables are captured by reference, never baked in). ``constants``: a tuple of
    ``Const``. ``equations``: in execution order. ``outputs``: the flattened results.
    ``updates``: ``(i, var)`` pairs: after the call, captured variable ``i`` takes the value
    of ``var`` (from assign / assign_add / assign_sub inside the traced function; the last
    assignment wins). The Python objects behind captures (which ``tf.Variable``) and the
    nesting structure of inputs/outputs live with the compiled function, not in the IR.

Invariants (enforced by ``check``): every name is defined exactly once (inputs, captures,
constants, equation outputs) and before any use; every use equals its definition; each
primitive is registered, gets its arity, and its ``abstract`` rule re-derives each output's
shape and dtype; constants match their ``Var``; updates assign a value of the captured
variable's type, once per variable.

Operations
----------
- ``check(program)`` (``checker.py``): validate or raise ``IRError``.
- ``pretty(program)`` / ``str(program)`` (``printer.py``): one line per equation.
- ``evaluate(program, inputs, captures)`` (``interpreter.py``): run through ``bind``, so the
  evaluation itself can be traced, differentiated by a tape and batched by ``vmap``.
- ``optimize(program, passes=None, check=False)`` (``passes.py``): ``fold_constants``,
  ``simplify`` (``algebraic.py``), ``cse`` and ``dce`` to a fixed point.

Programs are built by tracing (``tapegrad.trace.tracer.GraphBuilder``) and turned into
NumPy source by ``tapegrad.trace.codegen``.

>>> import numpy as np, tapegrad as tf
>>> from tapegrad.core.dispatch import PRIMITIVES
>>> f32 = np.dtype("float32")
>>> x, y = Var("x", (2,), f32), Var("y", (2,), f32)
>>> p = check(Program((x,), (), (), (Equation(PRIMITIVES["exp"], (x,), (), (y,)),), (y,)))
>>> print(p)
program program(x:f32[2]) {
  y:f32[2] = exp x
  return (y)
}
>>> float(evaluate(p, [tf.constant([0.0, 1.0])])[0][0][0])
1.0
"""
from tapegrad.ir.core import (Const, Equation, IRError, NameGen, Origin, Program, Var,  # noqa: F401
                              make_params)
from tapegrad.ir.checker import check  # noqa: F401
from tapegrad.ir.printer import pretty  # noqa: F401
from tapegrad.ir.interpreter import evaluate  # noqa: F401
from tapegrad.ir.passes import cse, dce, derivative_passes, fold_constants, optimize  # noqa: F401
from tapegrad.ir.algebraic import simplify  # noqa: F401
