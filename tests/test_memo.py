"""Derived values of an output made once for every derivative pass (primitives/memo.py).

The rules of tanh (``1 - y*y``), tan (``1 + y*y``) and sigmoid (``y (1 - y)``) take that
value from ``derived``: nested tapes get one tensor per output, and it is handed out again
only where every recorder on the stack would see the same thing as with a fresh copy.
Derivatives are checked by central differences in float64; the cases where a copy must be
made (a recorder paused when the tensor was made, a reset tape that watches the output
again) are checked against the derivative they must give.
"""
import gc

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.primitives import memo

X = np.array([0.3, -1.2, 0.9, 0.0])
FUNCTIONS = {"tanh": (tf.tanh, np.tanh), "tan": (tf.math.tan, np.tan),
             "sigmoid": (tf.sigmoid, lambda x: 1 / (1 + np.exp(-x)))}
STEPS = {1: 1e-5, 2: 1e-4, 3: 1e-3}  # nested central differences: a wider step per order
RTOL = {1: 1e-9, 2: 1e-6, 3: 1e-4}


def numeric(f, order, x):
    """The ``order``-th derivative of NumPy function ``f`` by nested central differences."""
    if order == 0:
        return f(x)
    h = STEPS[order]
    return (numeric(f, order - 1, x + h) - numeric(f, order - 1, x - h)) / (2 * h)


def assert_derivative(got, f, order, x=X):
    np.testing.assert_allclose(got.numpy(), numeric(f, order, x), rtol=RTOL[order],
                               atol=RTOL[order])


def first_derivative_on_a_tape(x, f=tf.tanh):
    """``(t2, d f(x)/dx)`` by a tape inside ``t2`` (both watch ``x``); ``t2`` has exited."""
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g1 = t1.gradient(y, x)
    return t2, g1


@pytest.fixture
def squares(monkeypatch):
    """Counts the calls of the primitives that make the derived values: square (1 + y*y)
    and one_minus_square (1 - y*y)."""
    calls = [0]
    for name in ("square", "one_minus_square"):
        p = PRIMITIVES[name]

        def counted(*a, impl=p.impl, **k):
            calls[0] += 1
            return impl(*a, **k)
        monkeypatch.setattr(p, "impl", counted)
    return calls


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_third_derivatives_through_nested_tapes(name):
    f, npf = FUNCTIONS[name]
    x = tf.constant(X)
    with tf.GradientTape() as t3:
        t3.watch(x)
        t2, g1 = first_derivative_on_a_tape(x, f)
        g2 = t2.gradient(g1, x)
    g3 = t3.gradient(g2, x)
    for order, g in enumerate((g1, g2, g3), 1):
        assert_derivative(g, npf, order)


@pytest.mark.parametrize("name", ["tanh", "tan"])
def test_the_second_pass_takes_the_first_pass_tensor(name, squares):
    x = tf.constant(X)
    with tf.GradientTape() as t3:
        t3.watch(x)
        t2, g1 = first_derivative_on_a_tape(x, FUNCTIONS[name][0])
        made = squares[0]
        t2.gradient(g1, x)
        assert squares[0] == made == 1  # 1 -+ y*y made once, in the first pass


def test_a_recorder_paused_when_it_was_made_gets_a_fresh_copy(squares):
    x = tf.constant(X)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = tf.tanh(x)
        with outer.stop_recording():
            inner.gradient(y, x)      # makes 1 - y*y while outer does not record
        before = squares[0]
        g = inner.gradient(y, x)      # outer records now: it must see 1 - y*y made from y
        assert squares[0] == before + 1
    assert_derivative(outer.gradient(g, x), np.tanh, 2)


def test_a_reset_tape_that_watches_the_output_again_gets_a_fresh_copy():
    x = tf.constant(X)
    with tf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with tf.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = tf.tanh(x)
        inner.gradient(y, x)          # outer records 1 - y*y ...
        outer.reset()                 # ... and forgets it
        outer.watch(y)
        g = inner.gradient(y, x)      # g = 1 - y*y, recorded from y again
    dg_dy = outer.gradient(g, y)
    # dg/dy = (dg/dx) / (dy/dx), g being dy/dx
    want = numeric(np.tanh, 2, X) / numeric(np.tanh, 1, X)
    np.testing.assert_allclose(dg_dy.numpy(), want, rtol=1e-6, atol=1e-6)


def test_forward_over_reverse_and_reverse_over_forward():
    x = tf.constant(X)
    v = tf.constant(np.ones_like(X))
    with tf.autodiff.ForwardAccumulator(x, v) as acc:
        t2, g1 = first_derivative_on_a_tape(x)
        g2 = t2.gradient(g1, x)
    assert_derivative(acc.jvp(g1), np.tanh, 2)
    assert_derivative(acc.jvp(g2), np.tanh, 3)
    with tf.GradientTape() as t:
        t.watch(x)
        with tf.autodiff.ForwardAccumulator(x, v) as acc:
            y = tf.tanh(x)
            dy = acc.jvp(y)
        with tf.autodiff.ForwardAccumulator(x, v) as acc2:
            dy_again = tf.tanh(x)  # a new output: its own derived value
        assert acc2.jvp(dy_again) is not None
    assert_derivative(t.gradient(dy, x), np.tanh, 2)


def pinn_like_step(params, x):
    """u_x by a tape, its x-derivative by another, a loss of both, its weight gradient."""
    with tf.GradientTape() as outer:
        outer.watch(params)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                u = tf.matmul(tf.tanh(tf.matmul(x, params[0])), params[1])
            du = t1.gradient(u, x)
        d2u = t2.gradient(du, x)
        loss = tf.reduce_sum(d2u * d2u + u)
    return outer.gradient(loss, params)


def pinn_case(seed):
    """Weights, points, and the outer gradient by the interpreter (no derivative cache)."""
    rng = np.random.default_rng(seed)
    params = [tf.constant(rng.standard_normal((2, 8))), tf.constant(rng.standard_normal((8, 1)))]
    x = tf.constant(rng.standard_normal((16, 2)))
    tf.config.set_derivative_cache(False)
    try:
        plain = [g.numpy() for g in pinn_like_step(params, x)]
    finally:
        tf.config.set_derivative_cache(True)
    return params, x, plain


def assert_as_plain(got, plain):
    # the generated passes sum over rows by GEMMs: test_derivative_cache.py's tolerance
    for a, b in zip(got, plain):
        np.testing.assert_allclose(a.numpy(), b, rtol=1e-12, atol=1e-12)


def test_cached_and_compiled_passes_give_the_interpreters_numbers():
    params, x, plain = pinn_case(0)
    for _ in range(4):  # the third and later outer passes run as generated code
        assert_as_plain(pinn_like_step(params, x), plain)
    assert_as_plain(tf.function(pinn_like_step)(params, x), plain)


def test_nothing_is_kept_once_the_output_is_gone():
    gc.collect()
    start = memo.remembered()
    t2, g1 = first_derivative_on_a_tape(tf.constant(X))
    assert memo.remembered() == start + 1
    del g1, t2  # the tape held the output (tanh's y)
    gc.collect()
    assert memo.remembered() == start


def test_first_order_gradients_remember_nothing():
    gc.collect()
    start = memo.remembered()
    x = tf.constant(X)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.tanh(x)
    keep = y
    assert_derivative(t.gradient(y, x), np.tanh, 1)
    assert memo.remembered() == start and keep is y


def test_the_cached_outer_pass_reads_derived_values_off_the_tape(monkeypatch):
    from tapegrad.compile import derivative_cache
    params, x, plain = pinn_case(1)
    derivative_cache.clear()
    for _ in range(4):
        assert_as_plain(pinn_like_step(params, x), plain)
    assert derivative_cache.replay_hits() >= 1
    (source,) = derivative_cache.cached_sources()
    assert "square" not in source  # tanh's 1 - y*y is the tape's, not made again
    # a tape whose derived values are not remembered is not replayed with them: it is keyed
    # anew (and computed by the interpreter until that key repeats)
    monkeypatch.setattr(memo, "derived_values", lambda ans: {})
    hits = derivative_cache.replay_hits()
    assert_as_plain(pinn_like_step(params, x), plain)
    assert derivative_cache.replay_hits() == hits
