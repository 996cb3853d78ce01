"""Family helpers that generate the boilerplate of a primitive's registry block.

A block reads like a page of a calculus book::

    exp_p = unary("exp", xp.exp, lambda g, ans, x: g * ans)

For elementwise primitives the JVP rule of each input is its VJP rule (the Jacobian is
diagonal), so a block states the derivative once. Rules use the primitive layer's functions
(``primitives/api.py``: thin ``bind`` wrappers), so derivatives of derivatives work to any
order.
"""
import numpy as np

from tapegrad.primitives.api import reduce_sum, reshape
from tapegrad.core.dispatch import Primitive

xp = np  # the array namespace: every implementation goes through it (GPU arrays later)


def broadcast_shapes(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError("shapes " + " and ".join(str(tuple(s)) for s in shapes)
                         + " are not broadcast-compatible") from None


def elementwise_abstract(*avals, **params):
    shape = broadcast_shapes(*[a.shape for a in avals])
    return shape, np.result_type(*[a.dtype for a in avals])


def elementwise_batch(prim):
    """Batching rule of an elementwise primitive: align ranks, then apply once."""
    def rule(args, batched, **params):
        rank = max((a.ndim - 1 if b else a.ndim) for a, b in zip(args, batched))
        aligned = []
        for a, b in zip(args, batched):
            r = a.ndim - 1 if b else a.ndim
            if b and r < rank:
                a = reshape(a, (a.shape[0],) + (1,) * (rank - r) + tuple(a.shape[1:]))
            aligned.append(a)
        return prim.bind_raw(*aligned, **params)
    return rule


def unary(name, impl, vjp, *, emit=None, jvp=None):
    """An elementwise primitive of one input; ``vjp(g, ans, x)`` also serves as its JVP."""
    p = Primitive(name, impl, nin=1, vjp=(vjp,), jvp=(jvp or vjp,),
                  emit=emit or f"np.{impl.__name__}({{0}})")
    p.abstract = elementwise_abstract
    p.batch = elementwise_batch(p)
    return p


def binary(name, impl, vjp_x, vjp_y, *, emit=None):
    """An elementwise primitive of two inputs; each VJP rule also serves as its JVP."""
    p = Primitive(name, impl, nin=2, vjp=(vjp_x, vjp_y), jvp=(vjp_x, vjp_y),
                  emit=emit or f"np.{impl.__name__}({{0}}, {{1}})")
    p.abstract = elementwise_abstract
    p.batch = elementwise_batch(p)
    return p


def nondiff(name, impl, nin, *, emit=None, abstract=None, batch=None):
    """A primitive whose output carries no gradient (comparisons, argmax, floor...)."""
    if abstract is None and batch == "elementwise":
        abstract = elementwise_abstract
    # no abstract rule: the Primitive's own fallback evaluates impl on zero-strided arrays
    p = Primitive(name, impl, nin=nin, nondiff=True, emit=emit, abstract=abstract)
    p.batch = elementwise_batch(p) if batch == "elementwise" else batch
    return p


def summed_axes(cshape, shape):
    """The axes of a cotangent of shape ``cshape`` that broadcasting to it added to ``shape``."""
    lead = len(cshape) - len(shape)
    return tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and cshape[lead + i] != 1)


def unbroadcast(ct, shape):
    """Sum a cotangent down to ``shape``: the one place where broadcasting is undone."""
    if ct is None:
        return None
    cshape = tuple(ct.shape)
    shape = tuple(shape)
    if cshape == shape:
        return ct
    axes = summed_axes(cshape, shape)
    if axes:
        ct = reduce_sum(ct, axis=axes, keepdims=False)
    if tuple(ct.shape) != shape:
        ct = reshape(ct, shape)
    return ct
