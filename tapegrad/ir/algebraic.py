"""Algebraic simplification: each equation's primitive rewrites it by its own identities
(``Primitive.identities``, written in ``primitives/identities.py``: ``x*1``, ``--x``,
transpose of a transpose, ...), and two rewrites hold for every elementwise operation of
several inputs (``Primitive.elementwise``): it moves inside a broadcast (or drops it, where
another operand is as large), and a constant holding one repeated value becomes a scalar
where the operation broadcasts it anyway (cheaper, and the generated code shows the number).

Every rewrite produces a value of exactly the type (shape and dtype) of the one it replaces,
and is exact for every IEEE input, NaN, inf, -0.0 and subnormals included: the compiled
program computes bit for bit what the interpreter does (``primitives/identities.py`` says
which identities that rules out).
"""
import numpy as np

from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.ir.core import Const, Equation, NameGen, Var, make_params
from tapegrad.ir.passes import rebuild, same_bits, substitute


class _Ctx:
    """What a rule may look at (constants, producers) and create (variables, constants)."""

    def __init__(self, program):
        self.values = {c.var.name: c.value for c in program.constants}
        self.producer = {}
        self.names = NameGen(program.all_names())
        self.new_consts = []
        self._uniform = {}

    def uniform(self, v):
        """The single value held by constant ``v``, or None."""
        if v.name in self._uniform:
            return self._uniform[v.name]
        a = self.values.get(v.name)
        u = None
        if a is not None and a.size:
            first = a.reshape(-1)[0]
            if all(s == 0 for s in a.strides) or a.size == 1 or (
                    a.size <= 1 << 20 and same_bits(a, first)):
                u = first
        self._uniform[v.name] = u
        return u

    def is_const(self, v, value):
        u = self.uniform(v)
        return u is not None and u == value

    def is_zero(self, v, negative):
        """True if constant ``v`` is all zeros of the given sign (-0.0 for ``negative``);
        for integer and bool constants ``negative`` does not matter."""
        u = self.uniform(v)
        if u is None or u != 0:
            return False
        if v.dtype.kind not in "fc":
            return True
        parts = (u.real, u.imag) if v.dtype.kind == "c" else (u,)
        return all(bool(np.signbit(p)) == negative for p in parts)

    def prod(self, v, name):
        """The equation producing ``v`` if its primitive is ``name``."""
        e = self.producer.get(v.name)
        return e if e is not None and e.prim.name == name else None

    def eqn(self, prim, inputs, out_shape, out_dtype, **params):
        out = Var(self.names("s"), tuple(out_shape), np.dtype(out_dtype))
        return Equation(PRIMITIVES[prim], tuple(inputs), make_params(params), (out,))

    def const(self, value):
        value = np.asarray(value)
        value.flags.writeable = False
        var = Var(self.names("c"), value.shape, value.dtype)
        self.new_consts.append(Const(var, value))
        self.values[var.name] = value
        return var


def simplify(program):
    """Apply the algebraic rules once over the program (``optimize`` iterates)."""
    ctx = _Ctx(program)
    sub, eqs = {}, []
    origins = dict(program.origins)
    inherited = []  # (new value, Origin): a rewrite's equations come from the user's line
    for e in program.equations:
        e = _scalarize(substitute(e, sub), ctx)
        res = _rewrite(e, ctx) if len(e.outs) == 1 else None
        if res is None:
            eqs.append(e)
            ctx.producer[e.out.name] = e
            continue
        new_eqs, var = res
        if (var.shape, var.dtype) != (e.out.shape, e.out.dtype):  # a rule bug: do not apply
            raise AssertionError(f"simplify changed the type of {e.out!r} to {var!r}")
        origin = origins.get(e.out.name)
        for ne in new_eqs:
            eqs.append(ne)
            ctx.producer[ne.out.name] = ne
            if origin is not None and ne.out.name not in origins:
                inherited.append((ne.out.name, origin._replace(name="")))
        sub[e.out.name] = var
    consts = list(program.constants) + ctx.new_consts
    out = rebuild(program, eqs, consts, sub)
    if inherited:
        out = out.replace(origins=tuple(program.origins) + tuple(inherited))
    return out


def _rewrite(e, ctx):
    rule = e.prim.identities
    res = rule(e, ctx, e.out, *e.inputs) if rule is not None else None
    return res if res is not None else _sink_broadcast(e, ctx)


def _broadcasting(e):
    """An elementwise operation of several inputs (they broadcast against each other)."""
    return e.prim.elementwise and len(e.inputs) > 1 and len(e.outs) == 1


def _spread(v, ctx):
    """``z`` if ``v`` only spreads a smaller value: ``broadcast_to(z)``, or a reshape of a
    one-element ``z`` (a loss's scalar cotangent made (1, 1)); else None."""
    b = ctx.prod(v, "broadcast_to")
    if b is None:
        b = ctx.prod(v, "reshape")
        if b is None or b.inputs[0].size != 1 or v.size != 1 or v.ndim < b.inputs[0].ndim:
            return None
    return b.inputs[0]


def _sink_broadcast(e, ctx):
    """``op(broadcast_to(z), c)`` -> ``broadcast_to(op(z, c))`` where nothing else is as large:
    the operation runs on the small value (the scalar cotangent of a loss times 2/N, say), and
    the broadcast usually vanishes against a full-size operand later (``_scalarize``)."""
    if not _broadcasting(e):
        return None
    ins = [_spread(v, ctx) or v for v in e.inputs]
    if ins == list(e.inputs):
        return None
    try:
        small = tuple(np.broadcast_shapes(*[v.shape for v in ins]))
        shape, dtype = e.prim.abstract(*ins, **dict(e.params))
    except (ValueError, TypeError):
        return None
    if small == e.out.shape or tuple(shape) != small or np.dtype(dtype) != e.out.dtype \
            or len(small) > e.out.ndim:
        return None
    inner = Equation(e.prim, tuple(ins), e.params, (Var(ctx.names("s"), small, e.out.dtype),))
    outer = ctx.eqn("broadcast_to", [inner.out], e.out.shape, e.out.dtype, shape=e.out.shape)
    return [inner, outer], outer.out


def _compressed(a):
    """``a`` with every axis along which it does not vary shrunk to size 1 (or None)."""
    if a.ndim == 0 or a.size > 1 << 24:
        return None
    out = a
    for ax in range(a.ndim):
        if out.shape[ax] > 1:
            first = out.take([0], axis=ax)
            if same_bits(out, first):
                out = first
    return None if out.shape == a.shape else np.ascontiguousarray(out)


def _scalarize(e, ctx):
    """``e`` with constant inputs shrunk where broadcasting makes up for it: uniform ones
    become 0-d, and ones that repeat along an axis keep a single slice there (the basis
    rows of a vectorized Jacobian folded through a weight matrix, say: far less memory to read)."""
    if not _broadcasting(e):
        return e
    ins = list(e.inputs)
    for i, v in enumerate(ins):
        if v.ndim == 0:
            continue
        others = [w.shape for j, w in enumerate(ins) if j != i]
        if not others:
            continue
        z = _spread(v, ctx)
        if z is not None and z.dtype == v.dtype and tuple(
                np.broadcast_shapes(z.shape, *others)) == e.out.shape:
            ins[i] = z  # the other operands are as large: NumPy broadcasts z itself
            continue
        if ctx.uniform(v) is not None:
            if tuple(np.broadcast_shapes(*others)) == e.out.shape:
                ins[i] = ctx.const(np.array(ctx.uniform(v), v.dtype))
            continue
        a = ctx.values.get(v.name)
        small = None if a is None else _compressed(a)
        if small is not None and tuple(np.broadcast_shapes(small.shape, *others)) == e.out.shape:
            ins[i] = ctx.const(small)
    return e if ins == list(e.inputs) else e._replace(inputs=tuple(ins))
