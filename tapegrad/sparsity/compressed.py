"""Compressed Hessians and Jacobians: detect the pattern once, colour it, push ``c`` tangent directions.

``f`` runs once under a tape (for a Hessian: its gradient, with the gradient computation
recorded). The pattern of the recorded path from the argument to the result is detected
(``detect.tape_pattern``) and coloured (``colouring``); both are cached per structure
(``detect.fingerprint``), so later calls only compare keys. Then one vectorized forward pass
carries the ``c`` tangent directions (``jacobians._run_rows``, as ``jacfwd`` does with ``n``),
and the ``(c, m)`` compressed rows are scattered into the dense result.

Inside ``tapegrad.function`` all of this happens at trace time: the program holds only the
compressed forward pass and the scatter. When the colouring does not pay (more than
``ratio * n`` colours, or the pattern is too large to detect) the dense path runs instead.
"""
import math

import numpy as np

from tapegrad import ops
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor
from tapegrad.primitives.gather import Index, getitem_p, index_add_p
from tapegrad.sparsity import colouring, detect
from tapegrad.tape import jacobians

RATIO = 0.25   # use the compressed path when colours <= RATIO * n ...
MIN_SIZE = 8   # ... and the argument has at least this many elements
_wrap = Tensor._wrap


class PlanCache:
    """Plans (or None: "use the dense path") per structural fingerprint of the tape path."""

    def __init__(self, kind, limit=64):
        self.kind, self.limit, self._plans = kind, limit, {}

    def get(self, entries, source, target):
        key = detect.fingerprint(entries, source)
        try:
            return self._plans[key]
        except KeyError:
            pass
        plan = None
        pat = detect.tape_pattern(entries, source, target)
        if pat is not None:
            plan = (colouring.hessian_plan(pat) if self.kind == "hessian"
                    else colouring.jacobian_plan(pat))
        if len(self._plans) >= self.limit:  # a function with endless structures: forget
            self._plans.clear()
        self._plans[key] = plan
        return plan


def worth_it(plan, n, force):
    """Whether to take the compressed path (``force``: the user's ``sparse=`` option)."""
    if plan is None or force is False:
        return False
    return force is True or (n >= MIN_SIZE and plan.n_colours <= RATIO * n)


def compressed_rows(path, source, target, plan):
    """``R[k] = J @ directions[k]``: one batched forward pass over the ``_Path``; shape (c,) + t."""
    directions = plan.directions.astype(source.dtype, copy=False).reshape(
        (plan.n_colours,) + tuple(source.shape))
    sid, tid = id(source), id(target)
    path._frees = None

    def pass_(s):
        return [path.forward({sid: s}, {tid}).get(tid)]

    (rows,) = jacobians._run_rows(pass_, directions, plan.n_colours)
    return rows


def decompress(rows, plan, out_shape, dtype):
    """The dense result of shape ``out_shape`` from the compressed rows (None: all zero)."""
    m, n = plan.shape
    if rows is None:
        return ops.zeros(out_shape, dtype=dtype)
    if type(rows) is Tensor and jacobians._unobserved(rows):
        out = np.zeros(m * n, rows.dtype)
        out[plan.dst] = rows._value.reshape(-1)[plan.src]
        return _wrap(out.reshape(out_shape))
    # traced or recorded: a gather and a scatter (both differentiable); the (row, column)
    # indices are unique, so the scatter never adds two values into one entry
    c = plan.n_colours
    if tuple(rows.shape) != (c, m):
        rows = ops.reshape(rows, (c, m))
    if plan.scatter is not None:  # column n: the entries of R that hold none of H's
        out = index_add_p.bind_raw(rows, index=Index(plan.scatter), shape=(m, n + 1))
        out = getitem_p.bind_raw(out, index=Index((slice(None), slice(0, n, None))))
    else:  # symmetric reads: an entry of R may fill two entries
        vals = getitem_p.bind_raw(rows, index=Index(divmod(plan.src, m)))
        out = index_add_p.bind_raw(vals, index=Index(divmod(plan.dst, n)), shape=(m, n))
    return out if tuple(out_shape) == (m, n) else ops.reshape(out, out_shape)


def usable(x):
    """Whether the compressed machinery applies to differentiated leaf ``x`` here."""
    return (isinstance(x, Tensor) and not x._level and not STATE.stack.batch_level
            and x.dtype.kind == "f" and math.prod(x.shape) > 0)
