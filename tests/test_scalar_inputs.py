"""Generated code reads a 0-d float input that only scalar arithmetic uses as a NumPy scalar
(``trace/codegen.py: _scalar_inputs``): the interpreter's bits (NaN, inf, -0.0 included),
and every other 0-d input (read by an array operation, an integer, returned) stays as
passed."""
import numpy as np
import pytest

import tapegrad as tf
from test_fusion import assert_same_bits, run_both

MARK = "# 0-d, read by scalar arithmetic"
VALUES = [0.001, -0.0, 0.0, 1.0, -2.5, 3e38, 1e-30, np.inf, -np.inf, np.nan]


def bias_correction(lr, t, x):
    """Adam's scalar chain, then an array operation on its result."""
    alpha = lr * tf.sqrt(1.0 - tf.pow(0.999, t)) / (1.0 - tf.pow(0.9, t))
    return x * alpha, alpha


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scalar_chains_on_0d_inputs_give_the_interpreters_bits(dtype):
    x = np.linspace(-2, 2, 12).astype(dtype)
    with np.errstate(all="ignore"):
        for lr in VALUES:
            for t in (1.0, 2.0, 7.0, -0.0, np.nan, np.inf):
                src = run_both(bias_correction, np.asarray(lr, dtype), np.asarray(t, dtype), x)
                assert src.count(MARK) == 2, src


def test_a_0d_input_that_an_array_operation_reads_stays_an_array():
    def f(lr, x):
        return x * lr, lr * 2.0

    with np.errstate(all="ignore"):
        for lr in VALUES:
            src = run_both(f, np.asarray(lr, "float32"), np.ones(3, "float32"))
            assert MARK not in src


def test_integer_and_returned_0d_inputs_stay_as_passed():
    def ints(n):
        return n + 1

    src = run_both(ints, np.asarray(2 ** 31 - 1, "int32"))
    assert MARK not in src

    def returned(lr):
        return lr, lr * 3.0

    src = run_both(returned, np.asarray(0.5, "float32"))
    assert MARK not in src


def test_a_compiled_step_with_a_variable_learning_rate_matches_eager_bits():
    """A learning rate Variable (0-d, float32) read by scalar arithmetic inside a compiled
    Keras Adam step; the same steps eagerly give the same bits."""
    def run(compiled):
        tf.keras.utils.set_random_seed(3)
        model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(3, "tanh"),
                                     tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam(learning_rate=0.01)
        x = tf.constant(np.linspace(-1, 1, 20, dtype="float32").reshape(5, 4))

        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x)))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))

        step = tf.function(step) if compiled else step
        for _ in range(4):
            step()
        if compiled:
            assert MARK in step.get_concrete_function().source()
        return [v.numpy() for v in model.variables + opt.variables]

    for got, want in zip(run(True), run(False)):
        assert_same_bits(got, want)
