"""Compiled derivative passes for tapes that repeat.

A training loop records the same operations on a fresh tape at every step, and a user who
needs a Jacobian at many inputs records the same network again and again. The interpretive
passes (``tape/backward.py``, ``jacobians.tape_jacobians``) then pay Python dispatch
for every rule of every step: on small arrays that is most of the time. Here, once a tape
*structure* has been differentiated twice the same way, the derivative pass is traced once
into a program — with the tracer of ``tapegrad.function``, so the rules are the primitives'
own — optimised, compiled to NumPy source, and reused: later tapes of that structure hand
their saved arrays to the generated code.

The structure key holds everything a rule sees besides array values: per entry, the
primitive, its params and where each argument comes from (an earlier
entry's output, or a leaf numbered by first use, with its shape and dtype); then what is
asked (a gradient or a Jacobian, and its options), and where the targets (with their
cotangents) and sources sit. Tracing itself guarantees that no rule branched on a value: such a branch
raises while tracing, and that structure stays interpretive for good.

Only passes that nothing records use it (first order, no outer tape, no trace, no vmap), on
tapes of concrete tensors; ``custom_gradient`` and control flow keep the interpretive path.
Switch it off with ``tapegrad.config.set_derivative_cache(False)``.

>>> import tapegrad as tf
>>> clear()
>>> x = tf.constant([1.0, 2.0])
>>> for _ in range(3):  # the third gradient runs generated code
...     with tf.GradientTape() as g:
...         g.watch(x)
...         y = x
...         for _ in range(4):
...             y = tf.sin(y) * x
...         dx = g.gradient(tf.reduce_sum(y), x)
>>> hits(), len(cached_sources())
(1, 1)
"""
import operator
import threading

from tapegrad import config
from tapegrad.core.dispatch import Primitive
from tapegrad.core import hooks
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.primitives import memo
from tapegrad.compile import handover
from tapegrad.compile.replay import Replay, getter
from tapegrad.tape.backward import backward
from tapegrad.tape.jacobians import tape_jacobians
from tapegrad.tape.structure import structure

# Sub-programs in params (control flow) are costly to hash and compare: those stay interpretive.
MIN_ENTRIES = 1      # measured: the replayed pass beats the interpreter from one entry on
MAX_ENTRIES = 4096   # longer tapes: the key would cost more than the pass saves
MAX_KEYS = 256       # structures remembered at once (oldest forgotten first)
_FAILED = "failed"   # a structure that could not be traced (stays interpretive)

_lock = threading.Lock()
_seen = {}           # cheap pre-key -> None: structures worth keying in full
_cache = {}          # full key -> number of sightings (int), _FAILED, or a _Compiled
_hits = [0]          # passes computed by generated code (for tests and curiosity)
_replays = {}        # (n, first prim, last prim) -> Replay: the last compiled gradient
_replay_hits = [0]   # of those, the ones recognised by Replay.matches (no key built)


class _Compiled:
    __slots__ = ("fn", "source", "outputs", "leaves", "outs", "cts", "extra", "program",
                 "out_inputs", "uses", "donating")

    def __init__(self, fn, source, outputs, takes, program=None, uses=()):
        self.fn, self.source = fn, source
        self.outputs = outputs  # per program output: which result it is
        # the arguments it reads (the others are not passed): the leaves, entry outputs,
        # targets' cotangents and off-tape sources at these indices, in this order (the
        # first two as getters of a tuple of them)
        leaves, outs, self.cts, self.extra = takes
        self.leaves, self.outs = getter(leaves), getter(outs)
        # for handing the tape's arrays over (compile/handover.py): the program, the entries whose
        # outputs it reads with their input names, how often the tape names each output
        self.program, self.uses = program, uses
        names = program.inputs[len(leaves):len(leaves) + len(outs)] if program else ()
        self.out_inputs = tuple((k, v.name) for k, v in zip(outs, names))
        self.donating = None  # decided on the first pass whose tape is handed over


# -- the two kinds of pass ------------------------------------------------------------------
def gradient(entries, n, targets, source_ids, consumed=False):
    """Cotangents ``{source id: Tensor}`` by compiled code, or None: use the interpreter.

    ``entries[:n]``: the tape; ``targets``: ``{id: its cotangent Tensor}``; ``source_ids``:
    a set. ``consumed``: the tape is used up (non-persistent) and ``entries`` is dropped
    after the pass, so arrays that only it holds may be overwritten (``handover.py``).
    """
    if n < MIN_ENTRIES or n > MAX_ENTRIES or not config.derivative_cache():
        return None
    where = (n, entries[0][0], entries[n - 1][0])
    rep = _replays.get(where)
    found = rep.matches(entries, n, targets, source_ids) if rep is not None else None
    if found is not None:
        _replay_hits[0] += 1
        compiled, sources = rep.compiled, rep.sources
        leaves, outs = found
    else:
        # sources in a canonical order (a set's order follows ids, which change every step)
        found = _find(entries, n, targets, source_ids, "gradient", sort_sources=True)
        if found is None:
            return None
        compiled, key, leaves, sources = found
        outs = [e[3] for e in entries[:n]]
        # a source off the tape is not remembered: its id could come back as another tensor's
        if len(sources) == len(source_ids):
            rep = Replay(compiled, key, entries, n, leaves, targets, sources)
            with _lock:
                if len(_replays) >= MAX_KEYS:
                    _replays.clear()
                _replays[where] = rep
    # each program output is a source's cotangent (compiled.outputs: which source)
    fn = handover.function(compiled, outs) if consumed else compiled.fn
    _hits[0] += 1
    r = fn(*_values(compiled, outs, leaves, targets, ()))
    wrap = Tensor._wrap
    if len(compiled.outputs) == 1:
        return {sources[compiled.outputs[0]][1]: wrap(r)}
    return {sources[i][1]: wrap(v) for i, v in zip(compiled.outputs, r)}


def jacobian(entries, n, target, sources, mode, chunk_size):
    """``tape_jacobians(entries, [target], sources)[0]`` by compiled code, or None."""
    if n < MIN_ENTRIES or n > MAX_ENTRIES or not config.derivative_cache():
        return None
    targets = {id(target): None}
    found = _find(entries, n, targets, list(sources), ("jacobian", mode, chunk_size))
    if found is None:
        return None
    compiled, _, leaves, sources = found
    return _call(compiled, [e[3] for e in entries[:n]], leaves, targets, len(sources), sources)


def _run_pass(what, sym_entries, sym_targets, sym_sources):
    """The pass ``what`` names, on symbolic stand-ins (a target's cotangent stands for
    the target itself): one tensor or None per source."""
    if what == "gradient":
        cts = backward(sym_entries, sym_targets, {id(s) for s in sym_sources})
        return [cts.get(id(s)) for s in sym_sources]
    _, mode, chunk_size = what
    (sym_target,) = sym_targets.values()
    (out,) = tape_jacobians(sym_entries, [sym_target], sym_sources, mode=mode,
                            chunk_size=chunk_size)
    return out


# -- the machinery --------------------------------------------------------------------------
def _find(entries, n, targets, sources, what, sort_sources=False):
    """``(compiled pass, structure key, leaves, sources)`` for this structure, or None.

    ``targets``: ``{id: its cotangent Tensor, or None}`` (None: a Jacobian's target, whose
    cotangents are the pass's own basis rows); ``what``:
    the pass (see ``_run_pass``).
    """
    pre = (n, entries[0][0], entries[n - 1][0], len(targets), what)
    if pre not in _seen:
        # a structure seen for the first time is not keyed at all: one-off tapes pay ~nothing
        if len(_seen) >= MAX_KEYS:
            _seen.clear()
        _seen[pre] = None
        return None
    made = _key(entries, n, targets, sources, sort_sources)
    if made is None:
        return None
    key, leaves, sources = made
    try:
        hit = _cache.get((what, key))
    except TypeError:  # an unhashable param (an index array, a list): not cacheable
        return None
    if hit is None:
        with _lock:
            if len(_cache) >= MAX_KEYS:
                del _cache[next(iter(_cache))]
            _cache[(what, key)] = 1
        return None
    if hit is _FAILED:
        return None
    if type(hit) is not _Compiled:
        hit = _compile(entries, n, leaves, key, what)
        with _lock:
            _cache[(what, key)] = _FAILED if hit is None else hit
        if hit is None:
            return None
    return hit, key, leaves, sources


def _key(entries, n, targets, sources, sort_sources):
    """``(key, leaves, sources)``, or None for a tape this cache does not take.

    The key is the tape's structure (``tape/structure.py``), the leaves' shapes and dtypes,
    and where the targets (with their cotangents' shapes and dtypes) and sources sit.
    """
    made = structure(entries, n, _ELIGIBLE)
    if made is None:
        return None
    parts, leaves, pos = made
    derived = _derived(entries, n, pos)
    if derived:
        parts.append(("derived", derived))
    concrete = (Tensor, Variable)
    for a in leaves:
        if type(a) not in concrete:  # a vmap's or a trace's value: not ours
            return None
        v = a._value
        parts.append((v.shape, v.dtype))
    for sid, g in targets.items():
        k = pos.get(sid)
        if k is None or k < 0:  # a target that is a leaf or off the tape: rare, interpretive
            return None
        if g is not None and type(g) is not Tensor:  # a symbolic or batched cotangent
            return None
        parts.append(("target", k) if g is None else ("target", k, g._value.shape, g._value.dtype))
    if sort_sources:  # ids; those off the tape get no cotangent and are left out
        sources = sorted((pos[s], s) for s in sources if s in pos)
        parts.append(("sources",) + tuple(r for r, _ in sources))
        return tuple(parts), leaves, sources
    refs = []
    for s in sources:  # tensors, in the caller's order; off the tape: by shape and dtype
        if not isinstance(s, Tensor):
            return None
        r = pos.get(id(s))
        refs.append((s.shape, s.dtype) if r is None else r)
    parts.append(("sources",) + tuple(refs))
    return tuple(parts), leaves, sources


def _derived(entries, n, pos):
    """``((k, name, j), ...)``: entry ``j``'s output is the derived value ``name`` of entry
    ``k``'s (``primitives/memo.py``), so the pass may read it instead of computing it anew:
    the same operations on the same array gave it."""
    found = []
    for k in range(n):
        for name, d in memo.derived_values(entries[k][3]).items():
            j = pos.get(id(d))
            if type(j) is int and j >= 0:
                found.append((k, name, j))
    return tuple(found)


class _Eligible(dict):
    """``prim -> whether the cache takes tapes holding it`` (filled on first sight)."""

    def __missing__(self, prim):
        if type(prim) is not Primitive:  # custom_gradient ops: new per call, never kept
            return False
        ok = self[prim] = prim.cacheable
        return ok


_ELIGIBLE = _Eligible()


def _values(compiled, outs, leaves, targets, sources):
    """The arguments of ``compiled.fn``: the values of the leaves and entry outputs it reads
    (picked at C speed: this runs at every step of a training loop), then of the targets'
    cotangents and off-tape sources."""
    vals = list(map(_value_of, compiled.leaves(leaves) + compiled.outs(outs)))
    if compiled.cts:
        cts = [g._value for g in targets.values() if g is not None]
        vals += [cts[j] for j in compiled.cts]
    if compiled.extra:
        vals += [sources[p]._value for p in compiled.extra]
    return vals


_value_of = operator.attrgetter("_value")


def _call(compiled, outs, leaves, targets, n_sources, sources=(), consumed=False):
    """``compiled`` on a tape whose entries' outputs are ``outs`` (a sequence)."""
    _hits[0] += 1
    fn = handover.function(compiled, outs) if consumed else compiled.fn
    r = fn(*_values(compiled, outs, leaves, targets, sources))
    if len(compiled.outputs) == 1:
        r = (r,)
    results = [None] * n_sources
    wrap = Tensor._wrap
    for i, v in zip(compiled.outputs, r):
        results[i] = wrap(v)
    return results


def stand_ins(builder, leaves, entries, n):
    """Symbolic inputs of ``builder`` for a tape's leaves (``x0``, ``x1``, ...) and for the
    outputs of its first ``n`` entries (``y0``, ...), with their shapes and dtypes."""
    syms = [builder.add_input(a._value.shape, a._value.dtype, f"x{i}")
            for i, a in enumerate(leaves)]
    outs = [builder.add_input(e[3]._value.shape, e[3]._value.dtype, f"y{k}")
            for k, e in enumerate(entries[:n])]
    return syms, outs


def _compile(entries, n, leaves, key, what):
    """Trace the pass of this structure on symbolic stand-ins; None if impossible."""
    # imported on the first compilation: most tapes are never compiled
    from tapegrad.trace.codegen import compile_program
    from tapegrad.trace.tracer import GraphBuilder, tracing
    from tapegrad.ir import check, optimize

    b = GraphBuilder("derivative")
    b.namer.read_user_locals = False  # the user's frame holds the tape's tensors, not ours
    try:
        with tracing(b):
            syms, outs = stand_ins(b, leaves, entries, n)
            sym_targets, table, cts, extra = {}, {}, [], {}
            for part in key:
                if part[0] == "derived":
                    for k, name, j in part[1]:
                        table.setdefault(id(outs[k]), (outs[k], {}))[1][name] = outs[j]
                if part[0] == "target":
                    k = part[1]
                    if len(part) == 2:  # a Jacobian's: its basis rows
                        sym_targets[id(outs[k])] = outs[k]
                    else:
                        sym_targets[id(outs[k])] = ct = b.add_input(part[2], part[3], "target_ct")
                        cts.append(ct._var.name)
            sym_entries = []
            for k in range(n):
                prim, _, params, _ = entries[k]
                ins = tuple(syms[-1 - r] if r < 0 else outs[r] for r in key[k][1])
                sym_entries.append((prim, ins, params, outs[k]))
            sym_sources = []
            for p, r in enumerate(key[-1][1:]):
                if type(r) is int:
                    sym_sources.append(syms[-1 - r] if r < 0 else outs[r])
                else:  # off the tape: a stand-in that nothing depends on (its zeros' shape)
                    sym_sources.append(b.add_input(r[0], r[1], "unused"))
                    extra[sym_sources[-1]._var.name] = p
            with memo.given(table):
                results = _run_pass(what, sym_entries, sym_targets, sym_sources)
            found = [i for i, r in enumerate(results) if r is not None]
            if not found:
                return None
            program = b.build([results[i] for i in found])
        program, takes = _read_only_what_it_uses(
            optimize(program), [s._var.name for s in syms], [o._var.name for o in outs],
            cts, extra)
        program = check(program)
        fn, source = compile_program(program, "derivative")
    except Exception:  # noqa: BLE001 - any failure: this structure stays interpretive
        return None
    return _Compiled(fn, source, tuple(found), takes, program, handover.uses(key, n))


def _read_only_what_it_uses(program, leaves, outs, cts, extra):
    """The program without the inputs it never reads (most entry outputs of a reverse pass:
    a call with all of them costs more than the pass on small arrays), and the indices
    of the leaves, entry outputs, cotangents and off-tape sources it keeps (``_Compiled``)."""
    used = {v.name for e in program.equations for v in e.inputs}
    used.update(v.name for v in program.outputs)
    kept = tuple(v for v in program.inputs if v.name in used)
    names = [v.name for v in kept]
    at = {name: i for i, name in enumerate(names)}
    takes = tuple(tuple(i for i, name in enumerate(group) if name in at)
                  for group in (leaves, outs, cts))
    takes += (tuple(extra[name] for name in names if name in extra),)
    order = [name for group in (leaves, outs, cts) for name in group if name in at]
    order += [name for name in names if name in extra]
    if order != names:  # the inputs are made in this order: keep them so
        raise ValueError("derivative program inputs out of order")
    return program.replace(inputs=kept), takes


def cached_sources():
    """The generated sources of the compiled passes (for inspection and tests)."""
    return [c.source for c in list(_cache.values()) if type(c) is _Compiled]


def hits():
    """How many passes ran as generated code since the last ``clear()``."""
    return _hits[0]


def replay_hits():
    """How many of those were recognised without building the structure key."""
    return _replay_hits[0]


def clear():
    """Forget every structure and compiled pass."""
    with _lock:
        _hits[0] = _replay_hits[0] = 0
        _seen.clear()
        _cache.clear()
        _replays.clear()


# the tape asks for these first (tape/backward.py, tape/gradient_tape.py)
hooks.install(compiled_gradient=gradient, compiled_jacobian=jacobian)
