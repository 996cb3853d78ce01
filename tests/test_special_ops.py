"""tf.math's special functions, zero-safe products, cumprod, roll, batch_normalization and
gather with batch_dims: values against rules written in NumPy (edge values included),
gradients against central differences, TensorFlow's error types, eager == compiled bits."""
import math

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.primitives import special
from tapegrad.testing import assert_same_bits, check_grads

EDGES = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-30, 40.0, np.inf, -np.inf, np.nan])


def _grad(f, *xs):
    xs = [tf.constant(x) for x in xs]
    with tf.GradientTape() as t:
        for x in xs:
            t.watch(x)
        y = f(*xs)
    return [None if g is None else g.numpy() for g in t.gradient(y, xs)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_inverse_hyperbolics_are_numpys_with_tensorflows_gradients(dtype):
    x = EDGES.astype(dtype)
    with np.errstate(all="ignore"):
        for op, ref in ((tf.math.asinh, np.arcsinh), (tf.math.acosh, np.arccosh),
                        (tf.math.atanh, np.arctanh)):
            assert_same_bits(op(x).numpy(), ref(x), op.__name__)
        assert tf.asinh is tf.math.asinh and tf.acosh is tf.math.acosh
        (g,) = _grad(tf.math.atanh, np.array([0.0, 0.5, 1.0], dtype))
        np.testing.assert_allclose(g, 1 / (1 - np.array([0.0, 0.25, 1.0], dtype)))
    check_grads(tf.math.asinh, [np.array([-3.0, 0.0, 0.4, 7.0])])
    check_grads(tf.math.acosh, [np.array([1.5, 2.0, 9.0])])
    check_grads(tf.math.atanh, [np.array([-0.7, 0.0, 0.3])])


def test_erfc_lgamma_digamma_match_math_at_edges_and_poles():
    x = EDGES
    erfc = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(tf.math.erfc(x).numpy(), erfc, rtol=1e-14)
    assert float(tf.math.erfc(np.float32(9.0))) == pytest.approx(math.erfc(9.0), rel=1e-6)

    def lg(v):
        try:
            return math.lgamma(v)
        except ValueError:
            return math.inf
    got = tf.math.lgamma(np.array([0.0, -0.0, -1.0, -3.0, 0.5, -2.5, 10.0, np.inf, -np.inf,
                                   np.nan])).numpy()
    want = [lg(v) for v in (0.0, -0.0, -1.0, -3.0, 0.5, -2.5, 10.0)] + [np.inf, np.inf, np.nan]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    d = tf.math.digamma(np.array([0.0, -1.0, -2.0, -np.inf, np.nan, np.inf, 1.0])).numpy()
    assert np.isnan(d[:5]).all() and d[5] == np.inf  # TensorFlow: NaN at every pole
    assert d[6] == pytest.approx(-0.5772156649015329, rel=1e-14)
    # psi(x + 1) = psi(x) + 1 / x, psi'(x + 1) = psi'(x) - 1 / x^2 (the recurrence, exactly)
    v = np.array([0.3, 2.5, -1.5, 17.0])
    np.testing.assert_allclose(tf.math.digamma(v + 1).numpy(), tf.math.digamma(v).numpy() + 1 / v,
                               rtol=1e-12)
    np.testing.assert_allclose(tf.math.polygamma(1.0, v + 1).numpy(),
                               tf.math.polygamma(1.0, v).numpy() - 1 / v ** 2, rtol=1e-11)
    assert float(tf.math.polygamma(1.0, np.float64(1.0))) == pytest.approx(math.pi ** 2 / 6,
                                                                   rel=1e-14)


def test_gamma_family_gradients_and_dtypes():
    check_grads(tf.math.lgamma, [np.array([0.7, 2.0, 5.5, -0.5])])
    check_grads(tf.math.digamma, [np.array([0.7, 2.0, 5.5])])
    check_grads(tf.math.erfc, [np.array([-1.0, 0.0, 0.8])])
    check_grads(lambda x: tf.math.polygamma(2, x), [np.array([0.9, 3.0])])
    for op in (tf.math.erfc, tf.math.lgamma, tf.math.digamma, tf.math.asinh, tf.nn.softsign):
        assert op(np.float16(0.5)).dtype == tf.float16
        assert op(np.float32(0.5)).dtype == tf.float32
        with pytest.raises(tf.errors.InvalidArgumentError, match="int32 is not in the list"):
            op(tf.constant([1, 2]))
    # one order per element: each element gets its own order
    a, x = np.array([0.0, 1.0, 2.0, 1.0]), np.array([0.5, 0.5, 2.0, 3.0])
    want = [tf.math.polygamma(float(k), v).numpy() for k, v in zip(a, x)]
    np.testing.assert_allclose(tf.math.polygamma(a, x).numpy(), want, rtol=1e-15)
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative integers"):
        tf.math.polygamma(0.5, 1.0)


def test_the_fallbacks_without_scipy_agree_with_scipy(monkeypatch):
    scipy_special = pytest.importorskip("scipy.special")
    x = np.concatenate([np.linspace(-7.9, 30.0, 157), [1e-8, 200.0, 1e6, 0.0, -3.0, np.inf,
                                                         -np.inf, np.nan]])
    with_scipy = {n: tf.math.polygamma(float(n), x).numpy() for n in (0, 1, 2, 3)}
    erfc, lgamma = tf.math.erfc(x).numpy(), tf.math.lgamma(x).numpy()
    monkeypatch.setattr(special, "_scipy_special", None)
    for n in (0, 1, 2, 3):
        got = tf.math.polygamma(float(n), x).numpy()
        np.testing.assert_allclose(got, with_scipy[n], rtol=2e-10, atol=1e-12,
                                   err_msg=f"order {n}")
    np.testing.assert_allclose(tf.math.erfc(x).numpy(), erfc, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(tf.math.lgamma(x).numpy(), lgamma, rtol=1e-12, atol=1e-14)
    assert scipy_special.digamma(2.0) == pytest.approx(float(tf.math.digamma(np.float64(2.0))),
                                                       rel=1e-14)


def test_xlogy_xdivy_xlog1py_zero_rule_and_tensorflows_gradients():
    x = np.array([0.0, 0.0, 0.0, 2.0, 2.0, -1.5])
    y = np.array([0.0, np.nan, np.inf, 0.0, 3.0, 0.5])
    with np.errstate(all="ignore"):
        for op, f in ((tf.math.xlogy, lambda a, b: a * np.log(b)),
                      (tf.math.xdivy, lambda a, b: a / b),
                      (tf.math.xlog1py, lambda a, b: a * np.log1p(b))):
            want = np.where(x == 0, 0.0, f(x, np.where(x == 0, 1.0, y)))
            assert_same_bits(op(x, y).numpy(), want, op.__name__)
            gx, gy = _grad(op, x, y)
            # TensorFlow's: d/dx = f(1, y) where x != 0, d/dy = x f'(y); both 0 where x == 0
            assert (gx[:3] == 0).all() and (gy[:3] == 0).all()
        check_grads(op, [np.array([0.5, -2.0]), np.array([1.5, 0.3])])
    gx, gy = _grad(tf.math.xlogy, np.array([2.0]), np.array([3.0]))
    assert gx[0] == pytest.approx(math.log(3.0)) and gy[0] == pytest.approx(2.0 / 3.0)


def test_entropy_with_xlogy_trains_through_zero_probabilities():
    # H(p) = -sum p log p with p = softmax(w) * mask: masked classes have p = 0 exactly
    w = tf.Variable(np.array([0.3, -1.0, 2.0, 0.0]))
    mask = tf.constant([1.0, 0.0, 1.0, 1.0], tf.float64)
    with tf.GradientTape() as t:
        p = tf.nn.softmax(w) * mask
        p = p / tf.reduce_sum(p)
        h = -tf.reduce_sum(tf.math.xlogy(p, p))
    g = t.gradient(h, w).numpy()
    assert np.isfinite(g).all() and g[1] == 0.0
    pm = np.exp(w.numpy()) * mask.numpy()
    pm /= pm.sum()
    assert float(h) == pytest.approx(-sum(v * math.log(v) for v in pm if v > 0), rel=1e-14)


def test_multiply_no_nan_is_zero_where_y_is_zero():
    x = np.array([np.inf, np.nan, 2.0, -3.0, 3.0])
    y = np.array([0.0, 0.0, -0.0, -0.0, 1.5])
    out = tf.math.multiply_no_nan(x, y).numpy()
    assert_same_bits(out, np.array([0.0, 0.0, 0.0, 0.0, 4.5]))  # +0.0, as TensorFlow
    gx, gy = _grad(tf.math.multiply_no_nan, np.array([2.0, 5.0]), np.array([0.0, 3.0]))
    assert gx.tolist() == [0.0, 3.0] and gy.tolist() == [2.0, 5.0]  # d/dy is x, also at y = 0
    check_grads(tf.math.multiply_no_nan, [np.array([0.5, -2.0]), np.array([1.5, 0.3])])


def test_softsign():
    x = np.array([-3.0, -0.0, 0.0, 0.5, np.inf, np.nan])
    with np.errstate(invalid="ignore"):
        assert_same_bits(tf.nn.softsign(x).numpy(), x / (1 + np.abs(x)))
    assert tf.math.softsign is tf.nn.softsign
    (g,) = _grad(tf.nn.softsign, np.array([-2.0, 0.0, 1.0]))
    np.testing.assert_allclose(g, 1 / (1 + np.abs([-2.0, 0.0, 1.0])) ** 2, rtol=1e-15)
    check_grads(tf.nn.softsign, [np.array([-2.0, 0.3, 1.0])])


def _cumprod_numpy(x, exclusive, reverse):
    x = x[::-1] if reverse else x
    out = np.cumprod(np.concatenate([[1.0], x[:-1]]) if exclusive else x)
    return out[::-1] if reverse else out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_values_and_exact_gradient_at_zeros(exclusive, reverse):
    x = np.array([2.0, 0.0, 3.0, -0.5, 0.0, 1.5, 4.0])
    f = lambda t: tf.math.cumprod(t, exclusive=exclusive, reverse=reverse)  # noqa: E731
    assert_same_bits(f(x).numpy(), _cumprod_numpy(x, exclusive, reverse))
    w = np.arange(1.0, 8.0)
    (g,) = _grad(lambda t: tf.reduce_sum(f(t) * w), x)
    # the exact derivative: the product of the other elements of each running product
    want = np.zeros_like(x)
    for k in range(len(x)):
        x0 = x.copy()
        x0[k] = 1.0
        with_k = _cumprod_numpy(x0, exclusive, reverse)
        x0[k] = 0.0
        want[k] = np.sum(w * (with_k - _cumprod_numpy(x0, exclusive, reverse)))  # linear in x_k
    np.testing.assert_allclose(g, want, rtol=1e-14, atol=1e-14)
    check_grads(f, [x])
    check_grads(lambda t: tf.math.cumprod(t, axis=0, exclusive=exclusive, reverse=reverse),
                [np.array([[0.5, 0.0], [2.0, 1.5], [0.0, -1.0]])])


def test_cumprod_dtypes_and_errors():
    assert tf.math.cumprod([1, 2, 3]).numpy().tolist() == [1, 2, 6]
    assert tf.math.cumprod([1, 2, 3]).dtype == tf.int32
    with pytest.raises(tf.errors.InvalidArgumentError, match="bool"):
        tf.math.cumprod([True, False])
    assert tf.math.cumprod(tf.zeros([0, 2]), axis=0, exclusive=True).shape == (0, 2)
    assert tf.math.cumprod([2.0], exclusive=True).numpy().tolist() == [1.0]


def test_roll():
    x = np.arange(12).reshape(3, 4)
    for shift, axis in ((1, 0), (-1, 1), ([1, -1], [0, 1]), ([2, 3], [1, 1]), (7, -1), (0, 0)):
        want = np.roll(x, shift, axis)
        assert tf.roll(x, shift, axis).numpy().tolist() == want.tolist()
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        tf.roll(x, [1, 2], [0])
    check_grads(lambda t: tf.roll(t, [1, 2], [0, 1]), [np.arange(6.0).reshape(2, 3)])

    @tf.function
    def rolled(t, s):
        return tf.roll(t, s, axis=1)
    for s in (1, -2, 5):  # a traced shift: one gather with indices (i - s) mod n
        assert rolled(tf.constant(x), tf.constant(s)).numpy().tolist() == np.roll(x, s, 1).tolist()


def test_batch_normalization_is_tensorflows_formula():
    x = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]])
    mean, var = x.mean(0), x.var(0)
    offset, scale = np.array([0.1, 0.2, 0.3]), np.array([2.0, 1.0, 0.5])
    inv = 1 / np.sqrt(var + 1e-3) * scale
    got = tf.nn.batch_normalization(x, mean, var, offset, scale, 1e-3).numpy()
    np.testing.assert_allclose(got, x * inv + (offset - mean * inv), rtol=1e-15)
    got = tf.nn.batch_normalization(x, mean, var, None, None, 1e-3).numpy()
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-14)
    assert tf.nn.batch_normalization(tf.constant([1.0]), 0.5, 1.0, None, None, 0.0).dtype == \
        tf.float32

    def bn(t, s, o):
        m, v = tf.nn.moments(t, axes=[0])
        return tf.nn.batch_normalization(t, m, v, o, s, 1e-3)
    check_grads(bn, [x, scale, offset])


def test_gather_with_batch_dims():
    rng = np.random.default_rng(0)
    p = rng.standard_normal((2, 3, 4, 5))
    i = rng.integers(0, 4, (2, 3, 6))
    got = tf.gather(p, i, axis=2, batch_dims=2).numpy()
    want = np.stack([np.stack([p[a, b][i[a, b]] for b in range(3)]) for a in range(2)])
    assert_same_bits(got, want)
    i1 = rng.integers(0, 4, (2, 2, 3))
    got = tf.gather(p, i1, axis=2, batch_dims=1).numpy()
    want = np.stack([np.take(p[a], i1[a], axis=1) for a in range(2)])
    assert got.shape == (2, 3, 2, 3, 5)
    assert_same_bits(got, want)
    # the argmax pick of each row (batch_dims=-1 counts from the indices' rank)
    x = rng.standard_normal((4, 5))
    got = tf.gather(x, tf.argmax(x, axis=1)[:, None], axis=1, batch_dims=-1).numpy()[:, 0]
    assert_same_bits(got, x.max(axis=1))
    check_grads(lambda t: tf.gather(t, i1, axis=2, batch_dims=1), [p])
    with pytest.raises(tf.errors.InvalidArgumentError, match="should be equal to"):
        tf.gather(p, i[:1], axis=2, batch_dims=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="is not in"):
        tf.gather(p, i + 4, axis=2, batch_dims=2)
    with pytest.raises(ValueError, match="batch_dims"):
        tf.gather(p, i, axis=1, batch_dims=2)


def test_eager_and_compiled_agree_bit_for_bit_at_two_sizes():
    rng = np.random.default_rng(1)

    def program(x, y):
        return (tf.math.cumprod(x, axis=1, exclusive=True) + tf.math.xlogy(x, y)
                + tf.math.multiply_no_nan(x, y) + tf.math.lgamma(y) + tf.math.erfc(x)
                + tf.math.asinh(x) + tf.nn.softsign(y) + tf.roll(x, 1, axis=1))

    step = tf.function(program)
    for n in (5, 9):
        x = rng.standard_normal((3, n))
        y = np.abs(rng.standard_normal((3, n)))
        x[0, 1], x[1, 2], y[2, 3], y[0, 0], x[2, 0] = 0.0, np.nan, 0.0, np.inf, -0.0
        xs, ys = tf.constant(x), tf.constant(y)
        with np.errstate(all="ignore"):
            assert_same_bits(step(xs, ys).numpy(), program(xs, ys).numpy(), n)

        def loss(f, a, b):
            with tf.GradientTape() as t:
                t.watch([a, b])
                s = tf.reduce_sum(f(a, b) * tf.constant(rng.standard_normal((3, n)) * 0 + 1.5))
            return t.gradient(s, [a, b])
        x = np.abs(x) + 0.1
        x[0, 1] = 0.0
        xs = tf.constant(x)
        with np.errstate(all="ignore"):  # log(0) where y == 0
            eager = loss(program, xs, ys)
            compiled = tf.function(lambda a, b: loss(program, a, b))(xs, ys)
        for e, c in zip(eager, compiled):
            assert_same_bits(c.numpy(), e.numpy(), n)
