"""Reductions (sum, max, mean, variance, logsumexp, norms, arg-extremes, cumulative sums)
with TensorFlow's names, signatures and dtype rules."""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.ops._convert import ALL_AXES, axes, axis1, cast, tensor
from tapegrad.ops._kinds import NUMBERS, REAL, require, require_bool
from tapegrad.primitives import reductions
from tapegrad.primitives import shape as shape_prims
from tapegrad.ops.elementwise_ops import (  # abs, complex: tf.math's, not the builtins
    abs, complex, exp, floordiv, imag, is_finite, log, maximum, multiply, not_equal, real,
    rsqrt, sign, sqrt, square, squared_difference, where)


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
    shape = x._raw_shape  # x is a tensor (a TensorShape's [a] is Python code)
    for a in ax:
        n *= shape[a]
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
    n = _count(x, ax)
    if type(n) is int and n == 1:
        # a mean of one element (a loss's mean over a last axis of size 1): the element
        # itself, which TensorFlow copies too (no division: the same bits, NaN included),
        # in one view instead of a sum and a division
        shape = tuple(x.shape) if keepdims else tuple(
            d for i, d in enumerate(x.shape) if i not in ax)
        return bind(shape_prims.reshape_p, x, shape=shape)
    s = bind(reductions.reduce_sum_p, x, axis=ax, keepdims=bool(keepdims))
    if n == 0:  # (a guard where n is a symbolic size) TensorFlow's mean over nothing is
        # +nan for floats (0 / 0 is -nan on x86) and 0 for complex numbers
        return s if x.dtype.kind == "c" else s + np.nan
    return s / n


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
    if getattr(x, "_symbolic", False):  # traced: a max of the bools as int8 (-128: nothing)
        return reduce_max(cast(x, "int8"), axis=axis, keepdims=keepdims) > 0
    return tensor(np.any(np.asarray(x._value), axis=axes(axis, x.ndim), keepdims=keepdims))


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """Logical and over ``axis`` (all axes by default).

    >>> import tapegrad as tf
    >>> tf.reduce_all([[True, True], [False, True]], axis=1).numpy().tolist()
    [True, False]
    """
    x = tensor(input_tensor)
    require_bool(x, "All")
    if getattr(x, "_symbolic", False):  # traced: a min of the bools as int8 (127: nothing)
        return reduce_min(cast(x, "int8"), axis=axis, keepdims=keepdims) > 0
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


# The public ops are the functions defined here: `from ... import *` must not re-export helpers
# (NumPy, primitive modules, conversion functions) into tapegrad's namespaces.
__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and callable(_v) and getattr(_v, "__module__", "") == __name__]
