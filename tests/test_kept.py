"""Small buffers kept between calls of generated code (``trace/kept.py``): the interpreter's
bits on both sides of every threshold, nothing kept that a caller or a later call can see,
and concurrent calls each with their own set."""
import re
import sys
import threading

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.ir import evaluate
from tapegrad.testing import assert_same_bits
from tapegrad.trace import kept
from test_fusion import chain_gradient

KEPT = re.compile(r"\b_k\d+\b")


def special(shape, dtype, seed=0):
    """Random values with NaN, +-inf and +-0.0 mixed in (integers: a random range)."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-50, 50, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype).ravel()
    extra = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype)
    x[: min(x.size, extra.size)] = extra[: x.size]
    rng.shuffle(x)
    return x.reshape(shape)


def n_kept(src):
    """The number of kept buffers the source unpacks (0: none)."""
    line = next((ln for ln in src.splitlines() if re.match(r"\s*_k0, ", ln)), "")
    return len(KEPT.findall(line))


def sum_of_scaled(n, size, dtype="float32"):
    """``sum_k f(x * c_k)``: each ``x * c_k`` allocates (``x`` stays alive), the sum writes
    into the first term's buffer (an output: never kept), so ``n - 1`` are kept."""
    spec = tf.TensorSpec([size], dtype)
    floats = np.dtype(dtype).kind == "f"

    @tf.function(input_signature=[spec])
    def f(x):
        terms = [x * tf.constant(k + 2, dtype) for k in range(n)]
        terms = [tf.sin(t) if floats else t + 1 for t in terms]
        acc = terms[0]
        for t in terms[1:]:
            acc = acc + t
        return acc

    return f.get_concrete_function()


def check_calls(cf, xs):
    """Every call, in turn and then again, gives the interpreter's bits; results stay intact
    after later calls."""
    with np.errstate(all="ignore"):
        want = [evaluate(cf.program, [tf.constant(x)])[0][0].numpy() for x in xs]
        got = [cf(tf.constant(x)).numpy() for x in xs + xs]
    for g, w in zip(got, want + want):
        assert_same_bits(g, w)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_the_fewest_buffers_that_pay_are_kept_and_one_fewer_is_not(dtype):
    for n, expect in ((kept.MIN_BUFFERS, 0), (kept.MIN_BUFFERS + 1, kept.MIN_BUFFERS)):
        cf = sum_of_scaled(n, 16, dtype)
        assert n_kept(cf.source()) == expect, cf.source()
        check_calls(cf, [special((16,), dtype, s) for s in range(3)])


def test_a_buffer_of_at_most_max_bytes_is_kept_one_element_more_is_not():
    limit = kept.MAX_BYTES // 4
    for size, expect in ((limit, 5), (limit + 1, 0)):
        cf = sum_of_scaled(6, size)
        assert n_kept(cf.source()) == expect
        check_calls(cf, [special((size,), "float32", s) for s in range(2)])


def test_a_set_holds_at_most_max_set_bytes():
    per = kept.MAX_BYTES // 4
    most = kept.MAX_SET_BYTES // kept.MAX_BYTES
    cf = sum_of_scaled(most + 4, per)
    assert n_kept(cf.source()) == most
    check_calls(cf, [special((per,), "float32", 0)])


def test_w6_chain_gradient_keeps_its_forward_results_and_stacks_and_stays_exact():
    cf = chain_gradient(100, 16)  # W6's program
    src = cf.source()
    # each sin and + 0.1 of the forward pass, the factors, and the two stacks as blocks
    # whose rows those results are (the input x is copied into its row)
    assert n_kept(src) == 43 and "stacked((" not in src and "np.empty(" not in src, src
    assert re.search(r"_k\d+\[20\] = x\n", src)
    check_calls(cf, [special((16,), "float32", s) * 0.5 for s in range(4)])
    a = cf(tf.constant(np.ones(16, "float32"))).numpy()
    b = cf(tf.constant(np.ones(16, "float32"))).numpy()
    assert not np.shares_memory(a, b)


def cos_product(n_inputs, size):
    """A fused product: ``x``, twelve kept values ``cos(x * c)``, and ``n_inputs`` arguments
    as they are (the arguments are not kept: copied into the stack's block, if it is one)."""
    specs = [tf.TensorSpec([size], tf.float64)] * (1 + n_inputs)

    @tf.function(input_signature=specs)
    def f(x, *ps):
        acc = x
        for k in range(12):
            acc = acc * tf.cos(x * float(k + 2))
        for p in ps:
            acc = acc * p
        return acc

    return f.get_concrete_function()


def check_program(cf, n_args, size):
    for seed in range(3):
        args = [special((size,), "float64", seed * 7 + k) for k in range(n_args)]
        with np.errstate(all="ignore"):
            want = evaluate(cf.program, [tf.constant(a) for a in args])[0][0].numpy()
            for _ in range(2):
                assert_same_bits(cf(*[tf.constant(a) for a in args]).numpy(), want)


@pytest.mark.parametrize("n_inputs", [0, kept.MAX_COPIES - 1, kept.MAX_COPIES])
def test_a_stack_is_a_kept_block_with_at_most_max_copies_rows_copied_in(n_inputs):
    cf = cos_product(n_inputs, 8)
    src = cf.source()
    copies = 1 + n_inputs  # x and the arguments
    assert "np.multiply.reduce(" in src
    assert ("stacked((" in src) == (copies > kept.MAX_COPIES), src
    found = re.findall(r"_k\d+\[\d+\] = (?:x|ps_\d+)\n", src)
    assert len(found) == (copies if copies <= kept.MAX_COPIES else 0), src
    check_program(cf, 1 + n_inputs, 8)


def test_factors_of_at_most_max_bytes_are_kept_more_are_a_new_array():
    limit = kept.MAX_BYTES // (13 * 8)  # 13 factors of float64
    for size, new in ((limit, False), (limit + 1, True)):
        cf = cos_product(0, size)
        src = cf.source()
        assert ("np.empty(" in src) == new, src
        check_program(cf, 1, size)


def test_outputs_and_what_views_read_are_never_kept():
    @tf.function(input_signature=[tf.TensorSpec([4, 4], tf.float32)])
    def f(x):
        terms = [tf.sin(x * float(k + 2)) for k in range(8)]
        returned = terms[1]
        viewed = tf.transpose(terms[2])  # a view of a kept buffer could outlive the call
        acc = terms[0]
        for t in terms[3:]:
            acc = acc + t
        return acc + viewed, returned

    cf = f.get_concrete_function()
    src = cf.source()
    assert n_kept(src) == 5, src  # terms 3..7
    xs = [special((4, 4), "float32", s) for s in range(3)]
    with np.errstate(all="ignore"):
        first = [tuple(r.numpy() for r in cf(tf.constant(x))) for x in xs]
        keep = [tuple(a.copy() for a in r) for r in first]
        for x in xs:
            cf(tf.constant(x * 3))
    for r, k in zip(first, keep):  # later calls did not write into returned arrays
        for a, b in zip(r, k):
            assert_same_bits(a, b)
    with np.errstate(all="ignore"):
        for x, r in zip(xs, first):
            want = evaluate(cf.program, [tf.constant(x)])[0]
            for a, w in zip(r, want):
                assert_same_bits(a, w.numpy())


def test_concurrent_calls_each_take_their_own_set():
    cf = sum_of_scaled(12, 64, "float64")
    assert n_kept(cf.source()) == 11
    xs = [special((64,), "float64", s) for s in range(8)]
    with np.errstate(all="ignore"):
        want = [evaluate(cf.program, [tf.constant(x)])[0][0].numpy() for x in xs]
    errors = []

    def worker(j):
        try:
            for k in range(300):
                i = (j + k) % len(xs)
                with np.errstate(all="ignore"):
                    got = cf._fn(xs[i])
                assert_same_bits(got, want[i])
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(j,)) for j in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch inside calls
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors
    pool = cf._fn.__globals__["_keep0"]
    assert 1 <= len(pool) <= 4  # a set per concurrent call at most


def test_a_call_that_raises_leaves_later_calls_exact():
    cf = sum_of_scaled(8, 16)
    x = special((16,), "float32", 1)
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        cf._fn(x)  # inf * 2 is fine, sin(inf) is invalid: raises after taking its set
    check_calls(cf, [x, special((16,), "float32", 2)])
