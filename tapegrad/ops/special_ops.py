"""``tf.math``'s special functions, zero-safe products and running products.

``asinh``, ``acosh``, ``atanh``, ``erfc``, ``lgamma``, ``digamma``, ``polygamma`` and
``multiply_no_nan`` are primitives (``primitives/special.py``); ``xlogy``, ``xdivy``,
``xlog1py`` and ``softsign`` are composed of primitives, with TensorFlow's values at 0, inf
and NaN, and its gradients; ``cumprod`` wraps the inclusive running-product primitive
(``primitives/scans.py``) in slices and pads for ``exclusive`` and ``reverse``.
"""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops import math_ops
from tapegrad.ops._convert import axis1, binary, tensor
from tapegrad.ops.array_ops import pad, zeros_like
from tapegrad.ops.math_ops import where
from tapegrad.primitives import elementwise, scans, special

_TF_NAMES = {"float16": "half", "float32": "float", "float64": "double", "bool": "bool"}
_FLOATS = "bfloat16, half, float, double"
_FLOATS_COMPLEX = _FLOATS + ", complex64, complex128"


def _require(x, kinds, allowed, op):
    """TensorFlow's error for a dtype its kernel does not take (ints are not converted)."""
    if x.dtype.kind not in kinds:
        name = _TF_NAMES.get(x.dtype.name, x.dtype.name)
        raise InvalidArgumentError(f"Value for attr 'T' of {name} is not in the list of "
                                   f"allowed values: {allowed} [Op:{op}]")
    return x


def _unary(prim, op, kinds, allowed, doc):
    def fn(x, name=None):
        return bind(prim, _require(tensor(x), kinds, allowed, op))
    fn.__name__ = prim.name
    fn.__doc__ = doc
    return fn


asinh = _unary(special.asinh_p, "Asinh", "fc", _FLOATS_COMPLEX,
               "Inverse hyperbolic sine.\n\n>>> import tapegrad as tf\n"
               ">>> float(tf.math.asinh(0.0))\n0.0")
acosh = _unary(special.acosh_p, "Acosh", "fc", _FLOATS_COMPLEX,
               "Inverse hyperbolic cosine (NaN below 1).\n\n>>> import tapegrad as tf\n"
               ">>> float(tf.math.acosh(1.0))\n0.0")
atanh = _unary(special.atanh_p, "Atanh", "fc", _FLOATS_COMPLEX,
               "Inverse hyperbolic tangent (+-inf at +-1, NaN beyond).\n\n"
               ">>> import tapegrad as tf\n>>> float(tf.math.atanh(0.0))\n0.0")
erfc = _unary(special.erfc_p, "Erfc", "f", _FLOATS,
              "The complementary error function 1 - erf(x), accurate where erf(x) is near 1."
              "\n\n>>> import tapegrad as tf\n>>> float(tf.math.erfc(0.0))\n1.0")
lgamma = _unary(special.lgamma_p, "Lgamma", "f", _FLOATS,
                "log |Gamma(x)| (inf at 0, -1, -2, ...); its derivative is digamma.\n\n"
                ">>> import tapegrad as tf\n>>> float(tf.math.lgamma(1.0))\n0.0")


def digamma(x, name=None):
    """The derivative of lgamma, psi(x) (NaN at 0, -1, -2, ..., as TensorFlow).

    >>> import tapegrad as tf
    >>> round(float(tf.math.digamma(1.0)), 5)   # minus Euler's constant
    -0.57722
    """
    return bind(special.polygamma_p, _require(tensor(x), "f", _FLOATS, "Digamma"), n=0)


def polygamma(a, x, name=None):
    """The polygamma function psi^(a)(x), the a-th derivative of digamma, for orders ``a``
    given as concrete non-negative integers (one for all of x, or one per element).

    >>> import tapegrad as tf
    >>> round(float(tf.math.polygamma(1.0, 1.0)), 5)   # pi ** 2 / 6
    1.64493
    """
    x = _require(tensor(x), "f", _FLOATS, "Polygamma")
    if x.dtype == np.float16:  # (digamma takes half, polygamma not)
        raise InvalidArgumentError("Value for attr 'T' of half is not in the list of allowed "
                                   "values: float, double [Op:Polygamma]")
    at = tensor(a)
    if getattr(at, "_symbolic", False):
        raise TypeError("polygamma: the order `a` must be a concrete tensor, not a traced one.")
    orders = np.asarray(at._value)
    if orders.dtype.kind not in "iuf" or not np.all(orders == np.floor(orders)) or \
            np.any(orders < 0):
        raise InvalidArgumentError(f"polygamma: the order `a` must hold non-negative integers, "
                                   f"got {orders.tolist()}.")
    if orders.ndim == 0 or np.all(orders == orders.reshape(-1)[0]):
        out = bind(special.polygamma_p, x, n=int(orders.reshape(-1)[0]) if orders.size else 0)
        return out if orders.ndim == 0 else out + zeros_like(tensor(orders, x.dtype))
    out = None  # one order per element: each order computed once, then selected
    for k in np.unique(orders):
        value = bind(special.polygamma_p, x, n=int(k))
        out = value if out is None else where(tensor(orders == k), value, out)
    return out + zeros_like(tensor(orders, x.dtype))


def multiply_no_nan(x, y, name=None):
    """x * y, and 0 wherever y is 0, even where x is inf or NaN (TensorFlow's gradients).

    >>> import tapegrad as tf
    >>> tf.math.multiply_no_nan([float("inf"), 2.0], [0.0, 3.0]).numpy().tolist()
    [0.0, 6.0]
    """
    x, y = binary(x, y)
    _require(x, "fc", _FLOATS_COMPLEX, "MulNoNan")
    return bind(special.mul_no_nan_p, x, y)


def _zero_where_x_is(x, y, f, op):
    """0 where x == 0 (whatever y is), else f(x, y): y is replaced by 1 where x == 0 and the
    result selected, so a NaN of f(0, y) stays out of the value and out of both gradients
    (TensorFlow's: d/dx is f(1, y) and d/dy is x f'(y), each 0 where x == 0)."""
    x, y = binary(x, y)
    _require(x, "fc", _FLOATS_COMPLEX, op)
    zero = math_ops.equal(x, 0)
    value = f(x, where(zero, 1, y))
    return where(zero, zeros_like(value), value)


def xlogy(x, y, name=None):
    """x * log(y), and 0 where x == 0 (even where y is 0 or NaN): an entropy term's rule.

    >>> import tapegrad as tf
    >>> tf.math.xlogy([0.0, 2.0], [0.0, 1.0]).numpy().tolist()
    [0.0, 0.0]
    """
    return _zero_where_x_is(x, y, lambda a, b: a * math_ops.log(b), "Xlogy")


def xdivy(x, y, name=None):
    """x / y, and 0 where x == 0 (even where y is 0 or NaN).

    >>> import tapegrad as tf
    >>> tf.math.xdivy([0.0, 3.0], [0.0, 2.0]).numpy().tolist()
    [0.0, 1.5]
    """
    return _zero_where_x_is(x, y, lambda a, b: a / b, "Xdivy")


def xlog1py(x, y, name=None):
    """x * log1p(y), and 0 where x == 0 (even where y is -1 or NaN).

    >>> import tapegrad as tf
    >>> tf.math.xlog1py([0.0, 1.0], [-1.0, 0.0]).numpy().tolist()
    [0.0, 0.0]
    """
    return _zero_where_x_is(x, y, lambda a, b: a * math_ops.log1p(b), "Xlog1py")


def softsign(features, name=None):
    """x / (1 + |x|) (NaN at +-inf, as TensorFlow); its gradient is 1 / (1 + |x|)^2
    (0 at +-inf, as TensorFlow's).

    >>> import tapegrad as tf
    >>> tf.nn.softsign([-1.0, 0.0, 3.0]).numpy().tolist()
    [-0.5, 0.0, 0.75]
    """
    x = _require(tensor(features), "f", "half, bfloat16, float, double", "Softsign")
    return bind(elementwise.softsign_p, x)


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running product along ``axis``; ``exclusive`` leaves each element out of its own
    product, ``reverse`` runs from the end. The gradient is exact where elements are zero.

    >>> import tapegrad as tf
    >>> tf.math.cumprod([1.0, 2.0, 3.0]).numpy().tolist()
    [1.0, 2.0, 6.0]
    >>> tf.math.cumprod([1.0, 2.0, 3.0], exclusive=True, reverse=True).numpy().tolist()
    [6.0, 3.0, 1.0]
    """
    x = tensor(x)
    if x.dtype.kind == "b":
        raise InvalidArgumentError("Value for attr 'T' of bool is not in the list of allowed "
                                   "values: float, double, int32, uint8, int16, int8, "
                                   "complex64, int64, qint8, quint8, qint32, bfloat16, "
                                   "uint16, complex128, half, uint32, uint64 [Op:Cumprod]")
    a = axis1(axis, x.ndim, "cumprod")
    flip = (slice(None),) * a + (slice(None, None, -1),)
    if reverse:
        x = x[flip]
    if not exclusive or x.shape[a] == 0:
        out = bind(scans.cumprod_p, x, axis=a)
    else:
        pads = [[0, 0]] * x.ndim
        pads[a] = [1, 0]
        head = x[(slice(None),) * a + (slice(None, -1),)]
        out = pad(bind(scans.cumprod_p, head, axis=a), pads, constant_values=1)
    return out[flip] if reverse else out


__all__ = ["asinh", "acosh", "atanh", "erfc", "lgamma", "digamma", "polygamma",
           "multiply_no_nan", "xlogy", "xdivy", "xlog1py", "softsign", "cumprod"]
