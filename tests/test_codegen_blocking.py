"""Cache blocking in code generation: chains over a batch axis become a loop over its blocks.

The thresholds (``BLOCK_MIN_BYTES``, ``BLOCK_BYTES``) are lowered so that small arrays give
the loops the benchmark-sized ones get; every blocked program is compared with the
interpreter.
"""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.trace import blocking
from tapegrad.trace.codegen import compile_program, generate
from tapegrad.trace.tracer import GraphBuilder, tracing
from tapegrad.core.tensor import Tensor
from tapegrad.ir import check, evaluate, optimize

TOL = {"float64": dict(rtol=1e-12, atol=1e-12), "float32": dict(rtol=1e-5, atol=1e-5)}


def trace(fn, *arrays):
    b = GraphBuilder("f")
    with tracing(b):
        xs = [b.add_input(a.shape, a.dtype, f"x{k}") for k, a in enumerate(arrays)]
        out = fn(*xs)
        return check(optimize(b.build(list(out) if isinstance(out, (list, tuple)) else [out])))


def run_both(fn, *arrays):
    """(generated results, interpreter results, source) of ``fn`` traced on ``arrays``."""
    program = trace(fn, *arrays)
    compiled, src = compile_program(program)
    got = compiled(*arrays)
    got = list(got) if isinstance(got, tuple) else [got]
    want, _ = evaluate(program, [Tensor._wrap(a) for a in arrays])
    return got, [np.asarray(w._value) for w in want], src


def check_blocked(fn, *arrays, expect=("cache-blocked loop",), dtype="float64"):
    """Compile ``fn``, check that its source holds ``expect`` and that it computes what the
    interpreter does; returns the source."""
    got, want, src = run_both(fn, *arrays)
    for text in expect:
        assert text in src
    assert_same(got, want, dtype)
    return src


def assert_same(got, want, dtype):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, **TOL[dtype])


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocking for any intermediate of 512 bytes or more; ``set_block(b)``: b batch rows a block."""
    monkeypatch.setattr(blocking, "BLOCK_MIN_BYTES", 512)

    def set_block(row_bytes, rows):
        monkeypatch.setattr(blocking, "BLOCK_BYTES", row_bytes * rows)
    return set_block


def _arrays(rng, dtype, n, m=8, k=12, out=3):
    a = [rng.standard_normal(s).astype(dtype)
         for s in [(m, k), (n, k, k), (m, k), (k, out)]]
    return a


def w3_chain(x, w, d, v):
    """The backward pass of a batch Jacobian: (m,k) @ (n,k,k) * (m,k), merged, @ (k,out)."""
    n, m, k = w.shape[0], x.shape[0], x.shape[1]
    t = tf.reshape(tf.matmul(x, w) * d, (n * m, k))
    return tf.transpose(tf.reshape(tf.matmul(t, v), (n, m, v.shape[1])), (1, 0, 2))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("n, rows", [(16, 1), (16, 4), (7, 2), (7, 3), (5, 4), (2, 1)])
def test_blocked_chain_equals_interpreter(small_blocks, dtype, n, rows):
    rng = np.random.default_rng(n * 10 + rows)
    arrays = _arrays(rng, dtype, n)
    small_blocks(8 * 12 * np.dtype(dtype).itemsize, rows)
    src = check_blocked(w3_chain, *arrays, expect=(f"in range(0, {n}, {rows}):",), dtype=dtype)
    assert ("min(" in src) == (n % rows != 0)


def test_batch_of_one_is_not_blocked(small_blocks):
    small_blocks(1, 1)
    arrays = _arrays(np.random.default_rng(0), "float64", 1)
    assert "for " not in check_blocked(w3_chain, *arrays, expect=())


def test_block_as_large_as_the_batch_is_not_blocked(small_blocks):
    small_blocks(8 * 12 * 8, 16)
    arrays = _arrays(np.random.default_rng(1), "float64", 16)
    assert "for " not in check_blocked(w3_chain, *arrays, expect=())


def test_batched_operands_are_sliced_and_scalars_broadcast(small_blocks):
    """An operand with the batch axis is cut into blocks; a scalar and a row are shared."""
    small_blocks(8 * 12 * 8, 2)
    rng = np.random.default_rng(2)
    x, w, d, v = _arrays(rng, "float64", 6)
    e = rng.standard_normal((6, 8, 12))
    bias = rng.standard_normal(12)

    def f(x, w, d, v, e, bias):
        t = (tf.matmul(x, w) * d + e) * 2.0 - bias
        return tf.matmul(tf.tanh(t), v)  # (6, 8, 3): the 3-D product with a 2-D matrix
    check_blocked(f, x, w, d, v, e, bias, expect=("cache-blocked loop", "x4[i:j]"))


def test_value_used_inside_and_outside_the_loop(small_blocks):
    """A value the loop needs later and the caller too is written to a whole array."""
    small_blocks(8 * 12 * 8, 2)
    x, w, d, v = _arrays(np.random.default_rng(3), "float64", 6)

    def f(x, w, d, v):
        u = tf.matmul(tf.tanh(tf.matmul(x, w) * d), v)
        return u, tf.tanh(u) * u
    check_blocked(f, x, w, d, v, expect=("cache-blocked loop", "out=u[i:j]"))


def test_two_chains_in_one_program(small_blocks):
    small_blocks(8 * 12 * 8, 3)
    x, w, d, v = _arrays(np.random.default_rng(4), "float64", 7)

    def f(x, w, d, v):
        y = tf.reduce_sum(w3_chain(x, w, d, v), axis=1)  # (8, 3): over the batch axis
        z = tf.matmul(tf.matmul(tf.reshape(y, (8, 3)) @ tf.ones((3, 12), "float64"), w), v)
        return z + 1.0
    assert check_blocked(f, x, w, d, v).count("cache-blocked loop") == 2


@pytest.mark.parametrize("case", ["contract_batch", "reduce_batch", "move_batch"])
def test_chains_that_need_the_whole_batch_are_not_blocked(small_blocks, case):
    small_blocks(1, 1)
    rng = np.random.default_rng(5)
    x, w, d, v = _arrays(rng, "float64", 6)
    p = rng.standard_normal((5, 6 * 8))

    def f(x, w, d, v, p):
        t = tf.matmul(x, w) * d  # (6, 8, 12): 6 batch rows
        if case == "contract_batch":  # the batch axis is summed over by the product
            return tf.matmul(p, tf.reshape(t, (6 * 8, 12)))
        if case == "reduce_batch":
            return tf.reduce_sum(t, axis=0)
        return tf.matmul(tf.transpose(t, (1, 0, 2)), v)  # the batch axis is no longer first
    assert "for " not in check_blocked(f, x, w, d, v, p, expect=())


def test_default_thresholds_block_the_w3_jacobian_only():
    """The benchmark-sized batch Jacobian gets the loop; the same network on 8 inputs not."""
    rng = np.random.default_rng(6)
    sizes = [32, 256, 256, 16]
    params = [tf.constant(rng.standard_normal(s).astype("float32") * 0.1)
              for a, b in zip(sizes, sizes[1:]) for s in [(a, b), (b,)]]

    @tf.function
    def jac(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x
            for i in range(0, len(params), 2):
                y = tf.matmul(y, params[i]) + params[i + 1]
                if i + 2 < len(params):
                    y = tf.tanh(y)
        return g.batch_jacobian(y, x)

    big = tf.constant(rng.standard_normal((512, 32)).astype("float32"))
    small = tf.constant(rng.standard_normal((8, 32)).astype("float32"))
    src_big = jac.get_concrete_function(big).source()
    src_small = jac.get_concrete_function(small).source()
    assert "cache-blocked loop" in src_big and "for i in range(0, 16, 1):" in src_big
    assert "cache-blocked" not in src_small and "for " not in src_small
    got = jac(big).numpy()
    want = evaluate(jac.get_concrete_function(big).program, [big])[0][0].numpy()
    np.testing.assert_allclose(got, want, **TOL["float32"])


def test_without_blocking_the_source_is_unchanged(monkeypatch):
    """Turning blocking off gives back the straight-line program (the same text elsewhere)."""
    x, w, d, v = _arrays(np.random.default_rng(7), "float32", 4)
    program = trace(w3_chain, x, w, d, v)
    plain = generate(program)[0]
    monkeypatch.setattr(blocking, "BLOCK_MIN_BYTES", 1 << 60)
    assert generate(program)[0] == plain


@pytest.mark.parametrize("rows", [1, 4, 5])
def test_broadcasting_product_starts_a_chain(small_blocks, rows):
    """vmap(jacrev) form: a cotangent times rows of the identity-like constant, batch axis first."""
    small_blocks(4 * 12 * 8, rows)
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((2, 9, 12))
    c, w, v = rng.standard_normal((4, 12)), rng.standard_normal((12, 12)), \
        rng.standard_normal((12, 3))

    def f(x, y, c, w, v):
        t = tf.reshape(tf.reshape(x, (9, 1, 12)) * c, (36, 12)) @ w
        t = tf.reshape(t, (9, 4, 12)) * tf.reshape(y, (9, 1, 12))
        return tf.reshape(tf.reshape(t, (36, 12)) @ v, (9, 4, 3))
    check_blocked(f, x, y, c, w, v, expect=(f"in range(0, 9, {rows}):",))
