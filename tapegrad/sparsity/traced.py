"""Compressed ``GradientTape.jacobian`` and ``batch_jacobian`` inside a trace.

A tape's Jacobian pushes one basis direction per row (reverse mode: a cotangent) or column
(forward mode: a tangent) of the identity. Inside ``tapegrad.function`` the traced program's structure is known, so
where its pattern (``detect.tape_pattern``) colours into few groups, ``c`` summed directions
plus one zero direction replace the ``n`` rows; the program then holds only that pass and a
scatter. The numbers are those of the dense basis, bit for bit:

- every structural entry is read from a compressed row in which, structurally, it is the
  only contributor (distance-2 colouring). A rule's input elements are the only ones its
  derivative reads, so that row computed the entry from exactly the direction's elements the
  dense row uses: no other column's NaN or inf can reach it;
- every other entry is what the dense pass computes from zero directions: ``+0.0`` mostly, but
  ``-0.0`` (``-3 * x``) or NaN (``sqrt`` at 0) where the derivative's own arithmetic makes
  it so. The zero direction (the extra one, ``Z``) computes exactly that value per
  row (forward) or column (reverse). Where some ``Z`` is not ``+0.0`` the program selects
  it into those entries; a ``cond`` skips that select in the usual case.

The mode stays the one the dense Jacobian uses (forward and reverse round differently).
Cost model: compress when ``c + 1 <= RATIO * n`` for ``n >= MIN_SIZE`` dense rows
(``compressed.py``), and not past a given ``chunk_size``; sizes that a trace keeps
symbolic (``trace/symbolic.py``) stay dense, since a colouring holds for one size only.
The detection's booleans must fit ``config.memory_budget()``, as the dense pass's chunks
do. Eager tapes push the dense basis (``_applies``).
"""
import math
from typing import NamedTuple

import numpy as np

from tapegrad import config, ops
from tapegrad.control_flow.ops import cond
from tapegrad.core import hooks
from tapegrad.core.state import STATE
from tapegrad.primitives.gather import Index, index_add_p
from tapegrad.sparsity import colouring, detect
from tapegrad.sparsity.compressed import MIN_SIZE, RATIO
from tapegrad.sparsity.dependencies import TooLarge
from tapegrad.tape import jacobians


class Plan(NamedTuple):
    """Directions ``(k, n_rows)`` (``k = c + 1``, the last one zero) and where each entry of the
    compressed result ``R`` (``(k, n_other)``) goes in the dense ``(m, n)`` Jacobian."""

    directions: np.ndarray
    index: tuple   # (rows, cols), each (k, n_other): R[a, b] goes to (rows[a, b], cols[a, b])
    mask: np.ndarray  # (m, n): the structural entries
    reverse: bool

    @property
    def k(self):
        return self.directions.shape[0]


def make_plan(pattern, reverse):
    """The plan for a dense Jacobian pattern ``(m, n)`` with its directions along rows
    (``reverse``) or columns; None when a colouring cannot pay."""
    p = np.asarray(pattern, bool)
    q = p.T if reverse else p  # (n_other, n_rows): colour q's columns
    n_other, n_rows = q.shape
    if n_rows < MIN_SIZE or colouring._dense_rows(q):
        return None
    colours = colouring.distance2_colouring(q)
    c = int(colours.max(initial=-1)) + 1
    if c + 1 > RATIO * n_rows:
        return None
    rows, cols = np.nonzero(q)
    slot = np.full((c + 1, n_other), -1, np.int64)
    slot[colours[cols], rows] = cols
    if np.count_nonzero(slot >= 0) != rows.size:  # two contributors in one entry: refuse
        return None
    # R[a, r] that holds no structural entry is Z[r] (no direction reaches it), the value of the
    # entries of r that are not structural: it goes to one of those, each to its own
    empty = slot < 0
    rank = np.cumsum(empty, axis=0) - 1
    # the first c + 1 + (most entries in a row) columns hold c + 1 free ones in every row
    width = min(n_rows, c + 1 + int(q.sum(axis=1).max(initial=0)))
    free = np.argsort(q[:, :width], axis=1, kind="stable")  # non-structural columns first
    r_idx = np.broadcast_to(np.arange(n_other), slot.shape)
    slot[empty] = free[r_idx[empty], rank[empty]]
    directions = np.zeros((c + 1, n_rows))
    directions[colours, np.arange(n_rows)] = 1.0
    r_idx = np.ascontiguousarray(r_idx)
    index = (slot, r_idx) if reverse else (r_idx, slot)
    return Plan(directions, index, p, reverse)


_PLANS = {}


def _detection_bytes(path, source, n_rows, lead):
    # the dependency booleans of every value on the path (one row per element of an
    # example of the source), and the colouring's conflict matrix over the directions' axis
    # (float32 products and booleans)
    sizes = math.prod(source.shape) + sum(math.prod(o.shape) for e in path.entries
                                          for o in (e[3] if isinstance(e[3], (tuple, list))
                                                    else (e[3],)))
    return math.prod(source.shape[lead:]) * sizes + 5 * n_rows * n_rows


def _cached_plan(path, source, target, reverse, batch):
    key = (detect.fingerprint(path.entries, source), detect._position(path.entries, target),
           tuple(target.shape), reverse, batch)
    try:
        return _PLANS[key]
    except KeyError:
        pass
    try:
        pat = _batch_pattern(path, source, target) if batch else \
            detect.tape_pattern(path.entries, source, target)
    except TooLarge:
        pat = None
    plan = None if pat is None else make_plan(pat, reverse)
    if len(_PLANS) >= 256:  # endless structures: forget
        _PLANS.clear()
    _PLANS[key] = plan
    return plan


def _batch_pattern(path, source, target):
    """``(ny, nx)``: element ``i`` of some example of the target depends on element ``j`` of
    some example of the source (what a direction broadcast over the batch sees)."""
    b, xs = source.shape[0], tuple(source.shape[1:])
    nx = math.prod(xs)
    if nx * math.prod(source.shape) > detect.LIMIT:
        return None
    eye = np.eye(nx, dtype=bool).reshape((nx, 1) + xs)
    deps = np.broadcast_to(eye, (nx, b) + xs)
    env = detect.propagate(detect._tape_equations(path.entries), (id(source), deps), nx)
    d = env.get(id(target))
    ny = math.prod(target.shape[1:])
    if d is None:
        return np.zeros((ny, nx), bool)
    return np.ascontiguousarray(np.asarray(d).reshape(nx, b, ny).any(axis=1).T)


def _applies(path, source, target):
    if not STATE.stack.tracers or STATE.stack.batch_level:
        # Eager tapes push the dense basis: each call would pay the structure key, and a structure
        # that changes with every call (a gather's indices) the detection too, about as much
        # as a dense pass. A trace pays it once (so does the derivative cache's compiled
        # pass of a repeated eager tape).
        return False
    if source.dtype.kind != "f" or target.dtype.kind != "f" or source._level:
        return False
    if detect._symbolic_sizes(path.entries, source):
        return False
    return True


def sparse_jacobian(path, target, source, reverse, chunk_size, batch=False):
    """The Jacobian block of ``tape_jacobians`` (``batch``: of ``tape_batch_jacobian``),
    compressed, or None where the dense basis should run."""
    pivot, other = (target, source) if reverse else (source, target)
    lead = 1 if batch else 0
    pshape = tuple(pivot.shape[lead:])
    n_rows, n_other = math.prod(pshape), math.prod(other.shape[lead:])
    if n_rows < MIN_SIZE or n_other == 0 or not _applies(path, source, target):
        return None  # (too few rows to pay: not even the detection runs)
    if _detection_bytes(path, source, n_rows, lead) > config.memory_budget():
        return None  # the detection itself must fit where the dense chunks do
    plan = _cached_plan(path, source, target, reverse, batch)
    if plan is None or (chunk_size is not None and plan.k > chunk_size):
        return None
    directions = plan.directions.astype(pivot.dtype).reshape((plan.k,) + (1,) * lead + pshape)
    if batch:
        directions = jacobians._broadcast_basis(directions, (plan.k,) + tuple(pivot.shape))
    pid, oid = id(pivot), id(other)
    if reverse:
        def pass_(s):
            return [path.backward({pid: s}, {oid}).get(oid)]
    else:
        path._frees = None

        def pass_(s):
            return [path.forward({pid: s}, {oid}).get(oid)]

    (rows,) = jacobians._run_rows(pass_, directions, plan.k)
    if rows is None:
        return None
    return _decompress(rows, plan, target, source, batch)


def _decompress(rows, plan, target, source, batch):
    m, n = plan.mask.shape
    k = plan.k
    if batch:
        b = target.shape[0]
        out_shape = (b,) + tuple(target.shape[1:]) + tuple(source.shape[1:])
        rows = ops.reshape(rows, (k, b, -1))
        rows_b = ops.transpose(rows, (1, 0, 2))
        dense = index_add_p.bind_raw(rows_b, index=Index((slice(None),) + plan.index),
                                     shape=(b, m, n))
        z = rows[k - 1]
        z_shape = (b, 1, n) if plan.reverse else (b, m, 1)
    else:
        out_shape = tuple(target.shape) + tuple(source.shape)
        rows = ops.reshape(rows, (k, -1))
        dense = index_add_p.bind_raw(rows, index=Index(plan.index), shape=(m, n))
        z = rows[k - 1]
        z_shape = (1, n) if plan.reverse else (m, 1)
    # atan2(+0.0, -1) = pi, atan2(-0.0, -1) = -pi, atan2(nan, -1) = nan (and a min with a
    # NaN is NaN): "all Z are +0.0", when the scatter's own zeros are right, without a
    # division's warnings
    plain = ops.greater(ops.reduce_min(ops.atan2(z, np.array(-1.0, z.dtype))),
                        np.array(0.0, z.dtype))
    mask = plan.mask
    out = cond(plain, lambda: dense, lambda: ops.where(mask, dense, ops.reshape(z, z_shape)))
    return out if tuple(out.shape) == out_shape else ops.reshape(out, out_shape)


# tape/jacobians.py compresses a traced Jacobian through this where it pays
hooks.install(sparse_jacobian=sparse_jacobian)
