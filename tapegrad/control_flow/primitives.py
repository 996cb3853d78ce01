"""Control-flow primitives, whose params hold traced IR sub-programs (``Subprogram``).

``cond(pred, *operands; true_branch, false_branch)``
    Runs one branch on the operands; each branch has one output (outputs are bundled by
    dtype in ``tapegrad.control_flow.ops``).

``while_loop(*state, *consts; cond, body, n_state, maximum_iterations, out, history)``
    ``state`` (the first ``n_state`` operands) is replaced by ``body(*state, *consts)`` while
    ``cond(*state, *consts)`` holds and fewer than ``maximum_iterations`` (None: no bound)
    iterations ran. The output is loop variables ``out`` (one dtype) bundled; with
    ``history`` it is stacked over the iterations: row k holds them before iteration k, or
    their final values once the loop has stopped (shape ``(maximum_iterations, ...)``).

Derivatives. ``cond``: the JVP and VJP are ``cond`` s of the branches' JVPs and VJPs.
``while_loop`` forward mode: one loop carries the state and its tangents. Reverse mode
(stacked residuals): the ``history`` of every loop variable is recorded (one equation per
dtype), then a reverse loop of exactly ``maximum_iterations`` steps walks it backwards,
applying the body's VJP where the iteration ran (``cond`` held at that saved state) and
passing the cotangent through where it did not. That loop has a bound too, so it
differentiates again. Without ``maximum_iterations`` the trip count is measured first when
the values are concrete (a compiled function differentiated from outside); inside a trace
(or vmap) it is computed by the program, and each iteration's state is recomputed from the
initial one instead of saved (quadratic time, the same values). Every derived program is traced once and cached on its
``Subprogram``. Batching: a per-example ``cond`` computes both branches and selects; a
batched loop runs until every example is done, finished examples masked with ``where``.
"""
import numpy as np

from tapegrad.primitives.api import (broadcast_to, convert_to_tensor, expand_dims, identity,
                                     reshape, transpose, where, zeros_like)
from tapegrad.core.dispatch import Primitive
from tapegrad.ir import IRError, Program, check, evaluate, optimize


class Subprogram:
    """An IR program held as a param of a control-flow equation (compared by identity).

    It takes every value as an input (no captures, no updates). Calling it runs the program's
    generated NumPy code, compiled on first use. ``derived`` caches the programs that the
    rules build from it (its JVP, its reverse loop, its batched form).
    """

    __slots__ = ("program", "derived", "_fn")

    def __init__(self, program):
        if not isinstance(program, Program):
            raise IRError(f"a sub-program must be a Program, got {type(program).__name__}")
        if program.captures or program.updates:
            raise IRError("a sub-program takes every value as an input: no captures or updates")
        self.program = check(program)
        self.derived = {}
        self._fn = None

    @property
    def in_types(self):
        return [(v.shape, v.dtype) for v in self.program.inputs]

    @property
    def out_types(self):
        return [(v.shape, v.dtype) for v in self.program.outputs]

    def __call__(self, *arrays):
        """NumPy arrays in, a tuple of NumPy arrays out."""
        if self._fn is None:
            from tapegrad.trace.codegen import compile_program
            self._fn = compile_program(self.program)[0]
        r = self._fn(*arrays)
        return r if len(self.program.outputs) > 1 else (r,)

    def __repr__(self):
        return f"{{{self.program.name}:{len(self.program.equations)}eqns}}"


def make_subprogram(program):
    """A ``Subprogram`` of ``program``, optimised (sub-programs are optimised once, here)."""
    return Subprogram(optimize(program))


def _types(vals):
    return [(tuple(int(s) for s in v.shape), np.dtype(v.dtype)) for v in vals]


def _fmt(types):
    return "(" + ", ".join(f"{d.name}{list(s)}" for s, d in types) + ")"


def _check_sub(sub, what, avals):
    if not isinstance(sub, Subprogram):
        raise TypeError(f"{what} must be a sub-program, got {type(sub).__name__}")
    if _types(avals) != sub.in_types:
        raise ValueError(f"{what} takes {_fmt(sub.in_types)}, got {_fmt(_types(avals))}")


def _distinct(xs):
    """``xs`` as distinct tensor objects: tapes identify tensors by id."""
    seen, out = set(), []
    for x in xs:
        out.append(identity(x) if id(x) in seen else x)
        seen.add(id(x))
    return out


def _zeros_for(c, like):
    return c if c is not None else zeros_like(like)


# ---- cond -----------------------------------------------------------------------------------
def _cond(pred, *operands, true_branch, false_branch):
    return (true_branch if pred else false_branch)(*operands)[0]


def _cond_validate(pred, *ops, true_branch, false_branch):
    if _types([pred]) != [((), np.dtype(bool))]:
        raise ValueError(f"cond: the predicate must be bool[], got {_fmt(_types([pred]))}")
    _check_sub(true_branch, "true_branch", ops)
    _check_sub(false_branch, "false_branch", ops)


def _cond_abstract(pred, *ops, true_branch, false_branch):
    _cond_validate(pred, *ops, true_branch=true_branch, false_branch=false_branch)
    t, f = true_branch.out_types, false_branch.out_types
    if len(t) != 1 or t != f:
        raise ValueError(f"cond: the branches must have one output of one type, got {_fmt(t)} "
                         f"and {_fmt(f)}")
    return t[0]


def _branch_vjp(branch, operands, idx, g):
    from tapegrad.tape.gradient_tape import GradientTape
    xs = _distinct(operands)
    with GradientTape() as tape:
        for i in idx:
            tape.watch(xs[i])
        (y,), _ = evaluate(branch.program, xs)
    cts = tape.gradient(y, [xs[i] for i in idx], output_gradients=g)
    return [_zeros_for(c, xs[i]) for c, i in zip(cts, idx)]


def _cond_vjp(g, ans, pred, *ops, true_branch, false_branch):
    from tapegrad.control_flow.ops import cond
    out = [None] * (1 + len(ops))
    idx = [i for i, x in enumerate(ops) if x.dtype.kind in "fc"]
    if idx:
        cts = cond(pred, lambda: _branch_vjp(true_branch, ops, idx, g),
                   lambda: _branch_vjp(false_branch, ops, idx, g))
        for i, c in zip(idx, cts):
            out[1 + i] = c
    return tuple(out)


def _branch_jvp(branch, operands, idx, tans):
    from tapegrad.tape.forward_accumulator import ForwardAccumulator
    xs = _distinct(operands)
    with ForwardAccumulator([xs[i] for i in idx], tans) as acc:
        (y,), _ = evaluate(branch.program, xs)
    return _zeros_for(acc.jvp(y), y)


def _cond_jvp(tangents, ans, pred, *ops, true_branch, false_branch):
    from tapegrad.control_flow.ops import cond
    idx = [i for i, t in enumerate(tangents[1:]) if t is not None]
    if not idx or ans.dtype.kind not in "fc":
        return None
    tans = [tangents[1 + i] for i in idx]
    return cond(pred, lambda: _branch_jvp(true_branch, ops, idx, tans),
                lambda: _branch_jvp(false_branch, ops, idx, tans))


def _cond_batch(args, batched, *, true_branch, false_branch):
    from tapegrad.control_flow.derive import batched_branch, vmapped
    pred, ops, flags = args[0], args[1:], tuple(batched[1:])
    size = next(a.shape[0] for a, b in zip(args, batched) if b)
    if batched[0]:  # a per-example predicate: compute both branches, select per example
        axes = [0 if b else None for b in flags]
        yt = vmapped(true_branch, ops, axes, size)[0]
        yf = vmapped(false_branch, ops, axes, size)[0]
        return where(reshape(pred, (size,) + (1,) * (yt.ndim - 1)), yt, yf)
    return cond_p.bind_raw(pred, *ops, true_branch=batched_branch(true_branch, flags, size),
                           false_branch=batched_branch(false_branch, flags, size))


cond_p = Primitive(
    "cond", _cond, nin=None, cacheable=False,
    abstract=_cond_abstract, validate=_cond_validate, vjp=_cond_vjp,
    jvp=_cond_jvp,
    batch=_cond_batch, emit="_cond({args}, true_branch={true_branch}, "
                            "false_branch={false_branch})", complex="real_linear")


# ---- while_loop -------------------------------------------------------------------------------
def _pack_np(vals):
    if len(vals) == 1:
        return np.asarray(vals[0])
    return np.concatenate([np.ravel(v) for v in vals])


def _while_loop(*args, cond, body, n_state, maximum_iterations, out, history):
    state, consts = list(args[:n_state]), args[n_state:]
    rows, k, n_max = [], 0, maximum_iterations
    while (n_max is None or k < n_max) and cond(*state, *consts)[0]:
        if history:
            rows.append(_pack_np([state[i] for i in out]))
        state = list(body(*state, *consts))
        k += 1
    last = _pack_np([state[i] for i in out])
    if not history:
        return last
    rows.extend([last] * (n_max - k))  # a stopped loop keeps its final state
    return np.stack(rows) if rows else np.zeros((0,) + last.shape, last.dtype)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _while_validate(*avals, cond, body, n_state, maximum_iterations, out, history):
    n_max = maximum_iterations
    if not _is_int(n_state) or not 1 <= n_state <= len(avals):
        raise ValueError(f"while_loop: n_state must be an int in [1, {len(avals)}], "
                         f"got {n_state!r}")
    if n_max is not None and not (_is_int(n_max) and n_max >= 0):
        raise ValueError(f"while_loop: maximum_iterations must be None or an int >= 0, "
                         f"got {n_max!r}")
    if not isinstance(history, bool) or (history and n_max is None):
        raise ValueError("while_loop: history must be a bool, and needs maximum_iterations")
    if not (isinstance(out, tuple) and out and all(_is_int(i) and 0 <= i < n_state for i in out)
            and len(set(out)) == len(out)):
        raise ValueError(f"while_loop: out must name distinct loop variables, got {out!r}")
    _check_sub(cond, "cond", avals)
    _check_sub(body, "body", avals)
    if cond.out_types != [((), np.dtype(bool))]:
        raise ValueError(f"while_loop: cond must return bool[], got {_fmt(cond.out_types)}")
    state = _types(avals[:n_state])
    if body.out_types != state:
        raise ValueError(f"while_loop: body returns {_fmt(body.out_types)} for loop "
                         f"variables {_fmt(state)}")
    sel = [state[i] for i in out]
    if len({d for _, d in sel}) != 1:
        raise ValueError(f"while_loop: out must name loop variables of one dtype, got "
                         f"{_fmt(sel)}")
    return sel


def _while_abstract(*avals, cond, body, n_state, maximum_iterations, out, history):
    sel = _while_validate(*avals, cond=cond, body=body, n_state=n_state,
                          maximum_iterations=maximum_iterations, out=out, history=history)
    n_max = maximum_iterations
    shape = sel[0][0] if len(sel) == 1 else (sum(int(np.prod(s)) for s, _ in sel),)
    return ((n_max,) + shape if history else shape), sel[0][1]


def _while_jvp(tangents, ans, *args, cond, body, n_state, maximum_iterations, out, history):
    from tapegrad.control_flow.derive import jvp_loop
    n = n_state
    fs = [i for i in range(n) if args[i].dtype.kind in "fc"]
    fc = [j for j in range(len(args) - n) if tangents[n + j] is not None]
    if ans.dtype.kind not in "fc" or (all(t is None for t in tangents[:n]) and not fc):
        return None
    c2, b2 = jvp_loop(cond, body, n, fs, fc)
    ts = [_zeros_for(tangents[i], args[i]) for i in fs]
    return while_p.bind_raw(*args[:n], *ts, *args[n:], *[tangents[n + j] for j in fc],
                            cond=c2, body=b2, n_state=n + len(fs),
                            maximum_iterations=maximum_iterations,
                            out=tuple(n + fs.index(i) for i in out), history=history)


def _while_vjp(g, ans, *args, cond, body, n_state, maximum_iterations, out, history):
    from tapegrad.control_flow.derive import reverse_loop, trip_count
    from tapegrad.control_flow.trace import dtype_groups, run_loop, unpack
    n = n_state
    n_max = maximum_iterations
    if n_max is None and any(getattr(a, "_symbolic", False) for a in args):
        return _while_vjp_replayed(g, args, cond, body, n, out)
    if n_max is None:
        n_max = trip_count(args, cond, body, n)
    types = _types(args[:n])
    fs = [i for i in range(n) if types[i][1].kind in "fc"]
    fc = [j for j in range(len(args) - n) if args[n + j].dtype.kind in "fc"]
    ct_s = [zeros_like(args[i]) for i in fs]
    if not history:
        for i, piece in zip(out, unpack(g, [types[i] for i in out])):
            ct_s[fs.index(i)] = piece
    cts = [None] * len(args)
    if n_max == 0:  # the loop never ran: the output is the input
        for i, c in zip(fs, ct_s):
            cts[i] = c
        return tuple(cts)
    groups = dtype_groups(types)
    hists = [while_p.bind_raw(*args, cond=cond, body=body, n_state=n, maximum_iterations=n_max,
                              out=tuple(grp), history=True) for grp in groups]
    rc, rb = reverse_loop(cond, body, n, n_max, out, history)
    init = [convert_to_tensor(np.int32(n_max - 1))] + ct_s + [zeros_like(args[n + j])
                                                            for j in fc]
    consts = hists + list(args[n:]) + ([g] if history else [])
    finals = run_loop(init, consts, rc, rb, n_max, want=range(1, len(init)))
    for i, c in zip(fs + [n + j for j in fc], finals[1:]):
        cts[i] = c
    return tuple(cts)


def _while_vjp_replayed(g, args, cond, body, n, out):
    """Reverse mode of a loop without a bound inside a trace or vmap: the trip count is
    computed by the program, and each iteration's state recomputed (see
    ``derive.replay_reverse_loop``)."""
    from tapegrad.control_flow.derive import counted_loop, replay_reverse_loop
    from tapegrad.control_flow.trace import run_loop, unpack
    types = _types(args[:n])
    fs = [i for i in range(n) if types[i][1].kind in "fc"]
    fc = [j for j in range(len(args) - n) if args[n + j].dtype.kind in "fc"]
    ct_s = [zeros_like(args[i]) for i in fs]
    for i, piece in zip(out, unpack(g, [types[i] for i in out])):
        ct_s[fs.index(i)] = piece
    cc, cb = counted_loop(cond, body, n)
    trips = run_loop([convert_to_tensor(np.int32(0))] + list(args[:n]), list(args[n:]), cc, cb,
                     None, want=[0])[0]
    rc, rb = replay_reverse_loop(body, n)
    init = [trips - 1] + ct_s + [zeros_like(args[n + j]) for j in fc]
    finals = run_loop(init, list(args), rc, rb, None, want=range(1, len(init)))
    cts = [None] * len(args)
    for i, c in zip(fs + [n + j for j in fc], finals[1:]):
        cts[i] = c
    return tuple(cts)


def _while_batch(args, batched, *, cond, body, n_state, maximum_iterations, out, history):
    from tapegrad.control_flow.derive import batched_loop
    from tapegrad.control_flow.trace import pack, unpack
    n = n_state
    size = next(a.shape[0] for a, b in zip(args, batched) if b)
    # every loop variable carries the batch: the body may mix batched values into any of them
    state = [a if b else broadcast_to(expand_dims(a, 0), (size,) + tuple(a.shape))
             for a, b in zip(args[:n], batched[:n])]
    c2, b2 = batched_loop(cond, body, n, tuple(batched[n:]), size)
    r = while_p.bind_raw(*state, *args[n:], cond=c2, body=b2, n_state=n,
                         maximum_iterations=maximum_iterations, out=out, history=history)
    types = [((size,) + tuple(s), d) for s, d in (body.in_types[i] for i in out)]
    if not history:
        return pack(unpack(r, types), lead=1)
    pieces = [transpose(p, (1, 0) + tuple(range(2, p.ndim)))
              for p in unpack(r, types, lead=1)]  # (iteration, example) -> (example, iteration)
    return pack(pieces, lead=2)


while_p = Primitive(
    "while_loop", _while_loop, nin=None, cacheable=False, value_params=("maximum_iterations",),
    abstract=_while_abstract, validate=_while_validate,
    vjp=_while_vjp,
    jvp=_while_jvp, batch=_while_batch,
    emit="_while_loop({args}, cond={cond}, body={body}, n_state={n_state}, "
         "maximum_iterations={maximum_iterations}, out={out}, history={history})",
    complex="real_linear")
