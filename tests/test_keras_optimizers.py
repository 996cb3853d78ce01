"""tapegrad.keras optimizers: the eager array path equals the tensor path (and tf.function),
None gradients, clipping, schedules, state in Variables."""
import warnings

import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras

OPTIMIZERS = [
    lambda: keras.optimizers.SGD(0.1),
    lambda: keras.optimizers.SGD(0.1, momentum=0.9),
    lambda: keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True),
    lambda: keras.optimizers.Adam(0.05),
    lambda: keras.optimizers.Adam(0.05, amsgrad=True),
    lambda: keras.optimizers.AdamW(0.05, weight_decay=0.1),
    lambda: keras.optimizers.RMSprop(0.01),
    lambda: keras.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
    lambda: keras.optimizers.Adagrad(0.1),
    lambda: keras.optimizers.Nadam(0.05),
    lambda: keras.optimizers.Adamax(0.05),
    lambda: keras.optimizers.Adadelta(1.0, rho=0.5),
    lambda: keras.optimizers.Lion(0.05, beta_1=0.5),
    lambda: keras.optimizers.Lamb(0.05),
    lambda: keras.optimizers.Adam(0.05, clipnorm=0.5),
    lambda: keras.optimizers.SGD(0.1, clipvalue=0.1),
    lambda: keras.optimizers.SGD(0.1, global_clipnorm=0.3),
    lambda: keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(0.1, 3, 0.5)),
]


def _run(make, mode, steps=6):
    w = tf.Variable(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32))
    b = tf.Variable(np.array([0.1, -0.1], np.float32))
    opt = make()
    x = tf.constant(np.array([[1.0, 2.0], [-1.0, 0.5], [0.3, 0.3]], np.float32))

    def step():
        with tf.GradientTape() as t:
            loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w) + b) ** 2)
        g = t.gradient(loss, [w, b])
        opt.apply_gradients(zip(g, [w, b]))
    if mode == "function":
        step = tf.function(step)
    for _ in range(steps):
        if mode == "recorded":
            with tf.GradientTape():  # something records: the tensor path runs
                step()
        else:
            step()
    return w.numpy(), b.numpy(), int(opt.iterations)


@pytest.mark.parametrize("index", range(len(OPTIMIZERS)))
def test_array_path_tensor_path_and_function_agree(index):
    make = OPTIMIZERS[index]
    eager = _run(make, "eager")
    recorded = _run(make, "recorded")
    compiled = _run(make, "function")
    assert eager[2] == recorded[2] == compiled[2] == 6
    start = (np.array([[1.0, -2.0], [0.5, 3.0]]), np.array([0.1, -0.1]))
    for a, b, c, a0 in zip(eager[:2], recorded[:2], compiled[:2], start):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(a, c, rtol=1e-6, atol=1e-7)
        assert np.abs(a - a0).max() > 1e-3  # the variables moved


def test_none_gradient_warns_and_skips():
    v, w = tf.Variable(1.0), tf.Variable(2.0)
    opt = keras.optimizers.SGD(0.5)
    with pytest.warns(UserWarning, match=r"Gradients do not exist for variables \[.*\] when "
                                         "minimizing the loss"):
        opt.apply_gradients([(None, v), (tf.constant(1.0), w)])
    assert float(v) == 1.0 and float(w) == 1.5 and int(opt.iterations) == 1
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, v)])


def test_optimizer_state_lives_in_variables():
    v = tf.Variable([1.0, 2.0])
    opt = keras.optimizers.Adam()
    opt.apply_gradients([(tf.constant([1.0, 1.0]), v)])
    assert all(isinstance(x, tf.Variable) for x in opt.variables)
    assert [x.name for x in opt.variables][:2] == ["iteration", "learning_rate"]
    assert len(opt.variables) == 4  # iteration, learning rate, momentum, velocity
    opt.learning_rate = 0.5
    assert float(opt.learning_rate) == 0.5
    with pytest.raises(ValueError, match="Unknown variable"):
        opt.apply_gradients([(tf.constant(1.0), tf.Variable(1.0))])


def test_first_adam_step_is_lr_times_sign():
    v = tf.Variable([1.0, -1.0])
    keras.optimizers.Adam(0.1).apply_gradients([(tf.constant([3.0, -0.2]), v)])
    np.testing.assert_allclose(v.numpy(), [0.9, -0.9], rtol=1e-5)


def test_bad_arguments():
    with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue` and "
                                         "`global_clipnorm` can be set"):
        keras.optimizers.SGD(clipnorm=1.0, clipvalue=1.0)
    with pytest.raises(ValueError, match="`momentum` must be a float between"):
        keras.optimizers.SGD(momentum=2)
    with pytest.raises(ValueError, match="Argument\\(s\\) not recognized"):
        keras.optimizers.Adam(foo=1)
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier"):
        keras.optimizers.get("nope")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keras.optimizers.get("adam")


def test_schedules():
    S = keras.optimizers.schedules
    e = S.ExponentialDecay(1.0, 10, 0.5, staircase=True)
    assert [round(float(e(s)), 6) for s in (0, 9, 10, 25)] == [1.0, 1.0, 0.5, 0.25]
    p = S.PiecewiseConstantDecay([5, 10], [1.0, 0.5, 0.1])
    assert [float(p(s)) for s in (0, 5, 6, 10, 11)] == [1.0, 1.0, 0.5, 0.5,
                                                         pytest.approx(0.1)]
    c = S.CosineDecay(1.0, 10, alpha=0.1)
    np.testing.assert_allclose([float(c(s)) for s in (0, 5, 10, 20)], [1.0, 0.55, 0.1, 0.1],
                               rtol=1e-6)
    i = S.InverseTimeDecay(1.0, 2, 1.0)
    np.testing.assert_allclose(float(i(4)), 1 / 3, rtol=1e-6)
    with pytest.raises(ValueError, match="The length of boundaries should be 1 less"):
        S.PiecewiseConstantDecay([1], [1.0])
    opt = keras.optimizers.SGD(S.ExponentialDecay(0.1, 1, 0.5))
    v = tf.Variable(0.0)
    for _ in range(3):
        opt.apply_gradients([(tf.constant(1.0), v)])
    np.testing.assert_allclose(float(v), -(0.1 + 0.05 + 0.025), rtol=1e-6)
