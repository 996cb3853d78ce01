"""Elementwise math and comparisons with TensorFlow's names and signatures (tf.math;
the reductions are in reduction_ops.py, and math_ops.py holds both)."""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError, NotFoundError
from tapegrad.ops._convert import binary, cast, tensor
from tapegrad.ops._kinds import (BOOL, FLOAT_FNS, FLOATS, NUMBERS, REAL, SIGNED, mismatch,
                                 require, require_bool)
from tapegrad.primitives import elementwise


def _unary(prim, doc, kinds=NUMBERS, missing=""):
    """The op of a one-input primitive taking the dtype kinds ``kinds`` (ops/_kinds.py)."""
    check = require_bool if kinds == BOOL else None

    def op(x, name=None):
        if type(x) is Tensor:  # the common case: a concrete tensor, no conversion call
            if x._value.dtype.kind in kinds:
                return bind(prim, x)
        else:
            x = tensor(x)
        if x.dtype.kind not in kinds:
            check(x, prim.name) if check else require(x, kinds, prim.name, missing)
        return bind(prim, x)
    op.__name__ = prim.name
    op.__doc__ = doc
    return op


def _binary_op(prim, doc, kinds=NUMBERS, missing="", strings=None):
    """The op of a two-input primitive: one dtype (``binary``), of the kinds ``kinds``
    (``strings``: the function of two string tensors, where it has one)."""
    def op(x, y, name=None):
        if type(x) is Tensor and type(y) is Tensor:  # the common case: concrete, one dtype
            d = x._value.dtype
            if d == y._value.dtype and d.kind in kinds:
                return bind(prim, x, y)
        if strings is not None and isinstance(x, Tensor) and (
                x.dtype.kind == "O" and isinstance(y, (int, float)) or
                x.dtype.kind != "O" and isinstance(y, (str, bytes))):
            mismatch(prim.name, x, tensor(y))  # TensorFlow converts y alone, then refuses
        if type(x) is not Tensor or type(y) is not Tensor or x.dtype != y.dtype:
            x, y = binary(x, y, prim.name)
        if x.dtype.kind not in kinds:
            if strings is not None and x.dtype.kind == "O":
                return strings(x, y)
            if kinds == BOOL:
                require_bool(x, prim.name)
            if x.dtype.kind not in kinds:
                require(x, kinds, prim.name, missing)
        return bind(prim, x, y)
    op.__name__ = prim.name
    op.__doc__ = doc
    return op


# ---- elementwise --------------------------------------------------------------------------
def _concatenate(x, y):
    """String tensors' ``+``: each pair of strings joined, with broadcasting (eagerly: a
    generated program computes no strings)."""
    if x._symbolic or y._symbolic:
        raise NotImplementedError("Adding string tensors inside tf.function is not "
                                  "supported in tapegrad; call it eagerly.")
    return Tensor._wrap(np.asarray(np.add(x._value, y._value), dtype=object))


add = _binary_op(elementwise.add_p, "x + y, with broadcasting (of strings, their "
                 "concatenation).\n\n>>> import tapegrad as tf\n"
                 ">>> float(tf.add(1.0, 2.0))\n3.0", strings=_concatenate)
subtract = _binary_op(elementwise.sub_p, "x - y, with broadcasting.")
multiply = _binary_op(elementwise.mul_p, "x * y, with broadcasting.")
def divide(x, y, name=None):
    """x / y (true division). Integers divide as floats, as in TensorFlow: float32 for
    8- and 16-bit integers, float64 for wider ones.

    >>> import tapegrad as tf
    >>> (tf.constant([3], tf.uint8) / tf.constant([2], tf.uint8)).dtype
    dtype('float32')
    """
    if type(x) is not Tensor or type(y) is not Tensor or x.dtype != y.dtype:
        if isinstance(x, Tensor) and isinstance(y, Tensor) and x.dtype != y.dtype:
            # TensorFlow's truediv checks the dtypes before any kernel: a TypeError
            raise TypeError(f"`x` and `y` must have the same dtype, got tf.{x.dtype.name} != "
                            f"tf.{y.dtype.name}.")
        x, y = binary(x, y, "div")
    if x.dtype.kind == "b":
        raise TypeError("Invalid dtype bool in divide: expected a number (TensorFlow's "
                        "__truediv__ takes integers, floats and complex numbers).")
    if x.dtype.kind in "iu":
        wide = np.float32 if x.dtype.itemsize <= 2 else np.float64
        x, y = cast(x, wide), cast(y, wide)
    return bind(elementwise.div_p, x, y)


truediv = divide
def pow(x, y, name=None):
    """x ** y. An integral Python exponent uses ``integer_pow``, exact at every order.

    >>> import tapegrad as tf
    >>> float(tf.pow(2.0, 3.0))
    8.0
    """
    n = _integral(y)
    if n is not None:
        x = tensor(x)
        if x.dtype.kind in "fc":
            return bind(elementwise.integer_pow_p, x, y=n)
    x, y = binary(x, y, "pow")
    if x.dtype.kind not in "ifc":  # TensorFlow's Pow takes no bool or unsigned integers
        require(x, "ifc", "Pow")
    return bind(elementwise.pow_p, x, y)


def _integral(y):
    """``y`` as a small int if it is a Python number with an integral value, else None."""
    if type(y) is int or (type(y) is float and y.is_integer()):
        if -64 <= y <= 64:
            return int(y)
    return None


def integer_pow(x, y, name=None):
    """x ** n for a Python int n (the primitive behind ``x ** 3``)."""
    return bind(elementwise.integer_pow_p, tensor(x), y=int(y))
maximum = _binary_op(elementwise.maximum_p, "Elementwise max; the gradient goes to x on ties "
                     "(as TF).", REAL)
minimum = _binary_op(elementwise.minimum_p, "Elementwise min; the gradient goes to x on ties "
                     "(as TF).", REAL)
atan2 = _binary_op(elementwise.atan2_p, "Elementwise arctan(y / x) with quadrant: atan2(y, x).",
                   FLOATS)
floormod = _binary_op(elementwise.mod_p, "x mod y, with the sign of y (Python's %).", REAL)
mod = floormod
floordiv = _binary_op(elementwise.floordiv_p, "Floor division x // y (no gradient).", REAL,
                      missing="c")
equal = _binary_op(elementwise.equal_p, "x == y elementwise (bool).", "biufcO")
not_equal = _binary_op(elementwise.not_equal_p, "x != y elementwise (bool).", "biufcO")
less = _binary_op(elementwise.less_p, "x < y elementwise (bool).", REAL)
less_equal = _binary_op(elementwise.less_equal_p, "x <= y elementwise (bool).", REAL)
greater = _binary_op(elementwise.greater_p, "x > y elementwise (bool).", REAL)
greater_equal = _binary_op(elementwise.greater_equal_p, "x >= y elementwise (bool).", REAL)
logical_and = _binary_op(elementwise.logical_and_p, "Elementwise and of bool tensors.", BOOL)
logical_or = _binary_op(elementwise.logical_or_p, "Elementwise or of bool tensors.", BOOL)
logical_xor = _binary_op(elementwise.logical_xor_p, "Elementwise xor of bool tensors.", BOOL)

negative = _unary(elementwise.neg_p, "-x.", SIGNED)
neg = negative
exp = _unary(elementwise.exp_p, "e ** x.\n\n>>> import tapegrad as tf\n>>> float(tf.exp(0.0))\n1.0", FLOAT_FNS)
log = _unary(elementwise.log_p, "Natural logarithm.", FLOAT_FNS)
log1p = _unary(elementwise.log1p_p, "log(1 + x), accurate for small x.", FLOAT_FNS)
expm1 = _unary(elementwise.expm1_p, "exp(x) - 1, accurate for small x.", FLOAT_FNS)
sqrt = _unary(elementwise.sqrt_p, "Square root.", FLOAT_FNS)
rsqrt = _unary(elementwise.rsqrt_p, "1 / sqrt(x).", FLOAT_FNS)
square = _unary(elementwise.square_p, "x * x.")
reciprocal = _unary(elementwise.reciprocal_p, "1 / x.", "fc", missing="i")
sin = _unary(elementwise.sin_p, "Sine.", FLOAT_FNS)
cos = _unary(elementwise.cos_p, "Cosine.", FLOAT_FNS)
tan = _unary(elementwise.tan_p, "Tangent.", FLOAT_FNS)
asin = _unary(elementwise.asin_p, "Inverse sine.", FLOAT_FNS)
acos = _unary(elementwise.acos_p, "Inverse cosine.", FLOAT_FNS)
atan = _unary(elementwise.atan_p, "Inverse tangent.", FLOAT_FNS)
sinh = _unary(elementwise.sinh_p, "Hyperbolic sine.", FLOAT_FNS)
cosh = _unary(elementwise.cosh_p, "Hyperbolic cosine.", FLOAT_FNS)
tanh = _unary(elementwise.tanh_p, "Hyperbolic tangent.\n\n>>> import tapegrad as tf\n"
              ">>> float(tf.tanh(0.0))\n0.0", FLOAT_FNS)
sigmoid = _unary(elementwise.sigmoid_p, "1 / (1 + exp(-x)), computed stably.")
softplus = _unary(elementwise.softplus_p, "log(1 + exp(x)), computed stably.", FLOATS)
abs = _unary(elementwise.abs_p, "|x|; its gradient at 0 is 0.", SIGNED)
erf = _unary(elementwise.erf_p, "The error function.", FLOATS)
sign = _unary(elementwise.sign_p, "-1, 0 or 1 (no gradient).", SIGNED)
floor = _unary(elementwise.floor_p, "Round down (no gradient).", FLOATS)
ceil = _unary(elementwise.ceil_p, "Round up (no gradient).", FLOATS)
_round = _unary(elementwise.round_p, "", FLOATS)


def round(x, name=None):
    """Round half to even (no gradient); integers are returned as they are (TensorFlow
    keeps their dtype).

    >>> import tapegrad as tf
    >>> tf.round([0.5, 1.5, -2.5]).numpy().tolist()
    [0.0, 2.0, -2.0]
    """
    x = tensor(x)
    if x.dtype.kind not in REAL:
        require(x, REAL, "Round", missing="c")
    return x if x.dtype.kind in "iu" else _round(x)


def rint(x, name=None):
    """The nearest integer, halves to even, as a float of ``x``'s dtype (no gradient);
    floats only, as in TensorFlow.

    >>> import tapegrad as tf
    >>> tf.math.rint([0.5, 1.5, -2.5, 3.7]).numpy().tolist()
    [0.0, 2.0, -2.0, 4.0]
    """
    x = tensor(x)
    if x.dtype.kind != "f":
        raise InvalidArgumentError(f"Value for attr 'T' of {x.dtype.name} is not in the list "
                                   "of allowed values: bfloat16, half, float, double")
    if x.dtype == np.float16:  # (registered, but no CPU kernel)
        raise NotFoundError("Could not find device for node: {{node Rint}} = Rint[T=DT_HALF]")
    return _round(x)
logical_not = _unary(elementwise.logical_not_p, "Elementwise not of a bool tensor.", BOOL)
is_nan = _unary(elementwise.isnan_p, "True where x is NaN.", FLOATS)
is_finite = _unary(elementwise.isfinite_p, "True where x is finite.", FLOATS)


def is_inf(x, name=None):
    """True where x is +inf or -inf: neither finite nor NaN.

    >>> import tapegrad as tf
    >>> tf.math.is_inf([1.0, float("inf"), float("-inf"), float("nan")]).numpy()
    array([False,  True,  True, False])
    """
    x = tensor(x)
    if x.dtype.kind not in FLOATS:
        require(x, FLOATS, "IsInf")
    return logical_not(logical_or(is_finite(x), is_nan(x)))


def squared_difference(x, y, name=None):
    """(x - y) ** 2 (TensorFlow's kernel: no bool, int8, int16 or unsigned integers)."""
    x, y = binary(x, y, "SquaredDifference")
    if x.dtype.kind in "bu" or x.dtype.kind == "i" and x.dtype.itemsize < 4:
        raise InvalidArgumentError(
            f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: "
            "bfloat16, half, float, double, int32, int64, complex64, complex128 "
            "[Op:SquaredDifference]")
    d = subtract(x, y)
    return d * d


def where(condition, x=None, y=None, name=None):
    """Choose x where ``condition`` holds, else y; x and y broadcast against it.

    >>> import tapegrad as tf
    >>> tf.where([True, False], 1.0, 2.0).numpy().tolist()
    [1.0, 2.0]
    """
    c = tensor(condition)
    if x is None and y is None:
        if c.dtype.kind != "b":
            c = not_equal(c, 0)
        return tensor(np.argwhere(np.asarray(c._value)).astype(np.int64))
    if x is None or y is None:
        raise ValueError("where: x and y must both be given, or neither.")
    if c.dtype.kind != "b":
        raise TypeError(f"where: condition must be a bool tensor, got {c.dtype.name}.")
    x, y = binary(x, y, "SelectV2")
    return bind(elementwise.where_p, c, x, y)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clamp to [min, max]; the gradient is zero outside the range."""
    # TensorFlow's order: the max bound first, then the min bound (so a min bound above
    # the max bound wins)
    return maximum(minimum(t, clip_value_max), clip_value_min)


def add_n(inputs, name=None):
    """Elementwise sum of a list of tensors of one shape.

    >>> import tapegrad as tf
    >>> tf.add_n([[1.0, 2.0], [3.0, 4.0]]).numpy().tolist()
    [4.0, 6.0]
    """
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise ValueError("inputs must be a non-empty list of tensors of one shape.")
    xs = [tensor(x) for x in inputs]
    shape = tuple(xs[0].shape)
    if any(tuple(x.shape) != shape for x in xs):
        raise ValueError(f"add_n: all inputs must have the same shape, got "
                         f"{[tuple(x.shape) for x in xs]}.")
    out = xs[0]
    for x in xs[1:]:
        out = add(out, x)
    return out


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0 (with a zero gradient there, not NaN)."""
    x, y = binary(x, y, "DivNoNan")
    zero = equal(y, 0)
    safe_y = where(zero, 1, y)
    return where(zero, 0, divide(x, safe_y))


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), computed stably."""
    return negative(softplus(negative(tensor(x))))


# ---- complex numbers (primitives/complex.py: TensorFlow's derivative convention) ------------
def real(input, name=None):
    """The real part; a real tensor is returned as it is.

    >>> import tapegrad as tf
    >>> tf.math.real(tf.constant([1 + 2j])).numpy().tolist()
    [1.0]
    """
    from tapegrad.primitives.complex import real_p
    x = tensor(input)
    _numeric(x)
    return bind(real_p, x) if x.dtype.kind == "c" else x


def imag(input, name=None):
    """The imaginary part (zeros for a real tensor).

    >>> import tapegrad as tf
    >>> tf.math.imag(tf.constant([1 + 2j])).numpy().tolist()
    [2.0]
    """
    from tapegrad.primitives.complex import imag_p
    return bind(imag_p, tensor(input))


def conj(x, name=None):
    """The complex conjugate; a real tensor is returned as it is.

    >>> import tapegrad as tf
    >>> tf.math.conj(tf.constant(1 + 2j)).numpy().item()
    (1-2j)
    """
    from tapegrad.primitives.complex import conj_p
    x = tensor(x)
    _numeric(x)
    return bind(conj_p, x) if x.dtype.kind == "c" else x


def _numeric(x):
    if x.dtype.kind == "b":
        raise TypeError(f"input must be a numeric tensor, but got tensor with dtype {x.dtype}")


def complex(real, imag, name=None):
    """``real + i imag`` from two float tensors of one dtype (float32 gives complex64).

    >>> import tapegrad as tf
    >>> tf.complex(1.0, 2.0).numpy().item()
    (1+2j)
    """
    from tapegrad.primitives.complex import complex_
    re, im = tensor(real), tensor(imag)
    if re.dtype != im.dtype or re.dtype.kind != "f":
        raise TypeError(f"tf.complex takes two float tensors of one dtype, got {re.dtype.name} "
                        f"and {im.dtype.name}")
    return complex_(re, im)


# The public ops are the functions defined here: `from ... import *` must not re-export helpers
# (NumPy, primitive modules, conversion functions) into tapegrad's namespaces.
__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and callable(_v) and getattr(_v, "__module__", "") == __name__]
