"""TensorFlow's dtype rules: where TensorFlow 2.21 raises, tapegrad raises the same error
type; where it computes, tapegrad gives its dtype and values. Never a number TensorFlow
would not give (ops/_kinds.py, ops/_convert.py).

Two tables: CASES, the issue's list and its neighbours (Python numbers, NumPy scalars and
lists against tensors, operators, tf.nn's activations), each checked against TensorFlow 2.21
by hand; SWEEP, the
differential sweep of every public tf.math op tapegrad has over bool, int8, uint8, int32,
int64, float16, float32, float64 and complex64 (eager, the op applied to tensors of one
dtype), which lists each (op, dtype) TensorFlow rejects and the error it raises. The sweep
found every row of it accepted by tapegrad before these rules, and these wrong numbers:
``~``, ``&``, ``|``, ``^`` of integers were logical (TensorFlow: bitwise), and
``tf.math.l2_normalize`` of complex numbers divided by the root of ``sum(x * x)``, not by
the norm. Session 11 added the float functions of integers (``tf.exp`` of int32), which
tapegrad had computed in a float dtype.
"""
import numpy as np
import pytest

import tapegrad as tf

E = tf.errors.InvalidArgumentError
N = tf.errors.NotFoundError
i32 = lambda *v: tf.constant(list(v), tf.int32)  # noqa: E731
f32 = lambda *v: tf.constant(list(v), tf.float32)  # noqa: E731
u8 = lambda *v: tf.constant(list(v), tf.uint8)  # noqa: E731
b = lambda *v: tf.constant(list(v), tf.bool)  # noqa: E731

CASES = [  # (label, call, TensorFlow's error type, or its (dtype, values))
    ("abs of uint8", lambda: tf.abs(u8(1, 250)), E),
    ("abs of bool", lambda: tf.abs(b(True)), E),
    ("abs of int8", lambda: tf.abs(tf.constant([-3, 2], tf.int8)), ("int8", [3, 2])),
    ("abs of a Python int", lambda: tf.abs(-1), ("int32", 1)),
    ("sign of uint8", lambda: tf.sign(u8(1, 0)), E),
    ("sign of bool", lambda: tf.sign(b(True)), E),
    ("sign of int32", lambda: tf.sign(i32(-3, 0, 2)), ("int32", [-1, 0, 1])),
    ("negative of uint8", lambda: -u8(1), E),
    ("negative of bool", lambda: -b(True), E),
    ("sum of bools", lambda: tf.reduce_sum([True, False, True]), E),
    ("sum of bools cast", lambda: tf.reduce_sum(tf.cast([True, False, True], tf.int32)),
     ("int32", 2)),
    ("prod of bools", lambda: tf.reduce_prod(b(True)), E),
    ("max of bools", lambda: tf.reduce_max(b(True)), E),
    ("mean of bools", lambda: tf.reduce_mean(b(True)), E),
    ("cumsum of bools", lambda: tf.math.cumsum(b(True, True)), E),
    ("any of ints", lambda: tf.reduce_any(i32(1)), E),
    ("all of floats", lambda: tf.reduce_all(f32(1)), E),
    ("argmax of bools", lambda: tf.argmax(b(False, True)), ("int64", 1)),
    ("count_nonzero of bools", lambda: tf.math.count_nonzero(b(True, False, True)),
     ("int64", 2)),
    ("equal of int and float tensors", lambda: tf.equal(i32(1), f32(1)), E),
    ("less of int and float tensors", lambda: tf.less(i32(1), f32(1)), E),
    ("equal of bool and int tensors", lambda: tf.equal(b(True), i32(1)), E),
    ("equal of an int tensor and Python 1.0", lambda: tf.equal(i32(1), 1.0), TypeError),
    ("equal of an int tensor and Python 1.5", lambda: tf.equal(i32(1), 1.5), TypeError),
    ("equal of a float tensor and Python 1", lambda: tf.equal(f32(1), 1), ("bool", [True])),
    ("int tensor == Python 1.0", lambda: i32(1) == 1.0, TypeError),
    ("maximum of an int tensor and Python 0.0", lambda: tf.maximum(i32(1), 0.0), TypeError),
    ("add of int and float tensors", lambda: tf.add(i32(1), f32(1)), E),
    ("add of uint8 and float tensors", lambda: tf.add(u8(1), f32(1)), E),
    ("add of float32 and complex64 tensors",
     lambda: tf.add(f32(1), tf.constant([1j], tf.complex64)), E),
    ("add of Python 1 and 2.5", lambda: tf.add(1, 2.5), E),
    ("add of an int list and a float list", lambda: tf.add([1, 2], [1.5, 2.0]), E),
    ("int tensor + a float list", lambda: i32(1, 2) + [1.0, 2.0], E),
    # TensorFlow: InvalidArgumentError for + and tf.add, TypeError for the other operators;
    # tapegrad raises TypeError for each (the conversion of the number fails first)
    ("int tensor + Python 1.0", lambda: i32(1) + 1.0, (TypeError, E)),
    ("int tensor * Python 2.0", lambda: i32(1) * 2.0, TypeError),
    ("Python 2.0 * int tensor", lambda: 2.0 * i32(1), TypeError),
    ("int tensor // Python 2.0", lambda: i32(1) // 2.0, TypeError),
    ("int tensor % Python 2.0", lambda: i32(1) % 2.0, TypeError),
    ("int tensor / Python 2.0", lambda: i32(1) / 2.0, TypeError),
    ("constant(1.0, int32)", lambda: tf.constant(1.0, tf.int32), TypeError),
    ("constant([1.0, 2.0], int32)", lambda: tf.constant([1.0, 2.0], tf.int32), TypeError),
    ("constant(True, int32)", lambda: tf.constant(True, tf.int32), ("int32", 1)),
    ("float tensor + Python 1", lambda: f32(1.5) + 1, ("float32", [2.5])),
    ("int tensor + Python True", lambda: i32(1) + True, ("int32", [2])),
    ("int tensor - np.int64(1)", lambda: i32(1, 2) - np.int64(1), ("int32", [0, 1])),
    ("int tensor + np.float32(1)", lambda: i32(1, 2) + np.float32(1), ("int32", [2, 3])),
    ("float tensor + np.int64(2)", lambda: f32(1.5) + np.int64(2), ("float32", [3.5])),
    ("logical_and of ints", lambda: tf.logical_and(i32(1), i32(0)), E),
    ("logical_or of floats", lambda: tf.logical_or(f32(1), f32(0)), E),
    ("logical_not of ints", lambda: tf.logical_not(i32(1)), E),
    ("logical_xor of ints", lambda: tf.math.logical_xor(i32(1), i32(0)), E),
    ("logical_or of a bool tensor and Python 1", lambda: tf.logical_or(b(True), 1), TypeError),
    ("is_nan of int32", lambda: tf.math.is_nan(i32(1)), E),
    ("is_inf of int32", lambda: tf.math.is_inf(i32(1)), E),
    ("is_finite of int32", lambda: tf.math.is_finite(i32(1)), E),
    ("is_nan of a Python int", lambda: tf.math.is_nan(1), E),
    ("is_nan of floats", lambda: tf.math.is_nan(f32(np.nan, 1)), ("bool", [True, False])),
    ("matmul of vectors", lambda: tf.matmul(f32(1, 2), f32(1, 2)), E),
    ("matmul of a vector and a matrix", lambda: tf.matmul(f32(1, 2), [[1.0], [2.0]]), E),
    ("matmul of a matrix and a vector", lambda: tf.matmul([[1.0, 2.0]], f32(1, 2)), E),
    ("vector @ vector", lambda: i32(1, 2) @ i32(1, 2), E),
    ("matmul of int and float matrices", lambda: tf.matmul(i32(1)[None], f32(1)[None]), E),
    ("floor of int32", lambda: tf.floor(i32(1)), E),
    ("floor of a Python int", lambda: tf.floor(1), E),
    ("floor of a float list", lambda: tf.floor([1.5]), ("float32", [1.0])),
    ("ceil of int8", lambda: tf.math.ceil(tf.constant([1], tf.int8)), E),
    ("round of int32", lambda: tf.round(i32(3)), ("int32", [3])),
    ("round of bool", lambda: tf.round(b(True)), E),
    ("round of complex64", lambda: tf.round(tf.constant([1j], tf.complex64)), N),
    ("reciprocal of int32", lambda: tf.math.reciprocal(i32(2)), N),
    ("reciprocal of uint8", lambda: tf.math.reciprocal(u8(2)), E),
    ("pow of uint8", lambda: tf.pow(u8(2), u8(2)), E),
    ("uint8 ** Python 2", lambda: u8(2) ** 2, E),
    ("int32 ** Python 2", lambda: i32(3) ** 2, ("int32", [9])),
    # TensorFlow wraps a Python int outside the dtype (uint8 + 300 adds 44): an error here
    ("uint8 + Python 300", lambda: u8(1) + 300, OverflowError),
    ("uint8 == Python -1", lambda: u8(255) == -1, OverflowError),
    ("squared_difference of int8", lambda: tf.math.squared_difference(
        tf.constant([1], tf.int8), tf.constant([3], tf.int8)), E),
    ("squared_difference of int32", lambda: tf.math.squared_difference(i32(1), i32(3)),
     ("int32", [4])),
    ("bool + bool", lambda: b(True) + b(True), E),
    ("bool * bool (logical and)", lambda: b(True, True) * b(True, False),
     ("bool", [True, False])),
    ("bool / bool", lambda: b(True) / b(True), TypeError),
    ("bool ** bool", lambda: b(True) ** b(True), E),
    ("bool < bool", lambda: b(True) < b(False), E),
    ("bool & bool", lambda: b(True, True) & b(True, False), ("bool", [True, False])),
    ("~bool", lambda: ~b(True, False), ("bool", [False, True])),
    ("~int32 (bitwise)", lambda: ~i32(1, 2, -1), ("int32", [-2, -3, 0])),
    ("int32 & int32", lambda: i32(1, 2) & i32(3, 1), ("int32", [1, 0])),
    ("int32 | int32", lambda: i32(1, 2) | i32(3, 1), ("int32", [3, 3])),
    ("int32 ^ int32", lambda: i32(1, 2) ^ i32(3, 1), ("int32", [2, 3])),
    ("~uint8", lambda: ~u8(1), ("uint8", [254])),
    ("~float", lambda: ~f32(1), E),
    ("float & float", lambda: f32(1) & f32(1), E),
    ("bitwise_and of floats", lambda: tf.bitwise.bitwise_and(f32(1), f32(1)), E),
    ("maximum of bools", lambda: tf.maximum(b(True), b(False)), E),
    ("maximum of complex", lambda: tf.maximum(tf.constant([1j]), tf.constant([1j])), E),
    ("argmax of complex", lambda: tf.argmax(tf.constant([1j, 2])), E),
    ("erf of complex", lambda: tf.math.erf(tf.constant([1j], tf.complex64)), E),
    ("floordiv of complex", lambda: tf.math.floordiv(tf.constant([1j]), tf.constant([1j])), N),
    ("real of bool", lambda: tf.math.real(b(True)), TypeError),
    ("exp of bool", lambda: tf.exp(b(True)), E),
    ("concat of int and float tensors", lambda: tf.concat([i32(1), f32(1)], 0), E),
    ("concat of bool and int tensors", lambda: tf.concat([b(True), i32(1)], 0), E),
    # (TensorFlow 2.21: "Cannot convert [3.0] to EagerTensor of dtype int32", a TypeError)
    ("concat of an int tensor and a float list", lambda: tf.concat([i32(1), [3.0]], 0),
     TypeError),
    ("concat of a float list and an int tensor", lambda: tf.concat([[1.5], i32(1)], 0),
     TypeError),
    # two tensors of one kind and different dtypes: TensorFlow promotes none (session 12)
    ("add of float16 and float32 tensors",
     lambda: tf.add(tf.constant([1.0], tf.float16), f32(2)), E),
    ("float16 tensor + float32 tensor", lambda: tf.constant([1.0], tf.float16) + f32(2), E),
    ("float32 tensor * float64 tensor",
     lambda: f32(2) * tf.constant([1.0], tf.float64), E),
    ("int32 tensor + int64 tensor", lambda: i32(1) + tf.constant([1], tf.int64), E),
    ("float16 tensor < float32 tensor", lambda: tf.constant([1.0], tf.float16) < f32(2), E),
    ("float16 tensor / float32 tensor", lambda: tf.constant([1.0], tf.float16) / f32(2),
     TypeError),
    ("int32 tensor / float32 tensor", lambda: i32(1) / f32(2), TypeError),
    ("matmul of float16 and float32", lambda: tf.matmul(tf.ones([2, 2], tf.float16),
                                                        tf.ones([2, 2])), E),
    ("concat of float16 and float32", lambda: tf.concat([tf.constant([1.0], tf.float16),
                                                         f32(2)], 0), E),
    ("stack of float16 and float32", lambda: tf.stack([tf.constant([1.0], tf.float16),
                                                       f32(2)]), E),
    ("where of float16 and float32", lambda: tf.where([True], tf.constant([1.0], tf.float16),
                                                      f32(2)), E),
    ("einsum of float16 and float32", lambda: tf.einsum("i,i->", tf.constant([1.0], tf.float16),
                                                        f32(2)), E),
    ("cast to a tensor", lambda: tf.cast(f32(2), f32(2)), TypeError),
    # values that are not tensors take the tensor's dtype
    ("float16 tensor + Python 1.5", lambda: tf.constant([1.0], tf.float16) + 1.5,
     ("float16", [2.5])),
    ("float16 tensor + float32 NumPy array",
     lambda: tf.constant([1.0], tf.float16) + np.array([1.5], np.float32), ("float16", [2.5])),
    ("float16 tensor + float64 NumPy array",
     lambda: tf.constant([1.0], tf.float16) + np.array([1.5]), ("float16", [2.5])),
    ("float64 NumPy array + float32 tensor", lambda: np.array([1.5]) + f32(2),
     ("float32", [3.5])),
    ("float32 tensor + NumPy float64 scalar", lambda: f32(2) + np.float64(2.0),
     ("float32", [4.0])),
    ("concat of a float32 tensor and a float64 array",
     lambda: tf.concat([f32(2), np.array([1.0])], 0), ("float32", [2.0, 1.0])),
    ("concat of a float64 array and a float32 tensor",
     lambda: tf.concat([np.array([1.0]), f32(2)], 0), ("float32", [1.0, 2.0])),
    ("stack of a float16 tensor and a list", lambda: tf.stack([tf.constant([1.0], tf.float16),
                                                              [2.0]]), ("float16", [[1.0], [2.0]])),
    ("concat of an int tensor and an int list", lambda: tf.concat([i32(1), [3]], 0),
     ("int32", [1, 3])),
    ("stack of int and float tensors", lambda: tf.stack([i32(1), f32(1)]), E),
    ("math.rint", lambda: tf.math.rint(f32(0.5, 1.5, -2.5, -0.0, np.nan, np.inf)),
     ("float32", [0.0, 2.0, -2.0, -0.0, np.nan, np.inf])),
    ("math.rint of int32", lambda: tf.math.rint(i32(1)), E),
    ("math.reciprocal_no_nan", lambda: tf.math.reciprocal_no_nan(
        f32(0.0, -0.0, 2.0, np.inf, np.nan)), ("float32", [0.0, 0.0, 0.5, 0.0, np.nan])),
    ("math.reciprocal_no_nan of int32", lambda: tf.math.reciprocal_no_nan(i32(2)), E),
    ("math.zero_fraction", lambda: tf.math.zero_fraction(f32(0.0, 1.0, -0.0, np.nan)),
     ("float32", 0.5)),
    ("math.zero_fraction of bools", lambda: tf.math.zero_fraction(b(True, False)),
     ("float32", 0.5)),
    ("math.zero_fraction of nothing", lambda: tf.math.zero_fraction(tf.zeros([0])),
     ("float32", np.nan)),
    ("math.scalar_mul", lambda: tf.math.scalar_mul(2, f32(1, 2)), ("float32", [2.0, 4.0])),
    ("math.scalar_mul of a vector", lambda: tf.math.scalar_mul([2.0, 1.0], f32(1, 2)),
     ValueError),
    ("nn.elu of int32", lambda: tf.nn.elu(i32(1)), E),
    ("nn.selu of bool", lambda: tf.nn.selu(b(True)), E),
    ("nn.gelu of int32", lambda: tf.nn.gelu(i32(1)), ValueError),
    ("nn.leaky_relu of bool", lambda: tf.nn.leaky_relu(b(True)), E),
    ("nn.leaky_relu of int32 (cast to float32)", lambda: tf.nn.leaky_relu(i32(-5, 2)),
     ("float32", [-1.0, 2.0])),
    ("nn.l2_loss of int32", lambda: tf.nn.l2_loss(i32(1)), E),
    ("nn.l2_loss of complex", lambda: tf.nn.l2_loss(tf.constant([1j], tf.complex64)), E),
    ("nn.sigmoid_cross_entropy of int32",
     lambda: tf.nn.sigmoid_cross_entropy_with_logits(i32(1), i32(1)), E),
    ("max_pool3d of int32", lambda: tf.nn.max_pool3d(tf.ones((1, 2, 2, 2, 1), tf.int32), 2, 1,
                                                     "VALID"), E),
]


def _check(call, want):
    if isinstance(want, tuple) and isinstance(want[0], str):
        got = call()
        dtype, values = want
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.numpy(), np.asarray(values, dtype))
    else:
        with pytest.raises(want):
            call()


@pytest.mark.parametrize("label,call,want", CASES, ids=[c[0] for c in CASES])
def test_tensorflows_dtype_rules(label, call, want):
    _check(call, want)


@pytest.mark.parametrize("label,call,want", CASES, ids=[c[0] for c in CASES])
def test_the_same_rules_inside_tf_function(label, call, want):
    # eager == compiled: the rules are the op's, so tracing raises (or computes) alike
    _check(lambda: tf.function(call)(), want)


def test_reciprocal_no_nan_gradient():
    # TensorFlow's DivNoNan gradient: -1/x**2, and 0 at x = 0 (not NaN)
    x = tf.Variable([0.0, 2.0, -4.0])
    with tf.GradientTape() as g:
        y = tf.reduce_sum(tf.math.reciprocal_no_nan(x))
    np.testing.assert_array_equal(g.gradient(y, x).numpy(), [0.0, -0.25, -0.0625])
    from tapegrad.testing import check_grads
    check_grads(tf.math.reciprocal_no_nan, [np.array([0.5, -2.0, 3.0])], order=2)


def test_l2_normalize_of_complex_divides_by_the_norm():
    x = np.array([[3 + 4j, 1 - 2j], [0j, -1.5 + 0.25j]], np.complex64)
    got = tf.math.l2_normalize(x, axis=1).numpy()
    norm = np.sqrt(np.sum(np.abs(x.astype(np.complex128)) ** 2, axis=1, keepdims=True))
    np.testing.assert_allclose(got, x / np.maximum(norm, 1e-6), rtol=1e-6)
    assert got.dtype == np.complex64


# ---- the differential sweep against TensorFlow 2.21 -------------------------------------
DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64",
          "complex64"]


def sample(dtype, k):
    """The sweep's operands: small values of every dtype (k = 0, 1: two different ones)."""
    base = [[-2, 0, 1, 3], [1, -1, 2, 2]][k]
    if dtype == "bool":
        return np.array([[True, False, True, True], [True, True, False, True]][k])
    if dtype.startswith("uint"):
        base = [abs(v) for v in base]
    if dtype.startswith("float"):
        base = [v * 0.75 for v in base]
    if dtype.startswith("complex"):
        return np.array([complex(v * 0.5, 0.25 * (i - 1)) for i, v in enumerate(base)], dtype)
    return np.array(base, dtype)


# (tf.math op, its number of tensor operands): TensorFlow 2.21's error for each dtype it
# rejects. Ops tapegrad lacks (tf.math.zeta, igamma, ...) are not listed.
SWEEP = {
    ("abs", 1): {"InvalidArgumentError": "bool uint8"},
    ("acos", 1): {"InvalidArgumentError": "bool"},
    ("acosh", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64"},
    ("add", 2): {"InvalidArgumentError": "bool"},
    ("argmax", 1): {"InvalidArgumentError": "complex64"},
    ("argmin", 1): {"InvalidArgumentError": "complex64"},
    ("asin", 1): {"InvalidArgumentError": "bool"},
    ("asinh", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64"},
    ("atan", 1): {"InvalidArgumentError": "bool"},
    ("atan2", 2): {"InvalidArgumentError": "bool complex64"},
    ("atanh", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64"},
    ("ceil", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64 complex64"},
    ("conj", 1): {"TypeError": "bool"},
    ("cos", 1): {"InvalidArgumentError": "bool"},
    ("cosh", 1): {"InvalidArgumentError": "bool"},
    ("cumprod", 1): {"InvalidArgumentError": "bool"},
    ("cumsum", 1): {"InvalidArgumentError": "bool"},
    ("digamma", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64 complex64"},
    ("divide", 2): {"TypeError": "bool"},
    ("divide_no_nan", 2): {"TypeError": "bool"},
    ("erf", 1): {"InvalidArgumentError": "bool complex64"},
    ("erfc", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64 complex64"},
    ("exp", 1): {"InvalidArgumentError": "bool"},
    ("expm1", 1): {"InvalidArgumentError": "bool"},
    ("floor", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64 complex64"},
    ("floordiv", 2): {"InvalidArgumentError": "bool", "NotFoundError": "complex64"},
    ("floormod", 2): {"InvalidArgumentError": "bool complex64"},
    ("greater", 2): {"InvalidArgumentError": "bool complex64"},
    ("greater_equal", 2): {"InvalidArgumentError": "bool complex64"},
    ("is_finite", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64 complex64"},
    ("is_inf", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64 complex64"},
    ("is_nan", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64 complex64"},
    ("l2_normalize", 1): {"InvalidArgumentError": "bool", "TypeError": "int8 uint8 int32 int64"},
    ("less", 2): {"InvalidArgumentError": "bool complex64"},
    ("less_equal", 2): {"InvalidArgumentError": "bool complex64"},
    ("lgamma", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64 complex64"},
    ("log", 1): {"InvalidArgumentError": "bool"},
    ("log1p", 1): {"InvalidArgumentError": "bool"},
    ("log_sigmoid", 1): {"InvalidArgumentError": "bool uint8 complex64"},
    ("logical_and", 2): {"InvalidArgumentError":
                         "int8 uint8 int32 int64 float16 float32 float64 complex64"},
    ("logical_not", 1): {"InvalidArgumentError":
                         "int8 uint8 int32 int64 float16 float32 float64 complex64"},
    ("logical_or", 2): {"InvalidArgumentError":
                        "int8 uint8 int32 int64 float16 float32 float64 complex64"},
    ("logical_xor", 2): {"InvalidArgumentError":
                         "int8 uint8 int32 int64 float16 float32 float64 complex64"},
    ("maximum", 2): {"InvalidArgumentError": "bool complex64"},
    ("minimum", 2): {"InvalidArgumentError": "bool complex64"},
    ("mod", 2): {"InvalidArgumentError": "bool complex64"},
    ("multiply", 2): {"InvalidArgumentError": "bool"},
    ("multiply_no_nan", 2): {"InvalidArgumentError": "bool int8 uint8 int32 int64"},
    ("negative", 1): {"InvalidArgumentError": "bool uint8"},
    ("polygamma", 2): {"InvalidArgumentError": "bool int8 uint8 int32 int64 float16 complex64"},
    ("pow", 2): {"InvalidArgumentError": "bool int8 uint8 int32 int64"},
    ("real", 1): {"TypeError": "bool"},
    ("reciprocal", 1): {"InvalidArgumentError": "bool uint8", "NotFoundError": "int8 int32 int64"},
    ("reduce_all", 1): {"InvalidArgumentError":
                        "int8 uint8 int32 int64 float16 float32 float64 complex64"},
    ("reduce_any", 1): {"InvalidArgumentError":
                        "int8 uint8 int32 int64 float16 float32 float64 complex64"},
    ("reduce_logsumexp", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64 complex64"},
    ("reduce_max", 1): {"InvalidArgumentError": "bool complex64"},
    ("reduce_mean", 1): {"InvalidArgumentError": "bool"},
    ("reduce_min", 1): {"InvalidArgumentError": "bool complex64"},
    ("reduce_prod", 1): {"InvalidArgumentError": "bool"},
    ("reduce_std", 1): {"InvalidArgumentError": "bool", "TypeError": "int8 uint8 int32 int64"},
    ("reduce_sum", 1): {"InvalidArgumentError": "bool"},
    ("reduce_variance", 1): {"InvalidArgumentError": "bool",
                             "TypeError": "int8 uint8 int32 int64"},
    ("round", 1): {"InvalidArgumentError": "bool", "NotFoundError": "complex64"},
    ("rsqrt", 1): {"InvalidArgumentError": "bool"},
    ("sigmoid", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64"},
    ("sign", 1): {"InvalidArgumentError": "bool uint8"},
    ("sin", 1): {"InvalidArgumentError": "bool"},
    ("sinh", 1): {"InvalidArgumentError": "bool"},
    ("softplus", 1): {"InvalidArgumentError": "bool complex64"},
    ("softsign", 1): {"InvalidArgumentError": "bool int8 uint8 int32 int64 complex64"},
    ("sqrt", 1): {"InvalidArgumentError": "bool"},
    ("square", 1): {"InvalidArgumentError": "bool"},
    ("squared_difference", 2): {"InvalidArgumentError": "bool int8 uint8"},
    ("subtract", 2): {"InvalidArgumentError": "bool"},
    ("tan", 1): {"InvalidArgumentError": "bool"},
    ("tanh", 1): {"InvalidArgumentError": "bool"},
    ("truediv", 2): {"TypeError": "bool"},
    ("xdivy", 2): {"InvalidArgumentError": "bool int8 uint8 int32 int64"},
    ("xlog1py", 2): {"InvalidArgumentError": "bool int8 uint8 int32 int64"},
    ("xlogy", 2): {"InvalidArgumentError": "bool int8 uint8 int32 int64"},
}
# (session 11) the float functions of integers, which tapegrad computed in a float dtype
# until then, raise as in TensorFlow: added to the rows above
_INTS = " int8 uint8 int32 int64"
for _op in ["acos", "asin", "atan", "cos", "cosh", "erf", "exp", "expm1", "log", "log1p",
            "rsqrt", "sin", "sinh", "softplus", "sqrt", "tan", "tanh", "atan2"]:
    _key = (_op, 2 if _op == "atan2" else 1)
    SWEEP[_key]["InvalidArgumentError"] += _INTS
SWEEP[("log_sigmoid", 1)]["InvalidArgumentError"] += " int8 int32 int64"
ERRORS = {"InvalidArgumentError": E, "NotFoundError": N, "TypeError": TypeError}
ROWS = [(op, n, err, dt) for (op, n), errs in SWEEP.items() for err, dts in errs.items()
        for dt in dts.split()]


@pytest.mark.parametrize("op,n,err,dtype", ROWS, ids=[f"{r[0]}-{r[3]}" for r in ROWS])
def test_sweep_tensorflow_rejects(op, n, err, dtype):
    f = getattr(tf.math, op)
    args = [tf.constant(sample(dtype, k)) for k in range(n)]
    with pytest.raises(ERRORS[err]):
        f(*args)


def test_sweep_covers_every_op_it_names():
    missing = [op for op, _ in SWEEP if not hasattr(tf.math, op)]
    assert not missing


# (session 13) the op names of TensorFlow 2.21's messages for two dtypes, checked there by
# hand: "cannot compute SelectV2 / MatMul as input ... [Op:...]"
@pytest.mark.parametrize("f,name", [
    (lambda a, b: tf.where([[True, False], [False, True]], a, b), "SelectV2"),
    (tf.matmul, "MatMul"),
    (tf.linalg.lstsq, "MatMul"),  # TensorFlow forms A^T A first
])
def test_two_dtypes_name_tensorflows_op(f, name):
    a, b = tf.ones((2, 2)), tf.ones((2, 2), tf.float64)
    with pytest.raises(E, match=name):
        f(a, b)
