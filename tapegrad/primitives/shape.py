"""Structural primitives: they move, select or copy elements and never change a value.

All of them are linear, so their JVP is the primitive itself applied to the tangent, and
their VJP is the transposed structural operation.
"""
import math

import numpy as np

from tapegrad.primitives.api import (broadcast_to, cast, diag, reshape,
    transpose, zeros_like)
from tapegrad.core.dispatch import Primitive
from tapegrad.primitives import identities
from tapegrad.primitives.complex import is_complex, real
from tapegrad.primitives.casting import cast_array
from tapegrad.primitives.params import (check_axis, check_dtype, check_number,
                                        check_perm, check_shape, fail, is_int)
from tapegrad.primitives.families import linear_jvp, unbroadcast, xp
from tapegrad.primitives.gather import Index, getitem_p


def _same_abstract(x):
    return tuple(x.shape), x.dtype


# ---- reshape ----------------------------------------------------------------------------
def _reshape_abstract(x, *, shape):
    n, m = math.prod(x.shape), math.prod(shape)  # exact: NumPy's int64 product can wrap
    if n != m:
        raise ValueError(f"reshape: {tuple(x.shape)} has {n} elements, shape {tuple(shape)} "
                         f"needs {m}")
    return tuple(shape), x.dtype


reshape_p = Primitive(
    "reshape", lambda x, shape: xp.reshape(x, shape), nin=1,
    abstract=_reshape_abstract,
    validate=lambda x, *, shape: check_shape("reshape", "shape", shape),
    vjp=(lambda g, ans, x, *, shape: reshape(g, x.shape),), jvp=linear_jvp("reshape"),
    batch=lambda args, batched, *, shape: reshape_p.bind_raw(
        args[0], shape=(args[0].shape[0],) + tuple(shape)),
    emit="np.reshape({0}, {shape})", sparsity="copy", identities=identities.reshape,
    complex="real_linear")


# ---- broadcast_to: its VJP is the one un-broadcast -------------------------------------
def _broadcast_to_abstract(x, *, shape):
    lead = len(shape) - x.ndim  # np.broadcast_to gives exactly ``shape`` or fails
    if lead < 0 or any(s not in (1, t) for s, t in zip(x.shape, shape[lead:])):
        raise ValueError(f"broadcast_to: {tuple(x.shape)} cannot be broadcast to {tuple(shape)}")
    return tuple(shape), x.dtype


def _broadcast_batch(args, batched, *, shape):
    x = args[0]
    r = x.ndim - 1
    if r < len(shape):
        x = reshape(x, (x.shape[0],) + (1,) * (len(shape) - r) + tuple(x.shape[1:]))
    return broadcast_to_p.bind_raw(x, shape=(x.shape[0],) + tuple(shape))


broadcast_to_p = Primitive(
    "broadcast_to", lambda x, shape: xp.broadcast_to(x, shape), nin=1,
    abstract=_broadcast_to_abstract,
    validate=lambda x, *, shape: check_shape("broadcast_to", "shape", shape),
    vjp=(lambda g, ans, x, *, shape: unbroadcast(g, x.shape),),
    jvp=linear_jvp("broadcast_to"), batch=_broadcast_batch,
    emit="np.broadcast_to({0}, {shape})", sparsity="copy", identities=identities.broadcast_to,
    complex="real_linear", broadcast_view=True)

# ---- transpose ---------------------------------------------------------------------------
transpose_p = Primitive(
    "transpose", lambda x, perm: xp.transpose(x, perm), nin=1,
    abstract=lambda x, *, perm: (tuple(x.shape[i] for i in perm), x.dtype),
    validate=lambda x, *, perm: check_perm("transpose", "perm", perm, x.ndim),
    vjp=(lambda g, ans, x, *, perm: transpose(g, tuple(int(i) for i in np.argsort(perm))),),
    jvp=linear_jvp("transpose"),
    batch=lambda args, batched, *, perm: transpose_p.bind_raw(
        args[0], perm=(0,) + tuple(p + 1 for p in perm)),
    emit="np.transpose({0}, {perm})", sparsity="copy", identities=identities.transpose,
    complex="real_linear")

# ---- cast --------------------------------------------------------------------------------
def _cast_vjp(g, ans, x, *, dtype):
    if x.dtype.kind not in "fc":
        return None
    if is_complex(g) and not is_complex(x):
        # a cast from complex to real keeps the real part (as NumPy and TensorFlow do): its
        # derivative is ``real``, taken explicitly (NumPy would warn about the discarded part)
        g = real(g)
    return cast(g, x.dtype)


def _cast_jvp(t, ans, x, *, dtype):
    if np.dtype(dtype).kind not in "fc":
        return None
    if is_complex(t) and np.dtype(dtype).kind != "c":
        t = real(t)
    return cast(t, dtype)


cast_p = Primitive(
    "cast", cast_array, nin=1,
    vjp=(_cast_vjp,), jvp=(_cast_jvp,), complex="own",
    abstract=lambda x, *, dtype: (tuple(x.shape), np.dtype(dtype)),
    validate=lambda x, *, dtype: check_dtype("cast", "dtype", dtype),
    batch=lambda args, batched, *, dtype: cast_p.bind_raw(args[0], dtype=dtype),
    emit="cast_array({0}, '{dtype}')", elementwise=True, identities=identities.cast)




# ---- concat: variadic, so its rules take every input at once ------------------------------
def _concat_vjp(g, ans, *xs, axis):
    cts, start = [], 0
    for x in xs:
        n = x.shape[axis]
        key = (slice(None),) * axis + (slice(start, start + n),)
        cts.append(getitem_p.bind_raw(g, index=Index(key)))
        start += n
    return tuple(cts)


def _concat_jvp(tangents, ans, *xs, axis):
    ts = [t if t is not None else zeros_like(x) for t, x in zip(tangents, xs)]
    return concat_p.bind_raw(*ts, axis=axis)


def _concat_abstract(*xs, axis):
    first = tuple(xs[0].shape)
    for x in xs[1:]:
        s = tuple(x.shape)
        if len(s) != len(first) or s[:axis] + s[axis + 1:] != first[:axis] + first[axis + 1:]:
            raise ValueError(f"concat: shapes {first} and {s} differ off axis {axis}")
    shape = first[:axis] + (sum(x.shape[axis] for x in xs),) + first[axis + 1:]
    return shape, np.result_type(*[x.dtype for x in xs])


def _concat_batch(args, batched, *, axis):
    b = next(a.shape[0] for a, f in zip(args, batched) if f)
    xs = [a if f else broadcast_to(a, (b,) + tuple(a.shape)) for a, f in zip(args, batched)]
    return concat_p.bind_raw(*xs, axis=axis + 1)


concat_p = Primitive("concat", lambda *xs, axis: xp.concatenate(xs, axis=axis), nin=None,
                     fresh=True,
                     vjp=_concat_vjp, jvp=_concat_jvp, abstract=_concat_abstract,
                     validate=lambda *xs, axis: check_axis("concat", "axis", axis, xs[0].ndim),
                     batch=_concat_batch, emit="np.concatenate([{args}], axis={axis})",
                     sparsity="copy", complex="real_linear")


# ---- pad (constant mode) ---------------------------------------------------------------------
def _pad(x, paddings, constant_values):
    return xp.pad(x, paddings, mode="constant", constant_values=constant_values)


def _pad_vjp(g, ans, x, *, paddings, constant_values):
    key = tuple(slice(lo, lo + n) for (lo, hi), n in zip(paddings, x.shape))
    return getitem_p.bind_raw(g, index=Index(key))


def _pad_abstract(x, *, paddings, constant_values):
    return tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, paddings)), x.dtype


def _pad_validate(x, *, paddings, constant_values):
    if not (isinstance(paddings, tuple) and len(paddings) == x.ndim and all(
            isinstance(p, tuple) and len(p) == 2 and all(is_int(w) and w >= 0 for w in p)
            for p in paddings)):
        fail("pad", "paddings", f"must be {x.ndim} pairs of sizes >= 0, got {paddings!r:.60}")
    v = check_number("pad", "constant_values", constant_values)
    if x.dtype.kind in "iu":  # the value must be one of the integers the array holds
        info = np.iinfo(x.dtype)
        if not (np.isfinite(float(v)) and float(v) == int(v) and info.min <= int(v) <= info.max):
            fail("pad", "constant_values", f"{v!r} is not a {x.dtype.name} value")


pad_p = Primitive("pad", _pad, nin=1, fresh=True, vjp=(_pad_vjp,), abstract=_pad_abstract,
                  validate=_pad_validate, value_params=("constant_values",),
                  jvp=(lambda t, ans, x, *, paddings, constant_values:
                       pad_p.bind_raw(t, paddings=paddings, constant_values=0),),
                  batch=lambda args, batched, *, paddings, constant_values: pad_p.bind_raw(
                      args[0], paddings=((0, 0),) + tuple(paddings),
                      constant_values=constant_values),
                  emit="np.pad({0}, {paddings}, constant_values={constant_values})",
                  sparsity="copy", complex="real_linear")


# ---- diagonal of the last two axes ----------------------------------------------------------
def _diag_part_abstract(x):
    if x.ndim < 2:
        raise ValueError(f"diag_part: expected matrices, got shape {tuple(x.shape)}")
    return tuple(x.shape[:-2]) + (min(x.shape[-2:]),), x.dtype


diag_part_p = Primitive(
    "diag_part", lambda x: xp.diagonal(x, axis1=-2, axis2=-1), nin=1,
    abstract=_diag_part_abstract,
    vjp=(lambda g, ans, x: diag(g, x.shape[-2], x.shape[-1]),), jvp=linear_jvp("diag_part"),
    batch=lambda args, batched: diag_part_p.bind_raw(args[0]),
    emit="np.diagonal({0}, axis1=-2, axis2=-1)", sparsity="copy", complex="real_linear")


# ---- stop_gradient: the identity that no tape looks through ---------------------------------
stop_gradient_p = Primitive("stop_gradient", lambda x: x, nin=1, nondiff=True, emit="{0}",
                            abstract=_same_abstract, elementwise=True,
                            batch=lambda args, batched: stop_gradient_p.bind_raw(args[0]))
