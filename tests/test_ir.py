"""The graph IR: data structures, checker, printer, interpreter and optimisation passes.

Every optimisation test runs ``optimize(..., check=True)``: the checker validates the program
after each pass.
"""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.trace.tracer import GraphBuilder, tracing
from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.ir import (Const, Equation, IRError, Program, Var, check, cse, dce, evaluate,
                         fold_constants, make_params, optimize, pretty, simplify)

F32, F64, I32 = np.dtype("float32"), np.dtype("float64"), np.dtype("int32")


def trace(fn, *shapes, dtype="float32"):
    """The program of ``fn`` on inputs of the given shapes (a small helper for the tests)."""
    b = GraphBuilder(getattr(fn, "__name__", "f"))
    with tracing(b):
        xs = [b.add_input(s, dtype, f"x{i}") for i, s in enumerate(shapes)]
        out = fn(*xs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        return b.build(outs)


def run(program, *arrays):
    outs, _ = evaluate(program, [tf.constant(a) for a in arrays])
    return [np.asarray(o._value) for o in outs]


def eqn(name, ins, out, **params):
    return Equation(PRIMITIVES[name], tuple(ins), make_params(params), (out,))


def prims(program):
    return [e.prim.name for e in program.equations]


X = Var("x", (2, 3), F32)
Y = Var("y", (2, 3), F32)
Z = Var("z", (2, 3), F32)


# ---- data structures ----------------------------------------------------------------------
def test_structures_are_immutable_and_hashable():
    e = eqn("add", [X, X], Y)
    assert hash(e) == hash(eqn("add", [X, X], Y))
    with pytest.raises(AttributeError):
        e.outs = ()
    p = Program((X,), (), (), (e,), (Y,))
    import dataclasses
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.equations = ()
    q = p.replace(outputs=(X,))
    assert q.outputs == (X,) and p.outputs == (Y,)
    assert e.kwargs == {} and e.out is Y
    assert repr(X) == "x:f32[2,3]"


def test_traced_program_has_expected_shape():
    p = trace(lambda x, w: tf.tanh(tf.matmul(x, w)), (4, 3), (3, 2))
    check(p)
    assert prims(p) == ["matmul", "tanh"]
    assert p.outputs[0].shape == (4, 2) and p.outputs[0].dtype == F32
    assert [v.name for v in p.inputs] == ["x0", "x1"]


# ---- the checker --------------------------------------------------------------------------
def test_checker_accepts_valid_program():
    p = Program((X, Y), (), (), (eqn("add", [X, Y], Z),), (Z,))
    assert check(p) is p


@pytest.mark.parametrize("build, message", [
    (lambda: Program((X, X), (), (), (), (X,)), "defined more than once"),
    (lambda: Program((X,), (), (), (eqn("neg", [X], X),), (X,)), "defined more than once"),
    (lambda: Program((X,), (), (), (eqn("add", [X, Y], Z),), (Z,)), "used before"),
    (lambda: Program((X,), (), (), (eqn("neg", [X], Y), eqn("neg", [Z], Y._replace(name="w"))),
                     (Y,)), "used before"),
    (lambda: Program((X,), (), (), (), (Y,)), "used before"),
    (lambda: Program((X,), (), (), (Equation(PRIMITIVES["neg"], (X, X), (), (Y,)),), (Y,)),
     "takes 1 inputs"),
    (lambda: Program((X,), (), (), (eqn("neg", [X], Var("y", (3, 2), F32)),), (Y,)),
     "the rule gives"),
    (lambda: Program((X,), (), (), (eqn("neg", [X], Var("y", (2, 3), F64)),), (Y,)),
     "the rule gives"),
    (lambda: Program((X,), (), (), (eqn("add", [X, Var("x", (3,), F32)], Y),), (Y,)),
     "does not match its definition"),
    (lambda: Program((X,), (), (), (eqn("matmul", [X, X], Y),), (Y,)), "shape rule rejects"),
    (lambda: Program((X,), (), (Const(Y, np.zeros((3,), F32)),), (), (Y,)), "declared"),
    (lambda: Program((X,), (), (Const(Y, np.zeros((2, 3), F64)),), (), (Y,)), "declared"),
    (lambda: Program((X,), (), (Const(Y, [1.0]),), (), (Y,)), "not a NumPy array"),
    (lambda: Program((Var("not ok", (), F32),), (), (), (), ()), "not an identifier"),
    (lambda: Program((Var("x", (-1,), F32),), (), (), (), ()), "invalid shape"),
    (lambda: Program((Var("x", (2,), "float32"),), (), (), (), ()), "not a np.dtype"),
    (lambda: Program((X,), (Y,), (), (), (), ((1, X),)), "out of range"),
    (lambda: Program((X,), (Y,), (), (), (), ((0, X), (0, X))), "assigned twice"),
    (lambda: Program((Var("x", (2,), F32),), (Y,), (), (), (), ((0, Var("x", (2,), F32)),)),
     "cannot be assigned"),
    (lambda: Program((X,), (), (), ("not an equation",), ()), "expected an Equation"),
    (lambda: "not a program", "expected a Program"),
])
def test_checker_rejects(build, message):
    with pytest.raises(IRError, match=message):
        check(build())


def test_checker_rejects_unknown_primitive():
    from tapegrad.core.dispatch import Primitive
    fake = Primitive.__new__(Primitive)
    fake.name, fake.nin = "not_registered", 1
    with pytest.raises(IRError, match="unknown primitive"):
        check(Program((X,), (), (), (Equation(fake, (X,), (), (Y,)),), (Y,)))


def test_checker_rejects_an_impostor_with_a_registered_name():
    from tapegrad.core.dispatch import Primitive
    fake = Primitive.__new__(Primitive)
    fake.name, fake.nin = "neg", 1
    with pytest.raises(IRError, match="unknown primitive"):
        check(Program((X,), (), (), (Equation(fake, (X,), (), (Y,)),), (Y,)))


# ---- printer ------------------------------------------------------------------------------
def test_pretty_printer():
    b = GraphBuilder("f")
    v = tf.Variable([1.0, 2.0], name="w")
    with tracing(b):
        x = b.add_input((2,), "float32", "x")
        y = tf.reduce_sum(x * 2.0 + v, axis=0)
        v.assign_add(x)
        p = b.build([y])
    text = pretty(p)
    assert text.splitlines() == [
        "program f(x:f32[2], captured w:f32[2]) {",
        "  c0:f32[] = 2.0",
        "  t0:f32[2] = mul x c0",
        "  t1:f32[2] = add t0 w",
        "  y:f32[] = reduce_sum t1 axis=(0,) keepdims=False",  # the user's name for it
        "  t3:f32[2] = add w x",
        "  return (y)",
        "  assign w <- t3",
        "}",
    ]
    assert str(p) == text


def test_printer_abbreviates_big_constants():
    p = trace(lambda x: x + tf.constant(np.arange(12.0, dtype=np.float32).reshape(3, 4)), (3, 4))
    assert "<f32[3,4]>" in pretty(p)


# ---- interpreter --------------------------------------------------------------------------
def test_interpreter_matches_eager():
    f = lambda x, w: tf.reduce_sum(tf.tanh(tf.matmul(x, w)) ** 2, axis=1)
    x, w = np.random.randn(4, 3).astype("f"), np.random.randn(3, 2).astype("f")
    p = trace(f, (4, 3), (3, 2))
    np.testing.assert_allclose(run(p, x, w)[0], f(tf.constant(x), tf.constant(w)).numpy(),
                               rtol=1e-6)


def test_interpreter_arity_errors():
    p = trace(lambda x: -x, (2,))
    with pytest.raises(TypeError, match="takes 1 inputs"):
        evaluate(p, [])
    with pytest.raises(TypeError, match="captured"):
        evaluate(p, [tf.zeros([2])], [tf.zeros([2])])


def test_interpreter_is_differentiable_by_a_tape():
    p = trace(lambda x: tf.reduce_sum(tf.sin(x) * x), (3,))
    x = tf.constant([0.1, 0.5, 2.0])
    with tf.GradientTape() as g:
        g.watch(x)
        (y,), _ = evaluate(p, [x])
    np.testing.assert_allclose(g.gradient(y, x).numpy(),
                               (np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy())), rtol=1e-6)


def test_interpreter_second_order_through_nested_tapes():
    p = trace(lambda x: x * x * x, ())
    x = tf.Variable(2.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            (y,), _ = evaluate(p, [x.read_value()])
        dy = t1.gradient(y, x)
    assert float(dy) == 12.0 and float(t2.gradient(dy, x)) == 12.0


def test_interpreter_can_itself_be_traced():
    inner = trace(lambda x: tf.exp(x) + 1.0, (2,))
    outer = trace(lambda x: evaluate(inner, [x * 2.0])[0][0], (2,))
    check(outer)
    assert prims(outer) == ["mul", "exp", "add"]
    np.testing.assert_allclose(run(outer, np.array([0.0, 1.0], "f"))[0], np.exp([0.0, 2.0]) + 1,
                               rtol=1e-6)


def test_interpreter_batches_under_vmap():
    vmap = pytest.importorskip("tapegrad.batching.vmap").vmap
    p = trace(lambda x: tf.reduce_sum(x * x), (3,))
    xs = np.random.randn(5, 3).astype("f")
    out = vmap(lambda x: evaluate(p, [x])[0][0])(tf.constant(xs))
    np.testing.assert_allclose(out.numpy(), (xs * xs).sum(1), rtol=1e-5)


def test_interpreter_returns_updates():
    v = tf.Variable([1.0, 2.0])
    b = GraphBuilder("f")
    with tracing(b):
        x = b.add_input((2,), "float32", "x")
        v.assign_add(x)
        p = b.build([x * 2.0])
    outs, upds = evaluate(p, [tf.constant([1.0, 1.0])], [v.read_value()])
    assert upds[0].numpy().tolist() == [2.0, 3.0] and outs[0].numpy().tolist() == [2.0, 2.0]
    assert v.numpy().tolist() == [1.0, 2.0]  # applying updates is the caller's business


# ---- passes -------------------------------------------------------------------------------
def test_dce_removes_unused_equations_and_constants():
    def f(x):
        unused = tf.exp(x) * 3.0   # noqa: F841
        return tf.sin(x)
    p = trace(f, (3,))
    q = dce(p)
    check(q)
    assert prims(q) == ["sin"] and q.constants == () and q.inputs == p.inputs


def test_dce_removes_forward_computations_the_derivative_does_not_need():
    def grad_of_sum_of_squares(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.reduce_sum(x * x)
        return g.gradient(y, x)
    p = trace(grad_of_sum_of_squares, (3,))
    assert "reduce_sum" in prims(p)
    q = optimize(p, check=True)
    assert "reduce_sum" not in prims(q)   # y itself is never used by the derivative
    x = np.array([1.0, -2.0, 3.0], "f")
    np.testing.assert_allclose(run(q, x)[0], 2 * x)


def test_dce_keeps_updates():
    v = tf.Variable([1.0, 2.0])
    b = GraphBuilder("f")
    with tracing(b):
        x = b.add_input((2,), "float32", "x")
        v.assign_add(tf.exp(x))
        p = b.build([x])
    assert "exp" in prims(dce(p))


def test_cse_merges_equal_equations_and_constants():
    def f(x):
        return tf.sin(x) * tf.constant(2.0) + tf.sin(x) * tf.constant(2.0)
    p = trace(f, (3,))
    assert prims(p).count("sin") == 2 and len(p.constants) == 2
    q = dce(cse(p))
    check(q)
    assert prims(q).count("sin") == 1 and prims(q).count("mul") == 1 and len(q.constants) == 1
    x = np.array([0.1, 0.2, 0.3], "f")
    np.testing.assert_allclose(run(q, x)[0], run(p, x)[0])


def test_cse_respects_params():
    p = trace(lambda x: tf.reduce_sum(x, 0) + tf.reduce_sum(x, 1), (3, 3))
    assert prims(cse(p)).count("reduce_sum") == 2


def test_constant_folding():
    def f(x):
        c = tf.constant([1.0, 2.0])
        return x + c * 3.0   # c * 3.0 runs eagerly at trace time: a constant already
    p = trace(f, (2,))
    two = Var("two", (2,), F32)
    x, y = Var("x", (2,), F32), Var("y", (2,), F32)
    p2 = Program((x,), (), (Const(two, np.array([1.0, 2.0], "f")),),
                 (eqn("exp", [two], Var("e", (2,), F32)),
                  eqn("add", [x, Var("e", (2,), F32)], y)), (y,))
    q = optimize(p2, check=True)
    assert prims(q) == ["add"]
    np.testing.assert_allclose(q.const_values()[q.equations[0].inputs[1].name],
                               np.exp([1.0, 2.0]).astype("f"))
    assert prims(p) == ["add"]


def test_folding_keeps_big_uniform_results_small():
    big = Var("big", (1000, 1000), F32)
    c = Var("c", (), F32)
    p = Program((), (), (Const(c, np.array(0.0, "f")),),
                (eqn("broadcast_to", [c], big, shape=(1000, 1000)),), (big,))
    q = fold_constants(p)
    check(q)
    val = q.const_values()["big"]
    assert val.shape == (1000, 1000) and val.strides == (0, 0)


def test_folding_leaves_failing_equations_for_run_time():
    # the program is valid (the shape rule accepts it) but the value makes NumPy fail
    c = Var("c", (2,), I32)
    r = Var("r", (2,), I32)
    p = Program((), (), (Const(c, np.array([2, -1], "i4")),), (eqn("pow", [c, c], r),), (r,))
    check(p)
    assert fold_constants(p) is p
    with pytest.raises(Exception, match="Integers to negative integer powers"):
        evaluate(p, [])


def _simplified(fn, *shapes, dtype="float32"):
    p = trace(fn, *shapes, dtype=dtype)
    q = optimize(p, check=True)
    xs = [np.random.RandomState(0).uniform(0.5, 1.5, s).astype(dtype) for s in shapes]
    for a, b in zip(run(p, *xs), run(q, *xs)):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5)
    return q


@pytest.mark.parametrize("fn", [
    lambda x: x * 1.0, lambda x: 1.0 * x, lambda x: x + (-0.0), lambda x: -0.0 + x,
    lambda x: x - 0.0, lambda x: x / 1.0, lambda x: tf.negative(tf.negative(x)),
    lambda x: tf.transpose(tf.transpose(x)),
    lambda x: tf.reshape(tf.reshape(x, [6]), [2, 3]),
    lambda x: tf.cast(x, tf.float32),
], ids=["x*1", "1*x", "x+0", "0+x", "x-0", "x/1", "--x", "T(T(x))", "reshape-chain", "cast"])
def test_identities_vanish(fn):
    q = _simplified(fn, (2, 3))
    assert q.equations == () and q.outputs == q.inputs


@pytest.mark.parametrize("fn", [
    lambda x: x + 0.0, lambda x: 0.0 + x, lambda x: x - (-0.0), lambda x: 0.0 - x,
    lambda x: x * 0.0, lambda x: 0.0 * x, lambda x: x - x, lambda x: x / x,
], ids=["x+0", "0+x", "x-(-0)", "0-x", "x*0", "0*x", "x-x", "x/x"])
def test_float_rewrites_that_ieee_forbids_stay(fn):
    # -0.0 + 0.0 is +0.0, NaN * 0 is NaN, inf - inf is NaN: none of these is an identity
    q = _simplified(fn, (2, 3))
    assert len(q.equations) == 1


def test_integer_identities_vanish():
    for fn in (lambda x: x + 0, lambda x: 0 + x, lambda x: x * 1, lambda x: x - 0):
        q = _simplified(fn, (2, 3), dtype="int32")
        assert q.equations == () and q.outputs == q.inputs
    q = _simplified(lambda x: (x * 3) * tf.zeros([2, 3], tf.int32) + x, (2, 3), dtype="int32")
    assert prims(q) == []  # exact for integers: x * 0 + x -> 0 + x -> x
    q = _simplified(lambda x: tf.abs(x) * tf.zeros([4, 2, 3], tf.int32), (2, 3), dtype="int32")
    assert prims(q) == [] and q.constants[0].value.shape == (4, 2, 3)


def test_multiplication_of_a_mask_by_zeros_gives_zeros():
    # a bool cast to float is 0.0 or 1.0, finite and non-negative: times 0.0 it is +0.0
    q = _simplified(lambda x: tf.cast(x > 1.0, tf.float32) * tf.zeros([2, 3]), (2, 3))
    assert prims(q) == []
    q = _simplified(lambda x: tf.cast(x > 1.0, tf.float32) * -0.0, (2, 3))
    assert prims(q) == [] and np.signbit(q.constants[0].value).all()


def test_constants_mixing_signed_zeros_are_not_uniform():
    z = tf.constant(np.array([0.0, -0.0, 0.0], np.float32))
    q = _simplified(lambda x: x * z, (3,))
    assert q.equations[0].inputs[1].shape == (3,)


def test_simplification_preserves_shape_when_the_identity_broadcasts():
    q = _simplified(lambda x: x - tf.zeros([4, 2, 3]), (2, 3))
    assert prims(q) == ["broadcast_to"] and q.outputs[0].shape == (4, 2, 3)
    q = _simplified(lambda x: x * tf.ones([4, 2, 3]), (2, 3))
    assert prims(q) == ["broadcast_to"]


def test_simplification_preserves_dtype():
    # int x * 1.0 (float): the multiplication converts, so it must stay
    xi = Var("xi", (3,), I32)
    one = Var("one", (), F32)
    out = Var("o", (3,), F64)
    p = Program((xi,), (), (Const(one, np.array(1.0, "f")),), (eqn("mul", [xi, one], out),),
                (out,))
    check(p)
    assert prims(optimize(p, check=True)) == ["mul"]


def test_sub_from_zero_becomes_negation_for_integers_only():
    q = _simplified(lambda x: 0 - x * x, (3,), dtype="int32")
    assert prims(q) == ["mul", "neg"]
    # floats: not 0.0 - x (0.0 - 0.0 is +0.0), nor -0.0 - x (a NaN x keeps its sign bit
    # through the subtraction, a negation flips it: tests/test_nan_sign_bits.py)
    q = _simplified(lambda x: -0.0 - tf.exp(x), (3,))
    assert prims(q) == ["exp", "sub"]


def test_transpose_chain_composes():
    q = _simplified(lambda x: tf.transpose(tf.transpose(x, [1, 2, 0]), [1, 0, 2]), (2, 3, 4))
    assert prims(q) == ["transpose"] and q.outputs[0].shape == (4, 3, 2)


def test_reshape_and_broadcast_chains_collapse():
    q = _simplified(lambda x: tf.reshape(tf.reshape(tf.exp(x), [3, 2]), [6]), (2, 3))
    assert prims(q) == ["exp", "reshape"]
    q = _simplified(lambda x: tf.broadcast_to(tf.broadcast_to(x, [2, 3]), [4, 2, 3]), (3,))
    assert prims(q) == ["broadcast_to"]


@pytest.mark.parametrize("shape, target, axis, keepdims", [
    ((3,), (4, 3), 0, False),
    ((3,), (4, 3), 0, True),
    ((1, 3), (5, 4, 3), (0, 1), False),
    ((4, 1), (4, 5), 1, False),
    ((4, 1), (2, 4, 5), (0, 2), True),
])
def test_sum_of_broadcast_becomes_a_product(shape, target, axis, keepdims):
    q = _simplified(lambda x: tf.reduce_sum(tf.broadcast_to(x, target), axis=axis,
                                            keepdims=keepdims), shape, dtype="int32")
    assert "reduce_sum" not in prims(q) and "mul" in prims(q)


def test_float_sum_of_broadcast_becomes_a_product_only_where_exact():
    # 0.1 summed ten times is 0.9999999999999999, 10 * 0.1 is 1.0; a + a is exactly 2 * a
    q = _simplified(lambda x: tf.reduce_sum(tf.broadcast_to(x, [4, 3]), axis=0), (3,))
    assert "reduce_sum" in prims(q)
    q = _simplified(lambda x: tf.reduce_sum(tf.broadcast_to(x, [2, 3]), axis=0), (3,))
    assert "reduce_sum" not in prims(q) and "mul" in prims(q)


def test_sum_over_a_real_axis_of_a_broadcast_stays():
    q = _simplified(lambda x: tf.reduce_sum(tf.broadcast_to(x, [4, 3]), axis=1), (3,))
    assert "reduce_sum" in prims(q)


def test_stop_gradient_is_never_removed():
    q = _simplified(lambda x: tf.stop_gradient(x) * 1.0, (3,))
    assert prims(q) == ["stop_gradient"]


def test_passes_return_the_same_program_when_nothing_changes():
    p = trace(lambda x: tf.sin(x), (3,))
    for ps in (dce, cse, fold_constants, simplify):
        assert ps(p) is p


def test_optimize_reaches_a_fixed_point_on_derivative_code():
    def f(x, w):
        with tf.GradientTape(persistent=True) as g:
            g.watch([x, w])
            h = tf.tanh(tf.matmul(x, w))
            y = tf.reduce_sum(h)
        return g.gradient(y, x), g.jacobian(h, w)
    p = trace(f, (2, 3), (3, 4))
    q = optimize(p, check=True)
    assert optimize(q) is q
    assert len(q.equations) < len(p.equations)
    x, w = np.random.randn(2, 3).astype("f"), np.random.randn(3, 4).astype("f")
    for a, b in zip(run(p, x, w), run(q, x, w)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ---- sub-programs (the hooks control flow builds on) and docs -------------------------------
def test_child_builder_lifts_values_of_the_enclosing_trace():
    outer = GraphBuilder("outer")
    with tracing(outer):
        x = outer.add_input((2,), "float32", "x")
        y = tf.exp(x)
        inner = GraphBuilder("branch", parent=outer)
        with tracing(inner, isolate=False):
            z = inner.add_input((2,), "float32", "z")
            w = z * y + x      # y and x come from the enclosing trace
            sub = inner.build([w])
    check(sub)
    assert [v.name for v in sub.inputs][0] == "z" and len(sub.inputs) == 3
    assert [t for t, _ in inner.lifted][0] is y and inner.lifted[1][0] is x
    out = run(sub, np.ones(2, "f"), np.full(2, 2.0, "f"), np.full(2, 3.0, "f"))[0]
    assert out.tolist() == [5.0, 5.0]


def test_tracing_restores_the_state_after_errors():
    from tapegrad.core.state import STATE
    b = GraphBuilder("f")
    with pytest.raises(RuntimeError, match="inside"):
        with tracing(b):
            raise RuntimeError("inside")
    assert STATE.stack.tracers == [] and STATE.stack.idle


MODULES = ["tapegrad.ir", "tapegrad.ir.core", "tapegrad.ir.checker", "tapegrad.ir.printer",
           "tapegrad.ir.interpreter", "tapegrad.ir.passes", "tapegrad.ir.algebraic",
           "tapegrad.trace.tracer", "tapegrad.trace.codegen", "tapegrad.compile.function",
           "tapegrad.compile.concrete", "tapegrad.compile.signature"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    import doctest
    import importlib
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0


def test_power_rules():
    q = _simplified(lambda x: x ** 2.0, (3,))
    assert prims(q) == ["mul"] and q.equations[0].inputs[0] == q.equations[0].inputs[1]
    q = _simplified(lambda x: tf.pow(tf.exp(x), 1.0), (3,))
    assert prims(q) == ["exp"]


@pytest.mark.parametrize("fn, left", [
    (lambda x: tf.logical_and(x > 1.0, tf.constant([False, False, False])), []),
    (lambda x: tf.logical_and(x > 1.0, tf.constant(True)), ["greater"]),
    (lambda x: tf.logical_or(tf.constant(True), x > 1.0), []),
    (lambda x: tf.logical_or(x > 1.0, tf.constant(False)), ["greater"]),
    (lambda x: tf.where(tf.constant([True, True, True]), tf.exp(x), x), ["exp"]),
    (lambda x: tf.where(tf.constant(False), tf.exp(x), tf.sin(x)), ["sin"]),
])
def test_logical_rules(fn, left):
    assert prims(_simplified(fn, (3,))) == left


def test_uniform_constants_become_scalars_where_they_broadcast():
    q = _simplified(lambda x: x * tf.fill([2, 3], 0.5), (2, 3))
    (e,) = q.equations
    assert [v.shape for v in e.inputs] == [(2, 3), ()]
    q = _simplified(lambda x: x * tf.fill([4, 2, 3], 0.5), (2, 3))  # the constant sets the shape
    assert q.equations[0].inputs[1].shape == (4, 2, 3)


def test_traced_uniform_constants_are_stored_without_memory():
    p = trace(lambda x: x + tf.zeros([300, 300]) + tf.fill([300, 300], 2.0), (300, 300))
    for c in p.constants:
        assert c.value.strides == (0, 0)


def test_power_zero_is_ones():
    q = _simplified(lambda x: tf.pow(tf.exp(x), 0.0) * x, (2, 3))
    assert prims(q) == []


def test_scalar_constant_products_fold():
    q = _simplified(lambda x: 4.0 * (x * 2.0), (2, 3))
    assert prims(q) == ["mul"]
    q = _simplified(lambda x: -(x * 2.0) * -8.0, (2, 3))  # the NaN sign: see test_nan_sign_bits
    assert prims(q) == ["mul", "neg", "mul"]
    q = _simplified(lambda x: -(x * 2) * -8, (2, 3), dtype="int32")
    assert prims(q) == ["mul"]
    q = _simplified(lambda x: 3 * (x * 5), (2, 3), dtype="int32")
    assert prims(q) == ["mul"]
    q = _simplified(lambda x: 2.0 * (-tf.exp(x)), (2, 3))
    assert prims(q) == ["exp", "neg", "mul"]
    q = _simplified(lambda x: 2 * (-(x * x)), (2, 3), dtype="int32")
    assert prims(q) == ["mul", "mul"]


@pytest.mark.parametrize("c, d", [(3.0, 2.0), (0.5, 2.0), (0.5, 0.25), (1e30, 1e30)])
def test_float_scalar_products_that_round_differently_stay(c, d):
    # 3 * (2 * x) rounds once per product; x * 2 * 0.5 overflows where x * 1 does not;
    # halving twice in the subnormal range rounds twice
    with np.errstate(over="ignore"):
        q = _simplified(lambda x: c * (x * d), (2, 3))
    assert prims(q) == ["mul", "mul"]


def test_negated_product_with_a_constant_folds_the_sign_for_integers_only():
    c = tf.constant(np.arange(6, dtype=np.int32).reshape(2, 3))
    q = _simplified(lambda x: -(c * x), (2, 3), dtype="int32")
    assert prims(q) == ["mul"]
    # floats: -(c * nan) and (-c) * nan are NaNs of opposite signs
    c = tf.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    q = _simplified(lambda x: -(c * x), (2, 3))
    assert prims(q) == ["mul", "neg"]


def test_scatters_into_the_same_place_merge():
    def f(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tf.reduce_sum(tf.sin(x[1:]) + tf.cos(x[1:]) * x[1:])
        return g.gradient(y, x)
    q = _simplified(f, (5,))
    assert prims(q).count("index_add") == 1


def test_constants_that_repeat_along_an_axis_are_stored_once():
    w = tf.constant(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    big = tf.constant(np.broadcast_to(np.arange(4.0, dtype=np.float32), (5, 4)).copy())
    q = _simplified(lambda x: x * big + w[0], (5, 4))
    assert max(c.value.size for c in q.constants) <= 4


def test_basis_rows_of_layer_products_fold_into_the_weights():
    rng = np.random.RandomState(1)
    w1 = tf.constant(rng.randn(3, 5).astype(np.float32))
    w2 = tf.constant(rng.randn(5, 4).astype(np.float32))

    def jac(layers):
        def f(x):
            with tf.GradientTape() as g:
                g.watch(x)
                y = layers(x)
            return g.batch_jacobian(y, x, mode="reverse")
        return f
    q = _simplified(jac(lambda x: tf.tanh(tf.matmul(x, w1))), (6, 3))  # checks values too
    # the 5 basis rows (0 and 1: exact) went into a folded (5, 5, 3) weight constant: no
    # (5, 6, 5) product of basis rows and derivatives is formed elementwise any more
    assert not [e for e in q.equations if e.prim.name == "mul" and e.out.shape == (5, 6, 5)]
    assert any(c.value.shape == (5, 5, 3) for c in q.constants)
    # cotangents already multiplied by w2 are not 0 or 1: (c x) w and x (c w) round differently
    q = _simplified(jac(lambda x: tf.matmul(tf.tanh(tf.matmul(x, w1)), w2)), (6, 3))
    assert not any(c.value.shape == (4, 5, 3) for c in q.constants)


def test_basis_fold_has_a_cost_model_tested_on_both_sides():
    """The basis-into-weights fold reads a (J, K, N) constant instead of a (J, B, K)
    temporary: it is kept only while that constant is no larger than what it replaces."""
    rng = np.random.RandomState(2)

    def jac(w):
        def f(x):
            with tf.GradientTape() as g:
                g.watch(x)
                y = tf.tanh(tf.matmul(x, w))
            return g.batch_jacobian(y, x, mode="reverse")
        return f
    w = tf.constant(rng.randn(40, 5).astype(np.float32))
    for batch, folds in ((64, True), (2, False)):  # N = 40 inputs: fold iff N <~ B
        q = _simplified(jac(w), (batch, 40))  # checks the values against the interpreter
        folded = [c for c in q.constants if c.value.shape == (5, 5, 40)]
        assert bool(folded) == folds, batch
        biggest = max(c.value.size for c in q.constants)
        assert folds or biggest <= w.shape[0] * w.shape[1]  # no constant beyond the weights
