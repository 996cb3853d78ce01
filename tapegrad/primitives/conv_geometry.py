"""The geometry that convolution and pooling share: output sizes, padding, the windows
of an image as im2col columns (and their scatter back), param checks, and batch folding.

Layout as in ``primitives/conv.py``: images ``(N, S_1..S_d, C)``, channels last.
"""
import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tapegrad.primitives import api
from tapegrad.primitives.params import check_int, fail
from tapegrad.primitives.families import xp


# ---- geometry ------------------------------------------------------------------------------
def out_size(n, k, stride, dilation, lo, hi):
    """Output length along one axis: TensorFlow's formula, negative when the window does not fit."""
    eff = (k - 1) * dilation + 1
    span = n + lo + hi - eff + stride
    return span // stride if span >= 0 else -((-span) // stride)  # C++ division truncates


def check_geometry(name, spatial, kernel, strides, dilations, padding):
    """The output's spatial shape, or TensorFlow's error for bad params."""
    d = len(spatial)
    if not (len(kernel) == len(strides) == len(dilations) == len(padding) == d):
        raise ValueError(f"{name}: {d} spatial axes need {d} strides, dilations and padding "
                         f"pairs, got {strides}, {dilations}, {padding}")
    if any(s < 1 for s in strides):
        raise ValueError(f"{name}: strides should be larger than 0, got {tuple(strides)}")
    if any(r < 1 for r in dilations):
        raise ValueError(f"{name}: dilated rates should be larger than 0, got {tuple(dilations)}")
    if any(lo < 0 or hi < 0 for lo, hi in padding):
        raise ValueError(f"{name}: all elements of explicit paddings must be nonnegative")
    out = []
    for n, k, s, r, (lo, hi) in zip(spatial, kernel, strides, dilations, padding):
        o = out_size(n, k, s, r, lo, hi)
        if o < 0:
            raise ValueError(f"{name}: computed output size would be negative: {o} "
                             f"[input_size: {n + lo + hi}, effective_filter_size: "
                             f"{(k - 1) * r + 1}, stride: {s}]")
        out.append(o)
    return tuple(out)


def _offsets(kernel):
    return itertools.product(*[range(k) for k in kernel])


def _window_slices(k, strides, dilations, out):
    """The strided slice of the padded input that kernel offset ``k`` reads for every output."""
    return tuple(slice(i * r, i * r + s * (o - 1) + 1, s)
                 for i, s, r, o in zip(k, strides, dilations, out))


def pad_spatial(x, padding, value=0):
    """``x`` with its spatial axes padded by ``value`` (one fill and one copy: ``np.pad``
    takes 4x longer on LeNet's images, in Python bookkeeping)."""
    if not any(lo or hi for lo, hi in padding):
        return x
    shape = (x.shape[0],) + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[1:-1], padding)) \
        + (x.shape[-1],)
    out = xp.full(shape, value, x.dtype)
    out[(slice(None),) + tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape[1:-1], padding))
        ] = x
    return out


def permute_runs(a, perm):
    """``a.transpose(perm + (last,))`` as a new C-contiguous array: the last axis stays last.

    Its runs are moved as units (a void dtype of a run's bytes), so the copy moves
    ``a.size / C`` elements of ``C * itemsize`` bytes: 2-20x faster than NumPy's transposing
    copy when C is small (C = 6: 0.4 ms against 10 ms for LeNet's columns). Bytes move as
    they are (NaN payloads, signed zeros).
    """
    c = a.shape[-1]
    shape = tuple(a.shape[i] for i in perm) + (c,)
    if a.size == 0:
        return xp.empty(shape, a.dtype)
    if a.strides[-1] != a.itemsize:
        a = xp.ascontiguousarray(a)
    runs = a.view(np.dtype((np.void, c * a.itemsize)))[..., 0]
    return xp.ascontiguousarray(runs.transpose(perm)).view(a.dtype).reshape(shape)


def windows(x, kernel, strides, dilations, padding, out):
    """Every window of the padded input, ``(N, O..., K..., C)``, contiguous (im2col)."""
    xpad = pad_spatial(x, padding)
    d = len(kernel)
    n, c = xpad.shape[0], xpad.shape[-1]
    if 0 in out or n == 0:
        return xp.zeros((n,) + tuple(out) + tuple(kernel) + (c,), xpad.dtype)
    eff = tuple((k - 1) * r + 1 for k, r in zip(kernel, dilations))
    v = sliding_window_view(xpad, eff, axis=tuple(range(1, d + 1)))  # (N, S'.., C, EK..)
    v = v[(slice(None),) + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(out, strides))
          + (slice(None),) + tuple(slice(None, None, r) for r in dilations)]
    return xp.ascontiguousarray(xp.moveaxis(v, 1 + d, -1))


def offset_rows(x, kernel, strides, dilations, padding, out):
    """Every window, offset-major: ``(K*C, N*O)``, row ``(k, c)`` is channel ``c`` at kernel
    offset ``k`` for every output. Each offset is one copy of a strided slice into contiguous
    rows, so for a few channels this is 4-40x faster than ``windows`` (whose rows are only
    ``K*C`` long), and the GEMMs on it stay as fast (measured at C = 1..3 on LeNet and W8)."""
    xpad = pad_spatial(x, padding)
    n, c = xpad.shape[0], xpad.shape[-1]
    buf = xp.empty(tuple(kernel) + (c, n) + tuple(out), xpad.dtype)
    if 0 not in out and n:
        xt = xp.moveaxis(xpad, -1, 0)  # (C, N, S...): a view
        for k in _offsets(kernel):
            buf[k] = xt[(slice(None), slice(None)) + _window_slices(k, strides, dilations, out)]
    return buf.reshape(math.prod(kernel) * c, n * math.prod(out))


def _scatter_windows(cols, kernel, spatial, strides, dilations, padding):
    """The transpose of ``windows``: add each kernel offset's columns back onto the input.

    ``cols`` is offset-major, ``(K, N, O..., C)``, so each add reads contiguous memory. With
    strides, the input splits into ``prod(strides)`` phases (positions congruent modulo the
    stride): within a phase every offset lands on a contiguous block, so the adds go to a
    dense array and each phase is copied into place once (measured 3x faster than adding
    with strided writes at stride 2).
    """
    d = len(spatial)
    n, out, c = cols.shape[1], tuple(cols.shape[2:2 + d]), cols.shape[-1]
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(spatial, padding))
    if any(s > 1 for s in strides):
        acc = xp.empty((n,) + padded + (c,), cols.dtype)
        phases = {}
        for flat, k in enumerate(_offsets(kernel)):
            key = tuple((i * r) % s for i, r, s in zip(k, dilations, strides))
            phases.setdefault(key, []).append((flat, k))
        for key in itertools.product(*[range(s) for s in strides]):
            sizes = tuple(-(-(p - a) // s) for p, a, s in zip(padded, key, strides))
            dst = xp.zeros((n,) + sizes + (c,), cols.dtype)
            if 0 not in out:
                for flat, k in phases.get(key, ()):
                    q = tuple((i * r) // s for i, r, s in zip(k, dilations, strides))
                    dst[(slice(None),) + tuple(slice(a, a + o) for a, o in zip(q, out))] \
                        += cols[flat]
            acc[(slice(None),) + tuple(slice(a, None, s) for a, s in zip(key, strides))] = dst
    else:
        acc = xp.zeros((n,) + padded + (c,), cols.dtype)
        if 0 not in out:
            for flat, k in enumerate(_offsets(kernel)):
                acc[(slice(None),) + _window_slices(k, strides, dilations, out)] += cols[flat]
    if any(lo or hi for lo, hi in padding):
        acc = acc[(slice(None),) + tuple(slice(lo, lo + s) for s, (lo, _) in
                                        zip(spatial, padding))]
    return acc



# ---- param checks (a loaded program's params are untrusted) --------------------------------
def check_ints(prim, param, v, d, lo):
    """A tuple of ``d`` ints >= ``lo``."""
    if not isinstance(v, tuple) or len(v) != d:
        fail(prim, param, f"must be a tuple of {d} ints, got {v!r}"[:120])
    return tuple(check_int(prim, param, s, lo) for s in v)


def check_padding(prim, v, d):
    if not isinstance(v, tuple) or len(v) != d or not all(
            isinstance(p, tuple) and len(p) == 2 for p in v):
        fail(prim, "padding", f"must be {d} (lo, hi) pairs, got {v!r}"[:120])
    return tuple((check_int(prim, "padding", lo, 0), check_int(prim, "padding", hi, 0))
                 for lo, hi in v)



# ---- batching: the batch axis joins an axis the operation already maps over ---------------
def fold(t, axis, groups):
    """``t`` with its leading batch axis B merged into ``axis`` (of the unbatched shape).

    That axis, of size ``groups * c``, becomes ``groups * B * c``: each group keeps its own
    block, with the B copies inside it (``groups=1``: B outermost).
    """
    shape = tuple(t.shape)
    b, rest = shape[0], shape[1:]
    ax = axis % len(rest)
    if ax == 0 and groups == 1:  # the batch axis in front of N: already in place
        return api.reshape(t, (b * rest[0],) + rest[1:])
    c = rest[ax] // groups
    t = api.reshape(t, (b,) + rest[:ax] + (groups, c) + rest[ax + 1:])
    perm = list(range(1, ax + 1)) + [ax + 1, 0] + list(range(ax + 2, len(rest) + 2))
    t = api.transpose(t, perm)
    return api.reshape(t, rest[:ax] + (groups * b * c,) + rest[ax + 1:])


def unfold(t, axis, groups, b):
    """The inverse of ``fold``: split B out of ``axis`` and make it the leading axis."""
    shape = tuple(t.shape)
    ax = axis % len(shape)
    c = shape[ax] // (groups * b)
    if ax == 0 and groups == 1:
        return api.reshape(t, (b, c) + shape[1:])
    t = api.reshape(t, shape[:ax] + (groups, b, c) + shape[ax + 1:])
    perm = [ax + 1] + list(range(ax + 1)) + list(range(ax + 2, len(shape) + 2))
    t = api.transpose(t, perm)
    return api.reshape(t, (b,) + shape[:ax] + (groups * c,) + shape[ax + 1:])
