"""tapegrad.scipy keeps compiled programs between solver calls (tapegrad/scipy/reuse.py) and
reuses them only when the fresh trace is exactly the cached one: a changed closure variable,
global, default argument, ``args`` value or array gives a fresh computation, and a reused
one gives the very numbers a fresh computation gives."""
import numpy as np
import pytest

import tapegrad as tf

pytest.importorskip("scipy.integrate")
import tapegrad.scipy as tgs  # noqa: E402
from tapegrad.compile.function import Function  # noqa: E402
from tapegrad.scipy import reuse  # noqa: E402
from tapegrad.scipy.traced import Traced  # noqa: E402
from tapegrad.sparsity import large  # noqa: E402

GAIN = 1.0  # read by rhs_global


def rhs_global(t, y):
    return -GAIN * y + tf.sin(t)


def chain(n=80):
    """A stiff reaction chain with a banded (sparse-paying) Jacobian."""
    def f(t, y, k=3.0):
        up = tf.concat([y[:1] * 0.0, y[:-1]], 0)
        return k * (up - y) - 50.0 * y ** 3 + tf.cos(t)
    return f, np.linspace(0.1, 1.0, n)


@pytest.fixture
def traces(monkeypatch):
    """Counts every trace: of ``fun`` itself (``Traced``) and of each derived program."""
    reuse.clear()
    count = {"traces": 0, "patterns": 0}
    trace_once, pattern, traced = Function._trace_once, large.program_pattern, Traced.__init__

    def counting_trace(self, *a, **k):
        count["traces"] += 1
        return trace_once(self, *a, **k)

    def counting_traced(self, *a, **k):
        count["traces"] += 1
        return traced(self, *a, **k)
    monkeypatch.setattr(Traced, "__init__", counting_traced)

    def counting_pattern(*a, **k):
        count["patterns"] += 1
        return pattern(*a, **k)
    monkeypatch.setattr(Function, "_trace_once", counting_trace)
    monkeypatch.setattr(large, "program_pattern", counting_pattern)
    yield count
    reuse.clear()


def _fresh(solve):
    """``solve()`` with nothing kept: the reference a reused solve must equal exactly."""
    reuse.clear()
    return solve()


def _same(a, b):
    assert a.success and b.success
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.y, b.y)


def test_an_unchanged_solve_reuses_everything(traces):
    f, y0 = chain()
    solve = lambda: tgs.solve_ivp(f, (0.0, 2.0), y0, method="BDF")  # noqa: E731
    first = solve()
    assert first.njev >= 1 and traces["patterns"] == 1
    n_first = traces["traces"]
    assert n_first >= 2  # f itself, then the compressed Jacobian built from it
    second = solve()
    # one trace to compare with the kept one; no pattern, no colouring, no derived program
    assert traces["traces"] == n_first + 1 and traces["patterns"] == 1
    assert second.programs == first.programs  # counts are per solve
    _same(second, first)


def test_a_new_lambda_with_the_same_program_is_reused(traces):
    y0 = np.ones(3)
    tgs.solve_ivp(lambda t, y: -2.0 * y, (0.0, 1.0), y0, method="Radau")
    n = traces["traces"]
    sol = tgs.solve_ivp(lambda t, y: -2.0 * y, (0.0, 1.0), y0, method="Radau")
    assert traces["traces"] == n + 1
    _same(sol, _fresh(lambda: tgs.solve_ivp(lambda t, y: -2.0 * y, (0.0, 1.0), y0,
                                            method="Radau")))


def test_a_changed_closure_variable_is_seen(traces):
    k = 1.0

    def f(t, y):
        return -k * y

    y0 = np.ones(4)
    solve = lambda: tgs.solve_ivp(f, (0.0, 1.0), y0, method="BDF", rtol=1e-8, atol=1e-10)  # noqa: E731
    a = solve()
    np.testing.assert_allclose(a.y[:, -1], np.exp(-1.0), rtol=1e-5)
    k = 3.0
    b = solve()
    np.testing.assert_allclose(b.y[:, -1], np.exp(-3.0), rtol=1e-5)
    _same(b, _fresh(solve))


def test_a_changed_global_is_seen(traces):
    global GAIN
    y0 = np.zeros(2)
    solve = lambda: tgs.solve_ivp(rhs_global, (0.0, 1.0), y0, method="BDF")  # noqa: E731
    try:
        a = solve()
        GAIN = 5.0
        b = solve()
        assert np.abs(a.y[:, -1] - b.y[:, -1]).max() > 1e-2
        _same(b, _fresh(solve))
    finally:
        GAIN = 1.0


def test_a_changed_default_argument_is_seen(traces):
    f, y0 = chain(12)
    solve = lambda: tgs.solve_ivp(f, (0.0, 1.0), y0, method="BDF")  # noqa: E731
    a = solve()
    f.__defaults__ = (7.0,)
    b = solve()
    assert np.abs(a.y[:, -1] - b.y[:, -1]).max() > 1e-3
    _same(b, _fresh(solve))


def test_changed_args_are_seen_and_equal_args_reuse(traces):
    def f(t, y, rate, shift):
        return -rate * (y - shift)

    y0 = np.zeros(3)
    shift = np.array([1.0, 2.0, 3.0])
    solve = lambda rate: tgs.solve_ivp(f, (0.0, 1.0), y0, method="LSODA",  # noqa: E731
                                       args=(rate, shift))
    a = solve(2.0)
    n = traces["traces"]
    again = solve(2.0)
    assert traces["traces"] == n + 1  # equal args: reused
    _same(again, a)
    b = solve(4.0)
    np.testing.assert_allclose(b.y[:, -1], shift * (1 - np.exp(-4.0)), rtol=1e-3)
    _same(b, _fresh(lambda: solve(4.0)))
    shift[1] = -2.0  # an argument array changed in place
    c = solve(4.0)
    assert c.y[1, -1] < 0
    _same(c, _fresh(lambda: solve(4.0)))


def test_a_variable_is_read_at_run_time_and_reuses(traces):
    rate = tf.Variable(1.0, dtype=tf.float64)
    f = lambda t, y: -rate * y  # noqa: E731
    solve = lambda: tgs.solve_ivp(f, (0.0, 1.0), np.ones(2), method="BDF",  # noqa: E731
                                  rtol=1e-8, atol=1e-10)
    solve()
    n = traces["traces"]
    rate.assign(2.0)
    b = solve()
    assert traces["traces"] == n + 1  # the Variable is an input, not a constant: reused
    np.testing.assert_allclose(b.y[:, -1], np.exp(-2.0), rtol=1e-5)
    _same(b, _fresh(solve))


def test_a_time_dependent_rhs_reuses_with_its_own_t(traces):
    f = lambda t, y: tf.cos(t) * tf.ones_like(y)  # noqa: E731
    for _ in range(2):
        sol = tgs.solve_ivp(f, (0.0, 2.0), np.zeros(1), method="BDF", rtol=1e-9, atol=1e-12)
        assert abs(sol.y[0, -1] - np.sin(2.0)) < 1e-6


def test_constants_compare_exactly():
    x0 = np.ones(3)
    pairs = [(0.0, -0.0), (1.0, 1.0 + 2 ** -52), (np.nan, 1.0)]
    for a, b in pairs:
        reuse.clear()
        ca = reuse.compiled(lambda x, c=a: x * c, x0)
        reuse.release(ca)
        cb = reuse.compiled(lambda x, c=b: x * c, x0)
        assert cb is not ca
        got, want = cb.vector(x0), x0 * b
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(got, want)
    reuse.clear()
    nan = reuse.compiled(lambda x: x * np.nan, x0)
    reuse.release(nan)
    assert reuse.compiled(lambda x: x * np.nan, x0) is nan  # NaN is NaN, bit for bit
    reuse.clear()


def test_an_entry_in_use_is_not_shared():
    reuse.clear()
    a = reuse.compiled(lambda x: tf.reduce_sum(x ** 2), np.ones(2))
    b = reuse.compiled(lambda x: tf.reduce_sum(x ** 2), np.ones(2))  # a not released yet
    assert b is not a
    reuse.release(a)
    reuse.release(b)
    assert reuse.compiled(lambda x: tf.reduce_sum(x ** 2), np.ones(2)) in (a, b)
    reuse.clear()


def test_untraceable_fun_is_never_kept():
    reuse.clear()
    with pytest.raises(tgs.TraceError, match="trace=False"):
        tgs.solve_ivp(lambda t, y: y if float(tf.reduce_sum(y)) > 0 else -y, (0.0, 1.0),
                      np.ones(2))
    sol = tgs.solve_ivp(lambda t, y: -y if float(tf.reduce_sum(y)) > 0 else y, (0.0, 1.0),
                        np.ones(2), trace=False)
    assert sol.success and not reuse._entries


def test_a_result_aliasing_y_is_not_kept_as_a_view():
    c = reuse.compiled(lambda y: y[1:], np.arange(4.0))
    y = np.arange(4.0)
    r = c.vector(y)
    y += 10.0  # the caller updates y in place (BDF's Newton iteration does)
    np.testing.assert_array_equal(c.vector(np.arange(4.0)), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(r, [1.0, 2.0, 3.0])
    reuse.clear()


def test_minimize_least_squares_and_root_reuse_and_see_changes(traces):
    target = np.array([1.0, -2.0, 3.0])

    def loss(x):
        return tf.reduce_sum((x - target) ** 2 * scale) + 0.1 * tf.reduce_sum(x ** 4)

    def resid(x):
        return (x - target) * scale + 0.1 * x ** 3

    scale = 1.0
    x0 = np.zeros(3)
    runs = {"minimize": lambda: tgs.minimize(loss, x0, method="trust-ncg"),
            "least_squares": lambda: tgs.least_squares(resid, x0),
            "root": lambda: tgs.root(resid, x0, method="hybr")}
    for name, run in runs.items():
        scale = 1.0
        first = run()
        n = traces["traces"]
        again = run()
        assert traces["traces"] == n + 1, name  # only the trace that is compared
        np.testing.assert_array_equal(again.x, first.x)
        assert again.programs == first.programs
        scale = 4.0
        changed = run()
        assert np.abs(changed.x - first.x).max() > 1e-3, name
        np.testing.assert_array_equal(changed.x, _fresh(run).x)


def test_minimize_constraints_are_reused_and_see_changes(traces):
    # the objective is linear: its gradient is a constant of the program, which SLSQP must
    # get as an array of its own (it writes into it; a read-only one stalled it)
    radius = 1.0
    con = {"type": "ineq", "fun": lambda x: radius - tf.reduce_sum(x ** 2, keepdims=True)}
    run = lambda: tgs.minimize(lambda x: -tf.reduce_sum(x), np.array([0.3, 0.1]),  # noqa: E731
                               method="SLSQP", constraints=[con])
    a = run()
    np.testing.assert_allclose(a.x, np.sqrt(0.5), rtol=1e-5)
    n = traces["traces"]
    np.testing.assert_array_equal(run().x, a.x)
    assert traces["traces"] == n + 2  # the objective's and the constraint's compared traces
    radius = 4.0
    b = run()
    np.testing.assert_allclose(b.x, np.sqrt(2.0), rtol=1e-4)
    np.testing.assert_array_equal(b.x, _fresh(run).x)


def test_results_are_arrays_of_their_own():
    from tapegrad.scipy.compiled import Compiled
    x = np.array([1.0, 2.0, 3.0])
    lin = Compiled(lambda x: tf.reduce_sum(2.0 * x), x)   # constant gradient, zero Hessian
    ident = Compiled(lambda x: x * 1.0 + 0.0, x)          # may return x itself
    outs = [lin.grad(x), lin.grad(x), lin.hessp(x, x), lin.hess(x), ident.vector(x),
            ident.vector(x), ident.jvp(x, x), ident.jac(x), ident.jac(x)]
    for a in outs:
        assert a.flags.writeable and not np.may_share_memory(a, x)
    assert not np.may_share_memory(outs[0], outs[1]) and outs[4] is not outs[5]
    outs[0][:] = 7.0  # the caller writes into what it got: the kept value is untouched
    outs[4][:] = 7.0
    np.testing.assert_array_equal(lin.grad(x), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(ident.vector(x), x)
    assert lin.calls["value_and_grad"] == 1 and ident.calls["vector"] == 1


# -- the one trace of fun (tapegrad/scipy/traced.py) ------------------------------------------
def test_fun_assigning_a_variable_updates_it_per_run():
    from tapegrad.scipy.compiled import Compiled
    calls = tf.Variable(0.0, dtype=tf.float64)

    def f(x):
        calls.assign_add(1.0)
        return tf.reduce_sum(x ** 2)

    c = Compiled(f, np.zeros(2))
    c.vector(np.array([1.0, 2.0]))
    c.vector(np.array([1.0, 3.0]))
    assert float(calls.numpy()) == 2.0  # one per program run, as tapegrad.function does
    v, g = c.value_and_grad(np.array([1.0, 2.0]))
    assert v == 5.0 and g.tolist() == [2.0, 4.0] and float(calls.numpy()) == 3.0


def test_fun_creating_variables():
    state = {}

    def once(x):  # a Variable made on the first trace only: allowed, as in tf.function
        if "w" not in state:
            state["w"] = tf.Variable(np.array([2.0, 3.0]))
        return tf.reduce_sum(state["w"] * x ** 2)

    res = tgs.minimize(once, np.ones(2), method="BFGS")
    assert res.success and np.allclose(res.x, 0.0, atol=1e-6)
    with pytest.raises(tgs.TraceError, match="singleton"):
        tgs.minimize(lambda x: tf.reduce_sum(tf.Variable(np.ones(2)) * x ** 2), np.ones(2))


def test_list_and_constant_results():
    res = tgs.root(lambda x: [x[0] ** 2 - 2.0, x[1] - 1.0], np.array([1.0, 0.0]))
    np.testing.assert_allclose(res.x, [np.sqrt(2.0), 1.0], rtol=1e-8)
    res = tgs.minimize(lambda x: 3.0, np.array([1.0, 0.0]), method="BFGS")  # constant: g = 0
    assert res.success and res.fun == 3.0 and res.x.tolist() == [1.0, 0.0]


def test_a_custom_gradient_is_differentiated_as_written(traces):
    # the bare trace keeps only the forward operations of a tf.custom_gradient; the
    # gradient SciPy gets must still be the custom one (and such a fun is not kept)
    @tf.custom_gradient
    def clip_grad(x):
        return tf.identity(x), lambda dy: tf.clip_by_value(dy, -0.5, 0.5)

    def f(x):
        return tf.reduce_sum(clip_grad(x) ** 2)

    from tapegrad.scipy.compiled import Compiled
    x = np.array([1.0, 2.0, 0.1])
    want = tf.grad(f)(tf.constant(x)).numpy()
    assert want.tolist() == [0.5, 0.5, 0.2]
    np.testing.assert_array_equal(Compiled(f, x).grad(x), want)
    np.testing.assert_array_equal(tgs.value_and_grad(f)(x)[1], want)
    tgs.minimize(f, x, method="BFGS", options={"maxiter": 1})
    assert not reuse._entries
