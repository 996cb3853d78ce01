"""Random numbers: eager draws, seeds, and fresh draws on every call of a traced function."""
import numpy as np

import tapegrad as tf


def test_traced_function_draws_fresh_numbers_per_call():
    @tf.function
    def noisy(x):
        return x + tf.random.normal([4])
    x = tf.zeros([4])
    a, b = noisy(x).numpy(), noisy(x).numpy()
    assert noisy.trace_count == 1
    assert not np.allclose(a, b)


def test_two_draws_in_one_trace_stay_two_draws():
    @tf.function
    def two():
        return tf.random.uniform([5]) - tf.random.uniform([5])
    assert np.abs(two().numpy()).max() > 0      # common-subexpression elimination kept both


def test_set_seed_reproduces_a_traced_sequence():
    @tf.function
    def draw():
        return tf.random.normal([3], dtype=tf.float64)
    tf.random.set_seed(11)
    first = [draw().numpy() for _ in range(2)]
    tf.random.set_seed(11)
    again = [draw().numpy() for _ in range(2)]
    np.testing.assert_array_equal(first, again)
    eager = tf.random.normal([3], dtype=tf.float64, seed=5)
    np.testing.assert_array_equal(eager.numpy(),
                                  tf.random.normal([3], dtype=tf.float64, seed=5).numpy())


def test_random_values_have_the_asked_distribution_and_no_gradient():
    v = tf.random.normal([20000], mean=2.0, stddev=3.0, dtype=tf.float64, seed=1).numpy()
    assert abs(v.mean() - 2.0) < 0.1 and abs(v.std() - 3.0) < 0.1
    u = tf.random.uniform([1000], minval=-2, maxval=5, seed=2).numpy()
    assert u.dtype == np.float32 and u.min() >= -2 and u.max() < 5
    i = tf.random.uniform([1000], minval=0, maxval=3, dtype=tf.int32, seed=3).numpy()
    assert set(np.unique(i)) == {0, 1, 2}
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * tf.random.normal([])
    assert t.gradient(y, x) is not None          # through x, not through the draw


def test_dropout_like_training_step_changes_its_mask(tmp_path):
    w = tf.Variable(np.ones(6, np.float32))

    @tf.function
    def masked(x):
        keep = tf.cast(tf.random.uniform([6]) > 0.5, tf.float32)
        return tf.reduce_sum(x * w * keep)
    x = tf.ones([6])
    outs = {float(masked(x)) for _ in range(20)}
    assert len(outs) > 1
    path = str(tmp_path / "masked.tgz")
    tf.saved.save(masked.get_concrete_function(x), path)
    loaded = tf.saved.load(path)
    assert len({float(loaded(x)) for _ in range(20)}) > 1   # the draw survives saving
