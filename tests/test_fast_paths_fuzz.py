"""Random long elementwise programs agree bit for bit between the interpreter, ``tf.function``
and the derivative cache: values and gradients, NaN, inf and the sign of zero included.

The short programs of ``test_properties.py`` never reach the generated-code forms that pay
only on long chains or on many arrays: product-chain fusion (``trace/fusion.py``, a dozen
multiplies and more) and lanes (``trace/lanes.py``, one computation on several arrays, as an
optimizer runs it). These programs do: up to 60 operations, several arrays of different
shapes, special values sprinkled in.
"""
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import assert_same_bits as same_bits
from tapegrad.compile import derivative_cache

UNARY = [tf.sin, tf.cos, tf.tanh, tf.exp, tf.sigmoid, tf.tan, tf.abs, tf.square,
         tf.math.softplus, tf.nn.relu,
         lambda v: v * 1.0001, lambda v: v + 0.1, lambda v: v * v, lambda v: -v,
         lambda v: v * -0.5]
BINARY = [tf.multiply, tf.add, tf.subtract, tf.maximum]
SHAPES = [(), (1,), (3,), (16,), (100,), (4, 5), (64, 8)]
SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _steps(rng, n, near):
    """``n`` steps over a growing list of values; unary steps read one of the ``near`` last."""
    steps = []
    for k in range(n):
        avail = 1 + k + (near is None)
        if rng.random() < 0.75:
            lo = 0 if near is None else max(0, avail - near)
            steps.append((UNARY[rng.integers(len(UNARY))], int(rng.integers(lo, avail))))
        else:
            steps.append((BINARY[rng.integers(len(BINARY))], int(rng.integers(avail)),
                          int(rng.integers(avail))))
    return steps


def _run(steps, vals):
    vals = list(vals)
    for fn, *refs in steps:
        vals.append(fn(*[vals[r] for r in refs]))
    return vals


def _array(rng, shape, dtype):
    a = rng.uniform(-2, 2, shape).astype(dtype)
    if a.size and rng.random() < 0.3:
        a.reshape(-1)[rng.integers(a.size)] = SPECIAL[rng.integers(len(SPECIAL))]
    return a


def _interpreted(fn, *args):
    tf.config.set_derivative_cache(False)
    try:
        return [v.numpy() for v in fn(*args)]
    finally:
        tf.config.set_derivative_cache(True)


@pytest.mark.parametrize("seed", range(4))
def test_long_chains_over_two_inputs(seed):
    rng = np.random.default_rng(seed)
    for _ in range(12):
        steps = _steps(rng, int(rng.integers(5, 60)), None)
        dtype = (np.float32, np.float64)[rng.integers(2)]
        shape = SHAPES[rng.integers(len(SHAPES))]
        x, y = (tf.constant(_array(rng, shape, dtype)) for _ in range(2))

        def grad(x, y):
            with tf.GradientTape() as t:
                t.watch([x, y])
                vals = _run(steps, [x, y])
                out = tf.reduce_sum(vals[-1]) + 0.5 * tf.reduce_sum(vals[len(vals) // 2])
            return [tf.zeros_like(x) if g is None else g for g in t.gradient(out, [x, y])]

        plain = _interpreted(grad, x, y)
        compiled = tf.function(lambda x, y: tf.stack(grad(x, y)))(x, y).numpy()
        low = derivative_cache.MIN_ENTRIES
        derivative_cache.MIN_ENTRIES = 1  # every tape gets a compiled pass
        try:
            cached = [[g.numpy() for g in grad(x, y)] for _ in range(4)][-1]
        finally:
            derivative_cache.MIN_ENTRIES = low
        for k in range(2):
            same_bits(plain[k], compiled[k], ("tf.function", steps, k))
            same_bits(plain[k], cached[k], ("derivative cache", steps, k))


@pytest.mark.parametrize("seed", range(4))
def test_one_computation_on_several_arrays(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(12):
        steps = _steps(rng, int(rng.integers(3, 30)), near=3)
        dtype = (np.float32, np.float64)[rng.integers(2)]
        shapes = [SHAPES[rng.integers(len(SHAPES))] for _ in range(int(rng.integers(2, 6)))]
        xs = [tf.constant(_array(rng, s, dtype)) for s in shapes]

        def both(*xs):
            with tf.GradientTape() as t:
                t.watch(list(xs))
                ys = [_run(steps, [x])[-1] for x in xs]
                out = tf.add_n([tf.reduce_sum(y) for y in ys])
            gs = t.gradient(out, list(xs))
            return [tf.zeros_like(x) if g is None else g for x, g in zip(xs, gs)] + ys

        plain = _interpreted(both, *xs)
        compiled = [v.numpy() for v in tf.function(both)(*xs)]
        for k, (p, c) in enumerate(zip(plain, compiled)):
            same_bits(p, c, ("tf.function", shapes, steps, k))


def test_the_programs_reach_the_long_chain_forms():
    """The generators above do produce fused products and lanes (else they test nothing new)."""
    rng = np.random.default_rng(7)
    seen = {"np.multiply.reduce(": 0, "np.concatenate(": 0}
    for _ in range(30):
        steps = _steps(rng, 40, near=1)
        xs = [tf.constant(_array(rng, (16,), np.float32)) for _ in range(3)]

        def both(*xs):
            with tf.GradientTape() as t:
                t.watch(list(xs))
                out = tf.add_n([tf.reduce_sum(_run(steps, [x])[-1]) for x in xs])
            return t.gradient(out, list(xs))

        src = tf.function(both).get_concrete_function(*xs).source()
        for k in seen:
            seen[k] += k in src
    assert all(seen.values()), seen
