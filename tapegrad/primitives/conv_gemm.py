"""The convolution primitives' implementations: one BLAS GEMM per group on im2col columns.

``_conv``, ``_conv_input_grad`` and ``_conv_filter_grad`` are what the registry blocks in
``primitives/conv.py`` evaluate and what generated code calls by name. Each cost model below
(offset-major columns, row panels, per-offset GEMMs, batch blocks) says what it measured.
"""
import math

import numpy as np

from tapegrad.primitives.conv_geometry import (check_geometry, offset_rows,
                                               permute_runs, windows, _scatter_windows)
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
