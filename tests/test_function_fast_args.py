"""The fast call of a ``tf.function`` for lists and tuples of tensors (``function.flat_key``):
a signature seen before runs its program without the structure walk, and gives what the
full path gives; any other argument takes the full path."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.compile.function import flat_key


def no_lookup(f):
    """Make the full path of ``f`` fail: a call that still works took the fast one."""
    def fail(*a, **k):
        raise AssertionError("the full path ran")
    f._lookup = fail


def test_a_list_of_tensors_runs_the_program_without_the_full_path():
    f = tf.function(lambda ps: [tf.reduce_sum(p * p) for p in ps])
    ps = [tf.constant(np.arange(3.0)), tf.constant(np.ones((2, 2), np.float32))]
    first = f(ps)
    no_lookup(f)
    again = f([tf.constant(np.arange(3.0)), np.ones((2, 2), np.float32)])
    assert type(again) is list and len(again) == 2
    for a, b in zip(first, again):
        assert type(b) is tf.Tensor and a.dtype == b.dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert f.trace_count == 1


def test_new_shapes_dtypes_lengths_and_containers_trace_anew():
    f = tf.function(lambda ps: tf.add_n([tf.reduce_sum(p) for p in ps]))
    cases = [[np.ones(3)], [np.ones(4)], [np.ones(3, np.float32)], [np.ones(3), np.ones(3)],
             (np.ones(3),), (np.ones(3), np.ones(2))]
    for c in cases:
        want = sum(float(np.sum(p)) for p in c)
        assert float(f(c)) == want
    assert f.trace_count == len(cases)
    for c in cases:  # every one again: no new trace, the same numbers
        assert float(f(c)) == sum(float(np.sum(p)) for p in c)
    assert f.trace_count == len(cases)


def test_tensors_beside_lists_and_the_outputs_structures():
    @tf.function
    def f(x, ws):
        ys = [x * w for w in ws]
        return tuple(ys), ys[0], {"sum": tf.add_n(ys)}

    x, ws = tf.constant([1.0, -0.0]), [tf.constant([2.0, 3.0]), tf.constant([np.inf, 1.0])]
    a = f(x, ws)
    no_lookup(f)
    b = f(x, list(ws))  # a new list of the same tensors
    assert type(b) is tuple and type(b[0]) is tuple and type(b[2]) is dict
    for p, q in zip(tf.nest.flatten(a), tf.nest.flatten(b)):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
        assert np.array_equal(np.signbit(p.numpy()), np.signbit(q.numpy()))


@pytest.mark.parametrize("out", ["list", "tuple", "tuple1", "empty"])
def test_flat_output_lists_and_tuples_are_built_by_the_call(out):
    make = {"list": lambda ps: [p + 1.0 for p in ps], "tuple": lambda ps: (ps[0], ps[1] * 2.0),
            "tuple1": lambda ps: (ps[0] - 1.0,), "empty": lambda ps: ()}[out]
    f = tf.function(make)
    ps = [tf.constant([1.0, 2.0]), tf.constant(3.0)]
    want = make(ps)
    for _ in range(2):
        got = f(ps)
        assert type(got) is type(want) and len(got) == len(want)
        for g, w in zip(got, want):
            assert type(g) is tf.Tensor
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_variables_and_python_values_in_a_list_take_the_full_path():
    v = tf.Variable([1.0, 2.0])
    f = tf.function(lambda ps: ps[0] * ps[1])
    assert flat_key(([v, tf.constant(1.0)],)) is None
    assert flat_key(([tf.constant(1.0), 2.0],)) is None
    np.testing.assert_array_equal(f([v, tf.constant(2.0)]).numpy(), [2.0, 4.0])
    v.assign([3.0, 4.0])
    np.testing.assert_array_equal(f([v, tf.constant(2.0)]).numpy(), [6.0, 8.0])
    assert float(f([tf.constant(2.0), 5.0])) == 10.0
    assert float(f([tf.constant(2.0), 6.0])) == 12.0  # a new Python value: a new trace


def test_a_tape_sees_a_call_on_a_list():
    f = tf.function(lambda ps: tf.reduce_sum(ps[0] * ps[1]))
    a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
    f([a, b])
    with tf.GradientTape() as g:
        g.watch(a)
        y = f([a, b])
    np.testing.assert_array_equal(g.gradient(y, a).numpy(), [3.0, 4.0])


def test_a_step_returning_none_or_a_python_value_through_the_fast_call():
    v = tf.Variable(1.0)

    @tf.function
    def step():
        v.assign_add(1.0)

    @tf.function
    def count(x):
        v.assign_add(x)
        return 3

    assert [step() for _ in range(3)] == [None] * 3 and float(v) == 4.0
    assert [count(tf.constant(0.5)) for _ in range(3)] == [3] * 3 and float(v) == 5.5
