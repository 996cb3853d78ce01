"""Fused product chains in generated code (``trace/fusion.py``): the same bits as the
interpreter, on both sides of every threshold of the cost model."""
import functools
import operator
import re

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.ir import evaluate
from tapegrad.trace import fusion
from test_codegen_blocking import run_both as generated_and_interpreted

FUSED = "np.multiply.reduce("


def assert_same_bits(got, want):
    """Equal values, NaN where NaN, and the same sign of every zero."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def run_both(fn, *arrays):
    """The source of ``fn`` traced on ``arrays``, after checking that the generated code
    gives the interpreter's bits."""
    got, want, src = generated_and_interpreted(fn, *arrays)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same_bits(g, w)
    return src


def special(shape, dtype, seed=0):
    """Random values with NaN, +-inf, +-0.0, huge and tiny ones mixed in."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype).ravel()
    extra = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e-30, 3e38], dtype)
    x[: min(x.size, extra.size)] = extra[: x.size]
    rng.shuffle(x)
    return x.reshape(shape)


def chain_gradient(n_ops, size, dtype="float32"):
    """W6's program: forward and gradient of the sum of a chain of elementwise ops."""
    spec = tf.TensorSpec([size] if isinstance(size, int) else list(size), dtype)

    @tf.function(input_signature=[spec])
    def grad(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x
            for k in range(n_ops):
                y = [tf.sin, lambda v: v * 1.0001, tf.tanh, lambda v: v + 0.1, tf.exp][k % 5](y)
            s = tf.reduce_sum(y)
        return g.gradient(s, x)

    return grad.get_concrete_function()


def _limit(n_ops, dtype):
    """The largest size whose stacked factors fit ``MAX_BYTES`` (4 factors per 5 ops)."""
    return fusion.MAX_BYTES // (4 * n_ops // 5 * np.dtype(dtype).itemsize)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [1, 3, 16, (4, 5), "limit", "limit+1"])
def test_chain_gradient_is_bit_for_bit_the_interpreters(shape, dtype):
    n_ops = 40
    if isinstance(shape, str):
        shape = _limit(n_ops, dtype) + shape.count("+1")
    cf = chain_gradient(n_ops, shape, dtype)
    size = int(np.prod(shape))
    assert (FUSED in cf.source()) == (size <= _limit(n_ops, dtype))
    for seed in range(3):
        x = special(np.shape(np.empty(shape)), dtype, seed) * 0.5
        with np.errstate(all="ignore"):
            got = cf(tf.constant(x)).numpy()
            want = evaluate(cf.program, [tf.constant(x)])[0][0].numpy()
        assert_same_bits(got, want)


@pytest.mark.parametrize("shape", [1, 16])
def test_half_floats_are_never_fused(shape):
    # np.multiply.reduce of float16 one-element rows accumulates in float32: not the
    # interpreter's rounding
    cf = chain_gradient(40, shape, "float16")
    assert FUSED not in cf.source()
    rng = np.random.default_rng(0)
    xs = [special((shape,), "float16", seed) * 0.5 for seed in range(3)]
    xs += [rng.uniform(-1, 1, (shape,)).astype(np.float16) for _ in range(30)]
    for x in xs:  # fused, 1 element: most of the 30 random inputs rounded differently
        with np.errstate(all="ignore"):
            got = cf(tf.constant(x)).numpy()
            want = evaluate(cf.program, [tf.constant(x)])[0][0].numpy()
        assert_same_bits(got, want)


def test_a_trace_reused_at_other_sizes_fuses_where_each_pays():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def grad(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x
            for k in range(40):
                y = [tf.sin, lambda v: v * 1.0001, tf.tanh, lambda v: v + 0.1, tf.exp][k % 5](y)
            s = tf.reduce_sum(y)
        return g.gradient(s, x)

    limit = _limit(40, "float32")
    for n in (16, limit + 1, 5, limit, 16):
        x = tf.constant(special((n,), "float32", n) * 0.5)
        with np.errstate(all="ignore"):
            got = grad(x).numpy()
            cf = grad.get_concrete_function(x)
            assert_same_bits(got, evaluate(cf.program, [x])[0][0].numpy())
        assert (FUSED in cf.source()) == (n <= limit)


def _product_sources(size, dtype):
    """``{factors: source}`` of plain products of 2..24 arrays, each checked exact."""
    out = {}
    for n in range(2, 25):
        arrays = [special((size,), dtype, seed) for seed in range(n)]
        with np.errstate(all="ignore"):
            out[n] = run_both(lambda *xs: functools.reduce(operator.mul, xs), *arrays)
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_plain_products_fuse_from_a_length_that_grows_with_the_size(dtype):
    """Both sides of the call-count threshold are exact (``run_both``), and it moves up
    with the bytes each factor copies."""
    first = {}
    for size in (7, 256):
        fused = [n for n, src in _product_sources(size, dtype).items() if FUSED in src]
        assert fused and fused == list(range(fused[0], 25))  # one threshold
        first[size] = fused[0]
    assert 8 <= first[7] < first[256]


def test_scalar_constants_and_products_in_any_operand_order():
    a = special((5,), "float32", 1)
    bs = [special((5,), "float32", s) for s in range(2, 9)]

    def f(x, *ys):
        acc = x * 3.0
        for k, y in enumerate(ys):
            acc = (y * acc) if k % 2 else (acc * 0.5)
            acc = acc * y
        return acc

    with np.errstate(all="ignore"):
        src = run_both(f, a, *bs)
    assert FUSED in src


@pytest.mark.parametrize("scalar", [0.5, np.nan, -0.0, np.inf, -3e38])
def test_scalar_inputs_are_factors_as_scalar_constants_are(scalar):
    # a 0-d argument (a tape's leaf in a cached derivative pass: the 1.0001 of x * 1.0001)
    # fills its factor rows by broadcasting, as a scalar constant does: the chain fuses
    a = special((5,), "float32", 1)
    bs = [special((5,), "float32", s) for s in range(2, 9)]

    def f(x, c, *ys):
        acc = x * c
        for k, y in enumerate(ys):
            acc = (c * acc) if k % 2 else (acc * c)
            acc = acc * y
        return acc

    with np.errstate(all="ignore"):
        src = run_both(f, a, np.asarray(scalar, np.float32), *bs)
    assert FUSED in src


def test_an_intermediate_used_twice_ends_the_chain():
    xs = [special((6,), "float64", s) for s in range(32)]

    def f(*xs):
        acc = xs[0]
        for x in xs[1:16]:
            acc = acc * x
        mid = acc
        for x in xs[16:]:
            acc = acc * x
        return acc, mid + 1.0

    with np.errstate(all="ignore"):
        src = run_both(f, *xs)
    assert src.count(FUSED) == 2


def test_expression_groups_pay_from_three_members():
    """``cos(x)`` twice is cheaper as two calls than stacked; three times it is stacked."""
    def f(n):
        def g(*xs):
            acc = xs[0]
            for k, x in enumerate(xs[1:]):
                acc = acc * (tf.cos(x) if k < n else x)
            return acc
        return g

    xs = [special((9,), "float32", s) for s in range(16)]
    with np.errstate(all="ignore"):
        two, three = run_both(f(2), *xs), run_both(f(3), *xs)
    assert FUSED in two and FUSED in three
    assert "np.cos(_stack" not in two and "np.cos(_stack" in three


def test_unevenly_spaced_rows_and_two_level_expressions():
    xs = [special((3, 4), "float64", s) for s in range(14)]
    pattern = "ceLcLLecLeccLL"  # c: 1 - y*y, e: exp(y), L: y itself

    def f(*xs):
        acc = xs[0]
        for p, x in zip(pattern, xs[1:]):
            acc = acc * {"c": lambda v: 1.0 - v * v, "e": tf.exp, "L": lambda v: v}[p](x)
        return acc

    with np.errstate(all="ignore"):
        src = run_both(f, *xs)
    assert FUSED in src and "_rows" in src


def test_a_leaf_stays_intact_where_its_buffer_would_otherwise_be_reused():
    """``w = t + 1`` is the last plain use of ``t`` before the fused chain reads it (as
    ``cos(t)``): ``w`` must not be written into ``t``'s buffer."""
    size = 512
    xs = [special((size,), "float64", s) for s in range(14)]

    def f(x, *ys):
        t = tf.exp(x * 0.001)
        acc = ys[0] * tf.cos(t)
        w = t + 1.0
        for y in ys[1:]:
            acc = acc * tf.cos(y)
        return acc * w

    with np.errstate(all="ignore"):
        src = run_both(f, *xs)
    assert FUSED in src


def test_repeated_calls_return_fresh_arrays():
    cf = chain_gradient(20, 16, "float64")
    x = tf.constant(np.linspace(-1, 1, 16))
    a, b = cf(x).numpy(), cf(x).numpy()
    assert not np.shares_memory(a, b)
    assert_same_bits(a, evaluate(cf.program, [x])[0][0].numpy())


def test_stacked_is_np_array_for_contiguous_and_other_layouts():
    rng = np.random.default_rng(5)
    parts = tuple(rng.standard_normal((3, 4)).astype("float32") for _ in range(5))
    for ps in (parts, parts[:1], tuple(p.T.copy().T for p in parts),  # F-ordered
               tuple(p[:, ::2] for p in parts), tuple(np.zeros((0, 2)) for _ in range(3))):
        got = fusion.stacked(ps)
        assert_same_bits(got, np.array(ps))


def test_arguments_named_like_the_helpers_turn_fusion_off():
    """Fused code calls ``stacked`` and ``joined`` by name: an argument of either name
    turns fusion off instead of shadowing them (the results stay exact either way)."""
    from tapegrad.ir import check, optimize
    from tapegrad.trace.codegen import compile_program
    from tapegrad.trace.tracer import GraphBuilder, tracing

    xs = [special((8,), "float64", s) for s in range(2)]
    for names, fused in ((("a", "b"), True), (("stacked", "b"), False), (("a", "joined"), False)):
        b = GraphBuilder("f")
        with tracing(b):
            acc, y = (b.add_input((8,), "float64", n) for n in names)
            for _ in range(30):
                acc = acc * tf.cos(y)
            program = check(optimize(b.build([acc])))
        fn, src = compile_program(program)
        assert (FUSED in src) == fused
        with np.errstate(all="ignore"):
            want = evaluate(program, [tf.constant(x) for x in xs])[0][0].numpy()
            assert_same_bits(fn(*xs), want)


def test_stacks_that_share_arrays_are_slices_of_one():
    """W6's program: the ``exp`` rows and the ``cos`` inputs are 20 arrays each, 19 of them
    the same: one stack of 21, read through two slices (same bits, NaN, inf and -0.0)."""
    cf = chain_gradient(100, 16)
    src = cf.source()
    # the stack: a stacked() array, or a kept block (trace/kept.py) holding the values
    first = set(re.findall(r"(\w+)\[0:20\]", src))
    assert first & set(re.findall(r"(\w+)\[1:21\]", src)), src
    for seed in range(3):
        x = special((16,), "float32", seed) * 0.5
        with np.errstate(all="ignore"):
            want = evaluate(cf.program, [tf.constant(x)])[0][0].numpy()
            assert_same_bits(cf(tf.constant(x)).numpy(), want)


@pytest.mark.parametrize("seqs, stacks, windows", [
    ([list("abc"), list("bcd")], [list("abcd")], [(0, 0), (0, 1)]),      # end overlaps start
    ([list("bcd"), list("abc")], [list("abcd")], [(0, 1), (0, 0)]),      # start overlaps end
    ([list("abcd"), list("bc")], [list("abcd")], [(0, 0), (0, 1)]),      # a window of it
    ([list("ab"), list("cd")], [list("ab"), list("cd")], [(0, 0), (1, 0)]),  # nothing shared
    ([list("ab"), list("ba")], [list("aba")], [(0, 0), (0, 1)]),
])
def test_merged_stacks_hold_each_sequence_as_a_window(seqs, stacks, windows):
    got_stacks, got_windows = fusion._merged(seqs)
    assert (got_stacks, got_windows) == (stacks, windows)
    for seq, (j, at) in zip(seqs, got_windows):
        assert got_stacks[j][at:at + len(seq)] == seq


def test_inner_nodes_of_a_stacked_expression_reuse_their_temporary():
    """``1 - 2 * exp(y)`` per factor: ``exp`` makes one stacked temporary, the multiply
    writes into it, the subtraction into the factors' rows (exact, NaN/inf/-0.0)."""
    xs = [special((7,), "float64", s) for s in range(16)]

    def f(*xs):
        acc = xs[0]
        for x in xs[1:]:
            acc = acc * (1.0 - 2.0 * tf.exp(x))
        return acc

    with np.errstate(all="ignore"):
        src = run_both(f, *xs)
    assert FUSED in src
    assert src.count("= np.exp(_stack0)") == 1 and "np.multiply(c0, _part0, _part0)" in src, src
