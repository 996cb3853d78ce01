"""Call signatures: ``TensorSpec``, and the cache key of a call's arguments.

The key of a call is its argument structure with, at each leaf: ``(shape, dtype)`` for a
tensor or NumPy array, ``('var', shape, dtype)`` for a ``tf.Variable`` (passed by reference),
and ``(type, value)`` for any other Python value (so ``f(x, 2)`` and ``f(x, 3)`` trace
separately, as in TensorFlow). Programs have static shapes, so the key always holds concrete
shapes; a ``None`` dimension in an ``input_signature`` says which shapes are accepted.
"""
import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.shape import from_tuple
from tapegrad.core.tensor import Tensor, Variable, convert_to_tensor
from tapegrad.util.keys import exact

TENSOR, VARIABLE, STATIC = "tensor", "variable", "static"


class TensorSpec:
    """The shape and dtype a tensor argument must have; ``None`` dimensions match any size.

    >>> import tapegrad as tf
    >>> spec = tf.TensorSpec([None, 3], tf.float32)
    >>> spec.is_compatible_with(tf.zeros([5, 3])), spec.is_compatible_with(tf.zeros([5, 4]))
    (True, False)
    """

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape, dtype=_dt.float32, name=None):
        if shape is not None:
            try:
                shape = tuple(None if s is None else int(s) for s in shape)
            except TypeError:
                raise TypeError(f"TensorSpec: shape must be a list of ints and None, got "
                                f"{shape!r}") from None
            if any(s is not None and s < 0 for s in shape):
                raise ValueError(f"TensorSpec: dimensions must be >= 0 or None, got {shape}")
            shape = from_tuple(shape)  # a TensorShape (a tuple), as TensorFlow's spec.shape
        self.shape = shape
        self.dtype = _dt.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tuple(tensor.shape), tensor.dtype, name)

    def is_fully_defined(self):
        return self.shape is not None and None not in self.shape

    def is_compatible_with(self, other):
        """True if ``other`` (a tensor, array or spec) has a matching dtype and shape."""
        dtype = np.dtype(other.dtype)
        shape = other.shape
        return dtype == self.dtype and shape_compatible(self.shape, shape)

    def most_specific_compatible_type(self, other):
        """The narrowest spec both match: differing dimensions become None."""
        if self.shape is None or other.shape is None or len(self.shape) != len(other.shape):
            return TensorSpec(None, self.dtype, self.name)
        return TensorSpec([a if a == b else None for a, b in zip(self.shape, other.shape)],
                          self.dtype, self.name)

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        shape = "None" if self.shape is None else "(" + ", ".join(
            "None" if s is None else str(s) for s in self.shape) + ("," if len(self.shape) == 1
                                                                   else "") + ")"
        return f"TensorSpec(shape={shape}, dtype=tf.{_dt.name(self.dtype)}, name={self.name!r})"


def shape_compatible(spec_shape, shape):
    if spec_shape is None:
        return True
    shape = tuple(shape) if shape is not None else None
    if shape is None or len(shape) != len(spec_shape):
        return False
    return all(a is None or b is None or a == b for a, b in zip(spec_shape, shape))


def walk(x, leaves):
    """The key of structure ``x``; appends ``(kind, value)`` for each leaf to ``leaves``."""
    t = type(x)
    if t is Tensor or t is np.ndarray:
        leaves.append((TENSOR, x))
        return (x.shape if t is np.ndarray else x._value.shape, x.dtype)
    if isinstance(x, Variable):
        leaves.append((VARIABLE, x))
        return ("var", tuple(x.shape), x.dtype)
    if isinstance(x, (Tensor, np.ndarray, np.generic, TensorSpec)):
        if isinstance(x, TensorSpec) and not x.is_fully_defined():
            raise ValueError(f"{x!r} has unknown dimensions; tapegrad programs have static "
                             "shapes, so trace with example tensors (or a fully defined spec).")
        leaves.append((TENSOR, x))
        return (tuple(x.shape), np.dtype(x.dtype))
    if t is list or t is tuple:
        return (t,) + tuple(walk(v, leaves) for v in x)
    if isinstance(x, dict):
        keys = sorted(x)
        return (dict, tuple(keys)) + tuple(walk(x[k], leaves) for k in keys)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (t,) + tuple(walk(v, leaves) for v in x)
    if getattr(x, "_tf_composite", False) or type(x) is _Parts:
        # a composite tensor (tf.IndexedSlices, tf.SparseTensor): its component tensors;
        # its dense shape, where concrete, is part of the key (programs have static shapes)
        like, parts = (x.like, x.parts) if type(x) is _Parts else (x, x._tf_components())
        static = getattr(like, "_tf_static_components", ())
        key = [type(like)]
        for i, v in enumerate(parts):
            if i in static and type(v) is Tensor:
                value = _frozen(np.asarray(v._value).tolist())
                leaves.append((STATIC, value))
                key.append(("static", value))
            else:
                key.append(walk(v, leaves))
        return tuple(key)
    leaves.append((STATIC, x))
    if t is float or t is complex:
        # 0.0 == -0.0: a trace for one would serve the other, and 1 / c has the other sign;
        # NaN != NaN: a retrace on every call (util/keys.py)
        return exact(x)
    try:
        hash(x)
        return (t, x)
    except TypeError:  # unhashable Python objects are told apart by identity
        return (t, "id", id(x))


def _frozen(x):
    """Nested lists as nested tuples (a hashable key)."""
    return tuple(map(_frozen, x)) if isinstance(x, list) else x


class _Parts:
    """A composite tensor's place in a structure whose leaves are not tensors yet (an
    output template): the composite it stands for and its components' structure."""

    __slots__ = ("like", "parts")

    def __init__(self, like, parts):
        self.like, self.parts = like, parts


def rebuild(x, it):
    """``x`` with its leaves replaced, in ``walk`` order, by the items of iterator ``it``
    (a composite tensor made again from its new components; with None for components, a
    ``_Parts`` template that a later ``rebuild`` fills)."""
    t = type(x)
    if t is list or t is tuple:
        return t(rebuild(v, it) for v in x)
    if isinstance(x, dict) and not isinstance(x, Tensor):
        vals = {k: rebuild(x[k], it) for k in sorted(x)}
        return type(x)((k, vals[k]) for k in x)
    if isinstance(x, tuple) and hasattr(x, "_fields") and not isinstance(x, Tensor):
        return t(*[rebuild(v, it) for v in x])
    if t is _Parts or getattr(x, "_tf_composite", False):
        like, parts = (x.like, x.parts) if t is _Parts else (x, x._tf_components())
        new = [rebuild(v, it) for v in parts]
        if any(p is None for p in new):
            return _Parts(like, new)
        return like._tf_from_components(new)
    return next(it)


def leaf_names(params, args):
    """Readable input names for the tensor leaves of ``args`` (``x``, ``xs_0``...)."""
    names = []
    for p, a in zip(params, args):
        leaves = []
        walk(a, leaves)
        if len(leaves) == 1:
            names.append(p)
        else:
            names.extend(f"{p}_{i}" for i in range(len(leaves)))
    return names


def conform(args, signature, fname):
    """Check and convert ``args`` against ``input_signature`` (a structure of TensorSpecs)."""
    if len(args) != len(signature):
        raise TypeError(f"{fname}() takes {len(signature)} positional argument(s) per its "
                        f"input_signature, got {len(args)}.")
    return tuple(_conform_one(a, s, fname, f"argument {i}")
                 for i, (a, s) in enumerate(zip(args, signature)))


def _conform_one(a, spec, fname, where):
    if isinstance(spec, TensorSpec):
        if isinstance(a, Tensor) or isinstance(a, (np.ndarray, np.generic)):
            dtype = np.dtype(a.dtype)
            if dtype != spec.dtype:
                raise TypeError(f"{fname}: {where} has dtype {dtype.name}, but the "
                                f"input_signature expects {spec!r}.")
        else:
            try:
                a = convert_to_tensor(a, dtype=spec.dtype)
            except (TypeError, ValueError) as e:
                raise TypeError(f"{fname}: {where} ({a!r}) cannot be converted to a tensor "
                                f"for {spec!r}: {e}") from None
        if not shape_compatible(spec.shape, a.shape):
            raise ValueError(f"{fname}: {where} has shape {tuple(a.shape)}, which is "
                             f"incompatible with the input_signature {spec!r}.")
        return a
    if isinstance(spec, (list, tuple)):
        if not isinstance(a, (list, tuple)) or len(a) != len(spec):
            raise TypeError(f"{fname}: {where} should be a sequence of {len(spec)} values "
                            f"matching {spec!r}, got {a!r}.")
        out = [_conform_one(x, s, fname, f"{where}[{i}]") for i, (x, s) in enumerate(zip(a, spec))]
        return type(a)(out) if not hasattr(a, "_fields") else type(a)(*out)
    if isinstance(spec, dict):
        if not isinstance(a, dict) or set(a) != set(spec):
            raise TypeError(f"{fname}: {where} should be a dict with keys {sorted(spec)}, "
                            f"got {a!r}.")
        return {k: _conform_one(a[k], spec[k], fname, f"{where}[{k!r}]") for k in a}
    raise TypeError(f"input_signature may only hold TensorSpecs, lists, tuples and dicts; "
                    f"got {spec!r}.")


def placeholder(a):
    """A fully defined TensorSpec as a zero-strided tensor: only its shape and dtype count."""
    if isinstance(a, TensorSpec):
        if not a.is_fully_defined():
            raise ValueError(f"get_concrete_function: {a!r} has unknown dimensions; tapegrad "
                             "programs have static shapes, so give example tensors or fully "
                             "defined specs.")
        return Tensor._wrap(np.broadcast_to(np.zeros((), a.dtype), a.shape))
    if isinstance(a, (list, tuple)) and not isinstance(a, Tensor):
        items = [placeholder(x) for x in a]
        return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
    if isinstance(a, dict):
        return {k: placeholder(v) for k, v in a.items()}
    return a


def skeleton(key):
    """A signature key with tensor shapes replaced by ranks: the groups reduce_retracing
    generalises over."""
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], tuple) \
            and isinstance(key[1], np.dtype):
        return (len(key[0]), key[1])
    if isinstance(key, tuple):
        return tuple(skeleton(k) for k in key)
    return key
