"""``tf.math.cumulative_logsumexp``, composed of differentiable ops: a log-space prefix
sum by doubling (``log2(n)`` passes of a safe ``logaddexp`` of the values and their shift),
so no value is exponentiated far from its neighbours and the result is exact where a
single max-shift would underflow (``[0, 1000]``)."""
import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.ops import array_ops
from tapegrad.ops import math_ops
from tapegrad.ops._convert import tensor

__all__ = ["cumulative_logsumexp"]


def _logaddexp(a, b):
    # log(exp(a) + exp(b)); where both are -inf the result is -inf, with finite
    # intermediates (no inf - inf), so the gradient is 0 there, not NaN
    hi = math_ops.maximum(a, b)
    both = math_ops.logical_and(math_ops.equal(a, -np.inf), math_ops.equal(b, -np.inf))
    zero = array_ops.zeros_like(a)
    a, b = math_ops.where(both, zero, a), math_ops.where(both, zero, b)
    diff = math_ops.abs(math_ops.subtract(a, b))
    out = math_ops.add(hi, math_ops.log1p(math_ops.exp(math_ops.negative(diff))))
    return math_ops.where(both, hi, out)


def _shift(x, k, axis, n):
    # x moved k places along axis, -inf coming in at the front
    rest = array_ops.gather(x, np.arange(n - k), axis=axis)
    shape = list(x.shape)
    shape[axis] = k
    front = array_ops.fill(shape, np.array(-np.inf, x.dtype.name))
    return array_ops.concat([front, rest], axis=axis)


def cumulative_logsumexp(x, axis=0, exclusive=False, reverse=False, name=None):
    """``log(cumsum(exp(x)))`` along ``axis``, computed stably (floats only); ``exclusive``
    leaves each element out of its own sum (the first is ``-inf``), ``reverse`` sums from
    the end.

    >>> import tapegrad as tf
    >>> [round(float(v), 4) for v in tf.math.cumulative_logsumexp([0.0, 0.0, 1000.0])]
    [0.0, 0.6931, 1000.0]
    """
    x = tensor(x)
    if x.dtype.kind != "f":
        raise InvalidArgumentError(
            f"Value for attr 'T' of {x.dtype.name} is not in the list of allowed values: "
            "bfloat16, half, float, double")
    axis = int(axis)
    nd = max(x.ndim, 1)
    if not -nd <= axis < nd:
        raise InvalidArgumentError(f"ScanOp: Expected scan axis in the range [{-nd}, {nd}), "
                                   f"but got {axis}")
    if x.ndim == 0:
        return x if not exclusive else array_ops.fill([], np.array(-np.inf, x.dtype.name))
    axis %= x.ndim
    n = x.shape[axis]
    if n == 0:
        return x
    if reverse:
        x = array_ops.reverse(x, [axis])
    if exclusive:
        x = _shift(x, 1, axis, n)
    k = 1
    while k < n:
        x = _logaddexp(x, _shift(x, k, axis, n))
        k *= 2
    return array_ops.reverse(x, [axis]) if reverse else x
