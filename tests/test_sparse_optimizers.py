"""Gradients through row gathers as ``tf.IndexedSlices`` (tape/sparse_rows.py), and Keras's
optimizers stepping them per slice (keras/optimizers/sliced.py), against TensorFlow 2.21 and
Keras 3.15 (tests/data/sparse_optimizers.json, from benchmarks/sparse_optimizer_reference.py).
"""
import json
import os

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from benchmarks.sparse_optimizer_reference import CASES, TAPE, data

with open(os.path.join(os.path.dirname(__file__), "data", "sparse_optimizers.json")) as _f:
    REF = json.load(_f)

MISSING = set()  # Keras optimizers tapegrad does not have yet
HAVE = [(k, name, kw) for k, (name, kw) in enumerate(CASES) if name not in MISSING]


def test_the_reference_covers_every_case():
    assert len(REF["cases"]) == len(CASES) and len(REF["tape"]) == len(TAPE)
    assert {name for name, _ in CASES if not hasattr(keras.optimizers, name)} == MISSING


def _steps(name, kwargs, sliced):
    start, steps = data()
    v = tf.Variable(start)
    opt = getattr(keras.optimizers, name)(**kwargs)
    for values, ix in steps:
        if sliced:
            g = tf.IndexedSlices(tf.constant(values), tf.constant(ix), tf.constant([6, 3]))
        else:
            dense = np.zeros((6, 3), np.float32)
            np.add.at(dense, ix, values)
            g = tf.constant(dense)
        opt.apply_gradients([(g, v)])
    return v.numpy()


@pytest.mark.parametrize("k,name,kwargs", HAVE, ids=[f"{k}-{n}" for k, n, _ in HAVE])
def test_optimizer_steps_slices_as_keras(k, name, kwargs):
    ref = REF["cases"][f"{k}:{name}"]
    np.testing.assert_allclose(_steps(name, kwargs, True), ref["sparse"], rtol=2e-6, atol=1e-6)
    # and the dense gradient's steps are Keras's dense ones
    np.testing.assert_allclose(_steps(name, kwargs, False), ref["dense"], rtol=2e-6, atol=1e-6)


def test_squaring_optimizers_differ_from_their_dense_step():
    # what makes the slices matter: Adam's second moment sums squared slices
    ref = REF["cases"]["3:Adam"]
    assert np.abs(np.array(ref["sparse"]) - np.array(ref["dense"])).max() > 1e-4
    assert np.abs(_steps("Adam", {}, True) - _steps("Adam", {}, False)).max() > 1e-4


def _tape_case(expr, wrt):
    v = tf.Variable(np.arange(12.0).reshape(4, 3).astype(np.float32))
    c = tf.constant((np.arange(12.0).reshape(4, 3) / 7.0).astype(np.float32))
    ids = tf.constant([1, 1, 3])
    with tf.GradientTape() as tape:
        tape.watch(c)
        y = eval(expr, {"tf": tf, "v": v, "c": c, "ids": ids})  # noqa: S307 (our cases)
    return tape.gradient(y, {"v": v, "c": c}[wrt])


def _sorted(indices, values):
    """The slices in one order (by index, then by row): several gathers' order may differ."""
    indices, values = np.asarray(indices), np.asarray(values, np.float64)
    order = np.lexsort(tuple(values.T[::-1]) + (indices,))
    return indices[order], values[order]


@pytest.mark.parametrize("j", range(len(TAPE)), ids=[e for e, _ in TAPE])
def test_gradient_kind_matches_tensorflow(j):
    expr, wrt = TAPE[j]
    want, g = REF["tape"][j], _tape_case(expr, wrt)
    if want["kind"] == "dense":
        assert type(g) is tf.Tensor
        np.testing.assert_allclose(g.numpy(), want["value"], rtol=1e-6)
        return
    assert isinstance(g, tf.IndexedSlices)
    assert g.dense_shape.numpy().tolist() == want["dense_shape"]
    assert g.indices.dtype == tf.int32 and g.values.dtype == tf.float32
    # the slices TensorFlow gives (several gathers' slices may come in another order)
    have_i, have_v = _sorted(g.indices.numpy(), g.values.numpy())
    want_i, want_v = _sorted(want["indices"], want["values"])
    np.testing.assert_array_equal(have_i, want_i)
    np.testing.assert_allclose(have_v, want_v, rtol=1e-6)
    if len(TAPE[j][0].split("tf.gather")) == 2:  # one gather: the very order too
        assert g.indices.numpy().tolist() == want["indices"]


def test_slices_sum_to_the_dense_gradient_bit_for_bit():
    # densified, the slices are the gather's dense cotangent (the same sums, same order)
    v = tf.Variable(np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32))
    ids = tf.constant([4, 0, 4, 4, 1, 0])
    w = tf.constant(np.random.default_rng(4).standard_normal((6, 4)).astype(np.float32))
    with tf.GradientTape(persistent=True) as tape:
        y = tf.reduce_sum(tf.sin(tf.gather(v, ids)) * w)
        y2 = y + tf.reduce_sum(v * 0.0)  # a dense use: the gradient is dense
    sliced, dense = tape.gradient(y, v), tape.gradient(y2, v)
    assert isinstance(sliced, tf.IndexedSlices) and type(dense) is tf.Tensor
    np.testing.assert_array_equal(tf.convert_to_tensor(sliced).numpy(), dense.numpy())


def test_slices_differentiate_again():
    v = tf.Variable(np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]], np.float32))
    ids = [2, 0, 2]
    with tf.GradientTape() as outer:
        with tf.GradientTape() as inner:
            y = tf.reduce_sum(tf.gather(v, ids) ** 3)
        g = inner.gradient(y, v)
        z = tf.reduce_sum(g.values)  # sum over the slices of 3 v[ids]^2
    h = tf.convert_to_tensor(outer.gradient(z, v)).numpy()
    counts = np.bincount(ids, minlength=3)[:, None]
    np.testing.assert_allclose(h, 6.0 * counts * v.numpy(), rtol=1e-6)


def test_inside_function_and_in_a_keras_fit():
    v = tf.Variable(np.ones((4, 2), np.float32))

    @tf.function
    def step(ids):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.gather(v, ids) * 2.0)
        g = tape.gradient(y, v)
        return g.values, g.indices

    values, indices = step(tf.constant([3, 3, 0]))
    assert indices.numpy().tolist() == [3, 3, 0]
    np.testing.assert_array_equal(values.numpy(), np.full((3, 2), 2.0, np.float32))
    # an Embedding model fits with Adam on its slices (values: test_real_programs_s13.py)
    model = keras.Sequential([keras.Input((5,), dtype="int32"), keras.layers.Embedding(7, 3),
                              keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x = np.array([[1, 1, 1, 2, 0], [3, 3, 4, 4, 4]], np.int32)
    hist = model.fit(x, np.array([[1.0], [-1.0]], np.float32), epochs=3, verbose=0)
    assert len(hist.history["loss"]) == 3 and np.isfinite(hist.history["loss"]).all()


@pytest.mark.parametrize("k,name,kwargs", HAVE, ids=[f"{k}-{n}" for k, n, _ in HAVE])
def test_compiled_sliced_steps_equal_eager(k, name, kwargs):
    # a tf.function train step computes the eager step's numbers (bias corrections read the
    # step count when the program runs, not when it was traced)
    start, steps = data()
    res = []
    for compiled in (False, True):
        v = tf.Variable(start)
        opt = getattr(keras.optimizers, name)(**kwargs)

        def step(values, ix):
            opt.apply_gradients([(tf.IndexedSlices(values, ix, tf.constant([6, 3])), v)])
        run = tf.function(step) if compiled else step
        for values, ix in steps:
            run(tf.constant(values), tf.constant(ix))
        res.append(v.numpy())
    np.testing.assert_array_equal(res[0], res[1])
