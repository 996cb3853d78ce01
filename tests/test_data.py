"""tf.data.Dataset: tutorial-style pipelines, laziness, shuffling, specs and TF's errors."""
import collections
import subprocess
import sys
import os

import numpy as np
import pytest

import tapegrad as tf


def _values(ds):
    return [np.asarray(v).tolist() for v in ds.as_numpy_iterator()]


def test_custom_training_loop_over_a_shuffled_batched_dataset():
    # The shape of TF's "writing a training loop from scratch" guide.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3)).astype(np.float32)
    w_true = np.array([[1.0], [-2.0], [0.5]], np.float32)
    y = x @ w_true
    train = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(buffer_size=64, seed=1)
    train = train.batch(32).prefetch(tf.data.AUTOTUNE)
    w = tf.Variable(tf.zeros([3, 1]))
    losses = []
    for _epoch in range(20):
        for step, (xb, yb) in enumerate(train):  # noqa: B007 (checked after the loop)
            assert isinstance(xb, tf.Tensor) and xb.dtype == tf.float32
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((xb @ w - yb) ** 2)
            w.assign_sub(0.1 * tape.gradient(loss, w))
        losses.append(float(loss))
        assert step == 6  # ceil(200 / 32) batches per epoch
    assert losses[-1] < 1e-3 * losses[0]
    np.testing.assert_allclose(w.numpy(), w_true, atol=1e-2)


def test_a_compiled_step_consumes_dataset_batches():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(12.0).reshape(6, 2)).batch(2)
    total = tf.Variable(0.0, dtype=tf.float64)

    @tf.function
    def step(xb):
        total.assign_add(tf.reduce_sum(xb))

    for xb in ds:
        step(xb)
    assert float(total) == 66.0


def test_streams_an_infinite_pipeline_and_calls_map_only_for_pulled_elements():
    calls = []

    def double(x):
        calls.append(int(x))
        return x * 2

    ds = tf.data.Dataset.range(3).repeat().map(double).batch(2).take(4)
    assert ds.cardinality() == 4
    out = _values(ds)
    assert out == [[0, 2], [4, 0], [2, 4], [0, 2]]
    assert calls == [0, 1, 2, 0, 1, 2, 0, 1]  # exactly the 8 elements the 4 batches need
    calls.clear()
    it = iter(tf.data.Dataset.range(10**12).map(double).skip(2))
    assert int(next(it)) == 4 and calls == [0, 1, 2]
    big = tf.data.Dataset.range(10**15).repeat().shuffle(16, seed=0).take(5)
    assert len(_values(big)) == 5


def test_cache_replays_without_recomputing():
    calls = []
    ds = tf.data.Dataset.range(4).map(lambda x: calls.append(1) or x + 1).cache()
    assert _values(ds) == [1, 2, 3, 4] and len(calls) == 4
    assert _values(ds) == [1, 2, 3, 4] and len(calls) == 4
    calls.clear()
    partial = tf.data.Dataset.range(4).map(lambda x: calls.append(1) or x).cache()
    assert _values(partial.take(2)) == [0, 1]
    assert _values(partial) == [0, 1, 2, 3] and len(calls) == 6  # a partial pass is dropped


def test_from_tensor_slices_structures_and_specs():
    Point = collections.namedtuple("Point", "a b")
    ds = tf.data.Dataset.from_tensor_slices({"img": np.zeros((4, 2, 2)), "y": [0, 1, 2, 3]})
    spec = ds.element_spec
    assert spec["img"] == tf.TensorSpec([2, 2], tf.float64)
    assert spec["y"] == tf.TensorSpec([], tf.int32)
    el = next(iter(ds))
    assert set(el) == {"img", "y"} and el["img"].shape == (2, 2)
    nested = tf.data.Dataset.from_tensor_slices(((np.ones((3, 2)), [1.0, 2.0, 3.0]),
                                                 {"p": Point([1, 2, 3], [4, 5, 6])}))
    (a, b), d = next(iter(nested))
    assert a.dtype == tf.float64 and b.dtype == tf.float32 and isinstance(d["p"], Point)
    assert int(d["p"].b) == 4
    assert nested.batch(2).element_spec[1]["p"].a == tf.TensorSpec([None], tf.int32)
    # a list is one tensor, not a structure (TensorFlow's rule)
    assert tf.data.Dataset.from_tensor_slices([[1.0, 2.0], [3.0, 4.0]]).element_spec == \
        tf.TensorSpec([2], tf.float32)
    # the dataset holds a copy: mutating the source array later changes nothing
    src = np.arange(3)
    ds = tf.data.Dataset.from_tensor_slices(src)
    src[:] = 7
    assert _values(ds) == [0, 1, 2]


def test_from_tensors_range_zip_enumerate():
    assert _values(tf.data.Dataset.from_tensors([1, 2]).repeat(2)) == [[1, 2], [1, 2]]
    r = tf.data.Dataset.range(2, 9, 3)
    assert r.element_spec == tf.TensorSpec([], tf.int64) and _values(r) == [2, 5, 8]
    assert tf.data.Dataset.range(3, output_type=tf.int32).element_spec.dtype == tf.int32
    assert _values(tf.data.Dataset.range(5, 0, -2)) == [5, 3, 1]
    z = tf.data.Dataset.zip((tf.data.Dataset.range(3), tf.data.Dataset.range(10, 20)))
    assert [tuple(v) for v in z.as_numpy_iterator()] == [(0, 10), (1, 11), (2, 12)]
    assert z.cardinality() == 3
    z2 = tf.data.Dataset.zip(tf.data.Dataset.range(2), tf.data.Dataset.range(2))
    assert len(z2) == 2
    zd = tf.data.Dataset.zip({"a": tf.data.Dataset.range(2), "b": r})
    assert [(int(e["a"]), int(e["b"])) for e in zd] == [(0, 2), (1, 5)]
    e = tf.data.Dataset.from_tensor_slices([7.0, 8.0]).enumerate(start=5)
    assert [(int(i), float(v)) for i, v in e] == [(5, 7.0), (6, 8.0)]
    assert e.element_spec[0] == tf.TensorSpec([], tf.int64)


def test_batch_drop_remainder_and_cardinality():
    ds = tf.data.Dataset.range(5)
    assert _values(ds.batch(2)) == [[0, 1], [2, 3], [4]]
    assert _values(ds.batch(2, drop_remainder=True)) == [[0, 1], [2, 3]]
    assert ds.batch(2).element_spec == tf.TensorSpec([None], tf.int64)
    assert ds.batch(2, drop_remainder=True).element_spec == tf.TensorSpec([2], tf.int64)
    cases = [(ds.batch(2), 3), (ds.batch(2, True), 2), (ds.repeat(), -1), (ds.repeat(3), 15),
             (ds.filter(lambda x: x > 1), -2), (ds.take(3).repeat(2), 6), (ds.repeat(0), 0),
             (tf.data.Dataset.range(0).repeat(), 0), (ds.repeat().take(7), 7),
             (ds.repeat().skip(7), -1), (ds.skip(12), 0), (ds.take(-1), 5), (ds.skip(-1), 0),
             (ds.map(lambda x: x).cache().prefetch(1), 5), (ds.batch(2).unbatch(), -2),
             (ds.concatenate(ds), 10), (ds.repeat().batch(4), -1)]
    for d, want in cases:
        assert int(d.cardinality()) == want, (d, want)
        assert d.cardinality().dtype == tf.int64
    assert tf.data.INFINITE_CARDINALITY == -1 and tf.data.UNKNOWN_CARDINALITY == -2
    assert tf.data.experimental.cardinality(ds) == 5
    assert tf.data.AUTOTUNE == tf.data.experimental.AUTOTUNE == -1


def test_map_filter_take_skip_repeat_unbatch():
    ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3, 4], [10.0, 20.0, 30.0, 40.0]))
    m = ds.map(lambda a, b: (a * 2, b + 1.0))  # a tuple element is unpacked into arguments
    assert [(int(a), float(b)) for a, b in m] == [(2, 11.0), (4, 21.0), (6, 31.0), (8, 41.0)]
    lst = tf.data.Dataset.range(2).map(lambda x: [x, x + 1])  # a returned list is a tuple
    assert isinstance(next(iter(lst)), tuple)
    f = ds.filter(lambda a, b: a % 2 == 0)
    assert [int(a) for a, _ in f] == [2, 4]
    assert _values(tf.data.Dataset.range(10).skip(3).take(2).repeat(2)) == [3, 4, 3, 4]
    d = tf.data.Dataset.from_tensor_slices(({"x": np.arange(6).reshape(3, 2)}, [1, 2, 3]))
    rows = list(d.batch(2).unbatch())
    assert len(rows) == 3 and rows[2][0]["x"].numpy().tolist() == [4, 5]
    # element_spec follows the function: sizes from the input stay unknown
    mapped = tf.data.Dataset.from_tensor_slices(np.zeros((5, 3))).batch(2).map(
        lambda x: (tf.reduce_sum(x, axis=1), x[:, :2]))
    assert mapped.element_spec == (tf.TensorSpec([None], tf.float64),
                                   tf.TensorSpec([None, 2], tf.float64))
    assert tf.data.Dataset.range(3).map(lambda x: 1.0).element_spec == \
        tf.TensorSpec([], tf.float32)


def test_map_runs_untaped_like_tf_data():
    w = tf.Variable(2.0)
    ds = tf.data.Dataset.range(2).map(lambda x: tf.cast(x, tf.float32) * w)
    with tf.GradientTape() as tape:
        vals = list(ds)
        loss = w * 1.0
    assert [float(v) for v in vals] == [0.0, 2.0]
    assert float(tape.gradient(loss, w)) == 1.0


def test_shuffle_is_a_permutation_and_deterministic_with_a_seed():
    base = tf.data.Dataset.range(50)
    a = base.shuffle(10, seed=42)
    first, second = _values(a), _values(a)
    assert sorted(first) == list(range(50)) and first != list(range(50))
    assert first != second  # reshuffled each iteration
    b = tf.data.Dataset.range(50).shuffle(10, seed=42)
    assert _values(b) == first and _values(b) == second  # same seed: the same epochs
    fixed = base.shuffle(10, seed=42, reshuffle_each_iteration=False)
    assert _values(fixed) == _values(fixed)
    assert _values(base.shuffle(1, seed=3)) == list(range(50))  # a buffer of one: in order
    # a buffer of b: an element never moves earlier than b - 1 places
    out = _values(tf.data.Dataset.range(100).shuffle(5, seed=0))
    assert all(pos >= v - 4 for pos, v in enumerate(out))
    epochs = _values(tf.data.Dataset.range(4).shuffle(4, seed=1).repeat(3))
    assert len(epochs) == 12 and all(sorted(epochs[i:i + 4]) == [0, 1, 2, 3]
                                     for i in (0, 4, 8))
    assert len({tuple(epochs[i:i + 4]) for i in (0, 4, 8)}) > 1
    tf.random.set_seed(7)
    g1 = _values(tf.data.Dataset.range(20).shuffle(20))
    tf.random.set_seed(7)
    assert _values(tf.data.Dataset.range(20).shuffle(20)) == g1
    full = _values(tf.data.Dataset.range(20).shuffle(tf.data.UNKNOWN_CARDINALITY, seed=1))
    assert sorted(full) == list(range(20))


def test_shuffle_order_is_the_same_in_a_new_process():
    code = ("import tapegrad as tf\n"
            "print([int(x) for x in tf.data.Dataset.range(30).shuffle(8, seed=5).repeat(2)])\n"
            "tf.random.set_seed(3)\n"
            "print([int(x) for x in tf.data.Dataset.range(30).shuffle(8)])\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(tf.__file__)))
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1] and runs[0].count("[") == 2


def test_padded_batch_from_generator_reduce_flat_map():
    gen = tf.data.Dataset.from_generator(
        lambda: iter([np.array([1, 2, 3]), np.array([4, 5])]),
        output_signature=tf.TensorSpec([None], tf.int64))
    assert gen.cardinality() == -2
    assert _values(gen) == [[1, 2, 3], [4, 5]] and _values(gen) == [[1, 2, 3], [4, 5]]
    pb = gen.padded_batch(2)
    assert _values(pb) == [[[1, 2, 3], [4, 5, 0]]]
    assert pb.element_spec == tf.TensorSpec([None, None], tf.int64)
    assert _values(gen.padded_batch(2, padded_shapes=[4], padding_values=np.int64(-1))) == \
        [[[1, 2, 3, -1], [4, 5, -1, -1]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="smaller size"):
        list(gen.padded_batch(2, padded_shapes=[2]))
    old = tf.data.Dataset.from_generator(lambda: ((i, float(i)) for i in range(3)),
                                         output_types=(tf.int32, tf.float32),
                                         output_shapes=((), ()))
    assert [(int(a), float(b)) for a, b in old] == [(0, 0.0), (1, 1.0), (2, 2.0)]
    s = tf.data.Dataset.range(5).reduce(np.int64(0), lambda state, x: state + x)
    assert int(s) == 10
    fm = tf.data.Dataset.range(3).flat_map(lambda x: tf.data.Dataset.range(x))
    assert _values(fm) == [0, 0, 1]
    assert int(tf.data.Dataset.range(3).take(1).get_single_element()) == 0


def test_iterator_protocol_and_len():
    it = iter(tf.data.Dataset.range(2))
    assert int(it.get_next()) == 0 and int(next(it)) == 1
    with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
        it.get_next()
    with pytest.raises(StopIteration):
        next(iter(tf.data.Dataset.range(0)))
    assert len(tf.data.Dataset.range(7).batch(3)) == 3
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(tf.data.Dataset.range(3).repeat())
    with pytest.raises(TypeError, match="The dataset length is unknown."):
        len(tf.data.Dataset.range(3).filter(lambda x: x > 1))
    assert "_TensorSliceDataset element_spec=" in repr(tf.data.Dataset.from_tensor_slices([1]))


def test_bad_input_gets_tensorflows_errors():
    ragged = tf.data.Dataset.from_generator(
        lambda: iter([np.array([1, 2, 3]), np.array([4, 5])]),
        output_signature=tf.TensorSpec([None], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Cannot batch tensors with different shapes in component 0\. "
                             r"First element had shape \[3\] and element 1 had shape \[2\]"):
        list(ragged.batch(2))
    with pytest.raises(ValueError, match="Dimensions 3 and 2 are not compatible"):
        tf.data.Dataset.from_tensor_slices(([1, 2, 3], [4.0, 5.0]))
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.data.Dataset.from_tensor_slices(1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Batch size must be greater"):
        tf.data.Dataset.range(3).batch(0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="buffer_size must be greater"):
        tf.data.Dataset.range(3).shuffle(0)
    with pytest.raises(ValueError, match="must return a `tf.bool` scalar tensor"):
        list(tf.data.Dataset.range(3).filter(lambda x: x))
    with pytest.raises(TypeError, match="Invalid input to `zip`"):
        tf.data.Dataset.zip(tf.data.Dataset.range(3), 5)
    with pytest.raises(TypeError, match="Cannot convert 'a' to EagerTensor of dtype int64"):
        tf.data.Dataset.range(3).take("a")
    with pytest.raises(ValueError, match="Cannot unbatch an input with scalar components"):
        tf.data.Dataset.range(3).unbatch()
    with pytest.raises(TypeError, match="expected type int32"):
        list(tf.data.Dataset.from_generator(lambda: iter([1.5]),
                                            output_signature=tf.TensorSpec([], tf.int32)))
    with pytest.raises(TypeError, match="element of shape"):
        list(tf.data.Dataset.from_generator(lambda: iter([[1, 2]]),
                                            output_signature=tf.TensorSpec([3], tf.int32)))
    with pytest.raises(TypeError, match="must be callable"):
        tf.data.Dataset.range(3).map(5)


def test_interleave_shard_and_options():
    ds = tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert _values(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3,
                           4, 4, 5, 5, 5, 5, 5, 5]  # TensorFlow's documented order
    uneven = tf.data.Dataset.range(0, 7).interleave(
        lambda x: tf.data.Dataset.range(10 * x, 10 * x + x % 4), cycle_length=3, block_length=2)
    assert _values(uneven) == [10, 20, 21, 30, 31, 32, 50, 60, 61]
    assert uneven.cardinality() == tf.data.UNKNOWN_CARDINALITY
    empty_first = tf.data.Dataset.range(6).interleave(lambda x: tf.data.Dataset.range(x % 3),
                                                      cycle_length=2)
    assert _values(empty_first) == [0, 0, 1, 0, 0, 1]
    assert _values(tf.data.Dataset.range(10).shard(3, 1)) == [1, 4, 7]
    assert tf.data.Dataset.range(10).shard(3, 2).cardinality() == 3
    with pytest.raises(tf.errors.InvalidArgumentError, match="Index must be between 0 and 2"):
        tf.data.Dataset.range(10).shard(3, 3)
    o = tf.data.Options()
    o.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    o.deterministic = False
    d = tf.data.Dataset.range(3).with_options(o).map(lambda x: x)
    assert d.options().deterministic is False and _values(d) == [0, 1, 2]
    assert d.options().experimental_distribute.auto_shard_policy == 2
    with pytest.raises(AttributeError, match="Cannot set the property foo"):
        o.foo = 1


def test_iterating_inside_tf_function_is_refused_not_frozen():
    ds = tf.data.Dataset.range(6).shuffle(6, seed=1).batch(3)

    @tf.function
    def epoch():
        return [b for b in ds]

    with pytest.raises(tf.errors.UnimplementedError, match="inside tf.function"):
        epoch()


def test_tf_data_guide_snippets():
    dataset = tf.data.Dataset.from_tensor_slices([8, 3, 0, 8, 2, 1])
    assert [int(e) for e in dataset] == [8, 3, 0, 8, 2, 1]
    assert int(next(iter(dataset))) == 8
    assert int(dataset.reduce(0, lambda state, value: state + value)) == 22
    dataset1 = tf.data.Dataset.from_tensor_slices(tf.random.uniform([4, 10]))
    dataset2 = tf.data.Dataset.from_tensor_slices(
        (tf.random.uniform([4]), tf.random.uniform([4, 100], maxval=100, dtype=tf.int32)))
    dataset3 = tf.data.Dataset.zip((dataset1, dataset2))
    assert dataset3.element_spec == (tf.TensorSpec([10], tf.float32),
                                     (tf.TensorSpec([], tf.float32),
                                      tf.TensorSpec([100], tf.int32)))
    lines = ["shapes: {a.shape}, {b.shape}, {c.shape}".format(a=a, b=b, c=c)
             for a, (b, c) in dataset3]
    assert lines == ["shapes: (10,), (), (100,)"] * 4
    # padded batches of rows whose length is their value
    ds = tf.data.Dataset.range(100).map(lambda x: tf.fill([tf.cast(x, tf.int32)], x))
    assert ds.element_spec == tf.TensorSpec([None], tf.int64)
    ds = ds.padded_batch(4, padded_shapes=(None,))
    first = next(iter(ds)).numpy().tolist()
    assert first == [[0, 0, 0], [1, 0, 0], [2, 2, 0], [3, 3, 3]]
    assert [b.shape for b in ds.skip(1).take(1)] == [(4, 7)]
    # batching with a known batch size
    batched = tf.data.Dataset.range(100).batch(10, drop_remainder=True)
    assert batched.element_spec == tf.TensorSpec([10], tf.int64) and len(batched) == 10
