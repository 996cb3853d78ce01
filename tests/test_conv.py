"""tf.nn convolution and pooling: values against SciPy/NumPy references, TensorFlow's output
shapes and errors, derivatives of every order through CNNs, Jacobians with respect to inputs
and weights, sparsity patterns, compiled and saved programs.

The per-primitive derivative, batching, codegen and derivative-cache checks are table-driven
from ``SPECS`` in test_primitives.py (CONV_GEOMETRIES, POOL_GEOMETRIES).
"""
import math

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import check_grads

signal = pytest.importorskip("scipy.signal")


# ---- references ------------------------------------------------------------------------------
def tf_pads(padding, spatial, kernel, strides, dilations):
    """TensorFlow's documented padding: 'SAME' gives ceil(n / s) outputs, split low-first."""
    if padding == "VALID":
        return [(0, 0)] * len(spatial)
    if padding == "SAME":
        out = []
        for n, k, s, r in zip(spatial, kernel, strides, dilations):
            total = max((math.ceil(n / s) - 1) * s + (k - 1) * r + 1 - n, 0)
            out.append((total // 2, total - total // 2))
        return out
    return [tuple(p) for p in padding[1:-1]]


def ref_conv(x, w, strides, dilations, pads):
    """Grouped N-d cross-correlation from scipy.signal.correlate, channels last, HWIO."""
    d = x.ndim - 2
    c, cg, co = x.shape[-1], w.shape[-2], w.shape[-1]
    g = c // cg
    xp = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)])
    kd = np.zeros(tuple((k - 1) * r + 1 for k, r in zip(w.shape[:d], dilations)) + w.shape[-2:])
    kd[tuple(slice(None, None, r) for r in dilations)] = w
    rows = []
    for n in range(x.shape[0]):
        chans = []
        for o in range(co):
            grp = o // (co // g)
            acc = sum(signal.correlate(xp[n, ..., grp * cg + i], kd[..., i, o], mode="valid")
                      for i in range(cg))
            chans.append(acc[tuple(slice(None, None, s) for s in strides)])
        rows.append(np.stack(chans, axis=-1))
    return np.stack(rows)


def ref_pool(x, window, strides, pads, kind):
    """Pooling by brute force over the real elements of each window."""
    d = x.ndim - 2
    spatial = x.shape[1:-1]
    outs = [(n + lo + hi - k) // s + 1 for n, k, s, (lo, hi) in zip(spatial, window, strides,
                                                                   pads)]
    y = np.zeros((x.shape[0],) + tuple(outs) + (x.shape[-1],))
    for pos in np.ndindex(*outs):
        sl = []
        for p, k, s, (lo, _), n in zip(pos, window, strides, pads, spatial):
            a = p * s - lo
            sl.append(slice(max(a, 0), min(a + k, n)))
        block = x[(slice(None),) + tuple(sl)].reshape(x.shape[0], -1, x.shape[-1])
        y[(slice(None),) + pos] = block.max(1) if kind == "MAX" else block.mean(1)
    assert y.ndim == d + 2
    return y


RNG = np.random.RandomState(0)
CONV_CALLS = [  # (function, x shape, filter shape, strides, padding, dilations)
    ("conv1d", (2, 9, 3), (4, 3, 5), 2, "SAME", 1),
    ("conv1d", (2, 9, 3), (3, 3, 2), 1, "VALID", 2),
    ("conv2d", (2, 7, 8, 4), (3, 2, 4, 6), 1, "VALID", 1),
    ("conv2d", (2, 7, 8, 4), (3, 2, 4, 6), 2, "SAME", 1),
    ("conv2d", (2, 7, 8, 4), (3, 2, 4, 6), [2, 3], "SAME", 1),
    ("conv2d", (2, 7, 8, 4), (3, 2, 4, 6), 1, "SAME", [2, 1]),
    ("conv2d", (2, 9, 9, 4), (3, 3, 4, 6), 2, "VALID", 2),
    ("conv2d", (2, 7, 8, 4), (3, 3, 2, 6), 1, "SAME", 1),             # 2 groups
    ("conv2d", (1, 6, 6, 4), (3, 3, 1, 8), [1, 2, 2, 1], "VALID", 1),  # 4 groups
    ("conv2d", (2, 7, 8, 4), (3, 2, 4, 6), 1, [[0, 0], [1, 2], [0, 3], [0, 0]], 1),
    ("conv2d", (2, 30, 30, 16), (3, 3, 16, 4), 1, "VALID", 1),         # the large-C im2col
    ("conv3d", (1, 5, 6, 4, 2), (2, 3, 2, 2, 3), [1, 2, 1, 2, 1], "SAME", 1),
    ("convolution", (2, 7, 8, 4), (3, 2, 4, 6), 1, "SAME", 2),
    ("convolution", (2, 9, 3), (4, 3, 5), [3], "VALID", 1),
]


@pytest.mark.parametrize("fn,xs,ws,strides,padding,dilations", CONV_CALLS)
def test_convolution_matches_scipy(fn, xs, ws, strides, padding, dilations):
    x, w = RNG.standard_normal(xs), RNG.standard_normal(ws)
    d = len(xs) - 2
    y = getattr(tf.nn, fn)(x, w, strides, padding, dilations=dilations).numpy()
    s = [strides] * d if isinstance(strides, int) else list(strides)
    s = s[1:-1] if len(s) == d + 2 else s * (d if len(s) == 1 else 1)
    r = [dilations] * d if isinstance(dilations, int) else list(dilations)
    want = ref_conv(x, w, s, r, tf_pads(padding, xs[1:-1], ws[:d], s, r))
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-10, atol=1e-10)


def test_float32_conv_stays_float32():
    x = RNG.standard_normal((2, 6, 6, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 3, 4)).astype(np.float32)
    y = tf.nn.conv2d(x, w, 1, "SAME")
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), ref_conv(x.astype(float), w.astype(float), [1, 1],
                                                   [1, 1], [(1, 1), (1, 1)]), rtol=1e-4,
                               atol=1e-4)


def test_depthwise_conv2d_is_a_per_channel_convolution():
    x, w = RNG.standard_normal((2, 7, 6, 3)), RNG.standard_normal((3, 3, 3, 2))
    y = tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME", dilations=[1, 1]).numpy()
    for c in range(3):
        for m in range(2):
            want = ref_conv(x[..., c:c + 1], w[:, :, c:c + 1, m:m + 1], [2, 2], [1, 1],
                            tf_pads("SAME", (7, 6), (3, 3), (2, 2), (1, 1)))
            np.testing.assert_allclose(y[..., c * 2 + m], want[..., 0], atol=1e-10)


@pytest.mark.parametrize("fmt,d", [("NCW", 1), ("NCHW", 2), ("NCDHW", 3)])
def test_channels_first_equals_channels_last(fmt, d):
    x = RNG.standard_normal((2,) + (6,) * d + (4,))
    w = RNG.standard_normal((3,) * d + (2, 6))
    last = tf.nn.convolution(x, w, 2, "SAME").numpy()
    xf = np.moveaxis(x, -1, 1)
    first = tf.nn.convolution(xf, w, 2, "SAME", data_format=fmt).numpy()
    np.testing.assert_allclose(np.moveaxis(first, 1, -1), last, atol=1e-12)
    pooled = tf.nn.avg_pool(xf, 3, 2, "SAME", data_format=fmt).numpy()
    np.testing.assert_allclose(np.moveaxis(pooled, 1, -1),
                               tf.nn.avg_pool(x, 3, 2, "SAME").numpy(), atol=1e-12)


def test_extra_batch_axes_are_kept():
    x, w = RNG.standard_normal((2, 3, 5, 5, 2)), RNG.standard_normal((3, 3, 2, 4))
    y = tf.nn.conv2d(x, w, 1, "VALID").numpy()
    assert y.shape == (2, 3, 3, 3, 4)
    np.testing.assert_allclose(y[1, 2], tf.nn.conv2d(x[1, 2:3], w, 1, "VALID").numpy()[0])


@pytest.mark.parametrize("fn,ys,ws,out_shape,strides,padding", [
    ("conv1d_transpose", (2, 5, 5), (4, 3, 5), (2, 9, 3), 2, "SAME"),
    ("conv2d_transpose", (2, 4, 4, 6), (3, 2, 4, 6), (2, 7, 8, 4), 2, "SAME"),
    ("conv2d_transpose", (2, 5, 7, 6), (3, 2, 4, 6), (2, 7, 8, 4), 1, "VALID"),
    ("conv2d_transpose", (1, 3, 3, 2), (3, 3, 1, 2), (1, 10, 10, 1), 3, "VALID"),  # a tail
    ("conv3d_transpose", (1, 3, 3, 2, 3), (2, 3, 2, 2, 3), (1, 5, 6, 4, 2), [1, 2, 2, 2, 1],
     "SAME"),
])
def test_transposed_convolution_is_the_adjoint(fn, ys, ws, out_shape, strides, padding):
    # <conv_transpose(y, w), x> = <y, conv(x, w)> for every x: checked on random ones
    y, w = RNG.standard_normal(ys), RNG.standard_normal(ws)
    xt = getattr(tf.nn, fn)(y, w, out_shape, strides, padding).numpy()
    assert xt.shape == tuple(out_shape)
    for _ in range(3):
        x = RNG.standard_normal(out_shape)
        fwd = tf.nn.convolution(x, w, strides if isinstance(strides, int) else strides[1:-1],
                                padding).numpy()
        np.testing.assert_allclose(np.vdot(xt, x), np.vdot(y, fwd), rtol=1e-10)


POOL_CALLS = [  # (function, x shape, ksize, strides, padding)
    ("max_pool1d", (2, 9, 3), 3, 2, "SAME"),
    ("avg_pool1d", (2, 9, 3), 4, 3, "SAME"),
    ("max_pool2d", (2, 7, 8, 4), 3, 2, "SAME"),
    ("max_pool2d", (2, 7, 8, 4), [2, 3], [1, 2], "VALID"),
    ("avg_pool2d", (2, 7, 8, 4), 3, 2, "SAME"),
    ("avg_pool2d", (2, 7, 8, 4), [2, 3], [2, 1], "SAME"),
    ("avg_pool2d", (1, 5, 5, 1), 5, 1, "SAME"),   # corner windows hold 9 of 25 elements
    ("max_pool3d", (1, 5, 6, 4, 2), 2, 2, "SAME"),
    ("avg_pool3d", (1, 5, 6, 4, 2), [3, 2, 2], [2, 2, 1], "SAME"),
    ("max_pool", (2, 9, 3), 3, 2, "VALID"),
    ("avg_pool", (2, 7, 8, 4), [1, 3, 3, 1], [1, 2, 2, 1], "SAME"),
]


@pytest.mark.parametrize("fn,xs,ksize,strides,padding", POOL_CALLS)
def test_pooling_matches_reference(fn, xs, ksize, strides, padding):
    x = RNG.standard_normal(xs)
    d = len(xs) - 2
    y = getattr(tf.nn, fn)(x, ksize, strides, padding).numpy()

    def axes(v):
        v = [v] * d if isinstance(v, int) else list(v)
        return v[1:-1] if len(v) == d + 2 else v * (d if len(v) == 1 else 1)
    k, s = axes(ksize), axes(strides)
    want = ref_pool(x, k, s, tf_pads(padding, xs[1:-1], k, s, [1] * d),
                    "MAX" if "max" in fn else "AVG")
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


def test_pool_and_bias_add():
    x = RNG.standard_normal((2, 6, 6, 3))
    np.testing.assert_allclose(tf.nn.pool(x, [2, 2], "MAX", strides=[2, 2]).numpy(),
                               tf.nn.max_pool2d(x, 2, 2, "VALID").numpy())
    b = RNG.standard_normal(3)
    np.testing.assert_allclose(tf.nn.bias_add(x, b).numpy(), x + b)
    xf = np.moveaxis(x, -1, 1)
    np.testing.assert_allclose(tf.nn.bias_add(xf, b, data_format="NCHW").numpy(),
                               xf + b[:, None, None])


def test_max_pool_gradient_goes_to_the_first_maximum_and_ignores_padding():
    x = tf.constant(np.array([[[1.0], [3.0], [3.0], [-np.inf]]]))
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.nn.max_pool1d(x, 2, 2, "SAME")
    assert y.numpy().ravel().tolist() == [3.0, 3.0]
    assert t.gradient(y, x).numpy().ravel().tolist() == [0.0, 1.0, 1.0, 0.0]
    # an all -inf window padded with -inf: the real element gets the gradient
    x = tf.constant(np.array([[[-np.inf], [-np.inf], [2.0]]]))
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.nn.max_pool1d(x, 3, 2, "SAME")
    np.testing.assert_array_equal(t.gradient(y, x).numpy().ravel(), [1.0, 0.0, 1.0])


def test_nan_propagates_through_max_pool():
    x = np.array([[[1.0], [np.nan], [0.5], [2.0]]])
    y = tf.nn.max_pool1d(x, 2, 2, "VALID").numpy().ravel()
    assert np.isnan(y[0]) and y[1] == 2.0


# ---- TensorFlow's errors ---------------------------------------------------------------------
E = tf.errors.InvalidArgumentError
ERRORS = [
    (E, "evenly divisible", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 2)), np.ones((3, 3, 3, 4)),
                                                 1, "VALID")),
    (E, "output depth", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 4)), np.ones((3, 3, 2, 5)), 1,
                                             "VALID")),
    (E, "padding", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 4)), 1,
                                        "FOO")),
    (E, "padding", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 4)), 1,
                                        "same")),
    (E, "negative", lambda: tf.nn.conv2d(np.ones((1, 1, 1, 3)), np.ones((3, 3, 3, 4)), 1,
                                         "VALID")),
    (E, "negative", lambda: tf.nn.conv1d(np.ones((1, 3, 3)), np.ones((3, 3, 4)), 1, "VALID",
                                         dilations=2)),
    (ValueError, "rank 4", lambda: tf.nn.conv2d(np.ones((5, 5, 3)), np.ones((3, 3, 3, 4)), 1,
                                                "VALID")),
    (E, "4-dimensional", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3)), 1,
                                              "VALID")),
    (E, "strides", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 4)), 0,
                                        "VALID")),
    (E, "strides", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 4)), [1, -1],
                                        "VALID")),
    (E, "dilated", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 4)), 1,
                                        "VALID", dilations=0)),
    (E, "nonnegative", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 4)), 1,
                                            [[0, 0], [-1, 2], [0, 1], [0, 0]])),
    (E, "batch or depth", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 4)),
                                               1, [[1, 0], [1, 2], [0, 1], [0, 0]])),
    (tf.errors.UnimplementedError, "batch and depth",
     lambda: tf.nn.conv2d(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 4)), [2, 1, 1, 1], "VALID")),
    (E, "float64", lambda: tf.nn.conv2d(tf.ones((1, 5, 5, 3)),
                                        tf.ones((3, 3, 3, 4), dtype=tf.float64), 1, "VALID")),
    (E, "data_format", lambda: tf.nn.conv2d(np.ones((1, 5, 5, 3)), np.ones((3, 3, 3, 4)), 1,
                                            "VALID", data_format="NHCW")),
    (ValueError, "dilation_rate", lambda: tf.nn.convolution(np.ones((1, 9, 9, 3)),
                                                            np.ones((3, 3, 3, 4)), 2, "VALID",
                                                            dilations=2)),
    (TypeError, "list", lambda: tf.nn.conv3d(np.ones((1, 5, 5, 5, 3)),
                                             np.ones((3, 3, 3, 3, 4)), 1, "SAME")),
    (E, "same depth", lambda: tf.nn.depthwise_conv2d(np.ones((1, 5, 5, 4)),
                                                     np.ones((3, 3, 3, 2)), [1] * 4, "VALID")),
    (E, "doesn't match", lambda: tf.nn.conv2d_transpose(np.ones((1, 3, 3, 4)),
                                                        np.ones((3, 3, 3, 4)), [1, 8, 8, 3],
                                                        2, "SAME")),
    (E, "out_depth", lambda: tf.nn.conv2d_transpose(np.ones((1, 3, 3, 5)),
                                                    np.ones((3, 3, 3, 4)), [1, 5, 5, 3], 1,
                                                    "VALID")),
    (E, "Stride", lambda: tf.nn.max_pool2d(np.ones((1, 5, 5, 3)), 2, 0, "VALID")),
    (E, "ksize", lambda: tf.nn.max_pool2d(np.ones((1, 5, 5, 3)), 0, 1, "VALID")),
    (E, "padding", lambda: tf.nn.avg_pool2d(np.ones((1, 5, 5, 3)), 2, 1, "FOO")),
    (E, "2 spatial", lambda: tf.nn.max_pool2d(np.ones((5, 5, 3)), 2, 1, "VALID")),
    (ValueError, "rank", lambda: tf.nn.max_pool(np.ones((5, 3)), 2, 1, "VALID")),
    (TypeError, "padding", lambda: tf.nn.avg_pool2d(np.ones((1, 5, 5, 3)), 2, 1,
                                                    [[0, 0], [1, 1], [1, 1], [0, 0]])),
    (ValueError, "MIN", lambda: tf.nn.pool(np.ones((1, 5, 5, 3)), [2, 2], "MIN")),
    (E, "at least 2D", lambda: tf.nn.bias_add(np.ones(4), np.ones(4))),
    (E, "1D", lambda: tf.nn.bias_add(np.ones((2, 4)), np.ones((1, 4)))),
    (E, "as many biases", lambda: tf.nn.bias_add(np.ones((2, 3, 4)), np.ones(3))),
]


@pytest.mark.parametrize("err,match,call", ERRORS)
def test_bad_input_gets_tensorflows_error(err, match, call):
    with pytest.raises(err, match=match):
        call()


def test_valid_filter_one_larger_than_input_gives_an_empty_output_as_tf():
    # TF's formula (n - k + s) / s with C++ truncation: 0 outputs, not an error
    y = tf.nn.conv2d(np.ones((1, 2, 2, 3)), np.ones((3, 3, 3, 4)), 1, "VALID")
    assert y.shape == (1, 0, 0, 4)


# ---- derivatives through the TF-named API (formats and reshapes included) -------------------
API_GRADS = [
    ("dilated conv2d", lambda x, w: tf.nn.conv2d(x, w, 1, "SAME", dilations=2),
     (1, 6, 6, 2), (3, 3, 2, 3)),
    ("NCHW conv2d stride 2", lambda x, w: tf.nn.conv2d(x, w, 2, "SAME", data_format="NCHW"),
     (1, 2, 6, 5), (3, 3, 2, 3)),
    ("depthwise", lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME"),
     (1, 5, 5, 2), (3, 3, 2, 2)),
    ("conv2d_transpose", lambda y, w: tf.nn.conv2d_transpose(y, w, [1, 7, 7, 2], 2, "VALID"),
     (1, 3, 3, 3), (3, 3, 2, 3)),
    ("conv3d", lambda x, w: tf.nn.conv3d(x, w, [1, 1, 2, 1, 1], "SAME"),
     (1, 3, 4, 3, 1), (2, 2, 2, 1, 2)),
    ("pools", lambda x, w: tf.nn.max_pool2d(x * w[0, 0, 0, 0], 3, 2, "SAME")
     + tf.nn.avg_pool2d(x, 3, 2, "SAME"), (1, 6, 5, 2), (1, 1, 1, 1)),
]


@pytest.mark.parametrize("label,fn,xs,ws", API_GRADS, ids=[c[0] for c in API_GRADS])
def test_api_derivatives_of_order_two(label, fn, xs, ws):
    check_grads(fn, [RNG.standard_normal(xs), RNG.standard_normal(ws)], modes=("fwd", "rev"),
                order=2)


@pytest.mark.parametrize("geometry", [
    dict(strides=(1, 1), dilations=(1, 1), padding=((1, 1), (0, 2)), groups=1),
    dict(strides=(2, 1), dilations=(1, 2), padding=((0, 0), (1, 1)), groups=2),
])
def test_blocks_of_the_batch_give_the_same_numbers(monkeypatch, geometry):
    # the implementations split the batch when the columns pass WHOLE_BYTES, in blocks of
    # COLUMN_BYTES
    from tapegrad.primitives import conv_gemm as C
    x, w = RNG.standard_normal((7, 6, 7, 4)), RNG.standard_normal((3, 2, 4 // geometry["groups"],
                                                                  6))
    y = C._conv(x, w, **geometry)
    g = RNG.standard_normal(y.shape)
    whole = (y, C._conv_input_grad(g, w, input_spatial=(6, 7), **geometry),
             C._conv_filter_grad(x, g, kernel_spatial=(3, 2), **geometry))
    per = math.prod(y.shape[1:-1]) * 3 * 2 * 4 * 8       # one image's columns, in bytes
    assert C._rows(7, y.shape[1:-1], (3, 2), 4, 8) == 7    # small: whole
    monkeypatch.setattr(C, "WHOLE_BYTES", 7 * per - 1)
    for column_bytes, rows in ((7 * per, 7), (2 * per, 2), (1, 1)):  # blocks of 2: a tail of 1
        monkeypatch.setattr(C, "COLUMN_BYTES", column_bytes)
        assert C._rows(7, y.shape[1:-1], (3, 2), 4, 8) == rows
        blocked = (C._conv(x, w, **geometry),
                   C._conv_input_grad(g, w, input_spatial=(6, 7), **geometry),
                   C._conv_filter_grad(x, g, kernel_spatial=(3, 2), **geometry))
        for a, b in zip(whole, blocked):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y, ref_conv(x, w, geometry["strides"], geometry["dilations"],
                                           geometry["padding"]), atol=1e-12)
