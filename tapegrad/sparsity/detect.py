"""Structural sparsity detection: run the dependency rules over a tape or an IR program.

Both sources are straight-line lists of ``prim(*inputs, **params) -> outputs``; each becomes
an equation of the interpreter ``propagate``. The result for a target of shape ``t`` and a
source of ``n`` elements is the boolean pattern ``P`` of shape ``(size(t), n)``:
``P[i, j]`` is False only when element ``i`` of the target cannot depend on input ``j``.

>>> import numpy as np, tapegrad as tf
>>> from tapegrad.ir import Var, Equation, Program
>>> from tapegrad.core.dispatch import PRIMITIVES
>>> x, y = Var("x", (3,), np.dtype("float64")), Var("y", (3,), np.dtype("float64"))
>>> p = Program((x,), (), (), (Equation(PRIMITIVES["exp"], (x,), (), (y,)),), (y,))
>>> program_pattern(p).astype(int).tolist()
[[1, 0, 0], [0, 1, 0], [0, 0, 1]]
"""
import math

import numpy as np

from tapegrad.sparsity.rules import TooLarge, apply_rule

LIMIT = 1 << 24  # dependency booleans one equation may produce (n times its output size)


def propagate(equations, source, n, limit=LIMIT):
    """Dependencies of every value; ``equations`` yield ``(prim, in_keys, ins, vals, params,
    out_keys, outs)`` and ``source`` is the key of the input whose elements are counted.

    Returns ``{key: deps}`` (absent: depends on nothing). Raises ``TooLarge`` past ``limit``.
    """
    env = {source[0]: source[1]}
    for prim, in_keys, ins, vals, params, out_keys, outs in equations:
        deps = [env.get(k) for k in in_keys]
        for k, d in zip(out_keys, apply_rule(prim, deps, ins, vals, params, outs, n, limit)):
            if d is not None:
                env[k] = d
    return env


def _identity_deps(shape):
    n = math.prod(shape)
    return np.eye(n, dtype=bool).reshape((n,) + tuple(shape))


def _as_pattern(d, n, target_shape):
    m = math.prod(target_shape)
    if d is None:
        return np.zeros((m, n), bool)
    return np.ascontiguousarray(np.asarray(d).reshape(n, m).T)


# -- tapes -------------------------------------------------------------------------------
def _concrete(a):
    if getattr(a, "_symbolic", False) or hasattr(a, "_level"):
        return None
    return a._value


def _tape_equations(entries):
    for prim, args, params, out in entries:
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        yield (prim, [id(a) for a in args], args, [_concrete(a) for a in args], params,
               [id(o) for o in outs], outs)


def tape_pattern(entries, source, target, limit=LIMIT):
    """Pattern ``(size(target), size(source))`` of ``d target / d source`` over tape entries.

    ``entries`` are ``(prim, args, params, out)`` records (a tape's, or a ``_Path``'s);
    returns None when the dependency arrays would exceed ``limit``.
    """
    shape = tuple(source.shape)
    n = math.prod(shape)
    try:
        env = propagate(_tape_equations(entries), (id(source), _identity_deps(shape)), n,
                        limit)
    except TooLarge:
        return None
    return _as_pattern(env.get(id(target)), n, tuple(target.shape))


# -- IR programs ---------------------------------------------------------------------------
def _program_equations(program):
    consts = program.const_values()
    for e in program.equations:
        yield (e.prim, [v.name for v in e.inputs], e.inputs,
               [consts.get(v.name) for v in e.inputs], e.kwargs, [v.name for v in e.outs],
               e.outs)


def program_pattern(program, wrt=0, output=0, limit=LIMIT):
    """Pattern of ``d outputs[output] / d inputs[wrt]`` of an IR ``Program`` (None if too large).

    For the Hessian pattern of ``f``, pass the program of ``grad(f)`` (e.g. from
    ``tapegrad.function(tapegrad.grad(f)).get_concrete_function(x).program``).
    """
    x = program.inputs[wrt]
    y = program.outputs[output]
    try:
        env = propagate(_program_equations(program), (x.name, _identity_deps(x.shape)),
                        x.size, limit)
    except TooLarge:
        return None
    return _as_pattern(env.get(y.name), x.size, y.shape)


# -- reuse ---------------------------------------------------------------------------------
_VALUE_RULES = ("take", "take_add")  # rules that read index values: they join the key


def fingerprint(entries, source):
    """A hashable key that is equal for two tapes exactly when the dependency rules would see
    the same equations (primitives, params, shapes, data flow): then their patterns agree.

    Data-dependent Python control flow in ``f`` gives different keys, never a stale pattern.
    """
    pos = {id(source): -1}
    key = [tuple(source.shape)]
    for k, (prim, args, params, out) in enumerate(entries):
        ins = tuple(pos.get(id(a)) for a in args)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        item = (prim.name, ins, tuple(params.items()), tuple((tuple(o.shape), o.dtype) for o in outs))
        if prim.name in _VALUE_RULES:
            item += tuple(None if c is None else (c.dtype.str, c.tobytes())
                          for c in map(_concrete, args))
        key.append(item)
        for o in outs:
            pos[id(o)] = k
    key = tuple(key)
    try:
        hash(key)
    except TypeError:  # a list-valued param: its repr is just as exact
        key = repr(key)
    return key
