"""``tf.random.stateless_*``, ``stateless_split`` / ``stateless_fold_in`` and
``tf.random.Generator`` give TensorFlow 2.21's Philox streams: bit for bit for uniform
floats, integers, splits, folds and generator states; normals to the last bit of their
dtype, most of them exactly (TensorFlow's float32 ``logf``/``sincosf`` are not always
correctly rounded). Reference data: tests/data/tf_random_reference.npz, written by
benchmarks/tf_random_reference.py (TensorFlow is never imported here). Also: shapes,
dtypes and TensorFlow's error types, the same numbers inside ``tf.function`` (seeds as
arguments), under ``vmap``, and a Generator that advances across ``tf.function`` calls."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.errors import InvalidArgumentError, UnimplementedError

DATA = np.load(pathlib.Path(__file__).parent / "data" / "tf_random_reference.npz",
               allow_pickle=False)
MANIFEST = json.loads(str(DATA["manifest"]))
SEEDS = {"small": ([1, 2], "int32"), "zero": ([0, 0], "int32"),
         "negative": ([-1, 123456789], "int32"), "extremes": ([2**31 - 1, -2**31], "int32"),
         "wide": ([2**62 + 5, -2**63], "int64")}


def _seed(name):
    value, dtype = SEEDS[name]
    return tf.constant(np.array(value, dtype))


def _stateless(case, seed):
    fn, shape, dtype = case["fn"], case.get("shape"), case.get("dtype")
    if fn == "uniform":
        kwargs = {k: case[k] for k in ("minval", "maxval") if k in case}
        return tf.random.stateless_uniform(shape, seed, dtype=dtype, **kwargs)
    if fn == "normal":
        return tf.random.stateless_normal(shape, seed, mean=case["mean"],
                                          stddev=case["stddev"], dtype=dtype)
    if fn == "truncated_normal":
        return tf.random.stateless_truncated_normal(shape, seed, dtype=dtype)
    if fn == "split":
        return tf.random.experimental.stateless_split(seed, num=case["num"])
    return tf.random.experimental.stateless_fold_in(seed, case["data"])


def _assert_stream(out, expected, fn):
    assert out.dtype == expected.dtype and out.shape == expected.shape
    if fn in ("normal", "truncated_normal"):
        # the standard normals within one unit in the last place (scaled by stddev 3 and
        # shifted, a few units of the result); most bits equal
        eps = float(np.finfo(out.dtype).eps)
        np.testing.assert_allclose(out, expected, rtol=2 * eps, atol=8 * eps)
        assert (out == expected).sum() >= 0.9 * out.size - 2
    else:
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("case", MANIFEST["stateless"], ids=lambda c: c["case"])
def test_stateless_streams_match_tensorflow(case):
    out = _stateless(case, _seed(case["seed"])).numpy()
    _assert_stream(out, DATA[case["case"]], case["fn"])


@pytest.mark.parametrize("fn", ["uniform", "normal", "truncated_normal", "split"])
def test_stateless_in_function_with_seed_argument(fn):
    cases = [c for c in MANIFEST["stateless"] if c["fn"] == fn and c.get("shape") != [1001]]
    case = cases[len(cases) // 2]
    f = tf.function(lambda seed: _stateless(case, seed))
    for name in SEEDS:
        if any(c["seed"] == name and c["fn"] == fn for c in MANIFEST["stateless"]):
            want = _stateless(dict(case, seed=name), _seed(name)).numpy()
            np.testing.assert_array_equal(f(_seed(name)).numpy(), want)


def test_vmap_over_seeds_is_the_loop():
    seeds = tf.constant(np.array([[1, 2], [3, 4], [-1, 7]], np.int32))
    batched = tf.vectorized_map(lambda s: tf.random.stateless_normal([4], s), seeds)
    loop = np.stack([tf.random.stateless_normal([4], s).numpy() for s in seeds.numpy()])
    np.testing.assert_array_equal(batched.numpy(), loop)


def test_gradients_reach_bounds_mean_and_stddev():
    lo, hi = tf.Variable(-1.0), tf.Variable(3.0)
    mean, std = tf.Variable(0.5), tf.Variable(2.0)
    seed = [4, 5]
    with tf.GradientTape() as tape:
        u = tf.random.stateless_uniform([6], seed, minval=lo, maxval=hi)
        z = tf.random.stateless_normal([6], seed, mean=mean, stddev=std)
        total = tf.reduce_sum(u) + tf.reduce_sum(z)
    g = tape.gradient(total, [lo, hi, mean, std])
    unit = tf.random.stateless_uniform([6], seed).numpy()
    unit_z = tf.random.stateless_normal([6], seed).numpy()
    np.testing.assert_allclose(g[0].numpy(), np.sum(1 - unit), rtol=1e-6)
    np.testing.assert_allclose(g[1].numpy(), np.sum(unit), rtol=1e-6)
    np.testing.assert_allclose(g[2].numpy(), 6.0)
    np.testing.assert_allclose(g[3].numpy(), np.sum(unit_z), rtol=1e-6)


def test_stateless_errors_are_tensorflows():
    with pytest.raises(InvalidArgumentError, match=r"seed must have shape \[2\], not \[3\]"):
        tf.random.stateless_normal([2], [1, 2, 3])
    with pytest.raises(InvalidArgumentError, match=r"not \[1,2\]"):
        tf.random.stateless_normal([2], [[1, 2]])
    with pytest.raises(InvalidArgumentError, match="'Tseed' of float32"):
        tf.random.stateless_normal([2], tf.constant([1.0, 2.0]))
    with pytest.raises(InvalidArgumentError, match="Dimension -1 must be >= 0"):
        tf.random.stateless_normal([-1], [1, 2])
    with pytest.raises(ValueError, match="must be both None or not None"):
        tf.random.stateless_uniform([2], [1, 2], dtype=tf.int32)
    with pytest.raises(ValueError, match="don't use unsigned integers"):
        tf.random.stateless_uniform([2], [1, 2], minval=0, maxval=5, dtype="uint32")
    with pytest.raises(ValueError, match="Accepted dtypes are"):
        tf.random.stateless_uniform([2], [1, 2], dtype=tf.int8, minval=0, maxval=3)
    with pytest.raises(InvalidArgumentError, match="Need minval < maxval, got 5 >= 1"):
        tf.random.stateless_uniform([2], [1, 2], minval=5, maxval=1, dtype=tf.int32)
    with pytest.raises(TypeError, match="dtype int32"):
        tf.random.stateless_normal([2], [1, 2], dtype=tf.int32)
    with pytest.raises(UnimplementedError, match="Philox"):
        tf.random.stateless_normal([2], [1, 2], alg="threefry")


def test_stateless_categorical():
    logits = tf.constant([[np.log(0.2), np.log(0.8), -np.inf], [0.0, -np.inf, -np.inf]])
    draws = tf.random.stateless_categorical(logits, 4000, [7, 8])
    assert draws.dtype == tf.int64 and draws.shape == (2, 4000)
    counts = np.bincount(draws.numpy()[0], minlength=3) / 4000
    np.testing.assert_allclose(counts, [0.2, 0.8, 0.0], atol=0.03)
    assert (draws.numpy()[1] == 0).all()  # log(0) = -inf is never drawn
    again = tf.random.stateless_categorical(logits, 4000, [7, 8], dtype=tf.int32)
    assert again.dtype == tf.int32
    np.testing.assert_array_equal(again.numpy(), draws.numpy())
    assert tf.random.stateless_categorical([[0.0, 1.0]], 0, [1, 2]).shape == (1, 0)
    with pytest.raises(InvalidArgumentError, match="logits should be a matrix"):
        tf.random.stateless_categorical([0.5, 0.5], 5, [1, 2])
    with pytest.raises(ValueError, match=r"\(tf.int32, tf.int64\)"):
        tf.random.stateless_categorical([[0.0, 1.0]], 2, [1, 2], dtype=tf.float32)


def test_split_and_fold_in_aliases_and_shapes():
    assert tf.random.split is tf.random.experimental.stateless_split
    assert tf.random.fold_in is tf.random.experimental.stateless_fold_in
    assert tf.random.experimental.stateless_split([1, 2], num=0).shape == (0, 2)
    # the new seed has the dtype of ``data``, as in TensorFlow
    assert tf.random.experimental.stateless_fold_in(
        tf.constant([1, 2], tf.int64), 3).dtype == tf.int32
    assert tf.random.experimental.stateless_fold_in([1, 2], 2**40).dtype == tf.int64


def _generator_step(g, step):
    kwargs = dict(step["kwargs"])
    return getattr(g, step["method"])(**kwargs)


@pytest.mark.parametrize("gen", MANIFEST["generator"], ids=lambda c: c["name"])
def test_generator_streams_and_states_match_tensorflow(gen):
    g = tf.random.Generator.from_seed(gen["seed"])
    for i, step in enumerate(gen["steps"]):
        out = _generator_step(g, step)
        if step["out"] and step["method"] != "skip":  # skip returns no draw
            _assert_stream(np.asarray(out.numpy()), DATA[f"{gen['name']}/{i}/out"],
                           step["method"])
        np.testing.assert_array_equal(g.state.numpy(), DATA[f"{gen['name']}/{i}/state"])
    children = g.split(2)
    np.testing.assert_array_equal(np.stack([c.state.numpy() for c in children]),
                                  DATA[f"{gen['name']}/split"])
    np.testing.assert_array_equal(g.state.numpy(), DATA[f"{gen['name']}/split_state"])
    _assert_stream(children[1].normal([4]).numpy(), DATA[f"{gen['name']}/child_normal"],
                   "normal")


def test_generator_counter_wraps_like_tensorflow():
    g = tf.random.Generator.from_state([-1, -1, 5], alg="philox")
    np.testing.assert_array_equal(g.uniform([3]).numpy(), DATA["gen/wrap/out"])
    np.testing.assert_array_equal(g.state.numpy(), DATA["gen/wrap/state"])


def test_generator_in_function_advances_per_call():
    g = tf.random.Generator.from_seed(11)
    eager = tf.random.Generator.from_seed(11)
    f = tf.function(lambda: g.normal([3]) + g.uniform([3]))
    for _ in range(3):
        np.testing.assert_array_equal(f().numpy(), (eager.normal([3]) +
                                                    eager.uniform([3])).numpy())
    np.testing.assert_array_equal(g.state.numpy(), eager.state.numpy())


def test_generator_api():
    g = tf.random.Generator.from_seed(3)
    assert g.algorithm == tf.random.Algorithm.PHILOX.value == 1
    assert tf.random.Algorithm.AUTO_SELECT.value == 3
    np.testing.assert_array_equal(tf.random.create_rng_state(2**70 + 3, "philox").numpy(),
                                  [3, 64, 0])
    kc = tf.random.Generator.from_key_counter(key=7, counter=[1, 2], alg="philox")
    np.testing.assert_array_equal(kc.state.numpy(), [1, 2, 7])
    g.reset_from_seed(5)
    np.testing.assert_array_equal(g.state.numpy(), [5, 0, 0])
    copy = tf.random.Generator(copy_from=g)
    np.testing.assert_array_equal(copy.normal([2]).numpy(), g.normal([2]).numpy())
    with pytest.raises(ValueError, match="must be both `None` or both non-`None`"):
        g.uniform([2], dtype=tf.int32)
    assert tf.random.get_global_generator().normal([2]).shape == (2,)
    tf.random.set_global_generator(tf.random.Generator.from_seed(1))
    np.testing.assert_array_equal(tf.random.get_global_generator().state.numpy(), [1, 0, 0])
    fresh = tf.random.Generator.from_non_deterministic_state()
    assert fresh.state.shape == (3,)
