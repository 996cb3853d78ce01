"""``tf.math``'s Bessel functions, inverse error functions, incomplete gamma and beta
functions, Hurwitz zeta, ``lbeta`` and ``in_top_k``, with TensorFlow 2.21's dtypes and errors.

The functions TensorFlow has as kernels are primitives (``primitives/special_more.py``);
``erfinv``, ``erfcinv`` and ``lbeta`` are composed as TensorFlow composes them
(``erfinv(x) = ndtri((x + 1) / 2) / sqrt(2)``, so ``erfinv(1e-20)`` is 0 there too), and
``in_top_k`` is composed of comparisons and sums (it has no gradient).

>>> import tapegrad as tf
>>> round(float(tf.math.bessel_i0e(0.0)), 3)
1.0
"""
import math

import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError, NotFoundError
from tapegrad.ops import creation_ops, elementwise_ops as math_ops, reduction_ops, shape_ops
from tapegrad.ops._convert import tensor
from tapegrad.ops.special_ops import _FLOATS, _TF_NAMES, _require
from tapegrad.primitives import special_more

_REAL = "float, double"


def _no_half(x, op):
    """TensorFlow registers these kernels for float and double only: a half tensor passes the
    op's type check and then finds no kernel (NotFoundError)."""
    if x.dtype == np.float16:
        raise NotFoundError(f"Could not find device for node: {{{{node {op}}}}} = "
                            f"{op}[T=DT_HALF]\nAll kernels registered for op {op}:\n"
                            "  device='CPU'; T in [DT_DOUBLE]\n  device='CPU'; T in [DT_FLOAT]"
                            f" [Op:{op}]")
    return x


def _float_only(x, op):
    """Float and double only in the op's own type list (half is an InvalidArgumentError)."""
    if x.dtype.kind != "f" or x.dtype == np.float16:
        name = _TF_NAMES.get(x.dtype.name, x.dtype.name)
        raise InvalidArgumentError(f"Value for attr 'T' of {name} is not in the list of "
                                   f"allowed values: {_REAL} [Op:{op}]")
    return x


def _same_dtype(op, *xs):
    """TensorFlow gives Python numbers and NumPy values the first tensor's dtype and refuses
    two tensors of different dtypes (no promotion, not even float32 with float64)."""
    first = next((x for x in xs if isinstance(x, Tensor)), None)
    ref = tensor(xs[0]) if first is None else first
    out = [x if isinstance(x, Tensor) else _like(x, ref) for x in xs]
    for i, t in enumerate(out[1:], 1):
        if t.dtype != out[0].dtype:
            raise InvalidArgumentError(
                f"cannot compute {op} as input #{i}(zero-based) was expected to be a "
                f"{_TF_NAMES.get(out[0].dtype.name, out[0].dtype.name)} tensor but is a "
                f"{_TF_NAMES.get(t.dtype.name, t.dtype.name)} tensor [Op:{op}]")
    return out


def _like(x, t):
    from tapegrad.ops._convert import like
    return like(x, t)


def _unary(prim, op, *, half=True):
    def fn(x, name=None):
        x = _require(tensor(x), "f", _FLOATS, op)
        return bind(prim, x if half else _no_half(x, op))
    return fn


def _doc(fn, name, text):
    fn.__name__, fn.__qualname__, fn.__doc__ = name, name, text
    return fn


bessel_i0 = _doc(_unary(special_more.bessel_i0_p, "BesselI0"), "bessel_i0",
                 """The modified Bessel function of order 0, I0(x) (inf past |x| = 713.9).

    >>> import tapegrad as tf
    >>> round(float(tf.math.bessel_i0(1.0)), 6)
    1.266066
    """)
bessel_i0e = _doc(_unary(special_more.bessel_i0e_p, "BesselI0e"), "bessel_i0e",
                  """exp(-|x|) I0(x), finite for every x (0 at +-inf).

    >>> import tapegrad as tf
    >>> round(float(tf.math.bessel_i0e(1.0)), 6)
    0.46576
    """)
bessel_i1 = _doc(_unary(special_more.bessel_i1_p, "BesselI1"), "bessel_i1",
                 """The modified Bessel function of order 1, I1(x) (odd in x). Its gradient
    at x = 0 is TensorFlow's 1.0.

    >>> import tapegrad as tf
    >>> round(float(tf.math.bessel_i1(1.0)), 6)
    0.565159
    """)
bessel_i1e = _doc(_unary(special_more.bessel_i1e_p, "BesselI1e"), "bessel_i1e",
                  """exp(-|x|) I1(x), finite for every x.

    >>> import tapegrad as tf
    >>> round(float(tf.math.bessel_i1e(1.0)), 6)
    0.20791
    """)
ndtri = _doc(_unary(special_more.ndtri_p, "Ndtri", half=False), "ndtri",
             """The inverse of the standard normal distribution function: x with Phi(x) = p
    (-inf at 0, inf at 1, NaN outside [0, 1]).

    >>> import tapegrad as tf
    >>> round(float(tf.math.ndtri(0.975)), 6)
    1.959964
    """)


def erfinv(x, name=None):
    """The inverse error function, TensorFlow's ``ndtri((x + 1) / 2) / sqrt(2)`` (+-inf at
    +-1, NaN beyond).

    >>> import tapegrad as tf
    >>> round(float(tf.math.erfinv(0.5)), 6)
    0.476936
    """
    x = _no_half(_require(tensor(x), "f", _FLOATS, "Erfinv"), "Erfinv")
    return bind(special_more.ndtri_p, (x + 1) * 0.5) * math.sqrt(0.5)


def erfcinv(x, name=None):
    """The inverse complementary error function, TensorFlow's ``-ndtri(x / 2) / sqrt(2)``
    (inf at 0, -inf at 2, NaN outside [0, 2]).

    >>> import tapegrad as tf
    >>> round(float(tf.math.erfcinv(0.5)), 6)
    0.476936
    """
    x = tensor(x)
    half = _like(0.5, x)  # an int tensor: TensorFlow's TypeError converting 0.5 to it
    x = _no_half(_require(x, "f", _FLOATS, "Ndtri"), "Ndtri")
    return -bind(special_more.ndtri_p, half * x) * math.sqrt(0.5)


def lbeta(x, name=None):
    """log |B(x)| along the last axis: sum(lgamma(x)) - lgamma(sum(x)) (-inf for an empty
    last axis, as TensorFlow).

    >>> import tapegrad as tf
    >>> round(float(tf.math.lbeta([1.0, 2.0])), 6)   # log(1 / 2)
    -0.693147
    """
    from tapegrad.ops.special_ops import lgamma
    x = tensor(x)
    if x.ndim == 0:
        raise InvalidArgumentError("Invalid reduction dimension (-1 for input with 0 "
                                   "dimension(s) [Op:Sum]")
    log_prod = reduction_ops.reduce_sum(lgamma(x), axis=-1)
    return log_prod - lgamma(reduction_ops.reduce_sum(x, axis=-1))


def _binary(prim, op, check):
    def fn(a, x, name=None):
        a, x = _same_dtype(op, a, x)
        check(_require(a, "f", _FLOATS, op), op)
        return bind(prim, a, x)
    return fn


igamma = _doc(_binary(special_more.igamma_p, "Igamma", _no_half), "igamma",
              """The lower regularized incomplete gamma function P(a, x) (NaN for a <= 0 or
    x < 0). Its gradient in ``a`` is TensorFlow's ``IgammaGradA``, which has no gradient.

    >>> import tapegrad as tf
    >>> round(float(tf.math.igamma(1.0, 2.0)), 6)   # 1 - exp(-2)
    0.864665
    """)
igammac = _doc(_binary(special_more.igammac_p, "Igammac", _no_half), "igammac",
               """The upper regularized incomplete gamma function Q(a, x) = 1 - P(a, x).

    >>> import tapegrad as tf
    >>> round(float(tf.math.igammac(1.0, 2.0)), 6)   # exp(-2)
    0.135335
    """)
zeta = _doc(_binary(special_more.zeta_p, "Zeta", _float_only), "zeta",
            """The Hurwitz zeta function sum_k (q + k)^-x (inf at x = 1, NaN below). Its
    gradient in x is None (TensorFlow's), in q -x zeta(x + 1, q).

    >>> import tapegrad as tf
    >>> round(float(tf.math.zeta(2.0, 1.0)), 6)   # pi ** 2 / 6
    1.644934
    """)


def betainc(a, b, x, name=None):
    """The regularized incomplete beta function I_x(a, b). ``a``, ``b`` and ``x`` have one
    shape, or are scalars (TensorFlow broadcasts no further). Its gradient is in x only (None
    for a and b, as TensorFlow).

    >>> import tapegrad as tf
    >>> round(float(tf.math.betainc(1.0, 2.0, 0.5)), 6)   # 1 - (1 - x)^2
    0.75
    """
    a, b, x = _same_dtype("Betainc", a, b, x)
    _float_only(_require(a, "f", _FLOATS, "Betainc"), "Betainc")
    for name_, t in (("b", b), ("x", x)):
        if a.ndim and t.ndim and tuple(a.shape) != tuple(t.shape):
            raise InvalidArgumentError(f"Shapes of a and {name_} are inconsistent: "
                                       f"{list(a.shape)} vs. {list(t.shape)} [Op:Betainc]")
    if b.ndim and x.ndim and tuple(b.shape) != tuple(x.shape):
        raise InvalidArgumentError(f"Shapes of b and x are inconsistent: {list(b.shape)} vs. "
                                   f"{list(x.shape)} [Op:Betainc]")
    return bind(special_more.betainc_p, a, b, x)


def in_top_k(targets, predictions, k, name=None):
    """Whether each row's target class is among the ``k`` highest predictions: fewer than
    ``k`` classes score strictly higher (ties are in). False where the target is out of
    range or any prediction of the row is not finite (TensorFlow's InTopKV2).

    >>> import tapegrad as tf
    >>> tf.math.in_top_k([1, 0], [[0.1, 0.9], [0.3, 0.3]], 1).numpy().tolist()
    [True, True]
    """
    op = "[Op:InTopKV2]"
    # the kernel takes float32 predictions: other values are converted to float32, a tensor
    # of another dtype is refused; targets and k are int32 or int64 (a float array converted)
    p = predictions if isinstance(predictions, Tensor) else tensor(predictions, np.float32)
    if p.dtype != np.float32:
        raise InvalidArgumentError(
            "cannot compute InTopKV2 as input #0(zero-based) was expected to be a float "
            f"tensor but is a {_TF_NAMES.get(p.dtype.name, p.dtype.name)} tensor {op}")
    t = targets if isinstance(targets, Tensor) else tensor(np.asarray(targets).astype(
        np.int64 if np.asarray(targets).dtype == np.int64 else np.int32))
    kt = tensor(k)
    if p.ndim != 2:
        raise InvalidArgumentError(f"predictions must be 2-dimensional {op}")
    if t.ndim != 1:
        raise InvalidArgumentError(f"targets must be 1-dimensional {op}")
    if kt.ndim != 0:
        raise InvalidArgumentError(f"k must be 0-D, got shape {list(kt.shape)} {op}")
    if p.shape[0] != t.shape[0]:
        raise InvalidArgumentError(f"First dimension of predictions {p.shape[0]} must match "
                                   f"length of targets {t.shape[0]} {op}")
    n = p.shape[1]
    inside = math_ops.logical_and(t >= 0, t < n)
    safe = math_ops.where(inside, t, 0)
    hot = math_ops.equal(creation_ops.range(n)[None, :], shape_ops.cast(safe, "int32")[:, None])
    target_score = reduction_ops.reduce_max(math_ops.where(hot, p, -np.inf), axis=1)
    higher = reduction_ops.reduce_sum(
        shape_ops.cast(p > target_score[:, None], "int32"), axis=1)
    finite = reduction_ops.reduce_all(math_ops.is_finite(p), axis=1)
    count_ok = shape_ops.cast(higher, "int64") < shape_ops.cast(kt, "int64")
    return math_ops.logical_and(math_ops.logical_and(inside, finite), count_ok)


__all__ = ["bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e", "ndtri", "erfinv", "erfcinv",
           "lbeta", "igamma", "igammac", "zeta", "betainc", "in_top_k"]
