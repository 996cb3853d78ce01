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

from tapegrad.core import hooks
from tapegrad.sparsity.dependencies import TooLarge, apply_rule
from tapegrad.tape.structure import structure

LIMIT = 1 << 24  # dependency booleans one equation may produce (n times its output size)


def propagate(equations, source, n, limit=LIMIT, values=False):
    """Dependencies of every value; ``equations`` yield ``(prim, in_keys, ins, vals, params,
    out_keys, outs)`` and ``source`` is the key of the input whose elements are counted.
    ``values=True``: what each value can depend on, not only its derivative
    (``rules.apply_rule``).

    Returns ``{key: deps}`` (absent: depends on nothing). Raises ``TooLarge`` past ``limit``.
    """
    env = {source[0]: source[1]}
    for prim, in_keys, ins, vals, params, out_keys, outs in equations:
        deps = [env.get(k) for k in in_keys]
        for k, d in zip(out_keys, apply_rule(prim, deps, ins, vals, params, outs, n, limit,
                                             values)):
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
    if getattr(a, "_symbolic", False) or getattr(a, "_level", 0):
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


# -- are the examples of a batch independent? ---------------------------------------------
def _example_codes(b):
    """``(n, b)`` booleans: example ``e`` is the set ``{2k + bit k of e}``.

    No code contains another, so an element that depends on any example besides its own has
    a dependency outside its own code: ``2 ceil(log2 b)`` dependency rows decide exactly
    (structurally) what ``b`` rows, one per example, would.
    """
    m = max(1, math.ceil(math.log2(b)))
    bits = (np.arange(b)[None, :] >> np.arange(m)[:, None]) & 1
    return np.stack([bits == 0, bits == 1], axis=1).reshape(2 * m, b)


def batch_coupled(entries, source, target, limit=LIMIT):
    """Whether element ``[b', ...]`` of ``target`` can depend on example ``b != b'`` of
    ``source`` (both with the batch as axis 0) through the tape ``entries``.

    True or False (structurally: ``x * 0.0`` still couples), or None when the dependency
    arrays would exceed ``limit`` or the sizes are symbolic (``trace/symbolic.py``). The answer is cached per structure (``fingerprint``), so
    a training loop or a trace pays for the propagation once.
    """
    if _symbolic_sizes(entries, source):
        # a trace for all sizes: reading the sizes here would bind the program to this one
        return None
    b = source.shape[0]
    if b <= 1:
        return False
    key = (fingerprint(entries, source), _position(entries, target), tuple(target.shape))
    try:
        return _COUPLED[key]
    except (KeyError, TypeError):
        pass
    codes = _example_codes(b)
    n = codes.shape[0]
    shape = tuple(source.shape)
    deps = np.ascontiguousarray(np.broadcast_to(
        codes.reshape((n, b) + (1,) * (len(shape) - 1)), (n,) + shape))
    try:
        env = propagate(_tape_equations(entries), (id(source), deps), n, limit)
    except TooLarge:
        verdict = None
    else:
        d = env.get(id(target))
        verdict = d is not None and bool(np.any(
            np.asarray(d).reshape(n, b, -1).any(axis=2) & ~codes))
    if len(_COUPLED) >= 256:  # endless structures: forget
        _COUPLED.clear()
    try:
        _COUPLED[key] = verdict
    except TypeError:
        pass
    return verdict


_COUPLED = {}


def program_batch_coupled(program, limit=LIMIT):
    """Whether some output row ``b'`` of an IR ``Program`` can depend on row ``b != b'`` of
    some input, every input and output carrying the batch along axis 0 (the question a
    chunked evaluation must ask: chunk by chunk, a coupled program computes other numbers).

    The question is about values, not derivatives: a comparison with the batch's mean
    couples too. True or False (structurally), or None when the dependency arrays would
    exceed ``limit``.

    >>> import tapegrad as tf
    >>> spec = [tf.TensorSpec([4, 3], tf.float64)]
    >>> prog = lambda f: tf.function(f).get_concrete_function(*spec).program
    >>> program_batch_coupled(prog(lambda x: tf.tanh(x) * 2.0))
    False
    >>> program_batch_coupled(prog(lambda x: x - tf.reduce_mean(x, axis=0)))
    True
    >>> program_batch_coupled(prog(lambda x: tf.cast(x > tf.reduce_mean(x), tf.float64)))
    True
    """
    rows = {v.shape[0] for v in tuple(program.inputs) + tuple(program.outputs) if v.shape}
    if len(rows) != 1:
        raise ValueError("program_batch_coupled: every input and output needs the same "
                         f"batch length along axis 0, found {sorted(rows)}")
    (b,) = rows
    if b <= 1:
        return False
    codes = _example_codes(b)
    n = codes.shape[0]
    for x in program.inputs:
        deps = np.ascontiguousarray(np.broadcast_to(
            codes.reshape((n, b) + (1,) * (len(x.shape) - 1)), (n,) + tuple(x.shape)))
        try:
            env = propagate(_program_equations(program), (x.name, deps), n, limit,
                            values=True)
        except TooLarge:
            return None
        for y in program.outputs:
            d = env.get(y.name)
            if d is not None and np.any(np.asarray(d).reshape(n, b, -1).any(axis=2) & ~codes):
                return True
    return False


def _symbolic_sizes(entries, source):
    if not getattr(source, "_symbolic", False):
        return False
    shapes = [source.shape] + [o.shape for e in entries
                               for o in (e[3] if isinstance(e[3], (tuple, list)) else (e[3],))]
    return any(type(d) is not int for s in shapes for d in s)


def _position(entries, t):
    for k in range(len(entries) - 1, -1, -1):
        out = entries[k][3]
        if out is t or (isinstance(out, (tuple, list)) and any(o is t for o in out)):
            return k
    return -1


# -- reuse ---------------------------------------------------------------------------------
# the kinds whose rules read the values of integer operands (indices): those join the key
_READS_INDICES = frozenset({"copy", "copy_along_axis", "scatter", "scatter_along_axis"})


def fingerprint(entries, source):
    """A hashable key that is equal for two tapes exactly when the dependency rules would see
    the same equations (primitives, params, shapes, data flow): then their patterns agree.

    It is the tape's structure (``tape/structure.py``) with the leaves' and outputs' shapes
    and dtypes, where the source sits, and the index values the rules read.
    Data-dependent Python control flow in ``f`` gives different keys, never a stale pattern.
    """
    parts, leaves, where = structure(entries, len(entries))
    key = [tuple(source.shape), where.get(id(source))]
    key += parts
    key += [(tuple(a.shape), a.dtype) for a in leaves]
    for prim, args, _params, out in entries:
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        item = tuple((tuple(o.shape), o.dtype) for o in outs)
        if prim.sparsity in _READS_INDICES:
            item += tuple(None if c is None or c.dtype.kind in "fc" else (c.dtype.str, c.tobytes())
                          for c in map(_concrete, args))
        key.append(item)
    key = tuple(key)
    try:
        hash(key)
    except TypeError:  # a list-valued param: its repr is just as exact
        key = repr(key)
    return key


hooks.install(batch_coupling=batch_coupled)
