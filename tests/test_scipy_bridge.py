"""tapegrad.scipy: SciPy's solvers with tapegrad's exact derivatives, compared with SciPy's own
analytic derivatives (rosen_der, rosen_hess, rosen_hess_prod) and finite differences."""
import warnings

import numpy as np
import pytest

import tapegrad as tf

so = pytest.importorskip("scipy.optimize")
sparse = pytest.importorskip("scipy.sparse")
from scipy.integrate import solve_ivp as scipy_solve_ivp  # noqa: E402
from scipy.optimize._numdiff import group_columns  # noqa: E402

import tapegrad.scipy as tgs  # noqa: E402
from tapegrad.scipy.compiled import Compiled  # noqa: E402
from tapegrad.sparsity import detect, large  # noqa: E402


def rosen(x):
    return tf.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


X0 = np.array([-1.2, 1.0, -0.5, 0.8, 1.3, 0.7])


# -- minimize ---------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["BFGS", "CG", "L-BFGS-B", "Newton-CG", "trust-ncg",
                                    "trust-krylov", "trust-exact", "dogleg", "trust-constr"])
def test_minimize_matches_scipy_with_its_analytic_derivatives(method):
    kw = {}
    if method in ("Newton-CG", "trust-ncg", "trust-krylov", "trust-constr"):
        kw["hessp"] = so.rosen_hess_prod
    if method in ("trust-exact", "dogleg"):
        kw["hess"] = so.rosen_hess
    x0 = X0 if method != "dogleg" else np.full(6, 0.9)  # dogleg needs a positive definite H
    ref = so.minimize(so.rosen, x0, method=method, jac=so.rosen_der, **kw)
    res = tgs.minimize(rosen, x0, method=method)
    assert res.success == ref.success
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-5, atol=1e-5)
    assert type(res) is type(ref)  # SciPy's own OptimizeResult


def test_one_program_run_per_distinct_x_and_one_trace():
    calls = []

    def f(x):
        calls.append(1)  # Python runs only while tracing: once, value+grad come from it
        return rosen(x)

    seen = []
    res = tgs.minimize(f, X0, method="BFGS", callback=lambda xk: seen.append(xk.copy()))
    assert res.success
    assert len(calls) == 1  # whatever the number of iterations
    # SciPy asked for value and gradient res.nfev times; each was one program run
    assert res.programs == {"value_and_grad": res.nfev}  # our check at x0 was the first
    c = Compiled(rosen, X0)
    v, g = c.value(X0), c.grad(X0)
    assert c.calls["value_and_grad"] == 1
    assert v == pytest.approx(so.rosen(X0)) and np.allclose(g, so.rosen_der(X0))


@pytest.mark.parametrize("mode", ["dense", "sparse", "hessp"])
def test_hess_modes_agree(mode):
    x0 = np.full(40, 0.5)
    ref = so.minimize(so.rosen, x0, method="trust-constr", jac=so.rosen_der, hess=so.rosen_hess)
    res = tgs.minimize(rosen, x0, method="trust-constr", hess_mode=mode)
    np.testing.assert_allclose(res.x, ref.x, atol=1e-5)
    ref = so.minimize(so.rosen, x0, method="Newton-CG", jac=so.rosen_der,
                      hessp=so.rosen_hess_prod)
    res = tgs.minimize(rosen, x0, method="Newton-CG", hess_mode=mode)
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)


def test_auto_hessian_is_sparse_for_trust_constr_when_colouring_pays():
    c = Compiled(rosen, np.zeros(200))
    assert c.sparse_pays("grad")
    H = c.sparse_jac(np.full(200, 0.3), of="grad")
    assert sparse.issparse(H)
    np.testing.assert_allclose(H.toarray(), so.rosen_hess(np.full(200, 0.3)), rtol=1e-12)
    H2 = c.sparse_jac(np.full(200, 0.7), of="grad")  # one pattern, fresh arrays per matrix
    assert not np.shares_memory(H.indices, H2.indices) and H.has_canonical_format
    np.testing.assert_allclose(H2.toarray(), so.rosen_hess(np.full(200, 0.7)), rtol=1e-12)
    assert not Compiled(rosen, np.zeros(6)).sparse_pays("grad")  # too small to pay


def test_constraints_get_exact_jacobians_and_hessians():
    def circle(x):
        return tf.stack([x[0] ** 2 + x[1] ** 2])

    f = lambda x: (x[0] - 2.0) ** 2 + (x[1] - 1.0) ** 2  # noqa: E731
    x0 = np.array([0.5, 0.0])
    ref = so.minimize(lambda x: (x[0] - 2) ** 2 + (x[1] - 1) ** 2, x0, method="SLSQP",
                      constraints={"type": "ineq", "fun": lambda x: 1 - x[0] ** 2 - x[1] ** 2})
    res = tgs.minimize(f, x0, method="SLSQP",
                       constraints={"type": "ineq", "fun": lambda x: 1.0 - circle(x)})
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)
    np.testing.assert_allclose(res.x, np.array([2.0, 1.0]) / np.sqrt(5.0), atol=1e-5)
    res = tgs.minimize(f, x0, method="trust-constr",
                       constraints=so.NonlinearConstraint(circle, -np.inf, 1.0))
    ref = so.minimize(lambda x: (x[0] - 2) ** 2 + (x[1] - 1) ** 2, x0, method="trust-constr",
                      jac=lambda x: np.array([2 * (x[0] - 2), 2 * (x[1] - 1)]),
                      hess=lambda x: 2 * np.eye(2),
                      constraints=so.NonlinearConstraint(
                          lambda x: [x[0] ** 2 + x[1] ** 2], -np.inf, 1.0,
                          jac=lambda x: np.array([[2 * x[0], 2 * x[1]]]),
                          hess=lambda x, v: 2 * v[0] * np.eye(2)))
    np.testing.assert_allclose(res.x, ref.x, atol=1e-8)  # the same iterates as by hand
    c = Compiled(circle, x0)
    np.testing.assert_allclose(c.jac_of_vjp(np.array([0.3, 0.4]), np.array([2.0])),
                               4.0 * np.eye(2))


# -- least_squares, root ----------------------------------------------------------------------
def bvp(x):
    """10,000 residuals of a discretised nonlinear boundary-value problem (tridiagonal)."""
    h2 = 1.0 / (x.shape[0] - 1) ** 2
    inner = (x[2:] - 2.0 * x[1:-1] + x[:-2]) / h2 - 0.5 * tf.exp(x[1:-1])
    return tf.concat([x[:1], inner, x[-1:] - 1.0], 0)


def coupled(x):
    """10,000 residuals, each coupling a variable to its neighbours (sparse, well posed)."""
    b = tf.constant(np.linspace(-1.0, 1.0, 10_000))
    inner = x[1:-1] - 0.3 * tf.sin(x[2:] + x[:-2]) - b[1:-1]
    return tf.concat([x[:1] - b[:1], inner, x[-1:] - b[-1:]], 0)


def test_least_squares_sparse_problem_matches_scipy_with_finite_differences():
    n = 10_000
    x0 = np.zeros(n)
    res = tgs.least_squares(coupled, x0, method="trf")
    assert sparse.issparse(res.jac)
    pattern = sparse.diags([1, 1, 1], [-1, 0, 1], shape=(n, n))

    def np_coupled(x):
        b = np.linspace(-1.0, 1.0, n)
        inner = x[1:-1] - 0.3 * np.sin(x[2:] + x[:-2]) - b[1:-1]
        return np.concatenate([x[:1] - b[:1], inner, x[-1:] - b[-1:]])

    ref = so.least_squares(np_coupled, x0, method="trf", jac_sparsity=pattern)
    assert res.cost < 1e-16 and ref.cost < 1e-12
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)
    small = tgs.least_squares(lambda x: tf.stack([x[0] - 1.0, 10.0 * (x[1] - x[0] ** 2)]),
                              np.array([-1.2, 1.0]), method="lm")
    np.testing.assert_allclose(small.x, [1.0, 1.0], atol=1e-7)


def system(x):
    return tf.stack([x[0] + 0.5 * (x[0] - x[1]) ** 3 - 1.0,
                     0.5 * (x[1] - x[0]) ** 3 + x[1]])


@pytest.mark.parametrize("method", ["hybr", "lm", "krylov"])
def test_root_methods(method):
    ref = so.root(lambda x: [x[0] + 0.5 * (x[0] - x[1]) ** 3 - 1.0,
                             0.5 * (x[1] - x[0]) ** 3 + x[1]], [0.0, 0.0], method="hybr")
    res = tgs.root(system, np.zeros(2), method=method)
    assert res.success
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)
    if method == "krylov":
        assert res.programs.get("jvp", 0) > 0 and "jac" not in res.programs


def test_newton_krylov_on_a_large_system_uses_exact_jvps():
    n = 2000
    res = tgs.root(lambda x: bvp(x) * 1e-4, np.linspace(0.0, 1.0, n), method="krylov")
    assert res.success
    assert np.abs(bvp(tf.constant(res.x)).numpy()).max() < 1e-1


# -- solve_ivp --------------------------------------------------------------------------------
def brusselator(n):
    alpha = 0.002 * (n + 1) ** 2

    def shift(u, k, axis):
        return tf.concat([u[-k:], u[:-k]], 0) if axis == 0 else \
            tf.concat([u[:, -k:], u[:, :-k]], 1)

    def lap(u):
        return shift(u, 1, 0) + shift(u, n - 1, 0) + shift(u, 1, 1) + shift(u, n - 1, 1) - 4 * u

    def f(t, y):
        u, v = tf.reshape(y[:n * n], [n, n]), tf.reshape(y[n * n:], [n, n])
        du = 1.0 + u * u * v - 4.4 * u + alpha * lap(u)
        dv = 3.4 * u - u * u * v + alpha * lap(v)
        return tf.concat([tf.reshape(du, [-1]), tf.reshape(dv, [-1])], 0)

    def f_np(t, y):
        return f(t, tf.constant(y)).numpy()

    return f, f_np


@pytest.mark.parametrize("method", ["BDF", "Radau", "LSODA"])
def test_solve_ivp_matches_scipy_finite_differences(method):
    n = 8
    f, f_np = brusselator(n)
    y0 = 1.0 + 0.5 * np.sin(np.arange(2 * n * n))
    sol = tgs.solve_ivp(f, (0.0, 1.0), y0, method=method, rtol=1e-8, atol=1e-10)
    ref = scipy_solve_ivp(f_np, (0.0, 1.0), y0, method=method, rtol=1e-8, atol=1e-10)
    assert sol.success and ref.success
    np.testing.assert_allclose(sol.y[:, -1], ref.y[:, -1], rtol=1e-5, atol=1e-6)
    assert sol.njev >= 1 if method != "LSODA" else True


def test_time_dependent_rhs_is_not_cached_across_t():
    sol = tgs.solve_ivp(lambda t, y: tf.cos(t) + 0.0 * y, (0.0, 2.0), np.zeros(1),
                        method="RK45", rtol=1e-9, atol=1e-12)
    assert abs(sol.y[0, -1] - np.sin(2.0)) < 1e-7


# -- sparsity at scale ------------------------------------------------------------------------
def _program(f, n):
    return tf.function(f).get_concrete_function(tf.TensorSpec([n], tf.float64)).program


SPARSE_CASES = {
    "shifts": lambda x: x[1:] * x[:-1] + tf.concat([x[-1:], x[:-1]], 0)[1:],
    "pad": lambda x: tf.pad(x[2:] ** 2, [[1, 1]]) - x,
    "reshape_transpose": lambda x: tf.reshape(tf.transpose(tf.reshape(x, [3, 4])), [-1]) * x,
    "reduce": lambda x: tf.concat([tf.reduce_sum(tf.reshape(x, [4, 3]), axis=1),
                                   tf.reduce_max(tf.reshape(x, [4, 3]), axis=0)], 0),
    "matmul": lambda x: tf.reshape(tf.matmul(tf.reshape(x, [3, 4]),
                                             tf.constant(np.eye(4)[:, :2])), [-1]),
    "gather": lambda x: tf.gather(x, [0, 5, 5, 11]) * 2.0,
    "grad_of_banded": tf.grad(lambda x: tf.reduce_sum(tf.sin(x[1:] * x[:-1]))),
    "fallback_solve": lambda x: tf.linalg.solve(tf.reshape(x[:9], [3, 3]) + 3.0 * tf.eye(3,
                                                dtype=tf.float64), tf.ones([3, 1], tf.float64))[:, 0],
}


@pytest.mark.parametrize("name", sorted(SPARSE_CASES))
def test_large_pattern_covers_the_jacobian_and_equals_dense_detection(name):
    f = SPARSE_CASES[name]
    prog = _program(f, 12)
    big = large.program_pattern(prog).toarray()
    small = detect.program_pattern(prog)
    np.testing.assert_array_equal(big, small)
    x = tf.constant(np.random.default_rng(3).uniform(0.5, 1.5, 12))
    J = tf.jacobian(f)(x).numpy().reshape(big.shape)
    assert not (J != 0)[~big].any()  # never misses an entry
    c = Compiled(f, x.numpy())
    np.testing.assert_allclose(c.sparse_jac(x.numpy()).toarray(), J, rtol=1e-12, atol=1e-14)


def test_colouring_never_needs_more_colours_than_scipy():
    rng = np.random.default_rng(0)
    f, _ = brusselator(32)
    c = Compiled(lambda y: f(0.0, y), np.ones(2048))
    pattern, colours, _ = c.sparse_plan()
    assert colours.max() + 1 <= group_columns(pattern).max() + 1
    for _ in range(5):
        p = sparse.random(300, 200, density=0.02, random_state=rng, format="csr") != 0
        col = large.greedy_colouring(p)
        assert col.max() + 1 <= group_columns(p).max() + 1
        conflict = (p.T.astype(int) @ p.astype(int)).tocoo()
        clash = (conflict.row != conflict.col) & (col[conflict.row] == col[conflict.col])
        assert not clash.any()


def test_hundred_thousand_variables():
    n = 100_000
    x0 = np.linspace(0.0, 1.0, n)
    c = Compiled(bvp, x0)
    pattern, colours, directions = c.sparse_plan()
    assert pattern.shape == (n, n) and pattern.nnz == 3 * n - 4
    assert directions.shape[0] == 3
    J = c.sparse_jac(x0)
    v = np.random.default_rng(1).standard_normal(n)
    np.testing.assert_allclose(J @ v, c.jvp(x0, v), rtol=1e-9, atol=1e-6)
    h = Compiled(rosen, x0)
    H = h.sparse_jac(x0, of="grad")
    np.testing.assert_allclose(H @ v, h.hessp(x0, v), rtol=1e-10, atol=1e-8)


# -- wrappers and bad input -------------------------------------------------------------------
def test_plain_wrappers():
    x = np.array([0.3, -0.2, 1.1])
    v, g = tgs.value_and_grad(rosen)(x)
    assert v == pytest.approx(so.rosen(x)) and np.allclose(g, so.rosen_der(x))
    np.testing.assert_allclose(tgs.jac(rosen)(x), so.rosen_der(x))
    np.testing.assert_allclose(tgs.hess(rosen)(x), so.rosen_hess(x))
    np.testing.assert_allclose(tgs.hess(rosen, sparse=True)(x).toarray(), so.rosen_hess(x))
    p = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(tgs.hessp(rosen)(x, p), so.rosen_hess_prod(x, p))
    np.testing.assert_allclose(tgs.jac(lambda x: x ** 2)(x), np.diag(2 * x))


def test_non_scalar_fun_and_bad_x0():
    with pytest.raises(ValueError, match="must return a scalar"):
        tgs.minimize(lambda x: x ** 2, np.ones(3))
    with pytest.raises(ValueError, match="'x0' must only have one dimension"):
        tgs.minimize(rosen, np.ones((2, 3)))
    with pytest.raises(ValueError, match="hess_mode"):
        tgs.minimize(rosen, X0, method="trust-ncg", hess_mode="bogus")


def test_untraceable_fun_says_so_and_falls_back_when_asked():
    def branchy(x):
        if float(tf.reduce_sum(x)) > 0:  # a Python branch on a value
            return rosen(x)
        return rosen(-x)

    with pytest.raises(tgs.TraceError, match="trace=False"):
        tgs.minimize(branchy, X0 + 1.0, method="BFGS")
    res = tgs.minimize(branchy, X0 + 1.0, method="BFGS", trace=False)
    ref = so.minimize(lambda x: so.rosen(x) if x.sum() > 0 else so.rosen(-x), X0 + 1.0,
                      method="BFGS", jac=lambda x: so.rosen_der(x) if x.sum() > 0
                      else -so.rosen_der(-x))
    assert res.success
    np.testing.assert_allclose(res.x, ref.x, atol=1e-5)


def test_jacobian_for_a_method_without_one_passes_scipys_warning():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res = tgs.minimize(rosen, X0, method="Nelder-Mead", jac=lambda x: so.rosen_der(x),
                           options={"maxiter": 50})
    assert any("does not use gradient" in str(m.message) for m in w)
    assert res.nit <= 50
