"""``tf.math``'s segment reductions: rows of ``data`` reduced per segment id.

The ``unsorted_*`` forms take any ids (a negative id drops its row) and ``num_segments``, so
they trace: a message-passing step under ``tf.function`` can use them. Their ids index the
leading axes of ``data``. The sorted forms take sorted, non-negative 1-D ids whose values
set the number of segments (max id + 1), so those must be concrete; empty segments give 0
there (1 for the product), the identity of the reduction in the unsorted forms (the lowest
value of the dtype for max, the highest for min: TensorFlow's kernels).

Sums are ``take_add`` (a scatter, whose gradient is a gather); max, min and product are the
primitives of ``primitives/segments.py``; means divide the sums by the row counts.

>>> import tapegrad as tf
>>> tf.math.unsorted_segment_mean([1.0, 2.0, 6.0], [0, 1, 0], num_segments=2).numpy().tolist()
[3.5, 2.0]
"""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops import math_ops
from tapegrad.ops._convert import tensor
from tapegrad.ops.array_ops import ones, reshape, zeros_like
from tapegrad.primitives import segments
from tapegrad.primitives.bounds import check_indices_p
from tapegrad.primitives.gather import take_add_p


def _num(num_segments):
    if getattr(num_segments, "_symbolic", False):  # it sets the output's shape
        raise TypeError("num_segments must be a concrete integer (it sets the output's "
                        "shape), not a traced tensor: pass a Python int to tf.function's "
                        "function instead.")
    n = num_segments._value if isinstance(num_segments, Tensor) else num_segments
    n = np.asarray(n)
    if n.ndim != 0 or n.dtype.kind not in "iu":
        raise TypeError(f"num_segments must be an integer scalar, got {num_segments!r}.")
    if int(n) < 0:
        raise InvalidArgumentError(f"num_segments must be >= 0, got {int(n)}")
    return int(n)


def _args(data, segment_ids, op):
    x, ids = tensor(data), tensor(segment_ids)
    if ids.dtype.name not in ("int32", "int64"):
        raise TypeError(f"{op}: segment_ids must be int32 or int64, got {ids.dtype.name}.")
    if ids.ndim > x.ndim or tuple(x.shape[:ids.ndim]) != tuple(ids.shape):
        raise InvalidArgumentError(f"data.shape = {list(x.shape)} does not start with "
                                   f"segment_ids.shape = {list(ids.shape)} [Op:{op}]")
    return x, ids


def _concrete(ids):
    return None if getattr(ids, "_symbolic", False) else np.asarray(ids._value)


def _sum(x, ids, n):
    iv = _concrete(ids)
    if iv is not None:
        segments.check_segment_ids(iv, n)
        if not (iv < 0).any():  # no rows dropped: the scatter itself
            return bind(take_add_p, x, ids, axis=0, size=n)
    else:  # traced ids: checked when the program runs (TensorFlow's error)
        ids = bind(check_indices_p, ids, bound=(n,), what="segment")
    return segments.segment_sum(x, ids, n)


def _counts(x, ids, n):
    """Rows per segment, shaped to divide the segment sums, in x's dtype (at least 1)."""
    c = _sum(ones(tuple(ids.shape), x.dtype), ids, n)
    c = reshape(c, (n,) + (1,) * (x.ndim - ids.ndim))
    return math_ops.maximum(c, 1)


def _mean(x, ids, n, truncate=True):
    s = _sum(x, ids, n)
    c = _counts(x, ids, n)
    if truncate and x.dtype.kind == "u":  # TensorFlow's SegmentMean truncates toward zero
        return math_ops.floordiv(s, c)
    if truncate and x.dtype.kind == "i":
        return math_ops.multiply(math_ops.floordiv(math_ops.abs(s), c), math_ops.sign(s))
    return s / c  # (integers: TensorFlow's unsorted mean is summed / N, a true division)


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """The sum of the rows of each segment (0 for an empty one; negative ids dropped).

    >>> import tapegrad as tf
    >>> tf.math.unsorted_segment_sum([1.0, 2.0, 3.0], [1, 0, 1], 3).numpy().tolist()
    [2.0, 4.0, 0.0]
    """
    x, ids = _args(data, segment_ids, "UnsortedSegmentSum")
    return _sum(x, ids, _num(num_segments))


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """The mean of the rows of each segment (0 for an empty one; negative ids dropped)."""
    x, ids = _args(data, segment_ids, "UnsortedSegmentMean")
    return _mean(x, ids, _num(num_segments), truncate=False)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum of each segment's rows over the square root of their number (0 for an
    empty segment; negative ids dropped).

    >>> import tapegrad as tf
    >>> tf.math.unsorted_segment_sqrt_n([1.0, 3.0, 2.0], [0, 0, 1], 2).numpy().tolist()
    [2.8284270763397217, 2.0]
    """
    x, ids = _args(data, segment_ids, "UnsortedSegmentSqrtN")
    if x.dtype.kind != "f":
        raise InvalidArgumentError(f"Value for attr 'T' of {x.dtype.name} is not in the list of "
                                   f"allowed values: bfloat16, half, float, double "
                                   f"[Op:UnsortedSegmentSqrtN]")
    n = _num(num_segments)
    return _sum(x, ids, n) / math_ops.sqrt(_counts(x, ids, n))


def _unsorted(prim, op):
    def fn(data, segment_ids, num_segments, name=None):
        x, ids = _args(data, segment_ids, op)
        n = _num(num_segments)
        iv = _concrete(ids)
        if iv is not None:
            segments.check_segment_ids(iv, n)
        return bind(prim, x, ids, num_segments=n)
    return fn


unsorted_segment_max = _unsorted(segments.unsorted_segment_max_p, "UnsortedSegmentMax")
unsorted_segment_max.__name__ = "unsorted_segment_max"
unsorted_segment_max.__doc__ = """The maximum of each segment's rows; an empty segment holds
    the lowest value of the dtype. The gradient goes to the elements equal to the maximum
    (shared among ties).

    >>> import tapegrad as tf
    >>> tf.math.unsorted_segment_max([1.0, 5.0, 2.0], [0, 0, 1], 2).numpy().tolist()
    [5.0, 2.0]
    """
unsorted_segment_min = _unsorted(segments.unsorted_segment_min_p, "UnsortedSegmentMin")
unsorted_segment_min.__name__ = "unsorted_segment_min"
unsorted_segment_min.__doc__ = """The minimum of each segment's rows; an empty segment holds
    the highest value of the dtype.

    >>> import tapegrad as tf
    >>> tf.math.unsorted_segment_min([1.0, 5.0, 2.0], [0, 0, 1], 2).numpy().tolist()
    [1.0, 2.0]
    """
unsorted_segment_prod = _unsorted(segments.unsorted_segment_prod_p, "UnsortedSegmentProd")
unsorted_segment_prod.__name__ = "unsorted_segment_prod"
unsorted_segment_prod.__doc__ = """The product of each segment's rows (1 for an empty one).

    >>> import tapegrad as tf
    >>> tf.math.unsorted_segment_prod([2.0, 5.0, 3.0], [0, 0, 1], 2).numpy().tolist()
    [10.0, 3.0]
    """


def _sorted_ids(data, segment_ids, op):
    """Checked 1-D sorted ids and their number of segments (TensorFlow's errors)."""
    x, ids = tensor(data), tensor(segment_ids)
    if ids.dtype.name not in ("int32", "int64"):
        raise TypeError(f"{op}: segment_ids must be int32 or int64, got {ids.dtype.name}.")
    iv = _concrete(ids)
    if iv is None:
        raise TypeError(f"{op}: the sorted segment ops need concrete segment_ids (their values "
                        f"set the output's size); under tf.function use "
                        f"unsorted_{op_name(op)}(data, segment_ids, num_segments).")
    if ids.ndim != 1 or x.ndim == 0 or x.shape[0] != ids.shape[0]:
        raise InvalidArgumentError(f"segment_ids should be the same size as dimension 0 of "
                                   f"input. [Op:{op}]")
    if iv.size and iv.min() < 0:
        k = int(np.flatnonzero(iv < 0)[0])
        raise InvalidArgumentError(f"Segment id {int(iv[k])} out of range [0, {int(iv.max()) + 1})"
                                   f", possibly because 'segment_ids' input is not sorted. "
                                   f"[Op:{op}]")
    if iv.size > 1 and (np.diff(iv) < 0).any():
        raise InvalidArgumentError(f"segment ids are not increasing [Op:{op}]")
    return x, ids, int(iv[-1]) + 1 if iv.size else 0


def op_name(op):
    """``SegmentMax`` -> ``segment_max``."""
    return "".join("_" + c.lower() if c.isupper() else c for c in op).lstrip("_")


def _empty_to_zero(out, x, ids, n):
    """0 where a segment has no rows (the sorted ops' rule for max and min)."""
    c = reshape(_sum(ones(tuple(ids.shape), x.dtype), ids, n), (n,) + (1,) * (x.ndim - 1))
    return math_ops.where(c > 0, out, zeros_like(out))


def segment_sum(data, segment_ids, name=None):
    """The sum of each segment's rows, for sorted ids (``max(ids) + 1`` segments).

    >>> import tapegrad as tf
    >>> tf.math.segment_sum([1.0, 2.0, 3.0], [0, 0, 2]).numpy().tolist()
    [3.0, 0.0, 3.0]
    """
    x, ids, n = _sorted_ids(data, segment_ids, "SegmentSum")
    return _sum(x, ids, n)


def segment_mean(data, segment_ids, name=None):
    """The mean of each segment's rows, for sorted ids (0 for an empty segment)."""
    x, ids, n = _sorted_ids(data, segment_ids, "SegmentMean")
    return _mean(x, ids, n)


def segment_max(data, segment_ids, name=None):
    """The maximum of each segment's rows, for sorted ids (0 for an empty segment)."""
    x, ids, n = _sorted_ids(data, segment_ids, "SegmentMax")
    return _empty_to_zero(bind(segments.unsorted_segment_max_p, x, ids, num_segments=n), x, ids, n)


def segment_min(data, segment_ids, name=None):
    """The minimum of each segment's rows, for sorted ids (0 for an empty segment)."""
    x, ids, n = _sorted_ids(data, segment_ids, "SegmentMin")
    return _empty_to_zero(bind(segments.unsorted_segment_min_p, x, ids, num_segments=n), x, ids, n)


def segment_prod(data, segment_ids, name=None):
    """The product of each segment's rows, for sorted ids (1 for an empty segment)."""
    x, ids, n = _sorted_ids(data, segment_ids, "SegmentProd")
    return bind(segments.unsorted_segment_prod_p, x, ids, num_segments=n)


__all__ = ["unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_sqrt_n", "unsorted_segment_max",
           "unsorted_segment_min", "unsorted_segment_prod", "segment_sum", "segment_mean",
           "segment_max", "segment_min", "segment_prod"]
