"""Recycled memory for large results (util/buffers.py): never a block in use, the same values
as NumPy's own allocation on both sides of the size threshold, eager and generated code."""
import gc

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.primitives import families
from tapegrad.util import buffers

BIG = buffers.MIN_BYTES // 4  # float32 elements of the smallest recycled result


@pytest.fixture
def small_threshold(monkeypatch):
    """Recycle from 4 KiB, so that the dtype and value cases stay cheap."""
    monkeypatch.setattr(buffers, "MIN_BYTES", 4096)
    monkeypatch.setattr(families, "_SMALL", 4096 // 16)
    return 4096


def _recycled(a):
    return isinstance(getattr(a, "base", None), buffers._Lease)


def test_a_block_in_use_is_never_handed_out_and_a_dead_one_comes_back(small_threshold):
    a = buffers.empty((1024,), np.float32)
    view = a[::2]
    del a
    b = buffers.empty((1024,), np.float32)  # the view keeps the first block in use
    assert not np.shares_memory(b, view)
    addr = view.base.ctypes.data if view.base is not None else None
    del view
    gc.collect()
    c = buffers.empty((1024,), np.float32)
    assert c.ctypes.data == addr
    assert buffers.empty((1000,), np.float32) is None  # 4000 bytes: below the threshold
    assert buffers.empty((1024,), object) is None


def test_idle_memory_is_bounded(small_threshold):
    buffers.set_idle_limit(4096)
    try:
        blocks = [buffers.empty((1024,), np.float32) for _ in range(3)]
        del blocks
        assert buffers.idle_bytes() <= 4096
        buffers.set_idle_limit(0)
        assert buffers.idle_bytes() == 0
        a = buffers.empty((1024,), np.float32)
        del a
        assert buffers.idle_bytes() == 0
        with pytest.raises(ValueError):
            buffers.set_idle_limit(-1)
    finally:
        buffers.set_idle_limit(None)


def test_a_block_held_by_a_cycle_comes_back_only_when_collected(small_threshold):
    a = buffers.empty((1024,), np.float32)
    addr = a.ctypes.data
    cycle = [a]
    cycle.append(cycle)
    del a, cycle
    b = buffers.empty((1024,), np.float32)
    assert b.ctypes.data != addr
    gc.collect()
    c = buffers.empty((1024,), np.float32)
    assert c.ctypes.data == addr


def _values(dtype, n):
    if np.dtype(dtype).kind == "f":
        base = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.25, 6e4], dtype)
    else:
        info = np.iinfo(dtype)
        base = np.array([info.max, info.min, 0, -1 if info.min else 1, 7, 3, 2, 1], dtype)
    return np.resize(base, n)


CASES = [("sin", "float32"), ("exp", "float64"), ("tanh", "float16"), ("neg", "int32"),
         ("abs", "int8"), ("sqrt", "int16")]


@pytest.mark.parametrize("n", [1023, 1024, 5000], ids=["below", "at", "above"])
@pytest.mark.parametrize("name,dtype", CASES)
def test_eager_unary_results_equal_numpy_on_both_sides(small_threshold, name, dtype, n):
    x = _values(dtype, n)
    prim = PRIMITIVES[name]
    with np.errstate(all="ignore"):
        got, want = prim.impl(x), prim.impl.wrapped(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert _recycled(got) == (got.nbytes >= small_threshold)
    assert not np.shares_memory(got, x)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "pow"])
@pytest.mark.parametrize("other", ["array", "row", "f64 scalar", "python float", "int array"])
def test_eager_binary_results_equal_numpy(small_threshold, name, other):
    x = _values("float32", 2048).reshape(8, 256)
    y = {"array": _values("float32", 2048).reshape(8, 256)[::-1],
         "row": np.linspace(-2, 2, 256, dtype="float32"), "f64 scalar": np.float64(1.5),
         "python float": 1.5, "int array": np.arange(2048, dtype="int64").reshape(8, 256)}[other]
    prim = PRIMITIVES[name]
    # pow's impl is primitives/power.py's exact_power: NumPy's power (no exponent here is
    # one it computes by another operation), recycled
    plain_impl = np.power if name == "pow" else prim.impl.wrapped
    with np.errstate(all="ignore"):
        for a, b in ((x, y), (y, x)):
            got, want = prim.impl(a, b), plain_impl(a, b)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want))
            plain = type(a) is not np.ndarray and not isinstance(a, np.generic) or (
                type(b) is not np.ndarray and not isinstance(b, np.generic))
            assert _recycled(got) == (not plain)


def test_integer_overflow_and_subclasses_keep_numpy_behaviour(small_threshold):
    big = np.full(1024, np.iinfo(np.int32).max, np.int32)
    np.testing.assert_array_equal(PRIMITIVES["add"].impl(big, big), big + big)
    m = np.ma.masked_array(np.ones(2048, "float32"), mask=np.arange(2048) % 2 == 0)
    out = PRIMITIVES["mul"].impl(m, np.ones(2048, "float32"))
    assert isinstance(out, np.ma.MaskedArray)  # the subclass's own ufunc path


def test_large_eager_gradient_matches_the_small_one(small_threshold):
    """A tape over recycled results: the same gradient as NumPy's, and no block reused
    while the tape holds it."""
    x0 = np.linspace(-2, 2, 4096, dtype="float32")

    def grad(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.reduce_sum(tf.exp(tf.tanh(tf.sin(x) * 1.5 + 0.25)))
        return g.gradient(y, x)
    got = [grad(tf.constant(x0)).numpy() for _ in range(3)]
    s = np.sin(x0) * np.float32(1.5) + np.float32(0.25)
    t = np.tanh(s)
    want = np.exp(t) * (1 - t * t) * np.float32(1.5) * np.cos(x0)
    for g in got:
        np.testing.assert_allclose(g, want, rtol=1e-5)
        np.testing.assert_array_equal(g, got[0])


@pytest.mark.parametrize("n", [BIG - 1, BIG], ids=["below", "at"])
def test_generated_code_recycles_only_large_results(n):
    f = tf.function(lambda x: tf.sin(x) * 2.0 + x)
    x = tf.constant(np.linspace(-3, 3, n, dtype="float32"))
    src = f.get_concrete_function(x).source()
    assert ("recycled(" in src) == (n * 4 >= buffers.MIN_BYTES), src
    xv = x.numpy()
    np.testing.assert_array_equal(f(x).numpy(), np.sin(xv) * np.float32(2.0) + xv)


def test_threads_never_share_a_block(small_threshold):
    import threading
    clashes = []

    def work(k):
        for i in range(300):
            a = buffers.empty((1024,), np.float32)
            a[:] = k
            b = buffers.empty((1024,), np.float32)
            b[:] = -k
            if np.shares_memory(a, b) or not (a == k).all():
                clashes.append((k, i))
    threads = [threading.Thread(target=work, args=(k + 1,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert clashes == []


def test_a_recycled_array_alive_at_exit_is_quiet():
    import subprocess
    import sys
    code = ("import numpy as np, tapegrad as tf; from tapegrad.util import buffers; "
            "keep = buffers.empty((buffers.MIN_BYTES // 4,), np.float32); keep[:] = 1; "
            "cycle = [buffers.empty((buffers.MIN_BYTES // 4,), np.float32)]; "
            "cycle.append(cycle)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stderr == "", out.stderr
