"""Pipeline stages: each wraps its input node and pulls from it one element at a time.

Nodes follow ``sources.py``'s protocol (``__iter__``, ``spec()``, ``cardinality()``). User
functions (``map``, ``filter``, ``flat_map``) run eagerly on each element, with no tape
recording them: a ``tf.data`` pipeline is not differentiable in TensorFlow either.
"""
import itertools

import numpy as np

from tapegrad.compile.signature import TensorSpec
from tapegrad.core.state import recording
from tapegrad.core.tensor import Tensor
from tapegrad.data import structure as data_structure
from tapegrad.data.sources import INFINITE, UNKNOWN
from tapegrad.errors import InvalidArgumentError

_wrap = Tensor._wrap


def call(fn, element):
    """TensorFlow's calling rule: a tuple element is unpacked into positional arguments."""
    with recording(()):
        return fn(*element) if type(element) is tuple else fn(element)


class Stage:
    """A node with one input; by default it keeps the input's spec and cardinality."""

    kind = "_Dataset"

    def __init__(self, input):
        self.input = input

    def spec(self):
        return self.input.spec()

    def cardinality(self):
        return self.input.cardinality()


class Passthrough(Stage):
    """``prefetch`` (and ``with_options``): elements pass unchanged. There is no background
    thread; each element is computed when asked for."""

    def __init__(self, input, kind):
        super().__init__(input)
        self.kind, self.options = kind, None  # ``with_options`` sets its merged options

    def __iter__(self):
        return iter(self.input)


class Batch(Stage):
    kind = "_BatchDataset"

    def __init__(self, input, size, drop_remainder, padding=None):
        super().__init__(input)
        if size <= 0:
            raise InvalidArgumentError("Batch size must be greater than zero.")
        self.size, self.drop = size, bool(drop_remainder)
        self.padding = padding  # (shapes, values) per leaf for ``padded_batch``, else None

    def __iter__(self):
        buf, n = [], self.size
        for e in self.input:
            buf.append(e)
            if len(buf) == n:
                yield self._combine(buf)
                buf = []
        if buf and not self.drop:
            yield self._combine(buf)

    def _combine(self, buf):
        if self.padding is not None:
            buf = pad_rows(buf, *self.padding)
        return data_structure.stack(buf)

    def spec(self):
        outer = self.size if self.drop else None
        specs = data_structure.flatten(self.input.spec())
        shapes = self.padding[0] if self.padding else [s.shape for s in specs]
        return data_structure.pack(self.input.spec(), [
            TensorSpec(None if sh is None else (outer,) + tuple(sh), s.dtype)
            for s, sh in zip(specs, shapes)])

    def cardinality(self):
        c = self.input.cardinality()
        if c < 0:
            return c
        return c // self.size if self.drop else -(-c // self.size)


def pad_rows(rows, shapes, values):
    """Pad each leaf of ``rows`` to ``shapes`` (None dimensions: the largest in the batch)."""
    flats = [data_structure.flatten(r) for r in rows]
    out = [[] for _ in rows]
    for c, (shape, value) in enumerate(zip(shapes, values)):
        arrays = [f[c]._value for f in flats]
        if any(a.ndim != len(shape) for a in arrays):
            raise InvalidArgumentError(
                f"All elements in a batch must have the same rank as the padded shape for "
                f"component {c}: expected rank {len(shape)} but got element with rank "
                f"{next(a.ndim for a in arrays if a.ndim != len(shape))}")
        target = [max(a.shape[d] for a in arrays) if s is None else s
                  for d, s in enumerate(shape)]
        for i, a in enumerate(arrays):
            if any(n > t for n, t in zip(a.shape, target)):
                raise InvalidArgumentError(
                    "Attempted to pad to a smaller size than the input element.")
            widths = [(0, t - n) for n, t in zip(a.shape, target)]
            out[i].append(_wrap(np.pad(a, widths, constant_values=value) if widths else a))
    return [data_structure.pack(r, o) for r, o in zip(rows, out)]


class Unbatch(Stage):
    kind = "_UnbatchDataset"

    def __init__(self, input):
        super().__init__(input)
        if any(s.shape is not None and len(s.shape) == 0 for s in data_structure.flatten(input.spec())):
            raise ValueError("Cannot unbatch an input with scalar components.")

    def __iter__(self):
        for e in self.input:
            leaves = [t._value for t in data_structure.flatten(e)]
            n = leaves[0].shape[0]
            for c, a in enumerate(leaves):
                if a.ndim == 0 or a.shape[0] != n:
                    raise InvalidArgumentError(
                        "Input element must have the same batch size in each component. "
                        f"Component 0 had size {n} but component {c} had size "
                        f"{a.shape[0] if a.ndim else 'scalar'}.")
            for i in range(n):
                yield data_structure.pack(e, [_wrap(a[i, ...]) for a in leaves])

    def spec(self):
        return data_structure.map_leaves(lambda s: TensorSpec(None if s.shape is None else s.shape[1:],
                                                 s.dtype), self.input.spec())

    def cardinality(self):
        c = self.input.cardinality()
        if c == INFINITE:
            return INFINITE
        rows = {None if s.shape is None else s.shape[0]
                for s in data_structure.flatten(self.input.spec())}
        if c >= 0 and len(rows) == 1 and None not in rows:
            return c * rows.pop()  # every element holds the same static number of rows
        return UNKNOWN


class Map(Stage):
    kind = "_MapDataset"

    def __init__(self, input, fn):
        super().__init__(input)
        if not callable(fn):
            raise TypeError(f"`map_func` must be callable, got {fn!r}.")
        self.fn, self._spec = fn, None

    def __iter__(self):
        fn = self.fn
        for e in self.input:
            yield data_structure.to_element(call(fn, e), from_function=True)

    def spec(self):
        # TensorFlow traces the function once to learn its output; here it runs on
        # zero-filled stand-ins for the input spec, twice (unknown sizes 2 and 3) so that
        # sizes that follow the input become None. Failing that, on the first element.
        if self._spec is None:
            self._spec = probe(self.fn, self.input.spec())
            if self._spec is None:
                for e in self:
                    self._spec = data_structure.spec_of(e)
                    break
                else:
                    raise ValueError("The element spec of an empty mapped dataset whose "
                                     "function cannot run on placeholder zeros is unknown.")
        return self._spec


def probe(fn, in_spec):
    """The spec of ``fn``'s output on stand-ins, or None when that cannot be learned.

    Two stand-ins: zeros with unknown sizes 2, then ones with unknown sizes 3; output
    dimensions that differ (they follow an input size, or a value, as ``tf.fill([x], x)``
    does) become None.
    """
    leaves = data_structure.flatten(in_spec)
    if any(s.shape is None for s in leaves):
        return None
    specs = []
    for k, fill in ((2, 0), (3, 1)):
        element = data_structure.pack(in_spec, [_wrap(np.full([k if d is None else d for d in s.shape],
                                                 fill, s.dtype)) for s in leaves])
        try:  # any error: the function cannot take stand-ins (it reads values, say)
            with np.errstate(all="ignore"):
                specs.append(data_structure.spec_of(
                    data_structure.to_element(call(fn, element), from_function=True)))
        except Exception:
            return None
    a, b = specs
    if _structure(a) != _structure(b):
        return None
    return data_structure.relax(a, b)


def _structure(spec):
    return data_structure.map_leaves(
        lambda s: (s.dtype, None if s.shape is None else len(s.shape)), spec)


class Filter(Stage):
    kind = "_FilterDataset"

    def __init__(self, input, predicate):
        super().__init__(input)
        if not callable(predicate):
            raise TypeError(f"`predicate` must be callable, got {predicate!r}.")
        self.predicate = predicate

    def __iter__(self):
        pred = self.predicate
        for e in self.input:
            keep = data_structure.to_element(call(pred, e))
            if not isinstance(keep, Tensor) or keep.dtype != np.bool_ or keep.ndim != 0:
                raise ValueError(
                    "Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, "
                    f"but its return type is {data_structure.spec_of(keep)!r}.")
            if keep._value:
                yield e

    def cardinality(self):
        return UNKNOWN


class Shuffle(Stage):
    """TensorFlow's buffered shuffle: fill a buffer, emit a random slot, refill it.

    Each iteration draws from a generator seeded by ``(seed, epoch)``: the same seed gives
    the same orders in every run; ``reshuffle_each_iteration`` advances the epoch.
    """

    kind = "_ShuffleDataset"

    def __init__(self, input, buffer_size, seed, reshuffle):
        super().__init__(input)
        if buffer_size <= 0 and buffer_size != UNKNOWN:
            raise InvalidArgumentError(
                "buffer_size must be greater than zero or UNKNOWN_CARDINALITY")
        self.buffer_size = None if buffer_size == UNKNOWN else buffer_size
        self.seed, self.reshuffle = seed, reshuffle
        self._epochs = itertools.count()

    def __iter__(self):
        epoch = next(self._epochs) if self.reshuffle else 0
        rng = np.random.default_rng([self.seed, epoch])
        buf, cap = [], self.buffer_size
        it = iter(self.input)
        for e in it:
            buf.append(e)
            if cap is not None and len(buf) >= cap:
                break
        for e in it:
            j = int(rng.integers(len(buf)))
            yield buf[j]
            buf[j] = e
        while buf:
            j = int(rng.integers(len(buf)))
            buf[j], buf[-1] = buf[-1], buf[j]
            yield buf.pop()


class Repeat(Stage):
    kind = "_RepeatDataset"

    def __init__(self, input, count):
        super().__init__(input)
        self.count = None if count < 0 else count

    def __iter__(self):
        times = itertools.count() if self.count is None else range(self.count)
        for _ in times:
            empty = True
            for e in self.input:
                empty = False
                yield e
            if empty:  # an empty input repeated forever is empty, not a hang
                return

    def cardinality(self):
        c = self.input.cardinality()
        if self.count == 0 or c == 0:
            return 0
        if c < 0:
            return c
        return INFINITE if self.count is None else c * self.count


class Take(Stage):
    kind = "_TakeDataset"

    def __init__(self, input, count):
        super().__init__(input)
        self.count = count

    def __iter__(self):
        if self.count < 0:
            yield from self.input
            return
        if self.count == 0:
            return
        for i, e in enumerate(self.input, 1):
            yield e
            if i >= self.count:
                return

    def cardinality(self):
        c = self.input.cardinality()
        if self.count < 0:
            return c
        if c == INFINITE:
            return self.count
        return c if c == UNKNOWN else min(c, self.count)


class Skip(Stage):
    kind = "_SkipDataset"

    def __init__(self, input, count):
        super().__init__(input)
        self.count = count

    def __iter__(self):
        if self.count < 0:
            return
        yield from itertools.islice(self.input, self.count, None)

    def cardinality(self):
        c = self.input.cardinality()
        if self.count < 0:
            return 0
        return c if c < 0 else max(c - self.count, 0)


class Cache(Stage):
    """In memory (a ``filename`` is accepted and not written): the first complete pass
    is kept and replayed; an interrupted first pass keeps nothing, as in TensorFlow."""

    kind = "_CacheDataset"

    def __init__(self, input):
        super().__init__(input)
        self._done = None

    def __iter__(self):
        if self._done is not None:
            yield from self._done
            return
        buf = []
        for e in self.input:
            buf.append(e)
            yield e
        self._done = buf
