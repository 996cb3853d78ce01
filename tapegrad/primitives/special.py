"""Special functions: inverse hyperbolics, ``erfc``, ``lgamma``, ``polygamma`` (``digamma``
is its order 0) and ``mul_no_nan``. One registry block each, with TensorFlow's derivatives.

SciPy is an optional extra: with it ``erfc``, ``lgamma`` and ``polygamma`` are SciPy's; without
it they fall back to ``math.erfc`` and ``math.lgamma`` per element and to a recurrence and
asymptotic series for ``polygamma`` (``_polygamma_series``), in float64, then rounded to the
input's dtype. Both give TensorFlow's values at the poles (``lgamma``: inf; ``digamma``: NaN).

>>> import numpy as np
>>> round(float(_polygamma(np.float64(1.0), 0)), 6)   # digamma(1) = -Euler's constant
-0.577216
"""
import math

import numpy as np

from tapegrad.core.dispatch import Primitive
from tapegrad.primitives.api import cosh, exp, sinh
from tapegrad.primitives.families import elementwise, elementwise_batch, binary, unary, xp
from tapegrad.primitives.params import check_int

try:  # SciPy's special functions are exact and vectorised; the fallbacks below are not fast
    from scipy import special as _scipy_special
except ImportError:  # pragma: no cover - depends on the environment
    _scipy_special = None


def _real_float(d):
    """The output dtype of the special functions: floats keep theirs, ints give float64 (as
    NumPy); complex and bool inputs have no SciPy loop (TensorFlow takes floats only)."""
    if d.kind not in "iuf":
        raise TypeError(f"{d.name} inputs are not supported (real numbers only)")
    return np.result_type(d, np.float16)


def _float_result(x):
    """The dtype results take: the input's float dtype (ints compute in float64, as NumPy)."""
    return np.result_type(np.asarray(x).dtype, np.float16)


def _as_result(v, x):
    return np.asarray(v).astype(_float_result(x), copy=False)


_erfc_scalar = np.frompyfunc(math.erfc, 1, 1)


def _lgamma_scalar(v):
    try:
        return math.lgamma(v)
    except ValueError:  # a pole (0, -1, -2, ...): log |Gamma| is inf there, as TensorFlow
        return math.inf


_lgamma_scalars = np.frompyfunc(_lgamma_scalar, 1, 1)


def _erfc(x):
    """1 - erf(x), without the cancellation of that difference for large x."""
    x = np.asarray(x)
    if _scipy_special is not None:
        return _as_result(_scipy_special.erfc(x), x)
    return _as_result(_erfc_scalar(x.astype(np.float64)).astype(np.float64), x)


def _lgamma(x):
    """log |Gamma(x)|; inf at the poles 0, -1, -2, ... (and at -0.0, and at -inf)."""
    x = np.asarray(x)
    if _scipy_special is not None:  # SciPy gives -inf at -inf; TensorFlow (and math) inf
        return _as_result(np.where(x == -np.inf, np.inf, _scipy_special.gammaln(x)), x)
    return _as_result(_lgamma_scalars(x.astype(np.float64)).astype(np.float64), x)


# B_2, B_4, ..., B_16: the Bernoulli numbers of the asymptotic series of the polygamma functions
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_SERIES_FROM = 12.0  # the series is summed at z >= this, where its terms fall below 1e-17


def _polygamma_series(n, x):
    """psi^(n)(x) in float64 from the recurrence psi^(n)(z) = psi^(n)(z + 1) - (-1)^n n! /
    z^(n+1), which moves z up to ``_SERIES_FROM``, and the asymptotic series there. Order 0
    reflects x < 1/2 first (psi(x) = psi(1 - x) - pi / tan(pi x)). NaN at the poles."""
    x = np.asarray(x, np.float64)
    finite = np.isfinite(x)
    reflect = finite & (x < 0.5) if n == 0 else np.zeros(x.shape, bool)
    z = np.where(reflect, 1.0 - x, x)
    acc = np.zeros(x.shape)
    sign = -1.0 if n % 2 else 1.0  # (-1)^n
    fact = math.factorial(n)
    low = finite & (z < _SERIES_FROM)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        while low.any():
            acc = np.where(low, acc - sign * fact / z ** (n + 1), acc)
            z = np.where(low, z + 1.0, z)
            low &= z < _SERIES_FROM
        zz = 1.0 / (z * z)
        if n == 0:
            series = np.log(z) - 0.5 / z
            p = zz
            for k, b in enumerate(_BERNOULLI, 1):
                series = series - b / (2 * k) * p
                p = p * zz
        else:
            series = math.factorial(n - 1) / z ** n + fact / (2 * z ** (n + 1))
            p = 1.0 / z ** (n + 2)
            for k, b in enumerate(_BERNOULLI, 1):
                series = series + b * math.factorial(2 * k + n - 1) / math.factorial(2 * k) * p
                p = p * zz
            series = -sign * series  # (-1)^(n+1)
        out = acc + series
        if n == 0:
            out = np.where(reflect, out - math.pi / np.tan(math.pi * x), out)
            out = np.where(x == np.inf, np.inf, out)
        else:
            out = np.where(x == np.inf, -sign * 0.0, out)  # 0 with the sign of (-1)^(n+1)
    return out


def _polygamma(x, n):
    """The polygamma function of order ``n`` (``n = 0``: digamma), with TensorFlow's values
    at the poles."""
    x = np.asarray(x)
    if _scipy_special is not None:
        v = _scipy_special.digamma(x) if n == 0 else _scipy_special.polygamma(n, x)
    else:
        v = _polygamma_series(n, x)
    # TensorFlow's values at the poles 0, -1, ... and at -inf: inf for odd orders, NaN for
    # even ones (SciPy gives -inf for digamma at 0 and for even orders)
    with np.errstate(invalid="ignore"):
        pole = (x <= 0) & (x == np.floor(x))
    v = np.where(pole, np.inf if n % 2 else np.nan, v)
    return _as_result(v, x)


def _polygamma_validate(x, *, n):
    check_int("polygamma", "n", n, 0, 64)


def _mul_no_nan(x, y):
    """x * y, and 0 (+0.0) wherever y == 0, even where x is inf or NaN (TensorFlow's MulNoNan)."""
    with np.errstate(invalid="ignore"):  # inf * 0 is replaced by 0 just below
        out = xp.multiply(x, y)
    return xp.where(xp.equal(y, 0), xp.zeros((), out.dtype), out)


def _mul_no_nan_of(x, y):
    return mul_no_nan_p.bind_raw(x, y)


# fmt: off
# ---- inverse hyperbolic functions: TensorFlow's gradients, in terms of the output ---------
asinh_p = unary("asinh", xp.arcsinh, lambda g, ans, x: g / cosh(ans), complex="holomorphic")
acosh_p = unary("acosh", xp.arccosh, lambda g, ans, x: g / sinh(ans), complex="holomorphic")
atanh_p = unary("atanh", xp.arctanh, lambda g, ans, x: g / (1 - x * x), complex="holomorphic")

# ---- the complementary error function and the gamma family --------------------------------
erfc_p = unary("erfc", _erfc, lambda g, ans, x: g * (-2 / math.sqrt(math.pi)) * exp(-x * x),
               emit="_erfc({0})", dtype=_real_float, fresh=True)
lgamma_p = unary("lgamma", _lgamma, lambda g, ans, x: g * polygamma_p.bind_raw(x, n=0),
                 emit="_lgamma({0})", dtype=_real_float, fresh=True)
polygamma_p = Primitive(
    "polygamma", _polygamma, nin=1, fresh=True, emit="_polygamma({0}, {n})",
    vjp=(lambda g, ans, x, *, n: g * polygamma_p.bind_raw(x, n=n + 1),),
    jvp=(lambda t, ans, x, *, n: t * polygamma_p.bind_raw(x, n=n + 1),),
    abstract=elementwise(_real_float),
    validate=_polygamma_validate, batch=elementwise_batch("polygamma"), elementwise=True,
    value_params=("n",))

# ---- x * y with 0 where y == 0 (TensorFlow's MulNoNan and its gradients) -------------------
mul_no_nan_p = binary("mul_no_nan", _mul_no_nan,
                      lambda g, ans, x, y: _mul_no_nan_of(g, y),
                      lambda g, ans, x, y: _mul_no_nan_of(x, g),
                      emit="_mul_no_nan({0}, {1})", dtype=lambda a, b: np.result_type(a, b),
                      fresh=True)
# fmt: on

EMIT_HELPERS = {"_erfc": _erfc, "_lgamma": _lgamma, "_polygamma": _polygamma,
                "_mul_no_nan": _mul_no_nan}
