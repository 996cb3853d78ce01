"""Shape templates: a program traced at two sizes of one dimension, reused for a third size
without running the Python function again (``reduce_retracing``, ``None`` dimensions).

This is the fallback for traces with symbolic sizes (``trace/symbolic.py``) whose program
cannot be rebuilt from one trace (a constant repeated along the size, a shape rule that fails
at the probe size). Nothing is assumed from the two programs alone: a Python function may
branch on the size, so both traces must have run with guarded ``SymInt`` sizes, leaked no
size, and recorded the same guards, which every new size must pass. The traces must agree
exactly, except for params that hold a size expression: each is evaluated for the new size
from the expression the trace recorded, never fitted. A constant may differ only by
repeating one slice along the size (the basis rows of a batch Jacobian). The new program's
shapes are re-derived by the primitives' shape rules and checked, so the template never
produces a program that the checker would not accept.
"""
import numpy as np

from tapegrad.ir import Var


class Template:
    """How to rebuild ``program`` (traced at size ``d1``) for another size."""

    def __init__(self, program, d1, input_axes, rules, consts, guards):
        self.program, self.d1 = program, d1
        self.input_axes = input_axes  # per input: the axes that carry the varying size
        self.rules = rules            # per equation, per param: _SAME or ("expr", param with SymInts)
        self.consts = consts          # per constant: None, or the axes it is repeated along
        self.guards = guards          # the size guards both traces recorded

    def instantiate(self, d, resolve):
        """The program for size ``d`` and its values by name (IRError or ValueError if it is
        inconsistent); ``resolve(param, env)`` evaluates a param holding size expressions."""
        def input_shape(v, i):
            return tuple(d if j in self.input_axes[i] else s for j, s in enumerate(v.shape))

        def constant(c, i):
            along = self.consts[i]
            if along is None:
                return c
            # e.g. the basis rows of a batch Jacobian, one per example
            shape = tuple(d if j in along else s for j, s in enumerate(c.var.shape))
            one = c.value[tuple(slice(0, 1) if j in along else slice(None)
                                for j in range(c.value.ndim))]
            return type(c)(Var(c.var.name, shape, c.var.dtype), np.broadcast_to(one, shape))

        env = {}

        def define(v, shape):
            env[v.name] = Var(v.name, shape, v.dtype)
            return env[v.name]

        def params(i, e):
            return tuple((k, v if r is _SAME else resolve(r[1], env))
                         for (k, v), r in zip(e.params, self.rules[i]))
        return rebuild(self.program, input_shape, constant, params, define), env


def rebuild(p, input_shape, constant, params, define):
    """``p`` with new input shapes, constants and params; every other shape re-derived by
    the primitives' shape rules. ``input_shape(var, i)``, ``constant(const, i)``,
    ``params(i, equation)`` give the new parts; ``define(var, shape)`` makes each new
    ``Var`` (and may refuse it by raising)."""
    env = {}
    inputs = []
    for i, v in enumerate(p.inputs):
        env[v.name] = define(v, tuple(int(s) for s in input_shape(v, i)))
        inputs.append(env[v.name])
    for v in p.captures:
        env[v.name] = v
    constants = []
    for i, c in enumerate(p.constants):
        c = constant(c, i)
        env[c.var.name] = c.var
        constants.append(c)
    eqs = []
    for i, e in enumerate(p.equations):
        ps = params(i, e)
        ins = tuple(env[v.name] for v in e.inputs)
        shape, dtype = e.prim.abstract(*ins, **dict(ps))
        out = define(e.out, tuple(int(s) for s in shape))
        out = out._replace(dtype=np.dtype(dtype))
        env[out.name] = out
        eqs.append(e._replace(inputs=ins, params=ps, outs=(out,)))
    return p.replace(inputs=tuple(inputs), constants=tuple(constants), equations=tuple(eqs),
                     outputs=tuple(env[v.name] for v in p.outputs),
                     updates=tuple((i, env[v.name]) for i, v in p.updates))


def learn(p1, d1, p2, d2, exprs, guards):
    """A ``Template`` from two guarded traces at sizes ``d1 != d2``, or None. ``exprs``:
    equation index -> {param: value holding ``SymInt``\\ s} of the first trace."""
    if d1 == d2 or not _same_layout(p1, p2):
        return None
    axes = []
    for a, b in zip(p1.inputs, p2.inputs):
        if a.name != b.name or a.dtype != b.dtype or len(a.shape) != len(b.shape):
            return None
        moved = {i for i, (s, t) in enumerate(zip(a.shape, b.shape)) if s != t}
        if any((a.shape[i], b.shape[i]) != (d1, d2) for i in moved):
            return None
        axes.append(moved)
    consts = []  # per constant: None (the same at every size) or the axes it repeats along
    for a, b in zip(p1.constants, p2.constants):
        if a.var == b.var and np.array_equal(a.value, b.value):
            consts.append(None)
            continue
        along = _repeated_axes(a, b, d1, d2)
        if along is None:
            return None
        consts.append(along)
    if any(a != b for a, b in zip(p1.captures, p2.captures)):
        return None
    rules = []
    for i, (e, f) in enumerate(zip(p1.equations, p2.equations)):
        if e.prim is not f.prim or len(e.outs) != 1 or len(f.outs) != 1 \
                or [v.name for v in e.inputs] != [v.name for v in f.inputs] \
                or e.out.name != f.out.name or [k for k, _ in e.params] != [k for k, _ in f.params]:
            return None
        sym = exprs.get(i, {})
        rule = []
        for (k, v1), (_, v2) in zip(e.params, f.params):
            if k in sym:  # a size expression: evaluated per size, even if it did not move
                rule.append(("expr", sym[k]))
            elif _same(v1, v2):
                rule.append(_SAME)
            else:  # a param that moved without an expression: a size read unguarded
                return None
        rules.append(rule)
    return Template(p1, d1, axes, rules, consts, guards)


def _repeated_axes(a, b, d1, d2):
    """The axes along which constants ``a`` (size d1) and ``b`` (size d2) only repeat one
    slice, the same in both; None if they differ otherwise."""
    sa, sb = a.var.shape, b.var.shape
    if a.var.name != b.var.name or a.var.dtype != b.var.dtype or len(sa) != len(sb):
        return None
    along = {i for i, (s, t) in enumerate(zip(sa, sb)) if s != t}
    if not along or any((sa[i], sb[i]) != (d1, d2) for i in along):
        return None
    first = tuple(slice(0, 1) if i in along else slice(None) for i in range(len(sa)))
    va, vb = np.asarray(a.value), np.asarray(b.value)
    if not (np.array_equal(va, np.broadcast_to(va[first], sa))
            and np.array_equal(vb, np.broadcast_to(vb[first], sb))
            and np.array_equal(va[first], vb[first])):
        return None
    return along


def _same_layout(p1, p2):
    return (len(p1.inputs), len(p1.captures), len(p1.constants), len(p1.equations),
            [v.name for v in p1.outputs], [(i, v.name) for i, v in p1.updates]) == (
        len(p2.inputs), len(p2.captures), len(p2.constants), len(p2.equations),
        [v.name for v in p2.outputs], [(i, v.name) for i, v in p2.updates])


_SAME = ("same",)


def _same(v1, v2):
    if type(v1) is not type(v2):
        return False
    try:
        if isinstance(v1, np.ndarray):
            return np.array_equal(v1, v2)
        return bool(v1 == v2)
    except (TypeError, ValueError):
        return False


def varying_size(shapes1, shapes2):
    """``(d1, d2)`` if the two shape lists differ only in one size, else None."""
    pairs = {(s, t) for a, b in zip(shapes1, shapes2) for s, t in zip(a, b) if s != t}
    if len(shapes1) != len(shapes2) or any(len(a) != len(b) for a, b in zip(shapes1, shapes2)):
        return None
    return next(iter(pairs)) if len(pairs) == 1 else None
