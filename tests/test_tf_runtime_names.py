"""The runtime names of TensorFlow programs' first and last lines: device queries and scopes,
tf.config.run_functions_eagerly, tf.py_function / tf.numpy_function and tf.ensure_shape, as
TensorFlow 2.21 answers them on a CPU-only machine."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.errors import InvalidArgumentError


def test_device_queries_answer_as_tensorflow_on_a_cpu_machine():
    cpu = tf.config.list_physical_devices()
    assert repr(cpu) == "[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]"
    assert cpu[0].name == "/physical_device:CPU:0" and cpu[0].device_type == "CPU"
    assert tf.config.list_physical_devices("GPU") == []
    assert tf.config.experimental.list_physical_devices("GPU") == []
    assert tf.config.list_physical_devices("cpu") == []  # case-sensitive, as TensorFlow
    assert repr(tf.config.list_logical_devices()) == \
        "[LogicalDevice(name='/device:CPU:0', device_type='CPU')]"
    assert tf.config.get_visible_devices() == cpu
    tf.config.set_visible_devices([], "GPU")  # the usual "hide the GPUs" line
    with pytest.raises(ValueError, match="Cannot set memory growth on non-GPU"):
        tf.config.experimental.set_memory_growth(cpu[0], True)
    # the usual GPU set-up loop runs zero times
    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)
    tf.config.experimental.enable_op_determinism()
    assert tf.config.get_soft_device_placement() is True


@pytest.mark.parametrize("name", ["/GPU:0", "/device:GPU:1", "/cpu:0", "CPU:0", None,
                                  "/job:localhost/replica:0/task:0/device:CPU:0",
                                  "/device:GPU:*"])
def test_device_scopes_place_on_the_cpu(name):
    with tf.device(name):
        x = tf.constant([1.0, 2.0]) * 2
    assert x.numpy().tolist() == [2.0, 4.0]
    assert x.device == "/job:localhost/replica:0/task:0/device:CPU:0"


def test_a_malformed_device_name_gets_tensorflows_error():
    with pytest.raises(ValueError, match="Unknown attribute 'foo' is encountered while "
                                         "parsing the device spec: 'foo'."):
        tf.device("foo")


def test_run_functions_eagerly_runs_the_python_every_call_and_switches_back():
    calls = []

    @tf.function
    def f(x):
        calls.append(tf.executing_eagerly())
        return x * 2 + 1

    assert f(tf.constant(1.0)).numpy() == 3.0 and f(tf.constant(2.0)).numpy() == 5.0
    assert calls == [False]  # traced once, then the fast path
    try:
        tf.config.run_functions_eagerly(True)
        assert tf.config.functions_run_eagerly() is True
        assert f(tf.constant(3.0)).numpy() == 7.0 and f(tf.constant(4.0)).numpy() == 9.0
        assert calls == [False, True, True]
    finally:
        tf.config.run_functions_eagerly(False)
    assert f(tf.constant(5.0)).numpy() == 11.0 and calls == [False, True, True]


def test_py_function_is_differentiable_and_checks_tout():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.py_function(lambda a: tf.sin(a) * a, [x], tf.float32)
    np.testing.assert_allclose(t.gradient(y, x).numpy(),
                               np.sin(x.numpy()) + x.numpy() * np.cos(x.numpy()), rtol=1e-6)
    a, b = tf.py_function(lambda v: (v * 2, v), [x], [tf.float32, tf.float32])
    assert a.shape == (2, 3) and b is x
    assert tf.py_function(lambda v: 3, [x], tf.float32).dtype == np.float32
    assert tf.py_function(lambda v: None, [x], []) == []
    with pytest.raises(InvalidArgumentError, match="float32 value where Tout asks for int32"):
        tf.py_function(lambda v: v * 2, [x], tf.int32)


def test_numpy_function_sees_arrays_and_has_no_gradient():
    x = tf.constant([3.0, 1.0, 2.0])
    seen = []

    def f(a):
        seen.append(type(a))
        return np.sort(a) * a

    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.numpy_function(f, [x], tf.float32)
    assert seen == [np.ndarray] and y.numpy().tolist() == [3.0, 2.0, 6.0]
    assert t.gradient(y, x) is None
    assert tf.numpy_function(lambda a: a.astype(np.float64), [x], tf.float64).dtype == np.float64
    with pytest.raises(InvalidArgumentError):
        tf.numpy_function(lambda a: a, [x], tf.int32)


def test_inside_tf_function_they_raise_instead_of_freezing_a_result():
    @tf.function
    def f(a):
        return tf.py_function(lambda b: b * np.random.rand(), [a], tf.float32)

    with pytest.raises(NotImplementedError, match="cannot call back into Python"):
        f(tf.constant(1.0))

    @tf.function
    def g(a):
        return tf.numpy_function(lambda b: b, [a], tf.float32)

    with pytest.raises(NotImplementedError, match="tf.numpy_function inside tf.function"):
        g(tf.constant(1.0))


def test_py_function_in_a_data_pipeline():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(4.0)).map(
        lambda v: tf.py_function(lambda u: u * 10, [v], tf.float64))
    assert [float(v) for v in ds] == [0.0, 10.0, 20.0, 30.0]


def test_ensure_shape_as_tensorflow():
    x = tf.zeros((2, 3))
    assert tf.ensure_shape(x, [None, 3]) is x and tf.ensure_shape(x, None) is x
    assert tf.ensure_shape(x, tf.TensorShape([2, None])) is x
    for bad, text in (([2, 4], "[2,4]"), ([2], "[2]"), ([None, None, 1], "[?,?,1]")):
        with pytest.raises(InvalidArgumentError, match=r"Shape of tensor input \[2,3\] is not "
                           r"compatible with expected shape " + text.replace("[", r"\[")
                           .replace("]", r"\]").replace("?", r"\?")):
            tf.ensure_shape(x, bad)

    @tf.function
    def f(a):
        return tf.ensure_shape(a, [None, 3]) * 2
    assert f(tf.ones((4, 3))).shape == (4, 3)
    with pytest.raises(ValueError, match="is not compatible with the expected shape"):
        f(tf.ones((4, 2)))  # found while tracing, as TensorFlow's shape inference does


def test_set_shape_takes_a_tensorshape_with_unknown_sizes():
    t = tf.zeros((2, 3))
    assert t.set_shape(tf.TensorShape([None, 3])) is None
    with pytest.raises(ValueError, match="is not compatible with supplied shape"):
        t.set_shape(tf.TensorShape([None, 4]))
