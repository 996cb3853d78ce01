"""A lane group's inputs written in place (``trace/lane_inputs.py``): the ufuncs, matmuls and
row sums that make a group's array inputs write into its flat array; the interpreter's bits
where they do and where they do not (a value read elsewhere, an output)."""
import numpy as np
import pytest

import tapegrad as tf
from test_fusion import assert_same_bits, run_both, special
from test_lanes import MARK, adam, adam_inputs, keras_adam_step

IN_PLACE = "written in place"


MATRICES = [(16, 64), (64, 64), (64, 1), (3, 5)]


def adam_of_made_gradients(*args):
    """Adam's update (test_lanes.adam) of gradients the program makes by a broadcast ufunc
    per variable (``a * row``: not itself a lane operation, its operands' shapes differ)."""
    n = (len(args) - 1) // 5
    gs = [a * r for a, r in zip(args[:n], args[4 * n:5 * n])]
    return adam(*gs, *args[n:4 * n], args[-1])


def made_inputs(dtype):
    xs = [np.asarray(x, dtype) for x in adam_inputs(MATRICES, dtype)]
    rows = [special((1, s[1]), dtype, 50 + k) for k, s in enumerate(MATRICES)]
    return xs[:-1] + rows + xs[-1:]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ufunc_made_gradients_are_written_into_the_flat_array_exactly(dtype):
    with np.errstate(all="ignore"):
        src = run_both(adam_of_made_gradients, *made_inputs(dtype))
    assert MARK in src and IN_PLACE in src
    assert "np.concatenate(" not in src, src  # (the other inputs are the arguments: joined)


def dense_gradients(*args):
    """Per layer, a weight gradient ``x.T @ g`` and a bias gradient (a row sum), then
    SGD with momentum on all of them: the matmuls and row sums write in place."""
    n = len(args) // 4
    xs, gs, ws, ms = args[:n], args[n:2 * n], args[2 * n:3 * n], args[3 * n:]
    out = []
    for x, g, w, m in zip(xs, gs, ws, ms):
        dw = tf.matmul(x, g, transpose_a=True)
        db = tf.reduce_sum(g, axis=0)
        for p, d, mm in ((w, dw, m), (w[0], db, m[0])):
            mm = mm * 0.9 + d
            out += [p - mm * 0.01, mm]
    return out


def dense_inputs(dims, rows, dtype, seed=0):
    xs = [special((rows, a), dtype, seed + k) for k, (a, _) in enumerate(dims)]
    gs = [special((rows, b), dtype, seed + 10 + k) for k, (_, b) in enumerate(dims)]
    ws = [special((a, b), dtype, seed + 20 + k) for k, (a, b) in enumerate(dims)]
    ms = [special((a, b), dtype, seed + 30 + k) for k, (a, b) in enumerate(dims)]
    return xs + gs + ws + ms


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_and_row_sum_gradients_are_written_in_place_exactly(dtype):
    with np.errstate(all="ignore"):
        src = run_both(dense_gradients, *dense_inputs([(16, 8), (8, 8), (8, 1)], 32, dtype))
    assert MARK in src and IN_PLACE in src
    assert "out=_lane" in src and "reduce_sum over the rows" in src


def test_a_gradient_read_elsewhere_or_returned_is_concatenated_as_before():
    """One lane's value also read after the group (or returned): the group may write over
    its flat array, so that input is concatenated as before."""
    def read_after(*args):
        n = (len(args) - 1) // 5
        out = adam_of_made_gradients(*args)
        return out + [tf.reduce_sum(args[0] * args[4 * n])]  # CSE: the first gradient

    def returned(*args):
        n = (len(args) - 1) // 5
        return adam_of_made_gradients(*args) + [args[n - 1] * args[5 * n - 1]]

    for fn in (read_after, returned):
        with np.errstate(all="ignore"):
            src = run_both(fn, *made_inputs("float32"))
        assert MARK in src and IN_PLACE not in src and src.count("np.concatenate(") == 1, src


def test_integer_lanes_written_in_place_are_exact():
    def f(*args):
        n = len(args) // 3
        gs = [a * r for a, r in zip(args[:n], args[2 * n:])]  # broadcast: made in place
        out = []
        for p, g in zip(args[n:2 * n], gs):
            for _ in range(4):
                p = p - g * 2 + g
            out.append(p)
        return out

    rng = np.random.default_rng(0)
    xs = [rng.integers(-2 ** 30, 2 ** 30, size=s, dtype=np.int32) for s in MATRICES * 2]
    xs += [rng.integers(-9, 9, size=(1, s[1]), dtype=np.int32) for s in MATRICES]
    src = run_both(f, *xs)
    assert MARK in src and IN_PLACE in src, src


def test_a_compiled_keras_adam_step_writes_its_gradients_in_place_and_keeps_the_bits():
    """Step after step (a new flat array each call: the variables keep views of older
    ones), the compiled step against the same program through bind."""
    model, opt, step = keras_adam_step(5, (7, 3, 1), 11, 3)
    step()
    src = step.get_concrete_function().source()
    assert MARK in src and IN_PLACE in src
    assert "np.concatenate(" not in src, src
    state = model.variables + opt.variables
    for _ in range(3):
        start = [v.numpy().copy() for v in state]
        held = [v._value for v in state]
        kept = [h.copy() for h in held]
        step()
        got = [v.numpy().copy() for v in state]
        for h, k in zip(held, kept):
            assert_same_bits(h, k)  # no old value written over
        for v, s in zip(state, start):
            v.assign(s)
        with tf.GradientTape():
            step()
        for v, g in zip(state, got):
            assert_same_bits(g, v.numpy())
            v.assign(g)
        step()


def test_a_step_traced_with_a_none_batch_writes_in_place_at_every_batch_size():
    """One trace reused at several batch sizes (a ``None`` dimension): the gradients'
    shapes do not move, the in-place slices hold at each size, and each call gives the
    interpreter's bits."""
    rng = np.random.default_rng(4)
    ws = [tf.Variable(rng.standard_normal(s).astype("float32")) for s in ((3, 5), (5,), (5, 1))]
    ms = [tf.Variable(np.zeros(w.shape, "float32")) for w in ws]

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.tanh(x @ ws[0] + ws[1]) @ ws[2]))
        for w, m, g in zip(ws, ms, tape.gradient(loss, ws)):
            new = m * 0.9 + g
            for _ in range(4):  # enough operations a lane for the group to pay
                new = new * 0.5 + g
            m.assign(new)
            w.assign_sub(new * 0.01)

    for rows in (16, 40, 16, 9):
        x = tf.constant(rng.standard_normal((rows, 3)).astype("float32"))
        start = [v.numpy().copy() for v in ws + ms]
        step(x)
        got = [v.numpy().copy() for v in ws + ms]
        for v, s in zip(ws + ms, start):
            v.assign(s)
        with tf.GradientTape():
            step(x)
        for v, g in zip(ws + ms, got):
            assert_same_bits(g, v.numpy())
    src = step.get_concrete_function(x).source()
    assert MARK in src and IN_PLACE in src, src
