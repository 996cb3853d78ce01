"""Optimisation passes. Each takes a ``Program`` and returns a new one with the same meaning.

"Same meaning" includes derivatives: the optimised program is also what an outer tape
differentiates (through the interpreter), so passes never remove ``stop_gradient``.
A pass returns the *same* ``Equation`` objects where it changes nothing, which is how
``optimize`` detects the fixed point cheaply.
"""
import numpy as np

from tapegrad.ir.checker import check as _check
from tapegrad.ir.core import Const, frozen_array
from tapegrad.util.keys import exact

FOLD_LIMIT = 1 << 16  # fold results up to this many elements (or no bigger than the inputs)


def dce(program):
    """Dead-code elimination: drop equations and constants no output or update needs.

    Inputs and captures stay, so the calling convention does not change.
    """
    live = {v.name for v in program.outputs}
    live.update(v.name for _, v in program.updates)
    keep = []
    for e in reversed(program.equations):
        if any(o.name in live for o in e.outs):
            keep.append(e)
            live.update(v.name for v in e.inputs)
    keep.reverse()
    consts = tuple(c for c in program.constants if c.var.name in live)
    if len(keep) == len(program.equations) and len(consts) == len(program.constants):
        return program
    return program.replace(equations=tuple(keep), constants=consts)


def cse(program):
    """Common-subexpression elimination: equal equations (and equal constants) computed once."""
    sub, seen_c, consts = {}, {}, []
    for c in program.constants:
        key = _const_key(c)
        if key in seen_c:
            sub[c.var.name] = seen_c[key]
        else:
            seen_c[key] = c.var
            consts.append(c)
    seen, eqs = {}, []
    for e in program.equations:
        e = substitute(e, sub)
        if e.prim.stateful:  # two random draws are two values
            eqs.append(e)
            continue
        try:
            key = (e.prim.name, tuple(v.name for v in e.inputs),
                   tuple((k, exact(v)) for k, v in e.params))
            hash(key)
        except TypeError:  # an unhashable param: never merged
            key = None
        prev = seen.get(key) if key is not None else None
        if prev is not None:
            for o, p in zip(e.outs, prev):
                sub[o.name] = p
            continue
        if key is not None:
            seen[key] = e.outs
        eqs.append(e)
    return rebuild(program, eqs, consts, sub)


def fold_constants(program):
    """Evaluate equations whose inputs are all constants, at compile time.

    Results that hold one repeated value are stored as zero-strided broadcasts, so folding
    ``zeros_like`` of a big tensor costs no memory.
    """
    values = {c.var.name: c.value for c in program.constants}
    consts, eqs = list(program.constants), []
    for e in program.equations:
        if len(e.outs) == 1 and not e.prim.stateful and all(v.name in values for v in e.inputs):
            val = _try_fold(e, values)
            if val is not None:
                values[e.out.name] = val
                consts.append(Const(e.out, val))
                continue
        eqs.append(e)
    if len(eqs) == len(program.equations):
        return program
    return program.replace(equations=tuple(eqs), constants=tuple(consts))


def _try_fold(e, values):
    out = e.out
    # a broadcast view (broadcast_to) costs no memory at any size
    view = e.prim.broadcast_view
    if not view and out.size > max(FOLD_LIMIT, sum(v.size for v in e.inputs)):
        return None
    try:
        val = np.asarray(e.prim.impl(*[values[v.name] for v in e.inputs], **dict(e.params)))
    except Exception:  # leave a failing equation for run time, where it raises properly
        return None
    if val.shape != out.shape:
        return None
    if val.dtype != out.dtype:
        val = val.astype(out.dtype)
    if view:
        return val if not val.flags.writeable else frozen_array(val)
    if val.ndim > 1 and not val.flags.c_contiguous and all(s != 0 for s in val.strides):
        # a folded transpose is a strided view; BLAS is up to 2x faster on a contiguous copy,
        # made once here instead of on every call
        val = np.ascontiguousarray(val)
    return compress(val)


def compress(val):
    """A read-only constant; a constant of one repeated value as a zero-strided broadcast."""
    if val.size > 1 and all(s != 0 for s in val.strides):
        first = val.reshape(-1)[0]
        if same_bits(val, first):
            return np.broadcast_to(np.array(first, dtype=val.dtype), val.shape)
    return frozen_array(val)


def same_bits(a, b):
    """Every element of ``a`` equals ``b`` (broadcast), the sign of zero included: a
    constant of 0.0 and -0.0 is not uniform (1 / x tells them apart). NaN never matches."""
    if not (a == b).all():
        return False
    if a.dtype.kind == "f":
        return bool((np.signbit(a) == np.signbit(b)).all())
    if a.dtype.kind == "c":
        b = np.asarray(b)
        return bool((np.signbit(a.real) == np.signbit(b.real)).all()
                    and (np.signbit(a.imag) == np.signbit(b.imag)).all())
    return True


def _const_key(c):
    v = c.value
    if v.size <= 4096:
        base = v.reshape(-1)[:1] if v.size and all(s == 0 for s in v.strides) else v
        return (c.var.dtype.str, c.var.shape, base.shape, np.ascontiguousarray(base).tobytes())
    return ("id", id(v))


def substitute(e, sub):
    """``e`` with its inputs renamed through ``sub`` (the same object if nothing changes)."""
    if not sub:
        return e
    ins = tuple(sub.get(v.name, v) for v in e.inputs)
    return e if all(a is b for a, b in zip(ins, e.inputs)) else e._replace(inputs=ins)


def rebuild(program, equations, constants, sub):
    """A program with new equations/constants and outputs/updates renamed through ``sub``."""
    outs = tuple(sub.get(v.name, v) for v in program.outputs)
    upds = tuple((i, sub.get(v.name, v)) for i, v in program.updates)
    if (len(equations) == len(program.equations) and len(constants) == len(program.constants)
            and all(a is b for a, b in zip(equations, program.equations))
            and all(a is b for a, b in zip(constants, program.constants))
            and outs == program.outputs and upds == program.updates):
        return program
    return program.replace(equations=tuple(equations), constants=tuple(constants),
                           outputs=outs, updates=upds)


def _same(p, q):
    return p is q


def default_passes():
    from tapegrad.ir.algebraic import simplify
    return (fold_constants, simplify, cse, dce)


def derivative_passes():
    """The passes for a program that tapes will differentiate: constant folding and DCE.

    Not the simplifier (``x * zeros`` to a constant turns a zero gradient into an
    unconnected one) nor CSE: merging two equal values makes one value used twice, so the
    reverse pass sums the two cotangents before the operation's rule (``a * (g1 + g2)``)
    where eager execution, which computed it twice, sums after (``a * g1 + a * g2``):
    other bits.
    """
    return (fold_constants, dce)


def optimize(program, passes=None, *, check=False, max_rounds=50):
    """Run ``passes`` (default: fold, simplify, CSE, DCE) until nothing changes.

    With ``check=True`` the checker validates the program after every pass (the tests do).

    >>> import numpy as np
    >>> from tapegrad.ir import Var, Equation, Program, optimize
    >>> from tapegrad.core.dispatch import PRIMITIVES
    >>> f32 = np.dtype("float32")
    >>> x, a, b = Var("x", (2,), f32), Var("a", (2,), f32), Var("b", (2,), f32)
    >>> neg = PRIMITIVES["neg"]
    >>> p = Program((x,), (), (), (Equation(neg, (x,), (), (a,)),
    ...                           Equation(neg, (a,), (), (b,))), (b,))
    >>> optimize(p).equations, optimize(p).outputs
    ((), (x:f32[2],))
    """
    passes = default_passes() if passes is None else passes
    for _ in range(max_rounds):
        changed = False
        for p in passes:
            new = p(program)
            if check:
                _check(new)
            changed |= not _same(new, program)
            program = new
        if not changed:
            break
    return program
