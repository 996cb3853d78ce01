"""Inputs that used to give a silently wrong number get TensorFlow's error or its value,
eagerly and in a ``tf.function`` alike (issue 9, item 4). The messages are TensorFlow's."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.errors import InvalidArgumentError


def both(fn, *args):
    """``fn`` run eagerly and compiled: each raises, or both give the same value and dtype."""
    return [lambda: fn(*args), lambda: tf.function(fn)(*args)]


@pytest.mark.parametrize("dtype", ["int32", "int64", "bool"])
def test_sigmoid_refuses_integers_and_bools(dtype):
    x = tf.constant(np.array([1, 0], dtype))
    for run in both(tf.sigmoid, x):
        with pytest.raises(InvalidArgumentError, match=r"attr 'T' of .* not in the list"):
            run()


def test_sigmoid_of_complex_is_the_formula():
    z = np.array([1 + 2j, -3 + 0.5j, 0j], np.complex128)
    for run in both(tf.sigmoid, tf.constant(z)):
        np.testing.assert_allclose(run().numpy(), 1 / (1 + np.exp(-z)), rtol=1e-14)


def test_relu_refuses_bool_and_keeps_integer_dtypes():
    for run in both(tf.nn.relu, tf.constant([True, False])):
        with pytest.raises(InvalidArgumentError, match="of bool is not in the list"):
            run()
    for dt in ("int32", "uint8", "int64", "float16"):
        x = tf.constant(np.array([1, 0, 3], dt))
        eager, compiled = (run() for run in both(tf.nn.relu, x))
        assert eager.dtype == compiled.dtype == np.dtype(dt)
        np.testing.assert_array_equal(eager.numpy(), compiled.numpy())


@pytest.mark.parametrize("op", [lambda a, b: a // b, lambda a, b: a % b, tf.math.floormod,
                                tf.math.floordiv], ids=["//", "%", "floormod", "floordiv"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_division_by_zero_raises(op, dtype):
    a, b = tf.constant(np.array([1, 2], dtype)), tf.constant(np.array([0, 1], dtype))
    for run in both(op, a, b):
        with pytest.raises(InvalidArgumentError, match="Integer division by zero"):
            run()
    ok = tf.constant(np.array([2, 1], dtype))
    eager, compiled = (run() for run in both(op, a, ok))
    np.testing.assert_array_equal(eager.numpy(), compiled.numpy())
    np.testing.assert_array_equal(eager.numpy(), op(np.array([1, 2], dtype), ok.numpy()))


def test_float_division_by_zero_is_ieee():
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (tf.constant([1.0, -1.0, 0.0]) // tf.constant(0.0)).numpy()
    np.testing.assert_array_equal(out, [np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("value", [2**63, [1, 2**63], -2**63 - 1, [[1], [2**64]]])
def test_integers_out_of_int64_range_raise(value):
    with pytest.raises(ValueError, match="out-of-range integer"):
        tf.constant(value)


def test_integers_at_the_edges_of_int64_convert():
    assert tf.constant(2**63 - 1).numpy() == 2**63 - 1
    assert tf.constant(-2**63).dtype == np.int64
    assert tf.constant(2**31).dtype == np.int64 and tf.constant(7).dtype == np.int32
    assert tf.constant(2**63, dtype=np.uint64).numpy() == 2**63


def test_python_float_beyond_float32_raises_unless_the_dtype_is_asked_for():
    with pytest.raises(ValueError, match="out of range"):
        tf.constant(1e300)
    with pytest.raises(ValueError, match="out of range"):
        tf.constant([1.0, -1e300])
    with np.errstate(over="ignore"):  # an explicit float32: TensorFlow's value is inf
        assert tf.constant(1e300, dtype=tf.float32).numpy() == np.inf
    assert tf.constant(float("inf")).numpy() == np.inf  # inf itself is not out of range
    assert tf.constant(1e300, dtype=tf.float64).numpy() == 1e300


def test_assigning_a_tensor_of_another_dtype_to_a_variable_raises():
    v = tf.Variable(1.0)
    with pytest.raises(ValueError, match="requested dtype float32 for Tensor with dtype float64"):
        v.assign(tf.constant(1e300, tf.float64))
    with pytest.raises(ValueError, match="requested dtype float32"):
        v.assign_add(tf.constant(1.0, tf.float64))
    assert v.numpy() == 1.0
    with np.errstate(over="ignore"):  # a Python float converts, as in TensorFlow: inf
        v.assign(1e300)
    assert v.numpy() == np.inf


@pytest.mark.parametrize("make", [tf.ones, tf.zeros, lambda s: tf.fill(s, 1.0),
                                  lambda s: tf.reshape(tf.ones([2]), s)],
                         ids=["ones", "zeros", "fill", "reshape"])
@pytest.mark.parametrize("shape", [[2.5], [2.0], [np.float64(2)], [tf.constant(2.0)],
                                   tf.constant([2.0])], ids=["2.5", "2.0", "np", "t", "T"])
def test_float_shapes_raise(make, shape):
    with pytest.raises(TypeError, match="Cannot convert .* to EagerTensor of dtype int32"):
        make(shape)


def test_integral_shapes_convert():
    assert tf.ones([True]).shape == (1,)
    assert tf.ones([np.int64(2), tf.constant(3)]).shape == (2, 3)
    assert tf.ones(tf.constant([2, 3])).shape == (2, 3)


@pytest.mark.parametrize("value", [[1.0, "a"], ["a", 1]])
def test_numbers_mixed_with_strings_raise(value):
    with pytest.raises(ValueError, match="mixed types"):
        tf.constant(value)


# TensorFlow infers a Python sequence's type from its first element (values from TF 2.21):
# a bool first admits only bools, a real number first admits no complex number.
@pytest.mark.parametrize("value", [
    [True, 1], [[True, False], [1, 2]], [True, np.int32(1)], [np.bool_(True), 1], [True, 1.5],
    [1, 1j], [1.5, 1j], [[1.5], [1j]], [1, 2.5, 1j], [np.float64(1.0), 1j], [1, [2]]])
def test_sequences_of_mixed_types_raise(value):
    with pytest.raises(ValueError, match="mixed types"):
        tf.constant(value)


@pytest.mark.parametrize("value, dtype, expected", [
    ([1, True], "int32", [1, 1]), ([1.5, True], "float32", [1.5, 1.0]),
    ([[1, 2], [True, False]], "int32", [[1, 2], [1, 0]]), ([True, False], "bool", [True, False]),
    ([1j, 1], "complex128", [1j, 1]), ([1j, True], "complex128", [1j, 1]),
    (1j, "complex128", 1j), ([np.float64(1.0), np.float32(2.0)], "float64", [1.0, 2.0]),
    ([1, np.float64(2.5)], "float32", [1.0, 2.5]), ([np.array(1.0), 2.5], "float64", [1.0, 2.5])])
def test_sequence_types_follow_the_first_element(value, dtype, expected):
    t = tf.constant(value)
    assert t.dtype.name == dtype
    np.testing.assert_array_equal(t.numpy(), np.array(expected, dtype=dtype))


def test_a_requested_dtype_admits_bools_but_not_a_late_complex():
    assert tf.constant([True, 1], dtype=tf.int32).numpy().tolist() == [1, 1]
    assert tf.convert_to_tensor([True, 1.5], dtype_hint=tf.float32).dtype == tf.float32
    with pytest.raises(ValueError, match="mixed types"):
        tf.constant([1, 1j], dtype=tf.complex64)


def test_ragged_sequences_get_tensorflows_message():
    with pytest.raises(ValueError, match="non-rectangular"):
        tf.constant([[1, 2], [3]])


@pytest.mark.parametrize("arr", [np.array([1, "a"], dtype=object),
                                 np.array([1.0, 2.0], dtype=object),
                                 np.array([[1, 2]], dtype=object)])
def test_numpy_object_arrays_raise(arr):
    with pytest.raises(ValueError, match="Unsupported object type"):
        tf.constant(arr)
    with pytest.raises(ValueError, match="Unsupported object type"):
        tf.convert_to_tensor(arr)


def test_numpy_object_arrays_of_strings_are_string_tensors():
    t = tf.constant(np.array(["a", "bc"], dtype=object))
    assert t.dtype == tf.string and t.numpy().tolist() == [b"a", b"bc"]
