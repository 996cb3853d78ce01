"""Reductions. ``axis`` is always a tuple of non-negative ints (the op layer normalises it).

Gradients are broadcast back with ``_expand``: the reduced axes are re-inserted as size-1
axes and the cotangent is broadcast to the input's shape.
"""
import numpy as np

import tapegrad.ops as T
from tapegrad.core.dispatch import Primitive
from tapegrad.primitives.registry import nondiff, xp


def _keep_shape(shape, axis):
    return tuple(1 if i in axis else s for i, s in enumerate(shape))


def _expand(g, x, axis, keepdims):
    """Broadcast a reduced cotangent ``g`` back to the shape of ``x``."""
    if not keepdims:
        g = T.reshape(g, _keep_shape(x.shape, axis))
    return T.broadcast_to(g, x.shape)


def _reduction_abstract(x, *, axis, keepdims):
    if keepdims:
        shape = _keep_shape(x.shape, axis)
    else:
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axis)
    return shape, x.dtype


def _shift(axis, by=1):
    return tuple(a + by for a in axis)


def _reduction_batch(prim):
    def rule(args, batched, *, axis, keepdims, **params):
        (x,) = args
        return prim.bind_raw(x, axis=_shift(axis), keepdims=keepdims, **params)
    return rule


def _reduction(name, impl, vjp, jvp, emit):
    p = Primitive(name, impl, nin=1, vjp=(vjp,), jvp=(jvp,), emit=emit)
    p.abstract = _reduction_abstract
    p.batch = _reduction_batch(p)
    return p


def _argmax_mask(x, ans, axis, keepdims):
    """Where x attains its max/min along ``axis``, shared equally among ties (as TF)."""
    a = _expand(ans, x, axis, keepdims)
    m = T.cast(T.equal(x, a), x.dtype)
    return m / T.reduce_sum(m, axis=axis, keepdims=True)


def _prod_of_others(x, ans, axis):
    """For each element, the product of the other elements of its reduction group.

    ``ans / x`` fails where x is 0, so zeros are counted: with one zero in a group only that
    element's partner-product is non-zero; with two or more all of them are zero.
    """
    zero = T.equal(x, 0)
    nz = T.reduce_sum(T.cast(zero, x.dtype), axis=axis, keepdims=True)
    safe = T.where(zero, T.ones_like(x), x)
    prod_nonzero = T.reduce_prod(safe, axis=axis, keepdims=True)
    no_zero = prod_nonzero / safe
    one_zero = T.where(zero, T.broadcast_to(prod_nonzero, x.shape), T.zeros_like(x))
    return T.where(nz == 0, no_zero, T.where(nz == 1, one_zero, T.zeros_like(x)))


# fmt: off
reduce_sum_p = _reduction(
    "reduce_sum", lambda x, axis, keepdims: xp.sum(x, axis=axis, keepdims=keepdims),
    vjp=lambda g, ans, x, *, axis, keepdims: _expand(g, x, axis, keepdims),
    jvp=lambda t, ans, x, *, axis, keepdims: T.reduce_sum(t, axis=axis, keepdims=keepdims),
    emit="np.sum({0}, axis={axis}, keepdims={keepdims})")

reduce_max_p = _reduction(
    "reduce_max", lambda x, axis, keepdims: xp.max(x, axis=axis, keepdims=keepdims),
    vjp=lambda g, ans, x, *, axis, keepdims:
        _expand(g, x, axis, keepdims) * _argmax_mask(x, ans, axis, keepdims),
    jvp=lambda t, ans, x, *, axis, keepdims:
        T.reduce_sum(t * _argmax_mask(x, ans, axis, keepdims), axis=axis, keepdims=keepdims),
    emit="np.max({0}, axis={axis}, keepdims={keepdims})")

reduce_min_p = _reduction(
    "reduce_min", lambda x, axis, keepdims: xp.min(x, axis=axis, keepdims=keepdims),
    vjp=lambda g, ans, x, *, axis, keepdims:
        _expand(g, x, axis, keepdims) * _argmax_mask(x, ans, axis, keepdims),
    jvp=lambda t, ans, x, *, axis, keepdims:
        T.reduce_sum(t * _argmax_mask(x, ans, axis, keepdims), axis=axis, keepdims=keepdims),
    emit="np.min({0}, axis={axis}, keepdims={keepdims})")

reduce_prod_p = _reduction(
    "reduce_prod", lambda x, axis, keepdims: xp.prod(x, axis=axis, keepdims=keepdims),
    vjp=lambda g, ans, x, *, axis, keepdims:
        _expand(g, x, axis, keepdims) * _prod_of_others(x, ans, axis),
    jvp=lambda t, ans, x, *, axis, keepdims:
        T.reduce_sum(t * _prod_of_others(x, ans, axis), axis=axis, keepdims=keepdims),
    emit="np.prod({0}, axis={axis}, keepdims={keepdims})")
# fmt: on


def _cumsum(x, axis, exclusive, reverse):
    if reverse:
        x = xp.flip(x, axis)
    out = xp.cumsum(x, axis=axis)
    if exclusive:
        out = out - x
    if reverse:
        out = xp.flip(out, axis)
    return out


cumsum_p = Primitive(
    "cumsum", _cumsum, nin=1,
    # the transpose of a running sum is the running sum taken the other way
    vjp=(lambda g, ans, x, *, axis, exclusive, reverse:
         T.cumsum(g, axis=axis, exclusive=exclusive, reverse=not reverse),),
    jvp=(lambda t, ans, x, *, axis, exclusive, reverse:
         T.cumsum(t, axis=axis, exclusive=exclusive, reverse=reverse),),
    emit="_cumsum({0}, {axis}, {exclusive}, {reverse})")
cumsum_p.abstract = lambda x, **p: (x.shape, x.dtype)
cumsum_p.batch = lambda args, batched, *, axis, **p: cumsum_p.bind_raw(
    args[0], axis=axis + 1, **p)


def _arg_batch(prim):
    return lambda args, batched, *, axis, **p: prim.bind_raw(args[0], axis=axis + 1, **p)


argmax_p = nondiff("argmax", lambda x, axis, output_type: xp.argmax(x, axis=axis).astype(
    output_type), 1, emit="np.argmax({0}, axis={axis}).astype('{output_type}')")
argmin_p = nondiff("argmin", lambda x, axis, output_type: xp.argmin(x, axis=axis).astype(
    output_type), 1, emit="np.argmin({0}, axis={axis}).astype('{output_type}')")
argmax_p.batch = _arg_batch(argmax_p)
argmin_p.batch = _arg_batch(argmin_p)
_ = np
