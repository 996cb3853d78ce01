"""Tensor, Variable, constant and convert_to_tensor, the dtype rules, and bad input.

Issue 2, item 2 ("Values") and its closing paragraph (clear errors, never a wrong number).
"""
import operator

import numpy as np
import pytest

import tapegrad as tf


# ==== Tensor ======================================================================================
def test_numpy_shape_dtype_ndim_len():
    t = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert isinstance(t.numpy(), np.ndarray)
    np.testing.assert_array_equal(t.numpy(), [[1, 2, 3], [4, 5, 6]])
    assert t.shape == (2, 3) and type(t.shape) is tf.TensorShape and isinstance(t.shape, tuple)
    assert t.dtype == tf.float32 and t.ndim == 2 and len(t) == 2
    s = tf.constant(5.0)
    assert s.shape == () and s.ndim == 0
    with pytest.raises(TypeError):
        len(s)


def test_tensors_are_immutable():
    t = tf.constant([1.0, 2.0])
    a = t.numpy()
    a[0] = 99.0
    assert t.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(TypeError):
        t[0] = 5.0
    src = np.array([1.0, 2.0])
    c = tf.constant(src)
    src[0] = 42.0
    assert c.numpy().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("key", [
    1, -1, slice(None, None, 2), slice(None, None, -1), (Ellipsis, 1), (None, 0),
    (slice(1, 3), None, Ellipsis), [2, 0, 2], np.array([1, 3]), (slice(None), [0, 0]),
    np.array([True, False, True, False]), (1, 2), (Ellipsis, None),
])
def test_indexing_and_slicing_match_numpy(key):
    a = np.arange(12.0).reshape(4, 3)
    t = tf.constant(a)
    got = t[key]
    np.testing.assert_array_equal(got.numpy(), a[key])
    assert got.shape == a[key].shape


def test_indexing_with_tensors():
    a = np.arange(12.0).reshape(4, 3)
    t = tf.constant(a)
    np.testing.assert_array_equal(t[tf.constant(2)].numpy(), a[2])
    np.testing.assert_array_equal(t[t > 5.0].numpy(), a[a > 5.0])
    np.testing.assert_array_equal(t[tf.constant([3, 1])].numpy(), a[[3, 1]])


def test_bad_indices_are_errors():
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(IndexError, match=r"\(2, 2\)"):
        t[5]
    with pytest.raises(IndexError):
        t[0, 0, 0]
    with pytest.raises((TypeError, IndexError)):
        t[1.0]
    with pytest.raises((TypeError, IndexError)):
        t["a"]


@pytest.mark.parametrize("key", [
    (slice(None), slice(1, 2)), (slice(None), 0), 1, -4, slice(None, None, -2), (3, -1),
    slice(10, 20), (slice(-1, None), slice(None, None, 3)), (),
])
def test_plain_keys_take_the_fast_path_with_the_slow_paths_index(key, monkeypatch):
    """A key of ints and int slices on a concrete tensor skips ``_norm_index``: the same
    values, the same ``Index`` (tape structures and compiled programs key on it), and the
    slow path's errors."""
    from tapegrad.ops import indexing_ops
    a = np.arange(12.0).reshape(4, 3)
    seen = []
    real = indexing_ops.bind
    monkeypatch.setattr(indexing_ops, "bind", lambda p, x, index: seen.append(index) or
                        real(p, x, index=index))
    fast = tf.constant(a)[key]
    monkeypatch.setattr(indexing_ops, "_plain_index", lambda key: None)
    slow = tf.constant(a)[key]
    assert seen[0] == seen[1] and repr(seen[0]) == repr(seen[1])
    assert fast.numpy().tobytes() == slow.numpy().tobytes() == a[key].tobytes()
    assert fast.shape == a[key].shape


@pytest.mark.parametrize("key", [5, (0, 0, 0), (slice(None), 3), -5])
def test_plain_keys_out_of_range_raise_as_the_slow_path(key, monkeypatch):
    from tapegrad.ops import indexing_ops
    t = tf.constant(np.arange(12.0).reshape(4, 3))
    with pytest.raises(IndexError, match=r"\(4, 3\)") as fast:
        t[key]
    monkeypatch.setattr(indexing_ops, "_plain_index", lambda key: None)
    with pytest.raises(IndexError, match=r"\(4, 3\)") as slow:
        t[key]
    assert str(fast.value) == str(slow.value)


def test_iteration_over_the_first_axis():
    t = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    rows = list(t)
    assert len(rows) == 3 and all(isinstance(r, tf.Tensor) for r in rows)
    assert [r.numpy().tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(TypeError):
        iter(tf.constant(1.0)).__next__()


def test_iterating_inside_a_tape_is_differentiable():
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as t:
        t.watch(x)
        y = sum(e * e for e in x)
    assert t.gradient(y, x).numpy().tolist() == [2.0, 4.0, 6.0]


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow]


@pytest.mark.parametrize("op", BINARY, ids=lambda o: o.__name__)
def test_binary_operators_and_reflected_forms(op):
    a = np.array([[1.5, 2.0], [3.0, 4.5]], np.float32)
    b = np.array([[2.0, 0.5], [1.5, 3.0]], np.float32)
    ta, tb = tf.constant(a), tf.constant(b)
    for got, want in [(op(ta, tb), op(a, b)), (op(ta, 2.0), op(a, np.float32(2.0))),
                      (op(2.0, ta), op(np.float32(2.0), a)),
                      (op(ta, b), op(a, b)), (op(a, tb), op(a, b)),
                      (op(ta, [[2.0, 0.5], [1.5, 3.0]]), op(a, b)),
                      (op([[2.0, 0.5], [1.5, 3.0]], ta), op(b, a))]:
        assert isinstance(got, tf.Tensor)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
        assert got.dtype == tf.float32


def test_matmul_operator_and_reflected_list():
    w = tf.Variable([[3.0], [4.0]])
    r = [[1.0, 2.0]] @ w
    assert isinstance(r, tf.Tensor) and r.numpy().tolist() == [[11.0]] and r.dtype == tf.float32
    assert (tf.constant([[1.0, 2.0]]) @ w).numpy().tolist() == [[11.0]]
    assert (w.numpy().T @ tf.constant([[1.0], [1.0]])).numpy().tolist() == [[7.0]]
    with tf.GradientTape() as t:
        y = [[1.0, 2.0]] @ w
    assert t.gradient(y, w).numpy().tolist() == [[1.0], [2.0]]


def test_unary_operators():
    t = tf.constant([-1.5, 2.0])
    assert (-t).numpy().tolist() == [1.5, -2.0]
    assert abs(t).numpy().tolist() == [1.5, 2.0]
    assert (+t).numpy().tolist() == [-1.5, 2.0]


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge,
                                operator.eq, operator.ne], ids=lambda o: o.__name__)
def test_comparisons_are_elementwise(op):
    a = np.array([1.0, 2.0, 3.0], np.float32)
    t = tf.constant(a)
    got = op(t, 2.0)
    assert got.dtype == tf.bool
    np.testing.assert_array_equal(got.numpy(), op(a, 2.0))
    np.testing.assert_array_equal(op(2.0, t).numpy(), op(np.float32(2.0), a))
    np.testing.assert_array_equal(op(t, tf.constant([3.0, 2.0, 1.0])).numpy(),
                                  op(a, np.array([3.0, 2.0, 1.0])))


def test_tensors_hash_by_identity_and_compare_to_none():
    t = tf.constant([1.0, 2.0])
    d = {t: "a"}
    assert d[t] == "a"
    assert (t == None) is False       # noqa: E711 (the operator itself is tested)
    assert (t != None) is True        # noqa: E711


def test_array_protocol():
    t = tf.constant([[1.0, 2.0]])
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.tolist() == [[1.0, 2.0]]
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert float(np.sum(t)) == 3.0
    np.testing.assert_array_equal(np.add(t, 1), [[2.0, 3.0]])
    np.testing.assert_array_equal(np.array(tf.constant(7)), 7)


def test_python_scalars_of_one_element_tensors():
    assert bool(tf.constant([True])) is True and bool(tf.constant(0.0)) is False
    assert float(tf.constant([[2.5]])) == 2.5
    assert int(tf.constant(3.9)) == 3 and int(tf.constant(-7)) == -7
    assert [10, 20, 30][tf.constant(1)] == 20           # __index__
    with pytest.raises(ValueError, match=r"\(2,\)"):
        bool(tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError):
        float(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError):
        [1, 2][tf.constant(1.0)]


def test_repr():
    assert repr(tf.constant(12.0)) == "tapegrad.Tensor(12.0, shape=(), dtype=float32)"
    assert repr(tf.constant(3)) == "tapegrad.Tensor(3, shape=(), dtype=int32)"
    assert repr(tf.constant([1.0, 2.0])) == "tapegrad.Tensor([1. 2.], shape=(2,), dtype=float32)"
    assert str(tf.constant(True)) == "tapegrad.Tensor(True, shape=(), dtype=bool)"
    r = repr(tf.constant([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float64))
    assert r.startswith("tapegrad.Tensor(") and r.endswith("shape=(2, 2), dtype=float64)")
    assert "[[1. 2.]" in r and "[3. 4.]]" in r


# ==== Variable =====================================================================================
def test_variable_assign_methods_and_read_value():
    v = tf.Variable([1.0, 2.0])
    assert v.assign([3.0, 4.0]) is v or v.assign([3.0, 4.0]) is not None
    assert v.numpy().tolist() == [3.0, 4.0]
    v.assign_add([1.0, 1.0])
    assert v.numpy().tolist() == [4.0, 5.0]
    v.assign_sub(tf.constant([0.5, 0.5]))
    assert v.numpy().tolist() == [3.5, 4.5]
    r = v.read_value()
    assert isinstance(r, tf.Tensor) and not isinstance(r, tf.Variable)
    v.assign([0.0, 0.0])
    assert r.numpy().tolist() == [3.5, 4.5]       # a read is a snapshot


def test_variable_constructor_arguments():
    v = tf.Variable(1, dtype=tf.float64, name="w", trainable=False)
    assert v.dtype == tf.float64 and not v.trainable and v.name == "w:0"
    assert tf.Variable(1.0).dtype == tf.float32 and tf.Variable(1.0).trainable
    assert tf.Variable(1).dtype == tf.int32
    assert tf.Variable(lambda: tf.ones((2,))).shape == (2,)
    assert "Variable" in repr(tf.Variable(1.0)) and "1.0" in repr(tf.Variable(1.0))


def test_variable_acts_as_a_tensor_in_every_op():
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    a = v.numpy()
    np.testing.assert_allclose(tf.exp(v).numpy(), np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(tf.matmul(v, v).numpy(), a @ a)
    np.testing.assert_allclose((v @ v).numpy(), a @ a)
    np.testing.assert_allclose(tf.reduce_sum(v, axis=0).numpy(), a.sum(0))
    np.testing.assert_allclose(tf.reshape(v, [4]).numpy(), a.reshape(4))
    np.testing.assert_allclose(v[1].numpy(), a[1])
    np.testing.assert_allclose(tf.concat([v, v], 0).numpy(), np.concatenate([a, a]))
    np.testing.assert_allclose(np.asarray(v), a)
    assert len(v) == 2 and [r.numpy().tolist() for r in v] == a.tolist()
    assert isinstance(v, tf.Tensor) and tf.is_tensor(v)
    assert (v > 2.0).numpy().tolist() == [[False, False], [True, True]]


def test_variable_assignment_errors():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"\(3,\).*\(2,\)"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        tf.Variable(1).assign(1.5)
    with pytest.raises(ValueError):
        tf.Variable(None)


# ==== constant and convert_to_tensor ================================================================
def test_constant_dtype_and_shape():
    assert tf.constant([1, 2], dtype=tf.float64).dtype == tf.float64
    assert tf.constant(1.0, shape=(2, 3)).numpy().tolist() == [[1.0] * 3] * 2
    assert tf.constant([1.0, 2.0, 3.0, 4.0], shape=(2, 2)).numpy().tolist() == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match=r"\(2, 2\)"):
        tf.constant([1.0, 2.0, 3.0], shape=(2, 2))
    with pytest.raises(TypeError):
        tf.constant([1.5], dtype=tf.int32)          # not integral: never a silent truncation


def test_convert_to_tensor_accepts_tuples_and_lists_of_scalar_tensors():
    s = tf.convert_to_tensor((tf.constant(2), tf.constant(3)))
    assert s.dtype == tf.int32 and s.numpy().tolist() == [2, 3]
    m = tf.convert_to_tensor([[tf.constant(1.0), 2.0], [3.0, tf.constant(4.0)]])
    assert m.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]] and m.dtype == tf.float32
    x = tf.zeros((3, 2))
    assert tf.reshape(tf.range(6), [tf.shape(x)[1], tf.constant(3)]).shape == (2, 3)
    assert tf.reshape(tf.range(6), tf.shape(x)).shape == (3, 2)
    t = tf.constant([1.0])
    assert tf.convert_to_tensor(t) is t


def test_convert_to_tensor_errors():
    with pytest.raises(ValueError, match="float64.*float32"):
        tf.convert_to_tensor(tf.constant(1.0), dtype=tf.float64)
    with pytest.raises(TypeError):
        tf.convert_to_tensor("abc", dtype=tf.float32)  # (a string tensor without one)
    with pytest.raises(ValueError, match="None"):
        tf.convert_to_tensor(None)
    with pytest.raises(ValueError):
        tf.convert_to_tensor([[1.0], [1.0, 2.0]])
    with pytest.raises(TypeError):
        tf.convert_to_tensor(object())


def test_dtypes_are_numpy_dtype_objects():
    for name in ("float16", "float32", "float64", "int32", "int64", "bool"):
        d = getattr(tf, name)
        assert isinstance(d, np.dtype) and d == np.dtype(name)
    assert tf.float32 == np.float32 and tf.as_dtype("float64") == tf.float64


# ==== dtype rules ======================================================================================
@pytest.mark.parametrize("value,dtype", [
    (1.0, "float32"), ([1.0, 2.0], "float32"), ([[1.0], [2]], "float32"), (1, "int32"),
    ([1, 2], "int32"), (True, "bool"), (2 ** 40, "int64"),
    (np.float64(1.0), "float64"), (np.array([1.0], np.float16), "float16"),
    (np.array([1, 2], np.int64), "int64"), (np.array([1.0]), "float64"),
])
def test_python_data_defaults_and_numpy_arrays_keep_their_dtype(value, dtype):
    assert tf.constant(value).dtype == np.dtype(dtype)
    assert tf.convert_to_tensor(value).dtype == np.dtype(dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64"])
def test_a_python_scalar_takes_the_tensor_dtype(dtype):
    t = tf.constant(np.array([1, 2], dtype))
    for r in (t + 1, 1 + t, t * 2, 2 * t, t - 1, t ** 2, tf.maximum(t, 1), tf.add(t, 3)):
        assert r.dtype == np.dtype(dtype)
    if np.dtype(dtype).kind == "f":
        assert (t / 2).dtype == np.dtype(dtype) and (t * 0.5).dtype == np.dtype(dtype)


def test_a_fractional_python_float_with_an_int_tensor_is_an_error():
    with pytest.raises(TypeError):
        tf.constant(1) + 1.5


def test_two_float_dtypes_raise_as_tensorflow_and_numpy_values_take_the_tensors():
    # TensorFlow 2.21 promotes no two tensors (float32 with float64, float16 with float32:
    # InvalidArgumentError); a NumPy value next to a tensor takes the tensor's dtype
    a, b = tf.constant(1.0), tf.constant(2.0, dtype=tf.float64)
    with pytest.raises(tf.errors.InvalidArgumentError):
        a + b
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.matmul(tf.ones((1, 1)), tf.ones((1, 1), tf.float64))
    assert (a + np.array([1.0])).dtype == tf.float32
    h = tf.constant(1.0, dtype=tf.float16)
    with pytest.raises(tf.errors.InvalidArgumentError):
        h + a
    assert (h + np.float32(1.0)).dtype == tf.float16


def test_gradients_keep_the_dtype_of_their_source():
    for dt in (tf.float16, tf.float32, tf.float64):
        x = tf.constant([1.0, 2.0], dtype=dt)
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.sin(x) * 3.0)
        assert t.gradient(y, x).dtype == dt


def test_gradient_through_a_cast_comes_back_in_the_source_dtype():
    x = tf.constant([1.0, 2.0], dtype=tf.float32)
    with tf.GradientTape() as t:
        t.watch(x)
        y = tf.cast(x, tf.float64) ** 2
    g = t.gradient(y, x)
    assert g.dtype == tf.float32 and g.numpy().tolist() == [2.0, 4.0]


# ==== bad input ==========================================================================================
SHAPE_MISMATCH = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("pow", lambda a, b: a ** b),
    ("maximum", tf.maximum), ("minimum", tf.minimum), ("equal", tf.equal),
    ("less", lambda a, b: a < b), ("floordiv", lambda a, b: a // b), ("mod", lambda a, b: a % b),
    ("atan2", tf.math.atan2), ("where", lambda a, b: tf.where(a > 0, a, b)),
]


@pytest.mark.parametrize("name,f", SHAPE_MISMATCH, ids=[n for n, _ in SHAPE_MISMATCH])
def test_shape_mismatch_names_the_op_and_both_shapes(name, f):
    a, b = tf.ones((2, 3)), tf.ones((4, 5))
    with pytest.raises(ValueError) as e:
        f(a, b)
    msg = str(e.value)
    assert name in msg and "(2, 3)" in msg and "(4, 5)" in msg, msg
    assert isinstance(e.value, tf.errors.InvalidArgumentError)


@pytest.mark.parametrize("name,f", [
    ("matmul", lambda a, b: tf.matmul(a, b)),
    ("concat", lambda a, b: tf.concat([a, b], 0)),
    ("stack", lambda a, b: tf.stack([a, b])),
    ("tensordot", lambda a, b: tf.tensordot(a, b, 1)),
    ("einsum", lambda a, b: tf.einsum("ij,jk->ik", a, b)),
])
def test_shape_mismatch_of_structural_ops_names_op_and_shapes(name, f):
    a, b = tf.ones((2, 3)), tf.ones((4, 5))
    with pytest.raises(ValueError) as e:
        f(a, b)
    msg = str(e.value).replace("[", "(").replace("]", ")")
    assert name in msg and "(2, 3)" in msg and "(4, 5)" in msg, msg


def test_shape_mismatch_inside_a_tape_is_the_same_error():
    a = tf.ones((2, 3))
    with tf.GradientTape() as t:
        t.watch(a)
        with pytest.raises(ValueError, match=r"add.*\(2, 3\).*\(4, 5\)"):
            a + tf.ones((4, 5))


def test_reshape_to_a_wrong_size_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\)"):
        tf.reshape(tf.ones((2, 3)), (4, 5))


@pytest.mark.parametrize("f", [  # (strings are string tensors: tests/test_strings.py)
    lambda: tf.add(object(), 1.0), lambda: tf.reduce_sum({"a": 1}),
    lambda: tf.constant(True) + 1.0,
])
def test_wrong_types_are_type_errors(f):
    with pytest.raises(TypeError):
        f()


def test_gradient_of_a_released_tape():
    x = tf.Variable(1.0)
    with tf.GradientTape() as t:
        y = x * x
    t.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape can only be used"):
        t.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape can only be used"):
        t.jacobian(y, x)


def test_watching_a_non_tensor():
    with tf.GradientTape() as t:
        with pytest.raises(ValueError, match="of type .*list|of type .*str"):
            t.watch(["not a tensor"])
        with pytest.raises(ValueError, match=r"of type .*NoneType"):
            t.watch(None)


def test_sources_that_are_not_tensors():
    x = tf.constant(1.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = x * x
    with pytest.raises((ValueError, TypeError), match="str"):
        t.gradient(y, "x")


def test_bad_axes_are_errors_not_wrong_numbers():
    x = tf.ones((2, 3))
    with pytest.raises(ValueError, match="2"):
        tf.reduce_sum(x, axis=2)
    with pytest.raises(ValueError):
        tf.transpose(x, [0, 0])
    with pytest.raises(ValueError):
        tf.squeeze(x, 0)
    with pytest.raises((ValueError, IndexError)):
        tf.gather(x, [3])
