"""Tapes in different threads share variables safely."""
import threading

import numpy as np
import pytest

import tapegrad as tf


def test_threads_reading_one_variable_get_their_own_gradients():
    v = tf.Variable(np.array([1.0, 2.0, 3.0]))
    errors = []

    def work(scale):
        try:
            for _ in range(300):
                with tf.GradientTape() as t:
                    y = tf.reduce_sum(v * v) * scale
                    y = y + tf.reduce_sum(v) * 0.0
                g = t.gradient(y, v)
                np.testing.assert_allclose(g.numpy(), 2 * scale * v.numpy())
        except Exception as e:  # reported to the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in (1.0, 2.0, 3.0, 4.0)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]


# ==== atomic variable updates (TensorFlow's AssignAddVariableOp holds the variable's lock) ====
def _hammer(fns, calls):
    """Run each of ``fns`` ``calls`` times, each in its own thread, all at once."""
    errors = []

    def work(fn):
        try:
            for _ in range(calls):
                fn()
        except Exception as e:  # reported to the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(fn,)) for fn in fns]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[0]


def test_eager_assign_add_and_sub_lose_no_update_under_threads():
    # large arrays: NumPy releases the GIL inside the add, where an unlocked
    # read-modify-write loses most updates
    v = tf.Variable(np.zeros(200_000))
    one = np.ones(200_000)
    _hammer([lambda: v.assign_add(one)] * 16, calls=40)
    np.testing.assert_array_equal(v.numpy(), np.full(200_000, 16 * 40.0))
    _hammer([lambda: v.assign_sub(tf.constant(one))] * 16, calls=40)  # the optimizer path
    np.testing.assert_array_equal(v.numpy(), np.zeros(200_000))


def test_assign_add_and_sub_from_mixed_threads_cancel_exactly():
    v = tf.Variable(np.zeros(50_000))
    one = np.ones(50_000)
    _hammer([lambda: v.assign_add(one), lambda: v.assign_sub(one)] * 4, calls=60)
    np.testing.assert_array_equal(v.numpy(), np.zeros(50_000))


def test_shared_function_updates_are_atomic():
    v = tf.Variable(0.0)
    big = tf.Variable(np.zeros(100_000))

    @tf.function
    def step():
        v.assign_add(1.0)
        big.assign_add(tf.ones([100_000], tf.float64))

    _hammer([step] * 16, calls=500)
    assert float(v) == 16 * 500
    np.testing.assert_array_equal(big.numpy(), np.full(100_000, 16 * 500.0))


def test_a_function_that_raises_releases_its_variables_locks():
    """The compiled call takes each updated variable's lock (unrolled, in creation
    order) and gives every one back when the program raises."""
    a, b = tf.Variable(1.0), tf.Variable(2.0)

    table = tf.constant([1.0, 1.0])

    @tf.function
    def step(i):
        a.assign_add(1.0)
        b.assign_add(tf.gather(table, i))  # an index out of range raises in the program

    step(tf.constant(1))
    with pytest.raises((IndexError, tf.errors.InvalidArgumentError)):
        step(tf.constant(5))
    done = []
    t = threading.Thread(target=lambda: done.append((a.assign_add(1.0), b.assign_add(1.0))))
    t.start()
    t.join(10)
    assert done and float(a) == 3.0 and float(b) == 4.0


def test_function_updates_interleaved_with_eager_updates_are_all_kept():
    v = tf.Variable(np.zeros(100_000))
    one = np.ones(100_000)
    sub = tf.function(lambda d: v.assign_sub(d))
    _hammer([lambda: v.assign_add(one), lambda: sub(tf.constant(one))] * 4, calls=50)
    np.testing.assert_array_equal(v.numpy(), np.zeros(100_000))


def test_function_updates_under_a_tape_are_atomic():
    # under a tape the program is interpreted through bind: the same locks apply
    v = tf.Variable(np.zeros(100_000))
    step = tf.function(lambda: v.assign_add(tf.ones([100_000], tf.float64)))

    def taped():
        with tf.GradientTape():
            step()

    _hammer([taped] * 16, calls=40)
    np.testing.assert_array_equal(v.numpy(), np.full(100_000, 16 * 40.0))


def test_loaded_function_updates_are_atomic(tmp_path):
    v = tf.Variable(np.zeros(100_000))
    step = tf.function(lambda: v.assign_add(tf.ones([100_000], tf.float64)))
    path = str(tmp_path / "step.tgz")
    tf.saved.save(step.get_concrete_function(), path)
    loaded = tf.saved.load(path)          # with its own copy of the variable
    (w,) = loaded.variables
    _hammer([loaded] * 16, calls=40)
    np.testing.assert_array_equal(w.numpy(), np.full(100_000, 16 * 40.0))
