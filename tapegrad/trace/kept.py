"""Small buffers a generated function keeps between its calls.

A ufunc that allocates its result pays for the new array and for freeing it when the
function returns: on 16 float32 elements ``np.sin(x)`` takes ~260 ns where ``np.sin(x, b)``
into an existing array takes ~205 ns. W6's forward pass has 40 such allocations (each
``sin`` and ``+ 0.1`` of its 100-op chain: their inputs stay alive for the gradient), so
``plan`` picks, among the results that plain code would allocate, the buffers worth keeping;
the function takes a set of them at entry (``_kept = _keep.pop()``, a new set when none is
free: a concurrent or re-entrant call takes its own) and puts it back before it returns.

A fused product chain (``trace/fusion.py``) keeps its factors, and a stack of values that
are kept buffers becomes a kept block whose rows those buffers are: the forward pass writes
them in place, and the chain reads the block without joining or copying them (at most
``MAX_COPIES`` values that are not kept, an argument say, are copied into their rows). W6:
the stacks of its ``exp`` and ``tanh`` results.

The numbers are those of the allocating form: the same ufunc loop into memory of the same
shape and dtype. A kept buffer holds values that never leave the call: none is an output or
an update, and every equation that reads one is a ufunc or a fused chain or lane group
(which copy what they read), so no view, no helper and no caller ever holds it across
calls. Its layout (C order) can differ from the one NumPy would have chosen; no reader sees
layouts.

Cost model (``_pays``; measured on one core, interleaved, 16 float32 elements: kept/allocating
1.00 at 4 buffers, 0.97 at 8, 0.89 at 16, 0.85 at 40): a kept buffer saves ``SAVED`` ns, the
set costs ``FIXED`` ns per call (the pop, the unpacking, the append), so a set is kept from
``MIN_BUFFERS`` buffers. Only small ones are (``MAX_BYTES`` each,
``MAX_SET_BYTES`` a set): the saving is per call, the memory stays with the function.
"""
import numpy as np

from tapegrad.trace.emit_forms import ufunc_of
from tapegrad.trace.fusion import chain_stacks

MAX_BYTES = 16 << 10      # per kept buffer: beyond it the allocation is a small part of a call
MAX_SET_BYTES = 256 << 10  # per set: the memory a function keeps per concurrent call
SAVED = 42                # ns an allocation and its release cost more than a kept buffer
FIXED = 170               # ns per call for taking and returning the set
MIN_BUFFERS = FIXED // SAVED + 1
MAX_COPIES = 2            # values of a kept stack copied into its block per call (not kept)


def plan(program, reuse, plain, ren, chains=()):
    """The kept buffers of a program: a ``Layout``, or None where none pays.

    ``program``: the equations in the order the code runs them (fused chains and lane
    groups as their stand-in equations); ``reuse``: ``trace/reuse.py``'s plan (which
    equations write into which dead buffer); ``plain``: the indices emitted one line each;
    ``ren``: value -> name in the code; ``chains``: the fused chains (``trace/fusion.py``),
    whose factors and stacks can be kept too.
    """
    eqs = program.equations
    by_name = {n: v for v, n in ren.items()}
    buffer_of = {}   # value -> the value whose allocation made its buffer
    candidates = []  # equation indices that allocate a buffer worth keeping
    for i, e in enumerate(eqs):
        if i not in plain or len(e.outs) != 1:
            continue
        out = e.out
        if i in reuse:  # written into a dead value's buffer (a ufunc's or a matmul's)
            src = by_name.get(reuse[i][1])
            if src in buffer_of:
                buffer_of[out.name] = buffer_of[src]
            continue
        if ufunc_of(e.prim) is not None and out.ndim and not out.dtype.hasobject and \
                out.size * out.dtype.itemsize <= MAX_BYTES:
            buffer_of[out.name] = out.name
            candidates.append(i)
    bad = set()
    for v in list(program.outputs) + [v for _, v in program.updates]:
        if v.name in buffer_of:
            bad.add(buffer_of[v.name])
    for e in eqs:  # a reader that is no ufunc (a view, a helper, a matmul) may keep it
        if ufunc_of(e.prim) is None:
            for v in e.inputs:
                if v.name in buffer_of:
                    bad.add(buffer_of[v.name])
    lay = Layout()
    for i in candidates:
        out = eqs[i].out
        if out.name not in bad and lay.fits(out.shape, out.dtype):
            lay.eq_slot[i] = lay.add(("array", tuple(out.shape), out.dtype))
            lay.slot_of[out.name] = lay.eq_slot[i]
    for chain in chains:
        _place_chain(lay, chain, buffer_of)
    return lay if _pays(lay.saved) else None


class Layout:
    """What a function keeps: ``entries`` (per slot ``("array", shape, dtype)``, ``("row",
    block slot, row)`` or a block ``("array", ...)``), ``eq_slot`` (equation index -> the
    slot its result goes into), ``chains`` (``id(chain)`` -> ``{"factors": slot, stack
    index: (block slot, [(row, value)])}``, the rows copied in per call)."""

    def __init__(self):
        self.entries, self.eq_slot, self.slot_of, self.chains = [], {}, {}, {}
        self.bytes = 0
        self.saved = 0  # allocations (or stackings) a call saves

    def fits(self, shape, dtype):
        n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        if self.bytes + n > MAX_SET_BYTES:
            return False
        self.bytes += n
        return True

    def add(self, entry):
        self.entries.append(entry)
        if entry[0] == "array":
            self.saved += 1
        return len(self.entries) - 1


def _place_chain(lay, chain, buffer_of):
    """The chain's factors into a kept block; each stack whose values are kept buffers (all
    but ``MAX_COPIES``) into a kept block whose rows those buffers become: the stack is
    then the block, with no join and no copy of the kept rows."""
    out = chain.out
    placed = {}
    shape = (len(chain.factors),) + tuple(out.shape)
    if int(np.prod(shape)) * out.dtype.itemsize <= MAX_BYTES and lay.fits(shape, out.dtype):
        placed["factors"] = lay.add(("array", shape, out.dtype))
    _, _, stacks, _ = chain_stacks(chain)
    for j, s in enumerate(stacks):
        rows = [lay.slot_of.get(buffer_of.get(v)) for v in s]
        own = [r for r in rows if r is not None and lay.entries[r][0] == "array"]
        copies = [(k, v) for k, (v, r) in enumerate(zip(s, rows)) if r is None]
        if len(copies) > MAX_COPIES or len(set(own)) != len(own) or \
                len(own) != len(s) - len(copies) or len(own) < 2:
            continue
        row_bytes = out.size * out.dtype.itemsize
        if not lay.fits((len(copies) * row_bytes,), np.uint8):
            continue
        # (its kept rows were counted as arrays, its copied ones just now)
        block = lay.add(("array", (len(s),) + tuple(out.shape), out.dtype))
        for k, r in enumerate(rows):
            if r is not None:
                lay.entries[r] = ("row", block, k)
        placed[j] = (block, copies)
    if placed:
        lay.chains[id(chain)] = placed


def _pays(n_buffers):
    return n_buffers >= MIN_BUFFERS


def new_set(entries):
    """A fresh set of buffers for a ``Layout``'s entries: arrays, and rows of blocks."""
    made = [np.empty(e[1], e[2]) if e[0] == "array" else None for e in entries]
    for k, e in enumerate(entries):
        if e[0] == "row":
            made[k] = made[e[1]][e[2]]
    return tuple(made)


def prologue(keep, make, kept, slots, indent="    "):
    """Lines taking a set of buffers (named ``slots``) from the list named ``keep``, or a
    new one from ``make``; ``kept`` names the set."""
    return [f"{indent}try:  # small buffers kept between calls (trace/kept.py)",
            f"{indent}    {kept} = {keep}.pop()",
            f"{indent}except IndexError:",
            f"{indent}    {kept} = {make}()",
            f"{indent}{', '.join(slots)}, = {kept}"]
