"""The JAX-style functional API: grad, value_and_grad, vjp, jvp, linearize, jacfwd, jacrev,
jacobian, hessian, hvp; nested arguments; compositions with each other, vmap and function.
References are central differences or closed forms in float64."""
import tracemalloc

import numpy as np
import pytest

import tapegrad as tf
from _reference import num_jac, rosenbrock, rosenbrock_hessian

RNG = np.random.default_rng(3)


def np_fn(f):
    return lambda a: f(tf.constant(a)).numpy()


def close(a, b, rtol=1e-6, atol=1e-8):
    assert isinstance(a, tf.Tensor), type(a)
    np.testing.assert_allclose(a.numpy(), b, rtol=rtol, atol=atol)


W = RNG.standard_normal((3, 4))
SCALAR = lambda x: tf.reduce_sum(tf.sin(x) * tf.matmul(x, W)[:, :3]) + tf.reduce_sum(x ** 4)
VECTOR = lambda x: tf.tanh(tf.matmul(x, W)) * tf.reduce_sum(x)


# -- grad / value_and_grad -------------------------------------------------------------------------
def test_grad_matches_central_differences():
    x = RNG.standard_normal((2, 3))
    close(tf.grad(SCALAR)(tf.constant(x)), num_jac(np_fn(SCALAR), x))
    close(tf.grad(SCALAR)(x), num_jac(np_fn(SCALAR), x))  # a NumPy array works too


def test_grad_argnums_and_nested_arguments():
    def f(a, params, c):  # c is float32 (a Python float), the rest float64: TensorFlow
        # promotes none, the cast is the program's (float64 * float32 raises there)
        return tf.reduce_sum(params["w"] * a) + params["b"][0] * tf.cast(c, tf.float64) + \
            tf.reduce_sum(params["b"][1])
    a = RNG.standard_normal(3)
    params = {"w": RNG.standard_normal(3), "b": [np.float64(2.0), RNG.standard_normal(2)]}
    g = tf.grad(f, argnums=1)(a, params, 5.0)
    assert set(g) == {"w", "b"} and isinstance(g["b"], list)
    close(g["w"], a)
    close(g["b"][0], 5.0)
    close(g["b"][1], np.ones(2))
    ga, gc = tf.grad(f, argnums=(0, -1))(a, params, 5.0)
    close(ga, params["w"])
    assert float(gc) == 2.0
    assert gc.dtype == np.float32  # a Python float is float32, as in TensorFlow


def test_float64_numpy_stays_float64():
    g = tf.grad(lambda x: tf.reduce_sum(x * x))(np.array([1.0, 2.0]))
    assert g.dtype == np.float64


def test_unconnected_argument_gets_zeros():
    g = tf.grad(lambda x, y: tf.reduce_sum(x * 2.0), argnums=(0, 1))(
        np.ones(2), np.ones((3, 1)))
    close(g[1], np.zeros((3, 1)))


def test_argument_also_captured_by_the_function_is_differentiated_only_as_the_argument():
    x = tf.constant(3.0)
    # JAX: the captured x is a constant, so d/dx (x * x_captured) = x_captured = 3
    assert float(tf.grad(lambda a: a * x)(x)) == 3.0
    # the same tensor passed twice: two separate arguments
    gx, gy = tf.grad(lambda a, b: a * b * b, argnums=(0, 1))(x, x)
    assert (float(gx), float(gy)) == (9.0, 18.0)


def test_value_and_grad_and_has_aux():
    f = lambda x: (tf.reduce_sum(x ** 2), {"n": tf.reduce_max(x)})
    (v, aux), g = tf.value_and_grad(f, has_aux=True)(np.array([1.0, -3.0]))
    assert float(v) == 10.0 and float(aux["n"]) == 1.0
    close(g, [2.0, -6.0])
    g2, aux2 = tf.grad(f, has_aux=True)(np.array([1.0, -3.0]))
    close(g2, [2.0, -6.0])
    assert float(aux2["n"]) == 1.0


def test_grad_errors():
    with pytest.raises(TypeError, match="scalar-output"):
        tf.grad(lambda x: x * 2.0)(np.ones(3))
    with pytest.raises(TypeError, match="real- or complex-valued inputs"):
        tf.grad(lambda x: tf.cast(x, tf.float32))(np.int32(3))
    with pytest.raises(TypeError, match="real-valued outputs"):
        tf.grad(lambda x: tf.cast(x, tf.int32))(2.0)
    with pytest.raises(ValueError, match="out of range"):
        tf.grad(lambda x: x, argnums=1)(2.0)
    with pytest.raises(TypeError, match="argnums"):
        tf.grad(lambda x: x, argnums="0")(2.0)
    with pytest.raises(TypeError, match="has_aux=True requires"):
        tf.grad(lambda x: x * x, has_aux=True)(2.0)


def test_higher_order_grads():
    f = lambda x: x ** 4
    x = tf.constant(1.5, tf.float64)
    assert float(tf.grad(f)(x)) == pytest.approx(4 * 1.5 ** 3)
    assert float(tf.grad(tf.grad(f))(x)) == pytest.approx(12 * 1.5 ** 2)
    assert float(tf.grad(tf.grad(tf.grad(f)))(x)) == pytest.approx(24 * 1.5)
    assert float(tf.grad(tf.grad(tf.grad(tf.grad(f))))(x)) == pytest.approx(24.0)


# -- vjp / jvp / linearize ---------------------------------------------------------------------------
def test_vjp_is_the_transposed_jacobian_and_can_be_called_twice():
    x = RNG.standard_normal((2, 3))
    J = num_jac(np_fn(VECTOR), x)  # (2, 4, 2, 3)
    y, pullback = tf.vjp(VECTOR, x)
    close(y, VECTOR(tf.constant(x)).numpy())
    for _ in range(2):
        ct = RNG.standard_normal((2, 4))
        (g,) = pullback(ct)
        close(g, np.einsum("ij,ijkl->kl", ct, J))


def test_vjp_nested_outputs_several_primals_and_errors():
    f = lambda a, b: {"p": a * b, "s": [tf.reduce_sum(a)]}
    a, b = RNG.standard_normal(3), RNG.standard_normal(3)
    out, pullback = tf.vjp(f, a, b)
    ga, gb = pullback({"p": np.ones(3), "s": [np.float64(2.0)]})
    close(ga, b + 2.0)
    close(gb, a)
    with pytest.raises(ValueError, match="cotangent"):
        pullback({"p": np.ones(4), "s": [np.float64(1.0)]})
    with pytest.raises(ValueError, match="same structure"):
        pullback(np.ones(3))
    _, _, aux = tf.vjp(lambda a: (a * 2.0, "hello"), a, has_aux=True)
    assert aux == "hello"


def test_jvp_matches_central_differences_and_has_the_structure():
    x, v = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    y, t = tf.jvp(VECTOR, (x,), (v,))
    close(y, VECTOR(tf.constant(x)).numpy())
    close(t, np.einsum("ijkl,kl->ij", num_jac(np_fn(VECTOR), x), v))
    out, tan = tf.jvp(lambda d: {"a": d["x"] * d["y"], "b": d["y"]},
                      ({"x": np.array(2.0), "y": np.array(3.0)},),
                      ({"x": np.array(1.0), "y": np.array(0.0)},))
    assert float(tan["a"]) == 3.0 and float(tan["b"]) == 0.0


def test_jvp_errors():
    with pytest.raises(TypeError, match="must be tuples or lists"):
        tf.jvp(tf.sin, np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        tf.jvp(tf.sin, (np.ones(2),), (np.ones(3),))


def test_linearize_runs_f_once_and_matches_jvp():
    calls = []

    def f(x):
        calls.append(1)
        return tf.sin(x) * x

    x = RNG.standard_normal(4)
    y, f_jvp = tf.linearize(f, x)
    for _ in range(3):
        v = RNG.standard_normal(4)
        close(f_jvp(v), (np.cos(x) * x + np.sin(x)) * v)
    assert len(calls) == 1
    _, f_id = tf.linearize(lambda a: a, x)
    close(f_id(np.ones(4)), np.ones(4))


# -- Jacobians --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "jacobian"])
def test_jacobians_match_central_differences(transform):
    x = RNG.standard_normal((2, 3))
    close(getattr(tf, transform)(VECTOR)(x), num_jac(np_fn(VECTOR), x))


def test_jacobian_modes_and_chunks_agree():
    x = RNG.standard_normal((2, 3))
    ref = tf.jacobian(VECTOR)(x).numpy()
    for mode in ["forward", "reverse", "auto"]:
        for chunk in [None, 1, 5]:
            close(tf.jacobian(VECTOR, mode=mode, chunk_size=chunk)(x), ref, rtol=1e-12)


def test_jacobian_bad_mode_and_chunk_size():
    with pytest.raises(ValueError, match="Unknown Jacobian mode"):
        tf.jacobian(VECTOR, mode="backward")
    for bad in [0, -2, 1.5, False]:
        with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
            tf.jacobian(VECTOR, chunk_size=bad)
        with pytest.raises(ValueError, match="chunk_size must be a positive integer"):
            tf.hessian(SCALAR, chunk_size=bad)


def test_jacobian_nested_inputs_and_outputs():
    def f(p, x):
        return {"y": tf.linalg.matvec(p["w"], x, transpose_a=True) + p["b"],
                "n": tf.reduce_sum(x * x)}

    p = {"w": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2)}
    x = RNG.standard_normal(3)
    for t in [tf.jacfwd, tf.jacrev]:
        j = t(f, argnums=(0, 1))(p, x)
        jp, jx = j["y"]
        assert jp["w"].shape == (2, 3, 2) and jp["b"].shape == (2, 2) and jx.shape == (2, 3)
        close(jp["w"], np.einsum("k,ij->jki", x, np.eye(2)))
        close(jp["b"], np.eye(2))
        close(jx, p["w"].T)
        np_, nx = j["n"]
        close(np_["w"], np.zeros((3, 2)))
        close(nx, 2 * x)


def test_jacobian_auto_picks_forward_for_wide_outputs(monkeypatch):
    from tapegrad.tape import jacobians
    seen = []
    orig = jacobians._blocks
    monkeypatch.setattr(jacobians, "_blocks",
                        lambda *a, **k: (k["forward"] and seen.append(1)) or orig(*a, **k))
    tf.jacobian(lambda x: tf.tile(x, [10]))(np.ones(2))
    assert seen
    seen.clear()
    tf.jacobian(lambda x: tf.reduce_sum(x))(np.ones(20))
    assert not seen


# -- Hessians ---------------------------------------------------------------------------------------------
def test_hessian_of_rosenbrock():
    x = RNG.uniform(-1.5, 1.5, 10)
    h = tf.hessian(rosenbrock)(x)
    assert h.shape == (10, 10) and h.dtype == np.float64
    close(h, rosenbrock_hessian(x), rtol=1e-10, atol=1e-9)
    close(tf.hessian(rosenbrock, chunk_size=3)(x), rosenbrock_hessian(x), rtol=1e-10, atol=1e-9)


def test_hessian_matches_central_differences_of_the_gradient():
    x = RNG.standard_normal((2, 3))
    g = lambda a: tf.grad(SCALAR)(tf.constant(a)).numpy()
    close(tf.hessian(SCALAR)(x), num_jac(g, x), rtol=1e-5, atol=1e-6)


def test_hessian_of_two_arguments_gives_blocks():
    f = lambda a, b: tf.reduce_sum(a * a * b) + tf.reduce_sum(b ** 3)
    a, b = RNG.standard_normal(2), RNG.standard_normal(2)
    h = tf.hessian(f, argnums=(0, 1))(a, b)
    close(h[0][0], np.diag(2 * b))
    close(h[0][1], np.diag(2 * a))
    close(h[1][0], np.diag(2 * a))
    close(h[1][1], np.diag(6 * b))


def test_hessian_with_aux():
    h, aux = tf.hessian(lambda x: (tf.reduce_sum(x ** 3), x * 2.0), has_aux=True)(np.ones(2))
    close(h, 6 * np.eye(2))
    close(aux, 2 * np.ones(2))


def test_hessian_compositions_agree():
    x = RNG.standard_normal(4)
    f = lambda v: tf.reduce_sum(tf.sin(v) * tf.reduce_prod(v + 2.0))
    ref = tf.hessian(f)(x).numpy()
    for h in [tf.jacfwd(tf.jacrev(f)), tf.jacrev(tf.jacrev(f)), tf.jacrev(tf.jacfwd(f)),
              tf.jacfwd(tf.jacfwd(f)), tf.jacobian(tf.grad(f))]:
        close(h(x), ref, rtol=1e-10, atol=1e-12)


def test_hvp():
    v = np.array([1.0, 2.0])
    close(tf.hvp(lambda x: tf.reduce_sum(x ** 3), (v,), (np.array([1.0, 0.0]),)), [6.0, 0.0])
    x, t = RNG.uniform(-1, 1, 6), RNG.standard_normal(6)
    close(tf.hvp(rosenbrock, (x,), (t,)), rosenbrock_hessian(x) @ t, rtol=1e-10)


def test_hessian_peak_memory_is_a_small_multiple_of_the_result():
    n = 2000
    x = tf.constant(RNG.standard_normal(n))
    f = lambda v: tf.reduce_sum(tf.sin(v) * v)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        h = tf.hessian(f)(x)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak <= 4 * n * n * 8, f"peak {peak / 1e6:.1f} MB"
    xv = x.numpy()
    close(tf.linalg.diag_part(h), 2 * np.cos(xv) - xv * np.sin(xv))


# -- compositions ---------------------------------------------------------------------------------------------
def test_vmap_of_grad_is_per_example_gradients():
    xs = RNG.standard_normal((5, 2, 3))
    got = tf.vmap(tf.grad(SCALAR))(xs)
    want = np.stack([num_jac(np_fn(SCALAR), x) for x in xs])
    close(got, want)


def test_grad_of_vmap():
    xs = RNG.standard_normal((4, 2, 3))
    f = lambda xs: tf.reduce_sum(tf.vmap(SCALAR)(xs))
    close(tf.grad(f)(xs), num_jac(np_fn(f), xs))


def test_vmap_of_jacrev_is_batch_jacobian():
    w = RNG.standard_normal((3, 5))
    f = lambda x: tf.tanh(tf.linalg.matvec(w, x, transpose_a=True))  # x @ w, x a row or rows
    xs = tf.constant(RNG.standard_normal((6, 3)))
    with tf.GradientTape() as g:
        g.watch(xs)
        y = f(xs)
    ref = g.batch_jacobian(y, xs).numpy()
    for t in [tf.jacrev, tf.jacfwd, tf.hessian]:
        if t is tf.hessian:
            got = tf.vmap(t(lambda x: tf.reduce_sum(f(x[None]) ** 2)))(xs)
            want = np.stack([tf.hessian(lambda x: tf.reduce_sum(f(x[None]) ** 2))(x).numpy()
                             for x in xs.numpy()])
            close(got, want, rtol=1e-10)
        else:
            close(tf.vmap(t(f))(xs), ref, rtol=1e-10, atol=1e-12)


def test_jacrev_of_vmap():
    xs = RNG.standard_normal((3, 2))
    f = tf.vmap(lambda x: tf.sin(x) * tf.reduce_sum(x))
    close(tf.jacrev(f)(xs), num_jac(np_fn(f), xs))
    close(tf.jacfwd(f)(xs), num_jac(np_fn(f), xs))


def test_jacfwd_over_vmap_with_an_unbatched_argument():
    xs, w = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    f = lambda w: tf.vmap(lambda r, w: tf.reduce_sum(tf.sin(r * w)), in_axes=(0, None))(xs, w)
    close(tf.jacfwd(f)(w), np.cos(xs * w) * xs, rtol=1e-12)
    close(tf.jacrev(f)(w), np.cos(xs * w) * xs, rtol=1e-12)


def test_functional_inside_a_tape():
    x = tf.constant([0.5, 1.5], tf.float64)
    with tf.GradientTape() as t:
        t.watch(x)
        g = tf.grad(lambda v: tf.reduce_sum(v ** 3))(x)
    close(t.jacobian(g, x), np.diag(6 * x.numpy()))


def test_outputs_are_tensors():
    x = np.array([1.0, 2.0])
    for out in [tf.grad(lambda v: tf.reduce_sum(v))(x), tf.jacrev(lambda v: v)(x),
                tf.jvp(lambda v: v, (x,), (x,))[1], tf.hessian(lambda v: tf.reduce_sum(v))(x),
                tf.vjp(lambda v: 2.0 * v, x)[1](x)[0]]:
        assert type(out) is tf.Tensor


# -- with tapegrad.function -------------------------------------------------------------------------------
needs_function = pytest.mark.skipif(not hasattr(tf, "function"),
                                    reason="tapegrad.function is not available")


@needs_function
def test_compiled_transforms_agree_with_eager():
    x = tf.constant(RNG.uniform(-1, 1, 6))
    xs = tf.constant(RNG.standard_normal((4, 3)))
    v = tf.constant(RNG.standard_normal(6))
    cases = [(tf.grad(rosenbrock), x), (tf.hessian(rosenbrock), x), (tf.jacrev(VECTOR), xs[:2]),
             (tf.jacfwd(VECTOR), xs[:2]), (tf.vmap(tf.grad(SCALAR)), xs[:, None, :]),
             (tf.vmap(tf.jacrev(VECTOR)), xs[:, None, :]),
             (lambda a: tf.jvp(tf.sin, (a,), (v,))[1], x),
             (lambda a: tf.vjp(tf.sin, a)[1](v)[0], x),
             (lambda a: tf.linearize(tf.sin, a)[1](v), x),
             (lambda a: tf.hvp(rosenbrock, (a,), (v,)), x)]
    for fn, arg in cases:
        compiled = tf.function(fn)
        eager = fn(arg).numpy()
        close(compiled(arg), eager, rtol=1e-10, atol=1e-12)
        close(compiled(arg + 0.5), fn(arg + 0.5).numpy(), rtol=1e-10, atol=1e-12)


@needs_function
def test_grad_of_a_compiled_function():
    f = tf.function(lambda x: tf.reduce_sum(tf.sin(x) * x))
    x = RNG.standard_normal(3)
    close(tf.grad(f)(tf.constant(x)), np.cos(x) * x + np.sin(x))
