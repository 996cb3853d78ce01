"""The convolution and pooling kernels' fast paths compute what their plain paths compute.

Each fast path is chosen by a threshold or a geometry test; these tests run both paths on the
same operands (the plain one forced with monkeypatch) on either side of the choice, with NaN,
inf, signed zeros, ties and integers, and compare exactly (integers, NaN positions, signs of
zero) or to rounding (float sums in another order).
"""
import numpy as np
import pytest

from tapegrad.primitives import conv_gemm as C
from tapegrad.primitives import pooling as P

pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
RNG = np.random.default_rng(11)


def specials(shape, dtype=np.float64):
    """Random values with NaN, +-inf and -0.0 sprinkled in."""
    x = RNG.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    idx = RNG.permutation(flat.size)[:4]
    flat[idx] = [np.nan, np.inf, -np.inf, -0.0][:len(idx)]
    return x


def same(a, b, exact):
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    if exact:
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# ---- convolution: offset-major columns below FEW_CHANNELS, windows from there ----------------
CONV = [  # (x shape, filter shape, strides, dilations, padding)
    ((3, 9, 8, 1), (5, 5, 1, 4), (1, 1), (1, 1), ((2, 2), (2, 2))),   # LeNet's first layer
    ((2, 9, 8, 2), (3, 2, 2, 3), (2, 1), (1, 2), ((1, 1), (0, 2))),
    ((2, 9, 8, 3), (3, 3, 3, 2), (1, 2), (2, 1), ((0, 0), (1, 0))),
    ((2, 9, 8, 4), (3, 3, 4, 2), (1, 1), (1, 1), ((1, 1), (1, 1))),   # C = FEW_CHANNELS
    ((2, 11, 3), (4, 3, 5), (3,), (1,), ((2, 1),)),
    ((1, 4, 5, 4, 1), (2, 3, 2, 1, 2), (1, 2, 1), (2, 1, 1), ((0, 1), (1, 1), (0, 0))),
    ((2, 2, 3, 2), (3, 3, 2, 2), (1, 1), (1, 1), ((0, 0), (0, 0))),   # an empty output
]


@pytest.mark.parametrize("xs,ws,st,dl,pd", CONV)
@pytest.mark.parametrize("kind", ["float", "specials", "int"])
def test_offset_major_columns_equal_the_windows(monkeypatch, xs, ws, st, dl, pd, kind):
    if kind == "int":
        x, w = RNG.integers(-5, 6, xs), RNG.integers(-5, 6, ws)
    elif kind == "specials":
        x, w = specials(xs), RNG.standard_normal(ws)
    else:
        x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    geo = dict(strides=st, dilations=dl, padding=pd, groups=1)
    fast = C._conv(x, w, **geo)
    monkeypatch.setattr(C, "FEW_CHANNELS", 0)   # every call takes the windows path
    same(fast, C._conv(x, w, **geo), exact=kind == "int")


@pytest.mark.parametrize("xs,ws,st,dl,pd", CONV)
@pytest.mark.parametrize("kind", ["specials", "int"])
def test_offset_major_filter_gradient_equals_the_windows(monkeypatch, xs, ws, st, dl, pd,
                                                         kind):
    out = C.check_geometry("conv", xs[1:-1], ws[:-2], st, dl, pd)
    ys = (xs[0],) + out + (ws[-1],)
    if kind == "int":
        x, g = RNG.integers(-5, 6, xs), RNG.integers(-5, 6, ys)
    else:
        x, g = specials(xs), specials(ys)
    geo = dict(strides=st, dilations=dl, padding=pd, groups=1, kernel_spatial=ws[:-2])
    fast = C._conv_filter_grad(x, g, **geo)
    monkeypatch.setattr(C, "FEW_CHANNELS", 0)
    same(fast, C._conv_filter_grad(x, g, **geo), exact=kind == "int")


def test_offset_major_columns_in_blocks_of_the_batch(monkeypatch):
    x, w = RNG.standard_normal((5, 7, 6, 2)), RNG.standard_normal((3, 3, 2, 3))
    geo = dict(strides=(1, 2), dilations=(1, 1), padding=((1, 1), (1, 1)), groups=1)
    y = C._conv(x, w, **geo)
    g = RNG.standard_normal(y.shape)
    dw = C._conv_filter_grad(x, g, kernel_spatial=(3, 3), **geo)
    monkeypatch.setattr(C, "WHOLE_BYTES", 0)
    monkeypatch.setattr(C, "COLUMN_BYTES", 1)   # one image per block
    same(C._conv(x, w, **geo), y, exact=False)
    same(C._conv_filter_grad(x, g, kernel_spatial=(3, 3), **geo), dw, exact=False)


# ---- the forward GEMM on offset-major columns, in blocks of output rows ----------------------
@pytest.mark.parametrize("xs,ws,blocked", [
    ((6, 30, 30, 1), (4, 4, 1, 16), True),     # K = 16 taps x channels, Co = 16: in blocks
    ((6, 30, 30, 1), (5, 3, 1, 3), False),     # K = 15: one call
    ((6, 30, 30, 1), (4, 4, 1, 17), False),    # Co = 17: one call
    ((2, 6, 6, 1), (4, 4, 1, 6), False),       # fewer than two blocks of rows: one call
    ((64, 28, 28, 1), (5, 5, 1, 6), True),     # LeNet's first layer
    ((8, 30, 30, 2), (3, 3, 2, 4), True),      # K = 18 with two channels
])
@pytest.mark.parametrize("kind", ["float32", "specials", "int"])
def test_offset_major_gemms_in_blocks_of_rows_equal_one_call(monkeypatch, xs, ws, blocked, kind):
    pad = tuple((k // 2, (k - 1) // 2) for k in ws[:-2])
    geo = dict(strides=(1, 1), dilations=(1, 1), padding=pad, groups=1)
    out = C.check_geometry("conv", xs[1:-1], ws[:-2], (1, 1), (1, 1), pad)
    k, m = ws[0] * ws[1] * ws[2], xs[0] * out[0] * out[1]
    if kind == "int":
        x, w = RNG.integers(-5, 6, xs), RNG.integers(-5, 6, ws)
    elif kind == "specials":
        x, w = specials(xs), RNG.standard_normal(ws)
    else:
        x, w = RNG.standard_normal(xs, np.float32), RNG.standard_normal(ws, np.float32)
    assert (C._gemm_rows(k, ws[-1], m, x.itemsize) is not None) == blocked
    g = specials((xs[0],) + out + (ws[-1],)) if kind == "specials" else \
        RNG.integers(-5, 6, (xs[0],) + out + (ws[-1],)) if kind == "int" else \
        RNG.standard_normal((xs[0],) + out + (ws[-1],), np.float32)
    fast = C._conv(x, w, **geo)
    fast_dw = C._conv_filter_grad(x, g, kernel_spatial=ws[:-2], **geo)
    monkeypatch.setattr(C, "PANEL_MIN_K", 10**9)   # one GEMM call
    same(fast, C._conv(x, w, **geo), exact=kind == "int")   # the same dot products
    plain_dw = C._conv_filter_grad(x, g, kernel_spatial=ws[:-2], **geo)
    if kind == "float32":  # sums of M = 5,400-50,176 products in another order
        np.testing.assert_allclose(fast_dw, plain_dw, rtol=1e-4, atol=1e-4 * abs(plain_dw).max())
    else:
        same(fast_dw, plain_dw, exact=kind == "int")


def test_gemm_blocks_cover_the_rows_once():
    rows, w = RNG.standard_normal((20, 5000)), RNG.standard_normal((20, 3))
    block = C._gemm_rows(20, 3, 5000, 8)
    assert block is not None and 5000 % block  # a last, shorter block
    np.testing.assert_allclose(C._rows_times(rows, w), rows.T @ w, rtol=1e-13, atol=1e-12)


# ---- the transposed convolution's columns: one GEMM per offset, or one GEMM and a permute ---
@pytest.mark.parametrize("c, co, per_offset", [
    (4, 16, False), (5, 16, True), (6, 16, True), (5, 17, False),   # C >= 5 with Co <= 16
    (15, 32, False), (16, 32, True), (16, 33, False), (32, 24, True),  # C >= 16, Co <= 32
    (1, 8, False),                                                    # C = 1: its own GEMM
])
@pytest.mark.parametrize("geometry", [
    ((2, 2), (1, 1), ((0, 0), (0, 0)), (5, 5)),     # LeNet's second layer, 'VALID'
    ((2, 1), (1, 2), ((1, 2), (0, 1)), (3, 2)),     # strides, dilations, padding
])
@pytest.mark.parametrize("kind", ["float32", "float64", "specials", "int"])
def test_per_offset_columns_equal_one_gemm_and_permute(monkeypatch, c, co, per_offset,
                                                       geometry, kind):
    strides, dilations, padding, kernel = geometry
    spatial = (9, 8)
    out = C.check_geometry("conv", spatial, kernel, strides, dilations, padding)
    ys, ws = (3,) + out + (co,), kernel + (c, co)
    if kind == "int":
        g, w = RNG.integers(-5, 6, ys), RNG.integers(-5, 6, ws)
    elif kind == "specials":
        g, w = specials(ys), RNG.standard_normal(ws)
    else:
        g, w = RNG.standard_normal(ys).astype(kind), RNG.standard_normal(ws).astype(kind)
    assert C._per_offset(c, co) == per_offset
    p = dict(input_spatial=spatial, strides=strides, dilations=dilations, padding=padding,
             groups=1)
    chosen = C._conv_input_grad(g, w, **p)
    monkeypatch.setattr(C, "_per_offset", lambda c, co: True)
    each = C._conv_input_grad(g, w, **p)
    monkeypatch.setattr(C, "_per_offset", lambda c, co: False)
    one = C._conv_input_grad(g, w, **p)
    same(chosen, each if per_offset else one, exact=True)  # the rule picks the path
    assert each.dtype == one.dtype == np.result_type(g, w)
    if kind == "float32":  # the same Co-long dot products, possibly in another order
        np.testing.assert_allclose(each, one, rtol=1e-5, atol=1e-5 * abs(one).max())
    else:
        same(each, one, exact=kind == "int")


# ---- max pooling's VJP: tiled windows (stride = window, no padding before) ------------------
POOLS = [  # (x shape, window, padding): strides = window
    ((3, 8, 8, 3), (2, 2), ((0, 0), (0, 0))),       # LeNet's pools
    ((2, 7, 9, 2), (2, 2), ((0, 0), (0, 0))),       # a 'VALID' tail on both axes
    ((2, 7, 9, 2), (2, 2), ((0, 1), (0, 1))),       # 'SAME': padding after the input
    ((2, 10, 3), (3,), ((0, 2),)),
    ((1, 4, 6, 5, 2), (2, 3, 2), ((0, 0), (0, 0), (0, 1))),
    ((2, 6, 6, 1), (1, 1), ((0, 0), (0, 0))),
]


def _operands(xs, window, padding, kind):
    if kind == "int":
        x = RNG.integers(-2, 3, xs)                          # many ties
    elif kind == "ties":
        x = np.maximum(RNG.standard_normal(xs), 0.0)         # ReLU outputs: all-zero windows
    elif kind == "nan":
        x = RNG.standard_normal(xs)
        x.reshape(-1)[::3] = np.nan                          # windows with several NaNs
    elif kind == "-inf":
        x = np.full(xs, -np.inf)
        x.reshape(-1)[::5] = 1.0
    else:
        x = specials(xs)
    out = P._geometry(x, window, window, padding)
    g = specials((xs[0],) + out + (xs[-1],))
    if kind == "finite-g":
        g = RNG.standard_normal(g.shape)
        g.reshape(-1)[::4] = -0.0
    return x, g


KINDS = ["specials", "int", "ties", "nan", "-inf", "finite-g"]


@pytest.mark.parametrize("xs,window,padding", POOLS)
@pytest.mark.parametrize("kind", KINDS)
def test_tiled_max_pool_scatter_equals_the_plain_loop(monkeypatch, xs, window, padding, kind):
    x, g = _operands(xs, window, padding, kind)
    p = dict(window=window, strides=window, padding=padding)
    assert P._tiled(window, window, padding)
    fast = P._max_pool_scatter(x, g, **p)
    monkeypatch.setattr(P, "_tiled", lambda *a: False)
    same(fast, P._max_pool_scatter(x, g, **p), exact=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_tiled_max_pool_scatter_keeps_nan_payloads_and_zero_signs(monkeypatch, dtype):
    x, g = _operands((3, 8, 8, 3), (2, 2), ((0, 0), (0, 0)), "ties")
    x, g = x.astype(dtype), g.astype(dtype)
    bits = g.reshape(-1).view(np.dtype(f"u{g.itemsize}"))
    bits[1] |= 0x7 if dtype is np.float16 else 0x1234  # NaN payloads (quiet) in g
    bits[2] = bits[1]
    g.reshape(-1)[2] *= -1                              # a NaN with its sign bit set
    p = dict(window=(2, 2), strides=(2, 2), padding=((0, 0), (0, 0)))
    fast = P._max_pool_scatter(x, g, **p)
    monkeypatch.setattr(P, "_tiled", lambda *a: False)
    plain = P._max_pool_scatter(x, g, **p)
    assert fast.dtype == plain.dtype == dtype
    assert fast.tobytes() == plain.tobytes()


@pytest.mark.parametrize("xs,window,padding", POOLS)
@pytest.mark.parametrize("kind", ["specials", "int", "ties", "nan", "-inf"])
def test_tiled_max_pool_equals_the_plain_loop(monkeypatch, xs, window, padding, kind):
    x, _ = _operands(xs, window, padding, kind)
    p = dict(window=window, strides=window, padding=padding)
    fast = P._max_pool(x, **p)
    monkeypatch.setattr(P, "_tiled", lambda *a: False)
    same(fast, P._max_pool(x, **p), exact=True)


@pytest.mark.parametrize("window,strides,padding", [
    ((2, 2), (1, 1), ((0, 0), (0, 0))),   # overlapping windows
    ((3, 3), (3, 3), ((1, 1), (1, 1))),   # padding before the input
    ((2, 2), (3, 3), ((0, 0), (0, 0))),   # gaps between windows
])
def test_windows_that_do_not_tile_take_the_plain_loop(window, strides, padding):
    assert not P._tiled(window, strides, padding)


def test_max_pool_scatter_follows_tensorflow_on_ties_and_nan():
    # first maximum in the window (row-major offset order); the first NaN beats numbers
    x = np.array([[[[0.0], [0.0]], [[0.0], [0.0]]],
                  [[[1.0], [np.nan]], [[np.nan], [2.0]]]])           # (2, 2, 2, 1)
    g = np.array([5.0, 7.0]).reshape(2, 1, 1, 1)
    got = P._max_pool_scatter(x, g, window=(2, 2), strides=(2, 2), padding=((0, 0), (0, 0)))
    np.testing.assert_array_equal(got[..., 0], [[[5.0, 0.0], [0.0, 0.0]],
                                                [[0.0, 7.0], [0.0, 0.0]]])


# ---- moving channel runs as units ------------------------------------------------------------
@pytest.mark.parametrize("shape,perm", [((5, 4, 3), (1, 0)), ((2, 3, 4, 6), (2, 0, 1)),
                                        ((3, 2, 1), (1, 0)), ((0, 3, 2), (1, 0)),
                                        ((2, 2, 3, 2, 5), (1, 3, 0, 2))])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "last-axis-strided"])
def test_permute_runs_is_a_transposing_copy(shape, perm, layout):
    a = specials(shape)
    if layout == "strided":
        a = np.concatenate([a, a], axis=0)[::2]
    elif layout == "last-axis-strided":
        a = np.asfortranarray(a)
    for arr in (a, a.astype(np.int32) if layout == "contiguous" else a):
        got = C.permute_runs(arr, perm)
        want = np.ascontiguousarray(arr.transpose(perm + (arr.ndim - 1,)))
        assert got.flags.c_contiguous and got.dtype == arr.dtype
        same(got, want, exact=True)
