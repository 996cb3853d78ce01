"""Every code example of the lessons and the user's question (../shared/seeds/), with the
values they state.

The code is copied as written, with ``import tapegrad as tf`` in place of TensorFlow.
"""
import numpy as np
import pytest

import tapegrad as tf


# ---- "Persistent Tapes and Higher-Order Gradients" ------------------------------------------
def test_lesson_default_tape_gives_12_and_is_released_after_one_call():
    x = tf.Variable(2.0)

    # Default tape: one gradient() call only
    with tf.GradientTape() as tape:
        y = x ** 3
    dy_dx = tape.gradient(y, x)        # 3x² = 12
    assert float(dy_dx) == 12.0
    assert dy_dx.dtype == tf.float32 and dy_dx.shape == ()
    # tape.gradient(y, x)               # ERROR: tape released
    with pytest.raises(RuntimeError, match="A non-persistent GradientTape can only be used to "
                                           r"compute one set of gradients \(or jacobians\)"):
        tape.gradient(y, x)


def test_lesson_persistent_tape_allows_several_calls_and_gives_second_derivative_12():
    x = tf.Variable(2.0)

    # Persistent tape: multiple calls allowed
    with tf.GradientTape(persistent=True) as tape:
        y = x ** 3

    dy_dx = tape.gradient(y, x)        # 12
    d2y_dx2 = tape.gradient(dy_dx, x)  # 6x = 12
    assert float(dy_dx) == 12.0
    # tapegrad's documented difference from TensorFlow (which returns None here)
    assert d2y_dx2 is not None
    assert float(d2y_dx2) == 12.0
    # the persistent tape still answers the first question afterwards
    assert float(tape.gradient(y, x)) == 12.0
    del tape   # IMPORTANT for memory


def test_lesson_persistent_tape_second_derivative_at_other_points():
    # Not the lesson's point only: 6x at x = -1.5 and x = 0.5 (catches a constant answer).
    for x0 in (-1.5, 0.5):
        x = tf.Variable(x0)
        with tf.GradientTape(persistent=True) as tape:
            y = x ** 3
        dy_dx = tape.gradient(y, x)
        d2y_dx2 = tape.gradient(dy_dx, x)
        np.testing.assert_allclose(float(dy_dx), 3 * x0 ** 2, rtol=1e-6)
        np.testing.assert_allclose(float(d2y_dx2), 6 * x0, rtol=1e-6)


def test_lesson_nested_tape_second_derivative(capsys):
    x = tf.Variable(2.0)

    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x       # y = x³
        dy_dx = t1.gradient(y, x)        # 3x² = 12

    d2y_dx2 = t2.gradient(dy_dx, x)      # 6x = 12
    print(f"f'(2) = {dy_dx.numpy()}")    # 12.0
    print(f"f''(2) = {d2y_dx2.numpy()}") # 12.0
    assert capsys.readouterr().out == "f'(2) = 12.0\nf''(2) = 12.0\n"


def test_lesson_jacobian_shape_is_output_shape_plus_input_shape():
    # "tape.jacobian(y, x) returns shape output_shape + input_shape"
    x = tf.Variable([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x * x, axis=0)
    j = tape.jacobian(y, x)
    assert j.shape == (3, 2, 3)
    expect = np.zeros((3, 2, 3), np.float32)
    for i in range(3):
        expect[i, :, i] = 2 * x.numpy()[:, i]
    np.testing.assert_array_equal(j.numpy(), expect)


# ---- "Repeated use of GradientTape for multiple Jacobian calculations" ------------------------
def test_lesson_jacobian_of_x_squared():
    with tf.GradientTape() as g:
        x  = tf.constant([1.0, 2.0])  # noqa: E221 (as in the seed)
        g.watch(x)
        y = x * x
    jacobian = g.jacobian(y, x)
    assert jacobian.shape == (2, 2)
    assert jacobian.dtype == tf.float32
    assert jacobian.numpy().tolist() == [[2.0, 0.0], [0.0, 4.0]]


def test_lesson_repeated_jacobians_for_various_inputs():
    # The question: evaluate the same Jacobian for many inputs; each needs a fresh tape.
    for x0 in ([1.0, 2.0], [-3.0, 0.5], [0.0, 10.0]):
        with tf.GradientTape() as g:
            x = tf.constant(x0)
            g.watch(x)
            y = x * x
        np.testing.assert_array_equal(g.jacobian(y, x).numpy(), np.diag(2 * np.array(x0)))


def test_lesson_persistent_tape_serves_several_jacobians_of_one_forward_pass():
    # "A persistent GradientTape ... allows repeated evaluation of a single tape instance
    # with respect to multiple internal arguments of the computation."
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant([1.0, 2.0])
        g.watch(x)
        h = x * x
        y = tf.sin(h)
    np.testing.assert_allclose(g.jacobian(y, x).numpy(),
                               np.diag(np.cos([1.0, 4.0]) * [2.0, 4.0]), rtol=1e-6)
    np.testing.assert_allclose(g.jacobian(y, h).numpy(), np.diag(np.cos([1.0, 4.0])), rtol=1e-6)
    np.testing.assert_array_equal(g.jacobian(h, x).numpy(), [[2.0, 0.0], [0.0, 4.0]])


def test_lesson_loss_gradient_costs_one_pass_jacobian_of_n_outputs_has_n_rows():
    # The answer's point: a gradient of a scalar loss vs. a Jacobian of N outputs. The
    # Jacobian's rows are the gradients of each output.
    w = tf.Variable(np.linspace(-1.0, 1.0, 12).reshape(3, 4))
    x = tf.constant(np.arange(3.0).reshape(1, 3) + 1.0)
    with tf.GradientTape(persistent=True) as g:
        out = tf.reshape(tf.matmul(x, w), [4])
        loss = tf.reduce_sum(out)
    jac = g.jacobian(out, w)
    grad = g.gradient(loss, w)
    assert jac.shape == (4, 3, 4)
    np.testing.assert_allclose(tf.reduce_sum(jac, axis=0).numpy(), grad.numpy())
    for k in range(4):
        with tf.GradientTape() as gk:
            outk = tf.reshape(tf.matmul(x, w), [4])[k]
        np.testing.assert_allclose(jac[k].numpy(), gk.gradient(outk, w).numpy())
