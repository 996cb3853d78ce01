"""Compiled reverse passes for tapes that repeat.

A training loop records the same operations on a fresh tape at every step. The interpretive
reverse pass (``gradient_tape.backward``) then pays Python dispatch for every rule of every
step: on small arrays that is most of the time of a gradient. Here, once a tape *structure*
has been differentiated twice, its reverse pass is traced once into a program — with the
tracer of ``tapegrad.function``, so the rules are the primitives' own — optimised, compiled
to NumPy source, and reused: later tapes of that structure hand their saved arrays to the
generated code.

The structure key holds everything a rule sees besides array values: per entry, the
primitive, its params, the output shape, and where each argument comes from (an earlier
entry's output, or a leaf numbered by first use, with its shape and dtype); then where the
seeds and sources sit. Tracing itself guarantees that no rule branched on a value: such a
branch raises while tracing, and that structure stays interpretive for good.

Only first-order passes that nothing records use it (``backward``'s raw mode), so higher
derivatives, ``custom_gradient`` and control flow keep the interpretive path. Switch it off
with ``tapegrad.config.set_backward_cache(False)``.

>>> import tapegrad as tf
>>> clear()
>>> x = tf.constant([1.0, 2.0])
>>> for _ in range(3):  # the third gradient runs generated code
...     with tf.GradientTape() as g:
...         g.watch(x)
...         y = tf.reduce_sum(tf.sin(x) * x)
...     dx = g.gradient(y, x)
>>> len(cached_sources())
1
"""
import threading

from tapegrad import config
from tapegrad.core.dispatch import Primitive
from tapegrad.core.tensor import Tensor

# Sub-programs in params (control flow) are costly to hash and compare: those stay interpretive.
_UNCACHED = frozenset({"cond", "while_loop"})
MAX_ENTRIES = 4096   # longer tapes: the key would cost more than the pass saves
MAX_KEYS = 256       # structures remembered at once (oldest forgotten first)
_FAILED = "failed"   # a structure that could not be traced (stays interpretive)

_lock = threading.Lock()
_seen = {}           # cheap pre-key -> None: structures worth keying in full
_cache = {}          # full key -> number of sightings (int), _FAILED, or a _Compiled
_hits = [0]          # gradients computed by generated code (for tests and curiosity)


class _Compiled:
    __slots__ = ("fn", "source", "outputs")

    def __init__(self, fn, source, outputs):
        self.fn, self.source = fn, source
        self.outputs = outputs  # per program output: the index of its source in the key


def run(entries, n, seeds, source_ids):
    """Cotangents ``{source id: Tensor}`` by compiled code, or None: use the interpreter.

    ``entries[:n]``: the tape; ``seeds``: ``{id: Tensor}`` (concrete); ``source_ids``: a set.
    """
    if not config.backward_cache() or n == 0 or n > MAX_ENTRIES:
        return None
    pre = (n, entries[0][0], entries[n - 1][0], len(seeds))
    if pre not in _seen:
        # a structure seen for the first time is not keyed at all: one-off tapes pay ~nothing
        if len(_seen) >= MAX_KEYS:
            _seen.clear()
        _seen[pre] = None
        return None
    made = _key(entries, n, seeds, source_ids)
    if made is None:
        return None
    key, leaves, src_of = made
    try:
        hit = _cache.get(key)
    except TypeError:  # an unhashable param (an index array, a list): not cacheable
        return None
    if type(hit) is _Compiled:
        return _call(hit, entries, n, leaves, seeds, src_of)
    if hit is _FAILED:
        return None
    if hit is None:
        with _lock:
            if len(_cache) >= MAX_KEYS:
                del _cache[next(iter(_cache))]
            _cache[key] = 1
        return None
    compiled = _compile(entries, n, leaves, seeds, key)
    with _lock:
        _cache[key] = _FAILED if compiled is None else compiled
    if compiled is None:
        return None
    return _call(compiled, entries, n, leaves, seeds, src_of)


def _key(entries, n, seeds, source_ids):
    """``(key, leaves, sources by position)``, or None for a tape this cache does not take."""
    pos = {}
    leaves = []
    parts = []
    for k in range(n):
        prim, args, params, out = entries[k]
        if type(prim) is not Primitive or prim.name in _UNCACHED:
            return None
        refs = []
        for a in args:
            r = pos.get(id(a))
            if r is None:
                r = pos[id(a)] = -1 - len(leaves)
                leaves.append(a)
            refs.append(r)
        parts.append((prim, tuple(refs), tuple(params.items()) if params else (),
                      out._value.shape))
        pos[id(out)] = k
    for a in leaves:
        v = a._value
        parts.append((v.shape, v.dtype))
    for sid, g in seeds.items():
        k = pos.get(sid)
        if k is None or k < 0:  # a seed on a leaf or off the tape: rare, interpretive
            return None
        parts.append(("seed", k, g._value.shape, g._value.dtype))
    src_of = {}
    for sid in source_ids:
        r = pos.get(sid)
        if r is not None:
            src_of[r] = sid
    parts.append(("sources",) + tuple(sorted(src_of)))
    return tuple(parts), leaves, src_of


def _values(entries, n, leaves, seeds):
    vals = [a._value for a in leaves]
    vals += [entries[k][3]._value for k in range(n)]
    vals += [g._value for g in seeds.values()]
    return vals


def _call(compiled, entries, n, leaves, seeds, src_of):
    _hits[0] += 1
    r = compiled.fn(*_values(entries, n, leaves, seeds))
    if len(compiled.outputs) == 1:
        r = (r,)
    wrap = Tensor._wrap
    return {src_of[ref]: wrap(v) for ref, v in zip(compiled.outputs, r)}


def _compile(entries, n, leaves, seeds, key):
    """Trace the reverse pass of this structure on symbolic stand-ins; None if impossible."""
    # imported here: the compiler imports the ops, which import the tape
    from tapegrad.compile.codegen import compile_program
    from tapegrad.compile.tracer import GraphBuilder, tracing
    from tapegrad.ir import check, optimize
    from tapegrad.tape.gradient_tape import backward

    b = GraphBuilder("backward")
    try:
        with tracing(b):
            syms = [b.add_input(a._value.shape, a._value.dtype, f"x{i}")
                    for i, a in enumerate(leaves)]
            outs = [b.add_input(e[3]._value.shape, e[3]._value.dtype, f"y{k}")
                    for k, e in enumerate(entries[:n])]
            sym_seeds = {}
            for sid, g in seeds.items():
                k = _seed_entry(entries, n, sid)
                sym_seeds[id(outs[k])] = b.add_input(g._value.shape, g._value.dtype, "seed")
            sym_entries = []
            for k in range(n):
                prim, args, params, _ = entries[k]
                refs = key[k][1]
                ins = tuple(syms[-1 - r] if r < 0 else outs[r] for r in refs)
                sym_entries.append((prim, ins, params, outs[k]))
            positions = sorted(r for r in key[-1][1:])
            sym_src = {r: (syms[-1 - r] if r < 0 else outs[r]) for r in positions}
            cts = backward(sym_entries, sym_seeds, {id(s) for s in sym_src.values()})
            found = [r for r in positions if id(sym_src[r]) in cts]
            if not found:
                return None
            program = b.build([cts[id(sym_src[r])] for r in found])
        program = check(optimize(program))
        fn, source = compile_program(program, "backward")
    except Exception:  # noqa: BLE001 - any failure: this structure stays interpretive
        return None
    return _Compiled(fn, source, tuple(found))


def _seed_entry(entries, n, sid):
    for k in range(n):
        if id(entries[k][3]) == sid:
            return k
    raise KeyError(sid)


def cached_sources():
    """The generated sources of the compiled reverse passes (for inspection and tests)."""
    return [c.source for c in list(_cache.values()) if type(c) is _Compiled]


def hits():
    """How many reverse passes ran as generated code since the last ``clear()``."""
    return _hits[0]


def clear():
    """Forget every structure and compiled pass."""
    with _lock:
        _hits[0] = 0
        _seen.clear()
        _cache.clear()
