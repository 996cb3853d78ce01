"""``tf.data.Dataset``: a lazy, streaming input pipeline.

A ``Dataset`` wraps one node (``sources.py``, ``transforms.py``); each method returns a new
``Dataset`` around a new node. Nothing runs until the dataset is iterated, and then one
element at a time: an infinite ``range().repeat()`` followed by ``take`` is fine.
"""
import operator
import os

import numpy as np

from tapegrad.core.dtypes import as_dtype, int64
from tapegrad.core.tensor import Tensor
from tapegrad.data import combine, grouping
from tapegrad.data import sources
from tapegrad.data import structure as data_structure
from tapegrad.data import transforms
from tapegrad.data import windows
from tapegrad.data.options import Options
from tapegrad.core.state import STATE
from tapegrad.errors import InvalidArgumentError, OutOfRangeError, UnimplementedError

AUTOTUNE = -1
INFINITE_CARDINALITY = sources.INFINITE
UNKNOWN_CARDINALITY = sources.UNKNOWN


def _count(x, name="count"):
    """An int64 argument (a Python int or an integer tensor), TensorFlow's conversion error
    otherwise."""
    if isinstance(x, Tensor):
        if x.dtype.kind not in "iu" or x.ndim != 0:
            raise TypeError(f"`{name}` must be a scalar integer tensor, got {x!r}.")
        return int(x._value)
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"Cannot convert {x!r} to EagerTensor of dtype int64") from None


class Dataset:
    """A sequence of elements, each a tensor or a (nested) tuple or dict of tensors.

    >>> import tapegrad as tf
    >>> ds = tf.data.Dataset.from_tensor_slices(([1., 2., 3.], [0, 1, 0])).batch(2)
    >>> [(x.numpy().tolist(), y.numpy().tolist()) for x, y in ds]
    [([1.0, 2.0], [0, 1]), ([3.0], [0])]
    """

    def __init__(self, node):
        self._node = node

    # -- sources -------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """One element per row of ``tensors`` (all leaves must have the same first size).

        >>> import tapegrad as tf
        >>> ds = tf.data.Dataset.from_tensor_slices({'x': [[1, 2], [3, 4]], 'y': [0, 1]})
        >>> next(iter(ds))['x'].numpy().tolist()
        [1, 2]
        """
        return Dataset(sources.TensorSlices(tensors))

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of one element, ``tensors``."""
        return Dataset(sources.Tensors(tensors))

    @staticmethod
    def range(*args, output_type=int64, name=None):
        """``range(stop)``, ``range(start, stop[, step])`` as int64 scalars.

        >>> import tapegrad as tf
        >>> list(tf.data.Dataset.range(1, 8, 3).as_numpy_iterator())
        [np.int64(1), np.int64(4), np.int64(7)]
        """
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid arguments to RangeDataset: {args}")
        start, stop, step = (0, _count(args[0], "stop"), 1) if len(args) == 1 else (
            _count(args[0], "start"), _count(args[1], "stop"),
            _count(args[2], "step") if len(args) == 3 else 1)
        return Dataset(sources.Range(start, stop, step, as_dtype(output_type)))

    @staticmethod
    def zip(*datasets, name=None):
        """Elements of several datasets side by side, until the shortest ends.

        ``Dataset.zip((a, b))``, ``Dataset.zip(a, b)`` and ``Dataset.zip({'a': a})``.
        """
        structure = datasets[0] if len(datasets) == 1 else tuple(datasets)
        if isinstance(structure, Dataset):
            structure = (structure,) if len(datasets) != 1 else structure
        if isinstance(structure, list):
            structure = tuple(structure)
        for d in data_structure.flatten(structure):
            if not isinstance(d, Dataset):
                raise TypeError("Invalid input to `zip`. Inputs are expected to be (nested) "
                                "structures of `tf.data.Dataset` objects but encountered "
                                f"object of type {type(d)}.")
        if isinstance(structure, Dataset):  # zip of one dataset: its elements, unchanged
            return structure
        return Dataset(sources.Zip(data_structure.map_leaves(lambda d: d._node, structure)))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None, name=None):
        """Elements from a Python generator function, called afresh for each iteration.

        >>> import tapegrad as tf
        >>> ds = tf.data.Dataset.from_generator(lambda: iter([[1, 2], [3]]),
        ...     output_signature=tf.TensorSpec([None], tf.int32))
        >>> [x.numpy().tolist() for x in ds]
        [[1, 2], [3]]
        """
        sig = sources.signature_of(output_signature, output_types, output_shapes)
        return Dataset(sources.Generator(generator, sig, args))

    # -- transformations -----------------------------------------------------------------
    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        """Stack ``batch_size`` consecutive elements; the last batch may be smaller unless
        ``drop_remainder``. Rows of different shapes raise ``InvalidArgumentError``."""
        return Dataset(transforms.Batch(self._node, _count(batch_size, "batch_size"), drop_remainder))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        """Like ``batch``, padding each component to ``padded_shapes`` (None dimensions,
        and by default the element spec's unknown ones: the largest size in the batch) with
        ``padding_values`` (default 0)."""
        spec = self.element_spec
        specs = data_structure.flatten(spec)
        if padded_shapes is None:
            for s in specs:
                if s.shape is None:
                    raise ValueError("You must provide `padded_shapes` argument because "
                                     "component has unknown rank.")
            shapes = [tuple(s.shape) for s in specs]  # known dimensions stay known
        else:
            shapes = [None if sh is None else tuple(None if d is None else int(d) for d in sh)
                      for sh in sources._shape_leaves(spec, padded_shapes)]
        if padding_values is None or not data_structure._is_structure(padding_values):
            values = [0 if padding_values is None else padding_values] * len(specs)
        else:
            values = data_structure.flatten(padding_values)
        values = [v._value if isinstance(v, Tensor) else v for v in values]
        return Dataset(transforms.Batch(self._node, _count(batch_size, "batch_size"), drop_remainder,
                                padding=(shapes, values)))

    def unbatch(self, name=None):
        """Split each element along its first axis into rows (the inverse of ``batch``)."""
        return Dataset(transforms.Unbatch(self._node))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Randomly shuffle with a buffer of ``buffer_size`` elements.

        With a ``seed`` (or after ``tf.random.set_seed``) the orders are the same in every
        run; each new iteration reshuffles unless ``reshuffle_each_iteration=False``.
        The permutation itself is not TensorFlow's.

        >>> import tapegrad as tf
        >>> ds = tf.data.Dataset.range(5).shuffle(5, seed=3)
        >>> sorted(ds.as_numpy_iterator()) == list(range(5))
        True
        """
        if seed is None:
            from tapegrad.ops.random_ops import generator
            seed = int(generator().integers(2**63))  # reproducible after set_seed
        return Dataset(transforms.Shuffle(self._node, _count(buffer_size, "buffer_size"),
                                  _count(seed, "seed"), bool(reshuffle_each_iteration)))

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Apply ``map_func`` to each element (a tuple element is passed as arguments).

        It runs eagerly, in order, once per element as it is pulled; TensorFlow instead
        traces it once, so its Python side effects happen once there.

        >>> import tapegrad as tf
        >>> ds = tf.data.Dataset.range(3).map(lambda x: (x, x * x))
        >>> [int(b) for _, b in ds]
        [0, 1, 4]
        """
        return Dataset(transforms.Map(self._node, map_func))

    def filter(self, predicate, name=None):
        """Keep the elements for which ``predicate`` returns a scalar bool tensor True."""
        return Dataset(transforms.Filter(self._node, predicate))

    def flat_map(self, map_func, name=None):
        """Map each element to a dataset and concatenate those datasets."""
        return Dataset(combine.FlatMap(self._node, map_func, Dataset))

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Windows of ``size`` elements (every ``stride``-th), one starting every ``shift``
        (default ``size``) elements; each window is a structure of datasets, one per
        component, so ``flat_map(lambda w: w.batch(size))`` makes them tensors.

        >>> import tapegrad as tf
        >>> ds = tf.data.Dataset.range(5).window(2, shift=1, drop_remainder=True)
        >>> [w.numpy().tolist() for w in ds.flat_map(lambda w: w.batch(2))]
        [[0, 1], [1, 2], [2, 3], [3, 4]]
        """
        size, stride = _count(size, "size"), _count(stride, "stride")
        shift = size if shift is None else _count(shift, "shift")
        for n, v in (("size", size), ("shift", shift), ("stride", stride)):
            if v <= 0:
                raise InvalidArgumentError(f"Window {n} must be greater than zero, but got "
                                           f"{v}.")
        return Dataset(windows.Window(self._node, size, shift, stride, drop_remainder,
                                      Dataset))

    def repeat(self, count=None, name=None):
        """Repeat the dataset ``count`` times (forever with None or -1)."""
        return Dataset(transforms.Repeat(self._node, -1 if count is None else _count(count)))

    def take(self, count, name=None):
        """The first ``count`` elements (all of them with -1)."""
        return Dataset(transforms.Take(self._node, _count(count)))

    def skip(self, count, name=None):
        """All but the first ``count`` elements (none with -1)."""
        return Dataset(transforms.Skip(self._node, _count(count)))

    def prefetch(self, buffer_size, name=None):
        """Accepted for compatibility; elements are computed when asked for (no thread)."""
        _count(buffer_size, "buffer_size")
        return Dataset(transforms.Passthrough(self._node, "_PrefetchDataset"))

    def cache(self, filename="", name=None):
        """Keep the elements of the first complete iteration in memory and replay them.
        A ``filename`` is accepted; the cache is in memory all the same."""
        return Dataset(transforms.Cache(self._node))

    def enumerate(self, start=0, name=None):
        """``(index, element)`` pairs, the index an int64 scalar from ``start``."""
        counter = sources.Range(_count(start, "start"), None, 1, int64)
        return Dataset(sources.Zip((counter, self._node)))

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        """Map each element to a dataset and interleave them: ``cycle_length`` open at a
        time, ``block_length`` (default 1) elements from each in turn, in TensorFlow's
        deterministic order. ``cycle_length`` None or AUTOTUNE: the number of CPUs, as
        TensorFlow's default.

        >>> import tapegrad as tf
        >>> ds = tf.data.Dataset.range(1, 4).interleave(
        ...     lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2)
        >>> [int(x) for x in ds]
        [1, 2, 1, 2, 3, 3]
        """
        if cycle_length is None or _count(cycle_length, "cycle_length") == AUTOTUNE:
            cycle_length = os.cpu_count() or 1
        block = 1 if block_length is None else _count(block_length, "block_length")
        return Dataset(combine.Interleave(self._node, map_func, _count(cycle_length), block,
                                     Dataset))

    def shard(self, num_shards, index, name=None):
        """Every ``num_shards``-th element, starting at ``index``."""
        return Dataset(combine.Shard(self._node, _count(num_shards, "num_shards"),
                                _count(index, "index")))

    def with_options(self, options, name=None):
        """The same elements, with ``options`` (a ``tf.data.Options``) merged in."""
        if not isinstance(options, Options):
            raise TypeError(f"`options` must be a tf.data.Options, got {options!r}.")
        node = transforms.Passthrough(self._node, "_OptionsDataset")
        node.options = self.options().merge(options)
        return Dataset(node)

    def options(self):
        """The options set by ``with_options`` upstream (a fresh ``Options`` if none)."""
        node = self._node
        while node is not None:
            if getattr(node, "options", None) is not None:
                return node.options
            node = getattr(node, "input", None)
        return Options()

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then those of ``dataset``."""
        return Dataset(combine.Concatenate(self._node, dataset._node))

    def apply(self, transformation_func):
        """``transformation_func(self)``."""
        return transformation_func(self)

    def reduce(self, initial_state, reduce_func, name=None):
        """Fold the elements: ``state = reduce_func(state, element)``.

        >>> import tapegrad as tf
        >>> int(tf.data.Dataset.range(5).reduce(tf.constant(0, tf.int64), lambda s, x: s + x))
        10
        """
        _not_traced()
        state = data_structure.to_element(initial_state)
        for e in self._node:
            # (state, element) is the tuple TensorFlow unpacks: the element is one argument
            state = data_structure.to_element(transforms.call(reduce_func, (state, e)),
                                              from_function=True)
        return state

    def scan(self, initial_state, scan_func, name=None):
        """A running transformation: ``scan_func(state, element)`` returns ``(new_state,
        output)``; the outputs are the new dataset's elements. The state keeps the
        structure and dtypes of ``initial_state``.

        >>> import tapegrad as tf
        >>> ds = tf.data.Dataset.range(5).scan(tf.constant(0, tf.int64),
        ...                                    lambda s, x: (s + x, s + x))
        >>> [int(v) for v in ds]
        [0, 1, 3, 6, 10]
        """
        return Dataset(grouping.Scan(self._node, initial_state, scan_func))

    def group_by_window(self, key_func, reduce_func, window_size=None,
                        window_size_func=None, name=None):
        """Group elements by ``key_func(element)`` (an int64 scalar); each full window of
        a key (``window_size`` elements, or ``window_size_func(key)``) is given with its
        key to ``reduce_func(key, window_dataset)``, whose datasets are concatenated. At
        the end the unfinished windows follow, by increasing key.

        >>> import tapegrad as tf
        >>> ds = tf.data.Dataset.range(7).group_by_window(
        ...     lambda x: x % 2, lambda k, w: w.batch(3), window_size=3)
        >>> [b.numpy().tolist() for b in ds]
        [[0, 2, 4], [1, 3, 5], [6]]
        """
        if (window_size is None) == (window_size_func is None):
            # TensorFlow's message for both cases, none and both given
            raise ValueError("Either the `window_size` argument or the `window_size_func` "
                             "argument must be specified.")
        if window_size_func is None:
            size = Tensor._wrap(np.asarray(_count(window_size, "window_size"), np.int64))

            def window_size_func(key):
                return size
        return Dataset(grouping.GroupByWindow(self._node, key_func, reduce_func,
                                              window_size_func, Dataset))

    def get_single_element(self, name=None):
        """The one element of a dataset of exactly one element."""
        _not_traced()
        it = iter(self._node)
        for e in it:
            for _ in it:
                raise ValueError("Dataset had more than one element.")
            return e
        raise ValueError("Dataset was empty.")

    # -- facts and iteration -------------------------------------------------------------
    @property
    def element_spec(self):
        """The structure of ``tf.TensorSpec`` describing each element."""
        return self._node.spec()

    def cardinality(self):
        """The number of elements as an int64 scalar tensor, or ``INFINITE_CARDINALITY``
        (-1) or ``UNKNOWN_CARDINALITY`` (-2)."""
        return Tensor._wrap(np.asarray(self._node.cardinality(), np.int64))

    def __len__(self):
        c = self._node.cardinality()
        if c == sources.INFINITE:
            raise TypeError("The dataset is infinite.")
        if c == sources.UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return c

    def __iter__(self):
        return Iterator(self)

    def as_numpy_iterator(self):
        """Iterate over NumPy values: arrays, and NumPy scalars for scalar tensors."""
        _not_traced()
        return (data_structure.to_numpy(e) for e in self._node)

    def __repr__(self):
        return f"<{self._node.kind} element_spec={self.element_spec!r}>"


def _not_traced():
    """A dataset iterated while ``tf.function`` traces would be unrolled into the program
    with its elements as constants: every call would see the trace's elements (the same
    shuffle, the same random map). TensorFlow stages the loop instead; tapegrad refuses."""
    if STATE.stack.tracers:
        raise UnimplementedError(
            "Iterating a tf.data.Dataset inside tf.function is not supported in tapegrad "
            "(it would freeze the elements seen at trace time). Iterate outside and call "
            "the compiled step on each batch: `for x, y in ds: train_step(x, y)`.")


class Iterator:
    """``iter(dataset)``: ``next`` raises StopIteration at the end, ``get_next``
    raises ``tf.errors.OutOfRangeError`` as TensorFlow's iterator does."""

    def __init__(self, dataset):
        _not_traced()
        self._dataset = dataset
        self._it = iter(dataset._node)

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)

    def get_next(self):
        """The next element; ``OutOfRangeError`` at the end."""
        try:
            return next(self._it)
        except StopIteration:
            raise OutOfRangeError("End of sequence") from None
