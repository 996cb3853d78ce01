"""The everyday API of TensorFlow programs: formatting, tf.dtypes, tf.__version__, map_fn
and folds (values, numerical derivatives, tf.function), repeat, embedding_lookup, one_hot
in a trace, Variables of NumPy float64 arrays. Expected values are TensorFlow's."""
import numpy as np
import pytest

import tapegrad as tf
from tapegrad.testing import check_grads


def test_format_specs_on_tensors_as_in_tensorflow():
    loss, step = tf.constant(1.23456), tf.constant(3)
    assert f"step {step:d}: loss={loss:.4f}" == "step 3: loss=1.2346"
    assert f"{loss:>10.2f}|{step:5}" == "      1.23|    3"
    assert f"{loss}" == "1.2345600128173828"  # TF formats the Python float of a scalar
    assert f"{tf.Variable(2.5):.3f}" == "2.500"
    assert f"{tf.constant([1.0, 2.0])}" == "[1. 2.]"
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{tf.constant([1.0, 2.0]):.2f}"
    # the tutorial's progress line
    acc = tf.reduce_mean(tf.cast(tf.constant([1, 0, 1, 1]), tf.float32))
    assert "Epoch 1, Loss: 0.5000, Accuracy: 75.00" == \
        f"Epoch {1}, Loss: {tf.constant(0.5):.4f}, Accuracy: {acc * 100:.2f}"


def test_dtypes_namespace_and_version():
    assert tf.dtypes.float32 is tf.float32 and tf.dtypes.as_dtype("float64") == tf.float64
    assert tf.dtypes.as_dtype(np.float32) == tf.float32
    assert isinstance(tf.float32, tf.dtypes.DType)
    assert tf.dtypes.cast(tf.constant([1.7]), tf.dtypes.int32).dtype == tf.int32
    assert tf.__version__.startswith("2") and int(tf.__version__.split(".")[0]) >= 2
    assert int(tf.__version__.split(".")[1]) >= 4
    assert tf.version.VERSION == tf.__version__ and "tapegrad" in tf.__version__


def test_variable_of_float64_arrays_stays_float64():
    v = tf.Variable([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    assert v.dtype == tf.float64
    assert tf.constant([np.float64(1.0), 2.0]).dtype == tf.float64
    assert tf.constant([[np.float64(1.0)], [2.0]]).dtype == tf.float64
    assert tf.constant([np.array([1.0], np.float32), np.array([3.0])]).dtype == tf.float32
    assert tf.constant([1.0, 2.0]).dtype == tf.float32  # Python floats: float32, as before
    assert tf.constant([np.int64(1), 2]).dtype == tf.int32  # TF's rule for ints


def test_one_hot_of_a_traced_tensor():
    @tf.function
    def loss(labels, logits):
        y = tf.one_hot(labels, 3)
        return -tf.reduce_sum(y * tf.nn.log_softmax(logits))

    logits = tf.constant([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]])
    want = -(np.log(np.exp(2.0) / np.exp([1.0, 2.0, 0.5]).sum())
             + np.log(np.exp(3.0) / np.exp([0.1, 0.2, 3.0]).sum()))
    assert abs(float(loss(tf.constant([1, 2]), logits)) - want) < 1e-5
    assert tf.one_hot([0, 3, -1], 3).numpy().tolist() == [[1, 0, 0], [0, 0, 0], [0, 0, 0]]
    assert tf.one_hot([1], 3, on_value=5, off_value=-1).dtype == tf.int32
    assert tf.one_hot([1, 0], 2, axis=0).numpy().tolist() == [[0, 1], [1, 0]]
    with pytest.raises(TypeError, match="allowed values"):
        tf.one_hot([1.0], 3)


def test_repeat_and_embedding_lookup():
    assert tf.repeat([1, 2, 3], 2).numpy().tolist() == [1, 1, 2, 2, 3, 3]
    assert tf.repeat([[1, 2], [3, 4]], [1, 2], axis=0).numpy().tolist() == \
        [[1, 2], [3, 4], [3, 4]]
    assert tf.repeat([[1, 2], [3, 4]], 2, axis=1).numpy().tolist() == [[1, 1, 2, 2], [3, 3, 4, 4]]
    assert tf.repeat([[1, 2], [3, 4]], 2).numpy().tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    with pytest.raises(ValueError, match="Dimensions 3 and 2 are not compatible"):
        tf.repeat([1, 2, 3], [1, 2], axis=0)
    check_grads(lambda x: tf.repeat(x, [2, 0, 1], axis=1), [np.random.rand(2, 3)])
    table = tf.constant([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    assert tf.nn.embedding_lookup(table, [[2, 0]]).numpy().tolist() == [[[4.0, 5.0], [0.0, 1.0]]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[0\] = 3 is not in \[0, 3\)"):
        tf.nn.embedding_lookup(table, [3])
    clipped = tf.nn.embedding_lookup(tf.constant([[3.0, 4.0], [0.3, 0.4]]), [0, 1], max_norm=1.0)
    np.testing.assert_allclose(clipped.numpy(), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)
    check_grads(lambda p: tf.nn.embedding_lookup(p, [[1, 1], [0, 2]]), [np.random.rand(3, 2)])
    # an embedding trained with a tape: only the looked-up rows move
    emb = tf.Variable(tf.ones([4, 2]))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.embedding_lookup(emb, [1, 1, 3]))
    g = tf.convert_to_tensor(tape.gradient(loss, emb))
    assert g.numpy().tolist() == [[0, 0], [2, 2], [0, 0], [1, 1]]


def test_map_fn_values_structures_and_errors():
    x = tf.constant([1.0, 2.0, 3.0])
    assert tf.map_fn(lambda v: v * v, x).numpy().tolist() == [1.0, 4.0, 9.0]
    pairs = (tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0]))
    assert tf.map_fn(lambda t: t[0] + t[1], pairs, fn_output_signature=tf.float32
                     ).numpy().tolist() == [4.0, 6.0]
    a, b = tf.map_fn(lambda t: (t, t * 2), tf.constant([1, 2]),
                     fn_output_signature=(tf.int32, tf.int32))
    assert a.numpy().tolist() == [1, 2] and b.numpy().tolist() == [2, 4]
    d = tf.map_fn(lambda e: {"s": e["a"] * e["b"]}, {"a": x, "b": x},
                  fn_output_signature={"s": tf.TensorSpec([], tf.float32)})
    assert d["s"].numpy().tolist() == [1.0, 4.0, 9.0]
    rows = tf.map_fn(lambda r: tf.reduce_sum(r), tf.ones([3, 4]), fn_output_signature=tf.float32)
    assert rows.numpy().tolist() == [4.0, 4.0, 4.0]
    assert tf.map_fn(lambda v: v, tf.zeros([0, 2])).shape == (0, 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="TensorArray dtype is int32"):
        tf.map_fn(lambda v: tf.cast(v, tf.float32), tf.constant([1, 2]))
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.map_fn(lambda t: t[0] + t[1], pairs)
    with pytest.raises(ValueError, match="1\\+ dimensional"):
        tf.map_fn(lambda v: v, tf.constant(1.0))
    with pytest.raises(ValueError, match="Dimensions 2 and 3 are not compatible"):
        tf.map_fn(lambda t: t, (tf.zeros([2]), tf.zeros([3])))


def test_folds_and_scan_values():
    e = tf.constant([1, 2, 3])
    assert int(tf.foldl(lambda a, x: a + x, e)) == 6
    assert int(tf.foldl(lambda a, x: a * 10 + x, e)) == 123
    assert int(tf.foldr(lambda a, x: a * 10 + x, e)) == 321
    assert int(tf.foldl(lambda a, x: a - x, e, initializer=10)) == 4
    assert tf.scan(lambda a, x: a + x, e).numpy().tolist() == [1, 3, 6]
    assert tf.scan(lambda a, x: a + x, e, initializer=10).numpy().tolist() == [11, 13, 16]
    assert tf.scan(lambda a, x: a * 10 + x, e, reverse=True).numpy().tolist() == [321, 32, 3]
    s, p = tf.scan(lambda a, x: (a[0] + x, a[1] * x), tf.constant([1.0, 2.0, 3.0]),
                   initializer=(tf.constant(0.0), tf.constant(1.0)))
    assert s.numpy().tolist() == [1.0, 3.0, 6.0] and p.numpy().tolist() == [1.0, 2.0, 6.0]
    with pytest.raises(tf.errors.OutOfRangeError):
        tf.foldl(lambda a, x: a, tf.zeros([0]))
    with pytest.raises(ValueError, match="1\\+ dimensional"):
        tf.scan(lambda a, x: a, tf.constant(1.0))


def test_map_fn_folds_and_scan_differentiate():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(3, 2))
    check_grads(lambda x: tf.map_fn(lambda r: tf.sin(r) * tf.reduce_sum(r * r), x), [m])
    check_grads(lambda x, w: tf.map_fn(lambda r: tf.tensordot(r, w, 1), x,
                                       fn_output_signature=tf.float64), [m, rng.normal(size=2)])
    check_grads(lambda x: tf.foldl(lambda a, r: a * tf.cos(r), x), [m])
    check_grads(lambda x, c: tf.foldr(lambda a, r: a * r + tf.exp(a), x, initializer=c),
                [rng.normal(size=3) * 0.3, rng.normal(size=()) * 0.3])
    check_grads(lambda x: tf.scan(lambda a, r: a * 0.5 + tf.tanh(r), x), [m])
    check_grads(lambda x: tf.scan(lambda a, r: (a[0] + r, a[1] * r), x,
                                  initializer=(tf.zeros([2], tf.float64),
                                               tf.ones([2], tf.float64)), reverse=True), [m])


def test_map_fn_and_scan_under_tf_function_match_eager():
    def f(x, w):
        ys = tf.map_fn(lambda r: tf.reduce_sum(tf.tanh(r * w)), x, fn_output_signature=tf.float32)
        return tf.reduce_sum(tf.scan(lambda a, y: a * 0.9 + y, ys)) + tf.foldl(
            lambda a, y: a + y * y, ys)

    x = tf.constant(np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32))
    w = tf.Variable([0.5, -1.0, 2.0])
    compiled = tf.function(f)

    def grad(fn):
        with tf.GradientTape() as tape:
            out = fn(x, w)
        return out, tape.gradient(out, w)

    (v1, g1), (v2, g2) = grad(f), grad(compiled)
    np.testing.assert_allclose(v1.numpy(), v2.numpy(), rtol=1e-6)
    np.testing.assert_allclose(g1.numpy(), g2.numpy(), rtol=1e-5)
