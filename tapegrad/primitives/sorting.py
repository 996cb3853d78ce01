"""Sorting: ``argsort`` (no gradient) and ``take_along_axis`` with its transpose.

``sort`` and ``top_k`` are composed: the values are ``take_along_axis(x, argsort(x))``, so
their gradient flows to the elements that were picked, to any order.
"""
import numpy as np

from tapegrad.primitives.api import broadcast_to, expand_dims
from tapegrad.core.dispatch import Primitive
from tapegrad.primitives.params import check_axis, check_bool, check_shape, fail
from tapegrad.primitives.families import xp


def _argsort(x, axis, descending, stable):
    # Always stable, whatever ``stable`` says: TensorFlow's sorts are top_k, which puts equal
    # elements in index order either way (NumPy's default quicksort does not). Descending
    # sorts the keys -x of floats (NaN stays last) and ~x of integers and bools, which is
    # -x - 1 without overflow (-x wraps the unsigned integers and the most negative one).
    if descending:
        x = -x if x.dtype.kind in "fc" else ~x
    return xp.argsort(x, axis=axis, kind="stable").astype(np.int32)


def _argsort_validate(x, *, axis, descending, stable):
    check_axis("argsort", "axis", axis, x.ndim)
    check_bool("argsort", "descending", descending)
    check_bool("argsort", "stable", stable)


argsort_p = Primitive(
    "argsort", _argsort, nin=1, nondiff=True,
    abstract=lambda x, *, axis, descending, stable: (tuple(x.shape), np.dtype(np.int32)),
    validate=_argsort_validate,
    batch=lambda args, batched, *, axis, **p: argsort_p.bind_raw(args[0], axis=axis + 1, **p),
    emit="_argsort({0}, {axis}, {descending}, {stable})")


def _full_index(idx, axis):
    """An advanced index that places ``idx`` along ``axis`` and ranges elsewhere."""
    key = []
    for a, n in enumerate(idx.shape):
        if a == axis:
            key.append(idx)
        else:
            shape = [1] * idx.ndim
            shape[a] = n
            key.append(np.arange(n).reshape(shape))
    return tuple(key)


def _put_along_axis_add(g, idx, axis, shape):
    out = xp.zeros(shape, dtype=g.dtype)
    xp.add.at(out, _full_index(idx, axis), g)  # indices may repeat: accumulate
    return out


def _along(prim, x_shape, idx, axis):
    """``idx`` indexes along ``axis`` an array of ``x_shape``: same rank, same other sizes."""
    if idx.dtype.kind not in "iu" or (idx.dtype.kind == "u" and idx.dtype.itemsize >= 8):
        fail(prim, "axis", f"needs integer indices, got {idx.dtype.name}")
    check_axis(prim, "axis", axis, len(x_shape))
    if idx.ndim != len(x_shape) or any(a != b for k, (a, b) in
                                       enumerate(zip(idx.shape, x_shape)) if k != axis):
        fail(prim, "axis", f"{axis}: indices {tuple(idx.shape)} do not fit {tuple(x_shape)} "
                           "off that axis")
    if x_shape[axis] == 0 and 0 not in idx.shape:
        fail(prim, "axis", f"{axis} is empty: no index can be in range")


def _put_along_validate(g, idx, *, axis, shape):
    shape = check_shape("put_along_axis_add", "shape", shape)
    _along("put_along_axis_add", shape, idx, axis)
    if tuple(g.shape) != tuple(idx.shape):
        fail("put_along_axis_add", "shape", f"values {tuple(g.shape)} and indices "
                                            f"{tuple(idx.shape)} differ")


def _both_batched(args, batched):
    """Give every operand the leading batch axis (the two share their rank per example)."""
    b = next(a.shape[0] for a, f in zip(args, batched) if f)
    return [a if f else broadcast_to(expand_dims(a, 0), (b,) + tuple(a.shape))
            for a, f in zip(args, batched)]


take_along_axis_p = Primitive(
    "take_along_axis", lambda x, idx, axis: xp.take_along_axis(x, idx, axis=axis), nin=2,
    abstract=lambda x, idx, *, axis: (tuple(idx.shape), x.dtype),
    validate=lambda x, idx, *, axis: _along("take_along_axis", x.shape, idx, axis),
    vjp=(lambda g, ans, x, idx, *, axis:
         put_along_axis_add_p.bind_raw(g, idx, axis=axis, shape=tuple(x.shape)), None),
    jvp=(lambda t, ans, x, idx, *, axis: take_along_axis_p.bind_raw(t, idx, axis=axis), None),
    batch=lambda args, batched, *, axis: take_along_axis_p.bind_raw(
        *_both_batched(args, batched), axis=axis + 1),
    emit="np.take_along_axis({0}, {1}, axis={axis})", sparsity="copy_along_axis",
    complex="real_linear")

put_along_axis_add_p = Primitive(
    "put_along_axis_add", _put_along_axis_add, nin=2,
    abstract=lambda g, idx, *, axis, shape: (tuple(shape), g.dtype),
    validate=_put_along_validate,
    vjp=(lambda g, ans, x, idx, *, axis, shape:
         take_along_axis_p.bind_raw(g, idx, axis=axis), None),
    jvp=(lambda t, ans, x, idx, *, axis, shape:
         put_along_axis_add_p.bind_raw(t, idx, axis=axis, shape=shape), None),
    batch=lambda args, batched, *, axis, shape: put_along_axis_add_p.bind_raw(
        *_both_batched(args, batched), axis=axis + 1,
        shape=(next(a.shape[0] for a, f in zip(args, batched) if f),) + tuple(shape)),
    emit="_put_along_axis_add({0}, {1}, {axis}, {shape})",
    sparsity="scatter_along_axis", transposes="take_along_axis", complex="real_linear")


EMIT_HELPERS = {"_argsort": _argsort, "_put_along_axis_add": _put_along_axis_add}
