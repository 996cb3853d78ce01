"""Cache blocking for generated code: chains along a batch axis computed a block at a time.

Used by ``codegen.generate``: ``regions`` finds the chains worth blocking, ``schedule``
orders equations and loops, ``render_region`` writes a loop's source.
"""

from tapegrad.primitives.linalg import matmul_p
from tapegrad.primitives.shape import reshape_p
from tapegrad.trace.emit_forms import gemm_blocks, ufunc_of

# --------------------------------------------------------------------------
# A batched matmul whose result is large, followed by elementwise ops and a matmul that shrinks
# it again (the backward pass of a batch Jacobian: (B,m,k) cotangents through a layer), writes
# and re-reads every intermediate through main memory. Computed a few batch rows at a time, the
# intermediates stay in the L2 cache: W3's (16,512,256) chain ran ~6% faster (OpenBLAS, one
# thread). Only chains that are independent along their leading ("batch") axis are blocked:
# every value of the chain holds ``r`` rows of axis 0 per batch element (r = 1 before a reshape
# merges the batch into rows, 512 after (16,512,256) -> (8192,256)), so block [i:j] of the batch
# is rows [i*r:j*r] of each value; operands from outside either broadcast over that axis or are
# sliced along it.
BLOCK_MIN_BYTES = 2 << 20  # an intermediate of at least this size makes blocking pay (measured:
#                            no gain at 1 MB, 3% at 2 MB, 5-6% at 4-8 MB)
BLOCK_BYTES = 512 << 10    # the largest intermediate's block (measured best: 256 KB-1 MB)


class Region:
    """A chain of equations computed block by block over the leading axis of size ``n``."""

    def __init__(self, n):
        self.n = n
        self.eqs = []     # indices into program.equations, in order
        self.rows = {}    # value name -> rows of axis 0 per batch element
        self.trimmed = []  # trailing reshapes, computed on the whole result after the loop
        self.outputs = set()  # values needed after the loop: written to whole arrays
        self.block = self.biggest = 0  # batch rows a block; bytes of the largest intermediate


def _broadcasts(v, out):
    """Whether outside operand ``v`` is the same for every row of ``out``'s axis 0."""
    return v.ndim < out.ndim or v.shape[0] == 1


def _sliced(v, e):
    """Whether outside operand ``v`` of ``e`` is cut into blocks along axis 0 with the output.

    A matmul's 2-D operands are whole matrices (their axis 0 is not a batch axis).
    """
    return v.ndim == e.out.ndim and v.shape[0] == e.out.shape[0] and \
        (e.prim is not matmul_p or e.out.ndim >= 3)


def _blockable(e, region, n):
    """Rows per batch element of ``e``'s output if ``e`` can join ``region`` (else None)."""
    if len(e.outs) != 1 or not e.out.ndim or e.out.shape[0] % n:
        return None
    out, rows = e.out, region.rows
    inner = [v for v in e.inputs if v.name in rows]
    outer = [v for v in e.inputs if v.name not in rows]
    if e.prim is reshape_p:
        return out.shape[0] // n
    if e.prim is matmul_p:
        a, b = e.inputs
        if a.ndim < 2 or b.ndim < 2:
            return None
        if a.name in rows and b.name not in rows and b.ndim == 2:
            if gemm_blocks(a, b):  # matmul_2d's own blocks decide its bits: not ours
                return None
            return rows[a.name]  # rows of a times one matrix: row blocks
        if out.ndim < 3 or any(v.shape[0] != out.shape[0] or v.ndim != out.ndim for v in inner):
            return None  # otherwise axis 0 must be a batch axis of the product
    elif ufunc_of(e.prim) is None or any(v.ndim != out.ndim or v.shape[0] != out.shape[0]
                                       for v in inner):
        return None
    if all(_broadcasts(v, out) or _sliced(v, e) for v in outer):
        return out.shape[0] // n
    return None


def _starts_region(e):
    """Where a blocked chain can start: an equation making a large batched value from smaller
    ones, a batched matmul or a broadcasting elementwise op (axis 0 of size > 1 either way)."""
    if len(e.outs) != 1 or e.out.ndim < 3 or e.out.shape[0] < 2:
        return False
    out = e.out
    if e.prim is matmul_p:
        if any(v.ndim < 2 for v in e.inputs):
            return False
    elif ufunc_of(e.prim) is None or any(v.size >= out.size for v in e.inputs):
        return False
    return all(_broadcasts(v, out) or _sliced(v, e) for v in e.inputs)


def _grow(program, start):
    """The blocked chain starting at equation ``start``, or None where it does not pay."""
    eqs = program.equations
    n = eqs[start].out.shape[0]
    region = Region(n)
    region.eqs.append(start)
    region.rows[eqs[start].out.name] = 1
    for k in range(start + 1, len(eqs)):
        e = eqs[k]
        if not any(v.name in region.rows for v in e.inputs):
            continue  # independent: computed before the loop
        rows = _blockable(e, region, n)
        if rows is None:
            break  # this equation needs whole values: the loop must come before it
        region.eqs.append(k)
        region.rows[e.out.name] = rows
    # a reshape at the end costs nothing on the whole result: take it out of the loop
    inside = lambda k: {v.name for i in region.eqs if i != k for v in eqs[i].inputs}
    for k in reversed(region.eqs[1:]):
        if eqs[k].prim is reshape_p and eqs[k].out.name not in inside(k):
            region.eqs.remove(k)
            region.trimmed.insert(0, k)
            del region.rows[eqs[k].out.name]
        else:
            break
    outside = {v.name for v in program.outputs} | {v.name for _, v in program.updates}
    names = set(region.rows)
    region.outputs = {v.name for i, e in enumerate(eqs) if i not in region.eqs
                      for v in e.inputs if v.name in names} | (outside & names)
    nbytes = lambda v: v.size * v.dtype.itemsize
    internal = [eqs[k].out for k in region.eqs if eqs[k].out.name not in region.outputs]
    biggest = max(map(nbytes, internal), default=0)
    written = sum(nbytes(eqs[k].out) for k in region.eqs if eqs[k].out.name in region.outputs)
    # it pays where a large intermediate never reaches memory: the chain must shrink it
    if biggest < BLOCK_MIN_BYTES or written >= biggest:
        return None
    per_row = max(nbytes(v) // n for v in internal)
    region.block = max(1, BLOCK_BYTES // per_row)
    if region.block >= n:
        return None
    region.biggest = biggest
    return region


def regions(program):
    """The cache-blocked chains of ``program`` (see ``BLOCK_MIN_BYTES``), in order."""
    out, k = [], 0
    eqs = program.equations
    while k < len(eqs):
        region = _starts_region(eqs[k]) and _grow(program, k)
        if region:
            out.append(region)
            k = region.eqs[-1] + 1
        else:
            k += 1
    return out


def schedule(program, regions):
    """The emission order: equation indices, with each region as one item at its last one.

    Equations between a region's first and last one do not depend on it (``_grow`` stops at
    the first that would), so they run before the loop; the trimmed reshapes right after it.
    """
    at = {r.eqs[-1]: r for r in regions}
    skip = {k for r in regions for k in r.eqs + r.trimmed}
    order = []
    for k in range(len(program.equations)):
        if k in at:
            order.append(at[k])
            order.extend(at[k].trimmed)
        elif k not in skip:
            order.append(k)
    return order


def render_region(region, program, ren, gen, indent="    "):
    """Source lines of the cache-blocked loop computing ``region``."""
    eqs = program.equations
    n, blk = region.n, region.block
    i, j = gen.reserve("i"), gen.reserve("j")
    exact = n % blk == 0
    rows = region.rows

    def bounds(r):
        return (i, j) if r == 1 else (f"{i} * {r}", f"{j} * {r}")

    def sliced(name, r):
        lo, hi = bounds(r)
        return f"{name}[{lo}:{hi}]"

    # where each value's block lives: its slice of a whole output, or a preallocated buffer
    last = {}
    for p, k in enumerate(region.eqs):
        for v in eqs[k].inputs:
            last[v.name] = p
    root, root_end, expr = {}, {}, {}
    head, body, free, key, live = [], [], {}, {}, set()
    for k in region.eqs:
        v = eqs[k].out
        if v.name in region.outputs:
            head.append(f"{ren[v.name]} = np.empty({v.shape}, {v.dtype.name!r})")
    for p, k in enumerate(region.eqs):
        e = eqs[k]
        out, r = e.out, rows[e.out.name]
        args = [expr[v.name] if v.name in rows else sliced(ren[v.name], r) if _sliced(v, e)
                else ren[v.name] for v in e.inputs]
        if e.prim is reshape_p:
            call = f"{args[0]}.reshape({(-1,) + out.shape[1:]})"  # the method: no dispatch
            root[out.name] = root.get(e.inputs[0].name)
        else:
            fn = "matmul" if e.prim is matmul_p else ufunc_of(e.prim).__name__
            target = sliced(ren[out.name], r) if out.name in region.outputs else None
            if target is None and e.prim is not matmul_p:
                for v in e.inputs:  # in place into an input whose buffer dies here
                    b = root.get(v.name)
                    if b is not None and root_end[b] == p and \
                            (v.shape, v.dtype) == (out.shape, out.dtype):
                        target, root[out.name] = expr[v.name], b
                        break
            if target is None:
                shape = (blk * r,) + out.shape[1:]
                k_ = (shape, out.dtype.name)
                if free.get(k_):
                    b = free[k_].pop()
                else:
                    b = gen("blk")
                    key[b] = k_
                    head.append(f"{b} = np.empty({shape}, {out.dtype.name!r})")
                live.add(b)
                root[out.name] = b
                target = b if exact else \
                    f"{b}[:{j} - {i}]" if r == 1 else f"{b}[:({j} - {i}) * {r}]"
            call = f"np.{fn}({', '.join(args)}, out={target})"
        if out.name in region.outputs:
            whole = sliced(ren[out.name], r)
            body.append(f"{whole}[...] = {call}" if e.prim is reshape_p else call)
            expr[out.name] = whole
            root.pop(out.name, None)
        else:
            body.append(f"{ren[out.name]} = {call}")
            expr[out.name] = ren[out.name]
        b = root.get(out.name)
        if b is not None:  # a buffer is in use until the last use of any view of it
            root_end[b] = max(root_end.get(b, p), last.get(out.name, p))
        for b in [b for b in live if root_end[b] == p]:
            live.discard(b)
            free.setdefault(key[b], []).append(b)
    names = [ren[eqs[k].out.name] for k in region.eqs]
    size = f"{region.biggest / 2**20:.1f} MB" if region.biggest >= 2**20 else \
        f"{region.biggest / 2**10:.1f} KB"
    comment = [
        f"# cache-blocked loop over axis 0 ({n} rows, {blk} at a time): {names[0]} .. "
        f"{names[-1]} are",
        f"# computed block by block so the intermediates (up to {size}) stay in the L2 cache",
    ]
    step = f"{j} = {i} + {blk}" if exact else f"{j} = min({i} + {blk}, {n})"
    loop = [f"for {i} in range(0, {n}, {blk}):", f"    {step}"] + ["    " + s for s in body]
    return [indent + s for s in comment + head + loop]


