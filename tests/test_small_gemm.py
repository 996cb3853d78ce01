"""Row-blocked GEMMs (``util/small_gemm.py``): a tall matrix times a small one runs as GEMMs of
a few rows (64, fewer for larger right matrices) where NumPy's BLAS has a small-matrix path. The rule decides the bits, so eager
execution, generated code and the IR interpreter must take it alike, on both sides of every
threshold of its cost model, with NaN, inf and -0.0, and for every layout."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.primitives import linalg
from tapegrad.testing import assert_same_bits
from tapegrad.util import small_gemm
from tapegrad.util.small_gemm import blocked_shape, matmul_rows, row_block
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
    ((8192, 16, 16), True),   # k*n = 256: blocks of 64 rows hold MIN_BLOCK_WORK
    ((8192, 15, 17), True),   # 255: blocks of 128 rows
    ((16384, 4, 16), True),   # 64: blocks of 256 rows
    ((40000, 4, 8), True),    # 32 = MIN_KN: blocks of 512 rows, a tail of 64
    ((40000, 3, 10), False),  # 30: past the narrowest measured
    ((1000, 128, 64), True),  # blocks of 64 rows (64 * 8192 < SMALL_GEMM)
    ((1000, 256, 64), True),  # blocks of 32 rows (64 * 16384 > SMALL_GEMM), a tail of 8
    ((100, 1000, 125), True),  # k*n = 125,000: blocks of MIN_ROWS = 8 rows are small GEMMs
    ((100, 1001, 125), False),  # 125,125: no block of 8 rows is
    ((160, 1024, 32), True),  # k = MAX_K (blocks of 16 rows)
    ((160, 1025, 32), False),  # k past MAX_K
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
    """The rule's numbers, written out: one GEMM per block of rows and one for the tail."""
    m, k = a.shape
    rows = row_block(k, b.shape[1])
    parts = [a[i:i + rows] @ b for i in range(0, m - m % rows, rows)]
    if m % rows:
        parts.append(a[m - m % rows:] @ b)
    return np.concatenate(parts)


def _by_the_rules(a, b):
    """The numbers of the rule that applies to 2-D ``a @ b`` (``b`` C-ordered), written out."""
    m, k = a.shape
    if small_gemm.inner_blocked(a, b):
        return _by_inner_blocks(a, b)
    return _by_blocks(a, b) if small_gemm.row_blocked(a, b) else a @ b


@pytest.mark.parametrize("shape, blocked", SHAPES)
def test_the_cost_model_on_both_sides_of_each_threshold(shape, blocked, small_path):
    assert blocked_shape(*shape, np.float32) is blocked
    assert blocked_shape(*shape, np.float64) is blocked
    assert not blocked_shape(*shape, np.int64)  # floats only
    assert not blocked_shape(*shape, np.complex64)


# the widest right matrix measured (``MAX_N``): float32 up to 1,024 columns, float64 up to 128
WIDTHS = [((200, 64, 128), True, True), ((200, 64, 129), True, False),
          ((20, 64, 1024), True, False), ((20, 64, 1025), False, False)]


@pytest.mark.parametrize("shape, blocked32, blocked64", WIDTHS)
def test_the_widest_right_matrix_of_each_dtype(shape, blocked32, blocked64, small_path):
    assert blocked_shape(*shape, np.float32) is blocked32
    assert blocked_shape(*shape, np.float64) is blocked64
    for dtype in ("float32", "float64"):
        a, b = _operands(*shape, dtype)
        with np.errstate(invalid="ignore"):
            want = _by_blocks(a, b) if blocked_shape(*shape, dtype) else a @ b
            assert_same_bits(linalg.matmul_2d(a, b), want)


def test_the_shape_rules_answer_from_a_bounded_table(monkeypatch):
    """Every GEMM past SMALL_GEMM asks the shape rules; their answers come from a table,
    keyed with HAS_SMALL_PATH too, cleared when it fills, and always the rule's own."""
    monkeypatch.setattr(small_gemm, "_DECIDED", {})
    monkeypatch.setattr(small_gemm, "HAS_SMALL_PATH", True)
    assert blocked_shape(2048, 64, 64, np.float32)
    monkeypatch.setattr(small_gemm, "HAS_SMALL_PATH", False)
    assert not blocked_shape(2048, 64, 64, np.float32)
    assert not small_gemm.inner_blocked_shape(32, 2048, 32, np.float32)
    monkeypatch.setattr(small_gemm, "HAS_SMALL_PATH", True)
    monkeypatch.setattr(small_gemm, "_MAX_DECIDED", 4)
    for m in range(300, 320):
        blocked_shape(m, 64, 64, np.float32)
    assert len(small_gemm._DECIDED) <= 4
    for shape, _ in SHAPES + INNER_SHAPES:
        for rule in (blocked_shape, small_gemm.inner_blocked_shape):
            for dtype in (np.float32, np.float64, np.int64):
                assert rule(*shape, dtype) is rule.__wrapped__(*shape, dtype)
                assert rule(*shape, dtype) is rule.__wrapped__(*shape, dtype)  # remembered


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
        if row_block(shape[1], shape[2]) is not None:
            assert_same_bits(matmul_rows(a, b), _by_blocks(a, b))
        out = np.empty_like(want)
        assert linalg.matmul_2d(a, b, out) is out
        assert_same_bits(out, want)
        # a transposed (F-ordered) left operand is no C-ordered one: the plain GEMM
        assert_same_bits(linalg.matmul_2d(np.asfortranarray(a), b), np.asfortranarray(a) @ b)


@pytest.mark.parametrize("shape, blocked", SHAPES[:9:2] + SHAPES[8:9] + SHAPES[-2:])
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


# -- inner blocks: x.T @ g summed over blocks of the inner axis ------------------------------
# (m, k, n) on both sides of each threshold; True where the rule blocks the inner axis
INNER_SHAPES = [
    ((32, 1024, 32), True),    # k = 2 blocks of inner_block(32, 32) = 512 (2^20 > SMALL_GEMM)
    ((32, 1023, 32), False),   # one block and a tail: the GEMM is as good as small already
    ((32, 2048, 32), True),    # m * n = 1024 = MIN_MN
    ((31, 2048, 33), False),   # 1023: a small result loses
    ((64, 2048, 64), True),    # 4096 = MAX_MN (blocks of 128)
    ((64, 2048, 65), False),   # 4160: a large result loses
    ((64, 4096, 64), True),    # m * k * n = 2^24 = MAX_WORK
    ((64, 4097, 64), False),   # past MAX_WORK: the GEMM keeps its BLAS threads
    ((32, 1100, 32), True),    # two blocks and a tail of 76
    ((48, 2000, 48), True),    # blocks of 256 (48 * 48 * 512 > SMALL_GEMM), a tail of 208
    ((4, 2048, 256), True),    # skinny results
    ((256, 2048, 4), True),
]


def _inner_operands(m, k, n, dtype, seed=0):
    """``a`` F-ordered (the transpose of a C-ordered (k, m) array, as ``x.T``), ``b`` C-ordered."""
    x, b = _operands(k, m, n, dtype, seed)[0], _operands(k, n, 1, dtype, seed + 1)[0]
    return x.T, b


def _by_inner_blocks(a, b):
    """The rule's numbers, written out: a GEMM per block of inner indices, summed in order,
    plus the tail's GEMM."""
    m, k = a.shape
    kb = small_gemm.inner_block(m, b.shape[1])
    k0 = k - k % kb
    out = a[:, :kb] @ b[:kb]
    for i in range(kb, k0, kb):
        out = out + a[:, i:i + kb] @ b[i:i + kb]
    if k0 < k:
        out = out + a[:, k0:] @ b[k0:]
    return out


@pytest.mark.parametrize("shape, blocked", INNER_SHAPES)
def test_inner_blocks_cost_model_on_both_sides_of_each_threshold(shape, blocked, small_path):
    assert small_gemm.inner_blocked_shape(*shape, np.float32) is blocked
    assert small_gemm.inner_blocked_shape(*shape, np.float64) is blocked
    assert not small_gemm.inner_blocked_shape(*shape, np.int64)  # floats only
    assert not small_gemm.inner_blocked_shape(*shape, np.complex64)
    assert not (blocked and blocked_shape(*shape, np.float32))  # never both rules


def test_no_inner_blocks_without_the_small_path(monkeypatch):
    monkeypatch.setattr(small_gemm, "HAS_SMALL_PATH", False)
    assert not small_gemm.inner_blocked_shape(32, 2048, 32, np.float32)
    a, b = _inner_operands(32, 2048, 32, np.float32)
    with np.errstate(invalid="ignore"):
        assert_same_bits(linalg.matmul_2d(a, b), a @ b)


@pytest.mark.parametrize("shape, blocked", INNER_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eager_inner_blocked_matmul_is_the_rule_written_out(shape, blocked, dtype, small_path):
    a, b = _inner_operands(*shape, dtype)
    assert a.flags.f_contiguous and b.flags.c_contiguous
    with np.errstate(invalid="ignore", over="ignore"):
        want = _by_inner_blocks(a, b) if blocked else a @ b
        if blocked:
            assert_same_bits(small_gemm.matmul_inner(a, b), want)
        assert_same_bits(tf.matmul(a, b).numpy(), want)
        out = np.empty_like(want)
        assert linalg.matmul_2d(a, b, out) is out
        assert_same_bits(out, want)
        # a C-ordered left operand: blocks of columns, the same rule
        c = np.ascontiguousarray(a)
        want_c = _by_inner_blocks(c, b) if blocked else _by_the_rules(c, b)
        assert_same_bits(linalg.matmul_2d(c, b), want_c)
        if blocked:
            assert_same_bits(small_gemm.matmul_inner(c, b), want_c)
        # neither C- nor F-ordered (a strided view): copied into C order first, then the rule
        s = np.repeat(c, 2, axis=1)[:, ::2]
        assert not s.flags.forc
        assert_same_bits(linalg.matmul_2d(s, b), want_c)


def test_inner_blocks_of_zeros_nan_and_inf(small_path):
    """-0.0 products, NaN and inf in one block reach the sum as they reach the rule's GEMMs."""
    a, b = _inner_operands(32, 1100, 32, np.float32)
    a = a.copy(order="F")
    a[3, :] = -0.0
    a[4, 700] = np.inf
    b[5, :] = np.nan
    with np.errstate(invalid="ignore", over="ignore"):
        assert_same_bits(linalg.matmul_2d(a, b), _by_inner_blocks(a, b))


@pytest.mark.parametrize("m", [2048, 1000, 511])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_weight_gradients_compiled_cached_and_interpreted_have_eager_bits(m, dtype, small_path):
    """A dense network's weight gradients (x.T @ g: inner blocks at m = 2048 and 1000 rows,
    plain at 511), eager, compiled (twice), by the derivative cache and interpreted."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((m, 32)).astype(dtype)
    w1 = (rng.standard_normal((32, 32)) / 6).astype(dtype)
    w2 = (rng.standard_normal((32, 32)) / 6).astype(dtype)
    x[5, 3] = np.nan
    x[6, :] = -0.0
    assert small_gemm.inner_blocked_shape(32, m, 32, dtype) is (m >= 1024)

    def f(x, w1, w2):  # x is an argument: x.T in generated code is a transposed view
        with tf.GradientTape() as t:
            t.watch([w1, w2])
            h = tf.tanh(tf.matmul(x, w1))
            loss = tf.reduce_sum(tf.tanh(tf.matmul(h, w2)))
        return t.gradient(loss, [w1, w2])

    with np.errstate(all="ignore"):
        args = [tf.constant(v) for v in (x, w1, w2)]
        want = [v.numpy() for v in f(*args)]
        for _ in range(3):  # the third eager gradient is the derivative cache's program
            for u, v in zip(f(*args), want):
                assert_same_bits(u.numpy(), v)
        cf = tf.function(f)
        for _ in range(2):
            for u, v in zip(cf(x, w1, w2), want):
                assert_same_bits(u.numpy(), v)
        for u, v in zip(interpret(trace(f, x, w1, w2), x, w1, w2), want):
            assert_same_bits(u, v)
        if m >= 1024:  # and the rule is what ran
            g = tf.tanh(tf.matmul(args[0], args[1])).numpy()
            assert small_gemm.inner_blocked(g.T, g)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_constant_input_transposed_in_compiled_code_takes_the_rule(dtype, small_path):
    """A captured input (the data of a training step): its transpose is a C-ordered constant
    of the compiled program, which the rule blocks by columns; eager bits all the same."""
    rng = np.random.default_rng(8)
    x = tf.constant(rng.standard_normal((2048, 32)).astype(dtype))
    w = tf.constant((rng.standard_normal((32, 32)) / 6).astype(dtype))

    def f(w):
        with tf.GradientTape() as t:
            t.watch(w)
            loss = tf.reduce_mean(tf.tanh(tf.matmul(x, w)) ** 2)
        return t.gradient(loss, w)

    want = f(w).numpy()
    cf = tf.function(f)
    for _ in range(2):
        assert_same_bits(cf(w).numpy(), want)
    g = np.ones((2048, 32), dtype)
    xt = np.ascontiguousarray(x.numpy().T)
    assert small_gemm.inner_blocked(xt, g)
    with np.errstate(all="ignore"):
        assert_same_bits(linalg.matmul_2d(xt, g), _by_inner_blocks(xt, g))
