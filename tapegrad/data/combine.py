"""Stages that combine datasets: flat_map, interleave, concatenate, and shard.

Same protocol as ``transforms.py``; the datasets a function returns are unwrapped to their
nodes (``dataset_type`` is ``Dataset``, passed in so this module need not import it).
"""
import itertools

from tapegrad.data import structure as data_structure
from tapegrad.data.sources import INFINITE, UNKNOWN
from tapegrad.data.transforms import Stage, _structure, call
from tapegrad.errors import InvalidArgumentError


class FlatMap(Stage):
    kind = "_FlatMapDataset"

    def __init__(self, input, fn, dataset_type):
        super().__init__(input)
        self.fn, self.dataset_type, self._spec = fn, dataset_type, None

    def __iter__(self):
        for e in self.input:
            ds = call(self.fn, e)
            if not isinstance(ds, self.dataset_type):
                raise TypeError("The `map_func` argument of `flat_map` must return a "
                                f"`Dataset` object, got {type(ds).__name__}.")
            yield from ds._node

    def spec(self):
        if self._spec is None:
            for e in self:
                self._spec = data_structure.spec_of(e)
                break
            else:
                raise ValueError("The element spec of an empty flat_map is unknown.")
        return self._spec

    def cardinality(self):
        return UNKNOWN


class Concatenate(Stage):
    kind = "_ConcatenateDataset"

    def __init__(self, input, other):
        super().__init__(input)
        a, b = input.spec(), other.spec()
        if _structure(a) != _structure(b):
            raise TypeError(f"Incompatible dataset elements:\n  {a!r} vs.\n  {b!r}")
        self.other = other

    def __iter__(self):
        yield from self.input
        yield from self.other

    def spec(self):
        return data_structure.relax(self.input.spec(), self.other.spec())

    def cardinality(self):
        a, b = self.input.cardinality(), self.other.cardinality()
        if INFINITE in (a, b):
            return INFINITE
        return UNKNOWN if UNKNOWN in (a, b) else a + b


class Interleave(Stage):
    """TensorFlow's deterministic interleave: ``cycle_length`` slots, each open on the
    dataset of one input element; in turn, each slot gives up to ``block_length``
    elements; an exhausted slot takes the next input element on its next turn."""

    kind = "_InterleaveDataset"

    def __init__(self, input, fn, cycle_length, block_length, dataset_type):
        super().__init__(input)
        if cycle_length <= 0 or block_length <= 0:
            raise InvalidArgumentError("cycle_length and block_length must be positive.")
        self.fn, self.cycle, self.block = fn, cycle_length, block_length
        self.dataset_type, self._spec = dataset_type, None

    def _open(self, element):
        ds = call(self.fn, element)
        if not isinstance(ds, self.dataset_type):
            raise TypeError("The `map_func` argument of `interleave` must return a "
                            f"`Dataset` object, got {type(ds).__name__}.")
        return iter(ds._node)

    def __iter__(self):
        source, slots, done, i = iter(self.input), [None] * self.cycle, False, 0
        while True:
            if slots[i] is None and not done:
                element = next(source, _END)
                if element is _END:
                    done = True
                else:
                    slots[i] = self._open(element)
            if slots[i] is not None:
                for _ in range(self.block):
                    e = next(slots[i], _END)
                    if e is _END:
                        slots[i] = None
                        break
                    yield e
            if done and all(s is None for s in slots):
                return
            i = (i + 1) % self.cycle

    spec = FlatMap.spec

    def cardinality(self):
        return UNKNOWN


_END = object()


class Shard(Stage):
    kind = "_ShardDataset"

    def __init__(self, input, num_shards, index):
        super().__init__(input)
        if num_shards <= 0:
            raise InvalidArgumentError("Number of shards must be greater than zero "
                                       f"(currently num_shards = {num_shards}).")
        if not 0 <= index < num_shards:
            raise InvalidArgumentError(f"Index must be between 0 and {num_shards - 1} "
                                       f"(currently index = {index}).")
        self.num, self.index = num_shards, index

    def __iter__(self):
        return itertools.islice(self.input, self.index, None, self.num)

    def cardinality(self):
        c = self.input.cardinality()
        if c < 0:
            return c
        return c // self.num + (1 if self.index < c % self.num else 0)
