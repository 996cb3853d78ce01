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
import threading
import weakref

from tapegrad import config
from tapegrad.core.dispatch import Primitive
from tapegrad.core import hooks
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.primitives import memo
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
_replays = {}        # (n, first prim, last prim) -> _Replay: the last compiled gradient
_replay_hits = [0]   # of those, the ones recognised by _Replay.matches (no key built)


class _Compiled:
    __slots__ = ("fn", "source", "outputs")

    def __init__(self, fn, source, outputs):
        self.fn, self.source = fn, source
        self.outputs = outputs  # per program output: which result it is


# -- the two kinds of pass ------------------------------------------------------------------
def gradient(entries, n, targets, source_ids):
    """Cotangents ``{source id: Tensor}`` by compiled code, or None: use the interpreter.

    ``entries[:n]``: the tape; ``targets``: ``{id: its cotangent Tensor}``; ``source_ids``:
    a set.
    """
    if n < MIN_ENTRIES or n > MAX_ENTRIES or not config.derivative_cache():
        return None
    where = (n, entries[0][0], entries[n - 1][0])
    rep = _replays.get(where)
    leaves = rep.matches(entries, n, targets, source_ids) if rep is not None else None
    if leaves is not None:
        _replay_hits[0] += 1
        compiled, sources = rep.compiled, rep.sources
    else:
        # sources in a canonical order (a set's order follows ids, which change every step)
        found = _find(entries, n, targets, source_ids, "gradient", sort_sources=True)
        if found is None:
            return None
        compiled, key, leaves, sources = found
        # a source off the tape is not remembered: its id could come back as another tensor's
        if len(sources) == len(source_ids):
            rep = _Replay(compiled, key, entries, n, leaves, targets, sources)
            with _lock:
                if len(_replays) >= MAX_KEYS:
                    _replays.clear()
                _replays[where] = rep
    results = _call(compiled, entries, n, leaves, targets, len(sources))
    return {sid: r for (_, sid), r in zip(sources, results) if r is not None}


def jacobian(entries, n, target, sources, mode, chunk_size):
    """``tape_jacobians(entries, [target], sources)[0]`` by compiled code, or None."""
    if n < MIN_ENTRIES or n > MAX_ENTRIES or not config.derivative_cache():
        return None
    targets = {id(target): None}
    found = _find(entries, n, targets, list(sources), ("jacobian", mode, chunk_size))
    if found is None:
        return None
    compiled, _, leaves, sources = found
    return _call(compiled, entries, n, leaves, targets, len(sources))


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


class _Replay:
    """The last tape whose gradient ran a compiled pass, for checking the next one cheaply.

    A training loop's tapes differ from step to step only in their intermediate tensors:
    the primitives, params and wiring are the same, and so are most leaves (variables, the
    data, cached constants): the same objects. So instead of building and hashing the
    structure key, ``matches`` walks the new tape once with identity checks: each argument
    is either the output of the entry the key names, or a leaf in the key's place. A leaf
    is the very object the key was made with (held weakly; a leaf's shape and dtype cannot
    change), or a new one of the same shape and dtype that nothing else on the tape is
    (the ones cotangent of an inner gradient, a constant made each step: the key numbers leaves by
    first use and records only their shapes and dtypes, so the key is the same). Anything
    else falls back to the key.
    """

    __slots__ = ("compiled", "plan", "leaf_refs", "leaf_types", "targets", "source_ids",
                 "sources", "derived")

    def __init__(self, compiled, key, entries, n, leaves, targets, sources):
        self.compiled, self.sources = compiled, sources
        self.derived = next((p[1] for p in key if p[0] == "derived"), ())
        self.plan = [(entries[k][0], key[k][1], entries[k][2]) for k in range(n)]
        self.leaf_refs = [weakref.ref(a) for a in leaves]
        self.leaf_types = [(a._value.shape, a._value.dtype) for a in leaves]
        self.targets = [(next(k for k in range(n) if id(entries[k][3]) == sid),
                         g._value.shape, g._value.dtype) for sid, g in targets.items()]
        self.source_ids = {sid for _, sid in sources}

    def matches(self, entries, n, targets, source_ids):
        """This tape's leaves, in the key's order, if its key is the remembered one's; else
        None."""
        if source_ids != self.source_ids or len(targets) != len(self.targets):
            return None
        refs_ = self.leaf_refs
        plan = self.plan
        got = [None] * len(refs_)  # the new tape's leaf in each place
        placed = set()  # ids of the leaves placed so far: a leaf fills one place only
        # plan has n entries: zip stops there (a persistent tape may hold more)
        for (prim, args, params, out), (pprim, refs, pparams) in zip(entries, plan):
            if prim is not pprim or type(out) is not Tensor or len(args) != len(refs) \
                    or (params != pparams if params or pparams else False):
                return None
            for a, r in zip(args, refs):
                if r >= 0:
                    if a is not entries[r][3]:
                        return None
                    continue
                i = -1 - r
                g = got[i]
                if g is not None:
                    if g is not a:
                        return None
                    continue
                if id(a) in placed:
                    return None
                if a is not refs_[i]():
                    v = getattr(a, "_value", None)
                    if type(a) not in (Tensor, Variable) or \
                            (v.shape, v.dtype) != self.leaf_types[i]:
                        return None
                got[i] = a
                placed.add(id(a))
        for (sid, g), (k, shape, dtype) in zip(targets.items(), self.targets):
            if id(entries[k][3]) != sid or type(g) is not Tensor \
                    or g._value.shape != shape or g._value.dtype != dtype:
                return None
        for r, sid in self.sources:  # the same ids, and in the same places
            if (id(entries[r][3]) if r >= 0 else id(got[-1 - r])) != sid:
                return None
        for k, name, j in self.derived:  # the pass reads these derived values off the tape
            if memo.derived_values(entries[k][3]).get(name) is not entries[j][3]:
                return None
        return got


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


def _values(entries, n, leaves, targets):
    vals = [a._value for a in leaves]
    vals += [entries[k][3]._value for k in range(n)]
    vals += [g._value for g in targets.values() if g is not None]
    return vals


def _call(compiled, entries, n, leaves, targets, n_sources):
    _hits[0] += 1
    r = compiled.fn(*_values(entries, n, leaves, targets))
    if len(compiled.outputs) == 1:
        r = (r,)
    results = [None] * n_sources
    wrap = Tensor._wrap
    for i, v in zip(compiled.outputs, r):
        results[i] = wrap(v)
    return results


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
            syms = [b.add_input(a._value.shape, a._value.dtype, f"x{i}")
                    for i, a in enumerate(leaves)]
            outs = [b.add_input(e[3]._value.shape, e[3]._value.dtype, f"y{k}")
                    for k, e in enumerate(entries[:n])]
            sym_targets, table = {}, {}
            for part in key:
                if part[0] == "derived":
                    for k, name, j in part[1]:
                        table.setdefault(id(outs[k]), (outs[k], {}))[1][name] = outs[j]
                if part[0] == "target":
                    k = part[1]
                    sym_targets[id(outs[k])] = (outs[k] if len(part) == 2 else
                                                b.add_input(part[2], part[3], "target_ct"))
            sym_entries = []
            for k in range(n):
                prim, _, params, _ = entries[k]
                ins = tuple(syms[-1 - r] if r < 0 else outs[r] for r in key[k][1])
                sym_entries.append((prim, ins, params, outs[k]))
            sym_sources = []
            for r in key[-1][1:]:
                if type(r) is int:
                    sym_sources.append(syms[-1 - r] if r < 0 else outs[r])
                else:  # off the tape: a stand-in that nothing depends on
                    sym_sources.append(b.add_input(r[0], r[1], "unused"))
            with memo.given(table):
                results = _run_pass(what, sym_entries, sym_targets, sym_sources)
            found = [i for i, r in enumerate(results) if r is not None]
            if not found:
                return None
            program = b.build([results[i] for i in found])
        program = check(optimize(program))
        fn, source = compile_program(program, "derivative")
    except Exception:  # noqa: BLE001 - any failure: this structure stays interpretive
        return None
    return _Compiled(fn, source, tuple(found))


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
