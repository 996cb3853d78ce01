"""tf.function's AutoGraph: Python if/while/for on symbolic tensors become cond/while_loop.

Values are compared with the same Python function run eagerly (same bits), derivatives
with central differences (tapegrad.testing.check_grads), errors with TensorFlow 2.21's
messages (checked in TensorFlow by hand: tensorflow is never imported here).
"""
import io
import sys

import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import assert_same_bits, check_grads


def x64(*values):
    return tf.constant(np.array(values, dtype=np.float64))


def prims(fn, *args):
    return [e.prim.name for e in fn.get_concrete_function(*args).program.equations]


# ---- if ---------------------------------------------------------------------------------------
def branchy(x):
    if tf.reduce_sum(x) > 0:
        y = tf.sin(x) * x
    elif tf.reduce_sum(x) > -1:
        y = tf.exp(x)
    else:
        y = -x * x
    return tf.reduce_sum(y)


def test_if_on_a_tensor_is_a_cond_with_eager_bits_and_gradients():
    f = tf.function(branchy)
    for x in (x64(0.3, 0.4), x64(-0.2, -0.1), x64(-2.0, 0.5)):
        assert_same_bits(f(x), branchy(x))
        with tf.GradientTape() as t:
            t.watch(x)
            ye = branchy(x)
        ge = t.gradient(ye, x)
        with tf.GradientTape() as t:
            t.watch(x)
            yc = f(x)
        assert_same_bits(t.gradient(yc, x), ge)
        check_grads(f, (x,), order=2)
    assert f.trace_count == 1 and "cond" in prims(f, x64(1.0, 2.0))


def test_a_tape_inside_the_converted_function_differentiates_the_taken_branch():
    @tf.function
    def grad_and_hessian_diag(x):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = branchy(x)
            g = t1.gradient(y, x)
        return g, t2.gradient(g, x)

    for x in (x64(0.3, 0.4), x64(-0.2, -0.1), x64(-2.0, 0.5)):
        with tf.GradientTape() as t2:
            t2.watch(x)
            with tf.GradientTape() as t1:
                t1.watch(x)
                y = branchy(x)
            g = t1.gradient(y, x)
        h = t2.gradient(g, x)
        g2, h2 = grad_and_hessian_diag(x)
        assert_same_bits(g2, g)
        assert_same_bits(h2, h)


def test_return_inside_branches_and_python_predicates_stay_python():
    calls = []

    @tf.function
    def f(x, mode):
        calls.append(mode)
        if mode == "abs":            # a Python value: decided while tracing
            if tf.reduce_sum(x) > 0:
                return x
            return -x
        return x * 2.0
    np.testing.assert_array_equal(f(x64(-1.0, -2.0), "abs").numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(f(x64(1.0, 2.0), "abs").numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(f(x64(1.0, 2.0), "double").numpy(), [2.0, 4.0])
    assert calls == ["abs", "double"]
    assert "cond" not in prims(f, x64(1.0, 2.0), "double")


def test_python_numbers_assigned_in_branches_become_tensors():
    @tf.function
    def f(x):
        if tf.reduce_sum(x) > 0:
            k = 1
        else:
            k = 2
        return k
    assert int(f(x64(1.0))) == 1 and int(f(x64(-1.0))) == 2
    assert f(x64(1.0)).dtype == tf.int32


def test_branch_errors_are_tensorflows():
    def only_main(x):
        if tf.reduce_sum(x) > 0:
            y = x
        return y

    def none_else(x):
        y = None
        if tf.reduce_sum(x) > 0:
            y = x
        return y

    def dtypes(x):
        if tf.reduce_sum(x) > 0:
            y = x
        else:
            y = tf.cast(x, tf.int32)
        return y

    def one_return(x):
        if tf.reduce_sum(x) > 0:
            return x

    cases = [(only_main, ValueError, "'y' must also be initialized in the else branch"),
             (none_else, ValueError, "'y' is None at the end of the else branch"),
             (dtypes, TypeError, "'y' has dtype float64 in the main branch, but dtype int32 "
                                 "in the else branch"),
             (one_return, ValueError, "the else branch must also have a return statement")]
    for fn, err, msg in cases:
        with pytest.raises(err, match=msg):
            tf.function(fn)(x64(1.0))

    def unused(x):  # assigned in one branch only, never read: fine, as in TensorFlow
        if tf.reduce_sum(x) > 0:
            y = x  # noqa: F841
        return x
    assert float(tf.function(unused)(x64(2.0))[0]) == 2.0


def test_shapes_must_agree_across_branches():
    # TensorFlow allows different shapes (a dynamic shape); tapegrad's shapes are static
    def f(x):
        if tf.reduce_sum(x) > 0:
            y = x
        else:
            y = tf.concat([x, x], 0)
        return y
    with pytest.raises(ValueError, match="'y' has shape \\(1,\\) in the main branch, but "
                                         "shape \\(2,\\) in the else branch"):
        tf.function(f)(x64(1.0))


def test_boolean_operators_and_conditional_expressions_on_tensors():
    def f(x):
        s = tf.reduce_sum(x)
        ok = s > 0 and s < 10
        y = x if not (s > 5 or s < -5) else x * 0.0
        return ok, y
    g = tf.function(f)
    for x in (x64(1.0, 2.0), x64(4.0, 4.0), x64(-9.0, 1.0)):
        (a, b), (c, d) = g(x), f(x)
        assert bool(a) == bool(c)
        assert_same_bits(b, d)
    # Python operands keep Python's semantics: the value, not a boolean
    assert tf.function(lambda: tf.constant(0) or 3)() is not None


# ---- while ------------------------------------------------------------------------------------
def fixed_point(x):
    n = 0
    while tf.reduce_max(tf.abs(x - tf.cos(x))) > 1e-9:
        x = tf.cos(x)
        n += 1
    return x, n


def test_while_computes_a_fixed_point_as_eager_does():
    f = tf.function(fixed_point)
    x = x64(1.0, 0.2)
    (a, n), (b, m) = f(x), fixed_point(x)
    assert_same_bits(a, b)
    assert int(n) == m and n.dtype == tf.int32
    assert "while_loop" in prims(f, x)
    with tf.GradientTape() as t:  # a tape outside: the measured trip count, eager's bits
        t.watch(x)
        y = tf.reduce_sum(f(x)[0] * x)
    with tf.GradientTape() as t2:
        t2.watch(x)
        y2 = tf.reduce_sum(fixed_point(x)[0] * x)
    assert_same_bits(t.gradient(y, x), t2.gradient(y2, x))


def test_while_halving_and_loop_errors():
    @tf.function
    def halve(x):
        while tf.reduce_sum(x) > 1:
            x = x / 2
        return x
    np.testing.assert_allclose(halve(x64(5.0, 3.0)).numpy(), [0.625, 0.375])

    def dtype_change(x):
        i = 0
        while i < 3 and tf.reduce_sum(x) > 0:
            x = tf.cast(x, tf.int32)
            i += 1
        return x

    def shape_change(x):
        while tf.reduce_sum(x) > 0:
            x = tf.concat([x, x], 0)
        return x
    with pytest.raises(TypeError, match="'x' has dtype float64 before the loop, but dtype "
                                        "int32 after one iteration"):
        tf.function(dtype_change)(x64(1.0))
    with pytest.raises(ValueError, match="'x' has shape \\(1,\\) before the loop, but shape "
                                         "\\(2,\\) after one iteration"):
        tf.function(shape_change)(x64(1.0))


def test_a_variable_first_assigned_in_the_loop_is_a_loop_variable():
    @tf.function
    def f(n):
        i = 0
        while i < n:
            y = i * 2
            i += 1
        return y
    assert int(f(tf.constant(3))) == 4  # TensorFlow 2.21 gives 4 too


# ---- for --------------------------------------------------------------------------------------
def test_for_over_a_symbolic_range_is_one_loop_for_every_n():
    @tf.function
    def f(x, n):
        s = tf.zeros_like(x)
        for i in tf.range(n):
            s = s + tf.cast(i, tf.float64) * x
        return s
    for n in (0, 1, 4):
        np.testing.assert_array_equal(f(x64(2.0), tf.constant(n)).numpy(),
                                      [2.0 * sum(range(n))])
    assert f.trace_count == 1 and "while_loop" in prims(f, x64(2.0), tf.constant(3))

    @tf.function
    def g(n):  # builtins.range over a tensor, start and step: tf.range's meaning
        s = 0
        for i in range(2, n, 3):
            s += i
        return s
    assert int(g(tf.constant(12))) == 2 + 5 + 8 + 11


def test_break_and_continue():
    @tf.function
    def brk(x):
        for i in tf.range(10):
            if i > 3:
                break
            x = x + 1.0
        return x

    @tf.function
    def cont(x, n):
        for i in tf.range(n):
            if i % 2 == 0:
                continue
            x = x + tf.cast(i, tf.float64)
        return x

    @tf.function
    def while_break(x):
        while tf.reduce_sum(x) < 100.0:
            x = x * 2.0
            if tf.reduce_sum(x) > 20.0:
                break
        return x
    assert float(brk(x64(5.0))[0]) == 9.0
    assert float(cont(x64(0.0), tf.constant(10))[0]) == 25.0
    assert float(while_break(x64(1.0))[0]) == 32.0


def test_for_over_python_iterables_and_tensors_unrolls_as_before():
    @tf.function
    def f(x):
        s = tf.constant(0.0, tf.float64)
        for row in x:               # static first dimension: unrolled
            s = s + tf.reduce_sum(row)
        for k in [1.0, 2.0]:
            s = s * k
        return s
    assert float(f(tf.constant(np.ones((3, 2))))) == 12.0
    assert "while_loop" not in prims(f, tf.constant(np.ones((3, 2))))


def test_training_loop_over_tf_range_with_an_optimizer():
    w = tf.Variable(np.array([0.0, 0.0]))
    opt = tf.keras.optimizers.SGD(0.1)
    xs = tf.constant(np.array([[1.0, 2.0], [3.0, -1.0]]))
    ys = tf.constant(np.array([1.0, 0.5]))

    @tf.function
    def train(steps):
        for _step in tf.range(steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((tf.linalg.matvec(xs, w) - ys) ** 2)
            opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    w_eager = tf.Variable(np.array([0.0, 0.0]))
    opt_eager = tf.keras.optimizers.SGD(0.1)
    for _ in range(5):
        with tf.GradientTape() as tape:
            loss_eager = tf.reduce_mean((tf.linalg.matvec(xs, w_eager) - ys) ** 2)
        opt_eager.apply_gradients([(tape.gradient(loss_eager, w_eager), w_eager)])
    loss = train(5)  # a Python int: tf.range(5) has a value, the loop unrolls
    assert_same_bits(w, w_eager)
    assert_same_bits(loss, loss_eager)

    w.assign(np.array([0.0, 0.0]))  # a tensor: one while_loop carrying w and the optimizer
    opt2 = tf.keras.optimizers.SGD(0.1)
    opt = opt2
    loss = train(tf.constant(5))
    assert "while_loop" in prims(train, tf.constant(5))
    assert_same_bits(w, w_eager)
    assert_same_bits(loss, loss_eager)
    assert int(opt2.iterations) == 5
    train(tf.constant(2))  # the same program, two more steps
    assert int(opt2.iterations) == 7 and train.trace_count == 2


def test_a_variable_assigned_in_a_tensor_while_is_carried_and_assigned_after():
    v = tf.Variable(1.0)

    @tf.function
    def f(n):
        i = tf.constant(0)
        while i < n:
            v.assign(v * 2.0)
            i += 1
        return v.read_value()
    assert float(f(tf.constant(3))) == 8.0 and float(v) == 8.0
    assert float(tf.while_loop(lambda i: i < 2, lambda i: (v.assign_add(1.0), i + 1)[1],
                               tf.constant(0))) == 2 and float(v) == 10.0


def test_rnn_loop_with_a_tensor_array():
    cell = np.random.default_rng(0).normal(size=(3, 3)) * 0.5

    def rnn(xs):
        ta = tf.TensorArray(tf.float64, size=xs.shape[0])
        h = tf.zeros([3], tf.float64)
        for t in tf.range(tf.shape(xs)[0]):
            h = tf.tanh(tf.linalg.matvec(tf.constant(cell), h) + xs[t])
            ta = ta.write(t, h)
        return ta.stack()
    xs = tf.constant(np.random.default_rng(1).normal(size=(4, 3)))
    assert_same_bits(tf.function(rnn)(xs), rnn(xs))
    check_grads(tf.function(rnn), (xs,), order=1)


def test_fizzbuzz_from_the_tf_function_guide_with_python_print():
    out = io.StringIO()

    @tf.function
    def fizzbuzz(n):
        for i in range(1, n + 1):   # a Python int: unrolled, decided while tracing
            if i % 15 == 0:
                print("FizzBuzz", file=out)
            elif i % 3 == 0:
                print("Fizz", file=out)
            elif i % 5 == 0:
                print("Buzz", file=out)
            else:
                print(i, file=out)
        return tf.constant(n)
    fizzbuzz(15)
    assert out.getvalue().split() == [
        "1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "Fizz", "Buzz", "11", "Fizz", "13",
        "14", "FizzBuzz"]


# ---- conversion --------------------------------------------------------------------------------
def helper(x):
    if tf.reduce_sum(x) > 0:
        return x
    return -x


def test_called_user_functions_and_methods_are_converted_too():
    class Model:
        def __init__(self):
            self.scale = 3.0

        def apply(self, x):
            while tf.reduce_sum(x) < self.scale:
                x = x + 1.0
            return x

    m = Model()

    @tf.function
    def f(x):
        return m.apply(helper(x))
    np.testing.assert_array_equal(f(x64(-0.5)).numpy(), [3.5])


def test_closures_globals_and_defaults_are_the_originals():
    scale = [2.0]

    def f(x, k=1.0):
        if tf.reduce_sum(x) > 0:
            x = x * scale[0] * k
        return x
    g = tf.function(f)
    assert float(g(x64(1.0))[0]) == 2.0
    scale[0] = 5.0  # the closure cell is shared: a retrace sees the new value
    assert float(g(x64(1.0, 1.0))[0]) == 5.0


def test_autograph_false_and_do_not_convert_keep_the_error():
    from tapegrad.compile import OperatorNotAllowedInGraphError

    @tf.autograph.experimental.do_not_convert
    def raw(x):
        if tf.reduce_sum(x) > 0:
            return x
        return -x
    for f in (tf.function(helper, autograph=False), tf.function(raw)):
        with pytest.raises(OperatorNotAllowedInGraphError):
            f(x64(1.0))
    assert tf.autograph.to_graph(raw) is raw


def test_lambdas_are_converted():
    fs = [tf.function(lambda x: x * 2.0), tf.function(lambda x: x if x > 0 else x * 0.0)]
    one, minus_one = tf.constant(np.float64(1.0)), tf.constant(np.float64(-1.0))
    assert float(fs[0](one)) == 2.0 and float(fs[1](one)) == 1.0
    assert np.signbit(fs[1](minus_one).numpy())  # -1 * 0.0 is -0.0
    both = tf.function(lambda x, y=2.0: x > 0 and y > 0)
    assert bool(both(one)) and not bool(both(minus_one))


def test_to_code_and_to_graph():
    code = tf.autograph.to_code(helper)
    assert "ag__.if_stmt" in code and "def helper(x):" in code
    g = tf.autograph.to_graph(helper)
    assert float(g(x64(-2.0))[0]) == 2.0  # eagerly: plain Python
    assert tf.autograph.to_graph(g) is g  # already converted


def test_conversion_is_cached_and_costs_nothing_per_call():
    from tapegrad.autograph import conversion
    f = tf.function(helper)
    f(x64(1.0))
    code = helper.__code__
    assert conversion._CACHE[code] is not None
    converted = f._ag_function
    f(x64(2.0, 3.0))  # a retrace reuses the converted function
    assert f._ag_function is converted and f.trace_count == 2


def test_errors_point_at_the_users_line():
    def f(x):
        if tf.reduce_sum(x) > 0:
            y = float(x)   # the offending line
        else:
            y = 1.0
        return y
    with pytest.raises(TypeError) as info:
        tf.function(f)(x64(1.0))
    assert "the offending line" in str(info.value)


def structure(program):
    """``program`` up to the names of its values (the converted function's frames name some
    values differently): equations, constants, outputs and the user's lines."""
    index = {}

    def ref(v):
        return index.setdefault(v.name, len(index)) if hasattr(v, "name") else repr(v)
    ins = [(ref(v), v.shape, str(v.dtype)) for v in program.inputs + program.captures]
    consts = [(ref(c.var), c.value.dtype.str, c.value.tobytes()) for c in program.constants]
    origin = program.origin_of()
    eqs = [(e.prim.name, tuple(ref(v) for v in e.inputs), repr(e.params),
            tuple((ref(v), v.shape, str(v.dtype)) for v in e.outs),
            [(origin[v.name].where, origin[v.name].source) if v.name in origin else None
             for v in e.outs]) for e in program.equations]
    return ins, consts, eqs, [ref(v) for v in program.outputs], program.updates


def test_functions_without_tensor_control_flow_give_the_same_program():
    def py_control(x, n):
        ys = []
        for i in range(n):
            if i % 2 and n > 1:
                ys.append(tf.sin(x) * float(i))
            else:
                ys.append(x if i else -x)
        while len(ys) < 5:
            ys.append(tf.reduce_sum(x) * tf.ones_like(x))
        return tf.add_n([y for y in ys if y is not None]) if ys else x

    def explicit(x, n):
        return tf.cond(tf.reduce_sum(x) > 0, lambda: x * float(n), lambda: -x)

    def static_shape(x, n):
        if x.shape[0] > 2 and not n:
            return x[:2]
        for k in tf.range(3):       # concrete: unrolled
            x = x + tf.cast(k, x.dtype)
        return x

    for fn in (py_control, explicit, static_shape):
        for n in (0, 3):
            args = (x64(1.0, -2.0, 3.0), n)
            a = tf.function(fn).get_concrete_function(*args).program
            b = tf.function(fn, autograph=False).get_concrete_function(*args).program
            assert structure(a) == structure(b)


def test_saved_programs_keep_converted_control_flow(tmp_path):
    f = tf.function(branchy, input_signature=[tf.TensorSpec([2], tf.float64)])
    tf.saved.save(f, str(tmp_path / "m"))
    g = tf.saved.load(str(tmp_path / "m"))
    for x in (x64(0.3, 0.4), x64(-2.0, 0.5)):
        assert_same_bits(g(x), branchy(x))


def test_saved_programs_keep_staged_loops_and_prints(tmp_path, capsys):
    @tf.function(input_signature=[tf.TensorSpec([], tf.int32)])
    def evens(n):
        s = 0
        for i in tf.range(n):
            if i % 2 == 0:
                tf.print("even", i, output_stream=sys.stdout)
            s += i
        return s
    tf.saved.save(evens, str(tmp_path / "m"))
    g = tf.saved.load(str(tmp_path / "m"))
    capsys.readouterr()
    assert int(g(tf.constant(5))) == 10
    assert capsys.readouterr().out == "even 0\neven 2\neven 4\n"


def test_tf_print_outside_tracing_is_unchanged():
    buf = io.StringIO()
    tf.print("v", tf.constant([1, 2]), output_stream=buf)
    assert buf.getvalue() == "v [1 2]\n"
    assert sys.stderr is not None


def test_variables_assigned_under_a_tensor_if_inside_a_tensor_loop():
    v, count = tf.Variable(1.0), tf.Variable(0)

    @tf.function
    def f(n):
        for step in tf.range(n):
            if tf.equal(step % 3, 0):   # the guide's "every k steps"
                v.assign(v * 2.0)
                count.assign_add(1)
        return v.read_value()
    assert float(f(tf.constant(7))) == 8.0 and int(count) == 3

    @tf.function
    def g(x):
        if x > 0:
            v.assign(x)
        return v + 1.0
    assert float(g(tf.constant(5.0))) == 6.0 and float(g(tf.constant(-5.0))) == 6.0


def grow(x, s):  # a loop whose trip count depends on the data, with no static bound
    while tf.reduce_sum(x * x) < 10.0:
        x = x * 1.7 + 0.1
        s = s + tf.reduce_sum(tf.sin(x)) * x
    return tf.reduce_sum(x * s)


def test_tapes_inside_differentiate_an_unbounded_loop_to_second_order_as_eager():
    def derivatives(x, s):
        with tf.GradientTape() as t2:
            t2.watch([x, s])
            with tf.GradientTape() as t1:
                t1.watch([x, s])
                y = grow(x, s)
            gx, gs = t1.gradient(y, [x, s])
            z = tf.reduce_sum(gx) + tf.reduce_sum(gs * gs)
        return [gx, gs] + t2.gradient(z, [x, s])
    f = tf.function(derivatives)
    for x in (x64(0.3, 0.5), x64(2.0, 3.0), x64(0.01, 0.0)):  # 5, 0 and 9 iterations
        s = x64(0.1, -0.2)
        got, want = f(x, s), derivatives(x, s)
        for a, b in zip(got[:2], want[:2]):  # first order: eager's bits
            assert_same_bits(a, b)
        for a, b in zip(got[2:], want[2:]):  # second order: sums in another order
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13)
    check_grads(tf.function(grow), (x64(0.3, 0.5), x64(0.1, -0.2)), order=2)


def test_the_fixed_point_differentiated_inside_the_function():
    @tf.function
    def dfix(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y, _ = fixed_point(x)
        return t.gradient(y, x)
    x = x64(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y, _ = fixed_point(x)
    assert_same_bits(dfix(x), t.gradient(y, x))


def test_fizzbuzz_from_the_tf_function_guide_with_tf_print(capsys):
    @tf.function
    def fizzbuzz(n):
        for i in tf.range(1, n + 1):
            if i % 15 == 0:
                tf.print("FizzBuzz", output_stream=sys.stdout)
            elif i % 3 == 0:
                tf.print("Fizz", output_stream=sys.stdout)
            elif i % 5 == 0:
                tf.print("Buzz", output_stream=sys.stdout)
            else:
                tf.print(i, output_stream=sys.stdout)
    fizzbuzz(tf.constant(15))
    assert capsys.readouterr().out.split() == [
        "1", "2", "Fizz", "4", "Buzz", "Fizz", "7", "8", "Fizz", "Buzz", "11", "Fizz", "13",
        "14", "FizzBuzz"]
    fizzbuzz(tf.constant(5))  # the same program: it prints when it runs, not when traced
    assert capsys.readouterr().out.split() == ["1", "2", "Fizz", "4", "Buzz"]
    assert fizzbuzz.trace_count == 1


def test_tf_print_runs_with_the_program_in_source_order(capsys):
    buf = io.StringIO()

    @tf.function
    def f(x):
        tf.print("in", x, output_stream=buf)
        y = x * 2.0
        print("tracing")  # Python's print: once, while tracing
        tf.print("out", [y, {"k": y + 1.0}], output_stream=buf, summarize=1)
        return y
    f(x64(1.0, 2.0, 3.0))
    f(x64(4.0, 5.0, 6.0))
    assert capsys.readouterr().out == "tracing\n"
    eager = io.StringIO()  # the same text as eager tf.print of the same values
    for x in (x64(1.0, 2.0, 3.0), x64(4.0, 5.0, 6.0)):
        tf.print("in", x, output_stream=eager)
        tf.print("out", [x * 2.0, {"k": x * 2.0 + 1.0}], output_stream=eager, summarize=1)
    assert buf.getvalue() == eager.getvalue()
    assert buf.getvalue().startswith("in [1. 2. 3.]\nout [[2. ... 6.], {'k': [3. ... 7.]}]\n")
    with tf.GradientTape() as t:  # a tape outside runs the program op by op: it prints too
        x = x64(1.0, 1.0, 1.0)
        t.watch(x)
        y = f(x)
    assert buf.getvalue().endswith("in [1. 1. 1.]\nout [[2. ... 2.], {'k': [3. ... 3.]}]\n")
    assert t.gradient(y, x).numpy().tolist() == [2.0, 2.0, 2.0]


def test_tensor_arrays_in_while_loops_and_staged_for_loops():
    def body(i, ta, x):
        x = tf.tanh(x * 1.5 + 0.1)
        return i + 1, ta.write(i, x), x

    def run(x):
        ta = tf.TensorArray(tf.float64, size=4, element_shape=[2])
        _, ta, _ = tf.while_loop(lambda i, ta, x: i < 4, body, (tf.constant(0), ta, x))
        return ta.stack()
    x = x64(0.2, -0.3)
    assert_same_bits(tf.function(run)(x), run(x))  # eager: a Python loop over the list
    check_grads(tf.function(run), (x,), order=2)

    @tf.function
    def rnn(xs, n):  # n symbolic: one while_loop; xs[t] gathers, ta.write scatters
        ta = tf.TensorArray(tf.float64, size=xs.shape[0], element_shape=[2])
        h = tf.zeros([2], tf.float64)
        for t in tf.range(n):
            h = tf.tanh(h * 0.5 + xs[t])
            if tf.reduce_sum(h) > 0.5:
                ta = ta.write(t, h)
            else:
                ta = ta.write(t, -h)
        return ta.stack()

    def rnn_eager(xs, n):
        out, h = [], tf.zeros([2], tf.float64)
        for t in range(n):
            h = tf.tanh(h * 0.5 + xs[t])
            out.append(h if float(tf.reduce_sum(h)) > 0.5 else -h)
        return tf.stack(out + [tf.zeros([2], tf.float64)] * (xs.shape[0] - n))
    xs = tf.constant(np.random.default_rng(0).normal(size=(5, 2)))
    for n in (5, 3, 0):
        assert_same_bits(rnn(xs, tf.constant(n)), rnn_eager(xs, n))
    assert rnn.trace_count == 1
    # out of range when the program runs: TensorFlow's error
    with pytest.raises(tf.errors.InvalidArgumentError):
        rnn(xs, tf.constant(6))


def test_a_symbolic_scalar_index_gathers():
    @tf.function
    def f(x, i):
        return x[i] + x[:, i] + x[-1]
    x = tf.constant(np.arange(9.0).reshape(3, 3))
    for i in (0, 2, -1):
        assert_same_bits(f(x, tf.constant(i)), x[i] + x[:, i] + x[-1])


def test_a_source_file_changed_since_import_is_not_converted(tmp_path, monkeypatch):
    import importlib
    import linecache
    from tapegrad.compile import OperatorNotAllowedInGraphError
    src = ("import tapegrad as tf\n\n\ndef f(x):\n    if tf.reduce_sum(x) > 0:\n"
           "        return x * 2.0\n    return -x\n")
    (tmp_path / "agstale.py").write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("agstale")
    (tmp_path / "agstale.py").write_text(src.replace("2.0", "3.0"))
    linecache.checkcache()
    with pytest.raises(OperatorNotAllowedInGraphError):  # never the new file's numbers
        tf.function(mod.f)(x64(1.0))


def test_nested_functions_super_and_methods_decorated_with_tf_function():
    @tf.function
    def f(x, n):
        def helper(y):  # defined inside: converted when called
            if tf.reduce_sum(y) > 0:
                return y * 2.0
            return y
        total = tf.zeros_like(x)
        for _ in tf.range(n):
            if tf.reduce_sum(total) > 10.0:
                break
            total = total + helper(x)
        return total
    np.testing.assert_array_equal(f(x64(1.0, 2.0), tf.constant(10)).numpy(), [4.0, 8.0])

    class Base:
        def g(self, x):
            return x + 1.0

    class Sub(Base):
        def g(self, x):
            y = super().g(x)   # the __class__ cell is the original's
            if tf.reduce_sum(y) > 0:
                y = y * 10.0
            return y
    s = Sub()
    assert float(tf.function(lambda x: s.g(x))(x64(1.0))[0]) == 20.0

    class M(tf.Module):
        @tf.function
        def __call__(self, x):
            while tf.reduce_sum(x) < 100.0:
                x = x * 3.0
            return x
    assert float(M()(x64(1.0))[0]) == 243.0


def test_the_guides_autograph_examples(capsys):
    @tf.function
    def tanh_until_small(x):
        while tf.reduce_sum(x) > 1:
            tf.print(x, output_stream=sys.stdout)
            x = tf.tanh(x)
        return x

    def eager(x):
        while float(tf.reduce_sum(x)) > 1:
            tf.print(x, output_stream=sys.stdout)
            x = tf.tanh(x)
        return x
    x = tf.constant([0.5, 0.4, 0.3, 0.2, 0.1, 0.6])
    assert_same_bits(tanh_until_small(x), eager(x))
    printed = capsys.readouterr().out
    assert printed == printed[:len(printed) // 2] * 2 and printed.count("\n") >= 2

    @tf.function
    def sum_even(items):
        s = 0
        for c in items:
            if c % 2 > 0:
                continue
            s += c
        return s
    assert int(sum_even(tf.constant([10, 12, 15, 20]))) == 42


def test_variables_new_in_a_loop_body_cost_one_retrace_of_it():
    runs = []

    @tf.function
    def f(x, n):
        for i in tf.range(n):      # i, y and z are new in the body
            runs.append(1)
            y = x * tf.cast(i, tf.float64)
            z = y + 1.0
        return i, y, z
    i, y, z = f(x64(2.0), tf.constant(3))
    assert (int(i), float(y[0]), float(z[0])) == (2, 4.0, 5.0)
    assert len(runs) == 2  # the body traced once to find them, once with them


def test_staged_loops_under_a_none_dimension_signature():
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float64)])
    def f(x):
        s = tf.zeros([2], tf.float64)
        for i in tf.range(tf.shape(x)[0]):
            s = s + x[i] * tf.cast(i, tf.float64)
        return s
    for n in (3, 5, 7):
        a = np.arange(2.0 * n).reshape(n, 2)
        np.testing.assert_array_equal(f(tf.constant(a)).numpy(),
                                      sum(a[i] * i for i in range(n)))


def test_tf_cond_branches_may_assign_variables_and_print(capsys):
    v, w = tf.Variable(1.0), tf.Variable(0.0)

    @tf.function
    def f(x):
        def yes():
            v.assign(v * 3.0)
            tf.print("pos", x, output_stream=sys.stdout)
            return x * 2.0

        def no():
            w.assign_add(1.0)
            return x
        return tf.cond(x > 0, yes, no)
    results = [float(f(tf.constant(a))) for a in (2.0, -2.0, 1.0)]
    assert results == [4.0, -2.0, 2.0] and (float(v), float(w)) == (9.0, 1.0)
    assert capsys.readouterr().out == "pos 2.0\npos 1.0\n" and f.trace_count == 1
