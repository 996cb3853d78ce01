"""``x.shape`` is a ``TensorShape`` with TensorFlow's API that is also a tuple: every case of
tests/data/tf_shape_reference.json (written by benchmarks/tf_shape_reference.py with
TensorFlow 2.21) gives TensorFlow's result type and ``repr``, or raises its error type; shapes
stay tuples for the code that treats them so; inside ``tf.function`` and ``vectorized_map``
the shapes are TensorShapes too; Keras keeps its own shapes tuples, as Keras 3 does."""
import json
import pathlib
import pickle

import numpy as np
import pytest

import tapegrad as tf
from benchmarks.tf_shape_reference import run

REF = json.loads((pathlib.Path(__file__).parent / "data" / "tf_shape_reference.json")
                 .read_text())["cases"]
GOT = run(tf, np)


@pytest.mark.parametrize("case", sorted(REF))
def test_tensor_shape_gives_tensorflows_answer(case):
    assert GOT[case] == REF[case]


def test_a_shape_is_still_a_tuple():
    x = tf.zeros((2, 3))
    s = x.shape
    assert isinstance(s, tuple) and isinstance(s, tf.TensorShape)
    a, b = s
    assert (a, b) == (2, 3) and s == (2, 3) and (2, 3) == s and hash(s) == hash((2, 3))
    assert {s: 1}[(2, 3)] == 1 and {(2, 3): 1}[s] == 1
    assert np.zeros(s).shape == (2, 3) and np.ones(s[1:]).shape == (3,)
    assert s[0] == 2 and type(s[0]) is int and s[-1] == 3
    assert tuple(s) == (2, 3) and type(tuple(s)) is tuple
    assert tf.reshape(x, s[::-1]).shape == (3, 2)
    assert pickle.loads(pickle.dumps(s)) == s
    # a scalar's shape is falsy, as the empty tuple (TensorFlow's TensorShape([]) is truthy)
    assert not tf.constant(1.0).shape and tf.constant(1.0).shape == ()


def test_variables_symbolic_and_batched_tensors_have_tensor_shapes():
    v = tf.Variable(tf.zeros((4, 2)))
    assert type(v.shape) is tf.TensorShape and v.shape.as_list() == [4, 2]
    seen = []

    @tf.function
    def f(x):
        seen.append((type(x.shape), x.shape.as_list(), x.shape[1:].num_elements()))
        return tf.reshape(x, x.shape[:1].concatenate([6]))

    assert f(tf.zeros((5, 2, 3))).shape == (5, 6)
    assert seen == [(tf.TensorShape, [5, 2, 3], 6)]

    rows = []
    out = tf.vectorized_map(lambda r: (rows.append(type(r.shape)), r * 2.0)[1], tf.ones((3, 4)))
    assert out.shape == (3, 4) and rows and all(t is tf.TensorShape for t in rows)


def test_a_symbolic_size_stays_symbolic_in_a_tensor_shape():
    # input_signature with None: x.shape[0] is the traced size (README, differences), and
    # the TensorShape's methods keep it symbolic: one trace serves both sizes
    traces = []

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        traces.append(1)
        n = x.shape.num_elements()
        assert x.shape.is_fully_defined() and x.shape.rank == 2
        return tf.reshape(x, x.shape[:1] + x.shape[1:]) * 2.0, tf.zeros([n])

    for n in (2, 5):
        y, z = f(tf.ones((n, 3)))
        np.testing.assert_array_equal(y.numpy(), np.full((n, 3), 2.0, np.float32))
        assert z.shape == (3 * n,)
    assert len(traces) <= 2


def test_tensor_spec_shape_is_a_tensor_shape():
    spec = tf.TensorSpec([None, 3], tf.float32)
    assert type(spec.shape) is tf.TensorShape and spec.shape.as_list() == [None, 3]
    assert spec.shape == (None, 3) and tf.TensorSpec(None).shape is None


def test_keras_shapes_stay_tuples():
    seen = []

    class Probe(tf.keras.layers.Layer):
        def build(self, input_shape):
            seen.append(type(input_shape))
            self.w = self.add_weight(shape=(input_shape[-1], 2))

        def call(self, x):
            return tf.matmul(x, self.w)

        def compute_output_shape(self, input_shape):
            return input_shape[:-1] + (2,)

    layer = Probe()
    y = layer(tf.ones((3, 4)))
    assert seen == [tuple] and y.shape == (3, 2)
    assert type(tf.keras.ops.shape(y)) is tuple
    inp = tf.keras.Input(shape=(4,))
    assert type(inp.shape) is tuple and inp.shape == (None, 4)
    model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(2)])
    assert type(model.output_shape) is tuple


def test_dimension():
    d = tf.TensorShape([None, 3]).dims
    assert [x.value for x in d] == [None, 3] and d[1] == 3 and repr(d[0]) == "Dimension(None)"
    assert tf.TensorShape(d).as_list() == [None, 3] and int(d[1]) == 3
