"""keras/optimizers/fused.py: an eager step on the flat concatenation of small variables
gives bitwise the values of the per-variable rule, on both sides of its size threshold."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.keras.optimizers import fused

keras = tf.keras
LIMIT = fused.FUSE_MAX_SIZE  # the library's threshold (tests set it to 0 for the plain rule)

OPTIMIZERS = {
    "adam": lambda: keras.optimizers.Adam(learning_rate=0.01),
    "amsgrad": lambda: keras.optimizers.Adam(learning_rate=0.01, amsgrad=True),
    "adamw": lambda: keras.optimizers.AdamW(learning_rate=0.01),
    "sgd": lambda: keras.optimizers.SGD(learning_rate=0.1),
    "momentum": lambda: keras.optimizers.SGD(learning_rate=0.1, momentum=0.9, nesterov=True),
    "rmsprop": lambda: keras.optimizers.RMSprop(centered=True, momentum=0.5),
    "adagrad": lambda: keras.optimizers.Adagrad(),
    "nadam": lambda: keras.optimizers.Nadam(),
}
SHAPES = [(16, 64), (64,), (64, 64), (64,), (64, 1), (1,), (), (3, 70, 20)]


def _run(make, shapes, dtypes, steps, fuse_max, monkeypatch, between=None):
    monkeypatch.setattr(fused, "FUSE_MAX_SIZE", fuse_max)
    rng = np.random.default_rng(4)
    vs = [tf.Variable(rng.standard_normal(s).astype(d)) for s, d in zip(shapes, dtypes)]
    opt = make()
    for t in range(steps):
        gs = [rng.standard_normal(s).astype(d) for s, d in zip(shapes, dtypes)]
        if t == 2:  # IEEE specials go through the same operations
            for g in gs:
                g.reshape(-1)[:3] = [np.nan, np.inf, -0.0][:g.size]
        with np.errstate(all="ignore"):  # the specials' warnings, the same either way
            opt.apply_gradients(zip([tf.constant(g) for g in gs], vs))
        if between is not None:
            between(t, vs, opt)
    return [v.numpy() for v in vs] + [v.numpy() for v in opt.variables], opt


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)
        assert np.array_equal(np.signbit(x), np.signbit(y))


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_fused_steps_equal_the_per_variable_rule(name, monkeypatch):
    dtypes = ["float32"] * 6 + ["float64", "float32"]
    plain, _ = _run(OPTIMIZERS[name], SHAPES, dtypes, 6, 0, monkeypatch)
    got, opt = _run(OPTIMIZERS[name], SHAPES, dtypes, 6, LIMIT, monkeypatch)
    _same(got, plain)
    # the threshold: the six small float32 variables in one group; the 4,200-element
    # kernel (above FUSE_MAX_SIZE) and the lone float64 scalar alone
    (group,) = opt._fused_groups.values()
    assert [tuple(v.shape) for v in group.holders[0]] == SHAPES[:6]


def test_a_variable_on_each_side_of_the_threshold(monkeypatch):
    n = LIMIT
    shapes = [(n,), (n + 1,), (n,), (n + 1,)]
    plain, _ = _run(OPTIMIZERS["adam"], shapes, ["float32"] * 4, 4, 0, monkeypatch)
    got, opt = _run(OPTIMIZERS["adam"], shapes, ["float32"] * 4, 4, n, monkeypatch)
    _same(got, plain)
    (group,) = opt._fused_groups.values()
    assert [v.shape[0] for v in group.holders[0]] == [n, n]


def test_values_assigned_between_steps_are_taken(monkeypatch):
    def between(t, vs, opt):
        if t == 1:
            vs[1].assign(np.full(64, 0.25, np.float32))  # a variable
            slot = [v for v in opt.variables[2:] if tuple(v.shape) == (64,)][0]
            slot.assign(np.ones((64,), np.float32))  # a slot
        if t == 3:
            vs[0].assign_sub(vs[0] * 0.5)

    dtypes = ["float32"] * 6
    plain, _ = _run(OPTIMIZERS["adam"], SHAPES[:6], dtypes, 5, 0, monkeypatch, between)
    got, _ = _run(OPTIMIZERS["adam"], SHAPES[:6], dtypes, 5, LIMIT,
                  monkeypatch, between)
    _same(got, plain)


def test_snapshots_of_earlier_steps_stay_as_they_were(monkeypatch):
    rng = np.random.default_rng(5)
    vs = [tf.Variable(rng.standard_normal(s).astype("float32")) for s in SHAPES[:6]]
    opt = keras.optimizers.Adam()
    before = [v.numpy().copy() for v in vs]
    snap = [v.numpy() for v in vs]
    for _ in range(3):
        opt.apply_gradients(zip([tf.constant(np.ones(s, np.float32)) for s in SHAPES[:6]],
                                vs))
    for a, b in zip(snap, before):
        np.testing.assert_array_equal(a, b)
    assert opt._fused_groups  # the step above did run fused


def test_a_compiled_step_after_fused_eager_steps(monkeypatch):
    # tf.function reads the views and writes whole new arrays: the next eager step gathers
    def run(fuse_max):
        monkeypatch.setattr(fused, "FUSE_MAX_SIZE", fuse_max)
        rng = np.random.default_rng(6)
        vs = [tf.Variable(rng.standard_normal(s).astype("float32")) for s in SHAPES[:6]]
        opt = keras.optimizers.Adam()
        gs = [tf.constant(rng.standard_normal(s).astype("float32")) for s in SHAPES[:6]]
        step = tf.function(lambda: opt.apply_gradients(zip(gs, vs)))
        for t in range(6):
            if t % 2:
                step()
            else:
                opt.apply_gradients(zip(gs, vs))
        return [v.numpy() for v in vs] + [v.numpy() for v in opt.variables]

    _same(run(LIMIT), run(0))
