"""Fused product chains for generated code: many small multiplies become one reduce.

A reverse pass through a chain of elementwise operations multiplies its cotangent by one
local derivative per operation: ``ct1 = ct0 * cos(x1)``, ``ct2 = ct1 * c``, ``ct3 = ct2 * (1 -
y*y)``... On small arrays each of those NumPy calls costs far more than its arithmetic
(W6: 16 elements, ~0.3 us a call). ``chains`` finds such chains; ``render_chain`` writes the
factors into the rows of one stacked array and multiplies them with one
``np.multiply.reduce(_, axis=0)``. Factors computed by the same small elementwise
expression (``cos(x)`` of twenty different ``x``) are computed once, on their stacked
inputs, straight into their rows.

Exactly the interpreter's numbers: the reduce over axis 0 runs the same binary multiply
``acc = acc * row`` per element, row after row, so every product is rounded in the
interpreter's order (a product is only ever reassociated by *that* order; ``a * b`` and ``b *
a`` round alike); an elementwise function of a stacked array computes each element as it
would alone (``tests/test_fusion.py`` checks both, bit for bit, with NaN, inf and -0.0).
Stacks that hold the same arrays in a run are one stack read through slices (``_merged``), and
the factors' rows are written with positional outputs.

Cost model (``_pays``; measured on one core, interleaved medians, float32 and float64), in
units of one small ufunc call (~0.3 us): fusing saves a call per multiply and per
expression computed stacked instead of alone, and costs a fixed ``FIXED`` (the stacked
array, the reduce), ``STACK_ITEM`` per array copied into a stack, ``REDUCE_ROW`` per factor
of the reduce, and ``COPY_BYTE`` per byte copied. Leaf-only products pay from ~10 factors on
16 elements, ~18 on 1024 (measured: 12 factors 0.88x at 16 elements, 1.10x at 1024). The
stacked factors must also stay in the L2 cache (``MAX_BYTES``): W6's chain of 100 operations
runs 0.5-0.6x the time of the plain code up to 1024 elements (320 KB of factors), 1.0x at
2048 (640 KB).
"""
import numpy as np

from tapegrad.ir.core import Equation
from tapegrad.primitives.elementwise import mul_p
from tapegrad.trace.blocking import Region
from tapegrad.trace.emit_forms import out_arg, ufunc_of
from tapegrad.trace.lanes import lane_groups

FIXED = 6.0             # the stacked array, the reduce, its slices (in small-ufunc calls)
STACK_ITEM = 0.3        # per array copied into a stack (measured ~0.25)
STACK_BASE = 1.0        # per stacking call
REDUCE_ROW = 0.05       # per factor of the reduce
COPY_BYTE = 0.3 / 4096  # per byte copied (~0.1 ns a float32 element)
MAX_BYTES = 256 << 10   # the stacked factors of one chain at most (L2-resident)
MAX_DEPTH = 4           # how deep a factor's expression is followed


def stacked(parts):
    """``np.array(parts)`` of arrays of one shape and dtype, read-only: one bytes join where
    all are C-contiguous (20 arrays of 16 float32: ~2.5x faster), else ``np.array``."""
    try:
        data = b"".join(parts)
    except (TypeError, BufferError):
        return np.array(parts)
    # the array made on the bytes at once (frombuffer + reshape took 0.7 of the join's time)
    return np.ndarray((len(parts),) + parts[0].shape, parts[0].dtype, data)


class Chain:
    """``out = f0 * f1 * ... * f[k-1]`` (in this order), computed by one reduce.

    ``links``: the multiply equations (indices); ``removed``: those and the equations of
    the expressions computed stacked, none of which is emitted on its own; ``factors``: per
    factor ``(signature, leaves)``; ``groups``: ``{signature: [row, ...]}`` in row order."""

    def __init__(self, out):
        self.out = out
        self.links, self.factors, self.removed = [], [], []
        self.groups = {}
        self.exprs = {}  # signature -> the expression tree of its first member (for rendering)

    @property
    def last(self):
        return self.links[-1]

    def pseudo(self, program):
        """A stand-in equation for buffer liveness: reads every leaf, makes ``out``."""
        seen = {}
        for _, leaves in self.factors:
            for v in leaves:
                seen.setdefault(v.name, v)
        return Equation(mul_p, tuple(seen.values()), (), (self.out,))


# float16 is not: where the reduced axis is contiguous (one-element factors) NumPy reduces
# half floats in a float32 accumulator, rounding once instead of after every multiply.
_EXACT = (np.dtype(np.float32), np.dtype(np.float64))


def _same(v, out):
    return tuple(v.shape) == tuple(out.shape) and v.dtype == out.dtype


def fused_order(order, program):
    """The emission order ``order`` (equation indices and loops) with each fused product
    chain as one item where its last multiply was, and each group of lanes
    (``trace/lanes.py``) as one item before the first use of its values; the equations
    those compute themselves are taken out."""
    in_loops = {k for item in order if isinstance(item, Region) for k in item.eqs}
    found = chains(program, skip=in_loops)
    at = {c.last: c for c in found}
    gone = {k for c in found for k in c.removed}
    order = [at.get(item, item) for item in order
             if isinstance(item, Region) or item in at or item not in gone]
    where, plain = {}, set()
    for p, item in enumerate(order):
        ks = item.eqs if isinstance(item, Region) else item.removed \
            if isinstance(item, Chain) else [item]
        for k in ks:
            where[k] = p
        if not isinstance(item, (Region, Chain)):
            plain.add(item)
    groups = lane_groups(program, where, set(range(len(program.equations))) - plain)
    if not groups:
        return order
    members = {k for g in groups for k in g.equations()}
    before = {}
    for g in groups:
        before.setdefault(g.at, []).append(g)
    out = []
    for p, item in enumerate(order):
        out.extend(before.get(p, ()))
        if isinstance(item, (Region, Chain)) or item not in members:
            out.append(item)
    out.extend(before.get(len(order), ()))
    return out


def chains(program, skip=()):
    """The product chains of ``program`` worth fusing (equations in ``skip`` are not used)."""
    eqs = program.equations
    # scalars the program does not compute: constants, and 0-d inputs (a tape's leaves,
    # which the derivative cache passes in): a factor row is filled from them by broadcasting
    consts = {c.var.name for c in program.constants} | {
        v.name for v in list(program.inputs) + list(program.captures) if v.ndim == 0}
    uses = {}
    for e in eqs:
        for v in e.inputs:
            uses[v.name] = uses.get(v.name, 0) + 1
    for v in list(program.outputs) + [v for _, v in program.updates]:
        uses[v.name] = uses.get(v.name, 0) + 2  # escapes: never an intermediate
    made_by = {v.name: k for k, e in enumerate(eqs) for v in e.outs}

    def operand(v, out):
        return _same(v, out) or (v.ndim == 0 and v.name in consts and v.dtype == out.dtype)

    def is_link(e):
        out = e.outs[0]
        return (ufunc_of(e.prim) is np.multiply and not e.params and len(e.inputs) == 2
                and len(e.outs) == 1 and out.dtype in _EXACT and out.ndim >= 1
                and all(operand(v, out) for v in e.inputs)
                and any(_same(v, out) for v in e.inputs))

    open_at = {}  # output name of a chain's last link -> the chain
    found = []
    for k, e in enumerate(eqs):
        if k in skip or not is_link(e):
            continue
        a, b = e.inputs
        chain = None
        if a.name != b.name:
            for mine, other in ((a, b), (b, a)):
                c = open_at.get(mine.name)
                if c is not None and uses.get(mine.name) == 1:
                    chain, new = c, [other]
                    del open_at[mine.name]
                    break
        if chain is None:
            chain, new = Chain(e.out), [a, b]
            found.append(chain)
        chain.links.append(k)
        chain.out = e.out
        chain.factors.extend(new)
        open_at[e.out.name] = chain
    # a chain too short to pay even with free factors leaves its multiplies to be part of
    # the expressions of another's factors
    out = [c for c in found if _fits(c) and len(c.links) > FIXED]
    fused = set(skip) | {k for c in out for k in c.links}
    for c in out:
        _plan(c, eqs, made_by, uses, consts, fused)
    return [c for c in out if _pays(c)]


def _fits(chain):
    out = chain.out
    return len(chain.factors) * out.size * out.dtype.itemsize <= MAX_BYTES


def _pays(chain):
    """Whether the fused chain saves more (in small-ufunc calls) than it costs."""
    saved = len(chain.links)
    stacked = copied = 0
    row = chain.out.size * chain.out.dtype.itemsize
    for sig, rows in chain.groups.items():
        if sig[0] == "leaf":
            stacked += len(rows)
            copied += len(rows) * row
        elif sig[0] == "op":
            tree, n = chain.exprs[sig], len(chain.factors[rows[0]][1])
            saved += _nodes(tree) * (len(rows) - 1)
            stacked += n * len(rows)
            copied += n * len(rows) * row
    cost = FIXED + STACK_ITEM * stacked + REDUCE_ROW * len(chain.factors) + COPY_BYTE * copied
    return saved > cost


def _expression(v, out, eqs, made_by, uses, consts, skip, depth=0):
    """``(tree, eq indices)`` of the elementwise expression computing factor ``v`` from its
    leaves, followed through values used only there; a leaf is ``("leaf", var)``."""
    if v.name in consts and v.ndim == 0:
        return ("const", v), []
    k = made_by.get(v.name)
    if k is None or k in skip or depth >= MAX_DEPTH or uses.get(v.name) != 1:
        return ("leaf", v), []
    e = eqs[k]
    if ufunc_of(e.prim) is None or e.params or len(e.outs) != 1 or not _same(e.out, out) \
            or not all(_same(x, out) or (x.ndim == 0 and x.name in consts
                                         and x.dtype == out.dtype) for x in e.inputs):
        return ("leaf", v), []
    kids, ks = [], [k]
    for x in e.inputs:
        t, more = _expression(x, out, eqs, made_by, uses, consts, skip, depth + 1)
        kids.append(t)
        ks += more
    return ("op", e, tuple(kids)), ks


def _signature(tree, leaves):
    """The tree with leaves numbered by first appearance (constants by name)."""
    if tree[0] == "leaf":
        v = tree[1]
        if v.name not in leaves:
            leaves[v.name] = (len(leaves), v)
        return ("leaf", leaves[v.name][0])
    if tree[0] == "const":
        return ("const", tree[1].name)
    return ("op", tree[1].prim.name, tuple(_signature(t, leaves) for t in tree[2]))


def _nodes(tree):
    return 0 if tree[0] != "op" else 1 + sum(_nodes(t) for t in tree[2])


def _group_pays(tree, n_leaves, members, row_bytes):
    """Whether computing ``members`` copies of an expression once on stacked inputs saves
    more calls than stacking its ``n_leaves`` inputs costs."""
    saved = _nodes(tree) * (members - 1)
    return saved > n_leaves * (STACK_BASE + members * (STACK_ITEM + COPY_BYTE * row_bytes))


def _plan(chain, eqs, made_by, uses, consts, skip):
    """Each factor's signature and leaves; which expressions are computed stacked."""
    out = chain.out
    trees = []
    for v in chain.factors:
        tree, ks = _expression(v, out, eqs, made_by, uses, consts, skip)
        leaves = {}
        sig = _signature(tree, leaves)
        trees.append((v, tree, ks, sig, [lv for _, lv in sorted(leaves.values())]))
    count = {}
    for t in trees:
        count[t[3]] = count.get(t[3], 0) + 1
    for row, (v, tree, ks, sig, leaves) in enumerate(trees):
        if tree[0] == "op" and not _group_pays(tree, len(leaves), count[sig],
                                               out.size * out.dtype.itemsize):
            tree, ks, sig, leaves = ("leaf", v), [], ("leaf", 0), [v]
        if tree[0] == "const":
            leaves = [tree[1]]
        chain.factors[row] = (sig, leaves)
        chain.groups.setdefault(sig, []).append(row)
        chain.exprs.setdefault(sig, tree)
        chain.removed += ks
    chain.removed += chain.links


def _rows(rows, ns, gen):
    """Source selecting ``rows`` of axis 0: a slice where they are evenly spaced."""
    if len(rows) == 1:
        return str(rows[0]), True
    step = rows[1] - rows[0]
    if step > 0 and all(b - a == step for a, b in zip(rows, rows[1:])):
        stop = rows[-1] + 1
        return f"{rows[0]}:{stop}" + (f":{step}" if step != 1 else ""), True
    name = gen("_rows")
    ns[name] = np.array(rows, dtype=np.intp)
    return name, False


def _merged(seqs):
    """Stacks for the name sequences ``seqs``, sharing where they overlap: ``(stacks,
    windows)``, each window ``(stack index, start)`` of its sequence. A sequence that is a
    window of a stack, or overlaps its start or end, is a slice of it: a slice costs less
    than the stacking call and copies it saves (the gradient of ``sin`` reads its input,
    that of the ``exp`` before it its output: W6's two stacks of 20 share 19 arrays)."""
    stacks = []
    for seq in seqs:
        for j, s in enumerate(stacks):
            if _window(s, seq) is not None:
                break
            k = _overlap(s, seq)
            if k:
                stacks[j] = s + seq[k:]
                break
            k = _overlap(seq, s)
            if k:
                stacks[j] = seq + s[k:]
                break
        else:
            stacks.append(list(seq))
    windows = []
    for seq in seqs:
        windows.append(next((j, at) for j, s in enumerate(stacks)
                            for at in [_window(s, seq)] if at is not None))
    return stacks, windows


def _window(s, seq):
    """Where ``seq`` starts as a contiguous part of ``s``, or None."""
    n = len(seq)
    for at in range(len(s) - n + 1):
        if s[at:at + n] == seq:
            return at
    return None


def _overlap(a, b):
    """The longest ``k`` with ``a[-k:] == b[:k]`` (0 if none)."""
    for k in range(min(len(a), len(b)) - 1, 0, -1):
        if a[-k:] == b[:k]:
            return k
    return 0


def chain_stacks(chain):
    """``(reads, stacks, windows)``: per group, the value names each operand position reads
    (one name: no stack needed); the stacks they are read from (value names, ``_merged``);
    each stacked sequence's window."""
    reads = []
    for sig, rows in chain.groups.items():
        members = [chain.factors[r][1] for r in rows]
        n = 1 if sig[0] == "const" else len(members[0])
        reads.append([[m[pos].name for m in members] for pos in range(n)])
    seqs = [names for group in reads for names in group if len(set(names)) > 1]
    stacks, windows = _merged(seqs)
    return reads, seqs, stacks, windows


def render_chain(chain, ren, ns, gen, indent="    ", placed=None):
    """The source lines computing ``chain.out``. ``placed``: from ``trace/kept.py``, the
    buffer name of the factors (else a new array) and, per stack index, ``(block name,
    [(row, value)])``: a kept block whose rows already hold the stack's values but those
    listed, which are copied in."""
    out = chain.out
    placed = placed or {}
    shape = (len(chain.factors),) + tuple(out.shape)
    lines = [f"# product of {len(chain.factors)} factors in order, one multiply.reduce "
             f"(trace/fusion.py)"]
    d = placed.get("factors")
    if d is None:
        d = gen("_factors")
        lines.append(f"{d} = np.empty({shape}, {out.dtype.name!r})")
    reads, seqs, stacks, windows = chain_stacks(chain)
    names = []
    for j, s in enumerate(stacks):
        if j in placed:
            block, copies = placed[j]
            names.append(block)
            lines += [f"{block}[{row}] = {ren[v]}" for row, v in copies]
            continue
        names.append(gen("_stack"))
        lines.append(f"{names[-1]} = stacked(({', '.join(ren[v] for v in s)},))")
    source = {}
    for seq, (j, at) in zip(seqs, windows):
        whole = at == 0 and len(seq) == len(stacks[j])
        source[tuple(seq)] = names[j] if whole else f"{names[j]}[{at}:{at + len(seq)}]"
    for (sig, rows), group in zip(chain.groups.items(), reads):
        sel, view = _rows(rows, ns, gen)
        args = [(source[tuple(seq)], True) if tuple(seq) in source else (ren[seq[0]], False)
                for seq in group]
        if sig[0] in ("leaf", "const"):
            lines.append(f"{d}[{sel}] = {args[0][0]}")
            continue
        target = f"{d}[{sel}]" if view else None
        expr, _ = _render_tree(chain.exprs[sig], args, ren, target, lines, gen)
        if target is None:
            lines.append(f"{d}[{sel}] = {expr}")
    lines.append(f"{ren[out.name]} = np.multiply.reduce({d}, axis=0)")
    return [indent + s for s in lines]


def _render_tree(tree, stacks, ren, target, lines, gen, leaves=None, temps=None):
    """``(source, stacked)`` of the expression on the leaves ``stacks`` (per leaf
    ``(source, stacked)``; ``stacked``: whether it has the members' leading axis, where a
    leaf is not the same array for all); the root writes into ``target``, an inner node into the
    stacked temporary of one of its operands (each is read once: the tree follows values
    used only there), else into a new one."""
    if leaves is None:
        leaves, temps = {}, set()
        _signature(tree, leaves)
    if tree[0] == "leaf":
        return stacks[leaves[tree[1].name][0]]
    if tree[0] == "const":
        return ren[tree[1].name], False
    kids = [_render_tree(t, stacks, ren, None, lines, gen, leaves, temps) for t in tree[2]]
    args = ", ".join(a for a, _ in kids)
    is_stacked = any(st for _, st in kids)
    ufunc = ufunc_of(tree[1].prim)
    fn = ufunc.__name__
    if target is not None:
        lines.append(f"np.{fn}({args}, {out_arg(ufunc, target)})")
        return target, is_stacked
    temp = next((a for a, st in kids if st and a in temps), None)
    if temp is not None:
        temps.discard(temp)
        lines.append(f"np.{fn}({args}, {out_arg(ufunc, temp)})")
        name = temp
    else:
        name = gen("_part")
        lines.append(f"{name} = np.{fn}({args})")
    if is_stacked:
        temps.add(name)
    return name, is_stacked
