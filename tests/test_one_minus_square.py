"""``one_minus_square``: tanh's derivative ``1 - y*y`` as one primitive (primitives/elementwise.py).

It is what the square and the subtraction computed, bit for bit, in every dtype and on NaN,
inf and -0.0, eagerly, on NumPy arrays (a first-order pass nothing records) and in generated
code; its own rule ``(g * -2) * y`` gives the numbers the square's and the subtraction's rules
gave (``-(g * 2) == g * -2`` exactly); nested tapes record one operation for it. Its
derivatives by central differences are in tests/test_primitives.py (SPECS).
"""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core.dispatch import PRIMITIVES, bind
from tapegrad.primitives import elementwise

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 1e-30, 3e38]
DTYPES = [np.float16, np.float32, np.float64, np.complex64, np.complex128]


def composite(x):
    """1 - x*x as tanh's rule made it before: the square, then the subtraction."""
    return 1 - tf.square(x)


def bits(a):
    a = np.asarray(a)
    return a.dtype, a.shape, np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (11,), (3, 4)])
def test_the_primitive_is_the_square_and_the_subtraction(dtype, shape):
    rng = np.random.default_rng(0)
    n = int(np.prod(shape))
    vals = np.resize(np.array(SPECIAL + list(rng.standard_normal(8)), dtype=np.float64), n)
    with np.errstate(all="ignore"):  # 3e38 overflows float16; inf * 1j makes NaNs
        x = vals.astype(dtype).reshape(shape)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * np.resize(vals[::-1], n).astype(dtype).reshape(shape)
        want = bits(composite(tf.constant(x)).numpy())
        assert bits(bind(PRIMITIVES["one_minus_square"], tf.constant(x)).numpy()) == want
        assert bits(elementwise._one_minus_square(x)) == want  # a NumPy pass's form
        f = tf.function(lambda t: bind(PRIMITIVES["one_minus_square"], t))
        assert bits(f(tf.constant(x)).numpy()) == want  # generated code


def test_nested_tapes_record_one_operation_for_it():
    x = tf.constant(np.linspace(-2, 2, 7))
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = tf.tanh(x)
        inner.gradient(y, x)
        names = [e[0].name for e in outer._entries]
    assert "one_minus_square" in names and "square" not in names and "sub" not in names


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_its_rule_gives_the_square_and_subtraction_numbers(dtype):
    vals = np.array([0.0, -0.0, 0.3, -1.7, 4.0, -30.0, np.inf, -np.inf, 1e-20], dtype)
    x = tf.constant(vals)
    for dy in (0.75, -1.5, 0.0, -0.0, np.inf):
        ct = tf.constant(np.full(vals.shape, dy, dtype))
        got = []
        for make in (lambda y: bind(PRIMITIVES["one_minus_square"], y), composite):
            with tf.GradientTape() as t:
                t.watch(x)
                d = make(tf.tanh(x))
            with np.errstate(all="ignore"):
                got.append(bits(t.gradient(d, x, output_gradients=ct).numpy()))
        assert got[0] == got[1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_third_order_tanh_eager_equals_compiled_and_the_interpreter(dtype):
    x0 = np.linspace(-1.5, 1.5, 9).astype(dtype)

    def third(x):
        with tf.GradientTape() as t3:
            t3.watch(x)
            with tf.GradientTape() as t2:
                t2.watch(x)
                with tf.GradientTape() as t1:
                    t1.watch(x)
                    y = tf.tanh(x) * x
                g1 = t1.gradient(y, x)
            g2 = t2.gradient(g1, x)
        return g1, g2, t3.gradient(g2, x)

    eager = [bits(g.numpy()) for g in third(tf.constant(x0))]
    for _ in range(3):  # noted, compiled and checked, then generated code
        assert [bits(g.numpy()) for g in third(tf.constant(x0))] == eager
    assert [bits(g.numpy()) for g in tf.function(third)(tf.constant(x0))] == eager
    tf.config.set_derivative_cache(False)
    try:
        assert [bits(g.numpy()) for g in third(tf.constant(x0))] == eager
    finally:
        tf.config.set_derivative_cache(True)
    t = np.tanh(x0.astype(np.float64))
    s = 1 - t * t  # d/dx (x tanh x) = tanh + x s, and on by hand
    want = [t + x0 * s, 2 * s - 2 * x0 * t * s, -6 * t * s + x0 * (-2 * s * s + 4 * t * t * s)]
    for got, w in zip(third(tf.constant(x0)), want):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-5 if dtype == np.float32 else 1e-12)


def _interpreted(step, *args):
    tf.config.set_derivative_cache(False)
    try:
        return [bits(g.numpy()) for g in step(*args)]
    finally:
        tf.config.set_derivative_cache(True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_persistent_outer_tape_used_for_two_gradients_and_a_jacobian(dtype):
    """tanh's nested passes (compiled and recorded once their structure repeats) under a
    persistent outer tape: its gradient twice and its Jacobian, at two shapes, NaN and inf
    among the inputs, are the interpreter's bits; the watched input reads the same after the
    tapes are gone."""
    def step(x, w):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(w)
            with tf.GradientTape() as inner:
                inner.watch(x)
                u = tf.tanh(tf.tanh(x * w) * w)
            du = inner.gradient(u, x)
            s = tf.reduce_sum(du * du)
        g1, g2 = outer.gradient(s, w), outer.gradient(du, w)
        return [du, g1, g2, outer.jacobian(du, w)]

    from tapegrad.compile import derivative_cache, recorded_pass
    before = recorded_pass.hits(), derivative_cache.hits()
    rng = np.random.default_rng(1)
    for n in (5, 5, 5, 5, 7, 7, 7, 7):  # a new shape is a new structure
        x0 = rng.standard_normal(n).astype(dtype)
        x0[0], x0[-1] = np.nan, np.inf
        x, w = tf.constant(x0), tf.constant(rng.standard_normal(n).astype(dtype))
        with np.errstate(invalid="ignore"):
            got = [bits(g.numpy()) for g in step(x, w)]
            assert got == _interpreted(step, x, w)
        assert bits(x.numpy()) == bits(x0)
    assert recorded_pass.hits() > before[0] and derivative_cache.hits() > before[1]
