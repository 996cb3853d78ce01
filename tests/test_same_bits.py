"""Eager execution, generated code, the IR interpreter and the derivative cache give the same
bits on the programs where they once did not.

- Third-order nested tapes (the W9P physics-informed step: u_x and u_xx by nested tapes,
  then the weight gradient). tanh's ``1 - y*y`` is one tensor per output for every pass
  (``primitives/memo.py``), in eager execution and in a trace alike: made fresh in the
  trace, the outer tape summed its cotangents in another order.
- A compiled function differentiated by a tape outside it: the program it runs there has no
  common-subexpression elimination (``ir.derivative_passes``), which would sum a merged
  value's cotangents before its rule instead of after.
"""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.ir import evaluate
from tapegrad.testing import assert_same_bits

NU = 0.01


def mlp_params(sizes, seed, dtype):
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(dtype))
        params.append((0.1 * rng.standard_normal(fan_out)).astype(dtype))
    return [tf.constant(p) for p in params]


def mlp(params, x):
    n = len(params) // 2
    for i in range(n):
        x = tf.matmul(x, params[2 * i]) + params[2 * i + 1]
        if i < n - 1:
            x = tf.tanh(x)
    return x


def pinn_step(params, tx):
    """W9P's step: Burgers' residual u_t + u u_x - nu u_xx, the gradient of its mean square."""
    with tf.GradientTape() as outer:
        outer.watch(params)
        with tf.GradientTape() as t2:
            t2.watch(tx)
            with tf.GradientTape() as t1:
                t1.watch(tx)
                u = mlp(params, tx)
            du = t1.gradient(u, tx)
            u_x = du[:, 1:2]
        u_xx = t2.gradient(u_x, tx)[:, 1:2]
        r = du[:, 0:1] + u * u_x - NU * u_xx
        loss = tf.reduce_mean(r * r)
    return outer.gradient(loss, params)


def assert_all_same_bits(got, want, what):
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want)):
        assert_same_bits(np.asarray(a), np.asarray(b), f"{what}, parameter {k}")


def numpy_of(tensors):
    return [t.numpy() for t in tensors]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("sizes,points", [((2, 1, 1), 1), ((2, 16, 16, 1), 64)])
def test_third_order_pinn_step_eager_equals_compiled(dtype, seed, sizes, points):
    params = mlp_params(sizes, seed, dtype)
    tx = tf.constant(np.random.default_rng(seed + 100).standard_normal((points, 2)).astype(dtype))
    tf.config.set_derivative_cache(False)
    try:
        plain = numpy_of(pinn_step(params, tx))
    finally:
        tf.config.set_derivative_cache(True)
    for k in range(4):  # the third and later outer passes run as the cache's generated code
        assert_all_same_bits(numpy_of(pinn_step(params, tx)), plain, f"eager call {k}")
    f = tf.function(pinn_step)
    assert_all_same_bits(numpy_of(f(params, tx)), plain, "tf.function")
    cf = f.get_concrete_function(params, tx)
    for name, program in [("raw", cf.raw_program), ("optimised", cf.program)]:
        outs, _ = evaluate(program, params + [tx])
        assert_all_same_bits(numpy_of(outs), plain, f"the {name} program, interpreted")


def two_sines(x, a, b):
    return tf.sin(x) * a + tf.sin(x) * b  # CSE would make the two sines one


def gradient_under_a_tape(fn, x, a, b):
    with tf.GradientTape() as t:
        t.watch(x)
        y = fn(x, a, b)
    return t.gradient(y, x).numpy()


def sines_case():
    rng = np.random.default_rng(3)
    x, a, b = (tf.constant(rng.standard_normal(500)) for _ in range(3))
    want = gradient_under_a_tape(two_sines, x, a, b)
    assert not np.array_equal(want, np.cos(x.numpy()) * (a.numpy() + b.numpy()))  # it matters
    return (x, a, b), want


def test_a_compiled_function_under_an_outer_tape_differentiates_as_eager():
    args, want = sines_case()
    assert_same_bits(gradient_under_a_tape(tf.function(two_sines), *args), want,
                     "tf.function under a tape")


def test_a_loaded_function_under_an_outer_tape_differentiates_as_eager(tmp_path):
    args, want = sines_case()
    path = str(tmp_path / "f.tgz")
    tf.saved.save(tf.function(two_sines).get_concrete_function(*args), path)
    assert_same_bits(gradient_under_a_tape(tf.saved.load(path), *args), want,
                     "a loaded program under a tape")


# -- pow: the exponents NumPy's scalar fast path computes exactly, wherever they sit ----------
EXPONENTS = [-1.0, 0.0, -0.0, 0.5, 1.0, 2.0, 3.0, 1.5, -0.5, np.nan, np.inf, -2.0]
BASES = [0.0, -0.0, 1.0, -1.0, 2.5, 1e-3, 7.0, np.inf, -np.inf, np.nan, -3.0, 0.3]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pow_of_an_array_of_exponents_is_the_scalar_calls(dtype):
    rng = np.random.default_rng(5)
    x = np.concatenate([np.array(BASES), 3 * np.abs(rng.standard_normal(500))]).astype(dtype)
    for e in EXPONENTS:
        with np.errstate(all="ignore"):
            want = np.power(x, dtype(e))  # NumPy's scalar path: sqrt, square, 1/x, ... there
            if e == 0.5:  # but pow's (TensorFlow's) +0.0 and +inf at -0.0 and -inf, not sqrt's
                want = np.where(x == -np.inf, dtype(np.inf), want + dtype(0))
            got = tf.pow(tf.constant(x), tf.constant(np.full(x.shape, e, dtype)))
            assert_same_bits(got.numpy(), want, f"dense exponent {e}")
            f = tf.function(lambda x: tf.pow(x, tf.constant(np.full(x.shape, e, dtype))))
            assert_same_bits(f(tf.constant(x)).numpy(), want, f"compiled dense exponent {e}")
            one = [tf.pow(tf.constant(x[i:i + 1]), tf.constant(np.full(1, e, dtype))).numpy()
                   for i in range(12)]
            assert_same_bits(np.concatenate(one), want[:12], f"one element, exponent {e}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("x_shape,y_shape", [((), ()), ((7,), ()), ((7,), (7,)), ((3, 4), (1,)),
                                             ((), (2,))])
def test_vmap_over_the_exponent_is_the_per_example_calls(dtype, x_shape, y_shape):
    rng = np.random.default_rng(6)
    n = len(EXPONENTS)
    xs = (3 * rng.standard_normal((n,) + x_shape)).astype(dtype)
    xs.reshape(n, -1)[:, 0] = np.array(BASES[:n], dtype)
    ys = np.broadcast_to(np.array(EXPONENTS, dtype).reshape((n,) + (1,) * len(y_shape)),
                         (n,) + y_shape).copy()

    def f(x, y):
        with tf.GradientTape() as t:
            t.watch(x)
            z = tf.pow(x, y)
        return z, t.gradient(z, x)

    with np.errstate(all="ignore"):
        loop = [f(tf.constant(xs[i]), tf.constant(ys[i])) for i in range(n)]
        batched = tf.vmap(f)(tf.constant(xs), tf.constant(ys))
    for k, what in enumerate(["x ** y", "d/dx x ** y"]):
        assert_same_bits(batched[k].numpy(), np.stack([r[k].numpy() for r in loop]), what)


def test_vmap_of_nested_tapes_is_the_loop():
    # third order under vmap: the outer tape sees one 1 - y*y per tanh as the loop's does
    # (elementwise only: a batched matmul is one GEMM, see the README)
    rng = np.random.default_rng(4)
    w = tf.constant(rng.standard_normal(5))
    xs = tf.constant(rng.standard_normal((6, 5)))

    def f(x):
        with tf.GradientTape() as outer:
            outer.watch(w)
            with tf.GradientTape() as t2:
                t2.watch(x)
                with tf.GradientTape() as t1:
                    t1.watch(x)
                    u = tf.reduce_sum(tf.tanh(tf.tanh(x * w) * w + 0.3))
                du = t1.gradient(u, x)
                s = tf.reduce_sum(du * du)
            d2 = t2.gradient(s, x)
            loss = tf.reduce_sum(d2 * du) + u
        return outer.gradient(loss, w)

    loop = np.stack([f(xs[i]).numpy() for i in range(6)])
    assert_same_bits(tf.vmap(f)(xs).numpy(), loop, "vmap of a third-order step")
    assert_same_bits(tf.vmap(tf.function(f))(xs).numpy(), loop, "vmap of it compiled")
