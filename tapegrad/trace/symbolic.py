"""Symbolic sizes: trace a function once for every size of its ``None`` dimensions.

In a generalising trace (``input_signature`` with ``None`` dimensions, or the relaxed retrace
of ``reduce_retracing``) each such dimension of an input is a ``SymInt`` (``trace/symint.py``): an integer
(``numbers.Integral``) whose value is the size of this call, so Python code runs as usual,
but whose arithmetic (``+ - * // %``, ``divmod``, ``abs``, shifts) returns new ``SymInt``\\ s
carrying an exact expression of the sizes. Params such as a reshape's shape thus come out as
expressions, and ``tf.shape``, a mean's count or ``tf.ones([n])`` become constants or
equations whose values are re-evaluated per size.

A program is only reused for a new size when nothing says it might be wrong there:

- every comparison or truth test of a ``SymInt`` (Python branching on ``x.shape[0]``,
  ``max``, ``min``, ``in``) is a *guard*, re-evaluated at the new size; every other read of
  its value pins the size exactly (a guard ``n == traced n``): ``int()``, ``float()``,
  ``hash()``, ``str()``, ``/``, ``**``, and ``__index__`` and ``__array__``, which is how
  ``range(n)``, ``seq[n]``, ``[x] * n``, ``math.gcd`` and NumPy read it. That is why it is
  not an ``int`` subclass: CPython and NumPy read an int subclass's value without asking;
- every equation's shape rule also runs at a second, *probe* size while tracing; the output
  dimensions that move with it become ``SymInt``\\ s (so ``y.shape[0]`` of any intermediate
  is symbolic too), and a rule that fails at the probe size marks the trace as size-bound;
- as a second line of defence against tapegrad's own code reading a plain size, a finished
  program in which the traced size appears untracked — a dimension, an integer param or
  index, a constant equal to ``n`` or ``1 / n`` — is not reused (mostly a coincidence,
  such as ``x * 2.0`` traced at size 2, which only costs a retrace at the next size);
- a new size rebuilds the program with the primitives' shape rules, requires every
  dimension that did not move to keep its value, checks the guards, the program
  (``ir.check``) and one run on zeros (see ``Function._from_template``).

Anything else — an exception, a control-flow sub-program over a sized tensor — means the
function is traced per size (or learns a guarded template from two traces, ``template.py``).
Code that checks a size's value only to validate it, where the rebuilt program's shape rules
repeat the check at every size, reads it with ``core.tensor.sizes_now`` (no guard).
"""
import sys

import numpy as np

from tapegrad.trace import template
from tapegrad.trace.symint import _COMPARE, SymInt, evaluate, subst
from tapegrad.core import hooks
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor
from tapegrad.ir import Var
from tapegrad.primitives.gather import Index

PROBE_OFFSET = 3   # the probe size of a symbol is its traced size plus this
MIN_SIZE = 2       # a size-0 or size-1 trace broadcasts differently: not generalised


def _plain_ints(v):
    """The plain ints inside a param (ints, tuples, slices, ``Index`` keys)."""
    if type(v) is int:
        yield v
    elif type(v) in (tuple, list):
        for x in v:
            yield from _plain_ints(x)
    elif type(v) is slice:
        yield from _plain_ints((v.start, v.stop, v.step))
    elif type(v) is Index:
        yield from _plain_ints(v.key)


class Sizes:
    """The symbolic sizes of one trace: guards, the reasons not to generalise, and what
    the finished program needs to be rebuilt for other sizes."""

    def __init__(self, builder, symbols):
        self.builder = builder
        self.symbols = symbols       # [(input index, axis)], one symbol each
        self.base = {}               # symbol -> traced size
        self.guards = []             # (op, expr, expr, result)
        self.reasons = []            # why this program cannot be rebuilt for other sizes
        self.leaks = []              # where a size escaped unguarded: no template at all
        self.params = {}             # equation index -> params holding SymInts
        self.consts = {}             # constant name -> (expressions, dtype)
        self.closed = False

    def taint(self, why):
        if not self.closed:
            self.reasons.append(why)

    def leak(self, why):
        """A size may have been read without a guard: no template of any kind."""
        if not self.closed:
            self.leaks.append(why)

    def guard(self, op, a, b, result):
        if not self.closed:
            self.guards.append((op, a, b, result))

    def pin(self, s):
        self.guard("eq", s.expr, s.value, True)

    def input_shape(self, k_input, shape):
        """The shape of input ``k_input`` with a ``SymInt`` at each symbolic axis."""
        out = list(shape)
        for k, (i, axis) in enumerate(self.symbols):
            if i == k_input:
                self.base[k] = shape[axis]
                out[axis] = SymInt((shape[axis], shape[axis] + PROBE_OFFSET), ("s", k), self)
        return tuple(out)

    def active(self):
        """True when the innermost trace is this one (not a control-flow branch)."""
        return not self.closed and STATE.stack.tracers and STATE.stack.tracers[-1] is self.builder

    # -- the tracer's hooks -----------------------------------------------------------------
    def stage(self, prim, args, ins, params):
        """Shapes of ``prim``'s outputs, with ``SymInt``\\ s where they move with the size,
        and the params to record (plain ints; the symbolic ones are kept aside)."""
        plain = {k: _at(v, 0) for k, v in params.items()}
        res = prim.abstract(*ins, **plain)
        multi = getattr(prim, "multiple_results", False)
        res = res if multi else [res]
        shapes = [tuple(int(s) for s in shape) for shape, _ in res]
        sym = {k: v for k, v in params.items() if holds_sym(v) or subst(v, _zero) is not None}
        if any(_has_program(v) for v in params.values()) and any(
                isinstance(s, SymInt) for a in args for s in getattr(a, "_shape", ())):
            self.taint(f"{prim.name} holds a sub-program over a sized tensor")
        try:
            probe = prim.abstract(*(Var(v.name, _probe_shape(a, v), v.dtype)
                                    for a, v in zip(args, ins)),
                                  **{k: _at(v, 1) for k, v in params.items()})
            probe = [tuple(int(s) for s in shape)
                     for shape, _ in (probe if multi else [probe])]
        except Exception as e:  # noqa: BLE001 - any failure: this program is size-bound
            self.taint(f"{prim.name} does not hold at the probe size ({e})")
            probe = shapes
        return res, shapes, probe, plain, sym

    def output_shape(self, var, shape, probe):
        return tuple(s if s == p else SymInt((s, p), ("v", var.name, axis), self)
                     for axis, (s, p) in enumerate(zip(shape, probe)))

    def constant(self, value, dtype):
        """A symbolic tensor for ``value`` (a ``SymInt`` or a list of ints and ``SymInt``\\ s),
        re-evaluated per size; None when this trace cannot stage it."""
        if not self.active():
            self.taint("a size became a constant outside the main trace")
            return None
        arr = np.asarray(_at(value, 0, list_ok=True), dtype)
        t = Tensor._wrap(arr)
        var = self.builder.var_of(t)
        self.consts[var.name] = (value, arr.dtype)
        from tapegrad.trace.tracer import SymbolicTensor
        return SymbolicTensor(var, self.builder)

    def broadcast(self, value, shape, dtype):
        """``value`` broadcast to ``shape`` (holding ``SymInt``\\ s), staged in the trace."""
        if not self.active():
            self.taint("a sized constant outside the main trace")
            return None
        from tapegrad.primitives import shape as shape_prims
        small = Tensor._wrap(np.asarray(value, dtype))
        return self.builder.stage(shape_prims.broadcast_to_p, (small,), {"shape": tuple(shape)})

    # -- the result -------------------------------------------------------------------------
    def finish(self, program, sym_shapes):
        """A ``SymbolicTemplate`` for ``program``, or None (with ``reasons``) if it may not
        hold for other sizes."""
        self.closed = True
        base = set(self.base.values())
        if min(base, default=0) < MIN_SIZE:
            self.reasons.append("traced at size 0 or 1")
        sym_axes = {name: {i for i, s in enumerate(shape) if isinstance(s, SymInt)}
                    for name, shape in sym_shapes.items()}
        # (not the inputs: their shapes are the call's)
        values = [c.var for c in program.constants] + [
            v for e in program.equations for v in e.outs]
        for v in values:
            axes = sym_axes.get(v.name, ())
            if any(s in base for i, s in enumerate(v.shape) if i not in axes):
                self.leaks.append(f"the size appears untracked in the shape of {v.name}")
        for i, e in enumerate(program.equations):
            sym = self.params.get(i, {})
            for k, v in e.params:
                if k not in sym and any(n in base for n in _plain_ints(v)):
                    self.leaks.append(f"the size appears untracked in {e.prim.name}.{k}")
                # x[n - 1] with a plain n - 1: a Python loop over range(n), most likely
                if type(v) is Index and k not in sym and any(
                        n + 1 in base or -n in base for n in _plain_ints(v) if n):
                    self.leaks.append(f"{e.prim.name} indexes the last element by number")
        for c in program.constants:
            if c.var.name in self.consts or np.asarray(c.value).dtype.kind not in "iuf":
                continue
            val = np.asarray(c.value)
            for n in base:
                if np.any(val == n) or (val.dtype.kind == "f" and np.any(
                        val == val.dtype.type(1.0 / n))):
                    self.leaks.append(f"constant {c.var.name} holds the size or 1/size")
        if any(len(e.outs) != 1 for e in program.equations):
            self.reasons.append("an equation with several results")
        if self.reasons or self.leaks:
            return None
        return SymbolicTemplate(program, self.symbols, self.params, self.consts, sym_axes,
                                self.guards)


class SymbolicTemplate:
    """A program traced with symbolic sizes, rebuilt for the sizes of a new call."""

    def __init__(self, program, symbols, params, consts, sym_axes, guards):
        self.program, self.symbols, self.params = program, symbols, params
        self.consts, self.sym_axes, self.guards = consts, sym_axes, guards

    def instantiate(self, shapes):
        """The program for input shapes ``shapes``; raises if it may not hold there."""
        p = self.program
        sizes = [shapes[i][axis] for i, axis in self.symbols]
        env = {}

        def leaf(expr):
            return sizes[expr[1]] if expr[0] == "s" else env[expr[1]].shape[expr[2]]

        def value(s):
            return evaluate(s.expr, leaf)

        def define(v, new):
            axes = self.sym_axes.get(v.name, ())
            if len(new) != len(v.shape) or any(
                    a != b for i, (a, b) in enumerate(zip(new, v.shape)) if i not in axes):
                raise ValueError(f"{v.name}: a dimension that did not move with the size "
                                 f"changed ({v.shape} -> {new})")
            env[v.name] = Var(v.name, tuple(new), v.dtype)
            return env[v.name]

        def constant(c):
            exprs = self.consts.get(c.var.name)
            if exprs is None:
                return c
            arr = np.asarray(_eval_nested(exprs[0], value), exprs[1])
            if arr.shape != c.var.shape:
                raise ValueError(f"constant {c.var.name} changed shape")
            return type(c)(c.var, arr)

        def params(i, e):
            sym = self.params.get(i)
            if not sym:
                return e.params
            return tuple((k, subst(sym[k], value) if k in sym else v) for k, v in e.params)

        # shapes never depend on constant values, so a size constant (which may name any
        # value's dimension) is filled in once every shape is known
        program = template.rebuild(p, lambda v, i: shapes[i], lambda c, i: c, params, define)
        program = program.replace(constants=tuple(constant(c) for c in program.constants))
        check_guards(self.guards, leaf)
        return program


def check_guards(guards, leaf):
    """Raise ValueError unless every recorded comparison of a size gives its traced result
    (``leaf`` as for ``evaluate``)."""
    for op, a, b, result in guards:
        if _COMPARE[op](evaluate(a, leaf), evaluate(b, leaf)) != result:
            raise ValueError("a size guard does not hold")


def resolver(symbols, shapes):
    """``resolve(param, env)`` for ``template.Template``: ``param`` with each ``SymInt``
    evaluated at the sizes of input ``shapes`` and the dimensions of values in ``env``."""
    sizes = [shapes[i][axis] for i, axis in symbols]

    def leaf_in(env):
        return lambda e: sizes[e[1]] if e[0] == "s" else env[e[1]].shape[e[2]]

    def resolve(param, env):
        leaf = leaf_in(env)
        return subst(param, lambda s: evaluate(s.expr, leaf))
    resolve.leaf_in = leaf_in
    return resolve


def _eval_nested(v, value):
    if isinstance(v, SymInt):
        return value(v)
    if isinstance(v, (list, tuple)):
        return [_eval_nested(x, value) for x in v]
    return v


def _at(v, k, list_ok=False):
    """``v`` with each ``SymInt`` replaced by its value at the traced (0) or probe (1) size."""
    if list_ok and isinstance(v, list):
        v = tuple(v)
    out = subst(v, lambda s: s.vals[k])
    if out is None:
        return v
    return list(out) if list_ok and isinstance(out, tuple) else out


def _zero(s):
    return 0


def _probe_shape(a, v):
    shape = getattr(a, "_shape", None)
    if shape is None or getattr(a, "_builder", None) is None:
        return v.shape
    return tuple(s.vals[1] if isinstance(s, SymInt) else s for s in shape)


def _has_program(v):
    from tapegrad.ir import Program
    if isinstance(v, Program):
        return True
    return isinstance(v, (tuple, list)) and any(_has_program(x) for x in v)


def holds_sym(value):
    """True if ``value`` is a ``SymInt`` or a list/tuple holding one (at any depth)."""
    if isinstance(value, SymInt):
        return True
    return isinstance(value, (list, tuple)) and any(holds_sym(v) for v in value)


def ctx_of(value):
    """The ``Sizes`` of the first ``SymInt`` in ``value``."""
    if isinstance(value, SymInt):
        return value.ctx
    for v in value:
        c = ctx_of(v) if isinstance(v, (SymInt, list, tuple)) else None
        if c is not None:
            return c
    return None


# core/tensor.py's conversions ask this module about sizes in a trace for all sizes
hooks.install(symbolic_sizes=sys.modules[__name__])
