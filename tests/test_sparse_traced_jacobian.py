"""Traced tape Jacobians with compressed directions (sparsity/traced.py): inside
tapegrad.function, GradientTape.jacobian and batch_jacobian push c + 1 directions where the
program's pattern colours into c groups; the numbers must be the dense basis's, bit for bit
(NaN, inf, -0.0 included), on both sides of the cost model's thresholds."""
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core import hooks
from tapegrad.sparsity import traced
from tapegrad.tape.batch_jacobian import BatchCouplingWarning

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")


@pytest.fixture(autouse=True)
def _plain_eager():
    # the eager reference is the interpreter's dense basis, not a compiled replay
    tf.config.set_derivative_cache(False)
    yield
    tf.config.set_derivative_cache(True)


def assert_same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    nan = np.isnan(a)
    np.testing.assert_array_equal(nan, np.isnan(b))
    np.testing.assert_array_equal(a[~nan], b[~nan])
    np.testing.assert_array_equal(np.signbit(a[~nan]), np.signbit(b[~nan]))  # -0.0


def rosenbrock(x):
    return tf.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def hessian_tapes(f):
    def hess(x):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = f(x)
            g = t1.gradient(y, x)
        return t2.jacobian(g, x)
    return hess


def jacobian_tape(f, method="jacobian", **kw):
    def jac(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = f(x)
        return getattr(t, method)(y, x, **kw)
    return jac


def batch_jacobian_tape(f, **kw):
    return jacobian_tape(f, "batch_jacobian", **kw)


def widest_batch(fn, *args):
    """The most directions a product of the traced program carries (its leading axis)."""
    prog = tf.function(fn).get_concrete_function(*args).program
    return max((v.shape[0] for e in prog.equations if e.prim.name == "mul" for v in e.outs
                if len(v.shape) >= 2), default=0)


def compressed(fn, *args):
    prog = tf.function(fn).get_concrete_function(*args).program
    return any(e.prim.name == "cond" for e in prog.equations)


def check(fn, *args):
    got, ref = tf.function(fn)(*args), fn(*args)
    if ref is None:  # unconnected (a Hessian of a linear function): None both ways
        assert got is None
        return None
    assert_same(got.numpy(), ref.numpy())
    return got.numpy()


def stencil(x):
    # a finite-difference residual: row i depends on x[i], x[i+1], x[i+2]
    return x[2:] - 2.0 * x[1:-1] + x[:-2] + 0.1 * x[1:-1] ** 3


@pytest.mark.parametrize("seed", [0, 1])
def test_rosenbrock_hessian_as_a_tf_user_writes_it(seed):
    x = tf.constant(np.random.default_rng(seed).uniform(-1.5, 1.5, 100))
    h = hessian_tapes(rosenbrock)
    assert compressed(h, x)
    assert widest_batch(h, x) == 4  # 3 colours and the zero direction, not 100 rows
    got = check(h, x)
    ref = tf.hessian(rosenbrock, sparse=False)(x).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-10)


def test_non_finite_entries_stay_where_the_dense_basis_puts_them():
    # inf in x: NaN and inf in some rows; a colour group must not spread them
    v = np.random.default_rng(2).uniform(-1.0, 1.0, 40)
    v[[3, 17]] = np.inf
    v[25] = np.nan
    check(hessian_tapes(rosenbrock), tf.constant(v))


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_stencil_residual_jacobian(mode):
    x = tf.constant(np.random.default_rng(3).uniform(0.5, 2.0, 64))
    jac = jacobian_tape(stencil, mode=mode)
    assert compressed(jac, x)
    assert widest_batch(jac, x) == 4
    check(jac, x)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_zero_direction_entries_nan_and_negative_zero(mode):
    # sqrt at 0: inf on the diagonal and NaN off it in one row (forward) or column
    # (reverse); -3 x: -0.0 off the diagonal. The zero direction reproduces both.
    v = np.linspace(0.0, 3.0, 32)
    for f in (lambda x: -tf.sqrt(x), lambda x: -3.0 * tf.sin(x),
              lambda x: tf.sqrt(x[1:] * x[:-1])):
        jac = jacobian_tape(f, mode=mode)
        assert compressed(jac, tf.constant(v))
        got = check(jac, tf.constant(v))
        assert not np.isfinite(got).all() or np.signbit(got[got == 0]).any()


def test_plus_zero_case_keeps_the_scatter_and_minus_zero_case_selects():
    v = tf.constant(np.linspace(1.0, 2.0, 16))
    check(jacobian_tape(lambda x: 3.0 * x), v)
    check(jacobian_tape(lambda x: -3.0 * x), v)


@pytest.mark.parametrize("name", ["jacfwd", "jacrev", "jacobian"])
def test_functional_jacobians_inside_a_trace(name):
    v = np.linspace(0.0, 1.5, 40)
    v[7] = np.inf
    jac = getattr(tf, name)(lambda x: stencil(x) + tf.sqrt(x[1:-1]))
    assert compressed(jac, tf.constant(v))
    check(jac, tf.constant(v))


def test_dense_structure_keeps_the_dense_basis():
    x = tf.constant(np.linspace(0.1, 1.0, 32))
    f = lambda x: x * tf.reduce_sum(x ** 2)  # noqa: E731
    jac = jacobian_tape(f)
    assert not compressed(jac, x)
    assert widest_batch(jac, x) == 32
    check(jac, x)
    h = hessian_tapes(lambda x: tf.reduce_sum(x) ** 3)
    assert not compressed(h, x)
    check(h, x)


@pytest.mark.parametrize("n,compresses", [(7, False), (8, True)])
def test_min_size_threshold(n, compresses):
    # a diagonal Jacobian: 1 colour + the zero direction = 2 <= RATIO * n from n = 8 on
    x = tf.constant(np.linspace(0.0, 1.0, n))
    jac = jacobian_tape(tf.sin)
    assert compressed(jac, x) is compresses
    check(jac, x)


@pytest.mark.parametrize("n,compresses", [(15, False), (16, True)])
def test_colour_ratio_threshold(n, compresses):
    # tridiagonal: 3 colours + the zero direction = 4 <= RATIO * n from n = 16 on
    x = tf.constant(np.linspace(-1.0, 1.0, n))
    h = hessian_tapes(rosenbrock)
    assert compressed(h, x) is compresses
    check(h, x)


def test_thresholds_are_the_cost_models():
    assert traced.RATIO == 0.25 and traced.MIN_SIZE == 8


def test_chunk_size_below_the_compressed_rows_stays_dense():
    x = tf.constant(np.linspace(0.5, 1.5, 32))
    assert not compressed(jacobian_tape(stencil, chunk_size=3), x)
    assert compressed(jacobian_tape(stencil, chunk_size=4), x)
    check(jacobian_tape(stencil, chunk_size=3), x)


def test_detection_must_fit_the_memory_budget():
    x = tf.constant(np.linspace(0.5, 1.5, 64))
    jac = jacobian_tape(stencil)
    # the detection needs about 62 rows x (the sizes on the path) + 5 x 62**2 bytes
    tf.config.set_memory_budget(256 << 10)
    try:
        assert compressed(jac, x)
        tf.config.set_memory_budget(16 << 10)
        assert not compressed(jac, x)
        check(jac, x)
    finally:
        tf.config.set_memory_budget(None)


def test_empty_and_scalar_targets():
    x = tf.constant(np.linspace(0.0, 1.0, 12))
    check(jacobian_tape(lambda x: x[:0] * 2.0, mode="forward"), x)
    j = jacobian_tape(lambda x: tf.reduce_sum(x[:2] * x[:2]), mode="forward")
    assert compressed(j, x)  # depends on 2 of 12: 2 colours + the zero direction <= 12 / 4
    check(j, x)


def test_float32():
    x = tf.constant(np.linspace(-1.0, 1.0, 24), dtype=tf.float32)
    h = hessian_tapes(rosenbrock)
    assert compressed(h, x)
    got = check(h, x)
    assert got.dtype == np.float32


def test_symbolic_sizes_stay_dense_and_hold_for_every_size(monkeypatch):
    # reduce_retracing: later traces have a symbolic size (one program for many sizes),
    # which a colouring of one size must not serve
    asked = []

    def spy(path, target, source, *args, **kwargs):
        out = traced.sparse_jacobian(path, target, source, *args, **kwargs)
        asked.append((all(type(d) is int for d in source.shape), out is not None))
        return out

    monkeypatch.setattr(hooks, "sparse_jacobian", spy)
    h = tf.function(hessian_tapes(rosenbrock), reduce_retracing=True)
    for n in (16, 40, 33, 64, 16, 5):
        x = tf.constant(np.linspace(-1.0, 1.0, n))
        assert_same(h(x).numpy(), hessian_tapes(rosenbrock)(x).numpy())
    assert (True, True) in asked and (False, False) in asked
    assert (False, True) not in asked


def test_a_retrace_at_a_new_size_gets_its_own_plan():
    h = tf.function(hessian_tapes(rosenbrock))
    for n in (16, 40, 16, 64):
        x = tf.constant(np.linspace(-1.0, 1.0, n))
        assert_same(h(x).numpy(), hessian_tapes(rosenbrock)(x).numpy())


def test_outer_tape_differentiates_the_compressed_jacobian():
    w = tf.constant(np.random.default_rng(4).normal(size=(18, 20)))

    def third(x):
        with tf.GradientTape() as t3:
            t3.watch(x)
            s = tf.reduce_sum(jacobian_tape(stencil)(x) * w)
        return t3.gradient(s, x)

    x = tf.constant(np.linspace(0.5, 1.5, 20))
    assert compressed(jacobian_tape(stencil), x)
    np.testing.assert_allclose(tf.function(third)(x).numpy(), third(x).numpy(), rtol=1e-14)
    # d/dx of sum(w * J) for J = diag-ish of 0.3 x^2: only the cubic term has a 2nd derivative
    xs = x.numpy()
    expect = np.zeros(20)
    expect[1:-1] = 0.6 * xs[1:-1] * w.numpy()[np.arange(18), np.arange(1, 19)]
    np.testing.assert_allclose(third(x).numpy(), expect, rtol=1e-12, atol=1e-14)


def test_derivative_cache_pass_of_a_repeated_eager_jacobian():
    x = tf.constant(np.linspace(0.5, 1.5, 48))
    jac = jacobian_tape(stencil)
    ref = jac(x).numpy()
    tf.config.set_derivative_cache(True)
    for _ in range(5):  # the third sighting compiles the pass (and compresses it)
        assert_same(jac(x).numpy(), ref)


# -- batch_jacobian ----------------------------------------------------------------------------
def per_example(x):
    # each example: an elementwise map and a stencil along its 16 features
    return tf.concat([tf.sin(x) * x, x[:, 1:] - x[:, :-1]], axis=1)


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_batch_jacobian_of_independent_examples(mode):
    x = tf.constant(np.random.default_rng(5).normal(size=(6, 16)))
    jac = batch_jacobian_tape(per_example, mode=mode)
    assert compressed(jac, x)
    check(jac, x)


def test_batch_jacobian_non_finite_and_dense_examples():
    v = np.random.default_rng(6).uniform(0.0, 1.0, size=(4, 16))
    v[1, 3] = 0.0
    v[2, 5] = np.inf
    x = tf.constant(v)
    check(batch_jacobian_tape(lambda x: tf.sqrt(x) - 2.0 * x), x)
    dense = batch_jacobian_tape(lambda x: tf.tanh(tf.matmul(x, tf.ones((16, 16), tf.float64))))
    assert not compressed(dense, x)
    check(dense, x)


def test_coupled_batch_jacobian_warns_and_agrees():
    x = tf.constant(np.random.default_rng(7).normal(size=(5, 16)))
    f = lambda x: tf.sin(x) - tf.reduce_mean(x, axis=0)  # noqa: E731
    jac = batch_jacobian_tape(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BatchCouplingWarning)
        ref = jac(x).numpy()
        got = tf.function(jac)(x).numpy()
    assert_same(got, ref)


def test_plan_refuses_what_cannot_pay_and_recovers_every_entry():
    tri = np.eye(12, dtype=bool) | np.eye(12, k=1, dtype=bool) | np.eye(12, k=-1, dtype=bool)
    assert traced.make_plan(np.ones((12, 12), bool), reverse=False) is None
    assert traced.make_plan(tri[:, :7], reverse=False) is None  # 7 columns: below MIN_SIZE
    rng = np.random.default_rng(8)
    for reverse in (False, True):
        for _ in range(20):
            p = rng.random((30, 40)) < 0.03
            plan = traced.make_plan(p, reverse)
            if plan is None:
                continue
            m, n = p.shape
            jac = np.where(p, rng.normal(size=p.shape), 0.0)
            r = plan.directions @ jac if reverse else plan.directions @ jac.T  # (k, n) or (k, m)
            flat = np.ravel_multi_index(plan.index, (m, n)).ravel()
            assert np.unique(flat).size == flat.size  # each entry of R has its own place
            out = np.zeros((m, n))
            out[plan.index] = r
            np.testing.assert_array_equal(out, jac)
            assert not plan.directions[-1].any()  # the zero direction


# -- random programs: compressed == dense, bit for bit ---------------------------------------
UNARY = [tf.sin, tf.sqrt, tf.math.log, lambda a: a * a, lambda a: -a, tf.tanh, tf.exp,
         lambda a: 1.0 / a, tf.abs, tf.nn.relu]
BINARY = [lambda a, b: a * b, lambda a, b: a - b, lambda a, b: a / b, tf.maximum, tf.atan2]


def random_program(rng, axis):
    steps = [(int(rng.integers(len(UNARY))), None) if rng.random() < 0.5 else
             (int(rng.integers(len(BINARY))), int(rng.integers(1, 3)))
             for _ in range(rng.integers(2, 5))]

    def shift(a, k):  # a neighbour k places on, cyclically: a banded pattern
        n = a.shape[axis]
        return tf.concat([tf.gather(a, list(range(k, n)), axis=axis),
                          tf.gather(a, list(range(k)), axis=axis)], axis=axis)

    def f(x):
        a = x
        for op, k in steps:
            a = UNARY[op](a) if k is None else BINARY[op](a, shift(x, k))
        return a
    return f


def _special_values(rng, shape):
    v = rng.normal(size=shape)
    v.ravel()[rng.integers(0, v.size, 3)] = rng.choice([0.0, -0.0, np.inf, -np.inf, np.nan], 3)
    return tf.constant(v)


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_match_the_dense_basis(seed):
    rng = np.random.default_rng(100 + seed)
    f = random_program(rng, 0)
    x = _special_values(rng, 24)
    for fn in (jacobian_tape(f, mode="forward"), jacobian_tape(f, mode="reverse"),
               hessian_tapes(lambda x: tf.reduce_sum(f(x)))):
        check(fn, x)
    g = random_program(rng, 1)
    xb = _special_values(rng, (3, 24))
    for mode in ("forward", "reverse"):
        check(batch_jacobian_tape(g, mode=mode), xb)
