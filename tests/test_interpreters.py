"""The interpreter protocol (core/state.py): one stack, one interface, levels in the data."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.core.state import STATE, IDLE, Interpreter, interpreters, recording


class Log(Interpreter):
    """A recorder that logs what it sees."""

    records = True

    def __init__(self):
        self.ops, self.reads, self.custom = [], [], []

    def record(self, prim, args, params, out, recorders, index):
        self.ops.append(prim.name)

    def record_custom(self, op, inputs, out, recorders, index):
        self.custom.append(len(inputs))

    def read_variable(self, var, val):
        self.reads.append(var.name)
        return val


class Doubler(Interpreter):
    """Computes ``sin`` as twice its NumPy value; passes every other operation down."""

    computes = True

    def process(self, prim, args, params):
        if prim.name != "sin":
            return None
        return tf.constant(2 * np.sin(args[0]._value))


def test_a_recorder_sees_operations_and_variable_reads():
    log, v = Log(), tf.Variable(2.0, name="w")
    with interpreters((log,)):
        assert not STATE.stack.idle and STATE.stack.recording_only
        y = tf.sin(tf.constant(1.0)) * v
    assert STATE.stack is IDLE
    assert log.ops == ["sin", "mul"] and log.reads == ["w:0"]
    assert float(y) == pytest.approx(2 * np.sin(1.0))


def test_computing_interpreters_are_asked_from_the_top_and_none_falls_through():
    log = Log()
    with interpreters((log, Doubler())):
        assert STATE.stack.computers[0].computes and not STATE.stack.recording_only
        s = tf.sin(tf.constant(1.0))
        c = tf.cos(tf.constant(1.0))  # not its business: NumPy computes it
    assert float(s) == pytest.approx(2 * np.sin(1.0), rel=1e-6)
    assert float(c) == pytest.approx(np.cos(1.0), rel=1e-6)
    assert log.ops == ["sin", "cos"]  # recorders see what the computing one gave


def test_interpreters_restores_the_stack_after_an_error():
    with tf.GradientTape() as tape:
        before = STATE.stack
        with pytest.raises(RuntimeError):
            with interpreters(()):
                assert STATE.stack.idle
                raise RuntimeError
        assert STATE.stack is before and STATE.stack.recorders == [tape]


def test_recording_keeps_the_other_interpreters():
    log = Log()
    with tf.GradientTape() as tape:
        with interpreters(STATE.stack.interpreters + (Doubler(),)):
            with recording([log]):
                assert STATE.stack.recorders == [log] and len(STATE.stack.computers) == 1
    assert tape not in STATE.stack.recorders


def test_vmap_levels_follow_the_data():
    seen = []

    def inner(x):
        seen.append((STATE.stack.batch_level, x._level))
        return x * 2.0
    out = tf.vmap(tf.vmap(inner))(tf.ones((2, 3)))
    assert seen == [(2, 2)] and out.numpy().tolist() == [[2.0] * 3] * 2
    assert STATE.stack.batch_level == 0


def test_custom_gradient_asks_each_recorder_through_the_protocol():
    log = Log()

    @tf.custom_gradient
    def f(x):
        return x * 3.0, lambda dy: dy * 3.0
    x = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        with recording(STATE.stack.recorders + [log]):
            y = f(x)
    assert log.custom == [1]  # the custom operation, one input
    assert float(tape.gradient(y, x)) == 3.0


def _stack_setters(path):
    """Assignments to a ``.stack`` attribute, with the function they are in."""
    import ast
    found = []

    def walk(node, where):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                walk(child, child.name)
                continue
            targets = child.targets if isinstance(child, ast.Assign) else \
                [child.target] if isinstance(child, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and t.attr == "stack":
                    found.append((str(path), where))
            walk(child, where)
    walk(ast.parse(path.read_text()), "<module>")
    return found


def test_one_function_sets_the_stack():
    """``switch`` (core/state.py) is the one place that sets ``STATE.stack``: the context
    managers, push and remove, and a batching rule's own operations all go through it."""
    import pathlib
    root = pathlib.Path(tf.__file__).parent
    found = [f for p in sorted(root.rglob("*.py")) for f in _stack_setters(p)]
    state_py = str(root / "core" / "state.py")
    assert found == [(state_py, "__init__"), (state_py, "switch")], found


def _probe_primitive(seen, fail=False):
    """A negation whose batching rule notes whether the stack was empty while it ran."""
    from tapegrad.core.dispatch import PRIMITIVES, Primitive

    def batch(args, batched):
        seen.append(STATE.stack.idle)
        if fail:
            raise FloatingPointError("a rule that fails")
        return -args[0]
    PRIMITIVES.pop("interp_test_neg", None)
    return Primitive("interp_test_neg", np.negative, nin=1, batch=batch,
                     abstract=lambda x: (x.shape, x.dtype), vjp=(lambda g, ans, x: -g,))


def test_a_batching_rule_runs_on_the_empty_stack_only_where_nothing_sees_it():
    from tapegrad.core.dispatch import PRIMITIVES
    seen = []
    neg = _probe_primitive(seen)
    try:
        x = tf.constant(np.arange(6.0).reshape(3, 2))
        np.testing.assert_array_equal(tf.vmap(neg)(x).numpy(), -x.numpy())
        assert seen == [True] and STATE.stack is IDLE
        with tf.GradientTape() as tape:  # a tape sees the rule's operations: not hidden
            tape.watch(x)
            y = tf.vmap(neg)(x)
        assert seen == [True, False]
        np.testing.assert_array_equal(tape.gradient(y, x).numpy(), -np.ones((3, 2)))
        # the inner level's value holds the outer level's: the rule's operations meet it
        # (x is float64: a float32 operand would be TensorFlow's InvalidArgumentError)
        out = tf.vmap(lambda a: tf.vmap(lambda b: neg(b + a))(tf.ones((2, 2), tf.float64)))(x)
        assert seen[-1] is False and out.shape == (3, 2, 2)
        np.testing.assert_array_equal(out.numpy(), -1.0 - np.broadcast_to(
            x.numpy()[:, None, :], (3, 2, 2)))
    finally:
        del PRIMITIVES["interp_test_neg"]


def test_a_failing_batching_rule_restores_the_stack():
    from tapegrad.core.dispatch import PRIMITIVES
    seen = []
    neg = _probe_primitive(seen, fail=True)
    try:
        with pytest.raises(FloatingPointError):
            tf.vmap(neg)(tf.ones((3, 2)))
        assert seen == [True] and STATE.stack is IDLE
        with tf.GradientTape() as tape:
            with pytest.raises(FloatingPointError):
                tf.vmap(neg)(tf.ones((3, 2)))
            assert STATE.stack.recorders == [tape]
        assert STATE.stack is IDLE
    finally:
        del PRIMITIVES["interp_test_neg"]
