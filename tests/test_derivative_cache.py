"""The compiled reverse passes of repeated tapes (``tapegrad/compile/derivative_cache.py``).

Every differentiable primitive of the table in ``test_primitives``: the third gradient of a
structure runs generated code; it must equal the interpretive pass bit for bit on fresh
values (so no value of an earlier tape is baked in), for every source, including unconnected
ones.
"""
import numpy as np
import pytest
from test_primitives import _cases, _draw, _need

import tapegrad as tf
from tapegrad.compile import derivative_cache

# structures that stay interpretive by design (sub-programs in params)
INTERPRETIVE = {"cond", "while_loop"}


@pytest.fixture
def fresh_cache(monkeypatch):
    # every tape, however short (MIN_ENTRIES may change with its cost model)
    monkeypatch.setattr(derivative_cache, "MIN_ENTRIES", 1)
    derivative_cache.clear()
    tf.config.set_derivative_cache(True)
    yield
    tf.config.set_derivative_cache(True)
    derivative_cache.clear()


@pytest.fixture(params=["loop", "tuples", "generated"])
def replay_check(request, monkeypatch):
    """Both sides of ``replay.SHORT`` (the replay check's loop and its whole-tuple form) and
    of ``replay.GENERATED_MAX`` (the check as generated code, made at the first match)."""
    from tapegrad.compile import replay
    monkeypatch.setattr(replay, "SHORT", 10**9 if request.param == "loop" else 0)
    monkeypatch.setattr(replay, "GENERATED_MAX", 10**9 if request.param == "generated" else 0)


def _grads(case, seed):
    """Gradients of a weighted sum of the case's output; arrays and weights from ``seed``."""
    xs = [tf.constant(a) for a in _draw(case, seed)]
    floats = [x for x in xs if x.dtype.kind == "f"]
    with tf.GradientTape() as g:
        g.watch(floats)
        out = case.fn(*xs)
        w = np.random.default_rng(seed).standard_normal(out.shape)
        loss = tf.reduce_sum(out * tf.constant(w))
    return g.gradient(loss, floats)


def _jacobians(case, seed, mode):
    xs = [tf.constant(a) for a in _draw(case, seed)]
    floats = [x for x in xs if x.dtype.kind == "f"]
    with tf.GradientTape() as g:
        g.watch(floats)
        out = case.fn(*xs)
    return g.jacobian(out, floats, mode=mode)


def _check_compiled(name, derive):
    """``derive(seed)`` twice (the structure is then known), then a third time on fresh
    values — compiled, so no value of an earlier tape may be baked in — against the
    interpreter on the same values."""
    for seed in (5, 6):
        derive(seed)
    before = derivative_cache.hits()
    got = derive(7)
    compiled = derivative_cache.hits() > before
    tf.config.set_derivative_cache(False)
    want = derive(7)
    for g, e in zip(got, want):
        assert (g is None) == (e is None)
        if e is not None:
            np.testing.assert_array_equal(g.numpy(), e.numpy())
    assert compiled == (name not in INTERPRETIVE), f"{name}: compiled={compiled}"


@pytest.mark.parametrize("name,case", _cases(diff=True))
def test_compiled_reverse_pass_equals_the_interpreter(name, case, fresh_cache):
    _need(name)
    _check_compiled(name, lambda seed: _grads(case, seed))


@pytest.mark.parametrize("mode", ["forward", "reverse"])
@pytest.mark.parametrize("name,case", _cases(diff=True))
def test_compiled_jacobian_equals_the_interpreter(name, case, mode, fresh_cache):
    _need(name)
    _check_compiled(name, lambda seed: _jacobians(case, seed, mode))


def _repeat(step, times=4):
    """Run ``step(i)`` with the cache on; return each result and whether it was compiled."""
    out = []
    for i in range(times):
        before = derivative_cache.hits()
        out.append((step(i), derivative_cache.hits() > before))
    return out


def _reference(step, i):
    tf.config.set_derivative_cache(False)
    try:
        return step(i)
    finally:
        tf.config.set_derivative_cache(True)


def _assert_same(got, want):
    for g, e in zip(got, want):
        assert (g is None) == (e is None)
        if e is not None:
            np.testing.assert_array_equal(np.asarray(g), np.asarray(e))


def test_a_training_loop_with_variables_uses_the_compiled_pass(fresh_cache):
    rng = np.random.default_rng(1)
    x = tf.constant(rng.standard_normal((8, 3)))
    y = tf.constant(rng.standard_normal((8, 1)))
    w = tf.Variable(rng.standard_normal((3, 1)))
    b = tf.Variable(np.zeros(1))

    def step(i):
        with tf.GradientTape() as g:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        gw, gb = g.gradient(loss, [w, b])
        want = _reference(lambda _: _grad_of(loss_fn=lambda: tf.reduce_mean(
            tf.square(tf.matmul(x, w) + b - y)), sources=[w, b]), i)
        _assert_same([gw.numpy(), gb.numpy()], [v.numpy() for v in want])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return float(loss)

    runs = _repeat(step, 6)
    assert [c for _, c in runs] == [False, False, True, True, True, True]
    losses = [v for v, _ in runs]
    assert losses[-1] < losses[0]


def _grad_of(loss_fn, sources, watch=(), **kw):
    with tf.GradientTape() as g:
        g.watch(list(watch))
        loss = loss_fn()
    return g.gradient(loss, sources, **kw)


def test_unconnected_sources_and_zero_fill(fresh_cache):
    x, z = tf.constant([1.0, 2.0]), tf.constant([3.0])
    for zero in ("none", "zero"):
        runs = _repeat(lambda i: _grad_of(lambda: tf.reduce_sum(tf.exp(x * (i + 1.0))), [x, z],
                                          watch=[x, z], unconnected_gradients=zero))
        for i, (got, _) in enumerate(runs):
            assert (got[1] is None) == (zero == "none")
            if zero == "zero":
                np.testing.assert_array_equal(got[1].numpy(), [0.0])
            np.testing.assert_allclose(got[0].numpy(), (i + 1.0) * np.exp(x.numpy() * (i + 1.0)))
        assert runs[-1][1]


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_jacobians_of_a_watched_source_off_the_tape(mode, fresh_cache):
    # z is watched but never used: the compiled pass has a stand-in input for it (the
    # shape of its zeros), which the call once did not pass (TypeError on the third call)
    x, z = tf.constant([0.3, 0.7]), tf.constant([1.0, 2.0, 3.0])

    def jac(i):
        with tf.GradientTape() as g:
            g.watch([x, z])
            y = tf.sin(x) * (x + i)
        return g.jacobian(y, [x, z], mode=mode, unconnected_gradients="zero")

    runs = _repeat(jac)
    assert runs[-1][1]
    for i, (got, _) in enumerate(runs):
        _assert_same([t.numpy() for t in got], [t.numpy() for t in _reference(jac, i)])
        np.testing.assert_array_equal(got[1].numpy(), np.zeros((2, 3), np.float32))


def test_watched_intermediates_multiple_targets_and_output_gradients(fresh_cache):
    rng = np.random.default_rng(2)

    def step(i):
        x = tf.constant(rng.standard_normal(4))
        with tf.GradientTape() as g:
            g.watch(x)
            h = tf.sin(x) * x
            g.watch(h)
            y1 = tf.tanh(h)
            y2 = h * h
        og = [tf.constant(rng.standard_normal(4)), tf.constant(rng.standard_normal(4))]
        got = g.gradient([y1, y2], [x, h], output_gradients=og)
        tf.config.set_derivative_cache(False)
        with tf.GradientTape() as g2:
            g2.watch(x)
            h2 = tf.sin(x) * x
            g2.watch(h2)
            z1, z2 = tf.tanh(h2), h2 * h2
        want = g2.gradient([z1, z2], [x, h2], output_gradients=og)
        tf.config.set_derivative_cache(True)
        _assert_same([t.numpy() for t in got], [t.numpy() for t in want])
        return got

    assert _repeat(step)[-1][1]


def test_value_dependent_shapes_get_their_own_program(fresh_cache):
    rng = np.random.default_rng(3)
    x = tf.constant(rng.standard_normal(6))
    for mask in ([1, 0, 1, 0, 1, 0], [1, 1, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0]) * 3:
        m = tf.constant(np.array(mask, bool))
        got = _grad_of(lambda: tf.reduce_sum(tf.boolean_mask(x, m) ** 2), x, watch=[x])
        np.testing.assert_allclose(got.numpy(), 2 * x.numpy() * np.array(mask))
    assert derivative_cache.hits() > 0


def test_index_arrays_in_params_stay_interpretive_and_correct(fresh_cache):
    x = tf.constant(np.arange(5.0))
    for k in range(4):
        idx = np.array([k % 5, (k + 2) % 5])
        with tf.GradientTape() as g:
            g.watch(x)
            loss = tf.reduce_sum(x[idx] ** 2)
        want = np.zeros(5)
        np.add.at(want, idx, 2 * x.numpy()[idx])
        np.testing.assert_allclose(g.gradient(loss, x).numpy(), want)


def test_lesson_persistent_tape_still_gives_12_every_time(fresh_cache):
    for _ in range(4):
        x = tf.Variable(2.0)
        with tf.GradientTape(persistent=True) as tape:
            y = x ** 3
        dy_dx = tape.gradient(y, x)
        d2y_dx2 = tape.gradient(dy_dx, x)
        assert float(dy_dx) == 12.0 and float(d2y_dx2) == 12.0
        del tape


def test_nested_tapes_keep_higher_derivatives(fresh_cache):
    for _ in range(4):
        x = tf.constant(2.0)
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = x ** 3
            dy = inner.gradient(y, x)
        assert float(outer.gradient(dy, x)) == 12.0


# the shortest tapes (MIN_ENTRIES): tests/test_eager_fast_paths.py


def test_switching_the_cache_off_and_bad_values():
    with pytest.raises(TypeError, match="True or False"):
        tf.config.set_derivative_cache("yes")
    tf.config.set_derivative_cache(False)
    try:
        assert tf.config.derivative_cache() is False
    finally:
        tf.config.set_derivative_cache(True)


def test_threads_share_compiled_passes_safely(fresh_cache):
    import threading
    w = tf.constant(np.random.default_rng(5).standard_normal((6, 3)))
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(15):
                x = tf.constant(rng.standard_normal((4, 6)))
                with tf.GradientTape() as g:
                    g.watch(x)
                    loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w)) ** 2)
                got = g.gradient(loss, x).numpy()
                t = np.tanh(x.numpy() @ w.numpy())
                want = (2 * t * (1 - t * t)) @ w.numpy().T
                np.testing.assert_allclose(got, want, rtol=1e-10)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
    assert derivative_cache.hits() > 0


# -- the replay check: a training loop's next tape recognised without the key ---------------
def _loop_grad(x, ws, shape_op=tf.tanh, axis=None):
    with tf.GradientTape() as g:
        g.watch(ws)
        h = x
        for w in ws:
            h = shape_op(tf.matmul(h, w))
        loss = tf.reduce_sum(h * h, axis=axis)
    return g.gradient(loss, ws)


def _loop_reference(x, ws, shape_op=tf.tanh, axis=None):
    tf.config.set_derivative_cache(False)
    try:
        return _loop_grad(x, ws, shape_op, axis)
    finally:
        tf.config.set_derivative_cache(True)


def test_replay_recognises_a_training_loop_and_matches_the_interpreter(fresh_cache, replay_check):
    rng = np.random.default_rng(7)
    x = tf.constant(rng.standard_normal((5, 4)))
    ws = [tf.Variable(rng.standard_normal((4, 4))) for _ in range(3)]
    for _ in range(6):
        got = _loop_grad(x, ws)
        _assert_same([g.numpy() for g in got], [g.numpy() for g in _loop_reference(x, ws)])
        for w, g in zip(ws, got):
            w.assign_sub(0.1 * g)
    assert derivative_cache.replay_hits() >= 2


@pytest.mark.parametrize("change", ["prim", "param", "leaf dtype", "sources"])
def test_replay_falls_back_when_anything_differs(change, fresh_cache, replay_check):
    rng = np.random.default_rng(8)
    x = tf.constant(rng.standard_normal((5, 4)))
    ws = [tf.constant(rng.standard_normal((4, 4))) for _ in range(3)]
    for _ in range(4):  # compiled, and remembered for the replay check
        _loop_grad(x, ws)
    before = derivative_cache.replay_hits()
    kw = {}
    if change == "prim":
        kw = {"shape_op": tf.sin}  # same length, same first and last primitive
    elif change == "param":
        kw = {"axis": 1}
    elif change == "leaf dtype":
        x = tf.constant(x.numpy().astype(np.float32))
        ws = [tf.constant(w.numpy().astype(np.float32)) for w in ws]
    got = _loop_grad(x, ws, **kw) if change != "sources" else None
    if change == "sources":
        with tf.GradientTape() as g:
            g.watch(ws)
            h = x
            for w in ws:
                h = tf.tanh(tf.matmul(h, w))
            loss = tf.reduce_sum(h * h)
        got = g.gradient(loss, ws[:2])  # fewer sources than remembered
        want = _loop_reference(x, ws)[:2]
    else:
        want = _loop_reference(x, ws, **kw)
    _assert_same([t.numpy() for t in got], [t.numpy() for t in want])
    assert derivative_cache.replay_hits() == before


def test_replay_falls_back_when_one_object_fills_two_leaves_places(fresh_cache, replay_check):
    # remembered: x @ w0 @ w1 @ w2 with four distinct leaves; now x is w0 itself (same shape,
    # same sources): the key numbers it once, so it is another structure
    rng = np.random.default_rng(8)
    ws = [tf.constant(rng.standard_normal((4, 4))) for _ in range(3)]
    x = tf.constant(rng.standard_normal((4, 4)))
    for _ in range(4):
        _loop_grad(x, ws)
    before = derivative_cache.replay_hits()
    got = _loop_grad(ws[0], ws)
    assert derivative_cache.replay_hits() == before
    _assert_same([t.numpy() for t in got], [t.numpy() for t in _loop_reference(ws[0], ws)])


def test_replay_falls_back_when_an_output_stands_in_a_leafs_place(fresh_cache, replay_check):
    # remembered: sin(x) * c with c a leaf; now sin(x) * sin(x): the same primitives, shapes
    # and wiring of x, but the second factor is an output, whose cotangent flows on into
    # sin (the replay once took it as a leaf and gave cos(x) * sin(x), half the gradient)
    rng = np.random.default_rng(10)
    x = tf.constant(rng.standard_normal(3))
    c = tf.constant(rng.standard_normal(3))

    def grad(square):
        with tf.GradientTape() as g:
            g.watch(x)
            s = tf.sin(x)
            y = tf.reduce_sum(s * (s if square else c))
        return g.gradient(y, x)

    for _ in range(4):
        grad(False)
    before = derivative_cache.replay_hits()
    got = grad(True)
    assert derivative_cache.replay_hits() == before
    _assert_same([got.numpy()], [_reference(lambda _: grad(True), 0).numpy()])
    np.testing.assert_allclose(got.numpy(), np.sin(2 * x.numpy()), rtol=1e-12)


def test_replay_tells_float_params_apart_by_their_bits(fresh_cache, replay_check):
    # dict equality says 0.0 == -0.0; the replay compares float params as the key does
    x = tf.constant([1.0, 2.0])

    def grad(c):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.reduce_sum(tf.pad(x * x, [[1, 1]], constant_values=c))
        return g.gradient(y, x)

    for _ in range(4):
        grad(0.0)
    before = derivative_cache.replay_hits()
    np.testing.assert_array_equal(grad(-0.0).numpy(), [2.0, 4.0])
    assert derivative_cache.replay_hits() == before
    grad(-0.0)
    assert derivative_cache.replay_hits() == before  # -0.0's own structure, not yet replayed


@pytest.mark.parametrize("change", ["leaf", "dead leaf"])
def test_replay_takes_new_leaves_of_the_same_shape_and_dtype(change, fresh_cache, replay_check):
    # a new object in a leaf's place (an inner gradient's cotangent of ones, a constant made each step)
    # leaves the structure key as it was: the replay takes it, with its values
    rng = np.random.default_rng(8)
    x = tf.constant(rng.standard_normal((5, 4)))
    ws = [tf.constant(rng.standard_normal((4, 4))) for _ in range(3)]
    for _ in range(4):
        _loop_grad(x, ws)
    before = derivative_cache.replay_hits()
    kept = x if change == "leaf" else None  # "dead leaf": the remembered one dies
    x = tf.constant(rng.standard_normal((5, 4)))  # another object, other values
    got = _loop_grad(x, ws)
    del kept
    assert derivative_cache.replay_hits() == before + 1
    _assert_same([t.numpy() for t in got], [t.numpy() for t in _loop_reference(x, ws)])


def test_replay_of_an_inner_gradients_fresh_cotangent(fresh_cache, replay_check):
    # a nested step (PINN-like): the outer tape records the inner gradient, whose cotangent of
    # ones is a new leaf every step; the outer gradient is replayed and stays exact
    rng = np.random.default_rng(3)
    x = tf.constant(rng.standard_normal((6, 2)))
    ws = [tf.constant(rng.standard_normal((2, 3))), tf.constant(rng.standard_normal((3, 1)))]

    def step():
        with tf.GradientTape() as outer:
            outer.watch(ws)
            with tf.GradientTape() as inner:
                inner.watch(x)
                u = tf.matmul(tf.tanh(tf.matmul(x, ws[0])), ws[1])
            du = inner.gradient(u, x)
            loss = tf.reduce_mean(du * du) + tf.reduce_mean(u * u)
        return outer.gradient(loss, ws)

    for _ in range(4):
        step()
    before = derivative_cache.replay_hits()
    got = step()
    assert derivative_cache.replay_hits() == before + 1
    tf.config.set_derivative_cache(False)
    try:
        want = step()
    finally:
        tf.config.set_derivative_cache(True)
    _assert_same([t.numpy() for t in got], [t.numpy() for t in want])


@pytest.mark.parametrize("depth", [2, 3])
def test_the_generated_replay_check_starts_at_generated_max(depth, fresh_cache, monkeypatch):
    # _loop_grad of 2 layers records 6 entries, of 3 layers 8: GENERATED_MAX = 7 generates
    # the check of the first only; both keep replaying and stay the interpreter's bits
    from tapegrad.compile import replay
    monkeypatch.setattr(replay, "GENERATED_MAX", 7)
    rng = np.random.default_rng(12)
    x = tf.constant(rng.standard_normal((5, 4)))
    ws = [tf.constant(rng.standard_normal((4, 4))) for _ in range(depth)]
    for _ in range(6):
        _assert_same([g.numpy() for g in _loop_grad(x, ws)],
                     [g.numpy() for g in _loop_reference(x, ws)])
    (rep,) = derivative_cache._replays.values()
    assert len(rep.prims) == 2 * depth + 2
    assert (rep.fast is not None) == (depth == 2)
    assert derivative_cache.replay_hits() >= 2


def test_the_generated_replay_check_of_a_persistent_tape(fresh_cache, replay_check):
    # a persistent tape asked twice, the first time inside its block (which records that
    # pass on the tape itself: the second sees more entries); each is the interpreter's
    rng = np.random.default_rng(13)
    x = tf.constant(rng.standard_normal((3, 4)))
    ws = [tf.constant(rng.standard_normal((4, 4))) for _ in range(2)]

    def step():
        with tf.GradientTape(persistent=True) as g:
            g.watch(ws)
            h = tf.tanh(tf.matmul(tf.tanh(tf.matmul(x, ws[0])), ws[1]))
            loss, total = tf.reduce_sum(h * h), tf.reduce_sum(h)
            first = g.gradient(total, ws)
        return first + g.gradient(loss, ws) + g.gradient(total, ws)

    for _ in range(6):
        got = step()
        tf.config.set_derivative_cache(False)
        try:
            want = step()
        finally:
            tf.config.set_derivative_cache(True)
        _assert_same([t.numpy() for t in got], [t.numpy() for t in want])
    # the two passes after the block share the replay's slot (one length, first and last
    # primitive): each replaces the other's, keyed anew, and no check is generated for them
    assert derivative_cache.hits() >= 2


def test_an_unconnected_source_is_never_replayed(fresh_cache, replay_check):
    rng = np.random.default_rng(9)
    x = tf.constant(rng.standard_normal((5, 4)))
    ws = [tf.constant(rng.standard_normal((4, 4))) for _ in range(3)]
    for _ in range(5):
        z = tf.constant(1.0)  # a fresh object each step: its id may come back
        with tf.GradientTape() as g:
            g.watch(ws + [z])
            h = x
            for w in ws:
                h = tf.tanh(tf.matmul(h, w))
            loss = tf.reduce_sum(h * h)
        got = g.gradient(loss, ws + [z])
        assert got[-1] is None
    assert derivative_cache.replay_hits() == 0 and derivative_cache.hits() > 0


def test_bias_gradients_are_the_same_sums_eager_compiled_and_cached(fresh_cache):
    # A bias gradient sums a cotangent over the batch. The NumPy-only eager pass summed with
    # np.sum (pairwise), the recorded and compiled passes with reduce_sum's BLAS row sums, so
    # the three differed in the last bits at batch 2048; every pass now uses the primitive.
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32)
              for s in [(2048, 2), (2, 32), (32,), (32, 1), (1,)]]
    x, *params = (tf.constant(a) for a in arrays)

    def grads(x, w1, b1, w2, b2):
        with tf.GradientTape() as g:
            g.watch([w1, b1, w2, b2])
            y = tf.reduce_sum((tf.tanh(x @ w1 + b1) @ w2 + b2) ** 2)
        return g.gradient(y, [w1, b1, w2, b2])

    plain = [v.numpy() for v in _reference(lambda i: grads(x, *params), 0)]
    compiled = [v.numpy() for v in tf.function(grads)(x, *params)]
    cached = _repeat(lambda i: [v.numpy() for v in grads(x, *params)])
    assert cached[-1][1]  # the last one ran generated code
    for want, got, again in zip(plain, compiled, cached[-1][0]):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(again, want)


def test_an_eager_chain_with_scalar_leaves_runs_one_fused_product(fresh_cache):
    # W6's eager chain: its 1.0001 and 0.1 are leaves of the tape (inputs of the cached
    # pass, not constants), and the chain's factors still go into one multiply.reduce
    from test_fusion import FUSED, special

    from tapegrad.testing import assert_same_bits

    def grad(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = x
            for k in range(40):
                y = [tf.sin, lambda v: v * 1.0001, tf.tanh, lambda v: v + 0.1, tf.exp][k % 5](y)
            s = tf.reduce_sum(y)
        return g.gradient(s, x)

    for seed in range(5):
        x = tf.constant(special((16,), "float32", seed) * 0.5)
        with np.errstate(all="ignore"):
            got = grad(x)
            want = _reference(lambda _: grad(x), 0)
        assert_same_bits(got.numpy(), want.numpy())
    assert derivative_cache.hits() >= 2
    assert any(FUSED in src for src in derivative_cache.cached_sources())
