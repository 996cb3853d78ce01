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


def test_w6_chain_gradient_keeps_its_forward_results_and_stays_exact():
    cf = chain_gradient(100, 16)  # W6's program
    assert n_kept(cf.source()) == 40  # each sin and + 0.1
    check_calls(cf, [special((16,), "float32", s) * 0.5 for s in range(4)])
    a = cf(tf.constant(np.ones(16, "float32"))).numpy()
    b = cf(tf.constant(np.ones(16, "float32"))).numpy()
    assert not np.shares_memory(a, b)


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
