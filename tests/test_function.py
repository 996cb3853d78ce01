"""``tapegrad.function``: tracing, signatures, variables, differentiation inside and outside."""
import collections
import re

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.compile import OperatorNotAllowedInGraphError
from tapegrad.core.state import STATE

RNG = np.random.default_rng(0)


def randn(*shape, dtype="float32"):
    return tf.constant(RNG.standard_normal(shape).astype(dtype))


# ---- tracing and reuse --------------------------------------------------------------------
def test_traces_once_and_prints_only_while_tracing(capsys):
    @tf.function
    def f(x):
        print("tracing f")
        return x * x + 1.0
    for v in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]):
        np.testing.assert_allclose(f(tf.constant(v)).numpy(), np.square(v) + 1)
    assert capsys.readouterr().out == "tracing f\n"
    assert f.trace_count == 1 and f.experimental_get_tracing_count() == 1


def test_new_shapes_and_dtypes_retrace_python_values_are_part_of_the_key():
    @tf.function
    def f(x, n):
        return x * n
    f(tf.zeros([2]), 2)
    f(tf.ones([2]), 2)
    assert f.trace_count == 1
    f(tf.zeros([3]), 2)
    f(tf.zeros([2], tf.float64), 2)
    assert f.trace_count == 3
    assert f(tf.ones([2]), 3).numpy().tolist() == [3.0, 3.0]
    assert f.trace_count == 4
    f(tf.ones([2]), 3.0)  # 3 and 3.0 are different Python values (and types)
    assert f.trace_count == 5


def test_numpy_arrays_are_tensor_arguments():
    f = tf.function(lambda x: x * 2.0)
    a = np.arange(3, dtype=np.float32)
    assert f(a).numpy().tolist() == [0.0, 2.0, 4.0]
    assert f(a + 1).numpy().tolist() == [2.0, 4.0, 6.0]
    assert f(tf.constant(a)).numpy().tolist() == [0.0, 2.0, 4.0]
    assert f.trace_count == 1


def test_keyword_arguments_and_defaults():
    @tf.function
    def f(x, scale=2.0, *, shift=0.0):
        return x * scale + shift
    x = tf.constant([1.0])
    assert float(f(x)[0]) == 2.0
    assert float(f(x, 2.0)[0]) == 2.0
    assert float(f(x=x, scale=2.0)[0]) == 2.0
    assert f.trace_count == 1
    assert float(f(x, shift=1.0)[0]) == 3.0
    with pytest.raises(TypeError, match="f\\(\\)"):
        f(x, nope=1)


def test_nested_structures_in_and_out():
    Pair = collections.namedtuple("Pair", "a b")

    @tf.function
    def f(d, pair, xs):
        return {"sum": d["u"] + d["v"], "pair": Pair(pair.b, pair.a),
                "list": [x * 2.0 for x in xs], "none": None, "label": "ok"}
    out = f({"u": tf.constant(1.0), "v": tf.constant(2.0)},
            Pair(tf.constant(3.0), tf.constant(4.0)), [tf.constant(5.0), tf.constant(6.0)])
    assert float(out["sum"]) == 3.0
    assert isinstance(out["pair"], Pair) and float(out["pair"].a) == 4.0
    assert [float(v) for v in out["list"]] == [10.0, 12.0]
    assert out["none"] is None and out["label"] == "ok"
    out2 = f({"u": tf.constant(10.0), "v": tf.constant(2.0)},
             Pair(tf.constant(3.0), tf.constant(4.0)), [tf.constant(5.0), tf.constant(6.0)])
    assert float(out2["sum"]) == 12.0 and f.trace_count == 1


def test_returning_inputs_constants_and_python_values():
    @tf.function
    def f(x):
        return x, tf.constant([7.0]), 3
    a, c, n = f(tf.constant([1.0]))
    assert a.numpy().tolist() == [1.0] and c.numpy().tolist() == [7.0] and n == 3


def test_get_concrete_function_and_inspection():
    @tf.function
    def f(x):
        return tf.reduce_sum(tf.exp(x))
    cf = f.get_concrete_function(tf.TensorSpec([3], tf.float32))
    assert f.get_concrete_function(tf.zeros([3])) is cf
    assert f.trace_count == 1
    assert float(cf(tf.zeros([3]))) == 3.0
    assert cf.graph is cf.program and cf.program.outputs[0].shape == ()
    assert "np.exp(x)" in cf.source() and "def f(x):" in cf.source()
    assert "exp" in str(cf.program)
    assert cf.structured_input_signature == [tf.TensorSpec([3], tf.float32)]
    with pytest.raises(TypeError, match="another signature"):
        cf(tf.zeros([4]))
    with pytest.raises(ValueError, match="unknown dimensions"):
        f.get_concrete_function(tf.TensorSpec([None], tf.float32))


def test_errors_in_the_traced_function_leave_no_cache_entry():
    calls = []

    @tf.function
    def f(x):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom")
        return x + 1.0
    with pytest.raises(RuntimeError, match="boom"):
        f(tf.zeros([2]))
    assert not STATE.stack.tracers and STATE.stack.idle
    assert f(tf.zeros([2])).numpy().tolist() == [1.0, 1.0]


def test_decorating_a_method():
    class Model:
        def __init__(self, k):
            self.k = tf.Variable(float(k))

        @tf.function
        def __call__(self, x):
            return x * self.k
    a, b = Model(2), Model(3)
    assert float(a(tf.constant(1.0))) == 2.0 and float(b(tf.constant(1.0))) == 3.0
    a.k.assign(5.0)
    assert float(a(tf.constant(1.0))) == 5.0


def test_nested_functions_are_inlined():
    inner = tf.function(lambda x: tf.sin(x) * 2.0)

    @tf.function
    def outer(x):
        return inner(x) + inner(x * 2.0)
    x = tf.constant([0.3, 0.4])
    np.testing.assert_allclose(outer(x).numpy(), 2 * np.sin(x.numpy()) + 2 * np.sin(2 * x.numpy()),
                               rtol=1e-6)
    assert outer.trace_count == 1 and inner.trace_count == 0
    assert [e.prim.name for e in outer.get_concrete_function(x).program.equations].count("sin") == 2


# ---- input_signature ------------------------------------------------------------------------
def test_input_signature_accepts_compatible_shapes():
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        return tf.reduce_sum(x, axis=1)
    assert f(tf.ones([3, 2])).numpy().tolist() == [2.0] * 3
    assert f(tf.ones([5, 2])).shape == (5,)
    assert f([[1.0, 2.0]]).numpy().tolist() == [3.0]  # Python lists are converted
    assert f(np.ones((1, 2), np.float32)).numpy().tolist() == [2.0]


@pytest.mark.parametrize("args, error, message", [
    ((tf.ones([3, 3]),), ValueError, r"shape \(3, 3\).*incompatible.*TensorSpec\(shape=\(None, 2\)"),
    ((tf.ones([2]),), ValueError, "incompatible"),
    ((tf.ones([3, 2], tf.float64),), TypeError, "dtype float64.*expects"),
    ((np.ones((3, 2)),), TypeError, "dtype float64"),
    (("abc",), TypeError, "cannot be converted"),
    ((tf.ones([3, 2]), tf.ones([3, 2])), TypeError, "too many positional arguments"),
    ((), TypeError, "missing a required argument|takes 1"),
])
def test_input_signature_rejects_bad_arguments(args, error, message):
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        return x
    with pytest.raises(error, match=message):
        f(*args)
    assert f.trace_count == 0


def test_input_signature_with_nested_specs():
    spec = {"a": tf.TensorSpec([2]), "b": [tf.TensorSpec([], tf.int32)]}

    @tf.function(input_signature=[spec])
    def f(d):
        return d["a"] * tf.cast(d["b"][0], tf.float32)
    assert f({"a": [1.0, 2.0], "b": [3]}).numpy().tolist() == [3.0, 6.0]
    with pytest.raises(TypeError, match="dict with keys"):
        f({"a": [1.0, 2.0]})
    with pytest.raises(TypeError, match="sequence of 1"):
        f({"a": [1.0, 2.0], "b": 3})


def test_input_signature_gives_get_concrete_function_its_default():
    f = tf.function(lambda x: x + 1.0, input_signature=[tf.TensorSpec([2], tf.float32)])
    assert f.get_concrete_function()(tf.zeros([2])).numpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("make, error", [
    (lambda: tf.TensorSpec([2, -1]), ValueError),
    (lambda: tf.TensorSpec(3), TypeError),
    (lambda: tf.TensorSpec([2], "no such dtype"), TypeError),
])
def test_bad_tensor_specs(make, error):
    with pytest.raises(error):
        make()


def test_tensor_spec_basics():
    s = tf.TensorSpec([None, 3], tf.float32)
    assert repr(s) == "TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)"
    assert s == tf.TensorSpec((None, 3), "float32") and not s.is_fully_defined()
    assert tf.TensorSpec(None).is_compatible_with(tf.zeros([1, 2, 3]))
    assert not s.is_compatible_with(tf.zeros([2, 3], tf.float64))


def test_reduce_retracing_generalises_the_signature():
    f = tf.function(lambda x: x * 2.0, reduce_retracing=True)
    f(tf.zeros([2, 3]))
    f(tf.zeros([4, 3]))
    cf = f.get_concrete_function(tf.zeros([4, 3]))
    assert cf.structured_input_signature == [tf.TensorSpec([None, 3], tf.float32)]
    assert f(tf.ones([4, 3])).shape == (4, 3)
    g = tf.function(lambda x: x * 2.0)
    g(tf.zeros([2, 3]))
    assert g.get_concrete_function(tf.zeros([4, 3])).structured_input_signature == [
        tf.TensorSpec([4, 3], tf.float32)]


# ---- variables ----------------------------------------------------------------------------
def test_variables_are_captured_by_reference():
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def f(x):
        return x + v
    assert f(tf.zeros([2])).numpy().tolist() == [1.0, 2.0]
    v.assign([10.0, 20.0])
    assert f(tf.zeros([2])).numpy().tolist() == [10.0, 20.0]
    cf = f.get_concrete_function(tf.zeros([2]))
    assert len(cf.program.captures) == 1 and cf.program.constants == ()
    assert cf.variables == (v,) and cf.trainable_variables == (v,)


def test_training_step_updates_the_variable_on_each_call():
    x = RNG.standard_normal((20, 3)).astype("float32")
    y = x @ np.array([1.0, -2.0, 0.5], "float32")
    w_eager, w_comp = tf.Variable(np.zeros(3, "float32")), tf.Variable(np.zeros(3, "float32"))

    def step(w, x, y, lr=0.1):
        with tf.GradientTape() as tape:
            pred = tf.reshape(tf.matmul(x, tf.reshape(w, [3, 1])), [-1])
            loss = tf.reduce_mean((pred - y) ** 2)
        grad = tape.gradient(loss, w)
        w.assign_sub(lr * grad)
        return loss
    compiled = tf.function(lambda x, y: step(w_comp, x, y))
    losses = []
    for _ in range(30):
        le = step(w_eager, tf.constant(x), tf.constant(y))
        lc = compiled(tf.constant(x), tf.constant(y))
        np.testing.assert_allclose(float(lc), float(le), rtol=1e-5)
        losses.append(float(lc))
    np.testing.assert_allclose(w_comp.numpy(), w_eager.numpy(), rtol=1e-5)
    assert losses[-1] < losses[0] / 10 and compiled.trace_count == 1


def test_reads_after_an_assignment_see_the_new_value():
    v = tf.Variable(1.0)

    @tf.function
    def f():
        before = v * 1.0
        v.assign_add(2.0)
        after = v * 1.0
        v.assign(after * 10.0)
        return before, after, v
    b, a, cur = f()
    assert (float(b), float(a), float(cur), float(v)) == (1.0, 3.0, 30.0, 30.0)
    b, a, cur = f()
    assert (float(b), float(a), float(v)) == (30.0, 32.0, 320.0)


def test_concrete_assignments_are_deferred_to_call_time():
    v = tf.Variable([0, 0], dtype=tf.int32)
    counter = tf.Variable(0.0)

    @tf.function
    def f():
        v.assign([1, 2])
        counter.assign_add(1.0)
        return tf.constant(0.0)
    cf = f.get_concrete_function()
    assert v.numpy().tolist() == [0, 0] and float(counter) == 0.0  # tracing changed nothing
    f()
    f()
    assert v.numpy().tolist() == [1, 2] and float(counter) == 2.0
    assert len(cf.program.updates) == 2


def test_assignment_errors_inside_a_trace():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="shape"):
        tf.function(lambda x: v.assign(x))(tf.zeros([3]))
    iv = tf.Variable([1, 2])
    with pytest.raises(TypeError, match="Cannot assign"):
        tf.function(lambda x: iv.assign(x))(tf.zeros([2]))
    assert v.numpy().tolist() == [1.0, 2.0]


def test_assignment_casts_like_eager():
    v = tf.Variable([1.0, 2.0], dtype=tf.float64)
    tf.function(lambda x: v.assign_add(x))(tf.constant([1.0, 1.0]))  # float32 delta
    assert v.dtype == tf.float64 and v.numpy().tolist() == [2.0, 3.0]


def test_variables_passed_as_arguments_are_used_by_reference():
    @tf.function
    def scale(v, k):
        v.assign(v * k)
        return v * 1.0
    a, b = tf.Variable([1.0, 2.0]), tf.Variable([3.0, 4.0])
    scale(a, tf.constant(2.0))
    scale(b, tf.constant(2.0))
    assert a.numpy().tolist() == [2.0, 4.0] and b.numpy().tolist() == [6.0, 8.0]
    assert scale.trace_count == 1


def test_update_values_do_not_share_memory_with_inputs():
    v = tf.Variable(np.zeros(3, "float32"))
    f = tf.function(lambda x: v.assign(x))
    arr = np.ones(3, "float32")
    f(arr)
    arr[:] = 5.0
    assert v.numpy().tolist() == [1.0, 1.0, 1.0]


# ---- differentiation inside a trace -------------------------------------------------------
def test_persistent_and_nested_tapes_inside():
    @tf.function
    def f(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x ** 3
        dy = tape.gradient(y, x)
        d2y = tape.gradient(dy, x)
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                z = x * x * x
            dz = t1.gradient(z, x)
        return dy, d2y, dz, t2.gradient(dz, x)
    assert [float(v) for v in f(tf.constant(2.0))] == [12.0, 12.0, 12.0, 12.0]
    assert [float(v) for v in f(tf.constant(1.0))] == [3.0, 6.0, 3.0, 6.0]
    assert f.trace_count == 1


def test_variable_gradients_inside():
    x = tf.Variable(2.0)

    @tf.function
    def f():
        with tf.GradientTape() as t:
            y = x ** 3
        return t.gradient(y, x)
    assert float(f()) == 12.0
    x.assign(1.0)
    assert float(f()) == 3.0


def _mlp_params():
    rng = np.random.default_rng(1)
    return (tf.Variable(rng.standard_normal((3, 8)).astype("float32")),
            tf.Variable(rng.standard_normal(8).astype("float32")),
            tf.Variable(rng.standard_normal((8, 4)).astype("float32")))


@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
def test_question_workflow_batch_jacobian_traced_once(mode):
    W1, b1, W2 = _mlp_params()

    def mlp(x):
        return tf.matmul(tf.tanh(tf.matmul(x, W1) + b1), W2)

    def jac_eager(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = mlp(x)
        return g.batch_jacobian(y, x, mode=mode) if mode != "auto" else g.batch_jacobian(y, x)
    jac = tf.function(jac_eager)
    for _ in range(3):
        x = randn(5, 3)
        np.testing.assert_allclose(jac(x).numpy(), jac_eager(x).numpy(), rtol=1e-5, atol=1e-6)
    assert jac.trace_count == 1
    W1.assign(W1 * 2.0)  # the weights are read at call time
    np.testing.assert_allclose(jac(x).numpy(), jac_eager(x).numpy(), rtol=1e-5, atol=1e-6)


def test_jacobian_and_forward_accumulator_inside():
    @tf.function
    def f(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.sin(x) * tf.reduce_sum(x)
        j = g.jacobian(y, x)
        with tf.autodiff.ForwardAccumulator(x, tf.ones_like(x)) as acc:
            z = tf.exp(x) * 2.0
        return j, acc.jvp(z)
    x = np.array([0.1, 0.2, 0.3], "float32")
    j, jvp = f(tf.constant(x))
    expected = np.diag(np.cos(x) * x.sum()) + np.sin(x)[:, None]
    np.testing.assert_allclose(j.numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(jvp.numpy(), 2 * np.exp(x), rtol=1e-6)


# ---- differentiating a compiled function from outside -------------------------------------
def test_outer_tape_differentiates_a_compiled_function():
    v = tf.Variable([1.0, 2.0])
    f = tf.function(lambda x: tf.reduce_sum(tf.tanh(x * v) * x * 0.0 + tf.sin(x) * v))
    x = tf.constant([0.5, -0.3])
    f(x)  # traced and cached before the tape exists
    with tf.GradientTape() as g:
        g.watch(x)
        y = f(x)
    gx, gv = g.gradient(y, [x, v])
    np.testing.assert_allclose(gx.numpy(), np.cos(x.numpy()) * v.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gv.numpy(), np.sin(x.numpy()), rtol=1e-6)


def test_first_call_under_a_tape_traces_in_isolation_and_stays_differentiable():
    f = tf.function(lambda x: x * x * x)
    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = f(x)
        dy = t1.gradient(y, x)
    assert float(dy) == 12.0 and float(t2.gradient(dy, x)) == 12.0
    assert f.trace_count == 1


def test_check_grads_of_a_compiled_function():
    from tapegrad.testing import check_grads
    f = tf.function(lambda x, y: tf.reduce_sum(tf.exp(x) * tf.matmul(x, y)))
    check_grads(f, (RNG.standard_normal((2, 3)), RNG.standard_normal((3, 3))), order=2)


def test_forward_accumulator_outside():
    f = tf.function(lambda x: tf.sin(x) * 3.0)
    x = tf.constant([0.1, 0.2])
    f(x)
    with tf.autodiff.ForwardAccumulator(x, tf.constant([1.0, 0.0])) as acc:
        y = f(x)
    np.testing.assert_allclose(acc.jvp(y).numpy(), [3 * np.cos(0.1), 0.0], rtol=1e-6)


def test_vmap_of_a_compiled_function():
    vmap = pytest.importorskip("tapegrad.batching.vmap").vmap
    f = tf.function(lambda x: tf.reduce_sum(x * x))
    xs = RNG.standard_normal((4, 3)).astype("float32")
    np.testing.assert_allclose(vmap(f)(tf.constant(xs)).numpy(), (xs * xs).sum(1), rtol=1e-5)
    assert f.trace_count == 1  # traced at the per-example shape
    assert f.get_concrete_function(tf.zeros([3])).program.inputs[0].shape == (3,)


# ---- Python control flow and escaped tensors --------------------------------------------
def test_python_if_on_a_symbolic_tensor_names_the_line():
    @tf.function(autograph=False)  # converted, it is a cond (tests/test_autograph.py)
    def f(x):
        if tf.reduce_sum(x) > 0:   # the offending line
            return x
        return -x
    with pytest.raises(OperatorNotAllowedInGraphError) as info:
        f(tf.ones([2]))
    msg = str(info.value)
    assert "test_function.py:" in msg and "the offending line" in msg
    assert "tapegrad.cond" in msg and "tapegrad.while_loop" in msg
    assert isinstance(info.value, TypeError) and not STATE.stack.tracers


def test_python_while_and_scalar_conversions_raise():
    @tf.function(autograph=False)
    def f(x):
        while x < 10.0:
            x = x * 2.0
        return x
    with pytest.raises(OperatorNotAllowedInGraphError, match=r"while_x = |while x < 10.0"):
        f(tf.constant(1.0))
    with pytest.raises(OperatorNotAllowedInGraphError, match="float"):
        tf.function(lambda x: float(x))(tf.constant(1.0))
    with pytest.raises(TypeError, match=r"\.numpy\(\)"):
        tf.function(lambda x: x.numpy())(tf.constant(1.0))
    with pytest.raises(TypeError, match="NumPy array"):
        tf.function(lambda x: np.asarray(x))(tf.constant(1.0))


def test_an_escaped_symbolic_tensor_gives_a_clear_error():
    leak = []

    @tf.function
    def f(x):
        leak.append(x * 2.0)
        return x
    f(tf.constant(1.0))
    assert "SymbolicTensor" in repr(leak[0])
    with pytest.raises(TypeError, match="escaped"):
        leak[0] + 1.0
    g = tf.function(lambda x: x + leak[0])
    with pytest.raises(TypeError, match="another trace"):
        g(tf.constant(1.0))


def test_error_messages_of_ops_inside_a_trace_match_eager():
    f = tf.function(lambda x, y: tf.matmul(x, y))
    with pytest.raises(ValueError, match=re.escape("Matrix size-incompatible")):
        f(tf.zeros([2, 3]), tf.zeros([4, 5]))
    g = tf.function(lambda x, y: x + y)
    with pytest.raises(tf.errors.InvalidArgumentError, match="add"):
        g(tf.zeros([2, 3]), tf.zeros([4]))


def test_vmap_inside_a_traced_function_becomes_batched_code():
    vmap = pytest.importorskip("tapegrad.batching.vmap").vmap

    @tf.function
    def f(xs, w):
        return vmap(lambda x: tf.reduce_sum(tf.tanh(x * w)))(xs)
    xs, w = randn(4, 3), randn(3)
    np.testing.assert_allclose(f(xs, w).numpy(), np.tanh(xs.numpy() * w.numpy()).sum(1),
                               rtol=1e-6)
    src = f.get_concrete_function(xs, w).source()
    assert "for " not in src and "axis=(1,)" in src


def test_functional_transforms_inside():
    F = pytest.importorskip("tapegrad.transforms.functional")
    f = lambda x: tf.reduce_sum(tf.sin(x) * x)

    def all_of(x):
        return (F.grad(f)(x), F.jacrev(lambda x: tf.sin(x) * x)(x),
                F.jacfwd(lambda x: tf.sin(x) * x)(x), F.hessian(f)(x))
    g = tf.function(all_of)
    for x in (tf.constant([0.1, 0.2, 0.3]), tf.constant([1.0, -1.0, 0.5])):
        for a, b in zip(g(x), all_of(x)):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    assert g.trace_count == 1
