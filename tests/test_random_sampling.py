"""``tf.random.categorical`` and ``tf.random.shuffle``: TensorFlow 2.21's dtypes, shapes and
errors (checked by hand against it); the draws follow the distribution (frequencies within
5 standard errors), are fresh on every call of a ``tf.function`` and repeat after
``tf.random.set_seed``. The stream is not TensorFlow's (README, differences)."""
import numpy as np
import pytest

import tapegrad as tf


def test_categorical_follows_the_probabilities():
    tf.random.set_seed(11)
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    with np.errstate(divide="ignore"):
        logits = np.log(p)
    n = 20000
    s = tf.random.categorical(logits, n)
    assert s.dtype == tf.int64 and s.shape == (2, n)
    for row, probs in zip(s.numpy(), p):
        freq = np.bincount(row, minlength=3) / n
        se = np.sqrt(probs * (1 - probs) / n)
        assert np.all(np.abs(freq - probs) <= 5 * se + 1e-12)
    assert not np.any(s.numpy()[1] == 2)  # a class of probability 0 (-inf) never comes


def test_categorical_dtypes_and_errors():
    assert tf.random.categorical([[0.0, 1.0]], 3, dtype=tf.int32).dtype == tf.int32
    assert tf.random.categorical(tf.constant([[0.0, 1.0]], tf.float64), 2).dtype == tf.int64
    assert tf.random.categorical([[0.0, 1.0]], 0).shape == (1, 0)
    with pytest.raises(ValueError, match="Accepted dtypes"):
        tf.random.categorical([[0.0, 1.0]], 2, dtype=tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="matrix"):
        tf.random.categorical([0.0, 1.0], 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        tf.random.categorical([[0.0, 1.0]], -1)
    with pytest.raises(tf.errors.NotFoundError):
        tf.random.categorical([[0, 1]], 2)


def test_shuffle_permutes_the_first_axis():
    x = np.arange(12).reshape(6, 2)
    got = tf.random.shuffle(x).numpy()
    assert got.shape == (6, 2) and sorted(map(tuple, got)) == sorted(map(tuple, x))
    assert np.all(got[:, 1] == got[:, 0] + 1)  # rows move whole
    assert tf.random.shuffle(tf.constant(3.0)).numpy() == 3.0
    # every position sees every value: the permutations are uniform enough
    seen = np.zeros((4, 4))
    for _ in range(400):
        seen[np.arange(4), tf.random.shuffle(tf.range(4)).numpy()] += 1
    assert seen.min() > 50


def test_fresh_per_call_and_repeatable_with_the_seed():
    f = tf.function(lambda v: (tf.random.shuffle(v), tf.random.categorical([[0.0] * 8], 16)))
    a, b = f(tf.range(20)), f(tf.range(20))
    assert not np.array_equal(a[0].numpy(), b[0].numpy())
    assert not np.array_equal(a[1].numpy(), b[1].numpy())
    tf.random.set_seed(5)
    one = tf.random.shuffle(tf.range(20)).numpy(), tf.random.categorical([[0.0] * 8], 16).numpy()
    tf.random.set_seed(5)
    two = tf.random.shuffle(tf.range(20)).numpy(), tf.random.categorical([[0.0] * 8], 16).numpy()
    np.testing.assert_array_equal(one[0], two[0])
    np.testing.assert_array_equal(one[1], two[1])
