"""Sparsity detection, colouring and compressed Hessians/Jacobians (tapegrad/sparsity)."""
import numpy as np
import pytest

import tapegrad as tf
from _reference import rosenbrock
from tapegrad.ir import check
from tapegrad.primitives.gather import _index_add
from tapegrad.sparsity import colouring
from tapegrad.testing import assert_same_bits


def _x(n, seed=0):
    return tf.constant(np.random.default_rng(seed).uniform(-1.5, 1.5, n))


def _tri(n):
    return np.eye(n, dtype=bool) | np.eye(n, k=1, dtype=bool) | np.eye(n, k=-1, dtype=bool)


# -- patterns ------------------------------------------------------------------------------
def test_rosenbrock_pattern_is_tridiagonal():
    assert (tf.sparsity.pattern(rosenbrock, _x(30)) == _tri(30)).all()


def test_elementwise_pattern_is_diagonal():
    p = tf.sparsity.pattern(lambda x: tf.reduce_sum(tf.exp(x) * tf.sin(x)), _x(7))
    assert (p == np.eye(7, dtype=bool)).all()


def test_quadratic_form_pattern_is_dense():
    a = tf.constant(np.random.default_rng(1).normal(size=(6, 6)))
    p = tf.sparsity.pattern(lambda x: tf.reduce_sum(x * tf.linalg.matvec(a, x)), _x(6))
    assert p.all()


def test_arrowhead_pattern_and_two_colours():
    f = lambda x: x[0] * tf.reduce_sum(x[1:] ** 2) + tf.reduce_sum(tf.cos(x))
    p = tf.sparsity.pattern(f, _x(20))
    want = np.eye(20, dtype=bool)
    want[0, :] = want[:, 0] = True
    assert (p == want).all()
    assert colouring.hessian_plan(p).n_colours == 2  # star colouring; distance-2 needs 20
    assert colouring.distance2_colouring(p).max() + 1 == 20
    h = tf.hessian(f)(_x(20))
    np.testing.assert_allclose(h.numpy(), tf.hessian(f, sparse=False)(_x(20)).numpy(),
                               atol=1e-12)


def test_linear_function_has_empty_hessian_pattern():
    p = tf.sparsity.pattern(lambda x: tf.reduce_sum(3.0 * x), _x(5))
    assert not p.any()


def test_jacobian_pattern_of_differences():
    p = tf.sparsity.pattern(lambda x: x[1:] - x[:-1], _x(5), kind="jacobian")
    want = np.eye(4, 5, dtype=bool) | np.eye(4, 5, k=1, dtype=bool)
    assert (p == want).all()


def test_pattern_of_a_traced_gradient_program():
    x = _x(12)
    prog = tf.function(tf.grad(rosenbrock)).get_concrete_function(x).program
    check(prog)
    assert (tf.sparsity.pattern(prog) == _tri(12)).all()


def test_rule_less_primitive_falls_back_to_dense():
    # a linear solve has no dependency rule: everything it touches depends on everything
    a = tf.constant(np.eye(5) * 3.0 + 0.1)
    f = lambda x: tf.reduce_sum(tf.linalg.solve(a, (x ** 2)[:, None]) ** 2)
    assert tf.sparsity.pattern(f, _x(5)).all()


# -- colouring -----------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(10))
def test_plans_recover_every_entry(seed):
    rng = np.random.default_rng(seed)
    n = 25
    p = rng.random((n, n)) < 0.08
    p = p | p.T | np.eye(n, dtype=bool)
    h = np.where(p, rng.normal(size=(n, n)), 0.0)
    h = h + h.T
    for plan in (colouring.hessian_plan(p), colouring.jacobian_plan(p)):
        r = (h @ plan.directions.T).T  # the compressed rows
        out = np.zeros(n * n)
        out[plan.dst] = r.ravel()[plan.src]
        np.testing.assert_allclose(out.reshape(n, n), h, atol=1e-12)
        if plan.scatter is not None:
            out2 = np.zeros((n, n + 1))  # column n takes the entries that hold none
            np.add.at(out2, plan.scatter, r)
            np.testing.assert_allclose(out2[:, :n], h, atol=1e-12)


def test_invalid_colouring_is_refused():
    assert colouring.make_plan(_tri(4), np.zeros(4, np.int64)) is None


# -- compressed == dense ---------------------------------------------------------------------
def _random_fn(rng):
    """A random scalar function from many primitive families (some without a rule)."""
    w = tf.constant(rng.normal(size=(4, 4)))
    idx = tf.constant(rng.integers(0, 16, 6))
    pieces = [
        lambda x: tf.reduce_sum(tf.sin(x[1:]) * x[:-1] ** 2),
        lambda x: tf.reduce_sum(tf.tanh(tf.cumsum(x)) ** 2),
        lambda x: tf.reduce_sum(tf.reshape(x, (4, 4)) @ w * tf.transpose(tf.reshape(x, (4, 4)))),
        lambda x: tf.reduce_max(tf.reshape(x ** 2, (4, 4)), axis=1)[0] * x[3],
        lambda x: tf.reduce_sum(tf.gather(x, idx) ** 3),
        lambda x: tf.reduce_sum(tf.concat([x[:3] * x[5:8], tf.exp(x[10:])], 0) ** 2),
        lambda x: tf.reduce_prod(1.0 + 0.1 * x[4:8]) + tf.reduce_sum(tf.where(x > 0, x ** 2, x ** 3)),
        lambda x: tf.reduce_sum(tf.pad(x[::2], [[1, 1]]) * tf.pad(x[1::2], [[0, 2]])),
        lambda x: tf.linalg.logdet(tf.eye(4, dtype=tf.float64) * 5.0
                                   + tf.reshape(x, (4, 4)) ** 2 * 0.1),
        lambda x: tf.reduce_sum(tf.einsum("i,i->", x[:8], x[8:]) * x[0]),
        lambda x: tf.reduce_sum(tf.broadcast_to(x[:4], (3, 4)) * tf.math.softplus(x[4:8])),
    ]
    chosen = rng.choice(len(pieces), size=3, replace=False)
    return lambda x: sum(pieces[i](x) for i in chosen)


@pytest.mark.parametrize("seed", range(12))
def test_compressed_hessian_equals_dense(seed):
    rng = np.random.default_rng(seed)
    f = _random_fn(rng)
    x = tf.constant(rng.uniform(0.2, 1.0, 16))
    dense = tf.hessian(f, sparse=False)(x).numpy()
    np.testing.assert_allclose(tf.sparsity.hessian(f)(x).numpy(), dense, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(tf.hessian(f)(x).numpy(), dense, rtol=1e-12, atol=1e-12)
    compiled = tf.function(tf.sparsity.hessian(f))(x).numpy()
    np.testing.assert_allclose(compiled, dense, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_compressed_jacobian_equals_dense(seed):
    rng = np.random.default_rng(seed)
    g = _random_fn(rng)
    f = lambda x: tf.concat([tf.sin(x[1:]) * x[:-1], tf.reshape(g(x), (1,)), x[::3] ** 2], 0)
    x = tf.constant(rng.uniform(0.2, 1.0, 16))
    dense = tf.jacfwd(f)(x).numpy()
    np.testing.assert_allclose(tf.sparsity.jacobian(f)(x).numpy(), dense, rtol=1e-12,
                               atol=1e-12)
    compiled = tf.function(tf.sparsity.jacobian(f))(x).numpy()
    np.testing.assert_allclose(compiled, dense, rtol=1e-12, atol=1e-12)


def test_hessian_of_a_matrix_argument():
    f = lambda x: tf.reduce_sum(x[:, 1:] * x[:, :-1] ** 2)
    x = tf.constant(np.random.default_rng(0).normal(size=(4, 5)))
    dense = tf.hessian(f, sparse=False)(x).numpy()
    assert dense.shape == (4, 5, 4, 5)
    np.testing.assert_allclose(tf.sparsity.hessian(f)(x).numpy(), dense, atol=1e-12)


# -- the automatic path ----------------------------------------------------------------------
def test_auto_hessian_compresses_rosenbrock():
    x = _x(100)
    h = tf.hessian(rosenbrock)
    np.testing.assert_allclose(h(x).numpy(), tf.hessian(rosenbrock, sparse=False)(x).numpy(),
                               rtol=1e-13, atol=1e-12)
    (plan,) = h._sparsity_cache._plans.values()
    assert plan.n_colours == 3
    h(_x(100, seed=1))
    assert len(h._sparsity_cache._plans) == 1  # detected once per structure


def test_compiled_program_holds_only_the_compressed_pass():
    x = _x(100)
    cf = tf.function(tf.hessian(rosenbrock)).get_concrete_function(x)
    check(cf.program)
    scatter = ("index_add", "getitem")  # the scatter into n + 1 columns, its n-column view
    big = [e for e in cf.program.equations
           if e.out.size >= 100 * 99 and e.prim.name not in scatter]
    assert not big  # no (100, 99) tangents; only the final scatter is n x n
    assert max(e.out.shape[0] for e in cf.program.equations if e.out.ndim == 2
               and e.prim.name not in scatter) <= 3


def test_dense_functions_stay_dense():
    a = tf.constant(np.random.default_rng(1).normal(size=(10, 10)))
    f = lambda x: tf.reduce_sum(x * tf.linalg.matvec(a, x))
    h = tf.hessian(f)
    np.testing.assert_allclose(h(_x(10)).numpy(), (a + tf.transpose(a)).numpy(), atol=1e-12)
    (plan,) = h._sparsity_cache._plans.values()
    assert plan is None or plan.n_colours == 10  # detected dense: the dense path ran


def test_value_dependent_control_flow_gets_its_own_pattern():
    def f(x):
        if float(x[0]) > 0:
            return tf.reduce_sum(x ** 3)
        return tf.reduce_sum(x[1:] * x[:-1] * x[0])

    h = tf.hessian(f, sparse=True)
    for sign in (1.0, -1.0):
        x = tf.constant(np.r_[sign, np.linspace(0.1, 1, 11)])
        np.testing.assert_allclose(h(x).numpy(), tf.hessian(f, sparse=False)(x).numpy(),
                                   atol=1e-12)
    assert len(h._sparsity_cache._plans) == 2


def test_nested_and_multiple_arguments_use_the_dense_path():
    f = lambda x, y: tf.reduce_sum(x ** 2 * y)
    x, y = _x(4), _x(4, 1)
    h = tf.hessian(f, argnums=(0, 1))(x, y)
    assert h[0][0].shape == (4, 4)
    hd = tf.hessian(lambda d: tf.reduce_sum(d["a"] ** 3))({"a": x})
    np.testing.assert_allclose(hd["a"]["a"].numpy(), np.diag(6 * x.numpy()))


def test_outer_tape_differentiates_the_compressed_hessian():
    x = _x(10)
    with tf.GradientTape() as tape:
        tape.watch(x)
        h = tf.sparsity.hessian(lambda x: tf.reduce_sum(x[1:] ** 2 * x[:-1]))(x)
        s = tf.reduce_sum(h * h)
    g = tape.gradient(s, x)
    with tf.GradientTape() as tape:
        tape.watch(x)
        h = tf.hessian(lambda x: tf.reduce_sum(x[1:] ** 2 * x[:-1]), sparse=False)(x)
        s = tf.reduce_sum(h * h)
    np.testing.assert_allclose(g.numpy(), tape.gradient(s, x).numpy(), atol=1e-12)


def test_hessian_matches_central_differences():
    x0 = np.random.default_rng(5).uniform(-1, 1, 20)
    h = tf.function(tf.hessian(rosenbrock))(tf.constant(x0)).numpy()
    g = tf.function(tf.grad(rosenbrock))
    eps = 1e-6
    fd = np.stack([(g(tf.constant(x0 + eps * e)).numpy() - g(tf.constant(x0 - eps * e)).numpy())
                   / (2 * eps) for e in np.eye(20)], axis=1)
    np.testing.assert_allclose(h, fd, rtol=1e-6, atol=1e-4)


def test_float32_and_sparse_false():
    x = tf.constant(np.linspace(-1, 1, 40).astype(np.float32))
    h = tf.hessian(rosenbrock)(x)
    assert h.dtype == tf.float32
    np.testing.assert_allclose(h.numpy(), tf.hessian(rosenbrock, sparse=False)(x).numpy(),
                               rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("where", [(1,), (0,), (2, 30), (39,)])
def test_non_finite_inputs_reach_no_entry_of_a_compressed_hessian(where):
    # A compressed row entry that holds no Hessian entry went to column 0 of the scatter:
    # with inf at x[1] it held NaN (0 * inf), which was added onto H[0, 0]
    def rosen(x):
        return tf.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    n = 40
    xv = np.linspace(-1.0, 1.0, n)
    xv[list(where)] = np.inf
    x = tf.constant(xv)
    on = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= 1  # tridiagonal
    with np.errstate(all="ignore"):
        dense = tf.hessian(rosen, sparse=False)(x).numpy()
        for got in (tf.hessian(rosen)(x).numpy(), tf.function(tf.hessian(rosen))(x).numpy()):
            np.testing.assert_array_equal(got[on], dense[on])  # NaN where NaN
            assert (got[~on] == 0).all()  # exact zeros off the pattern (dense: NaN there)
    assert np.isnan(dense[~on]).any()


@pytest.mark.parametrize("key, shape", [
    ((np.array([[0, 1], [2, 3]]), np.array([[1, 0], [-1, 2]])), (4, 4)),  # a plan's (rows, cols)
    ((np.array([0, -2], np.int32), np.uint8(2)), (5, 3)),   # ints, negative, other int types
    ((np.array([[0], [2]]), np.array([[0, 1, 2]])), (3, 3)),  # broadcast: no flat positions
    ((np.array([0, 0]), np.array([1, 1])), (2, 2)),           # an element named twice: summed
    ((slice(None), np.array([0, 2])), (2, 3)),                # a slice: NumPy's assignment
])
def test_scatter_through_integer_arrays_assigns_what_numpy_assigns(key, shape):
    # compressed plans scatter through one raveled index (2-4x faster than several arrays)
    g = np.random.default_rng(0).normal(size=np.zeros(shape)[key].shape)
    g.flat[0], g.flat[-1] = -0.0, np.nan
    want = np.zeros(shape)
    count = np.zeros(shape, int)
    np.add.at(count, key, 1)
    if count.max() > 1:
        np.add.at(want, key, g)
    else:
        want[key] = g
    for _ in range(2):  # the first call works out (and caches) the plan, the second uses it
        assert_same_bits(_index_add(g, key, shape), want)
    with pytest.raises(IndexError):
        _index_add(g, tuple(k + 10 if isinstance(k, np.ndarray) else k for k in key), shape)
