"""``tf.math.polyval``, ``tf.math.confusion_matrix``, ``tf.searchsorted`` and
``tf.histogram_fixed_width`` (with ``_bins``), composed of other ops with TensorFlow 2.21's
dtypes, values and errors. Composed, they trace, batch and (``polyval``) differentiate as
their parts do; the integer results have no gradient, as in TensorFlow."""
import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops import array_ops
from tapegrad.ops import math_ops
from tapegrad.ops._convert import tensor
from tapegrad.ops.framework_ops import get_static_value
from tapegrad.ops.scatter_ops import scatter_nd

__all__ = ["polyval", "confusion_matrix", "searchsorted", "histogram_fixed_width",
           "histogram_fixed_width_bins"]


def polyval(coeffs, x, name=None):
    """The polynomial ``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` by Horner's rule;
    ``coeffs`` is a list (of numbers or tensors), as TensorFlow requires.

    >>> import tapegrad as tf
    >>> tf.math.polyval([2.0, 3.0, 4.0], tf.constant([1.0, 2.0])).numpy().tolist()
    [9.0, 18.0]
    """
    if not isinstance(coeffs, list):
        raise ValueError(f"Argument coeffs must be list type. Received type {type(coeffs)}.")
    x = tensor(x)
    if not coeffs:
        return array_ops.zeros_like(x)
    p = math_ops.add(array_ops.zeros_like(x), tensor(coeffs[0], x.dtype))
    for c in coeffs[1:]:
        p = math_ops.add(tensor(c, x.dtype), math_ops.multiply(p, x))
    return p


def _check_concrete(t, check, message):
    value = get_static_value(t)
    if value is not None and value.size and not check(value):
        raise InvalidArgumentError(message)


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=_dt.int32,
                     name=None):
    """The ``[num_classes, num_classes]`` matrix counting (or summing ``weights`` over) each
    (label, prediction) pair; rows are labels. ``num_classes`` defaults to the largest
    class seen plus one.

    >>> import tapegrad as tf
    >>> tf.math.confusion_matrix([1, 2, 2], [2, 2, 0], num_classes=3).numpy().tolist()
    [[0, 0, 0], [0, 0, 1], [1, 0, 1]]
    """
    labels = array_ops.cast(tensor(labels), _dt.int64)
    predictions = array_ops.cast(tensor(predictions), _dt.int64)
    if tuple(labels.shape) != tuple(predictions.shape):
        raise InvalidArgumentError(
            f"Shapes of all inputs must match: values[0].shape = {list(labels.shape)} != "
            f"values[1].shape = {list(predictions.shape)} [Op:Pack] name: stack")
    for what, t in (("labels", labels), ("predictions", predictions)):
        _check_concrete(t, lambda v: v.min() >= 0,
                        f"`{what}` contains negative values.  Condition x >= 0 did not hold "
                        "element-wise.")
    if num_classes is None:
        n = math_ops.add(math_ops.maximum(math_ops.reduce_max(labels), math_ops.reduce_max(predictions)), 1)
        n_static = get_static_value(n)
        if n_static is None:
            raise ValueError("confusion_matrix without num_classes needs labels and "
                             "predictions whose values are known (not inside tf.function).")
        n = int(n_static) if labels.shape.num_elements() else 0
    else:
        n = int(get_static_value(tensor(num_classes)))
        for what, t in (("labels", labels), ("predictions", predictions)):
            _check_concrete(t, lambda v: v.max() < n,
                            f"`{what}` out of bound  Condition x < y did not hold.")
    dtype = _dt.as_dtype(dtype)
    if weights is None:
        updates = array_ops.ones_like(labels, dtype=dtype)
    else:
        updates = array_ops.cast(tensor(weights), dtype)
    indices = array_ops.stack([array_ops.reshape(labels, [-1]), array_ops.reshape(predictions, [-1])], axis=1)
    return scatter_nd(indices, array_ops.reshape(updates, [-1]), np.array([n, n], np.int64))


def _tf_type(dtype):
    # TensorFlow's kernel errors name types by their C names
    name = _dt.as_dtype(dtype).name
    return {"float32": "float", "float64": "double", "float16": "half"}.get(name, name)


def searchsorted(sorted_sequence, values, side="left", out_type=_dt.int32, name=None):
    """For each value, the index in the innermost axis of ``sorted_sequence`` where it
    would be inserted to keep the order: before equal entries (``side='left'``) or after
    them (``'right'``). Leading axes are a batch, the same in both.

    >>> import tapegrad as tf
    >>> tf.searchsorted([0.0, 3.0, 9.0, 9.0, 10.0], [2.0, 9.0, 11.0]).numpy().tolist()
    [1, 2, 5]
    """
    if side not in ("left", "right"):
        raise ValueError("Argument `side` must be either 'right' or 'left'. Received: "
                         f"`side` = '{side}'.")
    s, v = tensor(sorted_sequence), tensor(values)
    op = "LowerBound" if side == "left" else "UpperBound"
    if s.dtype != v.dtype:
        raise InvalidArgumentError(
            f"cannot compute {op} as input #1(zero-based) was expected to be a "
            f"{_tf_type(s.dtype)} tensor but is a {_tf_type(v.dtype)} tensor [Op:{op}]")
    if s.ndim == 0 or v.ndim == 0 or tuple(s.shape[:-1]) != tuple(v.shape[:-1]):
        raise InvalidArgumentError(f"Leading dim_size of both tensors must match. [Op:{op}]")
    # count, per value, the entries before which it goes: a comparison of every pair
    below = math_ops.less(array_ops.expand_dims(s, -2), array_ops.expand_dims(v, -1)) if side == "left" else \
        math_ops.less_equal(array_ops.expand_dims(s, -2), array_ops.expand_dims(v, -1))
    return math_ops.reduce_sum(array_ops.cast(below, out_type), axis=-1)


def _checked(values, value_range, nbins, op):
    if isinstance(nbins, (int, np.integer)) and nbins <= 0:
        raise InvalidArgumentError(f"nbins should be a positive number, but got '{nbins}' "
                                   f"[Op:{op}]")
    values = tensor(values)
    value_range = tensor(value_range, values.dtype)
    r = get_static_value(value_range)
    if r is not None and not r[0] < r[1]:
        raise InvalidArgumentError("value_range should satisfy value_range[0] < "
                                   f"value_range[1], but got '[{r[0]:g}, {r[1]:g}]' "
                                   f"[Op:{op}]")
    return values, value_range


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=_dt.int32, name=None):
    """The bin of each value among ``nbins`` equal bins over ``value_range``; values
    outside go to the first or the last bin.

    >>> import tapegrad as tf
    >>> tf.histogram_fixed_width_bins([-1.0, 1.5, 5.0], [0.0, 5.0], nbins=5).numpy().tolist()
    [0, 1, 4]
    """
    # TensorFlow's Python form: the scaled values in the values' dtype, floored, clipped
    values, value_range = _checked(values, value_range, nbins, "HistogramFixedWidth")
    if values.dtype.kind not in "f":
        values, value_range = array_ops.cast(values, _dt.float32), array_ops.cast(value_range, _dt.float32)
    lo, hi = value_range[0], value_range[1]
    scaled = math_ops.divide(math_ops.subtract(values, lo), math_ops.subtract(hi, lo))
    index = math_ops.floor(math_ops.multiply(scaled, tensor(float(nbins), values.dtype)))
    index = math_ops.clip_by_value(index, 0.0, float(nbins) - 1)
    return array_ops.cast(index, dtype)


def histogram_fixed_width(values, value_range, nbins=100, dtype=_dt.int32, name=None):
    """How many values fall in each of ``nbins`` equal bins over ``value_range`` (values
    outside count in the first or the last bin).

    >>> import tapegrad as tf
    >>> tf.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0], [0.0, 5.0], nbins=5
    ...                          ).numpy().tolist()
    [2, 1, 1, 0, 2]
    """
    # TensorFlow's kernel: the distance above the low end in the values' dtype, divided
    # in float64 by the bin width, capped at the last bin and truncated
    values, value_range = _checked(values, value_range, nbins, "HistogramFixedWidth")
    lo = value_range[0]
    width = math_ops.divide(array_ops.cast(math_ops.subtract(value_range[1], lo), _dt.float64), float(nbins))
    above = array_ops.cast(math_ops.subtract(math_ops.maximum(values, lo), lo), _dt.float64)
    index = array_ops.cast(math_ops.minimum(math_ops.divide(above, width), float(nbins) - 1), _dt.int32)
    return math_ops.reduce_sum(array_ops.one_hot(array_ops.reshape(index, [-1]), int(nbins), dtype=dtype), axis=0)
