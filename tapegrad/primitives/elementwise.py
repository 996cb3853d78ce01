"""Elementwise primitives. Each block: implementation, then the derivative, once.

The rule ``lambda g, ans, x: ...`` is the VJP; because an elementwise Jacobian is diagonal
the same rule is the JVP (with the tangent in place of ``g``). Broadcasting of binary
operations is undone by the engine, not here.
"""
import math
import operator

import numpy as np

from tapegrad.primitives.api import (cast, cos, cosh, equal, exp, floor, integer_pow, log,
    logical_and, multiply, ones_like, pow, reciprocal_grad, rsqrt, rsqrt_grad, sigmoid, sign,
    sin, sinh, sqrt_grad, square, step, times, where, zeros_like, leaky_relu_grad,
    one_minus_square)
from tapegrad.primitives.families import binary, nondiff, recycling, unary, xp
from tapegrad.core.dispatch import Primitive
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.primitives import identities
from tapegrad.primitives.complex import conj, is_complex, real
from tapegrad.primitives.memo import derived
from tapegrad.primitives.params import check_int
from tapegrad.primitives.power import exact_power
from tapegrad.primitives.families import (broadcast_shapes, elementwise, elementwise_batch,
                                          no_bool, ufunc_dtype)

try:  # SciPy's erf is exact and fast; without SciPy fall back to math.erf per element
    from scipy.special import erf as _scipy_erf

    def _erf(x):
        # SciPy computes float16 in float64; keep the input's dtype as every other op does
        x = np.asarray(x)
        return np.asarray(_scipy_erf(x)).astype(np.result_type(x, np.float16), copy=False)
except ImportError:  # pragma: no cover - depends on the environment
    _erf_scalar = np.frompyfunc(math.erf, 1, 1)

    def _erf(x):
        x = np.asarray(x)
        return _erf_scalar(x).astype(np.result_type(x, np.float16))


_FLOAT_NAMES = "bfloat16, half, float, double, complex64, complex128"
_RELU_NAMES = ("float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
               "uint32, uint64")
_TF_NAMES = {"float16": "half", "float32": "float", "float64": "double", "bool": "bool"}


def _require(x, kinds, allowed, op):
    """TensorFlow's error for a dtype its kernel does not take (``sigmoid`` of int32 is
    not computed as int32 zeros, ``relu`` of bool is not bool here and int64 compiled)."""
    dt = x if isinstance(x, np.dtype) else np.result_type(x)
    if dt.kind not in kinds:
        raise InvalidArgumentError(
            f"Value for attr 'T' of {_TF_NAMES.get(dt.name, dt.name)} is not in the list of "
            f"allowed values: {allowed} [Op:{op}]")
    return dt


def _sigmoid_dtype(d):
    return _require(d, "fc", _FLOAT_NAMES, "Sigmoid")


def _relu_dtype(d):
    return _require(d, "iuf", _RELU_NAMES, "Relu")


def _int_div_check(y):
    """TensorFlow raises for an integer division by zero (NumPy gives 0 and a warning)."""
    if np.result_type(y).kind in "iub" and not np.all(y):
        raise InvalidArgumentError("Integer division by zero")


def _floordiv(x, y):
    _int_div_check(y)
    if np.result_type(x, y).kind in "fc":
        # TensorFlow's float FloorDiv is floor(x / y): 1 // 0.1 is 10 and inf // 2 is inf
        # (NumPy's floor_divide keeps x == (x // y) * y + x % y instead: 9 and NaN)
        return xp.floor(xp.true_divide(x, y))
    return xp.floor_divide(x, y)


def _mod(x, y):
    _int_div_check(y)
    if np.result_type(x, y).kind == "f":
        # TensorFlow's float FloorMod: C's fmod, moved by y where the signs differ, so
        # a zero remainder keeps x's sign (NumPy's mod gives it y's)
        r = xp.fmod(x, y)
        return xp.where((r != 0) & ((x < 0) != (y < 0)), r + y, r)
    return xp.mod(x, y)


def _softsign(x):
    return x / (1 + xp.abs(x))


def _rsqrt(x):
    return 1 / xp.sqrt(x)


def _sigmoid(x):
    if _require(x, "fc", _FLOAT_NAMES, "Sigmoid").kind == "c":
        return 1 / (1 + xp.exp(-x))  # complex: no order to split on
    # Stable for large |x|: exp of a non-positive number only.
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(np.result_type(x), copy=False)


def _softplus(x):
    return xp.logaddexp(xp.zeros((), np.result_type(x)), x)


def _relu(x):
    return xp.maximum(x, xp.zeros((), _require(x, "iuf", _RELU_NAMES, "Relu")))


def _relu6(x):
    """min(max(x, 0), 6): NaN stays NaN, as TensorFlow's Relu6 (a select on x < 6 would give 6)."""
    d = _require(x, "iuf", _RELU_NAMES, "Relu6")
    return xp.minimum(xp.maximum(x, xp.zeros((), d)), xp.asarray(6, d))


def _erf_dtype(d):
    if d.kind == "c":  # SciPy would take complex numbers; the fallback without it would not
        raise TypeError("erf: complex inputs are not supported")
    return np.result_type(d, np.float16)


def _same(d):
    return d


def _pow_base(x, y):
    """The base for d/dx x**y = y x**(y-1): x, except 1 where x == 0 and y == 0.

    There the derivative is 0 * 0**-1 = nan, although it is 0 (the factor y); and the same
    nan reaches the second derivative of x**1 and the third of x**2 at x = 0. Any finite base
    gives the exact value, and keeps every higher derivative finite. Arrays without zeros
    (the common case) skip the select.
    """
    if not getattr(x, "_symbolic", False) and np.all(np.asarray(getattr(x, "_value", x))):
        return x
    return where(logical_and(equal(x, 0), equal(y, 0)), ones_like(x), x)


def _pow_y_vjp(g, ans, x, y):
    """d/dy x**y = x**y log x: defined as 0 where a real x <= 0 (TensorFlow does too); for
    complex x it is x**y log x wherever x != 0 (TensorFlow's mask)."""
    if is_complex(x):
        nz = x != 0
        return g * ans * where(nz, log(where(nz, x, 1)), 0)
    return g * ans * where(x > 0, log(where(x > 0, x, 1)), 0)


def _unit(ans, x):
    """``z / |z|`` (0 at z = 0), from primitives that differentiate: not ``sign(z)``, whose
    derivative is 0 (TensorFlow's SignGrad) where that of ``z / |z|`` is not, so that
    second derivatives of ``|z|`` are TensorFlow's (its ComplexAbsGrad divides by |z|)."""
    nz = ans != 0
    return where(nz, x / cast(where(nz, ans, ones_like(ans)), x.dtype), zeros_like(x))


def _abs_vjp(g, ans, x):
    # (multiply, not *: of a complex x the real cotangent g takes z / |z|'s complex dtype, a
    # promotion the op layer refuses to users, as TensorFlow)
    return multiply(g, _unit(ans, x)) if is_complex(x) else multiply(g, sign(x))


def _abs_jvp(t, ans, x):
    """d|z| = Re(conj(z / |z|) dz): real, and consistent with the VJP ``g * z / |z|``
    (TensorFlow's, the rule as written)."""
    if is_complex(x):
        return real(multiply(conj(_unit(ans, x)), t))
    return t * sign(x)


def _integer_pow_vjp(g, x, y):
    if y == 0:
        return g * 0
    if y == 1:
        return g
    # (g * n) first: the cotangent is rarely watched, so an outer tape records one op less
    if y == 2:
        return times(g, 2) * x
    return times(g, y) * integer_pow(x, y - 1)


def _select(cond, g):
    """``g`` where ``cond``, else 0: a select, so a NaN or inf cotangent does not leak into
    the branch that was not taken (``g * mask`` would give ``inf * 0 = NaN``), as in
    TensorFlow's maximum, minimum and clip gradients."""
    return where(cond, g, 0.0)


# Arithmetic uses Python's operators rather than the ufuncs: identical on arrays, and ten
# times faster on the NumPy scalars that scalar code (the README's x ** 3) produces.
# fmt: off
# ---- linear ----------------------------------------------------------------------------
neg_p   = unary("neg", operator.neg, lambda g, ans, x: -g, emit="-{0}",
                identities=identities.neg, complex="real_linear")
add_p   = binary("add", operator.add, lambda g, ans, x, y: g, lambda g, ans, x, y: g,
                 emit="{0} + {1}", identities=identities.add, complex="real_linear")
sub_p   = binary("sub", operator.sub, lambda g, ans, x, y: g, lambda g, ans, x, y: -g,
                 emit="{0} - {1}", identities=identities.sub, complex="real_linear")

# ---- products and quotients -----------------------------------------------------------
mul_p   = binary("mul", operator.mul, lambda g, ans, x, y: times(g, y),
                 lambda g, ans, x, y: times(g, x),
                 emit="{0} * {1}", identities=identities.mul, complex="holomorphic")
div_p   = binary("div", operator.truediv,
                 lambda g, ans, x, y: g / y,
                 lambda g, ans, x, y: -g * ans / y, emit="{0} / {1}",
                 identities=identities.div, complex="holomorphic")
# exact_power: the exponents -1, 0, 0.5, 1, 2 by their exact operations, scalar or array
pow_p   = binary("pow", exact_power,
                 lambda g, ans, x, y: g * y * pow(_pow_base(x, y), y - 1),
                 _pow_y_vjp, emit="exact_power({0}, {1})", dtype=ufunc_dtype(xp.power),
                 identities=identities.pow, complex="holomorphic")
# x ** n for a Python integer n (the README's x ** 3): its rules need no guard for x == 0 or
# log(x), so they are exact at every order and cheaper than pow's. n is a param.
def _integer_pow_validate(x, *, y):
    check_int("integer_pow", "y", y)
    if y < 0 and x.dtype.kind in "iu":
        raise ValueError("integer_pow: integers cannot be raised to a negative power")


def _ipow(x, y):
    """``x ** y`` with NumPy's power ufunc, for arrays and NumPy scalars alike: a NumPy
    scalar's own ``**`` calls C's pow, which can differ from the ufunc's vector loop in the
    last bit, so eager (0-d results are NumPy scalars) and compiled code would disagree."""
    return xp.multiply(x, x) if y == 2 else xp.power(x, y)


integer_pow_p = Primitive(
    "integer_pow", _ipow, nin=1, emit="_ipow({0}, {y})",
    vjp=(lambda g, ans, x, *, y: _integer_pow_vjp(g, x, y),),
    jvp=(lambda t, ans, x, *, y: _integer_pow_vjp(t, x, y),),
    abstract=elementwise(no_bool(_same, "integer_pow")), validate=_integer_pow_validate,
    batch=lambda args, batched, *, y: integer_pow_p.bind_raw(args[0], y=y),
    elementwise=True, identities=identities.integer_pow, complex="holomorphic",
    value_params=("y",))
atan2_p = binary("atan2", xp.arctan2,
                 lambda g, ans, y, x: g * x / (x * x + y * y),
                 lambda g, ans, y, x: -g * y / (x * x + y * y))
# As TensorFlow: the whole gradient goes to x where x >= y (x <= y for minimum), to y
# everywhere else (NaN included), by a select.
maximum_p = binary("maximum", xp.maximum,
                   lambda g, ans, x, y: _select(x >= y, g),
                   lambda g, ans, x, y: where(x >= y, 0.0, g))
minimum_p = binary("minimum", xp.minimum,
                   lambda g, ans, x, y: _select(x <= y, g),
                   lambda g, ans, x, y: where(x <= y, 0.0, g))
mod_p   = binary("mod", _mod,
                 lambda g, ans, x, y: g,
                 lambda g, ans, x, y: -g * floor(x / y), emit="_mod({0}, {1})",
                 dtype=ufunc_dtype(np.mod))

# ---- exponentials and logarithms --------------------------------------------------------
exp_p   = unary("exp", xp.exp, lambda g, ans, x: g * ans, complex="holomorphic")
log_p   = unary("log", xp.log, lambda g, ans, x: g / x, complex="holomorphic")
log1p_p = unary("log1p", xp.log1p, lambda g, ans, x: g / (1 + x), complex="holomorphic")
expm1_p = unary("expm1", xp.expm1, lambda g, ans, x: g * (ans + 1), complex="holomorphic")
sqrt_p  = unary("sqrt", xp.sqrt, lambda g, ans, x: sqrt_grad(ans, g), complex="holomorphic")
rsqrt_p = unary("rsqrt", _rsqrt, lambda g, ans, x: rsqrt_grad(ans, g), emit="1 / np.sqrt({0})",
                dtype=ufunc_dtype(np.sqrt), fresh=True, complex="holomorphic")
square_p = unary("square", xp.square, lambda g, ans, x: g * 2 * x, complex="holomorphic")
reciprocal_p = unary("reciprocal", xp.reciprocal, lambda g, ans, x: reciprocal_grad(ans, g),
                     complex="holomorphic")


# ---- the gradients of sqrt, rsqrt and reciprocal, as TensorFlow's SqrtGrad, RsqrtGrad and
# ReciprocalGrad: functions of the output y and the cotangent dy that are 0 wherever dy is 0,
# also at y = 0 or inf where the formula is 0 * inf, so that a masked-out sqrt(0) (a distance
# on a diagonal, the norm of a padded row) does not make the gradient NaN. They are
# primitives, not a select after the formula: a select would cut the derivative with respect
# to dy where dy is 0, and their own rules are TensorFlow's second-order ones.
def _grad_dtype(*dtypes):
    return np.result_type(*dtypes, np.float16)  # floats keep theirs; ints and bools: a float


def _ct_zero_gives_zero(dy, v):
    return xp.where(dy == 0, xp.zeros((), v.dtype), v)


def _floats(y, dy):
    d = _grad_dtype(np.result_type(y), np.result_type(dy))
    return xp.asarray(y, dtype=d), xp.asarray(dy, dtype=d)


def _sqrt_grad(y, dy):
    y, dy = _floats(y, dy)
    return _ct_zero_gives_zero(dy, dy / (2 * y))


def _rsqrt_grad(y, dy):
    y, dy = _floats(y, dy)
    return _ct_zero_gives_zero(dy, -0.5 * (dy * y) * (y * y))


def _reciprocal_grad(y, dy):
    y, dy = _floats(y, dy)
    return _ct_zero_gives_zero(dy, -dy * y * y)


_GRAD_DTYPE = _grad_dtype
sqrt_grad_p = binary("sqrt_grad", _sqrt_grad,
                     lambda g, ans, y, dy: -(g / y) * ans,
                     lambda g, ans, y, dy: sqrt_grad(y, g),
                     emit="_sqrt_grad({0}, {1})", dtype=_GRAD_DTYPE, fresh=True,
                     complex="holomorphic")
rsqrt_grad_p = binary("rsqrt_grad", _rsqrt_grad,
                      lambda g, ans, y, dy: -1.5 * g * dy * (y * y),
                      lambda g, ans, y, dy: rsqrt_grad(y, g),
                      emit="_rsqrt_grad({0}, {1})", dtype=_GRAD_DTYPE, fresh=True,
                      complex="holomorphic")
reciprocal_grad_p = binary("reciprocal_grad", _reciprocal_grad,
                           lambda g, ans, y, dy: g * -2.0 * dy * y,
                           lambda g, ans, y, dy: reciprocal_grad(y, g),
                           emit="_reciprocal_grad({0}, {1})", dtype=_GRAD_DTYPE, fresh=True,
                           complex="holomorphic")

# ---- derivatives that are functions of the output (derived once per output: memo.py) -----
def _square(y):
    return square(y) if isinstance(y, Tensor) else xp.square(y)


# 1 - y*y, tanh's derivative, is one primitive (TensorFlow's TanhGrad is one op too): its own
# rule, (g * -2) * y, differentiates it again, where the square and the subtraction took a
# negation, a product by 2 and a product by y (the same numbers: -(g * 2) == g * -2 exactly,
# the sign of a NaN cotangent aside), and every pass of nested tapes records one operation
# and one array instead of two.
_square_into_new = recycling(xp.square, xp.square)  # a large one into recycled memory


def _one_minus_square_impl(y):
    t = _square_into_new(y)
    if t.__class__ is not xp.ndarray:  # a 0-d input: a NumPy scalar
        return t.dtype.type(1) - t
    return xp.subtract(t.dtype.type(1), t, out=t)  # 1 - y*y, written over y*y


one_minus_square_p = unary("one_minus_square", _one_minus_square_impl,
                           lambda g, ans, y: g * -2.0 * y,
                           emit="_one_minus_square_impl({0})", fresh=True,
                           dtype=ufunc_dtype(xp.square), identities=identities.one_minus_square,
                           complex="holomorphic")


def _one_minus_square(y):
    if isinstance(y, np.ndarray):  # a first-order pass that nothing records: NumPy
        return _one_minus_square_impl(y)
    return one_minus_square(y)


def _one_plus_square(y):
    return 1 + _square(y)


# ---- trigonometric and hyperbolic ------------------------------------------------------
sin_p   = unary("sin", xp.sin, lambda g, ans, x: g * cos(x), complex="holomorphic")
cos_p   = unary("cos", xp.cos, lambda g, ans, x: -g * sin(x), complex="holomorphic")
tan_p   = unary("tan", xp.tan, lambda g, ans, x: g * derived(ans, "1+y^2", _one_plus_square),
                complex="holomorphic")
asin_p  = unary("asin", xp.arcsin, lambda g, ans, x: g * rsqrt(1 - x * x), complex="holomorphic")
acos_p  = unary("acos", xp.arccos, lambda g, ans, x: -g * rsqrt(1 - x * x), complex="holomorphic")
atan_p  = unary("atan", xp.arctan, lambda g, ans, x: g / (1 + x * x), complex="holomorphic")
sinh_p  = unary("sinh", xp.sinh, lambda g, ans, x: g * cosh(x), complex="holomorphic")
cosh_p  = unary("cosh", xp.cosh, lambda g, ans, x: g * sinh(x), complex="holomorphic")

# d tanh = 1 - tanh^2: made once per output for all the passes of nested tapes (memo.py)
tanh_p  = unary("tanh", xp.tanh,
                lambda g, ans, x: g * derived(ans, "1-y^2", _one_minus_square),
                complex="holomorphic")

# ---- activations --------------------------------------------------------------------------
sigmoid_p  = unary("sigmoid", _sigmoid,
                   lambda g, ans, x: g * derived(ans, "y(1-y)", lambda y: y * (1 - y)),
                   emit="_sigmoid({0})", dtype=_sigmoid_dtype, fresh=True, complex="holomorphic")
softplus_p = unary("softplus", _softplus, lambda g, ans, x: g * sigmoid(x),
                   emit="_softplus({0})", dtype=lambda d: ufunc_dtype(np.logaddexp)(d, d),
                   fresh=True)
# TensorFlow's SoftsignGrad, g / (1 + |x|)^2: 0 at +-inf, where the quotient's rule gives
# inf / inf (|x| = x sign(x), exact, and sign's derivative is 0)
softsign_p = unary("softsign", _softsign, lambda g, ans, x: g / square(1 + x * sign(x)),
                   emit="_softsign({0})", dtype=lambda d: ufunc_dtype(np.true_divide)(d, d),
                   fresh=True)
# bools: the implementation keeps bool, np.maximum(x, 0) of the generated code does not
# relu's and relu6's derivatives are masks by ``step``, whose own derivative is 0 and connected
# (TensorFlow's ReluGrad / Relu6Grad differentiate to zeros): so the second derivative through
# relu is zeros, not None, and an optimizer still steps a variable that only reaches the loss
# through a kink (a gradient penalty on a ReLU network's biases). 0/1 masks: the same bits as
# the comparison's cast.
def _step(x):
    """1 where x > 0, else 0 (NaN included), in x's dtype."""
    return xp.greater(x, 0).astype(np.result_type(x))


step_p     = unary("step", _step, lambda g, ans, x: zeros_like(g), emit="_step({0})",
                   dtype=_same)
relu_p     = unary("relu", _relu, lambda g, ans, x: g * step(x),
                   emit="np.maximum({0}, 0)", dtype=_relu_dtype, fresh=True)
abs_p      = unary("abs", xp.abs, _abs_vjp, jvp=_abs_jvp, complex="own")
# sign's derivative is 0, and connected (TensorFlow's SignGrad): the gradient of sign(x) is
# zeros, not None, so abs and anything else built on sign differentiate twice to zeros.
sign_p     = unary("sign", xp.sign, lambda g, ans, x: zeros_like(g), emit="np.sign({0})",
                   complex="own")
relu6_p    = unary("relu6", _relu6, lambda g, ans, x: g * (step(x) * step(6 - x)),
                   emit="_relu6({0})", dtype=_relu_dtype, fresh=True)


# leaky_relu: x where x > 0, else alpha * x (TensorFlow's LeakyRelu select), and its derivative
# a select on x > 0 (LeakyReluGrad) whose own derivative in x is a connected 0, as relu's.
def _leaky_relu(x, alpha):
    _require(x, "f", _LEAKY_NAMES, "LeakyRelu")
    return xp.where(x > 0, x, x * alpha)


def _leaky_relu_grad(g, x, alpha):
    _leaky_dtype(np.result_type(g), np.result_type(x))
    return xp.where(x > 0, g, g * alpha)


_LEAKY_NAMES = "bfloat16, half, float, double"


def _leaky_dtype(*dtypes):
    for d in dtypes:
        _require(d, "f", _LEAKY_NAMES, "LeakyRelu")
    return dtypes[0]


def _alpha_validate(*xs, alpha):
    if type(alpha) is not float:
        raise TypeError(f"leaky_relu: alpha must be a Python float, got {type(alpha).__name__}")


leaky_relu_p = Primitive(
    "leaky_relu", _leaky_relu, nin=1, emit="_leaky_relu({0}, {alpha})",
    vjp=(lambda g, ans, x, *, alpha: leaky_relu_grad(g, x, alpha),),
    jvp=(lambda t, ans, x, *, alpha: leaky_relu_grad(t, x, alpha),),
    abstract=elementwise(_leaky_dtype), elementwise=True, validate=_alpha_validate,
    batch=lambda args, batched, *, alpha: leaky_relu_p.bind_raw(args[0], alpha=alpha))
leaky_relu_grad_p = Primitive(
    "leaky_relu_grad", _leaky_relu_grad, nin=2, emit="_leaky_relu_grad({0}, {1}, {alpha})",
    vjp=(lambda ct, ans, g, x, *, alpha: leaky_relu_grad(ct, x, alpha),
         lambda ct, ans, g, x, *, alpha: zeros_like(x)),
    jvp=(lambda t, ans, g, x, *, alpha: leaky_relu_grad(t, x, alpha),
         lambda t, ans, g, x, *, alpha: zeros_like(ans)),
    abstract=elementwise(_leaky_dtype), elementwise=True, validate=_alpha_validate,
    batch=elementwise_batch("leaky_relu_grad"))

erf_p      = unary("erf", _erf, lambda g, ans, x: g * (2 / math.sqrt(math.pi)) * exp(-x * x),
                   emit="_erf({0})", dtype=_erf_dtype, fresh=True)

# ---- select: the condition gets no gradient -----------------------------------------------
where_p = Primitive(
    "where", xp.where, nin=3, fresh=True, emit="np.where({0}, {1}, {2})",
    vjp=(None,
         lambda g, ans, c, x, y: where(c, g, zeros_like(g)),
         lambda g, ans, c, x, y: where(c, zeros_like(g), g)),
    jvp=(None,
         lambda t, ans, c, x, y: where(c, t, zeros_like(t)),
         lambda t, ans, c, x, y: where(c, zeros_like(t), t)),
    abstract=lambda c, x, y: (broadcast_shapes(c.shape, x.shape, y.shape),
                              np.result_type(x.dtype, y.dtype)),
    batch=elementwise_batch("where"), elementwise=True, identities=identities.where,
    complex="real_linear")

# ---- no gradient --------------------------------------------------------------------------
floor_p    = nondiff("floor", xp.floor, 1, emit="np.floor({0})", batch="elementwise")
ceil_p     = nondiff("ceil", xp.ceil, 1, emit="np.ceil({0})", batch="elementwise")
round_p    = nondiff("round", xp.rint, 1, emit="np.rint({0})", batch="elementwise")
floordiv_p = nondiff("floordiv", _floordiv, 2, emit="_floordiv({0}, {1})",
                     batch="elementwise", abstract=elementwise(ufunc_dtype(np.floor_divide)))
# comparisons and logic: bool results, whatever the input dtype
_cmp = dict(batch="elementwise")  # the ufunc's rule: bool, where it has a loop
equal_p         = nondiff("equal", xp.equal, 2, emit="np.equal({0}, {1})", **_cmp)
not_equal_p     = nondiff("not_equal", xp.not_equal, 2, emit="np.not_equal({0}, {1})", **_cmp)
less_p          = nondiff("less", xp.less, 2, emit="np.less({0}, {1})", **_cmp)
less_equal_p    = nondiff("less_equal", xp.less_equal, 2, emit="np.less_equal({0}, {1})",
                          **_cmp)
greater_p       = nondiff("greater", xp.greater, 2, emit="np.greater({0}, {1})", **_cmp)
greater_equal_p = nondiff("greater_equal", xp.greater_equal, 2,
                          emit="np.greater_equal({0}, {1})", **_cmp)
logical_and_p   = nondiff("logical_and", xp.logical_and, 2, emit="np.logical_and({0}, {1})",
                          identities=identities.logical_and, **_cmp)
logical_or_p    = nondiff("logical_or", xp.logical_or, 2, emit="np.logical_or({0}, {1})",
                          identities=identities.logical_or, **_cmp)
logical_xor_p   = nondiff("logical_xor", xp.logical_xor, 2, emit="np.logical_xor({0}, {1})",
                          **_cmp)
logical_not_p   = nondiff("logical_not", xp.logical_not, 1, emit="np.logical_not({0})", **_cmp)
isnan_p         = nondiff("isnan", xp.isnan, 1, emit="np.isnan({0})", **_cmp)
isfinite_p      = nondiff("isfinite", xp.isfinite, 1, emit="np.isfinite({0})", **_cmp)
# fmt: on
