"""Row-blocked GEMMs (``util/small_gemm.py``): a tall matrix times a small one runs as GEMMs of
64 rows where NumPy's BLAS has a small-matrix path. The rule decides the bits, so eager
execution, generated code and the IR interpreter must take it alike, on both sides of every
threshold of its cost model, with NaN, inf and -0.0, and for every layout."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.primitives import linalg
from tapegrad.testing import assert_same_bits
from tapegrad.util import small_gemm
from tapegrad.util.small_gemm import ROW_BLOCK, blocked_shape, matmul_rows
from test_codegen import interpret, trace


@pytest.fixture(autouse=True)
def _eager_blas_threads(monkeypatch):
    # compiled code may probe one BLAS thread against the default, and OpenBLAS rounds some
    # shapes differently on one thread (util/blas.py): keep that out of these comparisons
    monkeypatch.setenv("TAPEGRAD_BLAS_THREADS", "default")


@pytest.fixture
def small_path(monkeypatch):
    """The rule on, whatever this machine's BLAS (its numbers are then still one rule's)."""
    monkeypatch.setattr(small_gemm, "HAS_SMALL_PATH", True)


# (m, k, n) on both sides of each threshold; True where the rule blocks the rows
SHAPES = [
    ((245, 64, 64), True),    # m*k*n = 1,003,520: just past SMALL_GEMM
    ((244, 64, 64), False),   # 999,424: OpenBLAS's small path takes it whole
    ((8192, 16, 16), True),   # k*n = 256 = MIN_KN
    ((8192, 15, 17), False),  # 255: too little work a block
    ((1000, 128, 64), True),  # k*n = 8192 = MAX_KN, k = MAX_SIDE
    ((1000, 129, 63), False),  # k past MAX_SIDE
    ((1000, 64, 129), False),  # n past MAX_SIDE
    ((2048, 128, 64), True),  # m*k*n = 2^24 = MAX_WORK
    ((2049, 128, 64), False),  # past MAX_WORK: the GEMM keeps its BLAS threads
    ((1000, 33, 47), True),   # a tail of 1000 % 64 = 40 rows, odd k and n
    ((4096, 4, 4), False),    # 16 < MIN_KN
]


def _operands(m, k, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    a[rng.integers(m), rng.integers(k)] = np.nan
    a[rng.integers(m), rng.integers(k)] = np.inf
    a[rng.integers(m), :] = -0.0  # a row of -0.0: the sign of each zero sum
    b[rng.integers(k), rng.integers(n)] = -0.0
    return a, b


def _by_blocks(a, b):
    """The rule's numbers, written out: one GEMM per 64 rows and one for the tail."""
    m = a.shape[0]
    parts = [a[i:i + ROW_BLOCK] @ b for i in range(0, m - m % ROW_BLOCK, ROW_BLOCK)]
    if m % ROW_BLOCK:
        parts.append(a[m - m % ROW_BLOCK:] @ b)
    return np.concatenate(parts)


@pytest.mark.parametrize("shape, blocked", SHAPES)
def test_the_cost_model_on_both_sides_of_each_threshold(shape, blocked, small_path):
    assert blocked_shape(*shape, np.float32) is blocked
    assert blocked_shape(*shape, np.float64) is blocked
    assert not blocked_shape(*shape, np.int64)  # floats only
    assert not blocked_shape(*shape, np.complex64)


def test_no_blocks_without_the_small_path(monkeypatch):
    monkeypatch.setattr(small_gemm, "HAS_SMALL_PATH", False)
    assert not blocked_shape(2048, 64, 64, np.float32)
    a, b = _operands(2048, 64, 64, np.float32)
    with np.errstate(invalid="ignore"):
        assert_same_bits(linalg.matmul_2d(a, b), a @ b)


@pytest.mark.parametrize("shape, blocked", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eager_matmul_is_the_rule_written_out(shape, blocked, dtype, small_path):
    a, b = _operands(*shape, dtype)
    with np.errstate(invalid="ignore"):
        want = _by_blocks(a, b) if blocked else a @ b
        assert_same_bits(tf.matmul(a, b).numpy(), want)
        assert_same_bits(matmul_rows(a, b), _by_blocks(a, b))
        out = np.empty_like(want)
        assert linalg.matmul_2d(a, b, out) is out
        assert_same_bits(out, want)
        # a transposed (F-ordered) left operand is no C-ordered one: the plain GEMM
        assert_same_bits(linalg.matmul_2d(np.asfortranarray(a), b), np.asfortranarray(a) @ b)


@pytest.mark.parametrize("shape, blocked", SHAPES[:4] + SHAPES[-2:])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_generated_code_and_interpreter_have_eager_bits(shape, blocked, dtype, small_path):
    """Forward and backward (g @ W.T, x.T @ g), of a new matmul result too (generated code
    writes ``a @ b`` for those where no rule applies), compiled, cached and interpreted."""
    m, k, n = shape
    a, b = _operands(m, k, n, dtype)
    w = np.random.default_rng(5).standard_normal((n, n)).astype(dtype)

    def f(a, b, w):
        with tf.GradientTape() as t:
            t.watch([a, b])
            y = tf.matmul(a, b)
            # new matmul results times each other (plain ``a @ b`` in generated code where
            # no rule applies) and times a constant
            z = tf.matmul(y, tf.matmul(w, w)) + tf.matmul(y, w * 0.5)
            loss = tf.reduce_sum(tf.tanh(z))
        return [z] + t.gradient(loss, [a, b])

    with np.errstate(all="ignore"):
        want = [v.numpy() for v in f(tf.constant(a), tf.constant(b), tf.constant(w))]
        cf = tf.function(f)
        for _ in range(2):
            for u, v in zip(cf(a, b, w), want):
                assert_same_bits(u.numpy(), v)
        for u, v in zip(interpret(trace(f, a, b, w), a, b, w), want):
            assert_same_bits(u, v)


def test_a_cache_blocked_loop_leaves_a_row_blocked_matmul_whole(small_path):
    """trace/blocking.py computes a chain a few batch rows at a time; a matmul the rule
    blocks must stay out of its loop (its blocks would be other GEMMs, other bits)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 1, 128)).astype(np.float32)
    c = rng.standard_normal((256, 128)).astype(np.float32)  # (16, 256, 128): a 2 MB chain
    w = rng.standard_normal((128, 32)).astype(np.float32)   # (4096, 128) @ (128, 32): 2^24
    assert blocked_shape(4096, 128, 32, np.float32)

    def f(x):
        h = tf.tanh(x * c)
        return tf.tanh(tf.matmul(tf.reshape(h, (4096, 128)), w))

    cf = tf.function(f)
    got = cf(x)
    assert_same_bits(got.numpy(), f(tf.constant(x)).numpy())
    src = cf.get_concrete_function(tf.TensorSpec(x.shape, tf.float32)).source()
    assert "matmul_2d(" in src
