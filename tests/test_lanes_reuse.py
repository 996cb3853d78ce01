"""A compiled optimizer step writes its new flat state into the flat arrays of two calls
ago where nothing else holds them (``trace/lanes.py: spare``), and hands back the same
views: every step still gives the interpreter's bits, and no value anyone holds (a
tensor, a snapshot, a view of a view, a memoryview, an eager read) ever changes."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.trace import codegen, lanes
from test_fusion import assert_same_bits

OPTIMIZERS = {
    "adam": lambda: tf.keras.optimizers.Adam(1e-2),
    "adamw": lambda: tf.keras.optimizers.AdamW(1e-2, weight_decay=0.1),
    "sgd_momentum": lambda: tf.keras.optimizers.SGD(1e-2, momentum=0.9, nesterov=True),
    "rmsprop": lambda: tf.keras.optimizers.RMSprop(1e-2, momentum=0.5),
    "adam_clipped": lambda: tf.keras.optimizers.Adam(1e-2, clipnorm=0.5),
}


def training(make_opt, dtype="float32", widths=(6, 5, 1), n_in=4, rows=9, seed=1):
    tf.keras.backend.set_floatx(dtype)
    try:
        keras = tf.keras
        model = keras.Sequential([keras.Input((n_in,)),
                                  keras.layers.Dense(widths[0], activation="tanh")]
                                 + [keras.layers.Dense(w) for w in widths[1:]])
        opt = make_opt()
        rng = np.random.default_rng(seed)
        x = tf.constant(rng.standard_normal((rows, n_in)).astype(dtype))
        y = tf.constant(rng.standard_normal((rows, 1)).astype(dtype))
    finally:
        tf.keras.backend.set_floatx("float32")

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))

    compiled = tf.function(step)
    compiled()
    state = model.variables + opt.variables
    return model, opt, step, compiled, state


def interpreted_from(state, start, compiled):
    """The compiled program run through bind (a tape outside) from ``start``: the values."""
    for v, s in zip(state, start):
        v.assign(s)
    with tf.GradientTape():
        compiled()
    return [v.numpy() for v in state]


def test_the_calibration_sees_every_holder():
    assert lanes._FREE is not None  # CPython with the GIL: the counts are exact


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_steps_that_reuse_the_state_of_two_calls_ago_give_the_interpreters_bits(
        name, dtype, monkeypatch):
    hits = []

    def counted(spares):
        pair = lanes.spare(spares)
        hits.append(pair is not None)
        return pair

    monkeypatch.setitem(codegen.FUSED_HELPERS, "spare", counted)  # read when code is made
    model, opt, _, compiled, state = training(OPTIMIZERS[name], dtype)
    src = compiled.get_concrete_function().source()
    assert "spare(" in src, src
    for _ in range(6):
        start = [v.numpy() for v in state]
        compiled()
        compiled()
        got = [v.numpy() for v in state]
        want = interpreted_from(state, start, lambda: (compiled(), compiled()))
        for g, w in zip(got, want):
            assert_same_bits(g, w)
        for v, g in zip(state, got):  # on from the compiled values
            v.assign(g)
        compiled()
        compiled()
    assert sum(hits) > len(hits) // 2, "the steps did not reuse their flat state"


def test_held_values_never_change():
    """Each kind of holder of an old value keeps it reading the same numbers, step after
    step, while the steps still equal the interpreter's."""
    model, opt, step, compiled, state = training(OPTIMIZERS["adam"])
    for _ in range(3):
        compiled()
    holders = []
    kernel = model.layers[0].kernel
    bias = model.layers[0].bias
    holders.append(kernel.read_value())            # a tensor of the value
    holders.append(np.asarray(bias._value)[1:])    # a view of a view
    holders.append(memoryview(opt.variables[2]._value))  # a momentum
    copies = [np.array(h).copy() for h in holders]
    for _ in range(5):
        compiled()
    for h, c in zip(holders, copies):
        assert_same_bits(np.array(h), c)
    model(tf.zeros([2, 4]))  # an eager read (a snapshot) between steps
    snaps = [v.read_value() for v in model.trainable_variables]
    snap_copies = [s.numpy() for s in snaps]
    start = [v.numpy() for v in state]
    for _ in range(4):
        compiled()
    for s, c in zip(snaps, snap_copies):
        assert_same_bits(s.numpy(), c)
    got = [v.numpy() for v in state]
    want = interpreted_from(state, start, lambda: [compiled() for _ in range(4)])
    for g, w in zip(got, want):
        assert_same_bits(g, w)


def test_assignments_between_steps_and_a_second_optimizer_on_the_same_variables():
    model, opt, _, compiled, state = training(OPTIMIZERS["adam"])
    opt2 = tf.keras.optimizers.RMSprop(1e-2)
    x = tf.constant(np.linspace(-1, 1, 36, dtype="float32").reshape(9, 4))

    @tf.function
    def other():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x)))
        grads = tape.gradient(loss, model.trainable_variables)
        opt2.apply_gradients(zip(grads, model.trainable_variables))

    other()
    both = model.variables + opt.variables + opt2.variables
    for k in range(6):
        start = [v.numpy() for v in both]
        if k == 3:
            model.layers[1].kernel.assign(model.layers[1].kernel.numpy() * 0.5)
            start = [v.numpy() for v in both]
        compiled()
        other()
        compiled()
        got = [v.numpy() for v in both]
        for v, s in zip(both, start):
            v.assign(s)
        with tf.GradientTape():
            compiled()
            other()
            compiled()
        for v, g in zip(both, got):
            assert_same_bits(g, v.numpy())
            v.assign(g)
        for _ in range(2):
            compiled()
            other()
