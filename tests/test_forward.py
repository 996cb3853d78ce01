"""ForwardAccumulator: TensorFlow's semantics, JVPs against central differences, nesting."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.autodiff import ForwardAccumulator

RNG = np.random.default_rng(1)


def central(f, x, v, eps=1e-6):
    """(f(x + eps v) - f(x - eps v)) / 2 eps, in float64 NumPy."""
    return (np.asarray(f(x + eps * v)) - np.asarray(f(x - eps * v))) / (2 * eps)


FUNCS = {
    "poly": lambda x: x ** 3 - 2.0 * x,
    "trig": lambda x: tf.sin(x) * tf.cos(2.0 * x),
    "reduce": lambda x: tf.reduce_sum(tf.exp(x), axis=0),
    "matmul": lambda x: tf.matmul(x, tf.transpose(x)),
    "softmax": lambda x: tf.nn.softmax(x, axis=-1),
    "index": lambda x: x[1:, ::-1] * x[:-1, :],
    "concat": lambda x: tf.concat([x, tf.tanh(x)], axis=1),
    "where": lambda x: tf.where(x > 0, x * x, -x),
    "cumsum": lambda x: tf.math.cumsum(x, axis=1, reverse=True),
    "max": lambda x: tf.reduce_max(x, axis=1),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_jvp_matches_central_differences(name):
    f = FUNCS[name]
    x = RNG.standard_normal((3, 4))
    v = RNG.standard_normal((3, 4))
    xt = tf.constant(x)
    with ForwardAccumulator(xt, tf.constant(v)) as acc:
        y = f(xt)
    got = acc.jvp(y)
    want = central(lambda a: f(tf.constant(a)).numpy(), x, v)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-7)


def test_nested_primals_and_tangents():
    a, b = tf.constant([1.0, 2.0], tf.float64), tf.constant(3.0, tf.float64)
    with ForwardAccumulator({"a": a, "b": [b]}, {"a": np.array([1.0, 0.5]), "b": [2.0]}) as acc:
        y = a * b
        z = tf.reduce_sum(a)
    out = acc.jvp({"y": y, "z": (z, a)})
    np.testing.assert_allclose(out["y"].numpy(), [1.0 * 3 + 1.0 * 2, 0.5 * 3 + 2.0 * 2])
    assert float(out["z"][0]) == 1.5
    np.testing.assert_allclose(out["z"][1].numpy(), [1.0, 0.5])  # a primal's own tangent


def test_variable_primal():
    v = tf.Variable(2.0)
    with ForwardAccumulator(v, tf.constant(1.0)) as acc:
        y = v * v * v
    assert float(acc.jvp(y)) == pytest.approx(12.0)
    assert float(acc.jvp(v)) == 1.0


def test_unconnected_and_after_the_block():
    x, c = tf.constant(2.0), tf.constant(5.0)
    with ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = x * 3.0
        u = c * 2.0
    assert acc.jvp(u) is None
    assert float(acc.jvp(u, unconnected_gradients="zero")) == 0.0
    assert float(acc.jvp(u, unconnected_gradients=tf.UnconnectedGradients.ZERO)) == 0.0
    assert float(acc.jvp(y)) == 3.0
    w = x * 4.0  # outside: not tracked
    assert acc.jvp(w) is None
    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients: 'zeros'"):
        acc.jvp(u, unconnected_gradients="zeros")


def test_primal_given_twice():
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="was specified as a primal multiple times"):
        ForwardAccumulator([x, x], [tf.constant(1.0), tf.constant(2.0)])


def test_bad_arguments():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="same structure"):
        ForwardAccumulator([x], [tf.constant([1.0, 1.0]), tf.constant(1.0)])
    with pytest.raises(ValueError, match="tangent shape"):
        ForwardAccumulator(x, tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="primals must be tensors"):
        ForwardAccumulator([1.0], [1.0])
    acc = ForwardAccumulator(x, tf.ones_like(x))
    with acc:
        with pytest.raises(ValueError, match="already recording"):
            acc.__enter__()


def test_integer_operations_are_not_tracked():
    x = tf.constant(2.0)
    with ForwardAccumulator(x, tf.constant(1.0)) as acc:
        i = tf.cast(x, tf.int32) * 3
        y = tf.cast(i, tf.float32) * x
    assert acc.jvp(i) is None
    assert float(acc.jvp(y)) == 6.0  # only through the float path


# -- nesting ------------------------------------------------------------------------------------------
def test_forward_over_backward_hvp():
    v = tf.Variable([1.0, 2.0])
    with ForwardAccumulator(v, tf.constant([1.0, 0.0])) as acc:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v ** 3.0)
        backward = tape.gradient(y, v)
    np.testing.assert_allclose(backward.numpy(), [3.0, 12.0])
    np.testing.assert_allclose(acc.jvp(backward).numpy(), [6.0, 0.0])


def test_backward_over_forward():
    x = tf.constant([0.5, 1.5], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with ForwardAccumulator(x, tf.constant([1.0, 1.0], tf.float64)) as acc:
            y = tf.reduce_sum(tf.sin(x) * x)
        jvp = acc.jvp(y)
    g = tape.gradient(jvp, x)
    # d/dx sum_i (cos x_i * x_i + sin x_i) = -sin x * x + 2 cos x
    xv = x.numpy()
    np.testing.assert_allclose(g.numpy(), -np.sin(xv) * xv + 2 * np.cos(xv))


def test_forward_over_forward():
    x = tf.constant(1.1)
    with ForwardAccumulator(x, tf.constant(1.0)) as outer:
        with ForwardAccumulator(x, tf.constant(1.0)) as inner:
            y = x ** 3.5
        inner_jvp = inner.jvp(y)
    assert float(inner_jvp) == pytest.approx(4.4417057, rel=1e-6)
    assert float(outer.jvp(inner_jvp)) == pytest.approx(10.094786, rel=1e-6)


def test_inner_accumulator_does_not_see_outer_tangents_of_other_primals():
    x, z = tf.constant(2.0), tf.constant(3.0)
    with ForwardAccumulator(z, tf.constant(1.0)) as outer:
        with ForwardAccumulator(x, tf.constant(1.0)) as inner:
            y = x * z
    assert float(inner.jvp(y)) == 3.0
    assert float(outer.jvp(y)) == 2.0


def test_accumulator_outside_vmap():
    xs = RNG.standard_normal((4, 3))
    w = tf.constant(RNG.standard_normal(3))
    t = tf.constant(RNG.standard_normal(3))
    with ForwardAccumulator(w, t) as acc:
        y = tf.vmap(lambda r: tf.reduce_sum(tf.sin(r * w)))(xs)
    want = np.sum(np.cos(xs * w.numpy()) * xs * t.numpy(), axis=1)
    np.testing.assert_allclose(acc.jvp(y).numpy(), want)


def test_accumulator_inside_vmap():
    xs, ts = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))

    def per_example(x, t):
        with ForwardAccumulator(x, t) as acc:
            y = tf.reduce_sum(x ** 3)
        return acc.jvp(y)

    got = tf.vmap(per_example)(xs, ts)
    np.testing.assert_allclose(got.numpy(), np.sum(3 * xs ** 2 * ts, axis=1))


def test_jacobian_of_a_jvp_with_a_tape_outside():
    x = tf.constant([0.3, -0.4], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with ForwardAccumulator(x, tf.constant([1.0, 2.0], tf.float64)) as acc:
            y = x * x * x
        j = acc.jvp(y)  # 3 x^2 * t
    got = tape.jacobian(j, x)
    np.testing.assert_allclose(got.numpy(), np.diag(6 * x.numpy() * np.array([1.0, 2.0])))


def test_jvp_looked_up_inside_a_vmap_from_an_accumulator_outside():
    xs = RNG.standard_normal((4, 3))
    w = tf.constant(RNG.standard_normal(3))
    t = tf.constant(RNG.standard_normal(3))
    with ForwardAccumulator(w, t) as acc:
        got = tf.vmap(lambda r: acc.jvp(tf.reduce_sum(tf.sin(r * w))))(xs)
    np.testing.assert_allclose(got.numpy(), np.sum(np.cos(xs * w.numpy()) * xs * t.numpy(), 1))
