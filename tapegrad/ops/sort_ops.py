"""Sorting with TensorFlow's names: argsort, sort, top_k."""
import collections

from tapegrad.errors import InvalidArgumentError
from tapegrad.core.dispatch import bind
from tapegrad.ops._convert import axis1, tensor

__all__ = ["argsort", "sort", "top_k"]


def _direction(direction):
    d = str(direction).upper()
    if d not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    return d == "DESCENDING"


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """Indices that sort ``values`` along ``axis`` (int32, no gradient).

    >>> import tapegrad as tf
    >>> tf.argsort([3.0, 1.0, 2.0]).numpy().tolist()
    [1, 2, 0]
    """
    from tapegrad.primitives.sorting import argsort_p
    x = tensor(values)
    descending = _direction(direction)
    _sortable(x, "TopKV2" if descending else "Neg")
    return bind(argsort_p, x, axis=axis1(axis, x.ndim, "argsort"),
                descending=descending, stable=bool(stable))


_TOP_K_TYPES = ("float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, "
                "uint32, uint64")


def _sortable(x, op):
    """TensorFlow's errors for sorting bools or complex numbers: its sorts are top_k (of
    the negated values, ascending), which takes neither (nor does Neg bools)."""
    kind = x.dtype.kind
    if kind == "b" and op == "Neg":
        raise InvalidArgumentError(
            "Value for attr 'T' of bool is not in the list of allowed values: bfloat16, half, "
            "float, double, int8, int16, int32, int64, complex64, complex128 [Op:Neg]")
    if kind in "bc":
        raise InvalidArgumentError(f"Value for attr 'T' of {x.dtype.name} is not in the list "
                                   f"of allowed values: {_TOP_K_TYPES} [Op:TopKV2]")


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along ``axis``; the gradient goes back to where each value came from.

    >>> import tapegrad as tf
    >>> tf.sort([3.0, 1.0, 2.0], direction="DESCENDING").numpy().tolist()
    [3.0, 2.0, 1.0]
    """
    from tapegrad.primitives.sorting import take_along_axis_p
    x = tensor(values)
    a = axis1(axis, x.ndim, "sort")
    idx = argsort(x, axis=a, direction=direction, stable=True)
    return bind(take_along_axis_p, x, idx, axis=a)


def top_k(input, k=1, sorted=True, name=None):
    """The ``k`` largest entries of the last axis and their indices: ``(values, indices)``.

    >>> import tapegrad as tf
    >>> values, indices = tf.math.top_k([1.0, 5.0, 3.0], k=2)
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([5.0, 3.0], [1, 2])
    """
    from tapegrad.primitives.sorting import take_along_axis_p
    x = tensor(input)
    _sortable(x, "TopKV2")
    k = int(k)
    # TensorFlow's errors (InvalidArgumentError is a ValueError, which its tracing raises)
    if x.ndim == 0:
        raise InvalidArgumentError(f"input must be >= 1-D, got shape {list(x.shape)}")
    if k < 0:
        raise InvalidArgumentError(f"Need k >= 0, got {k}")
    if k > x.shape[-1]:
        raise InvalidArgumentError(f"input must have at least k columns. Had {x.shape[-1]}, "
                                   f"needed {k}")
    idx = argsort(x, axis=-1, direction="DESCENDING", stable=True)[..., :k]
    return TopKV2(bind(take_along_axis_p, x, idx, axis=x.ndim - 1), idx)


# ``(values, indices)`` with both names, as ``tf.math.top_k`` returns: a namedtuple, so that
# ``tf.function`` and ``tf.nest`` see its two tensors (a plain tuple subclass was a leaf, and
# a compiled top_k returned its symbolic tensors)
TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])
