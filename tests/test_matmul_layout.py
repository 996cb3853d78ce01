"""Matmuls compute the same bits eagerly, in generated code and in the IR interpreter,
whatever their operands' memory layouts (``linalg.matmul_2d``: OpenBLAS's rounding depends
on the layout, so one rule, decided at run time, lays the operands out in both)."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.primitives.linalg import matmul_2d
from tapegrad.testing import assert_same_bits
from test_codegen import interpret, trace

UN = [tf.sin, tf.tanh, tf.exp, tf.square, lambda v: -v, tf.abs, lambda v: v * 1.5,
      lambda v: v + 0.25, tf.nn.relu, tf.sigmoid]


@pytest.fixture(autouse=True)
def _eager_blas_threads(monkeypatch):
    # util/blas.py probes one BLAS thread against the default in compiled code, and
    # OpenBLAS rounds some shapes differently on one thread: keep that out of these tests
    monkeypatch.setenv("TAPEGRAD_BLAS_THREADS", "default")


def _view(x, kind, n):
    """``x`` (n, n) seen through one of the views generated code meets."""
    if kind == 0:
        return x
    if kind == 1:
        return tf.transpose(x)
    if kind == 2:  # a broadcast row: a zero stride
        return tf.broadcast_to(x[:1], (n, n))
    if kind == 3:
        return tf.reshape(tf.reshape(x, (-1,)) * 0.5, (n, n))
    return tf.transpose(tf.transpose(x) * 1.0001)  # a new F-ordered array


def _random_program(seed):
    """A random program of matmuls of views (transposes, broadcasts, slices), inner size 1,
    (1 x n) @ (n x 1), row sums and elementwise ops on (n, n) matrices."""
    rng = np.random.default_rng(seed)
    ops = [(int(rng.integers(0, 7)), int(rng.integers(0, 1 << 30)))
           for _ in range(rng.integers(4, 16))]

    def f(a, b):
        n = a.shape[0]
        pool = [a, b]
        for kind, r in ops:
            rr = np.random.default_rng(r)
            x, y = (pool[rr.integers(len(pool))] for _ in range(2))
            if kind <= 1:
                z = tf.matmul(_view(x, rr.integers(5), n), _view(y, rr.integers(5), n))
            elif kind == 2:
                k = int(rr.integers(1, n + 1))  # strided slices; k = 1: an outer product
                z = tf.matmul(x[:, :k], y[:k, :])
            elif kind == 3:  # a row times a column, one of them broadcast
                z = x * tf.matmul(tf.broadcast_to(y[:1, :1], (1, n)), x[:, 1:2] if n > 1 else x)
            elif kind == 4:
                z = x + tf.reduce_sum(y, axis=0, keepdims=True)
            else:
                z = UN[rr.integers(len(UN))](x)
            pool.append(z)
        return pool[-1]
    return f


def _inputs(seed, dtype):
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(1, 10))
    a, b = (rng.standard_normal((n, n)).astype(dtype) for _ in range(2))
    if seed % 3 == 0:  # special values
        a.flat[rng.integers(a.size)] = np.nan
        b.flat[rng.integers(b.size)] = -0.0
        a.flat[rng.integers(a.size)] = np.inf
    return a, b


@pytest.mark.parametrize("seed", range(40))
def test_random_matmuls_of_views_have_eager_bits_compiled_and_interpreted(seed):
    dtype = "float32" if seed % 2 else "float64"
    f = _random_program(seed)
    a, b = _inputs(seed, dtype)

    def grad(a, b):
        with tf.GradientTape() as t:
            t.watch([a, b])
            loss = tf.reduce_sum(tf.tanh(f(a, b)))
        return t.gradient(loss, [a, b], unconnected_gradients="zero")

    with np.errstate(all="ignore"):
        want = [f(tf.constant(a), tf.constant(b))] + grad(tf.constant(a), tf.constant(b))
        cf, cg = tf.function(f), tf.function(grad)
        for _ in range(2):  # the first call, and a call of the cached code
            got = [cf(a, b)] + cg(a, b)
            for u, v in zip(got, want):
                assert_same_bits(u.numpy(), v.numpy())
        p = trace(grad, a, b)
        for u, v in zip(interpret(p, a, b), want[1:]):
            assert_same_bits(u, v.numpy())


def test_the_fuzzed_second_order_program_of_seed_112():
    """A 12-op program whose generated weight gradient multiplied by a broadcast (zero
    stride) view where eager multiplied by a new array (the fuzz of random second-order
    programs, seed 112)."""
    s = 112
    rng = np.random.default_rng(s)
    n, m = int(rng.integers(1, 40)), int(rng.integers(1, 9))
    ops = [(int(rng.integers(0, 9)), int(rng.integers(0, 1 << 30)))
           for _ in range(rng.integers(5, 40))]

    def f(a, b, w):
        pool = [a, b]
        for kind, r in ops:
            rr = np.random.default_rng(r)
            x, y = pool[rr.integers(len(pool))], pool[rr.integers(len(pool))]
            if kind <= 2:
                z = UN[rr.integers(len(UN))](x)
            elif kind == 3:
                z = x * y if x.shape == y.shape else x * 2.0
            elif kind == 4:
                z = x + y if x.shape == y.shape else x - 1.0
            elif kind == 5:
                z = tf.matmul(x, w) if x.shape[-1] == m else tf.matmul(tf.transpose(x), x)
                z = x if z.shape != (n, m) else z
            elif kind == 6:
                z = tf.transpose(tf.transpose(x) * 1.0001) if x.shape == (n, m) else x
            elif kind == 7:
                z = tf.reshape(tf.reshape(x, (-1,)) * 0.5, x.shape)
            else:
                z = tf.concat([x[:, :1] * 3.0, x[:, 1:]], axis=1) if x.shape[1] > 1 else x
            pool.append(z)
        outs = pool[-3:]
        return [tf.reduce_sum(o, axis=0) for o in outs] + [outs[-1]]

    def g(a, b, w):
        with tf.GradientTape() as t2:
            t2.watch([a, w])
            with tf.GradientTape() as t1:
                t1.watch([a, b, w])
                loss = tf.add_n([tf.reduce_sum(o * o) for o in f(a, b, w)])
            ga, gb, gw = t1.gradient(loss, [a, b, w], unconnected_gradients="zero")
            l2 = tf.reduce_sum(ga * ga) + tf.reduce_sum(tf.tanh(gw))
        return [ga, gb, gw] + t2.gradient(l2, [a, w], unconnected_gradients="zero")

    r = np.random.default_rng(1000 * s + 1)
    args = [tf.constant(r.standard_normal(shape).astype(np.float32))
            for shape in ((n, m), (n, m), (m, m))]
    cg = tf.function(g)
    cg(*args)
    with np.errstate(all="ignore"):
        for u, v in zip(cg(*args), g(*args)):
            assert_same_bits(u.numpy(), v.numpy())


def _layouts(x):
    """The same values as C, F, strided and (for a single row) broadcast arrays."""
    wide = np.repeat(x, 2, axis=1)[:, ::2]
    out = [x, np.asfortranarray(x), wide]
    if x.shape[0] > 1 and (x == x[:1]).all():
        out.append(np.broadcast_to(x[:1], x.shape))
    return out


# shapes on both sides of few_rows_large_matrix (rows 2..128, min(W) >= 128), small_matrix
# (4,096 elements) and outer_product (inner size 1), and the vector forms
@pytest.mark.parametrize("m,k,n", [(1, 5, 1), (4, 1, 6), (2, 130, 128), (129, 130, 128),
                                   (3, 64, 64), (3, 64, 65), (16, 8, 8), (1, 33, 64)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_user_inputs_of_any_layout_give_eager_bits(m, k, n, dtype):
    rng = np.random.default_rng(m * k * n)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    a[0, 0], b[-1, -1] = -0.0, np.inf
    rows = np.broadcast_to(a[:1], a.shape)  # a zero-stride operand
    f = tf.function(lambda a, b: tf.matmul(a, b))
    ft = tf.function(lambda a, bt: tf.matmul(a, tf.transpose(bt)))
    with np.errstate(all="ignore"):
        for x in _layouts(a) + [rows]:
            for y in _layouts(b):
                want = tf.matmul(x, y).numpy()
                assert_same_bits(want, matmul_2d(np.ascontiguousarray(x) if not
                                                 x.flags.forc else x, y))
                assert_same_bits(f(x, y).numpy(), want)
                yt = np.ascontiguousarray(y.T) if y.flags.c_contiguous else np.asfortranarray(y.T)
                assert_same_bits(ft(x, yt).numpy(), tf.matmul(x, tf.transpose(yt)).numpy())


def test_a_view_and_a_copy_of_the_same_values_give_the_same_bits():
    """The rule's first step: a broadcast or strided operand is copied into C order, so it
    multiplies as the same values in a new array do (NumPy's own loop, or BLAS on a strided
    layout, round otherwise: (1 x n) @ (n x 1) with a broadcast row did 71% of the time)."""
    rng = np.random.default_rng(5)
    for n in (3, 17, 64, 130):
        row = rng.standard_normal((1, n)).astype("float32")
        col = rng.standard_normal((n, 1)).astype("float32")
        bcast = np.broadcast_to(row, (4, n))
        assert_same_bits(matmul_2d(bcast, col), np.ascontiguousarray(bcast) @ col)
        strided = np.repeat(col, 3, axis=0)[::3]
        assert_same_bits(matmul_2d(row, strided), row @ np.ascontiguousarray(strided))


def test_an_outer_product_is_the_broadcast_multiply_with_its_signed_zeros_and_nans():
    """Inner size 1: ``a * b`` (-1 * 0 is -0.0 and inf * 0 NaN there, where a BLAS call
    that adds products to 0.0 gives 0.0), the same eagerly and in generated code, for any
    layout."""
    a = np.array([[-1.0], [np.inf], [2.0]])
    b = np.array([[0.0, -0.0, 3.0]])
    f = tf.function(lambda a, b: tf.matmul(a, b))
    for x in (a, np.broadcast_to(a[:1], (3, 1)), np.asfortranarray(a)):
        want = x * b
        assert_same_bits(tf.matmul(x, b).numpy(), want)
        assert_same_bits(f(x, b).numpy(), want)
