"""Vectorized Jacobians over a recorded tape, in reverse or forward mode.

Reverse mode runs the backward pass once with a *batched* cotangent: rows of an identity
matrix, carried as a ``BatchedTensor``; every derivative rule then works on all rows at once
through the batching rules. Forward mode replays the tape with batched tangents. ``auto``
picks the mode with fewer rows: forward when the sources have fewer elements than the
targets. Rows are processed in chunks so that one chunk stays within
``config.memory_budget()``; a chunk of one row runs unbatched.

Only the entries on a path from a source to a target are replayed (``_Path``). A tape that
was recording while a ``vmap`` ran holds each batched operation twice: as the operation on
``BatchedTensor`` s and as the plain operation on the stacked values that the batching rule
ran. Values leave a ``vmap`` as stacked values, so only the plain records lead to a target;
records of a ``vmap`` that has ended are skipped outright.
"""
import math

import numpy as np

from tapegrad.primitives.api import broadcast_to, concat, expand_dims, reshape, transpose, zeros
from tapegrad import config
from tapegrad.core import hooks
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, holds_size
from tapegrad.tape.rules import jvp_of
from tapegrad.batching.interpreter import BatchedTensor, _batched, batch_level

MODES = ("auto", "forward", "reverse")
_wrap = Tensor._wrap


# -- arguments ------------------------------------------------------------------------------
def check_mode(mode):
    """'auto' (also for None), 'forward' or 'reverse'; anything else is a ValueError."""
    if mode is None:
        return "auto"
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"Unknown Jacobian mode {mode!r}; expected one of {MODES}.")
    return mode


def check_chunk_size(chunk_size):
    """None or a positive int; anything else (0, -1, 2.5, True, '4') is a ValueError."""
    if chunk_size is None:
        return None
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) \
            or chunk_size <= 0:
        raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size!r}.")
    return int(chunk_size)


def choose_mode(mode, n_in, n_out):
    """Forward mode costs one pass per input element, reverse one per output element."""
    if mode == "auto":
        return "forward" if n_in < n_out else "reverse"
    return mode


def _size(shape):
    return math.prod(shape)


def _is_float(x):
    return x.dtype.kind in "fc"


# -- the entries between sources and targets ----------------------------------------------------
class _Path:
    """The tape entries on a path from a source to a target, and the passes over them."""

    def __init__(self, entries, source_ids, target_ids):
        level = STATE.stack.batch_level
        live = set(source_ids)
        fwd = []
        for e in entries:
            out = e[3]
            if type(out) is BatchedTensor and out._level > level:
                continue  # recorded inside a vmap that has ended
            for a in e[1]:
                if id(a) in live:
                    live.add(id(out))
                    fwd.append(e)
                    break
        need = set(target_ids)
        path = []
        for e in reversed(fwd):
            if id(e[3]) in need:
                path.append(e)
                for a in e[1]:
                    if id(a) in live:
                        need.add(id(a))
        path.reverse()
        self.entries, self.live = path, live
        self.connected = need & live  # targets and sources joined by the path
        self._frees = None

    def widest(self):
        return max([math.prod(e[3].shape) for e in self.entries], default=1)

    def backward(self, target_cts, source_ids):
        """Cotangents of ``source_ids`` (id -> tensor) given the targets' (id -> cotangent)."""
        from tapegrad.tape.backward import backward
        return backward(self.entries, target_cts, source_ids, live=self.live)

    def forward(self, tangents, want_ids):
        """Tangents of ``want_ids`` given tangents (id -> tensor); dead tangents are freed."""
        if self._frees is None:
            self._frees = self._dead_after(want_ids)
        tans = dict(tangents)
        for (prim, args, params, out), dead in zip(self.entries, self._frees):
            ts = [tans.get(id(a)) for a in args]
            if ts.count(None) < len(ts):
                t = jvp_of(prim, args, params, out, ts)
                if t is not None:
                    tans[id(out)] = t
            for k in dead:
                tans.pop(k, None)
        return tans

    def _dead_after(self, keep):
        last = {}
        for k, e in enumerate(self.entries):
            for a in e[1]:
                last[id(a)] = k
        frees = [[] for _ in self.entries]
        for i, k in last.items():
            if i not in keep:
                frees[k].append(i)
        return frees


# -- chunking ---------------------------------------------------------------------------------
_FLOOR = 32 << 20  # a chunk may always use this much: small results get one pass
_SMALL = 1 << 20   # a pass this small is never split (and the budget is not even asked)


def auto_chunk(widest, n_rows, itemsize=8, result_size=0):
    """Rows per chunk so that one chunk's batched intermediates stay small.

    A chunk of ``k`` rows holds a few batched values of the widest intermediate at once
    (the basis rows, the value being computed, cotangents or tangents of its inputs), about
    ``k * 4 * widest * itemsize`` bytes. That must fit ``config.memory_budget()``, and also
    the size of the result itself (at least 32 MB): then the peak memory of a large
    Jacobian is a small multiple of the result, whatever the budget. Chunks are balanced
    (20 rows in chunks of at most 15 gives 10 + 10, not 15 + 5).
    """
    per_row = 4 * max(1, widest) * itemsize
    if n_rows * per_row <= _SMALL:
        return n_rows
    allowed = min(config.memory_budget(), max(_FLOOR, result_size * itemsize))
    most = max(1, min(n_rows, allowed // per_row))
    n_chunks = -(-n_rows // most)
    return -(-n_rows // n_chunks)


def _chunks(n, size):
    for start in range(0, n, size):
        yield start, min(n, start + size)


def _basis(n, start, stop, dtype):
    """Rows start..stop of the n x n identity, as an array of shape (stop - start, n)."""
    rows = np.zeros((stop - start, n), dtype=dtype)
    rows.ravel()[start::n + 1] = 1  # element (r, start + r) sits at start + r (n + 1)
    return rows


def _broadcast_basis(rows, shape):
    """``rows`` repeated over the batch; staged in a trace whose batch size is symbolic
    (trace/symbolic.py), so that the program holds for every batch size."""
    if STATE.stack.tracers and holds_size(shape):
        from tapegrad.trace.symbolic import ctx_of
        basis = ctx_of(shape).broadcast(rows, shape, rows.dtype)
        if basis is not None:
            return basis
    return np.broadcast_to(rows, shape)


def _run_rows(fn, basis, k):
    """``fn(basis_tensor)`` for basis directions (cotangents or tangents) with a leading
    axis of ``k`` rows.

    Returns a list of results with that leading axis (None where ``fn`` gave None). One row
    runs without the batching interpreter.
    """
    basis = basis if isinstance(basis, Tensor) else _wrap(basis)
    if k == 1:
        outs = fn(basis[0] if basis._symbolic else _wrap(basis._value[0]))
        return [None if o is None else _lead(o) for o in outs]
    with batch_level() as lvl:
        outs = fn(_batched(basis, lvl))
        res = []
        for o in outs:
            if o is None:
                res.append(None)
            elif type(o) is BatchedTensor and o._level == lvl:
                res.append(o._val)
            else:  # did not depend on the basis
                res.append(broadcast_to(expand_dims(o, 0), (k,) + tuple(o.shape)))
        return res


def _unobserved(x):
    """A concrete tensor whose operations no recorder or trace would see: NumPy may
    work on it directly."""
    return type(x) is Tensor and not STATE.stack.recorders and not STATE.stack.tracers


def _lead(o):
    if _unobserved(o):
        return _wrap(o._value[None])
    return expand_dims(o, 0)


# -- assembling the result ------------------------------------------------------------------------
class _Result:
    """Collects the chunks of one Jacobian block of shape ``out_shape``.

    Chunk rows are rows of the flattened block (``by_column`` False, reverse mode) or its
    columns (forward mode). Plain values go straight into one NumPy buffer as they come, so
    the peak memory is the result plus one chunk; values that a tape, tracer or outer vmap
    must see are kept and joined with tapegrad ops.
    """

    def __init__(self, n_rows, n_cols, out_shape, by_column):
        self.n_rows, self.n_cols, self.out_shape = n_rows, n_cols, out_shape
        self.by_column = by_column
        self.n_lead = n_cols if by_column else n_rows
        self.parts = []      # (value or None, k), for the tapegrad-op assembly
        self.buf = None      # the NumPy assembly
        self.filled = 0
        self.connected = False

    def add(self, part, k):
        start = self.filled
        self.filled += k
        if part is not None:
            self.connected = True
            if not self.parts and _unobserved(part) and k < self.n_lead:
                if self.buf is None:  # zeros: rows of unconnected chunks stay zero
                    self.buf = np.zeros((self.n_rows, self.n_cols), part.dtype)
                v = part._value.reshape(k, -1)
                if self.by_column:
                    self.buf[:, start:start + k] = v.T
                else:
                    self.buf[start:start + k] = v
                return
            if self.buf is not None:  # not expected: switch to the op assembly
                self.parts.append((_wrap(self._lead_rows(start)), start))
                self.buf = None
        elif self.buf is not None:
            return
        self.parts.append((part, k))

    def _lead_rows(self, n):
        b = self.buf.T if self.by_column else self.buf
        return np.ascontiguousarray(b[:n])

    def finish(self):
        if not self.connected:
            return None
        if self.buf is not None:
            return _wrap(self.buf.reshape(self.out_shape))
        parts = [(p if p is not None else _zeros_rows(k, self.parts), k) for p, k in self.parts]
        vals = [p for p, _ in parts]
        if len(vals) == 1 and _unobserved(vals[0]):
            a = vals[0]._value
            if self.by_column:
                a = a.reshape(self.n_cols, self.n_rows).T
            return _wrap(a.reshape(self.out_shape))
        j = vals[0] if len(vals) == 1 else concat(vals, 0)
        if self.by_column:
            j = transpose(reshape(j, (self.n_cols, self.n_rows)))
        return reshape(j, self.out_shape)


def _zeros_rows(k, parts):
    like = next(p for p, _ in parts if p is not None)
    return zeros((k,) + tuple(like.shape[1:]), dtype=like.dtype)


# -- jacobian ---------------------------------------------------------------------------------------
def tape_jacobians(entries, targets, sources, *, mode="auto", chunk_size=None, loop=False,
                   sparse=True):
    """``J[i][j] = d targets[i] / d sources[j]``, of shape ``targets[i].shape + sources[j].shape``.

    ``entries`` are a tape's records; a block is None where the target does not depend on
    the source. All rows of a block are computed in one vectorized pass (or a few, chunked);
    ``loop=True`` computes them one by one, unbatched. ``sparse=False``: never compressed
    (``hooks.sparse_jacobian``, which compresses one block inside a trace where it pays).
    """
    ids, uniq = {}, []
    for s in sources:
        if id(s) not in ids and _is_float(s):
            ids[id(s)] = len(uniq)
            uniq.append(s)
    ftargets = [t for t in targets if _is_float(t)]
    path = _Path(entries, ids, {id(t) for t in ftargets})
    conn = [s for s in uniq if id(s) in path.connected]
    n_in = sum(_size(s.shape) for s in conn)
    n_out = sum(_size(t.shape) for t in ftargets if id(t) in path.connected)
    mode = choose_mode(mode, n_in, n_out)
    blocks = {}
    if sparse and not loop and hooks.sparse_jacobian is not None and len(conn) == 1 \
            and len(ftargets) == 1 and id(ftargets[0]) in path.connected:
        # one block inside a trace: basis rows compressed by the program's sparsity, if it pays
        t, s = ftargets[0], conn[0]
        out = hooks.sparse_jacobian(path, t, s, mode == "reverse", chunk_size)
        if out is not None:
            blocks[(id(t), id(s))] = out
            return [[blocks.get((id(t), id(s))) for s in sources] for t in targets]
    if mode == "reverse":
        for t in ftargets:
            if id(t) in path.connected and (id(t), None) not in blocks:
                res = _blocks(path, t, conn, chunk_size, loop, forward=False)
                for s, r in zip(conn, res):
                    blocks[(id(t), id(s))] = r
                blocks[(id(t), None)] = True
    else:
        tids = {id(t) for t in ftargets if id(t) in path.connected}
        tlist = [t for t in ftargets if id(t) in tids]
        for s in conn:
            res = _blocks(path, s, tlist, chunk_size, loop, forward=True)
            for t, r in zip(tlist, res):
                blocks[(id(t), id(s))] = r
    return [[blocks.get((id(t), id(s))) for s in sources] for t in targets]


def _rows_per_chunk(path, n_rows, dtype, chunk_size, loop, extra, result_size):
    if loop:
        return 1
    return chunk_size or auto_chunk(max(path.widest(), extra), n_rows, dtype.itemsize,
                                    result_size)


def _blocks(path, pivot, others, chunk_size, loop, forward):
    """The Jacobian blocks between ``pivot`` and each of ``others``, one row of the identity
    per pass: reverse mode gives the target (``pivot``) the row as its cotangent and reads the
    sources, forward mode gives it to the source as its tangent and reads the targets."""
    pshape = tuple(pivot.shape)
    n = _size(pshape)
    results = [_Result(_size(o.shape), n, tuple(o.shape) + pshape, True) if forward else
               _Result(n, _size(o.shape), pshape + tuple(o.shape), False) for o in others]
    if n == 0 or not others:
        return [zeros(r.out_shape, dtype=o.dtype) for r, o in zip(results, others)]
    widest = max([n] + [_size(o.shape) for o in others])
    size = _rows_per_chunk(path, n, pivot.dtype, chunk_size, loop, widest,
                           n * sum(_size(o.shape) for o in others))
    pid, want = id(pivot), {id(o) for o in others}
    if forward:
        path._frees = None
    run = path.forward if forward else path.backward
    if n == 1:  # a gradient, or one direction: no row axis to add and take away again
        got = run({pid: _wrap(np.ones(pshape, pivot.dtype))}, want)
        return [_as_block(got.get(id(o)), r.out_shape) for o, r in zip(others, results)]

    def pass_(direction):
        got = run({pid: direction}, want)
        return [got.get(id(o)) for o in others]

    for start, stop in _chunks(n, size):
        k = stop - start
        basis = _basis(n, start, stop, pivot.dtype).reshape((k,) + pshape)
        for r, part in zip(results, _run_rows(pass_, basis, k)):
            r.add(part, k)
    return [r.finish() for r in results]


def _as_block(x, shape):
    if x is None:
        return None
    return _wrap(x._value.reshape(shape)) if _unobserved(x) else reshape(x, shape)
