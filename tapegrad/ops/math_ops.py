"""Elementwise math, comparisons and reductions with TensorFlow's names and signatures."""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops._convert import ALL_AXES, axes, axis1, binary, cast, tensor
from tapegrad.ops._kinds import (BOOL, FLOAT_FNS, FLOATS, NUMBERS, REAL, SIGNED, require,
                                 require_bool)
from tapegrad.primitives import elementwise
from tapegrad.primitives import reductions


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


def _binary_op(prim, doc, kinds=NUMBERS, missing=""):
    """The op of a two-input primitive: one dtype (``binary``), of the kinds ``kinds``."""
    def op(x, y, name=None):
        if type(x) is Tensor and type(y) is Tensor:  # the common case: concrete, one dtype
            d = x._value.dtype
            if d == y._value.dtype and d.kind in kinds:
                return bind(prim, x, y)
        if type(x) is not Tensor or type(y) is not Tensor or x.dtype != y.dtype:
            x, y = binary(x, y, prim.name)
        if x.dtype.kind not in kinds:
            if kinds == BOOL:
                require_bool(x, prim.name)
            if x.dtype.kind not in kinds:
                require(x, kinds, prim.name, missing)
        return bind(prim, x, y)
    op.__name__ = prim.name
    op.__doc__ = doc
    return op


# ---- elementwise --------------------------------------------------------------------------
add = _binary_op(elementwise.add_p, "x + y, with broadcasting.\n\n>>> import tapegrad as tf\n"
                 ">>> float(tf.add(1.0, 2.0))\n3.0")
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
                   REAL)
floormod = _binary_op(elementwise.mod_p, "x mod y, with the sign of y (Python's %).", REAL)
mod = floormod
floordiv = _binary_op(elementwise.floordiv_p, "Floor division x // y (no gradient).", REAL,
                      missing="c")
equal = _binary_op(elementwise.equal_p, "x == y elementwise (bool).", "biufc")
not_equal = _binary_op(elementwise.not_equal_p, "x != y elementwise (bool).", "biufc")
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
softplus = _unary(elementwise.softplus_p, "log(1 + exp(x)), computed stably.", REAL)
abs = _unary(elementwise.abs_p, "|x|; its gradient at 0 is 0.", SIGNED)
erf = _unary(elementwise.erf_p, "The error function.", REAL)
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
    x, y = binary(x, y)
    return bind(elementwise.where_p, c, x, y)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clamp to [min, max]; the gradient is zero outside the range."""
    # TensorFlow's order: the max bound first, then the min bound (so a min bound above
    # the max bound wins)
    return maximum(minimum(t, clip_value_max), clip_value_min)


# ---- reductions ---------------------------------------------------------------------------
def _reduce(prim, x, axis, keepdims, kinds=NUMBERS):
    x = tensor(x)
    if x.dtype.kind not in kinds:
        require(x, kinds, prim.name)
    return bind(prim, x, axis=axes(axis, x.ndim), keepdims=bool(keepdims))


def reduce_sum(input_tensor, axis=None, keepdims=False, name=None):
    """Sum over ``axis`` (all axes by default).

    >>> import tapegrad as tf
    >>> float(tf.reduce_sum([[1.0, 2.0], [3.0, 4.0]]))
    10.0
    """
    x = input_tensor
    if type(x) is Tensor and axis is None and keepdims is False:  # a loss: no conversions
        v = x._value
        if v.dtype.kind in NUMBERS and v.ndim < len(ALL_AXES):
            return bind(reductions.reduce_sum_p, x, axis=ALL_AXES[v.ndim], keepdims=False)
    x = tensor(x)
    if x.dtype.kind not in NUMBERS:  # a sum of bools raises, as in TensorFlow: cast them first
        require(x, NUMBERS, "Sum")
    return bind(reductions.reduce_sum_p, x, axis=axes(axis, x.ndim), keepdims=bool(keepdims))


def _extreme(prim, x, axis, keepdims, lowest):
    x = tensor(x)
    if x.dtype.kind not in REAL:
        require(x, REAL, "Max" if lowest else "Min")
    ax = axes(axis, x.ndim)
    if any(x.shape[a] == 0 for a in ax):
        # over nothing: the reduction's identity (-inf for a max, the dtype's extreme for
        # integers), as in TensorFlow, where NumPy raises
        d = x.dtype
        if d.kind == "b":
            ident = not lowest
        elif d.kind in "iu":
            ident = np.iinfo(d).min if lowest else np.iinfo(d).max
        else:
            ident = -np.inf if lowest else np.inf
        shape = tuple(1 if a in ax else n for a, n in enumerate(x.shape) if keepdims or a
                      not in ax)
        return Tensor._wrap(np.full(shape, ident, d))
    return bind(prim, x, axis=ax, keepdims=bool(keepdims))


def reduce_max(input_tensor, axis=None, keepdims=False, name=None):
    """Maximum over ``axis``; ties share the gradient equally. Over an empty axis it is the
    lowest value of the dtype (-inf for floats).

    >>> import tapegrad as tf
    >>> float(tf.reduce_max(tf.zeros([0])))
    -inf
    """
    return _extreme(reductions.reduce_max_p, input_tensor, axis, keepdims, True)


def reduce_min(input_tensor, axis=None, keepdims=False, name=None):
    """Minimum over ``axis``; ties share the gradient equally (inf over an empty axis)."""
    return _extreme(reductions.reduce_min_p, input_tensor, axis, keepdims, False)


def reduce_prod(input_tensor, axis=None, keepdims=False, name=None):
    """Product over ``axis``; the gradient is exact where elements are zero."""
    return _reduce(reductions.reduce_prod_p, input_tensor, axis, keepdims)


def _count(x, ax):
    n = 1
    for a in ax:
        n *= x.shape[a]
    return n


def reduce_mean(input_tensor, axis=None, keepdims=False, name=None):
    """Mean over ``axis``.

    >>> import tapegrad as tf
    >>> float(tf.reduce_mean([1.0, 2.0, 3.0]))
    2.0
    """
    x = tensor(input_tensor)
    if x.dtype.kind not in NUMBERS:
        require(x, NUMBERS, "Mean")
    ax = axes(axis, x.ndim)
    if x.dtype.kind in "iu":
        # TensorFlow's integer mean: truncated, in the input's dtype, from a sum that
        # does not overflow (the mean of uint8 [200, 250] is 225)
        wide = np.int64 if x.dtype.kind == "i" else np.uint64
        s = bind(reductions.reduce_sum_p, cast(x, wide), axis=ax, keepdims=bool(keepdims))
        n = max(_count(x, ax), 1)  # an empty mean is 0, as in TensorFlow
        if x.dtype.kind == "u":
            return cast(floordiv(s, np.uint64(n)), x.dtype)
        return cast(multiply(floordiv(abs(s), n), sign(s)), x.dtype)
    s = bind(reductions.reduce_sum_p, x, axis=ax, keepdims=bool(keepdims))
    return s / _count(x, ax)


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Population variance over ``axis``: of a complex input, the real mean of
    ``|x - mean|**2`` (TensorFlow's); integers raise ``TypeError``, as in TensorFlow.

    >>> import tapegrad as tf
    >>> float(tf.math.reduce_variance([1.0, 2.0, 3.0, 4.0]))
    1.25
    """
    x = tensor(input_tensor)
    if x.dtype.kind not in NUMBERS:  # bool: TensorFlow's mean raises first
        require(x, NUMBERS, "Mean")
    if x.dtype.kind not in "fc":
        raise TypeError("Input must be either real or complex. Received integer type "
                        f"{x.dtype}.")
    m = reduce_mean(x, axis=axis, keepdims=True)
    if x.dtype.kind == "c":
        return reduce_mean(square(abs(x - m)), axis=axis, keepdims=keepdims)
    return reduce_mean(squared_difference(x, m), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Population standard deviation over ``axis``."""
    return sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """log(sum(exp(x))) computed stably (the max is shifted out and given no gradient)."""
    from tapegrad.ops.array_ops import stop_gradient, zeros_like
    x = tensor(input_tensor)
    if x.dtype.kind not in REAL:
        require(x, REAL, "Max")
    ax = axes(axis, x.ndim)
    m = stop_gradient(reduce_max(x, axis=ax, keepdims=True))  # -inf over nothing
    m = where(is_finite(m), m, zeros_like(m))  # all -inf (or inf): shift by 0, no nan
    out = log(reduce_sum(exp(x - m), axis=ax, keepdims=True)) + m
    if not keepdims:
        from tapegrad.ops.array_ops import squeeze
        out = squeeze(out, axis=ax) if ax else out
    return out


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    """Logical or over ``axis`` (all axes by default).

    >>> import tapegrad as tf
    >>> tf.reduce_any([[True, False], [False, False]], axis=1).numpy().tolist()
    [True, False]
    """
    x = tensor(input_tensor)
    require_bool(x, "Any")
    return tensor(np.any(np.asarray(x._value), axis=axes(axis, x.ndim), keepdims=keepdims))


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """Logical and over ``axis`` (all axes by default).

    >>> import tapegrad as tf
    >>> tf.reduce_all([[True, True], [False, True]], axis=1).numpy().tolist()
    [True, False]
    """
    x = tensor(input_tensor)
    require_bool(x, "All")
    return tensor(np.all(np.asarray(x._value), axis=axes(axis, x.ndim), keepdims=keepdims))


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running sum along ``axis``.

    >>> import tapegrad as tf
    >>> tf.math.cumsum([1.0, 2.0, 3.0]).numpy().tolist()
    [1.0, 3.0, 6.0]
    """
    x = tensor(x)
    if x.dtype.kind not in NUMBERS:
        require(x, NUMBERS, "Cumsum")
    return bind(reductions.cumsum_p, x, axis=axis1(axis, x.ndim, "cumsum"), exclusive=bool(exclusive),
                reverse=bool(reverse))


def argmax(input, axis=None, output_type=np.int64, name=None):
    """Index of the largest value along ``axis`` (default 0), as in TensorFlow."""
    x = tensor(input)
    if x.dtype.kind not in "biuf":
        require(x, "biuf", "ArgMax")
    return bind(reductions.argmax_p, x, axis=axis1(0 if axis is None else axis, x.ndim, "argmax"),
                output_type=np.dtype(output_type).name)


def argmin(input, axis=None, output_type=np.int64, name=None):
    """Index of the smallest value along ``axis`` (default 0)."""
    x = tensor(input)
    if x.dtype.kind not in "biuf":
        require(x, "biuf", "ArgMin")
    return bind(reductions.argmin_p, x, axis=axis1(0 if axis is None else axis, x.ndim, "argmin"),
                output_type=np.dtype(output_type).name)


def count_nonzero(input, axis=None, keepdims=False, dtype=np.int64, name=None):
    """Number of non-zero elements over ``axis``, as ``dtype`` (int64 by default).

    >>> import tapegrad as tf
    >>> int(tf.math.count_nonzero([0.0, 1.5, -2.0]))
    2
    """
    x = tensor(input)
    nonzero = x if x.dtype.kind == "b" else not_equal(x, 0)
    return cast(reduce_sum(cast(nonzero, np.int64), axis, keepdims), dtype)


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


def reduce_euclidean_norm(input_tensor, axis=None, keepdims=False, name=None):
    """sqrt(sum(x ** 2)) over ``axis``; of integers, truncated to their dtype (TensorFlow's).

    >>> import tapegrad as tf
    >>> n = tf.math.reduce_euclidean_norm([3, 4]); int(n), n.dtype
    (5, dtype('int32'))
    """
    x = tensor(input_tensor)
    if x.dtype.kind in "iu":
        s = reduce_sum(square(x), axis=axis, keepdims=keepdims)
        return cast(sqrt(cast(s, np.float64)), x.dtype)
    return sqrt(reduce_sum(square(x), axis=axis, keepdims=keepdims))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(|x| ** 2, axis), epsilon)), as tf.math.l2_normalize (a complex x is
    divided by its norm, the root of the sum of its squared moduli).

    >>> import tapegrad as tf
    >>> tf.math.l2_normalize([3.0, 4.0]).numpy().tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    x = tensor(x)
    if x.dtype.kind not in NUMBERS:
        require(x, NUMBERS, "Square")
    axis = dim if axis is None else axis
    if x.dtype.kind == "c":  # TensorFlow's composition, for its bits (-0.0 included)
        re, im = real(x), imag(x)
        inv = rsqrt(maximum(reduce_sum(square(re) + square(im), axis=axis, keepdims=True),
                            epsilon))
        return complex(re * inv, im * inv)
    ss = reduce_sum(square(x), axis=axis, keepdims=True)
    return x * rsqrt(maximum(ss, epsilon))


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
