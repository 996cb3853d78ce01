"""tf.gradients and tf.hessians inside tf.function: TensorFlow 2.21's answers (checked by
hand against it: stop_gradients, grad_ys, unconnected sources, integers, cond), against
GradientTape bit for bit, against central differences, and in the programs that use them
(a PINN residual written TF1-style, a Keras training step)."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad import keras
from tapegrad.testing import check_grads


def values(gs):
    return [None if g is None else g.numpy() for g in gs]


def test_tensorflows_answers_for_its_arguments():
    @tf.function
    def stop(x, y):
        z = x * y
        return tf.gradients(z * z + x, [x, y], stop_gradients=[z])
    assert values(stop(tf.constant(3.0), tf.constant(2.0))) == [1.0, None]

    @tf.function
    def weighted(x):
        return tf.gradients([x * 2.0, x * x], x, grad_ys=[tf.constant(1.0), 3.0])
    assert values(weighted(tf.constant(3.0))) == [20.0]

    @tf.function
    def unconnected(x, y, mode):
        return tf.gradients(x * 2.0, [x, y], unconnected_gradients=mode)
    g = values(unconnected(tf.constant(3.0), tf.constant([1.0, 2.0]), "zero"))
    assert g[0] == 2.0 and g[1].tolist() == [0.0, 0.0]
    assert values(unconnected(tf.constant(3.0), tf.constant([1.0, 2.0]), "none")) == [2.0, None]

    @tf.function
    def integers(i, x):
        return tf.gradients(tf.cast(i, tf.float32) * x, [i, x])
    assert values(integers(tf.constant(3), tf.constant(2.0))) == [None, 3.0]

    @tf.function
    def through_cond(x):
        return tf.gradients(tf.cond(x > 0, lambda: x * x, lambda: -x), x)
    assert values(through_cond(tf.constant(3.0))) == [6.0]
    assert values(through_cond(tf.constant(-3.0))) == [-1.0]

    @tf.function
    def constant_target(x):
        return tf.gradients(tf.constant(2.0), x)
    assert values(constant_target(tf.constant(3.0))) == [None]


def test_same_bits_as_a_gradient_tape_and_central_differences():
    w = np.random.default_rng(0).normal(size=(3, 4))

    def f(x):
        return tf.reduce_sum(tf.tanh(tf.matmul(x, w)) ** 2, axis=1)

    @tf.function
    def by_gradients(x):
        return tf.gradients(f(x), x)[0]

    @tf.function
    def by_tape(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x)
    x = tf.constant(np.random.default_rng(1).normal(size=(5, 3)))
    np.testing.assert_array_equal(by_gradients(x).numpy(), by_tape(x).numpy())
    check_grads(lambda x: by_gradients(x), (x,), modes=("rev",), order=1)


def test_hessians_match_the_analytic_one_and_differences():
    @tf.function
    def h(x):
        return tf.hessians(tf.reduce_sum(tf.sin(x[0]) * x[1] ** 2), x)[0]
    x0, x1 = 0.3, 0.7
    want = [[-np.sin(x0) * x1 ** 2, 2 * x1 * np.cos(x0)],
            [2 * x1 * np.cos(x0), 2 * np.sin(x0)]]
    np.testing.assert_allclose(h(tf.constant([x0, x1], tf.float64)).numpy(), want,
                               rtol=1e-14)

    @tf.function
    def h2(x):
        return tf.hessians(tf.reduce_sum(tf.exp(x) * tf.transpose(x)), x)[0]
    x = tf.constant(np.random.default_rng(2).normal(size=(2, 2)))
    got = h2(x).numpy()
    grad = tf.function(lambda x: tf.gradients(tf.reduce_sum(tf.exp(x) * tf.transpose(x)),
                                              x)[0])
    eps, x0 = 1e-6, x.numpy()
    for idx in np.ndindex(2, 2):   # column idx of the Hessian: the gradient's difference
        d = np.zeros_like(x0)
        d[idx] = eps
        fd = (grad(tf.constant(x0 + d)).numpy() - grad(tf.constant(x0 - d)).numpy()) / (2 * eps)
        np.testing.assert_allclose(got[(...,) + idx], fd, rtol=1e-7, atol=1e-9)

    @tf.function
    def linear(x, y):
        return tf.hessians(x * 2.0, [x, y])
    lin = linear(tf.constant([1.0, 2.0]), tf.constant(1.0))
    assert lin[0].numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]] and lin[1] is None


def test_a_pinn_residual_written_with_tf_gradients():
    # u = sin(pi x) exp(-pi^2 t) solves u_t = u_xx
    @tf.function
    def residual(x, t):
        u = tf.sin(np.pi * x) * tf.exp(-np.pi ** 2 * t)
        u_x = tf.gradients(u, x)[0]
        return tf.gradients(u, t)[0] - tf.gradients(u_x, x)[0]
    x = tf.constant(np.linspace(0.0, 1.0, 7))
    t = tf.constant(np.linspace(0.0, 0.3, 7))
    np.testing.assert_allclose(residual(x, t).numpy(), 0.0, atol=1e-12)


def test_a_keras_training_step_with_tf_gradients_equals_the_tapes():
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(3).normal(size=(8, 3)).astype("float32")
    y = np.random.default_rng(4).normal(size=(8, 1)).astype("float32")

    def make():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                                  keras.layers.Dense(1)])
        return model, keras.optimizers.SGD(0.1)
    m1, o1 = make()
    m2, o2 = make()

    @tf.function
    def step_gradients(x, y):
        loss = tf.reduce_mean((m1(x) - y) ** 2)
        grads = tf.gradients(loss, m1.trainable_variables)
        o1.apply_gradients(zip(grads, m1.trainable_variables))
        return loss

    @tf.function
    def step_tape(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((m2(x) - y) ** 2)
        grads = tape.gradient(loss, m2.trainable_variables)
        o2.apply_gradients(zip(grads, m2.trainable_variables))
        return loss
    for _ in range(3):
        np.testing.assert_array_equal(step_gradients(x, y).numpy(), step_tape(x, y).numpy())
    for a, b in zip(m1.get_weights(), m2.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_a_tape_differentiates_what_tf_gradients_staged():
    @tf.function
    def penalty_grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            g = tf.gradients(tf.reduce_sum(x ** 3), x)[0]     # 3 x^2
            p = tf.reduce_sum(g ** 2)                         # 9 sum x^4
        return tape.gradient(p, x)                            # 36 x^3
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(penalty_grad(tf.constant(x)).numpy(), 36 * x ** 3, rtol=1e-14)


def test_bad_uses_get_tensorflows_errors():
    with pytest.raises(RuntimeError, match="eager execution"):
        tf.gradients(tf.constant(1.0), tf.constant(2.0))

    @tf.function
    def too_many(x):
        return tf.gradients(x * x, x, grad_ys=[1.0, 2.0])
    with pytest.raises(ValueError, match="2 grad_ys for 1 ys"):
        too_many(tf.constant(1.0))
    v = tf.Variable(2.0)

    @tf.function
    def assigned(x):
        v.assign(x * 2.0)
        return tf.gradients(v * v, v)
    with pytest.raises(NotImplementedError, match="assigns"):
        assigned(tf.constant(1.0))

