"""tapegrad.cond and tapegrad.while_loop: eager, traced, differentiated and vectorized."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.trace.tracer import OperatorNotAllowedInGraphError
from tapegrad.ir import check, optimize
from tapegrad.control_flow.ops import staged_cond, staged_while_loop
from tapegrad.control_flow.primitives import while_p
from tapegrad.testing import check_batching, check_grads


def prims(fn, *args):
    """Names of the primitives in the traced program of tapegrad.function ``fn``."""
    return [e.prim.name for e in fn.get_concrete_function(*args).program.equations]


def branchy(x):
    return tf.cond(tf.reduce_sum(x) > 1.0, lambda: tf.sin(x) * x, lambda: tf.exp(x) - x)


def grow(x):  # a loop whose trip count depends on the data
    return tf.while_loop(lambda y, s: tf.reduce_sum(y * y) < 10.0,
                         lambda y, s: (y * 1.7 + 0.1, s + tf.reduce_sum(tf.sin(y))),
                         (x, tf.reduce_sum(x)), maximum_iterations=20)


def x64(*values):
    return tf.constant(np.array(values, dtype=np.float64))


# ---- eager ------------------------------------------------------------------------------------
def test_eager_cond_runs_only_the_chosen_branch():
    ran = []
    out = tf.cond(tf.constant(True), lambda: ran.append("t") or 1.0,
                  lambda: ran.append("f") or 2.0)
    assert out == 1.0 and ran == ["t"]
    assert tf.cond(False, lambda: 1, lambda: 2) == 2


def test_eager_while_loop_has_tensorflows_structure_and_semantics():
    i, x = tf.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2.0), (0, 1.0))
    assert int(i) == 3 and float(x) == 8.0 and i.dtype == tf.int32
    assert int(tf.while_loop(lambda i: i < 5, lambda i: i + 1, tf.constant(0))) == 5
    (j,) = tf.while_loop(lambda j: j < 5, lambda j: j + 1, [0])  # a bare tensor is wrapped
    assert int(j) == 5
    d = tf.while_loop(lambda s: s["n"] < 4, lambda s: {"n": s["n"] + 1, "v": s["v"] * 3.0},
                      {"n": 0, "v": 1.0}, maximum_iterations=2)
    assert int(d["n"]) == 2 and float(d["v"]) == 9.0


def test_eager_gradient_records_the_operations_that_run():
    x = tf.Variable(1.5)
    with tf.GradientTape() as t:
        y = tf.while_loop(lambda y: y < 10.0, lambda y: y * x, x)
    assert float(y) == pytest.approx(1.5 ** 6) and float(t.gradient(y, x)) == pytest.approx(
        6 * 1.5 ** 5)


def test_back_prop_false_stops_the_gradient():
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.while_loop(lambda y: y < 5.0, lambda y: y * x, x, back_prop=False)
    assert t.gradient(y, x) is None


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(TypeError, match="boolean"):
        tf.cond(tf.constant(1.0), lambda: 1, lambda: 2)
    with pytest.raises(ValueError, match="scalar"):
        tf.cond(tf.constant([True, False]), lambda: 1, lambda: 2)
    with pytest.raises(TypeError, match="callable"):
        tf.cond(True, 1, lambda: 2)
    with pytest.raises(ValueError, match="structure"):
        tf.while_loop(lambda a, b: a < 3, lambda a, b: (a + 1,), (0, 1))
    with pytest.raises(ValueError, match=">= 0"):
        tf.while_loop(lambda a: a < 3, lambda a: a + 1, 0, maximum_iterations=-1)


# ---- traced -------------------------------------------------------------------------------------
def test_python_if_on_a_symbolic_tensor_points_to_cond_and_while_loop():
    f = tf.function(lambda x: x if x > 0 else -x, autograph=False)
    with pytest.raises(OperatorNotAllowedInGraphError, match="tapegrad.cond.*tapegrad.while_loop"):
        f(tf.constant(1.0))


def test_traced_cond_is_one_primitive_and_runs_either_branch():
    f = tf.function(branchy)
    for x in (x64(1.0, 2.0), x64(-1.0, 0.5)):
        np.testing.assert_allclose(f(x).numpy(), branchy(x).numpy())
    assert f.trace_count == 1 and "cond" in prims(f, x64(1.0, 2.0))
    assert "_cond(" in f.get_concrete_function(x64(1.0, 2.0)).source()


def test_traced_while_loop_matches_eager_and_is_one_primitive_per_dtype():
    f = tf.function(grow)
    for x in (x64(0.1, 0.2), x64(3.0, 4.0), x64(0.0, 0.0)):
        for a, b in zip(f(x), grow(x)):
            np.testing.assert_allclose(a.numpy(), b.numpy())
    assert prims(f, x64(0.1, 0.2)).count("while_loop") == 1  # y and s share one float64 loop
    counted = tf.function(lambda x: tf.while_loop(lambda i, y: i < 3,
                                                  lambda i, y: (i + 1, y * x), (0, x))[1])
    assert prims(counted, x64(2.0)) == ["while_loop"]  # the unused int32 counter is dropped


def test_outputs_keep_their_structure_and_python_side_effects_run_once():
    traces = []

    @tf.function
    def f(x):
        traces.append(1)
        return tf.cond(x[0] > 0, lambda: {"a": x * 2.0, "b": (tf.shape(x), x[0])},
                       lambda: {"a": -x, "b": (tf.shape(x) + 1, x[1])})
    out = f(x64(1.0, 2.0))
    assert set(out) == {"a", "b"} and out["b"][0].numpy().tolist() == [2]
    assert f(x64(-1.0, 2.0))["b"][1].numpy() == 2.0 and len(traces) == 1


def test_closures_over_traced_values_and_variables():
    v = tf.Variable(3.0)
    f = tf.function(lambda x: tf.cond(x > 0, lambda: x * v, lambda: x - v))
    assert float(f(tf.constant(2.0))) == 6.0
    v.assign(4.0)  # captured by reference, also inside a branch
    assert float(f(tf.constant(2.0))) == 8.0 and float(f(tf.constant(-1.0))) == -5.0
    with tf.GradientTape() as t:
        y = f(tf.constant(2.0))
    assert float(t.gradient(y, v)) == 2.0


def test_a_variable_assigned_in_a_traced_branch_is_a_cond_output_assigned_after():
    v = tf.Variable(0.0)

    @tf.function
    def f(x):
        return tf.cond(x > 0, lambda: (v.assign(x), x * 2.0)[1], lambda: x)
    assert float(f(tf.constant(1.5))) == 3.0 and float(v) == 1.5
    assert float(f(tf.constant(-4.0))) == -4.0 and float(v) == 1.5  # the other branch


def test_traced_branches_must_agree():
    f = tf.function(lambda x: tf.cond(x[0] > 0, lambda: x, lambda: x[:1]))
    with pytest.raises(TypeError, match="same dtype and shape"):
        f(x64(1.0, 2.0))
    g = tf.function(lambda x: tf.while_loop(lambda y: y[0] < 1, lambda y: y[:1], x))
    with pytest.raises(TypeError, match="same dtype and shape"):
        g(x64(0.0, 2.0))


def test_programs_with_control_flow_pass_the_checker_through_every_pass():
    f = tf.function(lambda x: grow(branchy(x)))
    p = f.get_concrete_function(x64(0.5, 0.1)).raw_program
    check(optimize(p, check=True))


def test_nested_control_flow():
    def f(x):
        def body(i, y):
            y = tf.cond(tf.reduce_sum(y) > 1.0, lambda: y * 0.5,
                        lambda: tf.while_loop(lambda z: tf.reduce_sum(z) < 1.0,
                                              lambda z: z * 2.0 + 0.1, y, maximum_iterations=10))
            return i + 1, y
        return tf.while_loop(lambda i, y: i < 5, body, (0, x), maximum_iterations=5)[1]
    x = x64(0.3, 0.2)
    np.testing.assert_allclose(tf.function(f)(x).numpy(), f(x).numpy())
    check_grads(tf.function(f), [x], order=2)
    check_batching(tf.function(f), [np.random.RandomState(0).rand(3, 2)], fallback_ok=False)


# ---- derivatives -------------------------------------------------------------------------------
@pytest.mark.parametrize("pred", [True, False])
def test_cond_primitive_derivatives_both_modes_second_order(pred):
    def f(p, x, w):
        return staged_cond(p, lambda x, w: tf.sin(x) * w, lambda x, w: tf.cos(x) + w * w, x, w)
    check_grads(f, [pred, [0.3, 0.7], 1.5], order=2)


def test_while_primitive_derivatives_both_modes_second_order():
    def counted(x):
        return staged_while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.sin(y) * x),
                                 (0, x), maximum_iterations=4)[1]
    check_grads(counted, [[0.3, 0.7]], order=2)
    check_grads(lambda x: grow(x)[1], [[0.3, 0.7]], order=2)
    check_grads(tf.function(lambda x: grow(x)), [[0.3, 0.7]], order=2)


def test_reverse_mode_without_a_bound_works_on_concrete_values():
    def unbounded(x):  # the trip count is measured when the values exist
        return staged_while_loop(lambda y: tf.reduce_sum(y) < 6.0, lambda y: y * 1.3 + x, x)
    check_grads(unbounded, [[0.3, 0.7]], order=2)


def test_reverse_mode_inside_a_trace_without_maximum_iterations_recomputes_the_states():
    def loop(x):
        return tf.while_loop(lambda y: tf.reduce_sum(y) < 6.0, lambda y: y * 1.3, x)
    grad = tf.grad(lambda x: tf.reduce_sum(loop(x) ** 2))
    for x in (x64(0.5, 1.0), x64(5.0, 2.0)):  # 5 iterations, none
        np.testing.assert_array_equal(tf.function(grad)(x).numpy(), grad(x).numpy())
    # forward mode needs no bound
    jf = tf.function(tf.jacfwd(loop))(x64(0.5, 1.0))
    np.testing.assert_allclose(jf.numpy(), tf.jacfwd(loop)(x64(0.5, 1.0)).numpy())


@pytest.mark.parametrize("fn", [branchy, lambda x: grow(x)[1]], ids=["cond", "while"])
def test_derivatives_traced_inside_a_function_match_eager(fn):
    x = x64(0.3, 0.7)
    for transform in (tf.jacrev, tf.jacfwd):
        got = tf.function(transform(fn))(x)
        np.testing.assert_allclose(got.numpy(), transform(fn)(x).numpy(), rtol=1e-10)
    h = tf.function(tf.hessian(lambda z: tf.reduce_sum(fn(z))))(x)
    np.testing.assert_allclose(h.numpy(), tf.hessian(lambda z: tf.reduce_sum(fn(z)))(x).numpy(),
                               rtol=1e-8)


def test_loop_history_rows_are_the_states_before_each_iteration():
    loop = staged_while_loop  # the primitive's history output, used by reverse mode
    f = tf.function(lambda x: loop(lambda y: y < 5.0, lambda y: y + 2.0, x))
    eqn = f.get_concrete_function(tf.constant(0.0)).program.equations[0]
    hist = while_p.bind_raw(tf.constant(0.0), **dict(eqn.params, maximum_iterations=5,
                                                     history=True))
    assert hist.numpy().tolist() == [0.0, 2.0, 4.0, 6.0, 6.0]  # stopped at 6, then held


# ---- vectorization -----------------------------------------------------------------------------
def test_cond_primitive_batches_with_and_without_a_batched_predicate():
    def f(p, x, w):
        return staged_cond(p, lambda x, w: tf.sin(x) * w, lambda x, w: tf.cos(x) + w, x, w)
    rng = np.random.RandomState(0)
    check_batching(f, [np.array([True, False, True]), rng.rand(3, 2), 1.5],
                   batched=[True, True, False], fallback_ok=False)
    check_batching(f, [np.array(False), rng.rand(3, 2), rng.rand(3)],
                   batched=[False, True, True], fallback_ok=False)


def test_while_primitive_batches_until_every_example_is_done():
    xs = np.random.RandomState(1).rand(4, 2) * np.array([[0.1], [1.0], [3.0], [0.0]])
    check_batching(lambda x: grow(x), [xs], fallback_ok=False)
    check_batching(tf.function(lambda x: grow(x)), [xs], fallback_ok=False)
    check_batching(lambda x: tf.grad(lambda z: tf.reduce_sum(grow(z)[0]))(x), [xs],
                   fallback_ok=False)


def test_eager_vmap_selects_and_masks_per_example():
    xs = tf.constant(np.random.RandomState(2).rand(4, 2) * 3)
    got = tf.vmap(branchy)(xs)
    np.testing.assert_allclose(got.numpy(), np.stack([branchy(x).numpy() for x in xs]))
    y, s = tf.vmap(grow)(xs)
    for k, x in enumerate(xs):
        np.testing.assert_allclose(y[k].numpy(), grow(x)[0].numpy())
        np.testing.assert_allclose(s[k].numpy(), grow(x)[1].numpy())


def test_vmap_of_a_compiled_function_with_control_flow():
    f = tf.function(lambda x: branchy(grow(x)[0]))
    xs = tf.constant(np.random.RandomState(3).rand(5, 2))
    np.testing.assert_allclose(tf.vmap(f)(xs).numpy(), np.stack([f(x).numpy() for x in xs]))
