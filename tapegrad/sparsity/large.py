"""Sparsity at scale: dependency patterns as ``scipy.sparse`` matrices, sparse colouring,
and compressed Jacobians compiled once — for problems of 100,000 variables and more.

``detect`` keeps a dense boolean array per value (``n`` times its size), which is exact and
fast up to a few thousand variables. Here each value's dependencies are a CSR matrix of
shape ``(size(value), n)``, so the cost follows the number of structural nonzeros. The rules
are by the kind each primitive's block states (``Primitive.sparsity``), each exact or
conservative (a pattern may over-count, never miss):

- elementwise primitives: an output element depends on the elements it is computed from
  (broadcasting as index maps);
- copies (getitem, reshape, transpose, broadcast_to, concat, pad, take, take_along_axis,
  diag_part): the primitive itself applied to element *numbers* says which input element
  each output element copies;
- scatter-adds (index_add, take_add, put_along_axis_add), the transposes of copies: the
  copy's index map read backwards;
- reductions along axes, and matmul: a 0/1 connection matrix times the dependencies;
- anything else: every output element depends on everything any input depends on.

>>> import numpy as np, tapegrad as tf
>>> f = tf.function(lambda x: x[1:] * x[:-1] - tf.reduce_sum(x[:2]))
>>> prog = f.get_concrete_function(tf.TensorSpec([5], tf.float64)).program
>>> program_pattern(prog).toarray().astype(int).tolist()
[[1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 0, 1, 1]]
"""
import math

import numpy as np

LIMIT = 50_000_000  # structural nonzeros one equation may produce before we give up


class TooLarge(Exception):
    """The pattern would exceed ``LIMIT`` nonzeros in one step."""


def _sp():
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("sparsity at scale needs SciPy: pip install 'tapegrad[scipy]'") \
            from None
    return sp


def _bool(m):
    m = m.tocsr()
    m.data = np.ones_like(m.data, dtype=bool)
    m.eliminate_zeros()
    return m


def _connect(rows, cols, shape):
    """A 0/1 CSR matrix with ones at (rows[k], cols[k]) (entries with col < 0 dropped)."""
    sp = _sp()
    rows, cols = np.asarray(rows).ravel(), np.asarray(cols).ravel()
    keep = cols >= 0
    return sp.csr_matrix((np.ones(int(keep.sum()), np.float32), (rows[keep], cols[keep])),
                         shape=shape)


def _apply(conn, deps):
    out = conn @ deps.astype(np.float32)
    if out.nnz > LIMIT:
        raise TooLarge
    return _bool(out)


def _numbers(shape, offset=0):
    """Element numbers 1.. (0 means "no element"), as float64: copies move them exactly."""
    size = math.prod(shape)
    return np.arange(offset + 1, offset + size + 1, dtype=np.float64).reshape(shape)


def _copy_map(prim, ins, deps, consts, params):
    """For a copy: the flat source number (0: none) of each output element, and the deps
    stacked in the same numbering."""
    args, stack, offset = [], [], 0
    for v, d in zip(ins, deps):
        if d is not None:
            args.append(_numbers(v.shape, offset))
            stack.append(d)
            offset += v.size
        elif v.dtype.kind in "fc":
            args.append(np.zeros(v.shape, np.float64))
        elif consts.get(v.name) is not None:
            args.append(np.asarray(consts[v.name]))  # indices: where they point
        else:
            return None  # traced indices: unknown until run time
    if "constant_values" in params:
        params = dict(params, constant_values=0)
    src = np.asarray(prim.impl(*args, **params))
    return np.rint(src).astype(np.int64).ravel(), stack


def _elementwise(e, deps):
    out_shape = e.outs[0].shape
    acc = None
    for v, d in zip(e.inputs, deps):
        if d is None:
            continue
        idx = np.broadcast_to(np.arange(v.size).reshape(v.shape), out_shape).ravel()
        part = d[idx]
        acc = part if acc is None else acc + part
    return _bool(acc)


def _copy(e, deps, consts):
    m = _copy_map(e.prim, e.inputs, deps, consts, e.kwargs)
    if m is None:
        return None
    src, stack = m
    total = sum(d.shape[0] for d in stack)
    return _apply(_connect(np.arange(src.size), src - 1, (src.size, total)),
                  _sp().vstack(stack).tocsr())


def _scatter(e, deps, consts):
    from tapegrad.core.dispatch import PRIMITIVES
    out = e.outs[0]
    kw = dict(e.kwargs)
    kw.pop("shape", None)
    kw.pop("size", None)
    g, *rest = e.inputs
    if deps[0] is None or any(d is not None for d in deps[1:]):
        return None
    idx = [np.asarray(consts[v.name]) if consts.get(v.name) is not None else None for v in rest]
    if any(i is None for i in idx):
        return None
    # the copy this scatter transposes, applied to the *output's* element numbers
    src = np.rint(np.asarray(PRIMITIVES[e.prim.transposes].impl(
        _numbers(out.shape), *idx, **kw))).astype(np.int64).ravel()
    if src.size != g.size:
        return None
    # output element src[k] - 1 receives g's element k
    return _apply(_connect(src - 1, np.arange(g.size), (out.size, g.size)).tocsr(), deps[0])


def _reduction(e, deps):
    (v,), (d,) = e.inputs, deps
    axis = e.kwargs.get("axis")
    axes = tuple(range(len(v.shape))) if axis is None else tuple(
        a % len(v.shape) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    idx = np.moveaxis(np.arange(v.size).reshape(v.shape), axes,
                      tuple(range(len(v.shape) - len(axes), len(v.shape))))
    group = math.prod(v.shape[a] for a in axes)
    idx = idx.reshape(-1, group)
    rows = np.repeat(np.arange(idx.shape[0]), group)
    return _apply(_connect(rows, idx, (idx.shape[0], v.size)), d)


def _matmul(e, deps):
    a, b = e.inputs
    if len(a.shape) < 2 or len(b.shape) < 2:
        return None
    out = e.outs[0]
    p = a.shape[-1]
    ia = np.arange(a.size).reshape(a.shape)[..., :, None, :]         # (..., m, 1, p)
    ib = np.swapaxes(np.arange(b.size).reshape(b.shape), -1, -2)[..., None, :, :]  # (..., 1, q, p)
    acc = None
    for d, idx, size in ((deps[0], ia, a.size), (deps[1], ib, b.size)):
        if d is None:
            continue
        cols = np.broadcast_to(idx, out.shape + (p,)).reshape(out.size, p)
        rows = np.repeat(np.arange(out.size), p)
        part = _apply(_connect(rows, cols, (out.size, size)), d)
        acc = part if acc is None else _bool(acc + part)
    return acc


def _union(e, deps):
    sp = _sp()
    u = None
    for d in deps:
        if d is not None:
            col = _bool(d).sum(axis=0).A1 > 0
            u = col if u is None else u | col
    cols = np.flatnonzero(u)
    m = max(1, sum(v.size for v in e.outs) // max(1, len(e.outs)))
    if m * cols.size > LIMIT:
        raise TooLarge
    outs = []
    for v in e.outs:
        rows = np.repeat(np.arange(v.size), cols.size)
        outs.append(sp.csr_matrix((np.ones(rows.size, bool), (rows, np.tile(cols, v.size))),
                                  shape=(v.size, u.size)))
    return outs


def _rule(e, deps, consts):
    kind = e.prim.sparsity
    if len(e.outs) == 1:
        if kind == "elementwise":
            return [_elementwise(e, deps)]
        if kind in ("copy", "copy_along_axis"):
            r = _copy(e, deps, consts)
        elif kind in ("scatter", "scatter_along_axis"):
            r = _scatter(e, deps, consts)
        elif kind == "reduction":
            r = _reduction(e, deps)
        elif kind == "matmul":
            r = _matmul(e, deps)
        else:
            r = None
        if r is not None:
            return [r]
    return _union(e, deps)


def program_pattern(program, wrt=0, output=0):
    """The pattern of ``d outputs[output] / d inputs[wrt]`` as a boolean CSR matrix of shape
    ``(size(output), size(input))``; raises ``TooLarge`` past ``LIMIT`` nonzeros."""
    sp = _sp()
    x = program.inputs[wrt]
    n = x.size
    env = {x.name: sp.identity(n, dtype=bool, format="csr")}
    consts = program.const_values()
    for e in program.equations:
        if getattr(e.prim, "nondiff", False):
            continue
        deps = [env.get(v.name) for v in e.inputs]
        if all(d is None for d in deps):
            continue
        for v, d in zip(e.outs, _rule(e, deps, consts)):
            if d is not None and np.dtype(v.dtype).kind in "fc":
                env[v.name] = d
    y = program.outputs[output]
    d = env.get(y.name)
    return d if d is not None else sp.csr_matrix((y.size, n), dtype=bool)


def greedy_colouring(pattern):
    """Distance-2 colours of the columns of a sparse pattern (columns sharing a row differ):
    greedy, in natural, in largest-first and in SciPy's own (random, but reproducible) column order,
    whichever needs fewest colours.

    SciPy's order is the grouping its finite differences use
    (``scipy.optimize._numdiff.group_columns``), so this never needs more colours than it.
    SciPy's compiled grouping does the work when it is there (a hundred times faster than
    first fit in Python); first fit in Python is the fallback.
    """
    sp = _sp()
    p = sp.csc_matrix(pattern, dtype=np.float32)
    n = p.shape[1]
    group = _scipy_grouping()
    if group is not None:
        # a column's degree in the conflict graph is at most its column count times the
        # longest row it meets; that bound orders as well and needs no p.T @ p
        rows = np.diff(sp.csr_matrix(p).indptr)
        weight = np.asarray(abs(p).T @ rows.astype(np.float64)).ravel()
        orders = (np.arange(n), np.argsort(-weight, kind="stable"), 0)
        candidates = (group(p, order=o) for o in orders)
    else:  # pragma: no cover - SciPy without its private grouping
        conflict = (p.T @ p).tocsr()
        conflict.setdiag(0)
        conflict.eliminate_zeros()
        degree = np.diff(conflict.indptr)
        candidates = (_first_fit(conflict.indptr, conflict.indices, o, n)
                      for o in (np.arange(n), np.argsort(-degree, kind="stable")))
    best = None
    for colours in candidates:
        colours = np.asarray(colours, np.int64)
        if best is None or colours.max(initial=-1) < best.max(initial=-1):
            best = colours
    return best


def _scipy_grouping():
    try:
        from scipy.optimize._numdiff import group_columns
    except ImportError:  # pragma: no cover - a private name; SciPy may move it
        return None
    return group_columns


def _first_fit(indptr, indices, order, n):
    colours = np.full(n, -1, np.int64)
    mark = np.full(n + 1, -1, np.int64)  # mark[c] == j: colour c is taken next to column j
    for j in order:
        nb = colours[indices[indptr[j]:indptr[j + 1]]]
        mark[nb[nb >= 0]] = j
        c = 0
        while mark[c] == j:
            c += 1
        colours[j] = c
    return colours


def directions(colours, dtype=np.float64):
    """The ``(c, n)`` tangent directions: row ``k`` sums the unit vectors of colour ``k``."""
    c = int(colours.max(initial=-1)) + 1
    s = np.zeros((c, colours.size), dtype)
    s[colours, np.arange(colours.size)] = 1
    return s


def decompress(pattern, colours, compressed):
    """The sparse Jacobian from ``compressed`` (``(c, m)``: ``J @ directions.T``, transposed)."""
    return Decompressor(pattern, colours)(compressed)


class Decompressor:
    """``compressed -> J`` as SciPy CSR for one pattern and colouring, the CSR structure and
    the gather index computed once (a solver asks for many Jacobians of one pattern).

    >>> import numpy as np, scipy.sparse as sp
    >>> d = Decompressor(sp.csr_matrix(np.eye(3, dtype=bool)), np.zeros(3, np.int64))
    >>> d(np.array([[1.0, 2.0, 3.0]])).toarray().diagonal().tolist()
    [1.0, 2.0, 3.0]
    """

    def __init__(self, pattern, colours):
        sp = _sp()
        p = sp.csr_matrix(pattern, dtype=bool, copy=True)
        p.sum_duplicates()  # canonical: sorted, no duplicates
        self.shape, self.indices, self.indptr = p.shape, p.indices, p.indptr
        rows = np.repeat(np.arange(p.shape[0]), np.diff(p.indptr))
        # compressed[k, i] holds J[i, j] for the column j of colour k in row i
        self.gather = np.asarray(colours)[p.indices] * p.shape[0] + rows

    def __call__(self, compressed):
        data = np.asarray(compressed).reshape(-1)[self.gather]
        # fresh index arrays per matrix: a caller may modify what it is given
        return _sp().csr_matrix((data, self.indices.copy(), self.indptr.copy()),
                                shape=self.shape)
