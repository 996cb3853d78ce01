"""Where a pipeline's elements come from: tensor slices, one element, ranges, generators.

Every node has the same three members: ``__iter__`` (a fresh generator per iteration: a
pipeline streams element by element and never holds more than its buffers), ``spec()``
(the element spec) and ``cardinality()`` (an int; ``INFINITE`` or ``UNKNOWN``).
"""
import numpy as np

from tapegrad.compile.signature import TensorSpec
from tapegrad.core.dtypes import as_dtype
from tapegrad.core.state import recording
from tapegrad.core.tensor import Tensor
from tapegrad.data import structure as data_structure
from tapegrad.errors import InvalidArgumentError

INFINITE = -1
UNKNOWN = -2
_wrap = Tensor._wrap


class TensorSlices:
    kind = "_TensorSliceDataset"

    def __init__(self, tensors):
        element = data_structure.to_element(tensors)
        # copies: the dataset must not change if the caller later mutates their arrays
        self.leaves = [np.array(t._value) for t in data_structure.flatten(element)]
        self.structure = element
        n = None
        for a in self.leaves:
            if a.ndim == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
            if n is not None and a.shape[0] != n:
                raise ValueError(f"Dimensions {n} and {a.shape[0]} are not compatible")
            n = a.shape[0]
        self.n = n

    def __iter__(self):
        leaves, structure = self.leaves, self.structure
        for i in range(self.n):
            yield data_structure.pack(structure, [_wrap(a[i, ...]) for a in leaves])

    def spec(self):
        return data_structure.pack(self.structure,
                                   [TensorSpec(a.shape[1:], a.dtype) for a in self.leaves])

    def cardinality(self):
        return self.n


class Tensors:
    kind = "_TensorDataset"

    def __init__(self, tensors):
        self.element = data_structure.to_element(tensors)

    def __iter__(self):
        yield self.element

    def spec(self):
        return data_structure.spec_of(self.element)

    def cardinality(self):
        return 1


class Range:
    kind = "_RangeDataset"

    def __init__(self, start, stop, step, dtype):
        if step == 0:
            raise InvalidArgumentError("step must be a non-zero integer.")
        self.range = range(start, stop, step) if stop is not None else None
        self.start, self.step, self.dtype = start, step, as_dtype(dtype)

    def __iter__(self):
        dt = self.dtype
        if self.range is None:  # the counter of ``enumerate``: no end
            i = self.start
            while True:
                yield _wrap(np.asarray(i, dt))
                i += self.step
        for i in self.range:
            yield _wrap(np.asarray(i, dt))

    def spec(self):
        return TensorSpec((), self.dtype)

    def cardinality(self):
        return INFINITE if self.range is None else len(self.range)


class Generator:
    """``from_generator``: each iteration calls the generator function afresh."""

    kind = "_FlatMapDataset"

    def __init__(self, generator, signature, args):
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        self.generator, self.signature, self.args = generator, signature, tuple(args or ())

    def __iter__(self):
        specs = data_structure.flatten(self.signature)
        it = iter(self.generator(*self.args))
        while True:
            with recording(()):
                try:
                    value = next(it)
                except StopIteration:
                    return
            if isinstance(value, list) and not isinstance(self.signature, TensorSpec):
                value = tuple(value)
            leaves = data_structure.flatten(value)
            if len(leaves) != len(specs):
                raise TypeError(f"`generator` yielded an element that did not match the "
                                f"expected structure {self.signature!r}: {value!r}")
            out = []
            for v, spec in zip(leaves, specs):
                a = np.asarray(v._value if isinstance(v, Tensor) else v)
                if a.dtype != spec.dtype:
                    try:
                        a = _cast_exact(a, spec.dtype)
                    except (TypeError, ValueError):
                        raise TypeError(f"`generator` yielded an element that could not be "
                                        f"converted to the expected type {spec.dtype.name}. "
                                        f"The element was {v!r}.") from None
                if not spec.is_compatible_with(a):
                    raise TypeError(f"`generator` yielded an element of shape {a.shape} "
                                    f"where an element of shape {_shape(spec.shape)} was "
                                    "expected.")
                out.append(_wrap(a))
            yield data_structure.pack(self.signature, out)

    def spec(self):
        return self.signature

    def cardinality(self):
        return UNKNOWN


def _cast_exact(a, dtype):
    b = a.astype(dtype)
    if not np.array_equal(b.astype(a.dtype), a, equal_nan=a.dtype.kind in "fc"):
        raise ValueError("lossy")
    return b


def _shape(shape):
    return "(" + ", ".join("None" if s is None else str(s) for s in shape) + (
        ",)" if len(shape) == 1 else ")")


def signature_of(output_signature, output_types, output_shapes):
    """``from_generator``'s element spec from either of TensorFlow's two ways to give it."""
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise TypeError("The `output_types` and `output_shapes` arguments can not be "
                            "used together with the `output_signature` argument.")
        for s in data_structure.flatten(output_signature):
            if not isinstance(s, TensorSpec):
                raise TypeError("`output_signature` must contain objects that are subclass "
                                f"of `tf.TypeSpec` but found {type(s)} which is not.")
        return output_signature
    if output_types is None:
        raise TypeError("To specify the output signature you need to provide either the "
                        "`output_signature` argument or the `output_types` argument.")
    if output_shapes is None:
        return data_structure.map_leaves(lambda d: TensorSpec(None, d), output_types)
    types, shapes = data_structure.flatten(output_types), _shape_leaves(output_types, output_shapes)
    return data_structure.pack(output_types, [TensorSpec(s, d) for d, s in zip(types, shapes)])


def _shape_leaves(types, shapes):
    # a shape is itself a list or tuple: walk the types' structure, not the shapes'
    if isinstance(types, dict):
        return [s for k in sorted(types) for s in _shape_leaves(types[k], shapes[k])]
    if isinstance(types, tuple):
        return [s for t, sh in zip(types, shapes) for s in _shape_leaves(t, sh)]
    return [None if shapes is None else tuple(shapes)]


class Zip:
    kind = "_ZipDataset"

    def __init__(self, nodes):
        self.nodes = nodes  # a structure (tuple or dict) of nodes

    def __iter__(self):
        its = [iter(n) for n in data_structure.flatten(self.nodes)]
        while True:
            out = []
            for it in its:
                try:
                    out.append(next(it))
                except StopIteration:
                    return
            yield data_structure.pack(self.nodes, out)

    def spec(self):
        return data_structure.map_leaves(lambda n: n.spec(), self.nodes)

    def cardinality(self):
        cards = [n.cardinality() for n in data_structure.flatten(self.nodes)]
        if UNKNOWN in cards:
            return UNKNOWN
        finite = [c for c in cards if c >= 0]
        return min(finite) if finite else INFINITE
