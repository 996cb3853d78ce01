"""A used-up tape's arrays handed over to its compiled pass (``compile/handover.py``).

The pass may write its results into arrays that only the tape holds, after their last use.
Every test compares with the plain interpreter bit for bit, and checks that whatever the
user still holds (a tensor, a view of one, a persistent tape) keeps its values.
"""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.compile import derivative_cache, recorded_pass, replay


@pytest.fixture(autouse=True, params=["loop", "tuples", "generated"])
def fresh(request, monkeypatch):
    # the three forms of the replay check, which hand the pass its outputs in different
    # sequences
    monkeypatch.setattr(replay, "SHORT", 10**9 if request.param == "loop" else 0)
    monkeypatch.setattr(replay, "GENERATED_MAX", 10**9 if request.param == "generated" else 0)
    derivative_cache.clear()
    recorded_pass.clear()
    tf.config.set_derivative_cache(True)
    yield
    tf.config.set_derivative_cache(True)
    derivative_cache.clear()


N = 1024  # 1024 x 32 float32: 128 KB arrays, above DONATE_BYTES


def _data(seed, n=N, width=32, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x = tf.constant(rng.standard_normal((n, 4)).astype(dtype))
    ws = [tf.constant((rng.standard_normal((a, b)) / 2).astype(dtype))
          for a, b in ((4, width), (width, width), (width, 1))]
    return x, ws


def _loss(x, ws, keep):
    h = x
    for w in ws[:-1]:
        h = tf.tanh(tf.matmul(h, w))
        if keep is not None:
            keep.append(h)
    y = tf.matmul(h, ws[-1])
    return tf.reduce_mean(y * y)


def _step(x, ws, keep):
    with tf.GradientTape() as g:
        g.watch(ws)
        loss = _loss(x, ws, keep)
    return g.gradient(loss, ws)


def _reference(x, ws):
    tf.config.set_derivative_cache(False)
    try:
        return [t.numpy() for t in _step(x, ws, None)]
    finally:
        tf.config.set_derivative_cache(True)


def _compiled():
    return [c for c in derivative_cache._cache.values()
            if type(c) is derivative_cache._Compiled]


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()


def test_the_arrays_only_the_tape_holds_are_handed_over():
    for seed in range(6):
        x, ws = _data(seed)
        _same([t.numpy() for t in _step(x, ws, None)], _reference(x, ws))
    (c,) = _compiled()
    assert c.donating and len(c.donating[1]) >= 2


def test_tensors_the_user_keeps_are_not_overwritten():
    for seed in range(6):
        x, ws = _data(seed)
        keep = []  # the hidden activations: the user holds them, so the pass must not write
        got = [t.numpy() for t in _step(x, ws, keep)]
        _same(got, _reference(x, ws))
        again = []
        _loss(x, ws, again)
        _same([k.numpy() for k in keep], [a.numpy() for a in again])


def test_views_the_user_keeps_are_not_overwritten():
    for seed in range(6):
        x, ws = _data(seed)
        with tf.GradientTape() as g:
            g.watch(ws)
            h = tf.tanh(tf.matmul(x, ws[0]))
            part = h[:, :3]  # a view of h's array: h's buffer must stay as it is
            h2 = tf.tanh(tf.matmul(h, ws[1]))
            loss = tf.reduce_mean(tf.matmul(h2, ws[2]) ** 2)
        before = part.numpy()
        del h, h2
        got = [t.numpy() for t in g.gradient(loss, ws)]
        _same(got, _reference(x, ws))
        _same([part.numpy()], [before])


def test_a_persistent_tape_keeps_its_arrays():
    for seed in range(6):
        x, ws = _data(seed)
        with tf.GradientTape(persistent=True) as g:
            g.watch(ws)
            loss = _loss(x, ws, None)
        first = [t.numpy() for t in g.gradient(loss, ws)]
        second = [t.numpy() for t in g.gradient(loss, ws)]
        want = _reference(x, ws)
        _same(first, want)
        _same(second, want)


def test_small_arrays_are_not_handed_over():
    # below DONATE_BYTES: the check would cost more than the array's allocation
    for seed in range(6):
        x, ws = _data(seed, n=16, width=8)
        _same([t.numpy() for t in _step(x, ws, None)], _reference(x, ws))
    (c,) = _compiled()
    assert c.donating == ()


def test_nested_tapes_and_nan_inputs():
    def step(x, w):
        with tf.GradientTape() as outer:
            outer.watch(w)
            with tf.GradientTape() as inner:
                inner.watch(x)
                u = tf.matmul(tf.tanh(tf.matmul(x, w)), tf.transpose(w))
            du = inner.gradient(u, x)
            loss = tf.reduce_mean(du * du + u)
        return outer.gradient(loss, w), du

    rng = np.random.default_rng(1)
    for _ in range(6):
        xv = rng.standard_normal((N, 32)).astype(np.float32)
        xv[0, 0], xv[1, 1] = np.nan, np.inf
        x, w = tf.constant(xv), tf.constant(rng.standard_normal((32, 32)).astype(np.float32))
        gw, du = step(x, w)
        tf.config.set_derivative_cache(False)
        try:
            gw0, du0 = step(x, w)
        finally:
            tf.config.set_derivative_cache(True)
        _same([gw.numpy(), du.numpy()], [gw0.numpy(), du0.numpy()])
