"""``tf.debugging`` and the unsigned dtypes as TensorFlow 2.21 has them: every case of
tests/data/tf_debugging_reference.json (written by benchmarks/tf_debugging_reference.py)
returns TensorFlow's value or raises its error type, eagerly and inside ``tf.function``;
a staged assertion checks every call of the compiled program, not only the traced one."""
import json
import pathlib

import numpy as np
import pytest

import tapegrad as tf
from benchmarks.tf_debugging_reference import run

REF = json.loads((pathlib.Path(__file__).parent / "data" / "tf_debugging_reference.json")
                 .read_text())["cases"]
GOT = run(tf, np)


@pytest.mark.parametrize("case", sorted(REF))
def test_debugging_gives_tensorflows_answer(case):
    assert GOT[case] == REF[case]


def test_a_staged_assertion_runs_on_every_call():
    traces = []

    @tf.function
    def f(x):
        traces.append(1)
        tf.debugging.assert_non_negative(x, message="x must be >= 0")
        return tf.debugging.check_numerics(tf.sqrt(x), "sqrt")

    np.testing.assert_array_equal(f(tf.constant([4.0, 9.0])).numpy(), [2.0, 3.0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="x must be >= 0"):
        f(tf.constant([4.0, -1.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="sqrt : Tensor had Inf"):
        f(tf.constant([np.inf, 1.0]))
    np.testing.assert_array_equal(f(tf.constant([0.0, 1.0])).numpy(), [0.0, 1.0])
    assert len(traces) == 1


def test_assertions_leave_gradients_alone():
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t:
        y = tf.debugging.check_numerics(x * x, "y")
        tf.debugging.assert_positive(y)
        loss = tf.reduce_sum(y)
    np.testing.assert_array_equal(t.gradient(loss, x).numpy(), [2.0, 4.0])

    @tf.function
    def g(v):
        with tf.GradientTape() as t:
            t.watch(v)
            y = tf.reduce_sum(tf.debugging.check_numerics(v * v, "y"))
            tf.debugging.assert_positive(y)
        return t.gradient(y, v)

    np.testing.assert_array_equal(g(tf.constant([3.0])).numpy(), [6.0])


def test_reduce_all_and_any_inside_tf_function_and_vmap():
    a = np.array([[True, False], [True, True], [False, False]])

    @tf.function
    def f(x):
        return (tf.reduce_all(x, axis=1), tf.reduce_any(x, axis=0, keepdims=True),
                tf.reduce_all(x), tf.reduce_any(x[:, :0], axis=1), tf.reduce_all(x[:, :0], axis=1))

    for got, want in zip(f(tf.constant(a)), (a.all(1), a.any(0, keepdims=True), a.all(),
                                             a[:, :0].any(1), a[:, :0].all(1))):
        assert got.dtype == tf.bool
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(tf.vectorized_map(tf.reduce_any, tf.constant(a)).numpy(),
                                  a.any(1))


def test_unsigned_dtypes():
    for name in ("uint16", "uint32", "uint64"):
        d = getattr(tf, name)
        assert d == np.dtype(name) and tf.dtypes.as_dtype(name) == d and getattr(tf.dtypes, name) == d
        v = tf.Variable(tf.constant([1, 2], d))
        assert v.dtype == d and (v + v).dtype == d
