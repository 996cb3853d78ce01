"""Rules a differential run against TensorFlow 2.21 / Keras 3.15 (session 7) found tapegrad
breaking: float floor division and modulo, integer means and true division, rounding of
integers, complex variance, empty max/min, softsign's gradient at infinity, Keras's relu
kinks and integer inputs to layers, ``fit(steps_per_epoch=...)`` over arrays.

Each expectation is the rule TensorFlow's kernel (or Keras's composition) follows, written
here with NumPy; derivatives are checked by central differences in float64.
"""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras

NAN, INF = np.nan, np.inf


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_array_equal(a, b)
    zero = (a == 0) & (b == 0)
    assert np.array_equal(np.signbit(a[zero]), np.signbit(b[zero])), (a, b)


X = np.array([7.5, -7.5, 0.0, -0.0, INF, -INF, NAN, 1e30, 1.0, -5.0, 5.0, 0.0], np.float32)
Y = np.array([2.0, 2.0, -3.0, 3.0, 2.0, 3.0, 2.0, -7.0, 0.1, INF, -INF, -INF], np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floordiv_is_floor_of_the_quotient(dtype):
    x, y = X.astype(dtype), Y.astype(dtype)
    with np.errstate(invalid="ignore"):
        want = np.floor(x / y)  # TensorFlow: 1 // 0.1 == 10, inf // 2 == inf, -5 // inf == -0
    for got in (tf.math.floordiv(x, y), tf.constant(x) // tf.constant(y),
                tf.function(lambda a, b: a // b)(tf.constant(x), tf.constant(y))):
        _same(got.numpy(), want)
    assert float(tf.constant(1.0) // 0.1) == 10.0  # NumPy's floor_divide gives 9.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_floormod_is_fmod_moved_by_y_when_signs_differ(dtype):
    x, y = X.astype(dtype), Y.astype(dtype)
    with np.errstate(invalid="ignore"):
        r = np.fmod(x, y)
        want = np.where((r != 0) & ((x < 0) != (y < 0)), r + y, r)
    with np.errstate(invalid="ignore"):
        results = [tf.math.floormod(x, y), tf.constant(x) % tf.constant(y),
                   tf.function(lambda a, b: a % b)(tf.constant(x), tf.constant(y))]
    for got in results:
        _same(got.numpy(), want)
    # a zero remainder keeps x's sign (NumPy's mod gives y's)
    _same(tf.math.floormod(np.float32(-0.0), np.float32(3.0)).numpy(), np.float32(-0.0))
    _same(tf.math.floormod(np.float32(0.0), np.float32(-3.0)).numpy(), np.float32(0.0))


def test_floormod_gradients_are_unchanged():
    x, y = np.array([3.3, -5.2]), np.array([2.0, 1.5])
    with tf.GradientTape(persistent=True) as t:
        a, b = tf.constant(x), tf.constant(y)
        t.watch([a, b])
        z = tf.reduce_sum(tf.math.floormod(a, b))
    h = 1e-6
    fd = (np.mod(x, y + h) - np.mod(x, y - h)) / (2 * h)
    np.testing.assert_allclose(t.gradient(z, b).numpy(), fd, rtol=1e-6)
    np.testing.assert_array_equal(t.gradient(z, a).numpy(), [1.0, 1.0])


def test_integer_floordiv_and_mod_stay_numpys():
    a = np.array([7, -7, 7, -7, 0], np.int32)
    b = np.array([2, 2, -2, -2, 3], np.int32)
    _same(tf.math.floordiv(a, b).numpy(), np.floor_divide(a, b))
    _same(tf.math.floormod(a, b).numpy(), np.mod(a, b))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32])
def test_integer_mean_does_not_overflow(dtype):  # (int64 sums in int64, as TensorFlow's)
    info = np.iinfo(dtype)
    x = np.array([[info.max, info.max - 1, info.max], [info.min, info.min, 1]], dtype)
    for axis in (None, 0, 1):
        s = np.sum(x.astype(object), axis=axis)  # exact
        n = x.size if axis is None else x.shape[axis]
        want = np.vectorize(lambda v: abs(v) // n * (1 if v >= 0 else -1))(s).astype(dtype)
        _same(tf.reduce_mean(x, axis=axis).numpy(), want)
    _same(tf.reduce_mean(np.array([200, 250], np.uint8)).numpy(), np.uint8(225))
    _same(tf.reduce_mean(np.array([-1, -2, -4], np.int32)).numpy(), np.int32(-2))  # truncated
    _same(tf.reduce_mean(np.zeros(0, dtype)).numpy(), dtype(0))


@pytest.mark.parametrize("dtype,want", [(np.int8, np.float32), (np.uint8, np.float32),
                                        (np.int16, np.float32), (np.uint16, np.float32),
                                        (np.int32, np.float64), (np.int64, np.float64)])
def test_integer_true_division_dtype(dtype, want):
    a, b = tf.constant(np.array([3, 7], dtype)), tf.constant(np.array([2, 4], dtype))
    for got in (a / b, tf.math.truediv(a, b), tf.math.divide(a, b), a / 2, 6 / a,
                tf.function(lambda p, q: p / q)(a, b)):
        assert got.dtype == want
    np.testing.assert_array_equal((a / b).numpy(), np.array([1.5, 1.75], want))


def test_round_keeps_integers_and_rounds_half_to_even():
    for dtype in (np.int32, np.int64, np.uint8):
        x = np.array([1, 2, 3], dtype)
        _same(tf.round(x).numpy(), x)
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, -0.0, NAN, INF], np.float32)
    _same(tf.round(x).numpy(), np.rint(x))


def test_variance_of_complex_is_real_and_of_integers_raises():
    z = np.array([1 + 1j, 2 - 1j, -0.5 + 3j])
    want = np.mean(np.abs(z - z.mean()) ** 2)
    got = tf.math.reduce_variance(z)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
    np.testing.assert_allclose(tf.math.reduce_std(z.astype(np.complex64)).numpy(),
                               np.sqrt(want), rtol=1e-6)
    assert tf.math.reduce_std(z.astype(np.complex64)).dtype == np.float32
    with pytest.raises(TypeError):
        tf.math.reduce_variance(tf.constant([1, 2, 4]))


def test_complex_variance_gradient_matches_differences():
    z0 = np.array([1 + 1j, 2 - 1j, -0.5 + 3j])

    def f(re):
        return np.mean(np.abs((re + 1j * z0.imag) - (re + 1j * z0.imag).mean()) ** 2)
    re = tf.constant(z0.real)
    with tf.GradientTape() as t:
        t.watch(re)
        v = tf.math.reduce_variance(tf.complex(re, tf.constant(z0.imag)))
    h = 1e-6
    fd = [(f(z0.real + h * e) - f(z0.real - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(t.gradient(v, re).numpy(), fd, rtol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.int64])
def test_max_and_min_over_nothing_are_the_identities(dtype):
    lo, hi = ((-np.inf, np.inf) if np.dtype(dtype).kind == "f"
              else (np.iinfo(dtype).min, np.iinfo(dtype).max))
    x = np.zeros((2, 0), dtype)
    _same(tf.reduce_max(x, axis=1).numpy(), np.full(2, lo, dtype))
    _same(tf.reduce_min(x, axis=1).numpy(), np.full(2, hi, dtype))
    _same(tf.reduce_max(x).numpy(), np.array(lo, dtype))
    _same(tf.reduce_min(x, axis=1, keepdims=True).numpy(), np.full((2, 1), hi, dtype))
    _same(tf.reduce_max(x, axis=0).numpy(), np.zeros(0, dtype))  # nothing reduced to nothing
    _same(tf.function(lambda a: tf.reduce_max(a, axis=1))(tf.constant(x)).numpy(),
          np.full(2, lo, dtype))


def test_max_over_a_nonempty_axis_is_unchanged():
    x = np.array([[1.0, NAN, 3.0], [-INF, -INF, -INF]])
    _same(tf.reduce_max(x, axis=1).numpy(), np.max(x, axis=1))


def test_softsign_gradient_is_zero_at_infinity():
    x = np.array([-INF, -3.0, -0.0, 0.0, 0.5, 2.0, INF, NAN])
    for f in (tf.nn.softsign, keras.activations.softsign):
        xt = tf.constant(x)
        with tf.GradientTape() as t:
            t.watch(xt)
            y = f(xt)
        with np.errstate(invalid="ignore"):
            _same(y.numpy(), x / (1 + np.abs(x)))  # NaN at +-inf, as TensorFlow's
        _same(t.gradient(y, xt).numpy(), 1 / (1 + np.abs(x)) ** 2)  # 0 at +-inf


def test_softsign_second_derivative():
    x = np.array([-2.0, -0.3, 0.4, 3.0])
    xt = tf.constant(x)
    with tf.GradientTape() as t2:
        t2.watch(xt)
        with tf.GradientTape() as t1:
            t1.watch(xt)
            y = tf.nn.softsign(xt)
        g = t1.gradient(y, xt)
    h = 1e-5
    fd = (1 / (1 + np.abs(x + h)) ** 2 - 1 / (1 + np.abs(x - h)) ** 2) / (2 * h)
    np.testing.assert_allclose(t2.gradient(g, xt).numpy(), fd, rtol=1e-7)


@pytest.mark.parametrize("kw", [dict(threshold=0.5), dict(negative_slope=0.1, threshold=0.5),
                                dict(max_value=2.0), dict(negative_slope=0.1, max_value=2.0),
                                dict(negative_slope=0.1, max_value=2.0, threshold=0.5),
                                dict(max_value=6.0), dict(negative_slope=0.1)])
def test_keras_relu_options_follow_keras_composition(kw):
    s, mx, th = kw.get("negative_slope", 0.0), kw.get("max_value"), kw.get("threshold", 0.0)
    x = np.array([-1.0, 0.0, 0.3, 0.5, 0.7, 2.0, 3.0, 6.0, 7.0])
    # Keras: x if x > threshold else 0, clipped to [0, max_value], minus
    # slope * relu(threshold - x); at a kink each piece takes the derivative of its own
    # primitive (relu(0)' = 0, where's select, clip_by_value passes the boundary)
    pos = np.where(x > th, x, 0.0) if th else np.maximum(x, 0.0)
    dpos = (x > th).astype(float) if th else (x > 0).astype(float)
    if mx is not None:
        dpos = dpos * ((pos >= 0) & (pos <= mx)) if not (mx == 6 and not th) else dpos * (x < 6)
        pos = np.clip(pos, 0, mx)
    want = pos - s * np.maximum(th - x, 0.0)
    dwant = dpos + s * (th - x > 0)
    if s and mx is None and not th:  # leaky_relu, whose alpha is a float32 attr in TensorFlow
        s = float(np.float32(s))
        want, dwant = np.where(x > 0, x, s * x), np.where(x > 0, 1.0, s)
    xt = tf.constant(x)
    with tf.GradientTape() as t:
        t.watch(xt)
        y = keras.activations.relu(xt, **kw)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-15)
    np.testing.assert_array_equal(t.gradient(y, xt).numpy(), dwant)


def test_leaky_relu_of_integers_is_float32():
    y = tf.nn.leaky_relu(tf.constant([-2, 1]))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), np.array([-0.4, 1.0], np.float32))


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, bool])
def test_layers_take_integer_inputs_in_their_float_dtype(dtype):
    x = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    dense = keras.layers.Dense(2)
    y = dense(x)
    assert y.dtype == np.float32
    k, b = dense.get_weights()
    np.testing.assert_allclose(y.numpy(), x.astype(np.float32) @ k + b, rtol=1e-6)
    assert keras.layers.Dense(2, dtype="float64")(x).dtype == np.float64
    bn = keras.layers.BatchNormalization()
    assert bn(x, training=True).dtype == np.float32
    ln = keras.layers.LayerNormalization()
    out = ln(x).numpy()
    xf = x.astype(np.float64)
    m, v = xf.mean(-1, keepdims=True), xf.var(-1, keepdims=True)
    np.testing.assert_allclose(out, (xf - m) / np.sqrt(v + 1e-3), rtol=1e-5, atol=1e-6)
    gap = keras.layers.GlobalAveragePooling1D()(x)
    assert gap.dtype == np.float32  # Keras's mean of integers: float32, not truncated
    np.testing.assert_allclose(gap.numpy(), x.astype(np.float64).mean(1), rtol=1e-6)


def _steps_model():
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1, use_bias=False,
                                                                    kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(1.0), loss="mae")
    return model


def test_fit_steps_per_epoch_continues_through_the_arrays():
    # 5 samples in batches of 2: 3 batches. With steps_per_epoch=2 Keras takes batches
    # 1-2 in epoch 1, batch 3 in epoch 2 (the data ran out: it warns), then starts over.
    # With an MAE loss on a zero model, each step moves the kernel by the mean of
    # sign(0 - y) * x = -mean(x) for positive targets, so the kernel records the batches.
    x = np.array([[1.0], [2.0], [4.0], [8.0], [16.0]], np.float32)
    y = np.ones((5, 1), np.float32) * 1e6
    model = _steps_model()
    seen = []

    class Record(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            seen.append(float(model.get_weights()[0][0, 0]))
    with pytest.warns(UserWarning, match="ran out of data"):
        h = model.fit(x, y, batch_size=2, epochs=3, steps_per_epoch=2, shuffle=False,
                      verbose=0, callbacks=[Record()])
    means = [1.5, 6.0, 16.0]
    want = np.cumsum([0.0, 1.5, 6.0, 16.0, 1.5])  # batches 1, 2 | 3 | 1, 2
    np.testing.assert_allclose(seen, want, rtol=1e-6)
    assert len(h.history["loss"]) == 3
    assert means  # the batch means, for the reader


def test_fit_without_steps_per_epoch_restarts_each_epoch():
    x = np.array([[1.0], [2.0], [4.0]], np.float32)
    y = np.ones((3, 1), np.float32) * 1e6
    model = _steps_model()
    model.fit(x, y, batch_size=2, epochs=2, shuffle=False, verbose=0)
    np.testing.assert_allclose(model.get_weights()[0][0, 0], 2 * (1.5 + 4.0), rtol=1e-6)


def test_global_norm_and_clip_by_global_norm():
    a, b = np.array([[3.0, 0.0], [1.0, -2.0]], np.float32), np.array([4.0, 2.0], np.float32)
    norm = np.sqrt(np.sum(a.astype(np.float64) ** 2) + np.sum(b.astype(np.float64) ** 2))
    np.testing.assert_allclose(tf.linalg.global_norm([a, None, b]).numpy(), norm, rtol=1e-6)
    for clip in (1.0, 100.0):
        (ca, cn, cb), n = tf.clip_by_global_norm([a, None, b], clip)
        assert cn is None and ca.dtype == np.float32
        scale = clip * min(1 / norm, 1 / clip)
        np.testing.assert_allclose(ca.numpy(), a * scale, rtol=1e-6)
        np.testing.assert_allclose(cb.numpy(), b * scale, rtol=1e-6)
        np.testing.assert_allclose(n.numpy(), norm, rtol=1e-6)
    (z,), n = tf.clip_by_global_norm([np.zeros(3, np.float32)], 1.0)  # a zero norm: unchanged
    _same(z.numpy(), np.zeros(3, np.float32))
    for bad in (INF, NAN):  # TensorFlow: an infinite or NaN norm makes every entry NaN
        (c,), n = tf.clip_by_global_norm([np.array([bad, 1.0])], 1.0)
        assert np.isnan(c.numpy()).all()
    (c,), n = tf.clip_by_global_norm([np.array([3.0, 4.0])], 1.0, use_norm=10.0)
    # a Python use_norm is a float32 tensor (as in TensorFlow), so the scale is float32's 0.1
    np.testing.assert_array_equal(c.numpy(), np.array([3.0, 4.0]) * np.float64(np.float32(0.1)))
    with pytest.raises(TypeError):
        tf.clip_by_global_norm(tf.constant([1.0]), 1.0)


def test_clip_by_global_norm_gradient_matches_differences():
    x0 = np.array([3.0, -1.0, 2.0])

    def f(x):
        n = np.sqrt(np.sum(x ** 2))
        return np.sum(x * 2.0 * min(1 / n, 1 / 2.0) * np.arange(1, 4))
    x = tf.constant(x0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reduce_sum(tf.clip_by_global_norm([x], 2.0)[0][0] * np.arange(1.0, 4.0))
    h = 1e-6
    fd = [(f(x0 + h * e) - f(x0 - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(t.gradient(y, x).numpy(), fd, rtol=1e-7)


def test_unique_keeps_the_order_of_first_occurrence():
    x = np.array([3, 1, 3, 2, 1, 5], np.int32)
    y, idx = tf.unique(x)
    _same(y.numpy(), np.array([3, 1, 2, 5], np.int32))
    _same(idx.numpy(), np.array([0, 1, 0, 2, 1, 3], np.int32))
    _same(tf.gather(y, idx).numpy(), x)
    y, idx, count = tf.unique_with_counts(x, out_idx=tf.int64)
    _same(idx.numpy(), np.array([0, 1, 0, 2, 1, 3], np.int64))
    _same(count.numpy(), np.array([2, 2, 1, 1], np.int64))
    f = np.array([3.0, -0.0, 0.0, NAN, 1.0, NAN], np.float32)
    y, idx = tf.unique(f)  # -0.0 == 0.0 (the first sign is kept); NaN != NaN
    _same(y.numpy()[:2], np.array([3.0, -0.0], np.float32))
    assert np.isnan(y.numpy()[2]) and np.isnan(y.numpy()[4]) and len(y.numpy()) == 5
    _same(idx.numpy(), np.array([0, 1, 1, 2, 3, 4], np.int32))
    y, idx = tf.unique(np.zeros(0, np.int32))
    assert y.shape == (0,) and idx.shape == (0,)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.unique(np.zeros((2, 2)))


def _recorded_fit(data, steps, epochs=3):
    model = _steps_model()
    seen = []

    class Record(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            seen.append(float(model.get_weights()[0][0, 0]))
    model.fit(data, epochs=epochs, steps_per_epoch=steps, verbose=0, callbacks=[Record()])
    return seen, float(model.get_weights()[0][0, 0])


_X5 = np.array([[1.0], [2.0], [4.0], [8.0], [16.0]], np.float32)
_Y5 = np.ones((5, 1), np.float32) * 1e6


def test_fit_steps_per_epoch_continues_a_dataset_across_epochs():
    # batches of 2 from 5 samples: means 1.5, 6, 16; each step adds the batch's mean
    ds = tf.data.Dataset.from_tensor_slices((_X5, _Y5)).batch(2)
    with pytest.warns(UserWarning, match="ran out of data"):
        seen, w = _recorded_fit(ds, 2)  # known cardinality 3: 1, 2 | 3 | 1, 2
    np.testing.assert_allclose(seen, np.cumsum([0.0, 1.5, 6.0, 16.0, 1.5]))
    assert w == pytest.approx(1.5 + 6 + 16 + 1.5 + 6)
    seen, w = _recorded_fit(ds.repeat(), 2)  # infinite: one stream, 1 2 | 3 1 | 2 3
    np.testing.assert_allclose(seen, np.cumsum([0.0, 1.5, 6.0, 16.0, 1.5, 6.0]))
    unknown = tf.data.Dataset.from_tensor_slices((_X5, _Y5)).filter(
        lambda a, b: a[0] > 0).batch(2)
    with pytest.warns(UserWarning, match="ran out of data"):
        seen, w = _recorded_fit(unknown, 2)  # 1, 2 | 3, (ran out) | 1, 2
    assert w == pytest.approx(1.5 + 6 + 16 + 1.5 + 6)
    seen, w = _recorded_fit(ds, None)  # no steps_per_epoch: each epoch is a fresh pass
    assert w == pytest.approx(3 * (1.5 + 6 + 16))


def test_window_takes_every_stride_element_and_starts_every_shift():
    n = 11
    for size, shift, stride, drop in [(3, None, 1, False), (3, 2, 1, False), (2, 5, 1, False),
                                      (2, 5, 1, True), (3, 1, 2, False), (3, 1, 2, True),
                                      (4, 4, 3, True), (5, 1, 1, True)]:
        sh = size if shift is None else shift
        want = []
        for start in range(0, n, sh):
            w = list(range(start, min(start + (size - 1) * stride + 1, n), stride))
            if len(w) == size or not drop:
                want.append(w)
        ds = tf.data.Dataset.range(n).window(size, shift, stride, drop)
        got = [w.numpy().tolist() for w in ds.flat_map(lambda w: w.batch(size))]
        assert got == want, (size, shift, stride, drop)
        assert int(ds.cardinality()) == len(want)
    ds = tf.data.Dataset.from_tensor_slices({"a": np.arange(5), "b": np.arange(5) * 2.0})
    wins = list(ds.window(2))
    assert [sorted(w) for w in wins] == [["a", "b"]] * 3
    assert [v.numpy().tolist() for v in wins[2]["b"]] == [8.0]
    inf = tf.data.Dataset.range(3).repeat().window(2, 3)  # streams an infinite input
    assert int(inf.cardinality()) == tf.data.INFINITE_CARDINALITY
    assert [w.numpy().tolist() for w in inf.flat_map(lambda w: w.batch(2)).take(3)] == [
        [0, 1], [0, 1], [0, 1]]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.data.Dataset.range(3).window(0)


def test_padded_batch_with_a_scalar_component_and_known_dimensions():
    ds = tf.data.Dataset.range(1, 4).map(lambda x: (tf.fill([x], x), x))
    got = [(a.numpy().tolist(), b.numpy().tolist()) for a, b in ds.padded_batch(2)]
    assert got == [([[1, 0], [2, 2]], [1, 2]), ([[3, 3, 3]], [3])]
    ds = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x, 2], tf.cast(x, tf.float32)))
    assert ds.padded_batch(2).element_spec.shape == (None, None, 2)


def test_unbatch_of_static_batches_knows_its_cardinality():
    ds = tf.data.Dataset.from_tensors((np.arange(6).reshape(3, 2), np.arange(3.0)))
    assert int(ds.unbatch().cardinality()) == 3
    assert int(tf.data.Dataset.range(10).batch(4).unbatch().cardinality()) == -2


_GRADS = [np.array([0.3, -0.7, 0.0, 2.0], np.float32), np.array([-0.1, -0.7, 1e-3, 5.0], np.float32),
          np.array([0.0, 0.4, -2.0, 0.5], np.float32)]


def _steps(opt, dtype=np.float32):
    v = tf.Variable(np.array([1.0, -2.0, 0.5, 0.0], dtype))
    for g in _GRADS:
        opt.apply_gradients([(tf.constant(g.astype(dtype)), v)])
    return v.numpy()


def _f(x, dtype=np.float32):
    return np.asarray(x, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adamax_is_keras_rule(dtype):
    lr, b1, b2, eps = _f(0.1, np.float32).astype(dtype), 0.9, 0.999, 1e-7
    v = np.array([1.0, -2.0, 0.5, 0.0], dtype)
    m, u = np.zeros(4, dtype), np.zeros(4, dtype)
    for t, g in enumerate(_GRADS, 1):
        g = g.astype(dtype)
        m = m + (g - m) * (1 - b1)
        u = np.maximum(b2 * u, np.abs(g))
        v = v - (lr * m) / ((1 - np.power(_f(b1, dtype), _f(t, dtype))) * (u + eps))
    np.testing.assert_array_equal(_steps(keras.optimizers.Adamax(0.1), dtype), v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adadelta_is_keras_rule(dtype):
    lr, rho, eps = _f(0.5, np.float32).astype(dtype), 0.8, 1e-7
    v = np.array([1.0, -2.0, 0.5, 0.0], dtype)
    ag, ad = np.zeros(4, dtype), np.zeros(4, dtype)
    for g in _GRADS:
        g = g.astype(dtype)
        ag = rho * ag + (1 - rho) * np.square(g)
        delta = -((np.sqrt(ad + eps) * g) / np.sqrt(ag + eps))
        ad = rho * ad + (1 - rho) * np.square(delta)
        v = v + lr * delta
    np.testing.assert_array_equal(_steps(keras.optimizers.Adadelta(0.5, rho=0.8), dtype), v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lion_is_keras_rule(dtype):
    lr, b1, b2 = _f(0.1, np.float32).astype(dtype), _f(0.7, dtype), _f(0.99, dtype)
    v = np.array([1.0, -2.0, 0.5, 0.0], dtype)
    m = np.zeros(4, dtype)
    for g in _GRADS:
        g = g.astype(dtype)
        v = v - lr * np.sign(m * b1 + g * (1.0 - b1))
        m = m * b2 + g * (1.0 - b2)
    np.testing.assert_array_equal(_steps(keras.optimizers.Lion(0.1, beta_1=0.7), dtype), v)
    with pytest.raises(ValueError):
        keras.optimizers.Lion(beta_1=0.0)
    assert isinstance(keras.optimizers.get("lion"), keras.optimizers.Lion)


def test_linspace_is_start_plus_i_delta_in_the_inputs_dtype():
    for a, b, n in [(0.0, 1.0, 7), (0.1, 0.7, 13), (-3.3, 2.9, 101), (1.0, 0.0, 5), (0.0, 1.0, 1),
                    (0.0, 1.0, 2), (0.0, 1.0, 0)]:
        a32, b32 = np.float32(a), np.float32(b)
        delta = (b32 - a32) / np.float32(max(n - 1, 1))
        want = np.concatenate([[a32], a32 + delta * np.arange(1, max(n - 1, 1), dtype=np.float32),
                               [b32]])[:n].astype(np.float32)
        _same(tf.linspace(a, b, n).numpy(), want)
    got = tf.linspace(5, 7, 3)  # integers divide as float64, as TensorFlow
    _same(got.numpy(), np.array([5.0, 6.0, 7.0]))
    got = tf.linspace([0.0, 1.0], [1.0, 3.0], 3, axis=1)
    _same(got.numpy(), np.array([[0.0, 0.5, 1.0], [1.0, 2.0, 3.0]], np.float32))
    assert tf.linspace([0.0, 1.0], 2.0, 4).shape == (4, 2)
    a, b = tf.constant(0.5), tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([a, b])
        y = tf.reduce_sum(tf.linspace(a, b, 4) * tf.constant([1.0, 2.0, 3.0, 4.0]))
    ga, gb = t.gradient(y, [a, b])  # d/da sum w_i (a + i (b - a) / 3) = sum w_i (1 - i / 3)
    w, i = np.array([1.0, 2.0, 3.0, 4.0]), np.arange(4)
    np.testing.assert_allclose([float(ga), float(gb)], [np.sum(w * (1 - i / 3)),
                                                        np.sum(w * i / 3)], rtol=1e-6)


def test_clip_by_value_applies_the_max_bound_first():
    x = np.array([-1.5, 0.0, 1.5, 3.0], np.float32)
    _same(tf.clip_by_value(x, 2.0, 1.0).numpy(), np.maximum(np.minimum(x, 1.0), 2.0))
    _same(tf.clip_by_value(x, -1.0, 1.0).numpy(), np.clip(x, -1.0, 1.0))


def test_integer_euclidean_norm_and_empty_logsumexp():
    got = tf.math.reduce_euclidean_norm(np.array([[3, 4], [1, 1]], np.int32), axis=1)
    _same(got.numpy(), np.array([5, 1], np.int32))  # sqrt(2) truncated, as TensorFlow
    _same(tf.reduce_logsumexp(np.zeros(0, np.float32)).numpy(), np.float32(-np.inf))
    _same(tf.reduce_logsumexp(np.zeros((2, 0), np.float32), axis=1).numpy(),
          np.full(2, -np.inf, np.float32))


def test_bincount():
    a = np.array([1, 1, 3, 0, 7])
    _same(tf.math.bincount(a).numpy(), np.bincount(a).astype(np.int32))
    _same(tf.math.bincount(a, minlength=10).numpy(), np.bincount(a, minlength=10).astype(np.int32))
    _same(tf.math.bincount(a, maxlength=2).numpy(), np.array([1, 2], np.int32))
    w = np.array([0.5, 1.0, 2.0, 0.25, 4.0], np.float32)
    _same(tf.math.bincount(a, weights=w, maxlength=4).numpy(),
          np.array([0.25, 1.5, 0.0, 2.0], np.float32))
    _same(tf.math.bincount(a, binary_output=True).numpy(),
          (np.bincount(a) > 0).astype(np.int32))
    assert tf.math.bincount(np.zeros(0, np.int32)).shape == (0,)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.bincount([-1, 2])


def test_polynomial_and_cosine_restart_schedules():
    S = keras.optimizers.schedules
    f32 = np.float32
    for cycle in (False, True):
        s = S.PolynomialDecay(0.1, decay_steps=3, end_learning_rate=0.02, power=2.0, cycle=cycle)
        for step in (0, 1, 3, 4, 7):
            st, h = f32(step), f32(3)
            if cycle:
                h = h * (f32(1) if step == 0 else np.ceil(st / f32(3)))
            else:
                st = min(st, h)
            want = (f32(0.1) - f32(0.02)) * (1 - st / h) ** f32(2.0) + f32(0.02)
            assert float(s(step)) == pytest.approx(float(want), rel=1e-6)
    s = S.CosineDecayRestarts(1.0, first_decay_steps=2, t_mul=2.0, m_mul=0.5, alpha=0.1)
    for step, (i, frac) in {0: (0, 0.0), 1: (0, 0.5), 2: (1, 0.0), 4: (1, 0.5), 6: (2, 0.0),
                            9: (2, 3 / 8)}.items():
        want = (1 - 0.1) * 0.5 * 0.5 ** i * (1 + np.cos(np.pi * frac)) + 0.1
        assert float(s(step)) == pytest.approx(want, rel=1e-5)
    s = S.CosineDecayRestarts(0.1, first_decay_steps=3, t_mul=1.0)
    assert float(s(4)) == pytest.approx(0.1 * 0.5 * (1 + np.cos(np.pi / 3)), rel=1e-6)
    assert S.PolynomialDecay(0.1, 4).get_config()["end_learning_rate"] == 0.0001
    with pytest.raises(ValueError):
        S.CosineDecayRestarts(0.1, 0)


def test_cropping_padding_and_upsampling_1d():
    x = np.arange(2 * 9 * 4, dtype=np.float32).reshape(2, 9, 4)
    _same(keras.layers.ZeroPadding1D((2, 1))(x).numpy(), np.pad(x, ((0, 0), (2, 1), (0, 0))))
    _same(keras.layers.ZeroPadding1D(1, data_format="channels_first")(x).numpy(),
          np.pad(x, ((0, 0), (0, 0), (1, 1))))
    _same(keras.layers.UpSampling1D(3)(x).numpy(), np.repeat(x, 3, axis=1))
    _same(keras.layers.Cropping1D((0, 3))(x).numpy(), x[:, :6])
    img = np.arange(2 * 7 * 6 * 3, dtype=np.float32).reshape(2, 7, 6, 3)
    _same(keras.layers.Cropping2D(((0, 2), (1, 0)))(img).numpy(), img[:, :5, 1:])
    _same(keras.layers.Cropping2D(1)(img).numpy(), img[:, 1:6, 1:5])
    _same(keras.layers.Cropping2D((1, 0), data_format="channels_first")(img).numpy(),
          img[:, :, 1:5, :])
    with pytest.raises(ValueError):
        keras.layers.Cropping1D((5, 4))(x)
