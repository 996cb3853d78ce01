"""Complex derivatives follow TensorFlow's convention (issue 9, item 5): reverse mode gives
``g * conj(f'(z))``, forward mode ``f'(z) * t``; a primitive without a complex rule raises.

The reference values in ``data/complex_tf_reference.json`` were computed once by TensorFlow
(the script is stored in the file); the cases below are the same functions.
"""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import check_grads

REF = json.loads((pathlib.Path(__file__).parent / "data" / "complex_tf_reference.json")
                 .read_text())


def _c(pairs):
    return np.array([complex(a, b) for a, b in pairs], np.complex128)


Z, W, T = _c(REF["z"]), _c(REF["w"]), _c(REF["t"])
C = tf.constant(3 + 4j, tf.complex128)

CASES = {
    "mul_const": lambda z, w: z * C,
    "square_pow": lambda z, w: z ** 2,
    "integer_pow3": lambda z, w: z ** 3,
    "square": lambda z, w: tf.square(z),
    "mul": lambda z, w: z * w,
    "div": lambda z, w: z / w,
    "rdiv": lambda z, w: w / z,
    "add_sub_neg": lambda z, w: -(z + w) - z * 2.0,
    "exp": lambda z, w: tf.exp(z),
    "log": lambda z, w: tf.math.log(z),
    "sin": lambda z, w: tf.sin(z),
    "cos": lambda z, w: tf.cos(z),
    "tanh": lambda z, w: tf.tanh(z),
    "sqrt": lambda z, w: tf.sqrt(z),
    "sigmoid": lambda z, w: tf.sigmoid(z),
    "reciprocal": lambda z, w: tf.math.reciprocal(z),
    "pow": lambda z, w: tf.pow(z, w),
    "conj": lambda z, w: tf.math.conj(z) * w,
    "real": lambda z, w: tf.math.real(z * w),
    "imag": lambda z, w: tf.math.imag(z * w),
    "abs": lambda z, w: tf.abs(z * w),
    "abs_sq": lambda z, w: tf.abs(z) ** 2,
    "sum": lambda z, w: tf.reduce_sum(z * w),
    "reshape_transpose": lambda z, w: tf.transpose(tf.reshape(z * w, [3, 1])) * C,
    "matmul": lambda z, w: tf.matmul(tf.reshape(z, [1, 3]),
                                     tf.reshape(w, [3, 1]) * tf.reshape(z, [1, 3])),
    "complex": lambda z, w: tf.complex(tf.math.real(z), tf.math.imag(w)) * C,
    "cast_real": lambda z, w: tf.cast(tf.math.real(z), tf.complex128) * w,
    "mean": lambda z, w: tf.reduce_mean(z * w),
}


def test_every_reference_case_is_tested():
    assert sorted(CASES) == sorted(REF["cases"])


def _grads(fn, z, w):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([z, w])
        y = fn(z, w)
    return y, tape.gradient(y, [z, w])


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("how", ["eager", "function"])
def test_gradients_and_jvps_are_tensorflows(name, how):
    fn, ref = CASES[name], REF["cases"][name]
    z, w = tf.constant(Z), tf.constant(W)
    grads = tf.function(lambda z, w: _grads(fn, z, w)) if how == "function" else (
        lambda z, w: _grads(fn, z, w))
    y, (gz, gw) = grads(z, w)
    np.testing.assert_allclose(np.asarray(y.numpy(), complex).ravel(), _c(ref["y"]),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gz.numpy().ravel(), _c(ref["gz"]), rtol=1e-12, atol=1e-14)
    if ref["gw"] is None:
        assert gw is None
    else:
        np.testing.assert_allclose(gw.numpy().ravel(), _c(ref["gw"]), rtol=1e-12, atol=1e-14)
    with tf.autodiff.ForwardAccumulator(z, tf.constant(T)) as acc:
        y2 = fn(z, w)
    jvp = acc.jvp(y2)
    np.testing.assert_allclose(np.asarray(jvp.numpy(), complex).ravel(), _c(ref["jvp"]),
                               rtol=1e-12, atol=1e-14)
    assert jvp.dtype == y2.dtype  # the tangent of a real output is real


def test_the_issue_examples():
    z = tf.constant(1 + 2j, tf.complex128)
    with tf.GradientTape(persistent=True) as t:
        t.watch(z)
        a, b = z * tf.constant(3 + 4j, tf.complex128), z ** 2
    assert t.gradient(a, z).numpy().item() == 3 - 4j
    assert t.gradient(b, z).numpy().item() == 2 - 4j


def test_real_loss_gradient_is_the_steepest_ascent_direction():
    # L(x + iy) = |z - a|^2: TensorFlow's gradient is dL/dx + i dL/dy = 2 (z - a)
    a = tf.constant(0.5 - 1j, tf.complex128)
    z = tf.constant(Z)
    with tf.GradientTape() as t:
        t.watch(z)
        d = z - a
        loss = tf.reduce_sum(tf.math.real(d * tf.math.conj(d)))
    np.testing.assert_allclose(t.gradient(loss, z).numpy(), 2 * (Z - (0.5 - 1j)), rtol=1e-13)


def test_second_order_and_jacobian():
    z = tf.constant(Z)
    with tf.GradientTape() as t2:
        t2.watch(z)
        with tf.GradientTape() as t1:
            t1.watch(z)
            y = tf.reduce_sum(z ** 3)
        g = t1.gradient(y, z)           # 3 conj(z)^2
    np.testing.assert_allclose(g.numpy(), 3 * np.conj(Z) ** 2, rtol=1e-13)
    gg = t2.gradient(g, z)              # through conj, then 3 z^2: 6 conj(z), as TensorFlow
    np.testing.assert_allclose(gg.numpy(), 6 * np.conj(Z), rtol=1e-13)
    with tf.GradientTape() as t:
        t.watch(z)
        y = tf.exp(z)
    np.testing.assert_allclose(t.jacobian(y, z).numpy(), np.diag(np.conj(np.exp(Z))),
                               rtol=1e-13)


def test_real_function_of_complex_matches_central_differences():
    # a real loss of z = x + iy: TensorFlow's gradient is dL/dx + i dL/dy
    def loss(z):
        return tf.reduce_sum(tf.abs(tf.sin(z) * z + tf.exp(z) / (z + 2.0)) ** 2)
    z = tf.constant(Z)
    with tf.GradientTape() as t:
        t.watch(z)
        y = loss(z)
    g = t.gradient(y, z).numpy()
    h = 1e-6
    num = np.zeros_like(Z)
    for k in range(Z.size):
        for unit in (1, 1j):
            e = np.zeros_like(Z)
            e[k] = h * unit
            d = (float(loss(tf.constant(Z + e))) - float(loss(tf.constant(Z - e)))) / (2 * h)
            num[k] += unit * d
    np.testing.assert_allclose(g, num, rtol=1e-7)


@pytest.mark.parametrize("fn", [lambda z: tf.maximum(z, z), lambda z: tf.nn.softplus(z),
                                lambda z: tf.linalg.inv(tf.reshape(z[:1], [1, 1]))],
                         ids=["maximum", "softplus", "inv"])
def test_primitives_without_a_complex_rule_raise(fn):
    z = tf.constant(Z)
    with tf.GradientTape() as t:
        t.watch(z)
        try:
            y = fn(z)
        except (TypeError, tf.errors.InvalidArgumentError):
            return  # refusing complex values already is fine too (TensorFlow's maximum and
            # softplus raise InvalidArgumentError)
    with pytest.raises(TypeError, match="not defined for complex values"):
        t.gradient(y, z)
    with pytest.raises(TypeError, match="not defined for complex values"):
        with tf.autodiff.ForwardAccumulator(z, tf.constant(T)) as acc:
            acc.jvp(fn(z))


def test_real_inputs_are_unchanged():
    check_grads(lambda x: tf.math.real(tf.complex(x, x * 2.0)) * tf.math.imag(
        tf.complex(x * x, tf.sin(x))), [np.array([0.3, -1.2, 2.0])], order=2)


def test_complex_ops_on_real_tensors():
    x = tf.constant([1.0, -2.0])
    assert tf.math.real(x) is x and tf.math.conj(x) is x
    assert tf.math.imag(x).numpy().tolist() == [0.0, 0.0]
    assert tf.complex(1.0, 2.0).dtype == np.complex64
    with pytest.raises(TypeError):
        tf.complex(tf.constant(1.0), tf.constant(1.0, tf.float64))
