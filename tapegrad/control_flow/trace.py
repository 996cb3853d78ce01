"""Tracing helpers of ``cond`` and ``while_loop``: functions become IR sub-programs.

A sub-program takes its explicit arguments first (a loop's variables, a rule's values), then
one input per *outer* value the traced function used: symbolic tensors of an enclosing trace,
vmap-batched tensors and captured ``tf.Variable`` s. The caller passes those outer values as
extra operands of the primitive, so tapes, tracers and vmap see them like any other input.

Bundling: primitives have one output, so a function's outputs are grouped by dtype
(``dtype_groups``) and each group is flattened and concatenated (``pack``; one tensor alone
is kept as it is). ``unpack`` splits a group again. Both are ordinary tapegrad ops, so
gradients flow through them. ``lead`` leading axes (a batch, or a loop's history) are kept.
"""
import numpy as np

from tapegrad.trace.tracer import GraphBuilder, tracing
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, Variable, convert_to_tensor
from tapegrad.ir import NameGen, Var, dce
from tapegrad.primitives.api import concat, reshape
from tapegrad.util import nest


class SubTracer(GraphBuilder):
    """A ``GraphBuilder`` that turns every outside value without a value of its own into an
    extra input (``outer``), instead of refusing it or baking it in.

    With ``lift_concrete`` (a tape or accumulator is active) concrete floating tensors from
    outside become inputs too: a tape watching one of them must see the dependence.
    """

    def __init__(self, name, lift_concrete=False):
        super().__init__(name)
        self.outer = {}  # id(tensor) -> (tensor, Var); the tensor is kept alive
        self.lift_concrete = lift_concrete

    def var_of(self, t):
        if getattr(t, "_builder", None) is not self and (
                getattr(t, "_symbolic", False)
                or (self.lift_concrete and t.dtype.kind in "fc")):
            hit = self.outer.get(id(t))
            if hit is None:
                v = Var(self.names("l"), tuple(int(s) for s in t.shape), np.dtype(t.dtype))
                hit = self.outer[id(t)] = (t, v)
            return hit[1]
        return super().var_of(t)


def _as_tensor(x):
    if type(x) is Variable:
        return x.read_value()
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def trace(fn, in_types, name, bundle=False, lift_concrete=None, updates=False):
    """Trace ``fn`` on symbolic arguments of ``in_types``.

    Returns ``(program, extras, tree, flat)``: the program (explicit inputs, then one per
    extra), the outer values to pass for the extra inputs, ``fn``'s result and its leaves.
    With ``bundle`` the program's outputs are the dtype groups of the leaves, packed.
    ``lift_concrete`` defaults to "a tape or accumulator is active"; the rules pass False
    for programs that are pure functions of their inputs (and so can be cached).
    With ``updates``, ``tf.Variable`` s that ``fn`` assigns are allowed: a fifth value lists
    them, and the program has one more output per variable, its value at the end.
    """
    if lift_concrete is None:
        lift_concrete = bool(STATE.stack.recorders)
    b = SubTracer(name, lift_concrete=lift_concrete)
    with tracing(b):
        xs = [b.add_input(s, d, f"x{i}") for i, (s, d) in enumerate(in_types)]
        tree = fn(*xs)
        flat = [_as_tensor(x) for x in nest.flatten(tree)]
        outs = flat
        if bundle:
            outs = [pack([flat[i] for i in idx])
                    for idx in dtype_groups([(t.shape, t.dtype) for t in flat])]
        prog = b.build(outs)
    assigned = [b.variables[i] for i, _ in prog.updates]
    if prog.updates and updates:
        prog = prog.replace(outputs=prog.outputs + tuple(v for _, v in prog.updates),
                            updates=())
    if prog.updates:
        raise NotImplementedError(
            f"Assigning a tf.Variable (or calling tf.print) inside {name} is not supported "
            "here; return the new value and assign it after it.")
    extras = [t for t, _ in b.outer.values()] + list(b.variables)
    inputs = prog.inputs + tuple(v for _, v in b.outer.values()) + prog.captures
    prog = prog.replace(inputs=inputs, captures=())
    return (prog, extras, tree, flat, assigned) if updates else (prog, extras, tree, flat)


def union(*lists):
    """The values of several ``extras`` lists, each once (by identity), in order."""
    seen, out = set(), []
    for values in lists:
        for e in values:
            if id(e) not in seen:
                seen.add(id(e))
                out.append(e)
    return out


def align(program, n, extras, everything):
    """``program`` taking one input per value of ``everything`` after its first ``n``; the
    values it does not use get unused inputs (so sibling programs share one operand list)."""
    own = {id(e): v for e, v in zip(extras, program.inputs[n:])}
    names = NameGen(program.all_names())
    ins = list(program.inputs[:n])
    for e in everything:
        v = own.get(id(e))
        ins.append(v if v is not None else Var(names("u"), tuple(int(s) for s in e.shape),
                                                  np.dtype(e.dtype)))
    return program.replace(inputs=tuple(ins))


def passing(program, n, extras, mine, assigned, k):
    """A branch whose outputs after its first ``k`` are the values it gave the variables
    ``mine`` (in order): now one per variable of ``assigned``, the variable's input (its
    value before the branch) where this branch does not assign it."""
    done = {id(v): o for v, o in zip(mine, program.outputs[k:])}
    at = {id(e): program.inputs[n + j] for j, e in enumerate(extras)}
    return program.replace(outputs=program.outputs[:k] + tuple(
        done.get(id(v), at[id(v)]) for v in assigned))


def carried(cond, body, n, extras, assigned):
    """A loop whose body assigns the variables ``assigned`` (its last outputs, in order),
    made into one whose loop variables are its ``n`` and then those variables' values: the
    variables' inputs move from the extras to the state. Returns ``(cond, body, extras)``."""
    moved = [next(k for k, e in enumerate(extras) if e is v) for v in assigned]
    rest = [k for k in range(len(extras)) if k not in moved]

    def order(p):
        ins = p.inputs
        return ins[:n] + tuple(ins[n + k] for k in moved) + tuple(ins[n + k] for k in rest)
    return (cond.replace(inputs=order(cond)), body.replace(inputs=order(body)),
            [extras[k] for k in rest])


def outer_value(e):
    """The operand for an extra input (a variable is read now, where the primitive runs)."""
    return e.read_value() if type(e) is Variable else e


def select(program, idx):
    """``program`` computing only its outputs ``idx``."""
    return dce(program.replace(outputs=tuple(program.outputs[i] for i in idx)))


def dtype_groups(types):
    """Indices of ``types`` (``(shape, dtype)`` pairs) grouped by dtype, in first-seen order."""
    groups = {}
    for i, (_, d) in enumerate(types):
        groups.setdefault(np.dtype(d), []).append(i)
    return list(groups.values())


def _size(shape):
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def pack(vals, lead=0):
    """One tensor of ``vals`` (one dtype): each flattened after ``lead`` axes, concatenated."""
    if len(vals) == 1:
        return vals[0]
    return concat([reshape(v, tuple(v.shape[:lead]) + (_size(v.shape[lead:]),))
                     for v in vals], axis=lead)


def unpack(packed, types, lead=0):
    """Invert ``pack``: the tensors of ``types`` (``(shape, dtype)`` without ``lead`` axes)."""
    if len(types) == 1:
        return [packed]
    head, out, start = tuple(packed.shape[:lead]), [], 0
    for shape, _ in types:
        n = _size(shape)
        piece = packed[(slice(None),) * lead + (slice(start, start + n),)]
        out.append(reshape(piece, head + tuple(shape)))
        start += n
    return out


# -- loops ------------------------------------------------------------------------------------------
def input_deps(program):
    """For each output, the indices of the inputs it depends on."""
    deps = {v.name: {i} for i, v in enumerate(program.inputs)}
    for e in program.equations:
        d = set().union(*[deps.get(v.name, ()) for v in e.inputs])
        for o in e.outs:
            deps[o.name] = d
    return [deps.get(v.name, set()) for v in program.outputs]


def reduced(cond, body, n, group):
    """The loop variables ``group`` needs (itself, the condition's, and what those need in
    the body, to a fixed point), and the condition and body restricted to them."""
    from tapegrad.control_flow.primitives import Subprogram
    deps = input_deps(body.program)
    need = set(group) | {i for i in input_deps(cond.program)[0] if i < n}
    while True:
        more = need.union(*[{j for j in deps[i] if j < n} for i in need])
        if more == need:
            break
        need = more
    keep = sorted(need)
    if len(keep) == n:
        return keep, cond, body
    key = ("reduce", cond, tuple(keep))
    hit = body.derived.get(key)
    if hit is None:
        def cut(p, outs):
            return dce(p.replace(inputs=tuple(p.inputs[i] for i in keep) + p.inputs[n:],
                                 outputs=outs))
        hit = body.derived[key] = (
            Subprogram(cut(cond.program, cond.program.outputs)),
            Subprogram(cut(body.program, tuple(body.program.outputs[i] for i in keep))))
    return (keep,) + hit


def run_loop(init, consts, cond, body, n_max, want=None):
    """Run a staged loop; the final values of loop variables ``want`` (others None).

    One ``while_loop`` equation per dtype group of ``want``, each carrying only the loop
    variables that group depends on.
    """
    from tapegrad.control_flow.primitives import while_p
    n = len(init)
    want = list(range(n)) if want is None else list(want)
    types = [(tuple(x.shape), x.dtype) for x in init]
    res = [None] * n
    for idx in dtype_groups([types[i] for i in want]):
        group = [want[i] for i in idx]
        keep, c, b = reduced(cond, body, n, group)
        packed = while_p.bind_raw(*[init[i] for i in keep], *consts, cond=c, body=b,
                                  n_state=len(keep), maximum_iterations=n_max,
                                  out=tuple(keep.index(i) for i in group), history=False)
        for i, v in zip(group, unpack(packed, [types[i] for i in group])):
            res[i] = v
    return res
