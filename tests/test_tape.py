"""GradientTape and ForwardAccumulator: one test per point of TensorFlow's behaviour.

The points are those of ../shared/reference/gradient_tape_semantics.md and of issue 2,
item 5, in their order. Where tapegrad differs from TensorFlow on purpose (a persistent tape
differentiates its own gradients after its block), the test says so.
"""
import gc
import threading
import warnings
import weakref

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.core.state import STATE


def f32(x):
    return np.float32(x)


# ==== Recording ================================================================================
def test_op_is_recorded_on_every_tape_watching_an_input():
    x = tf.constant(3.0)
    with tf.GradientTape() as t1, tf.GradientTape() as t2:
        t1.watch(x)
        t2.watch(x)
        y = x * x
    assert float(t1.gradient(y, x)) == 6.0
    assert float(t2.gradient(y, x)) == 6.0


def test_integer_operations_are_never_recorded():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        i = tf.cast(x, tf.int32) * 2          # integer op: not recorded
        y = tf.cast(i, tf.float32) * x        # only the last factor carries a gradient
        z = tf.cast(tf.cast(x, tf.int32), tf.float32)
    assert float(t.gradient(y, x)) == 6.0
    assert t.gradient(z, x) is None


def test_outputs_of_recorded_operations_are_watched():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
        z = y * y
    assert float(t.gradient(z, y)) == 18.0   # d(y²)/dy = 2y


def test_trainable_variables_are_watched_when_read():
    v = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = v * v
    assert float(t.gradient(y, v)) == 6.0
    assert t.watched_variables() == (v,)


def test_watch_accessed_variables_false_watches_nothing_automatically():
    v, w = tf.Variable(3.0), tf.Variable(4.0)
    with tf.GradientTape(watch_accessed_variables=False) as t:
        t.watch(w)
        y = v * w
    assert t.watched_variables() == (w,)
    gv, gw = t.gradient(y, [v, w])
    assert float(gw) == 3.0
    # v's read was not recorded: the product saw a snapshot, not v (TF: None as well)
    assert gv is None
    with tf.GradientTape(watch_accessed_variables=False) as t:
        y = v * v
    assert t.gradient(y, v) is None


def test_non_trainable_variables_are_not_watched_but_can_be_watched_explicitly():
    v = tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as t:
        y = v * v
    assert t.gradient(y, v) is None
    assert t.watched_variables() == ()
    with tf.GradientTape() as t:
        t.watch(v)
        y = v * v
    assert float(t.gradient(y, v)) == 6.0
    assert t.watched_variables() == (v,)


def test_watch_accepts_nested_structures_of_tensors_and_variables():
    a, b, c = tf.constant(1.0), tf.constant(2.0), tf.Variable(3.0, trainable=False)
    with tf.GradientTape() as t:
        t.watch({"a": a, "rest": [b, (c,)]})
        y = a * b * c
    ga, gb, gc_ = t.gradient(y, [a, b, c])
    assert (float(ga), float(gb), float(gc_)) == (6.0, 3.0, 2.0)


@pytest.mark.parametrize("bad", [3.0, "x", np.float32(1.0), [tf.constant(1.0), 2]])
def test_watch_rejects_anything_else_with_valueerror_naming_the_type(bad):
    with tf.GradientTape() as t:
        with pytest.raises(ValueError, match=r"Passed in object .* of type .*(float|str|int).*"
                                              r"not tf\.Tensor or tf\.Variable"):
            t.watch(bad)


def test_watching_an_integer_tensor_warns():
    with tf.GradientTape() as t:
        with pytest.warns(UserWarning, match=r"The dtype of the watched tensor must be floating "
                                             r"\(e\.g\. tf\.float32\), got tf\.int32"):
            t.watch(tf.constant(1))


def test_watching_only_affects_later_operations():
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as t:
        y = x * x
        t.watch(x)
        z = x * 3.0
        w = y + z
    assert t.gradient(y, x) is None
    assert float(t.gradient(z, x)) == 3.0
    assert float(t.gradient(w, x)) == 3.0


def test_entering_an_active_tape_is_an_error():
    t = tf.GradientTape()
    with t:
        with pytest.raises(ValueError, match=r"^Tape is still recording, This can happen if you "
                                             r"try to re-enter an already-active tape\.$"):
            with t:
                pass


def test_re_entering_after_exit_continues_recording_on_the_same_tape():
    x = tf.constant(3.0)
    t = tf.GradientTape()
    with t:
        t.watch(x)
        y = 2 * x
    with t:
        z = 2 * y
    assert float(t.gradient(z, x)) == 4.0


def test_active_tapes_are_per_thread():
    x = tf.constant(3.0)
    out = {}

    def other_thread():
        out["active"] = list(STATE.stack.recorders)
        out["y"] = x * x
    with tf.GradientTape() as t:
        t.watch(x)
        th = threading.Thread(target=other_thread)
        th.start()
        th.join()
        z = x * 5.0
    assert out["active"] == []
    assert t.gradient([out["y"], z], x).numpy() == 5.0


def test_tapes_in_two_threads_do_not_see_each_other():
    results, errors = {}, []

    def work(k, x0):
        try:
            x = tf.constant(x0)
            with tf.GradientTape() as t:
                t.watch(x)
                y = x
                for _ in range(200):
                    y = y * 1.0 + x * 0.0
                y = y ** k
            results[k] = float(t.gradient(y, x))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    ths = [threading.Thread(target=work, args=(k, float(k))) for k in (2, 3)]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    assert not errors
    assert results == {2: 4.0, 3: 27.0}


# ==== stop_recording, reset, watched_variables ===================================================
def test_stop_recording_hides_operations():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        with t.stop_recording():
            y = x * x
        z = x * x
    assert t.gradient(y, x) is None
    assert float(t.gradient(z, x)) == 6.0


def test_stop_recording_only_pauses_its_own_tape():
    x = tf.constant(3.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x
    assert inner.gradient(y, x) is None
    assert float(outer.gradient(y, x)) == 6.0


def test_stop_recording_outside_the_context_is_an_error():
    t = tf.GradientTape()
    with pytest.raises(RuntimeError, match=r"^Trying to stop recording a tape which is not "
                                           r"recording\.$"):
        with t.stop_recording():
            pass


def test_reset_forgets_the_recording_and_keeps_recording():
    v = tf.Variable(1.0)
    with tf.GradientTape() as t:
        loss = v * v
        t.reset()
        loss += v * v
    assert float(t.gradient(loss, v)) == 2.0


def test_reset_outside_the_context_is_an_error():
    with pytest.raises(ValueError, match=r"^Tape is not recording\.$"):
        tf.GradientTape().reset()


def test_watched_variables_are_a_tuple_in_creation_order():
    b = tf.Variable(2.0, name="b")
    a = tf.Variable(1.0, name="a")
    c = tf.Variable(1.0, name="c")
    with tf.GradientTape() as t:
        t.watch(c)
        _ = a * b
    got = t.watched_variables()
    assert isinstance(got, tuple)
    assert [v.name for v in got] == ["b:0", "a:0", "c:0"]


# ==== gradient(target, sources, output_gradients, unconnected_gradients) =========================
def test_result_has_the_structure_of_sources():
    x, y = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch([x, y])
        z = x * y
    g = t.gradient(z, {"x": x, "pair": (y, [x])})
    assert set(g) == {"x", "pair"} and isinstance(g["pair"], tuple)
    assert isinstance(g["pair"][1], list)
    assert (float(g["x"]), float(g["pair"][0]), float(g["pair"][1][0])) == (3.0, 2.0, 3.0)


def test_a_repeated_source_gets_the_full_gradient_in_each_position():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    g = t.gradient(y, [x, x])
    assert [float(v) for v in g] == [6.0, 6.0]


def test_several_targets_are_summed():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        a, b = x * x, x * 5.0
    assert float(t.gradient([a, b], x)) == 11.0


def test_a_dict_of_targets_is_summed():
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        d = {"a": x * x, "b": (x * 5.0, x ** 3)}
    assert float(t.gradient(d, x)) == 6.0 + 5.0 + 27.0


def test_a_non_scalar_target_is_summed():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.reshape(x, (3, 1)) * tf.constant([[1.0, 10.0]])
    assert t.gradient(y, x).numpy().tolist() == [11.0, 11.0, 11.0]


def test_a_target_that_is_a_source_gets_a_cotangent_of_ones():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    assert float(t.gradient(x, x)) == 1.0
    assert float(t.gradient([x, y], x)) == 1.0 + 2 * 3.0


def test_output_gradients_weight_each_target():
    x, y = tf.constant(2.0), tf.constant(5.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, y])
        xy = x * y
    (g,) = t.gradient([xy, x], [x], output_gradients=[1.0, 2.0])
    assert float(g) == 5.0 + 2.0
    (g,) = t.gradient([xy, x], [x], output_gradients=[tf.constant(3.0), None])
    assert float(g) == 3 * 5.0 + 1.0     # None means ones
    v = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(v)
        w = v * v
    assert t.gradient(w, v, output_gradients=tf.constant([10.0, 100.0])).numpy().tolist() \
        == [20.0, 400.0]


def test_output_gradients_of_the_wrong_shape_or_count_are_errors():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        t.gradient(y, x, output_gradients=tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="output_gradients"):
        t.gradient([y, y], x, output_gradients=[None])


def test_unconnected_sources_give_none_or_zeros():
    x, y = tf.constant(2.0), tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, y])
        z = x * 3.0
    gx, gy = t.gradient(z, [x, y])
    assert float(gx) == 3.0 and gy is None
    for how in (tf.UnconnectedGradients.ZERO, "zero"):
        gx, gy = t.gradient(z, [x, y], unconnected_gradients=how)
        assert float(gx) == 3.0
        assert gy.shape == (2,) and gy.dtype == y.dtype and gy.numpy().tolist() == [0.0, 0.0]
    assert t.gradient(z, [y], unconnected_gradients=tf.UnconnectedGradients.NONE) == [None]
    assert tf.UnconnectedGradients("none") is tf.UnconnectedGradients.NONE


def test_a_bad_unconnected_gradients_value_is_an_error():
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        z = x * 3.0
    with pytest.raises(ValueError, match=r"^Unknown value for unconnected_gradients: 'nonsense'$"):
        t.gradient(z, x, unconnected_gradients="nonsense")


def test_integer_sources_and_targets_give_none_with_a_warning():
    i = tf.constant(3)
    x = tf.constant(2.0)
    with tf.GradientTape(persistent=True) as t:
        with pytest.warns(UserWarning):
            t.watch(i)
        t.watch(x)
        j = i * i
        y = x * x
        yb = x > 1.0
    with pytest.warns(UserWarning, match=r"The dtype of the source tensor must be floating "
                                         r"\(e\.g\. tf\.float32\) when calling "
                                         r"GradientTape\.gradient, got tf\.int32"):
        g = t.gradient(y, [i, x])
    assert g[0] is None and float(g[1]) == 4.0
    with pytest.warns(UserWarning, match=r"The dtype of the target tensor must be floating "
                                         r"\(e\.g\. tf\.float32\) when calling "
                                         r"GradientTape\.gradient, got tf\.int32"):
        assert t.gradient(j, x) is None
    with pytest.warns(UserWarning, match="got tf.bool"):
        assert t.gradient(yb, x) is None


def test_target_none_is_a_typeerror():
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
    with pytest.raises(TypeError, match=r"^Argument `target` should be a list or nested structure"
                                        r" of Tensors, Variables or CompositeTensors to be "
                                        r"differentiated, but received None\.$"):
        t.gradient(None, x)


NON_PERSISTENT = (r"^A non-persistent GradientTape can only be used to compute one set of "
                  r"gradients \(or jacobians\)$")


@pytest.mark.parametrize("first", ["gradient", "jacobian", "batch_jacobian"])
@pytest.mark.parametrize("second", ["gradient", "jacobian", "batch_jacobian"])
def test_a_non_persistent_tape_can_be_used_once(first, second):
    x = tf.constant([[1.0, 2.0]])
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x

    def use(how):
        return getattr(t, how)(y, x)
    use(first)
    with pytest.raises(RuntimeError, match=NON_PERSISTENT):
        use(second)


def test_a_non_persistent_tape_stops_recording_when_gradient_is_called():
    x = tf.constant(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = x ** 3
            g = inner.gradient(y, x)      # inside the inner block
            with pytest.raises(ValueError, match="Tape is not recording"):
                inner.reset()             # it stopped recording
            assert inner not in STATE.stack.recorders
    assert float(g) == 12.0
    assert float(outer.gradient(g, x)) == 12.0   # the outer tape recorded the gradient ops


def test_a_persistent_tape_records_gradients_computed_inside_its_context():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as t:
        y = x ** 3
        g = t.gradient(y, x)
        g2 = t.gradient(g, x)
    assert (float(g), float(g2)) == (12.0, 12.0)
    assert float(t.gradient(g2, x)) == 6.0


def test_a_persistent_tape_differentiates_its_gradients_after_its_context():
    # tapegrad's documented difference from TensorFlow, which returns None here.
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as t:
        y = x ** 3
    g = t.gradient(y, x)
    g2 = t.gradient(g, x)
    g3 = t.gradient(g2, x)
    assert (float(g), float(g2), float(g3)) == (12.0, 12.0, 6.0)
    g4 = t.gradient(g3, x)                 # the constant 6: zero (or None if unconnected)
    assert g4 is None or float(g4) == 0.0


def test_persistent_after_exit_records_no_other_operations():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as t:
        y = x * x
    z = y * 10.0          # after the block: not recorded
    assert t.gradient(z, x) is None
    assert float(t.gradient(y, x)) == 4.0


def test_nested_tapes_give_third_derivatives():
    x = tf.constant(0.7)
    with tf.GradientTape() as t3:
        t3.watch(x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = tf.sin(x) * x
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    s, c = np.sin(f32(0.7)), np.cos(f32(0.7))
    np.testing.assert_allclose(float(d1), c * 0.7 + s, rtol=1e-6)
    np.testing.assert_allclose(float(d2), -s * 0.7 + 2 * c, rtol=1e-6)
    np.testing.assert_allclose(float(d3), -c * 0.7 - 3 * s, rtol=1e-6)


def test_several_tapes_each_record_only_what_they_watch():
    a, b = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape(persistent=True) as ta, tf.GradientTape(persistent=True) as tb:
        ta.watch(a)
        tb.watch(b)
        aa = a * a
        bb = b * b
        ab = a * b
    assert float(ta.gradient(aa, a)) == 4.0 and tb.gradient(aa, a) is None
    assert float(tb.gradient(bb, b)) == 6.0 and ta.gradient(bb, b) is None
    assert float(ta.gradient(ab, a)) == 3.0 and float(tb.gradient(ab, b)) == 2.0


# ---- variables ----------------------------------------------------------------------------------
def test_gradient_of_read_value_is_one():
    v = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = v.read_value()
    assert float(t.gradient(y, v)) == 1.0


def test_gradient_with_respect_to_a_variable_sums_over_its_reads():
    v = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y = v * v + v + v.read_value() * 2.0
    assert float(t.gradient(y, v)) == 2 * 3.0 + 1.0 + 2.0


def test_reads_after_an_assignment_see_the_new_value():
    v = tf.Variable(3.0)
    with tf.GradientTape() as t:
        a = v * v
        v.assign(5.0)
        b = v * v
        c = a + b
    assert float(c) == 9.0 + 25.0
    assert float(t.gradient(c, v)) == 6.0 + 10.0


def test_a_variable_replaced_by_a_tensor_is_no_longer_a_variable():
    x = tf.Variable(2.0)
    x = x + 1                       # now a plain tensor, outside any tape
    with tf.GradientTape() as t:
        y = x * x
    assert t.gradient(y, x) is None
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    assert float(t.gradient(y, x)) == 6.0


def test_assign_blocks_the_gradient():
    x0 = tf.Variable(3.0)
    x1 = tf.Variable(0.0)
    with tf.GradientTape() as t:
        x1.assign_add(x0)
        y = x1 ** 2
    assert t.gradient(y, x0) is None
    with tf.GradientTape() as t:
        x1.assign(x0 * 2.0)
        x1.assign_sub(x0)
        y = x1 * 1.0
    assert t.gradient(y, x0) is None


def test_stop_gradient_gives_none():
    x = tf.constant(3.0)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = tf.stop_gradient(x * x)
        z = tf.stop_gradient(x) * x
    assert t.gradient(y, x) is None
    assert float(t.gradient(z, x)) == 3.0


@pytest.fixture
def rule_less_primitive():
    p = Primitive("_test_no_gradient_rule", lambda x: x * 2, nin=1, emit="2 * {0}")
    p.batch = lambda args, batched: p.bind_raw(args[0])
    try:
        yield p
    finally:
        PRIMITIVES.pop("_test_no_gradient_rule", None)
    assert "_test_no_gradient_rule" not in PRIMITIVES


def test_a_primitive_without_a_gradient_rule_raises_lookuperror(rule_less_primitive):
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = rule_less_primitive(x)
    assert float(y) == 2.0
    with pytest.raises(LookupError, match=r"^gradient registry has no entry for: "
                                          r"_test_no_gradient_rule$"):
        t.gradient(y, x)


def test_a_primitive_without_a_jvp_rule_raises_lookuperror(rule_less_primitive):
    x = tf.constant(1.0)
    with pytest.raises(LookupError, match="_test_no_gradient_rule"):
        with tf.autodiff.ForwardAccumulator(x, tf.constant(1.0)):
            rule_less_primitive(x)


def test_a_primitive_without_rules_off_the_gradient_path_is_fine(rule_less_primitive):
    x, c = tf.constant(1.0), tf.constant(4.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * rule_less_primitive(c)     # c is not watched: nothing to differentiate
    assert float(t.gradient(y, x)) == 8.0


# ==== jacobian / batch_jacobian ==================================================================
def test_jacobian_shape_is_target_shape_plus_source_shape():
    x = tf.constant(np.arange(6.0).reshape(2, 3))
    s = tf.constant(2.0, tf.float64)  # x's dtype (TensorFlow promotes no float32 to it)
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, s])
        y = tf.reduce_sum(x * x, axis=1) * s      # shape (2,)
    jx, js = t.jacobian(y, [x, s])
    assert jx.shape == (2, 2, 3) and js.shape == (2,)
    expect = np.zeros((2, 2, 3))
    expect[0, 0] = 4 * x.numpy()[0]
    expect[1, 1] = 4 * x.numpy()[1]
    np.testing.assert_allclose(jx.numpy(), expect)
    np.testing.assert_allclose(js.numpy(), np.sum(x.numpy() ** 2, axis=1))
    j = t.jacobian(y, {"a": (x,)})
    assert j["a"][0].shape == (2, 2, 3)


def test_jacobian_of_a_scalar_and_with_respect_to_a_scalar():
    x = tf.constant(3.0)
    v = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, v])
        y = x * x
        w = v * x
    assert t.jacobian(y, x).shape == () and float(t.jacobian(y, x)) == 6.0
    assert t.jacobian(w, x).numpy().tolist() == [1.0, 2.0]
    assert t.jacobian(y, v) is None


def test_jacobian_unconnected_gives_none_or_zeros():
    x, w = tf.constant([1.0, 2.0]), tf.constant([[1.0, 2.0, 3.0]])
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, w])
        y = x * x
    assert t.jacobian(y, w) is None
    z = t.jacobian(y, w, unconnected_gradients="zero")
    assert z.shape == (2, 1, 3) and not np.any(z.numpy())


def test_jacobian_without_pfor_needs_a_persistent_tape():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match=r"^GradientTape must be created with persistent=True "
                                           r"to compute the jacobian with eager execution "
                                           r"enabled and with experimental_use_pfor set to "
                                           r"False\.$"):
        t.jacobian(y, x, experimental_use_pfor=False)
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    j = t.jacobian(y, x, experimental_use_pfor=False)
    assert j.numpy().tolist() == [[2.0, 0.0], [0.0, 4.0]]
    np.testing.assert_array_equal(j.numpy(), t.jacobian(y, x).numpy())


def test_jacobian_matches_rows_of_gradients():
    rng = np.random.RandomState(0)
    w = tf.constant(rng.standard_normal((3, 4)))
    x = tf.constant(rng.standard_normal(4))
    with tf.GradientTape(persistent=True) as t:
        t.watch([w, x])
        y = tf.tanh(tf.linalg.matvec(w, x))
        rows = [y[i] for i in range(3)]
    jw, jx = t.jacobian(y, [w, x])
    for i in range(3):
        gw, gx = t.gradient(rows[i], [w, x])
        np.testing.assert_allclose(jw[i].numpy(), gw.numpy(), rtol=1e-12)
        np.testing.assert_allclose(jx[i].numpy(), gx.numpy(), rtol=1e-12)


def test_batch_jacobian_shape_and_values():
    x = tf.constant(np.arange(6.0).reshape(2, 3) + 1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.stack([x * x, x * 3.0], axis=1)     # (2, 2, 3): example b uses only x[b]
    j = t.batch_jacobian(y, x)
    assert j.shape == (2, 2, 3, 3)
    for b in range(2):
        np.testing.assert_allclose(j.numpy()[b, 0], np.diag(2 * x.numpy()[b]))
        np.testing.assert_allclose(j.numpy()[b, 1], 3 * np.eye(3))


def test_batch_jacobian_shape_errors():
    x = tf.constant(np.ones((2, 3)))
    with tf.GradientTape(persistent=True) as t:
        t.watch(x)
        y = x * x
    # TensorFlow formats the shapes with str(TensorShape): "(2, 3)"; a list form is fine too
    with pytest.raises(ValueError, match=r"^Need first dimension of target shape \(.2, 3.\) and "
                                         r"source shape \(.3, 2.\) to match\.$"):
        t.batch_jacobian(y, tf.constant(np.ones((3, 2))))
    # TensorShape.with_rank_at_least(2), as in TensorFlow
    with pytest.raises(ValueError, match=r"^Shape \(2,\) must have rank at least 2$"):
        t.batch_jacobian(tf.reduce_sum(y, axis=1), x)     # rank 1 target
    with pytest.raises(ValueError, match=r"^Shape \(3,\) must have rank at least 2$"):
        t.batch_jacobian(y, x[0])                         # rank 1 source


def test_batch_jacobian_of_an_unconnected_source_is_zeros():
    x, z = tf.constant(np.ones((2, 3))), tf.constant(np.ones((2, 4)))
    with tf.GradientTape(persistent=True) as t:
        t.watch([x, z])
        y = x * x
    j = t.batch_jacobian(y, z)
    assert j is not None and j.shape == (2, 3, 4) and not np.any(j.numpy())


# ==== ForwardAccumulator =========================================================================
def test_forward_accumulator_computes_jvps_as_operations_run():
    x = tf.constant([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.5])) as acc:
        y = x * x
        assert acc.jvp(y).numpy().tolist() == [2.0, 2.0]   # available inside the block
        z = tf.reduce_sum(tf.sin(y))
    expect = np.sum(np.cos(np.float32([1.0, 4.0])) * np.float32([2.0, 2.0]))
    np.testing.assert_allclose(float(acc.jvp(z)), expect, rtol=1e-6)
    np.testing.assert_allclose(acc.jvp([y, {"z": z}])[1]["z"].numpy(), expect, rtol=1e-6)


def test_forward_accumulator_unconnected_gives_none_or_zeros():
    x, c = tf.constant(1.0), tf.constant([2.0, 3.0])
    with tf.autodiff.ForwardAccumulator(x, 1.0) as acc:
        y = c * 2.0
    assert acc.jvp(y) is None
    z = acc.jvp(y, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    assert z.shape == (2,) and z.numpy().tolist() == [0.0, 0.0]
    assert acc.jvp(y, unconnected_gradients="zero").numpy().tolist() == [0.0, 0.0]


def test_forward_accumulator_primal_given_twice_is_an_error():
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match=r"was specified as a primal multiple times"):
        tf.autodiff.ForwardAccumulator([x, x], [1.0, 1.0])


def test_forward_accumulator_primals_not_listed_have_zero_tangent():
    x, y = tf.constant(2.0), tf.constant(5.0)
    with tf.autodiff.ForwardAccumulator(x, 1.0) as acc:
        z = x * y
    assert float(acc.jvp(z)) == 5.0


def test_forward_accumulator_on_variables():
    v = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 1.0])) as acc:
        y = tf.reduce_sum(v * v)
    assert float(acc.jvp(y)) == 6.0


def test_forward_over_backward_gives_the_hessian_vector_product():
    v = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 0.0])) as acc:
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(v ** 3.0)
        backward = tape.gradient(y, v)
    assert backward.numpy().tolist() == [3.0, 12.0]
    assert acc.jvp(backward).numpy().tolist() == [6.0, 0.0]


def test_backward_over_forward_gives_the_same_hessian_vector_product():
    v = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(v)
        with tf.autodiff.ForwardAccumulator(v, tf.constant([1.0, 0.0])) as acc:
            y = tf.reduce_sum(v ** 3.0)
        jvp = acc.jvp(y)
    assert float(jvp) == 3.0
    assert tape.gradient(jvp, v).numpy().tolist() == [6.0, 0.0]


def test_nested_accumulators_give_second_derivatives():
    x = tf.constant(1.1)
    with tf.autodiff.ForwardAccumulator(x, 1.0) as acc1:
        with tf.autodiff.ForwardAccumulator(x, 1.0) as acc2:
            y = x ** 3.5
        d = acc2.jvp(y)
    np.testing.assert_allclose(float(d), 4.4417057, rtol=1e-6)
    np.testing.assert_allclose(float(acc1.jvp(d)), 10.094786, rtol=1e-6)


def test_an_inner_accumulator_is_invisible_to_tapes_it_encloses():
    # The JVP computation of an accumulator is seen only by recorders *outside* it.
    x = tf.constant(2.0)
    with tf.autodiff.ForwardAccumulator(x, 1.0) as acc:
        with tf.GradientTape() as t:
            t.watch(x)
            y = x * x
        jvp_inside = acc.jvp(y)
    assert float(jvp_inside) == 4.0
    assert t.gradient(jvp_inside, x) is None


# ==== custom_gradient, recompute_grad =============================================================
def _need(name):
    if not hasattr(tf, name):
        pytest.skip(f"tf.{name} is not implemented yet")
    return getattr(tf, name)


def test_custom_gradient():
    custom_gradient = _need("custom_gradient")

    @custom_gradient
    def log1pexp(x):
        e = tf.exp(x)

        def grad(upstream):
            return upstream * (1 - 1 / (1 + e))
        return tf.math.log(1 + e), grad

    x = tf.constant(100.0)
    with tf.GradientTape() as t, np.errstate(over="ignore"):  # exp(100) overflows float32
        t.watch(x)
        y = log1pexp(x)
    assert np.isinf(float(y))                 # the forward overflows in float32, as in TF...
    assert float(t.gradient(y, x)) == 1.0     # ...but the custom gradient stays finite

    @custom_gradient
    def two_grads_for_one_input(x):
        return x * 2.0, lambda upstream: (upstream, upstream)
    with pytest.raises(ValueError):
        with tf.GradientTape() as t:
            t.watch(x)
            y = two_grads_for_one_input(x)
        t.gradient(y, x)


def test_custom_gradient_with_variables():
    custom_gradient = _need("custom_gradient")
    w = tf.Variable(2.0)

    @custom_gradient
    def scale(x):
        def grad(upstream, variables=None):
            return upstream * w, [upstream * x * 10.0]
        return x * w, grad

    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = scale(x)
    gx, gw = t.gradient(y, [x, w])
    assert (float(gx), float(gw)) == (2.0, 30.0)

    @custom_gradient
    def bad(x):
        return x * w, lambda upstream: upstream * w
    with pytest.raises(TypeError, match="must accept a keyword argument 'variables'"):
        with tf.GradientTape() as t:
            t.watch(x)
            y = bad(x)
        t.gradient(y, x)


def test_recompute_grad():
    recompute_grad = _need("recompute_grad")
    calls = []

    def f(x):
        calls.append(1)
        return tf.sin(x) * x
    g = recompute_grad(f)
    x = tf.constant(0.5)
    with tf.GradientTape() as t:
        t.watch(x)
        y = g(x)
    np.testing.assert_allclose(float(t.gradient(y, x)),
                               np.cos(f32(0.5)) * 0.5 + np.sin(f32(0.5)), rtol=1e-6)
    assert len(calls) == 2    # forward, and again in the backward pass


# ==== memory =========================================================================================
def test_a_persistent_tape_drops_its_records_at_del():
    gc_was = gc.isenabled()
    gc.disable()
    try:
        v = tf.Variable(np.ones(100))
        with tf.GradientTape(persistent=True) as t:
            h = tf.exp(v)
            y = tf.reduce_sum(h)
        ref = weakref.ref(h)
        del h
        t.gradient(y, v)
        g = t.gradient(y, v)
        g2 = t.gradient(g, v)     # the gradient ops were recorded on the persistent tape
        assert ref() is not None
        del t
        assert ref() is None
        assert g2.shape == (100,)
    finally:
        if gc_was:
            gc.enable()


def test_tensors_hold_no_reference_to_tapes():
    x = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    ref = weakref.ref(t)
    del t
    assert ref() is None
    assert float(y) == 4.0


def test_memory_stays_flat_over_many_tape_uses():
    import tracemalloc
    v = tf.Variable(np.ones(10))

    def step():
        with tf.GradientTape() as t:
            y = tf.reduce_sum(v * v)
        return t.gradient(y, v)
    tracemalloc.start()
    try:
        for _ in range(3000):     # warm-up: NumPy's and tapegrad's bounded caches fill
            step()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(3000):
            step()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    # a leak of even one small object per use would show as >= 100 kB here
    assert after - before < 16 * 1024, f"memory grew by {after - before} bytes"


def test_no_warning_in_ordinary_use():
    x = tf.Variable(2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with tf.GradientTape() as t:
            y = x ** 3
        t.gradient(y, x)
