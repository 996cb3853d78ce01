"""Compiled passes that outer tapes record (``tapegrad/compile/recorded_pass.py``).

Each program is run several times with the cache on (noted, keyed, compiled and checked,
then replayed) and compared, bit for bit, with the plain interpreter
(``set_derivative_cache(False)``) on the same values: the results, and what the outer tapes
make of what they recorded (their gradients and Jacobians).
"""
import numpy as np
import pytest
from test_primitives import _cases, _draw, _need

import tapegrad as tf
from tapegrad.compile import derivative_cache, recorded_pass


@pytest.fixture(autouse=True)
def fresh():
    derivative_cache.clear()
    recorded_pass.clear()
    tf.config.set_derivative_cache(True)
    yield
    tf.config.set_derivative_cache(True)
    derivative_cache.clear()
    recorded_pass.clear()


def _bits(xs):
    return [None if x is None else (x.dtype, x.shape, np.asarray(x).tobytes()) for x in xs]


def _numpy(xs):
    return [None if x is None else x.numpy() for x in xs]


def _compare(step, args_of, times=5, compiled=True):
    """``step(*args_of(i))`` with the cache on, ``times`` times, each against the plain
    interpreter on the same arguments; returns whether each run used recorded passes
    (``compiled``: what the last run must say; None: either)."""
    hits = []
    for i in range(times):
        args = args_of(i)
        before = recorded_pass.hits()
        got = _numpy(step(*args))
        hits.append(recorded_pass.hits() > before)
        tf.config.set_derivative_cache(False)
        try:
            want = _numpy(step(*args))
        finally:
            tf.config.set_derivative_cache(True)
        assert _bits(got) == _bits(want), f"run {i}"
    if compiled is not None:
        assert hits[-1] == compiled, hits
    return hits


def _mlp(params, x):
    h = x
    for i in range(0, len(params) - 2, 2):
        h = tf.tanh(tf.matmul(h, params[i]) + params[i + 1])
    return tf.matmul(h, params[-2]) + params[-1]


def _pinn_step(params, tx, nu=0.01):
    with tf.GradientTape() as outer:
        outer.watch(params)
        with tf.GradientTape() as t2:
            t2.watch(tx)
            with tf.GradientTape() as t1:
                t1.watch(tx)
                u = _mlp(params, tx)
            du = t1.gradient(u, tx)
            u_x = du[:, 1:2]
        u_xx = t2.gradient(u_x, tx)[:, 1:2]
        r = du[:, 0:1] + u * u_x - nu * u_xx
        loss = tf.reduce_mean(r * r)
    return outer.gradient(loss, params) + [du, u_xx]


def _pinn_data(dtype, n=16, sizes=(2, 8, 8, 1), seed=0, special=False):
    rng = np.random.default_rng(seed)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params.append(tf.constant((rng.standard_normal((a, b)) / np.sqrt(a)).astype(dtype)))
        params.append(tf.constant((0.1 * rng.standard_normal(b)).astype(dtype)))
    tx = rng.standard_normal((n, 2)).astype(dtype)
    if special:
        tx[0, 0], tx[1, 1], tx[2, 0], tx[3, 1] = np.nan, np.inf, -np.inf, -0.0
    return params, tf.constant(tx)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_pinn_step_equals_the_interpreter(dtype):
    hits = _compare(_pinn_step, lambda i: _pinn_data(dtype, seed=i))
    assert hits[:2] == [False, False]


def test_nan_inf_and_negative_zero_inputs():
    _compare(_pinn_step, lambda i: _pinn_data(np.float32, seed=i, special=True))


def test_a_new_shape_is_a_new_structure():
    # the batch size changes every other call: no program is reused at another shape
    _compare(_pinn_step, lambda i: _pinn_data(np.float64, n=(16, 24)[i % 2], seed=i),
             times=8)


def test_third_order_nested_tapes():
    def step(x, w):
        with tf.GradientTape() as t3:
            t3.watch([x, w])
            with tf.GradientTape() as t2:
                t2.watch(x)
                with tf.GradientTape() as t1:
                    t1.watch(x)
                    y = tf.reduce_sum(tf.tanh(x * w) * tf.sin(x))
                g1 = t1.gradient(y, x)
            g2 = t2.gradient(g1, x)
            s = tf.reduce_sum(g2 * g2)
        return [g1, g2] + t3.gradient(s, [x, w])

    rng = np.random.default_rng(3)
    _compare(step, lambda i: (tf.constant(rng.standard_normal(5)),
                              tf.constant(rng.standard_normal(5))))


def test_persistent_inner_tape_used_twice():
    def step(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape(persistent=True) as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.exp(x) * x)
                z = tf.reduce_sum(tf.sin(x) * x)
            gy = inner.gradient(y, x)
            gz = inner.gradient(z, x)
            gy2 = inner.gradient(y, x)  # the same structure again, on the same tape
            s = tf.reduce_sum(gy * gz + gy2)
        return [gy, gz, gy2, outer.gradient(s, x)]

    rng = np.random.default_rng(4)
    _compare(step, lambda i: (tf.constant(rng.standard_normal(4)),))


def test_a_persistent_tape_records_its_own_pass_inside_its_block():
    def step(x):
        with tf.GradientTape(persistent=True) as t:
            t.watch(x)
            y = tf.reduce_sum(tf.tanh(x) * x)
            g = t.gradient(y, x)  # recorded by t itself
            s = tf.reduce_sum(g * g)
        return [g, t.gradient(s, x)]

    rng = np.random.default_rng(5)
    _compare(step, lambda i: (tf.constant(rng.standard_normal(3)),))


def test_the_lessons_variable_code():
    x = tf.Variable(2.0)

    def step():
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = x * x * x
            dy_dx = t1.gradient(y, x)
        return [dy_dx, t2.gradient(dy_dx, x)]

    _compare(step, lambda i: ())
    assert float(step()[1]) == 12.0


def test_cost_model_threshold_both_sides():
    x = tf.constant(1.5)

    def one_entry():  # x**3: one entry, below MIN_ENTRIES: interpreted
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = x ** 3
            dy = inner.gradient(y, x)
        return [dy, outer.gradient(dy, x)]

    def two_entries():
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.sin(x) * x
            dy = inner.gradient(y, x)
        return [dy, outer.gradient(dy, x)]

    assert recorded_pass.MIN_ENTRIES == 2
    _compare(one_entry, lambda i: (), compiled=False)
    _compare(two_entries, lambda i: ())


def test_the_outer_tapes_jacobian_and_a_paused_outer_tape():
    def step(x):
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.tanh(x) ** 2 * x)
            g = inner.gradient(y, x)
        return [g, outer.jacobian(g, x), outer.gradient(g, x)]

    def paused(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.tanh(x) * x)
            with outer.stop_recording():
                g = inner.gradient(y, x)  # the outer tape records nothing of it
            h = g * x
        return [g, outer.gradient(tf.reduce_sum(h), x)]

    rng = np.random.default_rng(6)
    _compare(step, lambda i: (tf.constant(rng.standard_normal(3)),))
    _compare(paused, lambda i: (tf.constant(rng.standard_normal(3)),))


def test_a_forward_accumulator_keeps_the_pass_interpretive():
    def step(x):
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.sin(x) * x)
            g = inner.gradient(y, x)
        return [g, acc.jvp(g)]

    rng = np.random.default_rng(7)
    _compare(step, lambda i: (tf.constant(rng.standard_normal(3)),), compiled=False)


def test_a_program_that_differs_from_the_interpreter_is_never_used(monkeypatch):
    monkeypatch.setattr(recorded_pass, "_same", lambda a, b: False)
    _compare(_pinn_step, lambda i: _pinn_data(np.float32, seed=i), compiled=False)


def test_derived_values_are_remembered_as_the_interpreter_remembers_them():
    from tapegrad.primitives import memo
    x = tf.constant([0.3, -0.7])

    def step():
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.tanh(x) * x
            dy = t1.gradient(y, x)  # makes 1 - y*y of the tanh; t2 records it
        return [dy, t2.gradient(dy, x)], memo.remembered()

    counts = []
    for _ in range(5):
        _, c = step()
        counts.append(c)
    assert recorded_pass.hits() > 0
    tf.config.set_derivative_cache(False)
    _, want = step()
    assert counts[-1] == want


def _second_order(case, seed):
    xs = [tf.constant(a) for a in _draw(case, seed)]
    floats = [x for x in xs if x.dtype.kind == "f"]
    w = None
    with tf.GradientTape() as outer:
        outer.watch(floats)
        with tf.GradientTape() as inner:
            inner.watch(floats)
            out = case.fn(*xs)
            w = np.random.default_rng(seed).standard_normal(out.shape)
            loss = tf.reduce_sum(tf.sin(out) * tf.constant(w, dtype=out.dtype))
        gs = inner.gradient(loss, floats)
        s = tf.add_n([tf.reduce_sum(g * g) for g in gs if g is not None] or [tf.zeros(())])
    return gs + outer.gradient(s, floats)


@pytest.mark.parametrize("name,case", _cases(diff=True))
def test_every_primitive_second_order(name, case):
    _need(name)
    if case.order < 2:  # (igamma in a: TensorFlow's IgammaGradA has no gradient)
        pytest.skip("the table differentiates this case once")
    try:
        xs = _draw(case, 0)
        out = case.fn(*[tf.constant(a) for a in xs])
    except Exception:  # noqa: BLE001 - cases the table only uses another way
        pytest.skip("not a plain call")
    if out.dtype.kind != "f":
        pytest.skip("no float output")
    hits = []
    for seed in (5, 6, 7, 8):
        before = recorded_pass.hits()
        got = _numpy(_second_order(case, seed))
        hits.append(recorded_pass.hits() > before)
        tf.config.set_derivative_cache(False)
        try:
            want = _numpy(_second_order(case, seed))
        finally:
            tf.config.set_derivative_cache(True)
        assert _bits(got) == _bits(want), (name, seed)


def test_watch_accessed_variables_false_on_the_outer_tape():
    v = tf.Variable([0.4, -0.3, 1.1])

    def step(x):
        with tf.GradientTape(watch_accessed_variables=False) as outer:
            outer.watch(x)  # v is read but not watched by the outer tape
            with tf.GradientTape() as inner:
                y = tf.reduce_sum(tf.tanh(v * x) * v)
            gv = inner.gradient(y, v)
            s = tf.reduce_sum(gv * gv)
        return [gv] + outer.gradient(s, [x, v])

    rng = np.random.default_rng(8)
    _compare(step, lambda i: (tf.constant(rng.standard_normal(3), tf.float32),))


def test_custom_gradient_and_control_flow_stay_interpretive():
    @tf.custom_gradient
    def scaled(x):
        def grad(g):
            return 3.0 * g * tf.cos(x)
        return tf.sin(x), grad

    def custom(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(scaled(x) * x)
            g = inner.gradient(y, x)
        return [g, outer.gradient(g, x)]

    @tf.function
    def f(x):  # its program, run under the tapes, is recorded with its cond
        return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.reduce_sum(x * x * x),
                       lambda: tf.reduce_sum(tf.sin(x) * x))

    def branch(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        return [g, outer.gradient(g, x)]

    rng = np.random.default_rng(9)
    _compare(custom, lambda i: (tf.constant(rng.standard_normal(3)),), compiled=False)
    # the cond's own pass is interpreted; the branch's gradient inside its rule may be a
    # recorded pass of its own
    _compare(branch, lambda i: (tf.constant(np.abs(rng.standard_normal(3)) * (-1) ** i),),
             compiled=None)


def test_under_vmap_the_pass_is_interpreted():
    def per_example(x):
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = tf.reduce_sum(tf.tanh(x) * x)
            g = inner.gradient(y, x)
        return outer.gradient(tf.reduce_sum(g * g), x)

    def step(xs):
        return [tf.vectorized_map(per_example, xs)]

    rng = np.random.default_rng(10)
    _compare(step, lambda i: (tf.constant(rng.standard_normal((4, 3))),), compiled=False)


def _many_as_one_by_one(ops, watched, paused, roots=None):
    """A tape given ``ops`` by ``record_many`` keeps what one given them by ``record`` keeps."""
    one, many = tf.GradientTape(), tf.GradientTape()
    for t in (one, many):
        for v in watched:
            t._watch(v)
        t._paused = paused
    for op in ops:
        one.record(*op, (one,), 0)
    many.record_many(ops, roots)
    assert [tuple(map(id, e[1])) + (id(e[3]),) for e in many._entries] == \
        [tuple(map(id, e[1])) + (id(e[3]),) for e in one._entries], watched
    assert many._watched == one._watched


def test_record_many_keeps_what_record_keeps_one_by_one():
    """A recorded pass shows its operations to each tape in one call: each tape keeps the
    entries, in the order, that ``record`` of each would keep (watched inputs only, float
    outputs only, a chain through what it recorded, nothing while paused)."""
    from tapegrad.core.dispatch import PRIMITIVES
    x, w = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    a, b = tf.constant([5.0, 6.0]), tf.constant([1, 2])
    mul, cast = PRIMITIVES["mul"], PRIMITIVES["cast"]
    ops = [(mul, (x, w), {}, a), (mul, (a, a), {}, tf.constant([0.0, 1.0])),
           (mul, (w, w), {}, tf.constant([2.0, 2.0])), (cast, (a,), {"dtype": "int32"}, b),
           (mul, (b, b), {}, tf.constant([7, 8]))]
    for watched, paused in (([x], False), ([w], False), ([], False), ([x], True)):
        _many_as_one_by_one(ops, watched, paused)


def test_record_many_with_roots_keeps_what_record_keeps_one_by_one():
    """With the roots given (the operations that read no earlier one's output), a tape that
    sees an argument of every root appends them all at once; one that misses a root takes
    the loop: either way the entries and watched ids of ``record`` one by one."""
    from tapegrad.core.dispatch import PRIMITIVES
    mul = PRIMITIVES["mul"]
    x, w, c = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]), tf.constant([5.0, 6.0])
    a, b, d = tf.constant([0.5, 1.5]), tf.constant([2.5, 3.5]), tf.constant([4.5, 5.5])
    # roots: 0 (x * c) and 2 (w * c); 1 reads 0's output, 3 reads 1's and 2's
    ops = [(mul, (x, c), {}, a), (mul, (a, a), {}, b), (mul, (w, c), {}, d),
           (mul, (b, d), {}, tf.constant([1.0, 1.0]))]
    plan = [(mul, (0, 2), {}, 0), (mul, (3, 3), {}, 1), (mul, (1, 2), {}, 2),
            (mul, (4, 5), {}, 3)]
    roots = recorded_pass._roots(plan, 3)
    assert roots == (0, 2)
    for watched, paused in (([x, w], False), ([x], False), ([w], False), ([c], False),
                            ([], False), ([x, w], True)):
        _many_as_one_by_one(ops, watched, paused, roots)


def test_the_pinn_steps_passes_record_through_their_roots():
    params, tx = _pinn_data(np.float32)
    _compare(_pinn_step, lambda i: (params, tx), times=5)
    made = [c for c in recorded_pass._cache.values() if isinstance(c, recorded_pass._Recorded)]
    assert made and all(c.roots is not recorded_pass._UNCHECKED and c.roots for c in made)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_structure_that_changes_at_call_3_under_a_persistent_outer_tape(dtype):
    # a Python ``if`` on a value picks another inner function from call 3 on (and back at
    # call 6); the persistent outer tape is asked for its gradient twice and its Jacobian;
    # the watched input is read after every tape is gone
    calls = [0]

    def step(w, x):
        calls[0] += 1
        with tf.GradientTape(persistent=True) as outer:
            outer.watch(w)
            with tf.GradientTape() as inner:
                inner.watch(x)
                h = tf.tanh(x * w)
                if float(tf.reduce_sum(w)) > 0 and 3 <= calls[0] <= 5:  # the value decides
                    h = h * tf.sin(x) + h
                y = tf.reduce_sum(h * x)
            g = inner.gradient(y, x)
            s = tf.reduce_sum(g * g)
        first = outer.gradient(s, w)
        again = outer.gradient(s, w)
        jac = outer.jacobian(g, w)
        del outer, inner
        return [g, first, again, jac, x * 1.0]

    rng = np.random.default_rng(11)
    w = tf.constant(np.abs(rng.standard_normal(4)).astype(dtype))
    xs = [rng.standard_normal(4).astype(dtype) for _ in range(8)]
    xs[4][0], xs[5][1], xs[6][2] = np.nan, np.inf, -0.0
    hits = []
    for i, x0 in enumerate(xs):
        x = tf.constant(x0)
        before = recorded_pass.hits()
        calls[0] = i  # the cached and the plain run see the same call number
        got = _numpy(step(w, x))
        hits.append(recorded_pass.hits() > before)
        tf.config.set_derivative_cache(False)
        try:
            calls[0] = i
            want = _numpy(step(w, x))
        finally:
            tf.config.set_derivative_cache(True)
        assert _bits(got) == _bits(want), f"call {i + 1}"
        assert np.asarray(x0).tobytes() == x.numpy().tobytes()  # read after the tapes left
    assert hits[-1]  # the first structure back again: its program runs
