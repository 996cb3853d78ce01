"""Small buffers a generated function keeps between its calls.

A ufunc that allocates its result pays for the new array and for freeing it when the
function returns: on 16 float32 elements ``np.sin(x)`` takes ~260 ns where ``np.sin(x, b)``
into an existing array takes ~205 ns. W6's forward pass has 40 such allocations (each
``sin`` and ``+ 0.1`` of its 100-op chain: their inputs stay alive for the gradient), so
``plan`` picks, among the results that plain code would allocate, the buffers worth keeping;
the function takes a set of them at entry (``_kept = _keep.pop()``, a new set when none is
free: a concurrent or re-entrant call takes its own) and puts it back before it returns.

The numbers are those of the allocating form: the same ufunc loop into memory of the same
shape and dtype. A kept buffer holds values that never leave the call: none is an output or
an update, and every equation that reads one is a ufunc or a fused chain or lane group
(which copy what they read), so no view, no helper and no caller ever holds it across
calls. Its layout (C order) can differ from the one NumPy would have chosen; no reader sees
layouts.

Cost model (``_pays``; measured on one core, interleaved medians): a kept buffer saves
``SAVED`` ns, the set costs ``FIXED`` ns per call (the pop, the unpacking, the append), so a
set is kept from ``MIN_BUFFERS`` buffers. Only small ones are (``MAX_BYTES`` each,
``MAX_SET_BYTES`` a set): the saving is per call, the memory stays with the function.
"""
import numpy as np

from tapegrad.trace.emit_forms import ufunc_of

MAX_BYTES = 16 << 10      # per kept buffer: beyond it the allocation is a small part of a call
MAX_SET_BYTES = 256 << 10  # per set: the memory a function keeps per concurrent call
SAVED = 55                # ns an allocation and its release cost (16 float32: 260 vs 205 ns)
FIXED = 200               # ns per call for taking and returning the set
MIN_BUFFERS = FIXED // SAVED + 1


def plan(program, reuse, plain, ren):
    """``{equation index: buffer slot}``: the plain equations whose result goes into a
    kept buffer, and the slots' ``(shape, dtype)``.

    ``program``: the equations in the order the code runs them (fused chains and lane
    groups as their stand-in equations); ``reuse``: ``trace/reuse.py``'s plan (which
    equations write into which dead buffer); ``plain``: the indices emitted one line each;
    ``ren``: value -> name in the code.
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
    slots, specs, total = {}, [], 0
    for i in candidates:
        out = eqs[i].out
        if out.name in bad or total + out.size * out.dtype.itemsize > MAX_SET_BYTES:
            continue
        total += out.size * out.dtype.itemsize
        slots[i] = len(specs)
        specs.append((tuple(out.shape), out.dtype))
    if not _pays(len(specs)):
        return {}, []
    return slots, specs


def _pays(n_buffers):
    return n_buffers >= MIN_BUFFERS


def new_set(specs):
    """A fresh set of buffers for ``specs`` (``[(shape, dtype)]``)."""
    return tuple(np.empty(shape, dtype) for shape, dtype in specs)


def prologue(keep, make, kept, slots, indent="    "):
    """Lines taking a set of buffers (named ``slots``) from the list named ``keep``, or a
    new one from ``make``; ``kept`` names the set."""
    return [f"{indent}try:  # small buffers kept between calls (trace/kept.py)",
            f"{indent}    {kept} = {keep}.pop()",
            f"{indent}except IndexError:",
            f"{indent}    {kept} = {make}()",
            f"{indent}{', '.join(slots)}, = {kept}"]
