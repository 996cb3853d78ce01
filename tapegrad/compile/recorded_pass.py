"""Compiled reverse passes that outer tapes record: an inner tape's gradient in nested tapes.

A physics-informed step differentiates its network with nested tapes (``u_x``, ``u_xx``,
then the weights' gradient). The inner tapes' gradients run while outer tapes record, so
``compile/derivative_cache.py`` (passes that nothing records) cannot serve them, and each
rule of each pass went through the dispatcher, its operations recorded one by one. Here such
a pass, once its structure repeats, runs as one generated program that computes *every*
value the interpreted pass would compute (each operation of its rules is an output); the
outer tapes are then shown those operations, one by one and in order, as ``bind`` would
show them (``record`` of each recorder: each tape keeps what it watches). So the outer tapes
hold the very entries the interpreter would have given them (same primitives, params,
arguments, bits and memory layouts), and everything that later reads them — their own
passes, compiled or not, Jacobians, persistent tapes — is unchanged. What is saved is the
dispatch of every rule (and the generated code's faster forms for its temporaries).

The key is the derivative cache's structure key, plus what else a rule sees under
recorders: which target cotangents are the shared unit (``api.times`` skips products with
it), the leaves' memory layouts (a matmul's rounding follows them), and which derived values
(``primitives/memo.py``: tanh's ``1 - y*y``) ``derived`` would hand out again under these
recorders (the tape's own entries; one held elsewhere keeps the pass interpretive). Derived
values the pass makes are remembered as the interpreter would remember them. The first time
a structure is compiled, the interpreted pass runs beside the program, and every value the
recorders would see is compared (bits, shape, strides): a difference keeps that structure
(and others of the same primitives) interpretive for good. The program is not optimised
(``ir.optimize`` keeps values, not layouts: it makes a product of broadcasts a broadcast
view), so each line is the primitive's emitted form of what eager execution runs.

Only tapes of plain tensors (no ``Variable`` leaves: a rule's operation on one is a read the
trace would not make), under recorders that are all ``GradientTape``s (no forward
accumulator, no ``custom_gradient`` spy) and nothing that computes (no trace, no vmap); custom
gradients and control flow stay interpretive, as in the derivative cache. Switched off with
the derivative cache (``tapegrad.config.set_derivative_cache(False)``).

>>> import tapegrad as tf
>>> clear()
>>> x = tf.constant([0.5, -1.0])
>>> for _ in range(4):  # noted, keyed, compiled and checked, then run as generated code
...     with tf.GradientTape() as t2:
...         t2.watch(x)
...         with tf.GradientTape() as t1:
...             t1.watch(x)
...             y = tf.tanh(x) * x
...         dy = t1.gradient(y, x)
...     d2 = t2.gradient(dy, x)
>>> hits()
1
"""
import threading

import numpy as np

from tapegrad import config
from tapegrad.core.state import STATE, Interpreter, recording
from tapegrad.core.tensor import Tensor
from tapegrad.core import hooks
from tapegrad.primitives import memo
from tapegrad.primitives.api import is_unit
from tapegrad.compile import derivative_cache
from tapegrad.compile.replay import Replay
from tapegrad.tape.backward import backward, reachable_from
from tapegrad.tape.gradient_tape import GradientTape

# Measured (one thread, interleaved, CPU time): a one-entry pass (``x**3``'s) costs more as
# a program, checked and recorded, than interpreted (~1.1x); from two entries on it costs
# less (the lesson's ``x * x * x``: ~0.9x; the PINN step's passes of 11 and 24 entries).
MIN_ENTRIES = 2

_lock = threading.Lock()
_seen = {}       # cheap pre-key -> None
_cache = {}      # full key -> sightings (int), derivative_cache._FAILED or a _Recorded
_replays = {}    # (n, first prim, last prim) -> Replay of the last compiled pass
_failed = {}     # (n, targets, the primitives) -> None: a structure of these stays interpretive
_hits = [0]
_UNCHECKED = object()  # a compiled pass's roots before its first run


class _Recorded:
    """One structure's compiled pass and the plan to show its operations to the recorders."""

    __slots__ = ("fn", "source", "takes", "n_made", "consts", "plan", "results", "remember",
                 "extra", "run", "roots", "root_ops")

    def __init__(self, fn, source, takes, n_made, consts, plan, results, remember, extra,
                 sizes):
        self.fn, self.source, self.n_made = fn, source, n_made
        self.takes = takes      # the program's arguments: (leaf, output, cotangent positions)
        self.consts = consts    # the rules' constant tensors (the pool's part after cts)
        self.plan = plan        # per recorded operation: (prim, pool positions, params, made)
        self.results = results  # per source: its pool index, or None
        self.remember = remember  # (pool index of ans, key, pool index of d)
        self.extra = extra      # what besides the structure the key held (checked per call)
        self.run = _runner(self, *sizes)  # sizes: how many leaves and outputs
        # the operations that read no earlier operation's output (record_many's roots);
        # _UNCHECKED until the first run has shown that every output is a float tensor
        self.roots = _UNCHECKED


def _runner(c, n_leaves, n_outs):
    """``run(leaves, outs, cts, keep=True) -> (ops, {result index: cotangent})``: the program
    called on the tape's values, its made tensors wrapped and put into the recorders'
    operations ``(prim, args, params, out)``, in order, the derived values remembered
    (``keep``; not while the check runs beside the interpreter, which remembers its own): straight-line
    Python generated per structure (a loop over the plan cost ~3 us an operation, mostly
    tuple building by index)."""
    n_cts = sum(not unit for unit in c.extra[0])  # the cotangents that are no unit
    ns = {"fn": c.fn, "wrap": Tensor._wrap, "remember": memo.remember}
    n_given = n_leaves + n_outs + n_cts

    def name(i):  # pool position -> the expression that holds that value
        if i < n_leaves:
            return f"L[{i}]"
        if i < n_leaves + n_outs:
            return f"O[{i - n_leaves}]"
        if i < n_given:
            return f"G[{i - n_leaves - n_outs}]"
        if i < n_given + len(c.consts):
            ns[f"c{i}"] = c.consts[i - n_given]
            return f"c{i}"
        return f"m{i - n_given - len(c.consts)}"

    leaves, outs, cts = c.takes[:3]
    args = [f"L[{p}]._value" for p in leaves] + [f"O[{p}]._value" for p in outs] + \
        [f"G[{j}]._value" for j in cts]
    lines = ["def run(L, O, G, keep=True):", f"    r = fn({', '.join(args)})"]
    first = n_given + len(c.consts)
    used = {m for _, _, _, m in c.plan}
    used.update(i - first for _, at, _, _ in c.plan for i in at if i >= first)
    used.update(i - first for i in c.results if i is not None and i >= first)
    used.update(i - first for a, _, d in c.remember for i in (a, d) if i >= first)
    for m in sorted(used):
        lines.append(f"    m{m} = wrap(r)" if c.n_made == 1 else f"    m{m} = wrap(r[{m}])")
    c.root_ops = _roots(c.plan, first)
    ops = []
    for k, (prim, at, params, m) in enumerate(c.plan):
        ns[f"p{k}"], ns[f"q{k}"] = prim, params
        ops.append(f"(p{k}, ({''.join(name(i) + ', ' for i in at)}), q{k}, m{m})")
    lines.append(f"    ops = [{', '.join(ops)}]")
    if c.remember:
        lines.append("    if keep:")
    for j, (a, key, d) in enumerate(c.remember):
        ns[f"k{j}"] = key
        lines.append(f"        remember({name(a)}, k{j}, {name(d)})")
    res = ", ".join(f"{j}: {name(i)}" for j, i in enumerate(c.results) if i is not None)
    lines.append(f"    return ops, {{{res}}}")
    exec(compile("\n".join(lines), "<tapegrad recorded runner>", "exec"), ns)
    return ns["run"]


def gradient(entries, n, targets, source_ids):
    """``{source id: cotangent}`` of the pass over ``entries[:n]``, run as generated code with
    its operations recorded by the outer tapes; or None: interpret it."""
    if n < MIN_ENTRIES or n > derivative_cache.MAX_ENTRIES or not config.derivative_cache():
        return None
    recs = STATE.stack.recorders
    for r in recs:
        if type(r) is not GradientTape:
            return None
    units = tuple(map(is_unit, targets.values()))
    where = (n, entries[0][0], entries[n - 1][0])
    rep = _replays.get(where)
    found = rep.matches(entries, n, targets, source_ids) if rep is not None else None
    if found is not None:
        leaves, outs = found
        extra = _extra(leaves, outs, recs, units, None)
        compiled = rep.compiled
        if extra is None or extra != compiled.extra:
            found = None
    if found is None:
        made = _find(entries, n, targets, source_ids, recs, units)
        if made is None:
            return None
        compiled, key, leaves, sources, verified = made
        if verified is not None:  # the first run: the interpreted pass, checked against it
            return verified
        if len(sources) == len(source_ids):
            rep = Replay(compiled, key, entries, n, leaves, targets, sources)
            with _lock:
                if len(_replays) >= derivative_cache.MAX_KEYS:
                    _replays.clear()
                _replays[where] = rep
        outs = [e[3] for e in entries[:n]]
    else:
        sources = rep.sources
    _hits[0] += 1
    ops, res = compiled.run(leaves, outs, _cts(targets, compiled))
    roots = compiled.roots
    if roots is _UNCHECKED:  # a structure's output dtypes are the same at every run
        floats = all(type(op[3]) is Tensor and op[3]._value.dtype.kind in "fc" for op in ops)
        roots = compiled.roots = compiled.root_ops if floats else None
    for r in recs:  # each a GradientTape: its records in the pass's order
        r.record_many(ops, roots)
    return {sid: res[j] for j, (_, sid) in enumerate(sources) if j in res}


def _roots(plan, first):
    """The positions of the plan's operations that read no earlier operation's output (pool
    positions from ``first`` on are made values; each operation makes ``m``)."""
    made, roots = set(), []
    for k, (_, at, _, m) in enumerate(plan):
        if not any(i >= first and i - first in made for i in at):
            roots.append(k)
        made.add(m)
    return tuple(roots)


def _cts(targets, compiled):
    """The targets' cotangents that are program inputs (a unit one is built into it)."""
    return [g for g, unit in zip(targets.values(), compiled.extra[0]) if not unit]


def _extra(leaves, outs, recs, units, pos):
    """What a rule sees besides the structure (see the module doc), or None where this pass
    stays interpretive."""
    layouts = tuple([a._value.strides for a in leaves])
    reused = []
    for k, dv in memo.derived_on(outs):
        out = outs[k]
        for name, d in dv.items():
            if not memo.reusable(recs, out, d):
                continue  # the rule would make it afresh, as the traced pass does
            if pos is None:
                pos = {id(o): j for j, o in enumerate(outs)}
            j = pos.get(id(d))
            if type(j) is not int or j >= len(outs):
                return None  # held off the tape: the program has no input for it
            reused.append((k, name, j))
    return units, layouts, tuple(reused)


def _find(entries, n, targets, source_ids, recs, units):
    """``(compiled, key, leaves, sources, verified)`` for this structure, or None; ``verified``:
    the interpreted pass's result on the run that compiled it (else None)."""
    pre = (n, entries[0][0], entries[n - 1][0], len(targets))
    if _failed:
        # a structure that could not be compiled or checked: its primitives (~0.05 us an
        # entry) say so before its key (~0.4 us an entry) is built again, at every call
        prims = (n, len(targets), tuple([e[0] for e in entries[:n]]))
        if prims in _failed:
            return None
    if pre not in _seen:
        if len(_seen) >= derivative_cache.MAX_KEYS:
            _seen.clear()
        _seen[pre] = None
        return None
    made = derivative_cache._key(entries, n, targets, source_ids, True)
    if made is None:
        return None
    key, leaves, sources = made
    outs = [e[3] for e in entries[:n]]
    extra = _extra(leaves, outs, recs, units, None)
    if extra is None:
        return None
    full = (key, extra)
    try:
        hit = _cache.get(full)
    except TypeError:  # an unhashable param
        return None
    if hit is None:
        with _lock:
            if len(_cache) >= derivative_cache.MAX_KEYS:
                del _cache[next(iter(_cache))]
            _cache[full] = 1
        return None
    if hit is derivative_cache._FAILED:
        return None
    verified = None
    if type(hit) is not _Recorded:
        hit = _compile(entries, n, leaves, targets, key, sources, extra)
        if hit is not None:
            verified, same = _verify(hit, entries, n, leaves, outs, targets, source_ids, recs)
            if not same:
                hit = None
        with _lock:
            _cache[full] = derivative_cache._FAILED if hit is None else hit
            if hit is None:  # its primitives, so that the next call asks no key
                if len(_failed) >= derivative_cache.MAX_KEYS:
                    _failed.clear()
                _failed[(n, len(targets), tuple([e[0] for e in entries[:n]]))] = None
        if hit is None:
            return None if verified is None else (None, key, leaves, sources, verified)
    return hit, key, leaves, sources, verified


class _Spy(Interpreter):
    """A recorder beside the real ones while the pass is interpreted: it notes, in order,
    the output of every operation with an input that comes from the tape (the operations
    the trace stages), and whether any other operation was one a real recorder sees. It
    watches nothing itself, so ``derived`` decides as without it."""

    records = True
    __slots__ = ("outs", "live", "unsafe")

    def __init__(self, live):
        self.outs, self.live, self.unsafe = [], live, False

    def record(self, prim, args, params, out, recorders, index):
        live = self.live
        for a in args:
            if id(a) in live:
                live.add(id(out))
                self.outs.append(out)
                return
        # made of the rules' constants alone: the program holds its value, so no recorder
        # may see it (none does: nothing watches a rule's fresh constants)
        for r in recorders[:index]:
            for a in args:
                if r.sees(a) is not False:
                    self.unsafe = True

    def sees(self, tensor):
        return False


def _verify(compiled, entries, n, leaves, outs, targets, source_ids, recs):
    """``(cotangents, same)``: the interpreted pass (recorded by ``recs``), and whether the
    program computes every value it would show the recorders, bit for bit and laid out
    alike."""
    live = {id(t) for t in leaves} | {id(t) for t in outs}
    live.update(id(g) for g, unit in zip(targets.values(), compiled.extra[0]) if not unit)
    spy = _Spy(live)
    with recording(tuple(recs) + (spy,)):
        cts = backward(entries, targets, source_ids, reachable_from(entries, source_ids))
    ops, _ = compiled.run(leaves, outs, _cts(targets, compiled), False)
    mine = [op[3] for op in ops]
    same = not spy.unsafe and len(mine) == len(spy.outs) and all(map(_same, mine, spy.outs))
    return cts, same


def _same(a, b):
    a, b = a._value, b._value
    return a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _compile(entries, n, leaves, targets, key, sources, extra):
    """Trace the pass with every operation an output; None if impossible."""
    from tapegrad.trace.codegen import compile_program
    from tapegrad.trace.tracer import GraphBuilder, SymbolicTensor, tracing
    from tapegrad.ir import check

    units, _, reused = extra
    b = GraphBuilder("recorded")
    b.namer.read_user_locals = False
    log = []
    try:
        with tracing(b):
            syms, outs = derivative_cache.stand_ins(b, leaves, entries, n)
            pos = {id(e[3]): k for k, e in enumerate(entries[:n])}
            sym_targets, cts = {}, []
            for (sid, g), unit in zip(targets.items(), units):
                k = pos[sid]
                if unit:  # the shared unit itself: the rules skip their products with it
                    sym_targets[id(outs[k])] = g
                else:
                    ct = sym_targets[id(outs[k])] = b.add_input(g._value.shape, g._value.dtype,
                                                                "target_ct")
                    cts.append(ct._var.name)
            table = {}
            for k, name, j in reused:
                table.setdefault(id(outs[k]), (outs[k], {}))[1][name] = outs[j]
            sym_entries = [(prim, tuple(syms[-1 - r] if r < 0 else outs[r] for r in key[k][1]),
                            params, outs[k]) for k, (prim, _, params, _) in enumerate(entries[:n])]
            sym_sources = [syms[-1 - r] if r < 0 else outs[r] for r, _ in sources]
            with memo.given(table, log):
                got = backward(sym_entries, sym_targets, {id(s) for s in sym_sources})
            results = [got.get(id(s)) for s in sym_sources]
            equations = list(b.equations)
            if not equations or any(len(e.outs) != 1 for e in equations):
                return None
            made_vars = [e.outs[0] for e in equations]
            program = b.build([SymbolicTensor(v, b) for v in made_vars])
        # where each value comes from: the pool of _run (leaves, outs, cts, consts, made)
        names = [s._var.name for s in syms] + [o._var.name for o in outs] + cts
        consts = list(b._keep)  # the rules' constant tensors, in b.constants' order
        names += [c.var.name for c in b.constants]
        names += [v.name for v in made_vars]
        at = {name: i for i, name in enumerate(names)}
        plan = tuple((e.prim, tuple(at[v.name] for v in e.inputs), e.kwargs, m)
                     for m, e in enumerate(equations) if not e.prim.nondiff)
        pool_of = {id(s): i for i, s in enumerate(syms + outs)}
        res = []
        for r in results:
            if r is None:
                res.append(None)
            elif getattr(r, "_symbolic", False):
                res.append(at[r._var.name])
            else:
                return None  # a constant result: rare, interpretive
        remember = []
        for ans, name, d in log:
            if id(ans) not in pool_of or not getattr(d, "_symbolic", False):
                return None
            remember.append((pool_of[id(ans)], name, at[d._var.name]))
        program, takes = derivative_cache._read_only_what_it_uses(
            program, [s._var.name for s in syms], [o._var.name for o in outs],
            cts, {})
        program = check(program)
        if len(program.outputs) != len(made_vars):
            return None
        fn, source = compile_program(program, "recorded")
    except Exception:  # noqa: BLE001 - any failure: this structure stays interpretive
        return None
    return _Recorded(fn, source, takes, len(made_vars), consts, plan, tuple(res),
                     tuple(remember), extra, (len(syms), len(outs)))


def hits():
    """How many recorded passes ran as generated code since the last ``clear()``."""
    return _hits[0]


def cached_sources():
    """The generated sources of the compiled recorded passes (for inspection and tests)."""
    return [c.source for c in list(_cache.values()) if type(c) is _Recorded]


def clear():
    """Forget every structure and compiled recorded pass."""
    with _lock:
        _hits[0] = 0
        _seen.clear()
        _cache.clear()
        _replays.clear()
        _failed.clear()


hooks.install(recorded_gradient=gradient)
