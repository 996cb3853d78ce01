"""Dependency rules: which input elements each element of a primitive's output depends on.

The abstract value of a tensor of shape ``s`` is a boolean array ``D`` of shape ``(n,) + s``:
``D[j, ...]`` says whether that element structurally depends on input element ``j``; None
means "on nothing" (constants, and everything no tangent can reach). Each primitive states
how its output depends on its input (``Primitive.sparsity``, one of the kinds of
``core.dispatch.SPARSITY_KINDS``) and each kind has one small rule here, in
``KIND_RULES``; a primitive of no kind gets ``fallback_rule``, which makes every output
element depend on everything any input element depends on. So the propagated pattern never
misses a dependency: it may only over-count.

Structural rules ignore values: ``x * 0.0`` still depends on ``x``. That is what makes a
pattern reusable for every input of the same structure.

>>> import numpy as np
>>> from tapegrad.core.dispatch import PRIMITIVES
>>> d = np.eye(3, dtype=bool)                      # x depends on itself
>>> aval = np.zeros(3)
>>> PRIMITIVES["reduce_sum"].sparsity
'reduction'
>>> rule = rule_for(PRIMITIVES["reduce_sum"])
>>> rule(PRIMITIVES["reduce_sum"], [d], [aval], [None], {"axis": (0,), "keepdims": False},
...      np.zeros(()), 3).tolist()
[True, True, True]
"""

import numpy as np

from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.core.state import interpreters
from tapegrad.core.tensor import Tensor

_wrap = Tensor._wrap


def outside_interpreters():
    """Run ops on concrete values even inside a trace, tape or vmap (always restored)."""
    return interpreters(())


def _shape(a):
    return tuple(a.shape)


def fallback_rule(prim, deps, ins, vals, params, out, n):
    """No rule known: every output element depends on the union of all input dependencies."""
    u = np.zeros(n, bool)
    for d in deps:
        if d is not None:
            u |= d.reshape(n, -1).any(axis=1)
    if not u.any():
        return None
    shape = _shape(out)
    return np.broadcast_to(u.reshape((n,) + (1,) * len(shape)), (n,) + shape)


def elementwise_rule(prim, deps, ins, vals, params, out, n):
    """Each output element depends on the elements it is computed from (broadcast)."""
    shape = _shape(out)
    acc = None
    for d, a in zip(deps, ins):
        if d is None:
            continue
        s = _shape(a)
        d = d.reshape((n,) + (1,) * (len(shape) - len(s)) + s)
        acc = np.broadcast_to(d, (n,) + shape) if acc is None else acc | d
    return acc


def _batched_apply(prim, args, flags, params):
    # The batching rule applies the primitive to all n dependency rows at once.
    with outside_interpreters():
        return np.asarray(prim.batch(args, flags, **params)._value)


def movement_rule(prim, deps, ins, vals, params, out, n, *, via=None):
    """Select/copy/sum primitives (getitem, index_add, concat, take, reduce_sum...).

    They are linear with 0/1 coefficients, so applying them to the 0/1 dependency rows
    gives non-negative counts: nonzero exactly where a dependency arrives. ``via`` names a
    primitive with the same pattern (``reduce_max`` moves dependencies like ``reduce_sum``).
    """
    p = PRIMITIVES[via] if via else prim
    args, flags = [], []
    for d, a, v in zip(deps, ins, vals):
        if d is not None:
            args.append(_wrap(d.astype(np.float32)))
            flags.append(True)
        elif a.dtype.kind in "fc":
            args.append(_wrap(np.zeros(_shape(a), np.float32)))  # no dependency to move
            flags.append(False)
        elif v is not None:
            args.append(_wrap(np.asarray(v)))  # indices: their values say where rows go
            flags.append(False)
        else:  # traced indices: where they point is unknown until run time
            return fallback_rule(prim, deps, ins, vals, params, out, n)
    return _batched_apply(p, args, flags, params) != 0


def multilinear_rule(prim, deps, ins, vals, params, out, n):
    """matmul, einsum: the pattern of the product with every other operand taken as dense."""
    acc = None
    for i, d in enumerate(deps):
        if d is None:
            continue
        args = [_wrap(np.ones(_shape(a), np.float32)) for a in ins]
        args[i] = _wrap(d.astype(np.float32))
        flags = [k == i for k in range(len(ins))]
        r = _batched_apply(prim, args, flags, params) != 0
        acc = r if acc is None else acc | r
    return acc


def along_axis_rule(prim, deps, ins, vals, params, out, n):
    """take_along_axis, put_along_axis_add: moves along ``axis`` within each slice.

    With the indices known it is a movement (exact); traced indices can point anywhere in
    their slice along ``axis``, and nowhere else.
    """
    if vals[1] is not None:
        return movement_rule(prim, deps, ins, vals, params, out, n)
    d = deps[0]
    if d is None:
        return None
    axis = params["axis"] % len(_shape(ins[0]))
    u = d.any(axis=axis + 1, keepdims=True)
    return np.broadcast_to(u, (n,) + _shape(out))


def matrix_rule(prim, deps, ins, vals, params, out, n):
    """Linear algebra on stacks of matrices (inv, det, solve, cholesky...): an output
    matrix depends on the whole of its own matrices, and on no other matrix of the stack."""
    shape = _shape(out)
    lead = max(len(_shape(a)) - 2 for a in ins)
    extra = len(shape) - lead   # the output's own dimensions per matrix (0 for det)
    acc = None
    for d, a in zip(deps, ins):
        if d is None:
            continue
        s = _shape(a)
        u = d.reshape((n,) + s).any(axis=(-2, -1))
        u = u.reshape((n,) + (1,) * (lead - (len(s) - 2)) + s[:-2] + (1,) * extra)
        u = np.broadcast_to(u, (n,) + shape)
        acc = u if acc is None else acc | u
    return acc


def reduction_rule(prim, *args):
    """reduce_sum/max/min/prod: each output element depends on the elements it reduces,
    which is how reduce_sum moves dependencies."""
    return movement_rule(prim, *args, via="reduce_sum")


def window_rule(prim, *args):
    """max_pool: each output element depends on its window, as average pooling moves it."""
    return movement_rule(prim, *args, via="avg_pool")


def _window_pair_rule(deps, ins, params, moves):
    """Pooling's derivatives (max_pool_gather, max_pool_scatter): the windows' pattern, as
    average pooling moves it. Which element of a window is chosen depends on values, so every
    element of the window counts (both operands: x picks, the other is picked), a safe
    over-count. ``moves(i, t, pool, back)``: operand ``i``'s dependency rows moved."""
    pool = lambda t: _batched_apply(PRIMITIVES["avg_pool"], [t], [True], params)
    grad = dict(params, input_spatial=tuple(_shape(ins[0])[1:-1]))
    back = lambda t: _batched_apply(PRIMITIVES["avg_pool_grad"], [t], [True], grad)
    acc = None
    for i, d in enumerate(deps):
        if d is None:
            continue
        r = moves(i, _wrap(d.astype(np.float32)), pool, back)
        acc = (r != 0) if acc is None else acc | (r != 0)
    return acc


def window_gather_rule(prim, deps, ins, vals, params, out, n):
    """max_pool_gather: both operands through their windows, as avg_pool moves them."""
    return _window_pair_rule(deps, ins, params, lambda i, t, pool, back: pool(t))


def window_scatter_rule(prim, deps, ins, vals, params, out, n):
    """max_pool_scatter: x through its windows and back onto its positions; the pooled
    operand back onto the windows that made it, as avg_pool_grad moves it."""
    return _window_pair_rule(deps, ins, params, lambda i, t, pool, back:
                             back(_wrap(pool(t))) if i == 0 else back(t))


# one rule per kind of ``Primitive.sparsity`` (core/dispatch.py: SPARSITY_KINDS)
KIND_RULES = {
    "elementwise": elementwise_rule,
    "copy": movement_rule, "scatter": movement_rule, "linear": movement_rule,
    "copy_along_axis": along_axis_rule, "scatter_along_axis": along_axis_rule,
    "reduction": reduction_rule,
    "window": window_rule,
    "window_gather": window_gather_rule, "window_scatter": window_scatter_rule,
    "matmul": multilinear_rule, "multilinear": multilinear_rule,
    "matrix": matrix_rule,
}


def rule_for(prim):
    """The dependency rule of ``prim``, by the kind its block states."""
    kind = prim.sparsity
    return fallback_rule if kind is None else KIND_RULES[kind]


class TooLarge(Exception):
    """The dependency arrays would not fit the budget; the caller uses the dense path."""


def apply_rule(prim, deps, ins, vals, params, outs, n, limit, values=False):
    """Dependencies of each output of one equation (a list, None where there are none).

    Derivatives flow through floating-point results of differentiable primitives only;
    ``values=True`` asks instead which inputs an output's *value* can depend on (through
    comparisons, integer results and every other primitive as well).
    """
    if all(d is None for d in deps):
        return [None] * len(outs)
    if sum(n * int(np.prod(_shape(o))) for o in outs) > limit:
        raise TooLarge
    if getattr(prim, "nondiff", False) and not values:
        return [None] * len(outs)
    if len(outs) != 1:
        return [_float_only(fallback_rule(prim, deps, ins, vals, params, o, n), o, values)
                for o in outs]
    rule = rule_for(prim)
    try:
        d = rule(prim, deps, ins, vals, params, outs[0], n)
    except Exception:  # noqa: BLE001 - a rule that cannot run still has a safe answer
        d = fallback_rule(prim, deps, ins, vals, params, outs[0], n)
    if d is not None and d.shape != (n,) + _shape(outs[0]):
        d = fallback_rule(prim, deps, ins, vals, params, outs[0], n)
    return [_float_only(d, outs[0], values)]


def _float_only(d, out, values=False):
    # integer and boolean results carry no tangent, so nothing flows through them
    return d if d is not None and (values or np.dtype(out.dtype).kind in "fc") else None
