"""A lane group's inputs written in place: the equations that make a group's array inputs
write their results straight into the group's flat array, instead of the group copying
them into it with ``np.concatenate``.

An optimizer step (``trace/lanes.py``) concatenates each variable's gradient into one flat
array before its elementwise update. The gradients are made by matmuls (``x.T @ g``, the
weight gradients) and row sums (``ones @ g``, the bias gradients) just before; each can
write its result into its slice of a flat array allocated once, before the first of them
(``np.empty``), so the concatenation and its copy go away: W9's compiled Adam step (six
variables, 5,313 weights) ~0.97x its time.

Where (``plan``): every lane's value at that input position is made by a plain line (a
ufunc, a 2-D float matmul, a row sum over a float matrix), it has one dtype in every lane,
nothing but the group reads it (no output, no update, no other equation: the group may
write its own values over the flat array) and no other group input is that value. No cost
model: the flat array is allocated where the concatenation allocated it, and every
producer's call is the one it made before with an ``out=``; where one lane's value does
not qualify, the group concatenates that input as before.

The numbers are the producers' own: a ufunc writes each element as it would into a new
array, a matmul's BLAS call is the same into any C-contiguous buffer (``trace/reuse.py``
relies on the same), and the row sum is the same ``ones @ x`` product with an ``out=``.
``tests/test_lane_inputs.py`` compares them bit for bit with the interpreter.
"""
import numpy as np

from tapegrad.primitives import reductions
from tapegrad.trace.emit_forms import (matmul_into, merged_rows, out_arg, row_sum_into,
                                       row_sum_into_ok, ufunc_of)
from tapegrad.trace.lanes import Group
from tapegrad.trace.reuse import matmul_into_ok


class Direct:
    """``into``: producer position -> (key, start, stop, shape); ``allocs``: position ->
    [(key, size, dtype)] to allocate before it; ``leaves``: id(group) -> {leaf j: key}."""

    def __init__(self):
        self.into, self.allocs, self.leaves = {}, {}, {}


def plan(order, program, pos, consts):
    """The group inputs written in place (a ``Direct``), for the emission ``order``
    (equation indices, loops, chains, groups); ``pos``: equation index -> position in the
    order the code runs; ``consts``: constant values by name (merged rows' rule)."""
    eqs = program.equations
    made_by = {v.name: k for k, e in enumerate(eqs) for v in e.outs}
    plain = {k for k in order if isinstance(k, int)}
    users = {}
    for k, e in enumerate(eqs):
        for v in e.inputs:
            users.setdefault(v.name, set()).add(k)
    outs = {v.name for v in program.outputs} | {v.name for _, v in program.updates}
    groups = [g for g in order if isinstance(g, Group)]
    leaf_count = {}
    for g in groups:
        for _, leaves, _ in g.lanes:
            for v in leaves:
                leaf_count[v.name] = leaf_count.get(v.name, 0) + 1
    d = Direct()
    for g in groups:
        inside = set(g.equations())
        for j in range(len(g.lanes[0][1])):
            vals = [leaves[j] for _, leaves, _ in g.lanes]
            dtype = vals[0].dtype
            ok = all(v.dtype == dtype and v.name not in outs and leaf_count[v.name] == 1
                     and users.get(v.name, set()) <= inside
                     and made_by.get(v.name) in plain
                     and _writable(eqs[made_by[v.name]], made_by, eqs, consts)
                     for v in vals)
            if not ok:
                continue
            key = (id(g), j)
            start, first = 0, None
            for v in vals:
                p = pos[made_by[v.name]]
                d.into[p] = (key, start, start + v.size, tuple(int(s) for s in v.shape))
                start += v.size
                first = p if first is None else min(first, p)
            d.allocs.setdefault(first, []).append((key, start, dtype))
            d.leaves.setdefault(id(g), {})[j] = key
    return d


def _writable(e, made_by, eqs, consts):
    """Whether ``e``'s line can write its result into a given C-contiguous buffer."""
    if len(e.outs) != 1 or e.out.dtype.hasobject or e.out.ndim == 0 or \
            not all(isinstance(s, (int, np.integer)) for s in e.out.shape):
        return False
    if ufunc_of(e.prim) is not None:
        return merged_rows(e, consts) is None
    if e.prim is reductions.reduce_sum_p:
        return row_sum_into_ok(e)
    return matmul_into_ok(e, {v.name: eqs[made_by[v.name]] for v in e.inputs
                              if v.name in made_by})


def form(e, eqs, ren, ns, made_by, buf):
    """The code of ``e`` writing its result into ``buf`` (an expression naming a view of the
    flat array of its result's shape)."""
    names = [ren[v.name] for v in e.inputs]
    ufunc = ufunc_of(e.prim)
    if ufunc is not None:
        return f"np.{ufunc.__name__}({', '.join(names)}, {out_arg(ufunc, buf)})"
    if e.prim is reductions.reduce_sum_p:
        return row_sum_into(e, ren, ns, buf)
    return matmul_into(e, made_by, ren, buf, ns)


def view(name, start, stop, shape):
    """The slice of flat array ``name`` that a producer writes into.

    >>> view("_lane0", 1024, 1088, (64,)), view("_lane0", 0, 1024, (16, 64))
    ('_lane0[1024:1088]', '_lane0[0:1024].reshape((16, 64))')
    """
    text = f"{name}[{start}:{stop}]"
    return text if len(shape) == 1 else f"{text}.reshape({shape})"
