"""TensorFlow's own tape tests (backprop, forwardprop, custom_gradient, tf.function),
translated to tapegrad's public API: the points of issue 9, item 7.

Each test says which behaviour of TensorFlow it checks; expected values are derivatives
computed by hand or central differences, never numbers copied from a run of tapegrad.
"""
import gc
import re
import weakref

import numpy as np
import pytest

import tapegrad as tf


# ==== a source the tape never watched ==============================================================
def test_an_unwatched_tensor_used_by_a_recorded_op_gets_none():
    # backprop_test: only watched tensors and outputs of recorded ops are on the tape
    x, c = tf.constant(3.0), tf.constant(2.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        b = c * 2.0            # not recorded: c is not watched
        y = b * x              # recorded (x is watched), but b never was
        z = x * 5.0            # computed from a watched tensor: on the tape
        w = z * b
    assert t.gradient(y, b) is None
    assert float(t.gradient(w, z)) == 4.0
    assert t.gradient(y, [x, b])[1] is None
    np.testing.assert_array_equal(t.gradient(y, b, unconnected_gradients="zero").numpy(), 0.0)
    assert t.jacobian(y, b) is None
    assert float(t.jacobian(w, z)) == 4.0


def test_an_unwatched_source_that_is_also_the_target_is_seeded_with_ones():
    # TensorFlow seeds a target that is also a source, watched or not
    c = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as t:
        y = c * 3.0
    assert float(t.gradient(c, c)) == 1.0
    assert float(t.gradient(y, y)) == 1.0
    assert t.gradient(y, [y, c])[1] is None


def test_a_variable_not_watched_gets_none_even_when_read():
    v = tf.Variable(2.0, trainable=False)   # not watched automatically
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = v * x
    gx, gv = t.gradient(y, [x, v])
    assert float(gx) == 2.0 and gv is None


def test_batch_jacobian_of_an_unwatched_source_is_zeros():
    x = tf.constant(np.ones((2, 3)))
    c = tf.constant(np.full((2, 3), 2.0))
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * c
    np.testing.assert_array_equal(t.batch_jacobian(y, c).numpy(), np.zeros((2, 3, 3)))


# ==== custom_gradient and recompute_grad ===========================================================
def test_recompute_grad_of_one_tensor_passed_as_two_arguments():
    # custom_gradient_test: each argument gets its own partial derivative, not the sum twice
    g = tf.recompute_grad(lambda a, b: a * b)
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = g(x, x)
    assert float(t.gradient(y, x)) == 2 * 2.0            # d(x*x)/dx


@pytest.mark.parametrize("value", [2.0, np.float32(2.0), np.array(2.0, np.float32)],
                         ids=["python float", "numpy scalar", "numpy array"])
def test_custom_gradient_returning_a_python_or_numpy_value(value):
    @tf.custom_gradient
    def f(x):
        return value, lambda dy: dy * 3.0 * x * x         # the rule, not the (zero) truth
    x = tf.constant(2.0)
    with tf.GradientTape() as t2:
        t2.watch(x)
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = f(x)
        g = t1.gradient(y, x)
    assert isinstance(y, tf.Tensor) and float(y) == 2.0
    assert float(g) == 3.0 * 2.0 ** 2                     # the custom rule
    assert float(t2.gradient(g, x)) == 6.0 * 2.0          # d/dx of 3 x**2
    # forward mode: the function as written gives no tangent, so TensorFlow transposes
    # the custom rule
    with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)) as acc:
        y = f(x)
    assert float(acc.jvp(y)) == 3.0 * 2.0 ** 2


def test_custom_gradient_forward_mode_transposes_the_rule_of_a_vector_output():
    x = tf.constant(2.0)

    @tf.custom_gradient
    def h(x):
        return np.full(2, 5.0, np.float32), lambda dy: tf.reduce_sum(dy * [1.0, 4.0]) * x
    with tf.autodiff.ForwardAccumulator(x, tf.constant(0.5)) as acc:
        y = h(x)
    # J = x * [1, 4] (the transpose of the rule), times the tangent 0.5
    np.testing.assert_array_equal(acc.jvp(y).numpy(), [1.0, 4.0])


def test_custom_gradient_accepts_nested_and_empty_tuple_arguments_unchanged():
    seen = []

    @tf.custom_gradient
    def f(empty, pair, x):
        seen.append((empty, type(pair)))
        a, (b,) = pair
        return a * b * x, lambda dy: (dy * b * x, dy * a * x, dy * a * b)
    x, a, b = tf.constant(2.0), tf.constant(3.0), tf.constant(5.0)
    with tf.GradientTape() as t:
        t.watch([x, a, b])
        y = f((), (a, (b,)), x)
    assert seen == [((), tuple)]
    assert [float(g) for g in t.gradient(y, [a, b, x])] == [10.0, 6.0, 15.0]


def test_recompute_grad_accepts_nested_and_empty_tuple_arguments_unchanged():
    seen = []

    def f(empty, pair, x):
        seen.append(empty)
        a, (b,) = pair
        return tf.sin(a) * b * x
    g = tf.recompute_grad(f)
    x, a, b = (tf.constant(v, tf.float64) for v in (2.0, 0.5, 5.0))
    with tf.GradientTape() as t:
        t.watch([x, a, b])
        y = g((), (a, (b,)), x)
    ga, gb, gx = (float(v) for v in t.gradient(y, [a, b, x]))
    assert seen == [(), ()]                               # forward, and the recomputation
    assert ga == pytest.approx(np.cos(0.5) * 5.0 * 2.0, rel=1e-12)
    assert gb == pytest.approx(np.sin(0.5) * 2.0, rel=1e-12)
    assert gx == pytest.approx(np.sin(0.5) * 5.0, rel=1e-12)


# ==== ForwardAccumulator holds what it tracks weakly ===============================================
def test_forward_accumulator_keeps_primals_and_tangents_alive_only_while_referenced():
    x, tx = tf.constant([1.0, 2.0]), tf.constant([1.0, 0.0])
    with tf.autodiff.ForwardAccumulator(x, tx) as acc:
        y = x * x
        ty = acc.jvp(y)
        refs = [weakref.ref(y), weakref.ref(ty)]
        del y, ty
        gc.collect()
        assert [r() for r in refs] == [None, None]
        z = tf.sin(x)                      # still recording, and the ids may be reused
    np.testing.assert_allclose(acc.jvp(z).numpy(), [np.cos(np.float32(1.0)), 0.0])
    refs = [weakref.ref(x), weakref.ref(tx)]
    del x, tx, z
    gc.collect()
    assert [r() for r in refs] == [None, None]
    assert not acc._tangents              # nothing left behind


# ==== float32 third derivatives ==================================================================
def _third(f, x0, v, w, dtype, mode):
    """w . D^3 f(x0)[v, v, v], in forward mode (nested accumulators) or reverse (tapes)."""
    x, t, wt = tf.constant(x0, dtype), tf.constant(v, dtype), tf.constant(w, dtype)
    if mode == "forward":
        with tf.autodiff.ForwardAccumulator(x, t) as a3:
            with tf.autodiff.ForwardAccumulator(x, t) as a2:
                with tf.autodiff.ForwardAccumulator(x, t) as a1:
                    y = f(x)
                d1 = a1.jvp(y)
            d2 = a2.jvp(d1)
        return float(tf.reduce_sum(a3.jvp(d2) * wt))
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.reduce_sum(f(x) * wt)
            d1 = tf.reduce_sum(t1.gradient(y, x) * t)
        d2 = tf.reduce_sum(t2.gradient(d1, x) * t)
    return float(tf.reduce_sum(t3.gradient(d2, x) * t))


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_float32_third_derivatives_are_as_accurate_as_tensorflows(mode):
    # forwardprop_test.testNumericHigherOrder's function; TensorFlow's float32 values are
    # within 5e-6 of float64 for these directions (the product rule used to cancel)
    def f(x):
        pointwise = tf.sin(x) * tf.tan(x)
        return tf.reduce_prod(pointwise + tf.reduce_sum(pointwise), axis=1)
    x0 = np.array([[2.0, 3.0], [1.0, 4.0]])
    rng = np.random.default_rng(0)
    for _ in range(20):
        v, w = rng.standard_normal((2, 2)), rng.standard_normal(2)
        exact = _third(f, x0, v, w, tf.float64, mode)
        assert _third(f, x0, v, w, tf.float32, mode) == pytest.approx(exact, rel=5e-6)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_third_derivatives_of_a_product_of_two_are_exactly_zero(mode):
    x0, v, w = np.array([[2.0, 3.0]]), np.array([[0.3, -0.7]]), np.array([1.5])
    assert _third(lambda x: tf.reduce_prod(x, axis=1), x0, v, w, tf.float32, mode) == 0.0


# ==== tf.function and variables ==================================================================
SINGLETON = ("tf.function only supports singleton tf.Variables created on the first call. "
             "Make sure the tf.Variable is only created once or created outside tf.function.")


def test_a_function_creating_a_variable_on_every_call_raises():
    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v + x
    with pytest.raises(ValueError, match=re.escape(SINGLETON)):
        f(tf.constant(1.0))


def test_a_variable_created_once_on_the_first_call_is_kept():
    state = {}

    @tf.function
    def f(x):
        if "v" not in state:
            state["v"] = tf.Variable(10.0)
        return state["v"].assign_add(x)
    f(tf.constant(1.0))
    f(tf.constant(2.0))
    assert float(state["v"]) == 13.0
    # a later trace (a new shape) may not create variables either
    with pytest.raises(ValueError, match=re.escape(SINGLETON)):
        state.clear()
        f(tf.constant([1.0, 2.0]))


def test_a_variable_may_be_initialised_from_a_function_argument():
    state = {}

    @tf.function
    def f(x):
        if "v" not in state:
            state["v"] = tf.Variable(x * 2.0)
        return state["v"].assign_add(x)
    assert float(f(tf.constant(2.0))) == 2.0 * 2.0 + 2.0
    assert float(f(tf.constant(3.0))) == 6.0 + 3.0
    assert float(state["v"]) == 9.0


# ==== batch_jacobian and non-persistent tapes =======================================================
def test_batch_jacobian_with_parallel_iterations_needs_a_persistent_tape():
    x = tf.constant(np.ones((3, 2)))

    def bj(persistent, **kw):
        with tf.GradientTape(persistent=persistent) as t:
            t.watch(x)
            y = x * x
        return t.batch_jacobian(y, x, **kw)
    message = ("GradientTape must be created with persistent=True to compute the "
               "batch_jacobian with parallel_iterations.")
    with pytest.raises(RuntimeError, match=re.escape(message)):
        tf.function(lambda: bj(False, parallel_iterations=2))()
    with pytest.raises(RuntimeError, match=re.escape(message)):
        bj(False, parallel_iterations=2)
    expected = np.broadcast_to(np.eye(2) * 2.0, (3, 2, 2))
    np.testing.assert_array_equal(
        tf.function(lambda: bj(True, parallel_iterations=2))().numpy(), expected)
    # the loop in a graph runs its body once: TensorFlow allows a non-persistent tape there
    np.testing.assert_array_equal(
        tf.function(lambda: bj(False, experimental_use_pfor=False))().numpy(), expected)


@pytest.mark.parametrize("use", ["gradient", "jacobian"])
def test_reusing_a_non_persistent_tape_with_a_list_source_raises(use):
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    getattr(t, use)(y, [x])
    with pytest.raises(RuntimeError, match="A non-persistent GradientTape can only be used to "
                                           "compute one set of gradients"):
        getattr(t, use)(y, [x])


def test_the_batch_jacobian_rank_check_says_must_have_rank_at_least_2():
    x = tf.constant(np.ones((2, 3)))
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    with pytest.raises(ValueError, match=r"Shape \(2,\) must have rank at least 2"):
        t.batch_jacobian(tf.reduce_sum(y, axis=1), x)
