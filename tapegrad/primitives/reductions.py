"""Reductions. ``axis`` is always a tuple of non-negative ints (the op layer normalises it).

Gradients are broadcast back with ``_expand``: the reduced axes are re-inserted as size-1
axes and the cotangent is broadcast to the input's shape.
"""
import math

import numpy as np

from tapegrad.primitives.api import (broadcast_to, cast, cumsum, equal, pad, reduce_sum, reshape,
    transpose, zeros_like)
from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.core.tensor import raw_shape
from tapegrad.primitives import identities
from tapegrad.primitives.params import check_axes, check_axis, check_bool, check_dtype, fail
from tapegrad.primitives.families import nondiff, xp


def _keep_shape(shape, axis):
    return tuple(1 if i in axis else s for i, s in enumerate(shape))


def _expand(g, x, axis, keepdims):
    """Broadcast a reduced cotangent ``g`` back to the shape of ``x``."""
    shape = raw_shape(x)
    if not keepdims:
        g = reshape(g, _keep_shape(shape, axis))
    return broadcast_to(g, shape)


def _reduction_abstract(x, *, axis, keepdims):
    if keepdims:
        shape = _keep_shape(x.shape, axis)
    else:
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axis)
    return shape, x.dtype


def _shift(axis, by=1):
    return tuple(a + by for a in axis)


def _reduction_batch(name):
    def rule(args, batched, *, axis, keepdims, **params):
        (x,) = args
        return PRIMITIVES[name].bind_raw(x, axis=_shift(axis), keepdims=keepdims, **params)
    return rule


def _reduction_validate(name, identity):
    def rule(x, *, axis, keepdims):
        axis = check_axes(name, "axis", axis, x.ndim)
        check_bool(name, "keepdims", keepdims)
        if not identity and any(x.shape[a] == 0 for a in axis):
            fail(name, "axis", f"{axis} reduces an empty axis of {tuple(x.shape)}, which has "
                               "no identity")
    return rule


def _reduction(name, impl, vjp, jvp, emit, identity=True, identities=None, complex=None):
    """A reduction over ``axis`` (``identity``: whether it has one, so empty axes reduce)."""
    return Primitive(name, impl, nin=1, vjp=(vjp,), jvp=(jvp,), emit=emit, fresh=True,
                     abstract=_reduction_abstract, validate=_reduction_validate(name, identity),
                     batch=_reduction_batch(name), sparsity="reduction", identities=identities,
                     complex=complex)


def _argmax_mask(x, ans, axis, keepdims):
    """Where x attains its max/min along ``axis``, shared equally among ties (as TF)."""
    a = _expand(ans, x, axis, keepdims)
    m = cast(equal(x, a), x.dtype)
    return m / reduce_sum(m, axis=axis, keepdims=True)


def _exclusive_cumprod_last(x):
    """prod(x[..., :i]) for each i, as a log-depth scan of multiplications and pads.

    Built from differentiable primitives only (no division), so it is exact where elements
    are zero and at every order of differentiation.
    """
    n = x.shape[-1]
    no_pad = [[0, 0]] * (x.ndim - 1)
    y = pad(x[..., :-1], no_pad + [[1, 0]], constant_values=1.0)
    k = 1
    while k < n:
        y = y * pad(y[..., :-k], no_pad + [[k, 0]], constant_values=1.0)
        k *= 2
    return y


def _prod_of_others(x, ans, axis, keepdims):
    """For each element, the product of the other elements of its reduction group.

    It is the product of the exclusive running products from the left and from the right,
    as TensorFlow computes it, everywhere: ``ans / x`` would be cheaper where no element is
    zero, but a compiled pass cannot branch on values, so eager and compiled gradients would
    differ in the last bit (and ``ans / x``'s own derivatives cancel badly in float32).
    """
    keep = [i for i in range(x.ndim) if i not in axis]
    perm = tuple(keep) + tuple(axis)
    xt = transpose(x, perm)
    lead = tuple(xt.shape[:len(keep)])
    n = 1
    for a in axis:
        n *= x.shape[a]
    if n == 0:
        return zeros_like(x)
    xf = reshape(xt, lead + (n,))
    rev = (slice(None),) * len(lead) + (slice(None, None, -1),)
    others = _exclusive_cumprod_last(xf) * _exclusive_cumprod_last(xf[rev])[rev]
    others = reshape(others, tuple(xt.shape))
    return transpose(others, tuple(int(i) for i in np.argsort(perm)))


_ONES = {}
_BLAS_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def ones_vector(n, dtype):
    """A shared read-only ones vector: row sums are products with it (see ``_sum``)."""
    key = (n, dtype)
    o = _ONES.get(key)
    if o is None:
        if len(_ONES) >= 256:
            _ONES.clear()
        o = np.ones(n, dtype)
        o.flags.writeable = False
        _ONES[key] = o
    return o


def row_sums(x, axis):
    """``(batch, lead, rest)`` when ``reduce_sum`` over ``axis`` sums the rows of float
    matrices, else None: ``axis`` is a run of consecutive axes of ``lead`` elements in all,
    the axes before it (none, or a batch that vmap added) and after it (``rest`` elements,
    at least one axis) are kept. Bias gradients of dense layers and convolutions are such
    sums. BLAS does each as ``ones @ matrix``, 2-20x faster than NumPy's ``add.reduce``.

    The sums are not add.reduce's to the bit, so the rule must give one answer per matrix:
    a batch of matrices is summed by one stacked ``matmul``, which runs the same product on
    each as the unbatched call (``vmap`` equals the loop), on a C-ordered copy where the
    input is not (the BLAS kernel, and its rounding, depend on the layout)."""
    k, shape = len(axis), x.shape
    if not k or x.dtype not in _BLAS_FLOATS:
        return None
    b = axis[0]
    if tuple(axis) != tuple(range(b, b + k)) or b + k >= len(shape):
        return None
    if len(shape) == 2:  # (lead, n): the width may be a symbolic size
        return (1, shape[0], shape[1]) if shape[0] > 1 else None
    if not all(isinstance(s, (int, np.integer)) for s in shape):
        return None
    lead = math.prod(shape[b:b + k])
    return (math.prod(shape[:b]), lead, math.prod(shape[b + k:])) if lead > 1 else None


def _sum(x, axis, keepdims):
    split = row_sums(x, axis)
    if split is not None:
        batch, lead, rest = split
        m = xp.ascontiguousarray(x)
        if x.ndim == 2:
            r = xp.matmul(ones_vector(lead, x.dtype), m)
        else:
            r = xp.matmul(ones_vector(lead, x.dtype),
                          m.reshape((lead, rest) if axis[0] == 0 else (batch, lead, rest)))
        if keepdims:
            return r.reshape(_keep_shape(x.shape, axis))
        return r if x.ndim == 2 else r.reshape(
            tuple(s for i, s in enumerate(x.shape) if i not in axis))
    # dtype=x.dtype: NumPy sums int32 into int64; the shape rule (and TF) keep int32.
    # add.reduce is np.sum without its Python wrapper: 1.4 us less on small arrays.
    return xp.add.reduce(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


# fmt: off
# maximum.reduce and minimum.reduce are np.max and np.min without their Python wrapper
# (the same ufunc loop, ~4 us less per call on NumPy 2.4)
reduce_sum_p = _reduction(
    "reduce_sum", _sum,
    vjp=lambda g, ans, x, *, axis, keepdims: _expand(g, x, axis, keepdims),
    jvp=lambda t, ans, x, *, axis, keepdims: reduce_sum(t, axis=axis, keepdims=keepdims),
    emit="np.add.reduce({0}, axis={axis}, keepdims={keepdims}, dtype={0}.dtype)",
    identities=identities.reduce_sum, complex="real_linear")

reduce_max_p = _reduction(
    "reduce_max", lambda x, axis, keepdims: xp.maximum.reduce(x, axis=axis, keepdims=keepdims),
    vjp=lambda g, ans, x, *, axis, keepdims:
        _expand(g, x, axis, keepdims) * _argmax_mask(x, ans, axis, keepdims),
    jvp=lambda t, ans, x, *, axis, keepdims:
        reduce_sum(t * _argmax_mask(x, ans, axis, keepdims), axis=axis, keepdims=keepdims),
    emit="np.maximum.reduce({0}, axis={axis}, keepdims={keepdims})", identity=False)

reduce_min_p = _reduction(
    "reduce_min", lambda x, axis, keepdims: xp.minimum.reduce(x, axis=axis, keepdims=keepdims),
    vjp=lambda g, ans, x, *, axis, keepdims:
        _expand(g, x, axis, keepdims) * _argmax_mask(x, ans, axis, keepdims),
    jvp=lambda t, ans, x, *, axis, keepdims:
        reduce_sum(t * _argmax_mask(x, ans, axis, keepdims), axis=axis, keepdims=keepdims),
    emit="np.minimum.reduce({0}, axis={axis}, keepdims={keepdims})", identity=False)

reduce_prod_p = _reduction(
    "reduce_prod", lambda x, axis, keepdims: xp.prod(x, axis=axis, keepdims=keepdims,
                                                     dtype=x.dtype),
    vjp=lambda g, ans, x, *, axis, keepdims:
        _expand(g, x, axis, keepdims) * _prod_of_others(x, ans, axis, keepdims),
    jvp=lambda t, ans, x, *, axis, keepdims:
        reduce_sum(t * _prod_of_others(x, ans, axis, keepdims), axis=axis,
                     keepdims=keepdims),
    emit="np.prod({0}, axis={axis}, keepdims={keepdims}, dtype={0}.dtype)")
# fmt: on


def _cumsum(x, axis, exclusive, reverse):
    if reverse:
        x = xp.flip(x, axis)
    if exclusive:
        # shifted, not ``cumsum(x) - x``: that cancels ([1, 1e20] gave [0, 0], not [0, 1])
        # and turns an inf into NaN in every later position
        head = [slice(None)] * x.ndim
        head[axis] = slice(None, -1)
        tail = list(head)
        tail[axis] = slice(1, None)
        out = xp.zeros_like(x)
        out[tuple(tail)] = xp.cumsum(x[tuple(head)], axis=axis, dtype=x.dtype)
    else:
        out = xp.cumsum(x, axis=axis, dtype=x.dtype)
    if out.dtype.kind in "fc":  # TensorFlow's scan starts from +0: no sum is -0.0
        out += 0.0
    if reverse:
        out = xp.flip(out, axis)
    return out


def _cumsum_abstract(x, *, axis, exclusive, reverse):
    if x.dtype.kind == "b":  # the exclusive sum subtracts, which bools do not
        raise TypeError("cumsum: bool inputs are not supported")
    return tuple(x.shape), x.dtype


def _cumsum_validate(x, *, axis, exclusive, reverse):
    check_axis("cumsum", "axis", axis, x.ndim)
    check_bool("cumsum", "exclusive", exclusive)
    check_bool("cumsum", "reverse", reverse)


cumsum_p = Primitive(
    "cumsum", _cumsum, nin=1, fresh=True,
    abstract=_cumsum_abstract, validate=_cumsum_validate,
    # the transpose of a running sum is the running sum taken the other way
    vjp=(lambda g, ans, x, *, axis, exclusive, reverse:
         cumsum(g, axis=axis, exclusive=exclusive, reverse=not reverse),),
    jvp=(lambda t, ans, x, *, axis, exclusive, reverse:
         cumsum(t, axis=axis, exclusive=exclusive, reverse=reverse),),
    batch=lambda args, batched, *, axis, **p: cumsum_p.bind_raw(args[0], axis=axis + 1, **p),
    emit="_cumsum({0}, {axis}, {exclusive}, {reverse})", sparsity="linear", complex="real_linear")


def _arg_batch(name):
    return lambda args, batched, *, axis, **p: PRIMITIVES[name].bind_raw(
        args[0], axis=axis + 1, **p)


def _arg_abstract(x, *, axis, output_type):
    return tuple(s for i, s in enumerate(x.shape) if i != axis), np.dtype(output_type)


def _arg_validate(name):
    def rule(x, *, axis, output_type):
        check_axis(name, "axis", axis, x.ndim)
        if x.shape[axis] == 0:
            fail(name, "axis", f"{axis} is empty in {tuple(x.shape)}: no element to pick")
        check_dtype(name, "output_type", output_type, names=("int32", "int64"))
    return rule


def _arg_extreme(x, axis, output_type, largest):
    """TensorFlow's CPU ArgMax/ArgMin: a scan from (index 0, the dtype's lowest finite value
    for argmax, highest for argmin) that moves only to a strictly larger (smaller) element.

    So NaN is skipped (it compares false), a row of only NaN (or only -inf, or the lowest
    finite value, for argmax) gives 0, and ties give the first index, as NumPy. NumPy's
    ``argmax`` returns a NaN's index instead: its answer is kept wherever the element it
    picked is one the scan would move to, and recomputed only where it is not.
    """
    find = xp.argmax if largest else xp.argmin
    i = find(x, axis=axis)
    if x.dtype.kind == "f" and x.size:
        start = xp.finfo(x.dtype).min if largest else xp.finfo(x.dtype).max
        v = xp.take_along_axis(x, xp.expand_dims(i, axis), axis=axis)
        if not ((v > start) if largest else (v < start)).all():
            fill = (x > start) if largest else (x < start)
            i = find(xp.where(fill, x, start), axis=axis)
    return i.astype(output_type)


def _tf_argmax(x, axis, output_type):
    return _arg_extreme(x, axis, output_type, True)


def _tf_argmin(x, axis, output_type):
    return _arg_extreme(x, axis, output_type, False)


argmax_p = nondiff("argmax", _tf_argmax, 1, emit="_tf_argmax({0}, {axis}, '{output_type}')",
                   abstract=_arg_abstract, validate=_arg_validate("argmax"),
                   batch=_arg_batch("argmax"), fresh=True)
argmin_p = nondiff("argmin", _tf_argmin, 1, emit="_tf_argmin({0}, {axis}, '{output_type}')",
                   abstract=_arg_abstract, validate=_arg_validate("argmin"),
                   batch=_arg_batch("argmin"), fresh=True)
