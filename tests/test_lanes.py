"""Lanes in generated code (``trace/lanes.py``): the same elementwise computation on several
arrays, done once on their concatenation, gives the interpreter's bits on both sides of
the cost model's thresholds."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.trace import lanes
from test_fusion import assert_same_bits, run_both, special

MARK = "computed once on their concatenation"
SHAPES = [(16, 64), (64,), (64, 64), (64,), (64, 1), (1,)]  # W9's variables


def adam(*args):
    """Keras's Adam update of every variable (its elementwise part), one lane each."""
    n = (len(args) - 1) // 4
    gs, ms, vs, ps, alpha = args[:n], args[n:2 * n], args[2 * n:3 * n], args[3 * n:-1], args[-1]
    out = []
    for g, m, v, p in zip(gs, ms, vs, ps):
        m = m + (g - m) * 0.1
        v = v + (tf.square(g) - v) * 0.001
        out += [p - m * alpha / (tf.sqrt(v) + 1e-7), m, v]
    return out


def adam_inputs(shapes, dtype="float32", seed=0):
    xs = [special(s, dtype, seed + k) for k, s in enumerate(shapes * 4)]
    n = len(shapes)
    for k in range(2 * n, 3 * n):  # velocities: mostly non-negative, one NaN, inf, -0.0 each
        signs = np.where(np.arange(xs[k].size).reshape(xs[k].shape) % 7, 1, -1).astype(dtype)
        xs[k] = np.abs(xs[k]) * signs  # (int signs would make them float64)
    return xs + [np.asarray(0.001, dtype)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adam_over_variables_of_different_shapes_is_exact(dtype):
    with np.errstate(all="ignore"):
        src = run_both(adam, *adam_inputs(SHAPES, dtype))
    assert MARK in src and "# 6 lanes of the same " in src


def test_lanes_pay_from_a_number_of_lanes_that_grows_with_the_size():
    """``p - lr * g`` per variable: two operations, so only many lanes pay, more of them
    when the arrays are large; both sides are exact."""
    def sgd(*args):
        n = len(args) // 2
        return [p - g * 0.01 for p, g in zip(args[:n], args[n:])]

    first = {}
    for size in (8, 256):
        fused = []
        for m in range(2, 24):
            with np.errstate(all="ignore"):
                src = run_both(sgd, *[special((size,), "float32", k) for k in range(2 * m)])
            if MARK in src:
                fused.append(m)
        assert fused and fused == list(range(fused[0], 24))
        first[size] = fused[0]
    assert 2 < first[8] < first[256]


def test_no_group_beyond_max_bytes():
    """Thirty operations a lane amortise the copies; the size limit still holds."""
    def deep(*xs):
        out = []
        for x in xs:
            for _ in range(10):
                x = tf.tanh(x) * 0.5 + x
            out.append(x)
        return out

    big = lanes.MAX_BYTES // (6 * 4)  # float32 elements per lane at the limit
    for size, fused in ((big, True), (big + 1, False)):
        with np.errstate(all="ignore"):
            src = run_both(deep, *[special((size,), "float32", k) for k in range(6)])
        assert (MARK in src) == fused


def test_a_value_used_before_the_end_places_the_group_before_that_use():
    def f(a, b, c, w):
        outs = [tf.tanh(x) * 2.0 + x for x in (a, b, c)]  # three lanes of three operations
        first = tf.reshape(outs[0], [1, -1]) @ w          # an early use of one lane's value
        return outs + [first * 3.0]

    xs = [special((40,), "float64", k) for k in range(3)] + [special((40, 2), "float64", 3)]
    with np.errstate(all="ignore"):
        src = run_both(f, *xs)
    assert MARK in src
    assert src.index(MARK) < src.index("matmul_2d(")


def test_a_lane_whose_input_comes_after_another_lanes_use_is_not_grouped():
    def f(a, b, w):
        x = tf.tanh(a) * 2.0 + a
        s = tf.reduce_sum(tf.reshape(x, [1, -1]) @ w)  # x used here ...
        y = tf.tanh(b * s) * 2.0 + b * s               # ... before y's input b * s exists
        return x, y

    xs = [special((40,), "float64", k) for k in range(2)] + [special((40, 1), "float64", 2)]
    with np.errstate(all="ignore"):
        src = run_both(f, *xs)
    assert MARK not in src


def keras_adam_step(n_in, widths, rows, seed):
    """A Keras MLP (tanh, then linear layers), its Adam optimizer, and the compiled training
    step on fixed data."""
    keras = tf.keras
    layers = [keras.Input((n_in,)), keras.layers.Dense(widths[0], activation="tanh")]
    model = keras.Sequential(layers + [keras.layers.Dense(w) for w in widths[1:]])
    opt = keras.optimizers.Adam(1e-2)
    rng = np.random.default_rng(seed)
    x = tf.constant(rng.standard_normal((rows, n_in)).astype("float32"))
    y = tf.constant(rng.standard_normal((rows, 1)).astype("float32"))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return model, opt, step


def test_an_adam_step_under_function_matches_its_program_run_through_bind():
    """The Keras optimizer under ``tf.function``: the generated code (with lanes) against
    the same program run by the interpreter (a call under a tape runs it through bind)."""
    model, opt, step = keras_adam_step(5, (7, 3, 1), 11, 3)
    step()
    assert MARK in step.get_concrete_function().source()
    start = [v.numpy().copy() for v in model.variables + opt.variables]
    step()
    compiled = [v.numpy().copy() for v in model.variables + opt.variables]
    for v, s in zip(model.variables + opt.variables, start):
        v.assign(s)
    with tf.GradientTape():
        step()
    for v, c in zip(model.variables + opt.variables, compiled):
        assert_same_bits(c, v.numpy())
        assert np.isfinite(c).all()
    assert any(not np.array_equal(c, s) for c, s in zip(compiled, start))


def test_joined_returns_the_flat_array_only_for_the_very_views_it_handed_back():
    flat = np.arange(10.0)
    views = (flat[0:4].reshape(2, 2), flat[4:10])
    memo = [None, (flat, views)]
    assert lanes.joined(memo, views) is flat
    again = lanes.joined(memo, (views[0], flat[4:10]))  # equal values, another view object
    assert again is not flat and np.array_equal(again, flat)
    assert np.array_equal(lanes.joined([None], (np.ones((2, 2)), np.zeros(3))),
                          [1, 1, 1, 1, 0, 0, 0])


def test_a_compiled_adam_loop_keeps_its_state_flat_and_never_writes_old_values():
    """Step after step, the variables hold views of the last step's flat arrays; a step
    reads them without copying and never writes into them; an assign in between is
    gathered again. Every step gives the interpreter's bits."""
    model, opt, compiled = keras_adam_step(4, (6, 5, 1), 9, 4)
    compiled()
    state = model.variables + opt.variables
    for k in range(4):
        if k == 2:
            model.layers[0].kernel.assign(model.layers[0].kernel.numpy() * 0.5)
        before = [v._value for v in state]
        if k != 2:  # the values are views of one flat array per kind
            kernels = [lay.kernel._value for lay in model.layers]
            assert all(a.base is kernels[0].base is not None for a in kernels)
        kept = [b.copy() for b in before]
        start = [b.copy() for b in before]
        compiled()
        got = [v.numpy().copy() for v in state]
        for b, c in zip(before, kept):
            assert_same_bits(b, c)  # the step wrote into no old value
        for v, s in zip(state, start):
            v.assign(s)
        with tf.GradientTape():  # the same program, run through bind
            compiled()
        for v, g in zip(state, got):
            assert_same_bits(g, v.numpy())
        for v, g in zip(state, got):  # continue from the compiled step's own values
            v.assign(g)
        compiled()


def test_joined_tries_the_hinted_entry_first_and_falls_back_to_every_entry():
    flats = [np.arange(6.0), np.arange(6.0) + 10]
    views = [(f[0:2], f[2:6].reshape(2, 2)) for f in flats]
    memo = [(flats[0], views[0]), (flats[1], views[1])]
    assert lanes.joined(memo, views[1], 1) is flats[1]
    assert lanes.joined(memo, views[1], 0) is flats[1]  # a wrong hint: the scan finds it
    assert lanes.joined([None, None], views[0], 1) is not flats[0]  # no entry yet
    fresh = lanes.joined(memo, (views[0][0], views[1][1]), 0)  # mixed: a new concatenation
    assert fresh is not flats[0] and fresh is not flats[1]
    assert np.array_equal(fresh, [0, 1, 12, 13, 14, 15])


def test_a_compiled_adam_step_hints_each_state_at_the_entry_it_assigns():
    """Momenta, velocities and weights each look up first the flat array their own update
    made (the hint); the bits are checked by the tests above, which run this code."""
    model, opt, step = keras_adam_step(5, (7, 3, 1), 11, 3)
    step()
    src = step.get_concrete_function().source()
    hints = sorted(line.split("),")[-1].split(")")[0].strip()
                   for line in src.splitlines() if "joined(" in line)
    assert len(hints) == 3 and len(set(hints)) == 3, src
