"""Elements of a ``tf.data`` pipeline: nested tuples, namedtuples and dicts of tensors.

As in TensorFlow, a *list* is not a structure here: ``from_tensor_slices([[1, 2], [3, 4]])``
slices one tensor. Only a list returned at the top of a ``map`` function becomes a tuple.
Dicts are flattened in sorted key order (``tf.nest``'s rule).
"""
import numpy as np

from tapegrad.compile.signature import TensorSpec
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError

_wrap = Tensor._wrap


def _is_structure(x):
    return isinstance(x, (tuple, dict))


def flatten(x):
    """The leaves of element ``x``, depth first (dict keys sorted)."""
    out = []
    _flatten(x, out)
    return out


def _flatten(x, out):
    if isinstance(x, dict):
        for k in sorted(x):
            _flatten(x[k], out)
    elif isinstance(x, tuple):
        for v in x:
            _flatten(v, out)
    else:
        out.append(x)


def pack(structure, leaves):
    """Rebuild ``structure`` with ``leaves`` (a list, consumed in flatten's order)."""
    it = iter(leaves)
    return _pack(structure, it)


def _pack(x, it):
    if isinstance(x, dict):
        vals = {k: _pack(x[k], it) for k in sorted(x)}
        return type(x)((k, vals[k]) for k in x)
    if isinstance(x, tuple):
        vals = [_pack(v, it) for v in x]
        return type(x)(*vals) if hasattr(x, "_fields") else tuple(vals)
    return next(it)


def map_leaves(fn, x):
    return pack(x, [fn(v) for v in flatten(x)])


def to_element(value, from_function=False):
    """A user value as an element: every leaf a Tensor (Variables give their value).

    ``from_function``: the value was returned by a ``map``/``flat_map`` function, where
    TensorFlow turns a top-level list into a tuple.
    """
    if from_function and isinstance(value, list):
        value = tuple(value)
    if value is None:
        raise TypeError("A tf.data function returned None; it must return tensors or a "
                        "(nested) tuple or dict of tensors.")
    return map_leaves(_leaf_tensor, value)


def _leaf_tensor(v):
    if type(v) is Tensor:
        return v
    t = convert_to_tensor(v)
    if getattr(t, "_symbolic", False):
        raise TypeError("tf.data elements must be concrete tensors, not traced ones "
                        "(build the pipeline outside tf.function).")
    return _wrap(t._value)


def spec_of(element):
    """The ``element_spec`` of one element: the same structure of ``TensorSpec``."""
    return map_leaves(lambda t: TensorSpec(tuple(t.shape), t.dtype), element)


def relax(spec_a, spec_b):
    """The spec matching both: dimensions that differ become None."""
    la, lb = flatten(spec_a), flatten(spec_b)
    return pack(spec_a, [a.most_specific_compatible_type(b) for a, b in zip(la, lb)])


def stack(elements, what="batch"):
    """Stack a list of elements leaf by leaf along a new axis 0, as ``batch`` does."""
    flats = [flatten(e) for e in elements]
    out = []
    for c in range(len(flats[0])):
        arrays = [f[c]._value for f in flats]
        first = arrays[0].shape
        for i, a in enumerate(arrays):
            if a.shape != first:
                raise InvalidArgumentError(
                    f"Cannot {what} tensors with different shapes in component {c}. First "
                    f"element had shape {_tf_shape(first)} and element {i} had shape "
                    f"{_tf_shape(a.shape)}.")
        out.append(_wrap(np.stack(arrays)))
    return pack(elements[0], out)


def _tf_shape(shape):
    return "[" + ",".join(str(s) for s in shape) + "]"


def to_numpy(element):
    """``as_numpy_iterator``'s form: arrays, and NumPy scalars for 0-d tensors."""
    return map_leaves(lambda t: t._value[()] if t.ndim == 0 else np.array(t._value), element)
