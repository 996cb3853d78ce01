"""Convolution primitives: the convolution and its two transposes, closed under differentiation.

One layout, channels last (the op layer, ``ops/conv_ops.py``, turns TensorFlow's formats and
padding strings into it):

- image ``x``: ``(N, S_1..S_d, C)``, ``C = groups * Cg``;
- filter ``w``: ``(K_1..K_d, Cg, Co)``, ``Co = groups * Cog`` (TensorFlow's HWIO);
- output ``y``: ``(N, O_1..O_d, Co)``.

Params, all JSON-friendly: ``strides`` and ``dilations`` (d positive ints), ``padding``
(d ``(lo, hi)`` pairs of non-negative ints), ``groups``; the transposes also name the spatial
size they produce (``input_spatial``, ``kernel_spatial``). The three bilinear primitives

    conv(x, w) -> y                         the convolution (a cross-correlation, as in TF)
    conv_input_grad(y, w) -> x              the transposed convolution
    conv_filter_grad(x, y) -> w             the filter's cotangent

are each other's derivatives: <conv(x, w), y> = <x, conv_input_grad(y, w)> =
<w, conv_filter_grad(x, y)>. So every order of derivative stays within these three.

Each is one BLAS GEMM per group on the im2col matrix of windows: ``(N*O, K*C) @ (K*C, Co)``
(the forward one on offset-major columns in blocks of rows where that pays: ``PANEL_BYTES``).
The windows are gathered with ``sliding_window_view`` (one copy) or, for a few channels, as
the transposed matrix ``(K*C, N*O)`` by copying one strided slice per kernel offset into
contiguous rows (measured: 2-5x faster than either layout's alternative at C = 1..3, slower
from C = 4 on); the transposed convolution scatters its columns back with one strided add per
kernel offset.
"""
import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.primitives import api
from tapegrad.primitives.params import check_int, fail
from tapegrad.primitives.families import xp

FEW_CHANNELS = 4  # below this (and without groups), the columns are offset-major (offset_rows)
# The forward GEMM on offset-major columns, (M, K) = cols.T against a (K, Co) filter, runs in
# blocks of output rows whose panels (K + Co values a row) fit in PANEL_BYTES (OpenBLAS is
# slow on one tall, narrow call there). Measured on one thread, float32, M = 50,000 (columns
# of 3-15 MB): 0.25-0.9x the time of one call for K >= 16 taps x channels with Co <= 16
# (LeNet's first layer, K = 25, Co = 6: 0.65x; 6,000 <= M <= 25,000 alike); mixed for K < 16
# (0.6-1.3x; W8's 3x3 layer, K = 9, Co = 8: 1.1-1.3x), 1.0-1.3x at Co = 32 with K >= 48 and
# at Co = 64.
# So only for K >= 16 and Co <= 16, with at least two blocks (``_gemm_rows``). The filter's
# cotangent on the same columns, rows (K, M) @ g (M, Co), sums over the same blocks of M:
# 0.45-0.65x at K = 25, Co <= 16 (its sums in another order: rounding differs).
PANEL_BYTES = 256 << 10
PANEL_MIN_K, PANEL_MAX_CO = 16, 16


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


# ---- the three implementations: one GEMM per group -----------------------------------------
def _gemm_rows(k, co, m, itemsize):
    """Output rows per GEMM call of an offset-major forward product, or None for one call."""
    if k < PANEL_MIN_K or co > PANEL_MAX_CO:
        return None
    rows = max(256, PANEL_BYTES // ((k + co) * itemsize))
    return rows if m >= 2 * rows else None


def _rows_times_rows(rows, g):
    """``rows @ g`` for offset-major columns ``rows`` (K, M) and the output's cotangent ``g``
    (M, Co): the filter's cotangent, summed over blocks of M where ``_gemm_rows`` says so (the
    same products, added in another order: the result differs by rounding only)."""
    k, m = rows.shape
    block = _gemm_rows(k, g.shape[1], m, rows.itemsize)
    if block is None:
        return rows @ g
    acc = rows[:, :block] @ g[:block]
    for s in range(block, m, block):
        acc += rows[:, s:s + block] @ g[s:s + block]
    return acc


def _rows_times(rows, w):
    """``rows.T @ w`` for offset-major columns ``rows`` (K, M): in blocks of output rows where
    ``_gemm_rows`` says so (each output row is the same K-long dot product either way)."""
    k, m = rows.shape
    block = _gemm_rows(k, w.shape[1], m, rows.itemsize)
    if block is None:
        return rows.T @ w
    y = xp.empty((m, w.shape[1]), np.result_type(rows.dtype, w.dtype))
    for s in range(0, m, block):
        xp.matmul(rows[:, s:s + block].T, w, out=y[s:s + block])
    return y


def _conv1(x, w, *, strides, dilations, padding, groups):
    d = x.ndim - 2
    kernel = w.shape[:d]
    out = check_geometry("conv", x.shape[1:-1], kernel, strides, dilations, padding)
    n, c, co, g = x.shape[0], x.shape[-1], w.shape[-1], groups
    m, kk = n * math.prod(out), math.prod(kernel)
    if g == 1 and c < FEW_CHANNELS:
        rows = offset_rows(x, kernel, strides, dilations, padding, out)
        return _rows_times(rows, w.reshape(kk * c, co)).reshape((n,) + out + (co,))
    win = windows(x, kernel, strides, dilations, padding, out)
    if g == 1:
        y = win.reshape(m, kk * c) @ w.reshape(kk * c, co)
    else:
        cg, cog = c // g, co // g
        a = win.reshape(m, kk, g, cg).transpose(2, 0, 1, 3).reshape(g, m, kk * cg)
        b = w.reshape(kk, cg, g, cog).transpose(2, 0, 1, 3).reshape(g, kk * cg, cog)
        y = xp.matmul(a, b).transpose(1, 0, 2).reshape(m, co)
    return y.reshape((n,) + out + (co,))


# The transposed convolution's offset-major columns by one GEMM per kernel offset (a stacked
# matmul) instead of one GEMM and ``permute_runs``. Measured, CPU time on one thread, paired,
# per offset over one GEMM + permute, M = 4,608-25,088 rows, K = 9 and 25 offsets, float32 /
# float64: C >= 5 input channels with Co <= 16 output channels 0.17-0.89 / 0.15-0.76 (LeNet's
# second layer, C = 6, Co = 16, M = 6,400: 0.43 / 0.23), once 1.03; C >= 16 with Co <= 32
# 0.46-0.94 / 0.34-0.92; but C = 5-8 with Co = 24-32 0.42-1.36, Co = 64 0.68-2.1, C = 3 with
# Co >= 16 0.8-2.8 (a GEMM C columns wide is slow; runs of 8 or 16 bytes move fast).
PER_OFFSET_MIN_C, PER_OFFSET_MAX_CO = 5, 16
PER_OFFSET_WIDE_C, PER_OFFSET_WIDE_CO = 16, 32


def _per_offset(c, co):
    """Whether the transposed convolution's columns are made by one GEMM per offset."""
    return (c >= PER_OFFSET_MIN_C and co <= PER_OFFSET_MAX_CO) or \
        (c >= PER_OFFSET_WIDE_C and co <= PER_OFFSET_WIDE_CO)


def _conv_input_grad1(y, w, *, input_spatial, strides, dilations, padding, groups):
    d = y.ndim - 2
    kernel, out = tuple(w.shape[:d]), tuple(y.shape[1:-1])
    n, cg, co, g = y.shape[0], w.shape[-2], w.shape[-1], groups
    c, m, kk = cg * g, n * math.prod(out), math.prod(kernel)
    # the columns offset-major, (K, M, C): one GEMM when C is 1 (its (K, M) layout is the
    # same); one GEMM per offset, (M, Co) @ (Co, C), in one stacked matmul writing (K, M, C)
    # where that pays (``_per_offset``); else one GEMM (M, K*C) whose C-long runs are then
    # moved as units (NumPy's transposing copy takes 10x as long)
    if g == 1 and c == 1:
        cols = w.reshape(kk, co) @ y.reshape(m, co).T
    elif g == 1 and _per_offset(c, co):
        cols = xp.matmul(y.reshape(m, co),
                         xp.ascontiguousarray(xp.swapaxes(w.reshape(kk, c, co), 1, 2)))
    elif g == 1:
        cols = permute_runs((y.reshape(m, co) @ w.reshape(kk * c, co).T).reshape(m, kk, c),
                            (1, 0))
    else:
        cog = co // g
        a = y.reshape(m, g, cog).transpose(1, 0, 2)
        b = w.reshape(kk, cg, g, cog).transpose(2, 3, 0, 1).reshape(g, cog, kk * cg)
        cols = permute_runs(xp.matmul(a, b).reshape(g, m, kk, cg), (2, 1, 0))
    cols = cols.reshape((kk, n) + out + (c,))
    return _scatter_windows(cols, kernel, tuple(input_spatial), strides, dilations, padding)


def _conv_filter_grad1(x, y, *, kernel_spatial, strides, dilations, padding, groups):
    kernel, out = tuple(kernel_spatial), tuple(y.shape[1:-1])
    n, c, co, g = x.shape[0], x.shape[-1], y.shape[-1], groups
    m, kk = n * math.prod(out), math.prod(kernel)
    if g == 1 and c < FEW_CHANNELS:
        rows = offset_rows(x, kernel, strides, dilations, padding, out)
        return _rows_times_rows(rows, y.reshape(m, co)).reshape(kernel + (c, co))
    win = windows(x, kernel, strides, dilations, padding, out)
    if g == 1:
        dw = win.reshape(m, kk * c).T @ y.reshape(m, co)
        return dw.reshape(kernel + (c, co))
    cg, cog = c // g, co // g
    a = win.reshape(m, kk, g, cg).transpose(2, 1, 3, 0).reshape(g, kk * cg, m)
    b = y.reshape(m, g, cog).transpose(1, 0, 2)
    dw = xp.matmul(a, b).reshape(g, kk, cg, cog).transpose(1, 2, 0, 3)
    return dw.reshape(kernel + (cg, co))


# ---- blocks of the batch: the im2col columns stay bounded (and in cache) -------------------
# Measured on W8 and LeNet (one thread, 32 MB of L3): columns that fit in the last-level cache
# are fastest whole (LeNet's 1-5 MB: 5-10% faster than 2 MB blocks, fewer GEMM calls); larger
# ones are fastest in cache-sized blocks (W8's 50 MB: 2 MB blocks are 1.5-2x faster).
COLUMN_BYTES = 2 << 20
WHOLE_BYTES = 8 << 20


def _rows(n, out, kernel, c, itemsize):
    """Images per block: all of them if their columns take at most ``WHOLE_BYTES``, else
    as many as fit in ``COLUMN_BYTES``."""
    per = max(1, math.prod(out) * math.prod(kernel) * c * itemsize)
    if n * per <= WHOLE_BYTES:
        return max(1, n)
    return max(1, min(n, COLUMN_BYTES // per))


def _conv(x, w, **p):
    d = x.ndim - 2
    out = check_geometry("conv", x.shape[1:-1], w.shape[:d], p["strides"], p["dilations"],
                         p["padding"])
    n = x.shape[0]
    k = _rows(n, out, w.shape[:d], x.shape[-1], x.dtype.itemsize)
    if k >= n:
        return _conv1(x, w, **p)
    y = xp.empty((n,) + out + (w.shape[-1],), np.result_type(x.dtype, w.dtype))
    for s in range(0, n, k):
        y[s:s + k] = _conv1(x[s:s + k], w, **p)
    return y


def _conv_input_grad(y, w, **p):
    d = y.ndim - 2
    n, c = y.shape[0], w.shape[-2] * p["groups"]
    k = _rows(n, y.shape[1:-1], w.shape[:d], c, y.dtype.itemsize)
    if k >= n:
        return _conv_input_grad1(y, w, **p)
    x = xp.empty((n,) + tuple(p["input_spatial"]) + (c,), np.result_type(y.dtype, w.dtype))
    for s in range(0, n, k):
        x[s:s + k] = _conv_input_grad1(y[s:s + k], w, **p)
    return x


def _conv_filter_grad(x, y, **p):
    n = x.shape[0]
    k = _rows(n, y.shape[1:-1], p["kernel_spatial"], x.shape[-1], x.dtype.itemsize)
    if k >= n:
        return _conv_filter_grad1(x, y, **p)
    dw = None
    for s in range(0, n, k):
        part = _conv_filter_grad1(x[s:s + k], y[s:s + k], **p)
        dw = part if dw is None else xp.add(dw, part, out=dw)
    return dw


# ---- shape rules ---------------------------------------------------------------------------
def _groups_fit(name, c, cg, co, groups):
    if groups < 1 or cg < 1 or c % cg or c // cg != groups:
        raise ValueError(f"{name}: input depth must be evenly divisible by filter depth: "
                         f"{c} vs {cg} (groups {groups})")
    if co % groups:
        raise ValueError(f"{name}: output depth must be evenly divisible by number of groups: "
                         f"{co} vs {groups}")


def _ranks(name, a, b):
    if a.ndim < 3 or a.ndim != b.ndim:
        raise ValueError(f"{name}: operands of ranks {a.ndim} and {b.ndim}; expected equal "
                         "ranks of at least 3 (batch, spatial axes, channels)")


def _conv_abstract(x, w, *, strides, dilations, padding, groups):
    _numeric("conv", x, w)
    _ranks("conv", x, w)
    d = x.ndim - 2
    _groups_fit("conv", x.shape[-1], w.shape[-2], w.shape[-1], groups)
    out = check_geometry("conv", tuple(x.shape[1:-1]), tuple(w.shape[:d]), strides, dilations,
                         padding)
    return (x.shape[0],) + out + (w.shape[-1],), np.result_type(x.dtype, w.dtype)


def _input_grad_abstract(y, w, *, input_spatial, strides, dilations, padding, groups):
    _numeric("conv_input_grad", y, w)
    _ranks("conv_input_grad", y, w)
    d = y.ndim - 2
    c = w.shape[-2] * groups
    _groups_fit("conv_input_grad", c, w.shape[-2], w.shape[-1], groups)
    if y.shape[-1] != w.shape[-1]:
        raise ValueError("conv_input_grad: filter and out_backprop must have the same out_depth "
                         f"({w.shape[-1]} vs {y.shape[-1]})")
    out = check_geometry("conv_input_grad", tuple(input_spatial), tuple(w.shape[:d]), strides,
                         dilations, padding)
    _sizes_match("conv_input_grad", out, tuple(y.shape[1:-1]), input_spatial)
    return (y.shape[0],) + tuple(input_spatial) + (c,), np.result_type(y.dtype, w.dtype)


def _filter_grad_abstract(x, y, *, kernel_spatial, strides, dilations, padding, groups):
    _numeric("conv_filter_grad", x, y)
    _ranks("conv_filter_grad", x, y)
    if x.shape[-1] % groups or y.shape[-1] % groups or groups < 1:
        raise ValueError(f"conv_filter_grad: depths {x.shape[-1]} and {y.shape[-1]} are not "
                         f"divisible by {groups} groups")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"conv_filter_grad: batch sizes {x.shape[0]} and {y.shape[0]} differ")
    out = check_geometry("conv_filter_grad", tuple(x.shape[1:-1]), tuple(kernel_spatial),
                         strides, dilations, padding)
    _sizes_match("conv_filter_grad", out, tuple(y.shape[1:-1]), tuple(x.shape[1:-1]))
    return (tuple(kernel_spatial) + (x.shape[-1] // groups, y.shape[-1]),
            np.result_type(x.dtype, y.dtype))


def _sizes_match(name, computed, actual, spatial):
    if tuple(computed) != tuple(actual):
        raise ValueError(f"{name}: size of out_backprop doesn't match computed: actual = "
                         f"{tuple(actual)}, computed = {tuple(computed)} for input "
                         f"{tuple(spatial)}")


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


def _validate(name, extra=None):
    def rule(a, b, *, strides, dilations, padding, groups, **params):
        d = len(strides) if isinstance(strides, tuple) else -1
        if d < 1 or a.ndim != d + 2:
            fail(name, "strides", f"must hold one int per spatial axis of the rank-{a.ndim} "
                                  f"operand, got {strides!r}"[:120])
        check_ints(name, "strides", strides, d, 1)
        check_ints(name, "dilations", dilations, d, 1)
        check_padding(name, padding, d)
        check_int(name, "groups", groups, 1)
        if extra:
            check_ints(name, extra, params[extra], d, 0 if extra == "input_spatial" else 1)
    return rule


def _numeric(name, *avals):
    for a in avals:
        if np.dtype(a.dtype).kind not in "iuf":
            raise TypeError(f"{name}: expected numeric operands, got {np.dtype(a.dtype).name}")


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


# Where a batch axis of one operand goes when the other is shared: to the free axis of that
# operand that the result keeps. (axis, grouped?) for the operand, then for the result.
# Images are (N, ..., C), filters (K..., Cg, Co).
_FREE_AXIS = {
    "conv": (((0, False), (0, False)), ((-1, True), (-1, True))),                # x: N; w: Co
    "conv_input_grad": (((0, False), (0, False)), ((-2, False), (-1, True))),    # y: N; w: Cg
    "conv_filter_grad": (((-1, True), (-2, False)), ((-1, True), (-1, True))),   # x: C; y: Co
}


def _batch_rule(name):
    """The batching rule of convolution primitive ``name`` (the block's own, made with it)."""
    def rule(args, batched, *, groups, **params):
        prim = PRIMITIVES[name]
        if all(batched):
            # both carry B: B independent problems side by side as B * groups groups
            b = args[0].shape[0]
            out = prim.bind_raw(*[fold(a, -1, 1) for a in args], groups=b * groups, **params)
            return unfold(out, -1, 1, b)
        i = 0 if batched[0] else 1
        b = args[i].shape[0]
        (ax, grp), (rax, rgrp) = _FREE_AXIS[prim.name][i]
        ops = list(args)
        ops[i] = fold(args[i], ax, groups if grp else 1)
        out = prim.bind_raw(*ops, groups=groups, **params)
        return unfold(out, rax, groups if rgrp else 1, b)
    return rule


# ---- the registry blocks -------------------------------------------------------------------
_EMIT = "strides={strides}, dilations={dilations}, padding={padding}, groups={groups})"


def _p(params, drop=()):
    return {k: v for k, v in params.items() if k not in drop}


conv_p = Primitive(
    "conv", _conv, nin=2, abstract=_conv_abstract,
    vjp=(lambda g, ans, x, w, **p: conv_input_grad_p.bind_raw(
            g, w, input_spatial=tuple(x.shape[1:-1]), **p),
         lambda g, ans, x, w, **p: conv_filter_grad_p.bind_raw(
            x, g, kernel_spatial=tuple(w.shape[:-2]), **p)),
    jvp=(lambda x_dot, ans, x, w, **p: conv_p.bind_raw(x_dot, w, **p),
         lambda w_dot, ans, x, w, **p: conv_p.bind_raw(x, w_dot, **p)),
    batch=_batch_rule("conv"), validate=_validate("conv"),
    emit="_conv({0}, {1}, " + _EMIT, sparsity="multilinear",
    # multiply-adds of one call, for the BLAS-thread cost model (util/blas.py): output
    # elements times filter taps times input channels, whichever operand is the output here
    blas_work=lambda ins, outs, p: outs[0].size * ins[1].size // max(1, ins[1].shape[-1]),
    doc="N-d convolution (cross-correlation), channels last, HWIO filter")

conv_input_grad_p = Primitive(
    "conv_input_grad", _conv_input_grad, nin=2, abstract=_input_grad_abstract,
    vjp=(lambda g, ans, y, w, **p: conv_p.bind_raw(g, w, **_p(p, ("input_spatial",))),
         lambda g, ans, y, w, **p: conv_filter_grad_p.bind_raw(
            g, y, kernel_spatial=tuple(w.shape[:-2]), **_p(p, ("input_spatial",)))),
    jvp=(lambda y_dot, ans, y, w, **p: conv_input_grad_p.bind_raw(y_dot, w, **p),
         lambda w_dot, ans, y, w, **p: conv_input_grad_p.bind_raw(y, w_dot, **p)),
    batch=_batch_rule("conv_input_grad"), validate=_validate("conv_input_grad", "input_spatial"),
    emit="_conv_input_grad({0}, {1}, input_spatial={input_spatial}, " + _EMIT,
    sparsity="multilinear",
    blas_work=lambda ins, outs, p: ins[0].size * ins[1].size // max(1, ins[1].shape[-1]),
    doc="the transposed convolution: the convolution's cotangent of its input")

conv_filter_grad_p = Primitive(
    "conv_filter_grad", _conv_filter_grad, nin=2, abstract=_filter_grad_abstract,
    vjp=(lambda g, ans, x, y, **p: conv_input_grad_p.bind_raw(
            y, g, input_spatial=tuple(x.shape[1:-1]), **_p(p, ("kernel_spatial",))),
         lambda g, ans, x, y, **p: conv_p.bind_raw(x, g, **_p(p, ("kernel_spatial",)))),
    jvp=(lambda x_dot, ans, x, y, **p: conv_filter_grad_p.bind_raw(x_dot, y, **p),
         lambda y_dot, ans, x, y, **p: conv_filter_grad_p.bind_raw(x, y_dot, **p)),
    batch=_batch_rule("conv_filter_grad"),
    validate=_validate("conv_filter_grad", "kernel_spatial"),
    emit="_conv_filter_grad({0}, {1}, kernel_spatial={kernel_spatial}, " + _EMIT,
    sparsity="multilinear",
    blas_work=lambda ins, outs, p: ins[1].size * outs[0].size // max(1, outs[0].shape[-1]),
    doc="the convolution's cotangent of its filter")

# The code generator imports these by name for the ``emit`` strings above.
EMIT_HELPERS = {"_conv": _conv, "_conv_input_grad": _conv_input_grad,
                "_conv_filter_grad": _conv_filter_grad}
