"""What the control-flow rules derive from sub-programs: the JVP, reverse and batched loops of
``while_loop``, the batched branches of ``cond``.

Each is traced from the original sub-programs (tapes, accumulators and vmap over
``tapegrad.ir.evaluate``) once, and cached on the original's ``derived`` dict: the programs
depend only on the originals, never on runtime values.
See ``tapegrad/control_flow/primitives.py`` for the design.
"""
import numpy as np

from tapegrad.primitives.api import (cast, convert_to_tensor, gather, reduce_sum, reshape, where,
                                     zeros_like)
from tapegrad.ir import evaluate
from tapegrad.control_flow.trace import dtype_groups, trace, unpack


def _cached(body, key, build):
    hit = body.derived.get(key)
    if hit is None:
        hit = body.derived[key] = build()
    return hit


def _sub(fn, types, name):
    """A cacheable sub-program: a pure function of its inputs (nothing lifted from outside)."""
    from tapegrad.control_flow.primitives import make_subprogram
    return make_subprogram(trace(fn, types, name, lift_concrete=False)[0])


def _subs(cond_fn, body_fn, types, name):
    return _sub(cond_fn, types, name + "_cond"), _sub(body_fn, types, name + "_body")


def _split(xs, sizes):
    out, k = [], 0
    for s in sizes:
        out.append(list(xs[k:k + s]))
        k += s
    return out


def trip_count(args, cond, body, n):
    """Iterations a loop runs on concrete values (reverse mode without a bound)."""
    vals = [a._value for a in args]
    state, consts, k = vals[:n], vals[n:], 0
    while cond(*state, *consts)[0]:
        state = list(body(*state, *consts))
        k += 1
    return k


def jvp_loop(cond, body, n, fs, fc):
    """Loop over ``(state, state tangents of fs, consts, const tangents of fc)``."""
    from tapegrad.tape.forward_accumulator import ForwardAccumulator
    st, ct = body.in_types[:n], body.in_types[n:]
    sizes = (n, len(fs), len(ct), len(fc))

    def cond_fn(*xs):
        s, _, c, _ = _split(xs, sizes)
        return evaluate(cond.program, s + c)[0][0]

    def body_fn(*xs):
        s, ts, c, tc = _split(xs, sizes)
        with ForwardAccumulator([s[i] for i in fs] + [c[j] for j in fc], ts + tc) as acc:
            outs = evaluate(body.program, s + c)[0]
        tans = [acc.jvp(outs[i]) for i in fs]
        return outs + [t if t is not None else zeros_like(outs[i])
                       for t, i in zip(tans, fs)]

    def build():
        types = st + [st[i] for i in fs] + ct + [ct[j] for j in fc]
        return _subs(cond_fn, body_fn, types, body.program.name + "_jvp")
    return _cached(body, ("jvp", cond, tuple(fs), tuple(fc)), build)


def _packed_type(types, idx, lead):
    sel = [types[i] for i in idx]
    shape = sel[0][0] if len(sel) == 1 else (sum(int(np.prod(s)) for s, _ in sel),)
    return (lead + tuple(shape), sel[0][1])


def body_vjp(body, s, cs, fs, fc, ct_s):
    """One iteration's VJP at state ``s``: the cotangents of the floating loop variables
    ``fs`` and consts ``fc`` from those (``ct_s``) of the floating loop variables after it."""
    from tapegrad.tape.gradient_tape import GradientTape
    srcs = [s[i] for i in fs] + [cs[j] for j in fc]
    with GradientTape() as tape:
        for x in srcs:
            tape.watch(x)
        outs = evaluate(body.program, s + cs)[0]
    grads = tape.gradient([outs[i] for i in fs], srcs, output_gradients=ct_s)
    return [g if g is not None else zeros_like(x) for g, x in zip(grads, srcs)]


def reverse_loop(cond, body, n, n_max, out, history):
    """The reverse pass over a loop's saved states, as a loop of exactly ``n_max`` steps.

    State: ``(k, cotangents of the floating loop variables, of the floating consts)``,
    k counting down from ``n_max - 1``. Consts: the histories (one per dtype group), the
    original consts and, for a ``history`` output, its cotangent.
    """
    st, ct = body.in_types[:n], body.in_types[n:]
    groups = dtype_groups(st)
    fs = [i for i in range(n) if st[i][1].kind in "fc"]
    fc = [j for j in range(len(ct)) if ct[j][1].kind in "fc"]
    sizes = (1, len(fs), len(fc), len(groups), len(ct), int(history))

    def cond_fn(k, *_):
        return k >= 0

    def body_fn(*xs):
        (k,), ct_s, ct_c, hists, cs, gh = _split(xs, sizes)
        s = [None] * n
        for grp, h in zip(groups, hists):  # the loop variables before iteration k
            for i, v in zip(grp, unpack(gather(h, k), [st[i] for i in grp])):
                s[i] = v
        active = evaluate(cond.program, s + cs)[0][0]
        grads = body_vjp(body, s, cs, fs, fc, ct_s)
        new_s = [where(active, g, c) for g, c in zip(grads[:len(fs)], ct_s)]
        new_c = [c + where(active, g, zeros_like(g))
                 for g, c in zip(grads[len(fs):], ct_c)]
        if history:  # the history row k is the state before iteration k: its cotangent joins
            for i, piece in zip(out, unpack(gather(gh[0], k), [st[i] for i in out])):
                new_s[fs.index(i)] = new_s[fs.index(i)] + piece
        return [k - 1] + new_s + new_c

    def build():
        types = ([((), np.dtype("int32"))] + [st[i] for i in fs] + [ct[j] for j in fc]
                 + [_packed_type(st, grp, (n_max,)) for grp in groups] + ct
                 + ([_packed_type(st, out, (n_max,))] if history else []))
        return _subs(cond_fn, body_fn, types, body.program.name + "_vjp")
    return _cached(body, ("vjp", cond, n_max, out, history), build)


_INT = np.dtype("int32")


def counted_loop(cond, body, n):
    """The loop with an iteration counter in front of its state: ``(k, *state)``."""
    st, ct = body.in_types[:n], body.in_types[n:]

    def cond_fn(k, *xs):
        return evaluate(cond.program, list(xs))[0][0]

    def body_fn(k, *xs):
        return [k + 1] + evaluate(body.program, list(xs))[0]
    return _cached(body, ("counted", cond), lambda: _subs(
        cond_fn, body_fn, [((), _INT)] + st + ct, body.program.name + "_counted"))


def replay_loop(body, n):
    """``j`` iterations of the body from a state (the cond held for each: they ran).
    State ``(k, *state)``, consts ``(j, *consts)``."""
    st, ct = body.in_types[:n], body.in_types[n:]

    def cond_fn(k, *xs):
        return k < xs[n]

    def body_fn(k, *xs):
        return [k + 1] + evaluate(body.program, list(xs[:n]) + list(xs[n + 1:]))[0]
    return _cached(body, ("replay",), lambda: _subs(
        cond_fn, body_fn, [((), _INT)] + st + [((), _INT)] + ct, body.program.name + "_replay"))


def replay_reverse_loop(body, n):
    """The reverse pass of a loop whose trip count has no static bound (a traced loop
    without ``maximum_iterations``): no history can be saved in a static shape, so the state
    before iteration ``j`` is recomputed from the initial one (``replay_loop``), then the
    body's VJP applied there, for ``j`` from the trip count - 1 down to 0. The same
    computations as the saved-history pass (``reverse_loop``), so the same values; time is
    quadratic in the trip count. State: ``(j, cotangents of the floating loop variables, of
    the floating consts)``; consts: the initial state and the consts."""
    from tapegrad.control_flow.trace import run_loop
    st, ct = body.in_types[:n], body.in_types[n:]
    fs = [i for i in range(n) if st[i][1].kind in "fc"]
    fc = [j for j in range(len(ct)) if ct[j][1].kind in "fc"]
    sizes = (1, len(fs), len(fc), n, len(ct))

    def cond_fn(j, *_):
        return j >= 0

    def body_fn(*xs):
        (j,), ct_s, ct_c, s0, cs = _split(xs, sizes)
        rc, rb = replay_loop(body, n)
        s = run_loop([convert_to_tensor(np.int32(0))] + s0, [j] + cs, rc, rb, None)[1:]
        grads = body_vjp(body, s, cs, fs, fc, ct_s)
        return [j - 1] + grads[:len(fs)] + [c + g for g, c in zip(grads[len(fs):], ct_c)]

    def build():
        types = [((), _INT)] + [st[i] for i in fs] + [ct[j] for j in fc] + st + ct
        return _subs(cond_fn, body_fn, types, body.program.name + "_replay_vjp")
    return _cached(body, ("replay_vjp",), build)


def vmapped(sub, xs, axes, size):
    """``sub``'s outputs evaluated on a batch (``axes[i]``: 0 or None for ``xs[i]``)."""
    from tapegrad.batching.vmap import vmap
    f = vmap(lambda *ys: evaluate(sub.program, list(ys))[0], in_axes=tuple(axes),
             axis_size=size)
    return f(*xs)


def batched_branch(sub, flags, size):
    """A ``cond`` branch on a batch: operands with ``flags`` carry a leading batch axis."""
    def build():
        types = [((size,) + s if b else s, d) for (s, d), b in zip(sub.in_types, flags)]
        axes = [0 if b else None for b in flags]
        return _sub(lambda *xs: vmapped(sub, xs, axes, size)[0], types,
                    sub.program.name + "_batched")
    return _cached(sub, ("batch", flags, size), build)


def batched_loop(cond, body, n, const_flags, size):
    """The loop on a batch: it runs while any example's condition holds; the others keep
    their values (``where``). Every loop variable is batched; consts per ``const_flags``."""
    st, ct = body.in_types[:n], body.in_types[n:]
    axes = [0] * n + [0 if b else None for b in const_flags]

    def active(xs):
        return vmapped(cond, xs, axes, size)[0]

    def cond_fn(*xs):
        return reduce_sum(cast(active(xs), "int32")) > 0

    def body_fn(*xs):
        p, new = active(xs), vmapped(body, xs, axes, size)
        return [where(reshape(p, (size,) + (1,) * len(s)), a, b)
                for a, b, (s, _) in zip(new, xs[:n], st)]

    def build():
        types = [((size,) + s, d) for s, d in st] + [
            ((size,) + s, d) if b else (s, d) for (s, d), b in zip(ct, const_flags)]
        return _subs(cond_fn, body_fn, types, body.program.name + "_batched")
    return _cached(body, ("batch", cond, const_flags, size), build)
