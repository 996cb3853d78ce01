"""Lanes for generated code: the same elementwise computation on several arrays, done once
on their concatenation.

An optimizer step updates every variable by one elementwise formula (Adam: twelve
operations per variable); on small variables each NumPy call costs more than its
arithmetic. ``lane_groups`` finds connected elementwise computations of the same structure
(the same operations in the same order, the same scalar operands, the array operands of
each of one shape, shapes differing between lanes); ``render_group`` concatenates their
array inputs (flattened, one ``np.concatenate(..., axis=None)`` per input), computes each
operation once, and hands each lane its slice of every value used afterwards (a view).

Exactly the interpreter's numbers: an elementwise operation computes each element as it
would alone (``tests/test_lanes.py`` compares bit for bit, with NaN, inf and -0.0).

The state stays flat between calls: a variable updated by a group holds a view of the
group's new flat array. The next call's concatenation of those values is that array itself
(``joined``: each value must still be the very view handed back), read, never written;
anything assigned in between is concatenated again. Only inputs of the program (arguments,
captured variables) are looked up so. A value the program assigns to captured variables
(an optimizer's slots and weights) goes into the flat array of two calls ago where nothing
else holds it or its views any more (``spare``: reference counts, measured at import), and
hands back those same views: no new array, no new views, the variables' memory cycles
between two flat arrays per kind (W9's compiled step ~0.96x).

Cost model (``_pays``, in small-ufunc calls, measured on one core): a group saves one call
per operation per extra lane, and costs per array input a concatenation (``CONCAT_BASE``
plus ``CONCAT_ITEM`` per lane), per value handed back a view per lane (``VIEW_ITEM``), and
``COPY_BYTE`` per byte copied; at most ``MAX_BYTES`` are concatenated. W9's Adam (six
variables, 5,313 weights) ran 0.92x the step time.
"""
import sys
from operator import is_
from sys import getrefcount

import numpy as np

from tapegrad.ir.core import Equation
from tapegrad.primitives.elementwise import mul_p
from tapegrad.trace.emit_forms import out_arg, ufunc_of

CONCAT_BASE = 1.0
CONCAT_ITEM = 0.4
VIEW_ITEM = 0.7
COPY_BYTE = 0.3 / 4096
MAX_BYTES = 1 << 20


def joined(memo, parts, hint=None):
    """The flattened concatenation of ``parts``: the flat array a group handed them out of,
    where they are exactly the views it handed back last call (``memo``: per handed-back
    value, ``(flat, views)``), else a new array. ``hint``: the entry to try first (the one
    whose values the program assigns to these variables)."""
    if hint is not None:
        entry = memo[hint]
        if entry is not None and len(entry[1]) == len(parts) and all(map(is_, parts, entry[1])):
            return entry[0]
    for entry in memo:
        if entry is not None and len(entry[1]) == len(parts):
            for a, b in zip(parts, entry[1]):
                if a is not b:
                    break
            else:
                return entry[0]
    return np.concatenate(parts, axis=None)


class Group:
    """``lanes``: per lane, its equation indices in order; ``leaves``: per lane, its array
    inputs by position; ``scalars``: the 0-d inputs all lanes share; ``live``: positions (in
    a lane's equation list) of the values used after the group; ``at``: where it runs."""

    def __init__(self, sig, lanes):
        self.sig = sig
        self.lanes = lanes   # [(eq indices, leaves, live vars)]
        self.at = None

    def equations(self):
        return [k for ks, _, _ in self.lanes for k in ks]

    def pseudo(self, program):
        """A stand-in equation for buffer liveness: reads every input, makes every value
        used afterwards."""
        eqs = program.equations
        ins, seen = [], set()
        for ks, leaves, _ in self.lanes:
            for v in list(leaves) + [x for k in ks for x in eqs[k].inputs if x.ndim == 0]:
                if v.name not in seen:
                    seen.add(v.name)
                    ins.append(v)
        outs = tuple(v for _, _, live in self.lanes for v in live)
        return Equation(mul_p, tuple(ins), (), outs)


def _candidate(e):
    out = e.outs[0]
    return (len(e.outs) == 1 and ufunc_of(e.prim) is not None and not e.params
            and out.ndim >= 1 and not out.dtype.hasobject
            and all(v.ndim == 0 or tuple(v.shape) == tuple(out.shape) for v in e.inputs))


def lane_groups(program, where, skip=()):
    """The groups of ``program`` worth computing on concatenated lanes.

    ``where``: each equation's position in the emission order (an equation inside a loop or
    a fused chain: that item's); ``skip``: equations that are not emitted on their own."""
    eqs = program.equations
    made_by = {v.name: k for k, e in enumerate(eqs) for v in e.outs}
    cand = {k for k, e in enumerate(eqs) if k not in skip and _candidate(e)}
    parent = {k: k for k in cand}

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for k in sorted(cand):
        for v in eqs[k].inputs:
            d = made_by.get(v.name)
            if d in cand and v.ndim:
                parent[find(d)] = find(k)
    comps = {}
    for k in sorted(cand):
        comps.setdefault(find(k), []).append(k)
    users = {}  # value -> equations using it (len(eqs): returned)
    for k, e in enumerate(eqs):
        for v in e.inputs:
            users.setdefault(v.name, []).append(k)
    for v in list(program.outputs) + [v for _, v in program.updates]:
        users.setdefault(v.name, []).append(len(eqs))
    by_sig = {}
    for ks in comps.values():
        sig, leaves, live = _describe(ks, eqs, users)
        by_sig.setdefault(sig, []).append((ks, leaves, live))
    groups = []
    for sig, lanes in by_sig.items():
        if len(lanes) < 2 or not _pays(sig, lanes):
            continue
        g = Group(sig, lanes)
        if _place(g, eqs, made_by, users, where):
            groups.append(g)
    return groups


def _describe(ks, eqs, users):
    """A component's signature (shape-free), its array inputs and the values used after it."""
    pos = {eqs[k].out.name: i for i, k in enumerate(ks)}
    inside = set(ks)
    leaves, leaf_no, desc = [], {}, []
    for k in ks:
        e = eqs[k]
        refs = []
        for v in e.inputs:
            if v.name in pos:
                refs.append(("e", pos[v.name]))
            elif v.ndim == 0:
                refs.append(("s", v.name))
            else:
                if v.name not in leaf_no:
                    leaf_no[v.name] = len(leaves)
                    leaves.append(v)
                refs.append(("l", leaf_no[v.name], v.dtype.str))
        desc.append((e.prim.name, e.out.dtype.str, tuple(refs)))
    live = [eqs[k].out for k in ks if any(u not in inside for u in users.get(eqs[k].out.name, ()))]
    sig = (tuple(desc), tuple(pos[v.name] for v in live))
    return sig, leaves, live


def _pays(sig, lanes):
    m = len(lanes)
    n_eqs = len(sig[0])
    n_leaves = len(lanes[0][1])
    nbytes = sum(v.size * v.dtype.itemsize for _, leaves, _ in lanes for v in leaves)
    if nbytes > MAX_BYTES:
        return False
    saved = (m - 1) * n_eqs
    cost = n_leaves * (CONCAT_BASE + m * CONCAT_ITEM) + len(sig[1]) * m * VIEW_ITEM \
        + COPY_BYTE * nbytes
    return saved > cost


def _place(group, eqs, made_by, users, where):
    """Where the group can run: after every input is made, before any use of its values
    outside it (``group.at``: the position in the emission order it runs before)."""
    inside = set(group.equations())
    end = max(where.values(), default=-1) + 1
    first_use, ready = end, -1
    for ks, _, live in group.lanes:
        for v in live:
            for u in users.get(v.name, ()):
                if u not in inside:
                    first_use = min(first_use, where.get(u, end))
        for k in ks:
            for v in eqs[k].inputs:
                d = made_by.get(v.name)
                if d is not None and d not in inside:
                    ready = max(ready, where[d])
    if ready >= first_use:
        return False
    group.at = first_use
    return True


def render_group(group, program, ren, ns, gen, indent="    ", written=None):
    """The source lines computing the group's values, one call per operation.
    ``written``: {input position: the flat array its producers wrote into}
    (``trace/lane_inputs.py``), where no concatenation is needed."""
    eqs = program.equations
    ks0 = group.lanes[0][0]
    n_leaves = len(group.lanes[0][1])
    sizes = [eqs[ks[0]].out.size for ks, _, _ in group.lanes]
    lines = [f"# {len(group.lanes)} lanes of the same {len(ks0)} elementwise operations, "
             f"computed once on their concatenation (trace/lanes.py)"]
    given = {v.name for v in program.inputs + program.captures}
    hints = _hints(group, program)
    memo = gen("_flat")
    ns[memo] = [None] * len(group.sig[1])
    cycled = _cycled(group, program)  # memo entry -> its pairs of two calls ago
    if cycled:
        spares = gen("_spares")
        ns[spares] = [[] for _ in group.sig[1]]
        claimed = {group.sig[1][n]: (n, gen("_spare")) for n in cycled}
    flat, borrowed = [], set()
    for j in range(n_leaves):
        if written and j in written:
            flat.append(written[j])
            continue
        name = gen("_lane")
        args = ", ".join(ren[leaves[j].name] for _, leaves, _ in group.lanes)
        if all(leaves[j].name in given for _, leaves, _ in group.lanes):
            hint = f", {hints[j]}" if j in hints else ""
            lines.append(f"{name} = joined({memo}, ({args},){hint})  # maybe last call's flat array")
            borrowed.add(("l", j))  # read only: it may hold the variables' values
        else:
            lines.append(f"{name} = np.concatenate(({args},), axis=None)")
        flat.append(name)
    # a concatenation, or a value not handed back, is free after its last use here: the
    # operation using it last writes into it (out=) where the dtypes agree
    kept = {("e", p) for p in group.sig[1]}
    last = {}
    for i, (_, _, refs) in enumerate(group.sig[0]):
        for r in refs:
            if r[0] in "el":
                last[r[:2]] = i
    dtype_of = {("l", j): v.dtype for j, v in enumerate(group.lanes[0][1])}
    dtype_of.update({("e", i): eqs[k].out.dtype for i, k in enumerate(ks0)})
    names = {}
    for i, (k, (_, _, refs)) in enumerate(zip(ks0, group.sig[0])):
        e = eqs[k]
        args = [names[r[1]] if r[0] == "e" else flat[r[1]] if r[0] == "l" else ren[r[1]]
                for r in refs]
        target = None
        for r, a in zip(refs, args):
            key = r[:2]
            if r[0] in "el" and last.get(key) == i and key not in kept \
                    and key not in borrowed and dtype_of[key] == e.out.dtype:
                target = a
                del last[key]
                break
        ufunc = ufunc_of(e.prim)
        out = f", {out_arg(ufunc, target)}" if target else ""
        if cycled and i in claimed:  # into the flat array of two calls ago, where free
            n, sp = claimed[i]
            lines.append(f"{sp} = spare({spares}[{n}])")
            out = f", {out_arg(ufunc, f'{target or None} if {sp} is None else {sp}[0]')}"
        names[i] = gen("_lane")
        lines.append(f"{names[i]} = np.{ufunc.__name__}({', '.join(args)}{out})")
    offsets = [0]
    for s in sizes:
        offsets.append(offsets[-1] + s)
    for n, p in enumerate(group.sig[1]):
        outs, views = [], []
        for lane, (ks, _, _) in enumerate(group.lanes):
            v = eqs[ks[p]].out
            a, b = offsets[lane], offsets[lane + 1]
            view = f"{names[p]}[{a}:{b}]"
            if v.ndim != 1:
                view += f".reshape({tuple(v.shape)})"
            outs.append(ren[v.name])
            views.append(view)
        if n not in cycled:
            lines.append(f"{', '.join(outs)} = {', '.join(views)}")
            lines.append(f"{memo}[{n}] = ({names[p]}, ({', '.join(outs)},))")
            continue
        sp = claimed[p][1]
        lines += [f"if {sp} is None:",
                  f"    {', '.join(outs)} = {', '.join(views)}",
                  f"    {sp} = ({names[p]}, ({', '.join(outs)},))",
                  "else:  # the views it holds, now of the new values",
                  f"    {', '.join(outs)}, = {sp}[1]",
                  f"if {memo}[{n}] is not None:  # free at the next call, unless held",
                  f"    {spares}[{n}].append({memo}[{n}])",
                  f"{memo}[{n}] = {sp}"]
    return [indent + s for s in lines]


def _hints(group, program):
    """``{leaf position: memo entry}`` where, in every lane, that array input is a captured
    variable the program assigns that entry's value (an optimizer's slot or weight)."""
    eqs = program.equations
    captures = [v.name for v in program.captures]
    assigned = {captures[i]: v.name for i, v in program.updates}
    hints = {}
    for j in range(len(group.lanes[0][1])):
        for n, p in enumerate(group.sig[1]):
            if all(assigned.get(leaves[j].name) == eqs[ks[p]].out.name
                   for ks, leaves, _ in group.lanes):
                hints[j] = n
                break
    return hints


def _cycled(group, program):
    """The memo entries whose values the program assigns to captured variables in every
    lane (an optimizer's slots and weights): their flat arrays come back free two calls
    later, when the variables hold the next call's views (``spare``)."""
    if _FREE is None:
        return set()
    eqs = program.equations
    assigned = {v.name for _, v in program.updates}
    return {n for n, p in enumerate(group.sig[1])
            if all(eqs[ks[p]].out.name in assigned for ks, _, _ in group.lanes)}


def spare(spares):
    """The ``(flat array, views)`` pair a group handed back two calls ago, claimed from
    ``spares`` (a list of at most one; ``list.pop`` is atomic), where nothing else holds the
    array or any of its views now: the group then writes its new values into that array and
    hands back the same views. Else None (the pair is dropped).

    Reference counts say so exactly, as ``_FREE`` measured them on a pair only the list
    held: a variable still holding a view, a tensor or snapshot of it, a view of a view (it
    holds the flat array as its base), a memoryview, each adds one. Its values are then
    never written over: a step writes only into memory no one else can see.

    >>> flat = np.zeros(3)
    >>> pair = (flat, (flat[0:1], flat[1:3]))
    >>> held = pair[1][0]
    >>> spare([pair]) is None, spare([]) is None
    (True, True)
    >>> del held, flat
    >>> spare([pair]) is pair
    True
    """
    try:
        entry = spares.pop()
    except IndexError:
        return None
    return entry if _FREE is not None and _counts(entry) == _FREE else None


def _counts(entry):
    """The references to a pair's flat array beyond its views' and to each view, as seen
    here (the same code for the measurement and every check)."""
    flat, views = entry
    return getrefcount(flat) - len(views), set(map(getrefcount, views))


def _calibrate():
    """``_counts`` of a pair nothing else holds, or None where the counts do not show
    every holder (then nothing is reused): the interpreter's own reference counting
    decides, so it is measured, not assumed."""
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None  # free-threaded CPython: counts are not exact
    flat = np.zeros(6)
    entry = (flat, (flat[0:2], flat[2:6].reshape(2, 2)))
    del flat
    free = _counts(entry)
    checks = []
    held = entry[1][1]
    checks.append(_counts(entry))
    del held
    sub = entry[1][0][1:]  # a view of a view: its base is the flat array
    checks.append(_counts(entry))
    del sub
    whole = entry[0]
    checks.append(_counts(entry))
    del whole
    if _counts(entry) != free or any(c == free for c in checks) or len(free[1]) != 1:
        return None
    return free


_FREE = _calibrate()
