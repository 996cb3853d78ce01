"""More special functions: the modified Bessel functions I0 and I1 (and their scaled forms),
``ndtri``, the regularized incomplete gamma functions (and their derivative in ``a``), the
regularized incomplete beta function and the Hurwitz zeta function. One registry block each,
with TensorFlow's derivative rules (math_grad.py of TensorFlow 2.21), written in primitives
so they differentiate again. The kernels are NumPy (``special_kernels.py``), in float64, the
result rounded to the input's dtype.

TensorFlow's rules, kept here where they are not the calculus:

- ``bessel_i1``'s derivative at x = 0 is 1.0 (TensorFlow's imputed value; I1'(0) is 0.5,
  which ``bessel_i1e``'s rule does give), and both rules' second derivatives at 0 are NaN;
- ``zeta`` has no derivative in x, ``betainc`` none in a and b (None, as TensorFlow);
- ``igamma_grad_a`` (TensorFlow's ``IgammaGradA``) has no derivative: differentiating it
  raises TensorFlow's LookupError.

>>> import numpy as np
>>> round(float(_i0e(np.float64(0.0))), 6)
1.0
"""
import math

import numpy as np

from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.primitives import special_kernels as kernels
from tapegrad.primitives.api import equal, exp, log, sign, where
from tapegrad.primitives.families import binary, elementwise, elementwise_batch, unary
from tapegrad.primitives.special import _float_result, _real_float, lgamma_p


def _as_result(v, like):
    """The float64 result in the input's dtype (float32 overflows to inf, as TensorFlow's)."""
    with np.errstate(over="ignore"):
        return np.asarray(v).astype(_float_result(like), copy=False)


def _i0e(x):
    return _as_result(kernels.bessel_ie(x, 0), x)


def _i1e(x):
    return _as_result(kernels.bessel_ie(x, 1), x)


def _i0(x):
    """exp(|x|) i0e(x), as TensorFlow computes it: inf from |x| > 709.78 (where exp
    overflows), NaN at +-inf (inf * 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.exp(np.abs(np.asarray(x, np.float64))) * kernels.bessel_ie(x, 0)
    return _as_result(v, x)


def _i1(x):
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.exp(np.abs(np.asarray(x, np.float64))) * kernels.bessel_ie(x, 1)
    return _as_result(v, x)


def _ndtri(x):
    return _as_result(kernels.ndtri(x), x)


def _igamma(a, x):
    return _as_result(kernels.igamma(a, x)[0], np.result_type(a, x).type(0))


def _igammac(a, x):
    return _as_result(kernels.igamma(a, x, upper=True)[0], np.result_type(a, x).type(0))


def _igamma_grad_a(a, x):
    return _as_result(kernels.igamma(a, x)[1], np.result_type(a, x).type(0))


def _betainc(a, b, x):
    return _as_result(kernels.betainc(a, b, x), np.result_type(a, b, x).type(0))


def _zeta(x, q):
    return _as_result(kernels.zeta(x, q), np.result_type(x, q).type(0))


def _real_floats(*dtypes):
    return _real_float(np.result_type(*dtypes))


def _i1_slope(x, ans):
    """TensorFlow's d/dx I1(x): I0(x) - I1(x) / x, and 1.0 at x = 0 (its imputed value). The
    division is TensorFlow's too (0 / 0 in the unselected branch), so the second derivative
    at 0 is its NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return where(equal(x, 0), 1, bessel_i0_p.bind_raw(x) - ans / x)


def _i1e_slope(x, ans):
    """d/dx i1e(x) = i0e(x) - i1e(x) (sign(x) + 1 / x), and 0.5 at x = 0 (TensorFlow's rule,
    with its NaN second derivative at 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return where(equal(x, 0), 0.5, bessel_i0e_p.bind_raw(x) - ans * (sign(x) + 1 / x))


def _igamma_slope_x(a, x):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a), in logs (TensorFlow's form)."""
    return exp(-x + (a - 1) * log(x) - lgamma_p.bind_raw(a))


def _no_gradient(*args, **params):
    raise LookupError("gradient registry has no entry for: IgammaGradA")


def _betainc_slope_x(a, b, x):
    """d/dx I_x(a, b) = (1-x)^(b-1) x^(a-1) / B(a, b) in logs, with TensorFlow's xlog1py and
    xlogy: a term whose exponent is 0 is 0, whatever x is (so the tails at a = 1 or b = 1)."""
    log_beta = lgamma_p.bind_raw(a) + lgamma_p.bind_raw(b) - lgamma_p.bind_raw(a + b)
    b1, a1 = b - 1, a - 1
    tail_b = where(equal(b1, 0), 0, b1 * PRIMITIVES["log1p"].bind_raw(-where(equal(b1, 0), 0, x)))
    tail_a = where(equal(a1, 0), 0, a1 * log(where(equal(a1, 0), 1, x)))
    return exp(tail_b + tail_a - log_beta)


_ROOT_2PI = math.sqrt(2 * math.pi)

# fmt: off
# ---- modified Bessel functions of order 0 and 1, and exp(-|x|) times them ----------------
bessel_i0e_p = unary("bessel_i0e", _i0e,
                     lambda g, ans, x: g * (bessel_i1e_p.bind_raw(x) - sign(x) * ans),
                     emit="_i0e({0})", dtype=_real_float, fresh=True)
bessel_i1e_p = unary("bessel_i1e", _i1e, lambda g, ans, x: g * _i1e_slope(x, ans),
                     emit="_i1e({0})", dtype=_real_float, fresh=True)
bessel_i0_p = unary("bessel_i0", _i0, lambda g, ans, x: g * bessel_i1_p.bind_raw(x),
                    emit="_i0({0})", dtype=_real_float, fresh=True)
bessel_i1_p = unary("bessel_i1", _i1, lambda g, ans, x: g * _i1_slope(x, ans),
                    emit="_i1({0})", dtype=_real_float, fresh=True)

# ---- the inverse of the standard normal distribution function -----------------------------
ndtri_p = unary("ndtri", _ndtri, lambda g, ans, x: g * _ROOT_2PI * exp(ans * ans / 2),
                emit="_ndtri({0})", dtype=_real_float, fresh=True)

# ---- regularized incomplete gamma functions P(a, x), Q(a, x) = 1 - P, and dP/da ----------
igamma_p = binary("igamma", _igamma,
                  lambda g, ans, a, x: g * igamma_grad_a_p.bind_raw(a, x),
                  lambda g, ans, a, x: g * _igamma_slope_x(a, x),
                  emit="_igamma({0}, {1})", dtype=_real_floats, fresh=True)
igammac_p = binary("igammac", _igammac,
                   lambda g, ans, a, x: -(g * igamma_grad_a_p.bind_raw(a, x)),
                   lambda g, ans, a, x: -(g * _igamma_slope_x(a, x)),
                   emit="_igammac({0}, {1})", dtype=_real_floats, fresh=True)
igamma_grad_a_p = binary("igamma_grad_a", _igamma_grad_a, _no_gradient, _no_gradient,
                         emit="_igamma_grad_a({0}, {1})", dtype=_real_floats, fresh=True)

# ---- the Hurwitz zeta function: no derivative in x (TensorFlow's) --------------------------
zeta_p = binary("zeta", _zeta, None,
                lambda g, ans, x, q: g * (-x * zeta_p.bind_raw(x + 1, q)),
                emit="_zeta({0}, {1})", dtype=_real_floats, fresh=True)

# ---- the regularized incomplete beta function: a derivative in x only (TensorFlow's) -------
betainc_p = Primitive(
    "betainc", _betainc, nin=3, fresh=True, emit="_betainc({0}, {1}, {2})",
    vjp=(None, None, lambda g, ans, a, b, x: g * _betainc_slope_x(a, b, x)),
    jvp=(None, None, lambda t, ans, a, b, x: t * _betainc_slope_x(a, b, x)),
    abstract=elementwise(_real_floats), batch=elementwise_batch("betainc"), elementwise=True)
# fmt: on

EMIT_HELPERS = {"_i0e": _i0e, "_i1e": _i1e, "_i0": _i0, "_i1": _i1, "_ndtri": _ndtri,
                "_igamma": _igamma, "_igammac": _igammac, "_igamma_grad_a": _igamma_grad_a,
                "_zeta": _zeta, "_betainc": _betainc}
