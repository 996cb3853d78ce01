"""Shape templates: a program traced at two sizes of one dimension, reused for a third size
without running the Python function again (``reduce_retracing``, ``None`` dimensions).

Two traces of the same function at sizes d1 and d2 are compared equation by equation. They
must agree exactly, except for integer params that move with the size; each of those is
fitted as ``a * d + c`` with an integer ``a``. Anything else that differs — a constant (such
as the ``1 / d`` of a mean over that dimension), a structural change, a non-integer param —
means there is no template and the function is traced as usual. A new size is then filled in
and every shape is re-derived by the primitives' shape rules and checked, so a param that
does not really follow the fit (a reshape to ``d * d``, say) fails the check, and tracing
takes over: the template never produces a program that the checker would not accept.
"""
import numpy as np

from tapegrad.ir import Var


class Template:
    """How to rebuild ``program`` (traced at size ``d1``) for another size."""

    def __init__(self, program, d1, input_axes, rules, consts):
        self.program, self.d1 = program, d1
        self.input_axes = input_axes  # per input: the axes that carry the varying size
        self.rules = rules            # per equation: params rule (see _param_rule)
        self.consts = consts          # per constant: None, or the axes it is repeated along

    def instantiate(self, d):
        """The program for size ``d`` (IRError or ValueError if it is inconsistent)."""
        def input_shape(v, i):
            return tuple(d if j in self.input_axes[i] else s for j, s in enumerate(v.shape))

        def constant(c, i):
            along = self.consts[i]
            if along is None:
                return c
            # e.g. the seed rows of a batch Jacobian, one per example
            shape = tuple(d if j in along else s for j, s in enumerate(c.var.shape))
            one = c.value[tuple(slice(0, 1) if j in along else slice(None)
                                for j in range(c.value.ndim))]
            return type(c)(Var(c.var.name, shape, c.var.dtype), np.broadcast_to(one, shape))

        def params(i, e):
            return tuple((k, _apply(r, v, d)) for (k, v), r in zip(e.params, self.rules[i]))
        return rebuild(self.program, input_shape, constant, params,
                       lambda v, shape: Var(v.name, shape, v.dtype))


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


def learn(p1, d1, p2, d2):
    """A ``Template`` from two traces at sizes ``d1 != d2``, or None."""
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
    for e, f in zip(p1.equations, p2.equations):
        if e.prim is not f.prim or len(e.outs) != 1 or len(f.outs) != 1 \
                or [v.name for v in e.inputs] != [v.name for v in f.inputs] \
                or e.out.name != f.out.name or [k for k, _ in e.params] != [k for k, _ in f.params]:
            return None
        rule = []
        for (_, v1), (_, v2) in zip(e.params, f.params):
            r = _param_rule(v1, v2, d1, d2)
            if r is None:
                return None
            rule.append(r)
        rules.append(rule)
    return Template(p1, d1, axes, rules, consts)


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


def _param_rule(v1, v2, d1, d2):
    """``_SAME``, ``("lin", a, c)`` for an int ``a * d + c``, a tuple of rules, or None."""
    if type(v1) is not type(v2):
        return None
    if isinstance(v1, (int, np.integer)) and not isinstance(v1, (bool, np.bool_)):
        if v1 == v2:
            return _SAME
        a, rem = divmod(int(v2) - int(v1), d2 - d1)
        return None if rem else ("lin", a, int(v1) - a * d1)
    if type(v1) is tuple:
        if len(v1) != len(v2):
            return None
        rules = [_param_rule(a, b, d1, d2) for a, b in zip(v1, v2)]
        if any(r is None for r in rules):
            return None
        return _SAME if all(r is _SAME for r in rules) else ("tuple", rules)
    try:
        equal = bool(v1 == v2) if not isinstance(v1, np.ndarray) else np.array_equal(v1, v2)
    except (TypeError, ValueError):
        return None
    return _SAME if equal else None


def _apply(rule, v, d):
    if rule is _SAME:
        return v
    if rule[0] == "lin":
        return rule[1] * d + rule[2]
    return tuple(_apply(r, x, d) for r, x in zip(rule[1], v))


def varying_size(shapes1, shapes2):
    """``(d1, d2)`` if the two shape lists differ only in one size, else None."""
    pairs = {(s, t) for a, b in zip(shapes1, shapes2) for s, t in zip(a, b) if s != t}
    if len(shapes1) != len(shapes2) or any(len(a) != len(b) for a, b in zip(shapes1, shapes2)):
        return None
    return next(iter(pairs)) if len(pairs) == 1 else None
