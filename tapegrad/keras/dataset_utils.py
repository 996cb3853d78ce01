"""``keras.utils``'s data helpers: sliding windows over a time series, padded sequences,
``PyDataset`` (Keras's ``Sequence``), dataset splits and the ``(x, y, sample_weight)``
packing that ``train_step`` code uses. Behaviour and errors follow Keras 3.

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.utils.pad_sequences([[1, 2], [3]], maxlen=3).tolist()
[[0, 1, 2], [0, 0, 3]]
"""
import random

import numpy as np

from tapegrad.data.transforms import Batch
from tapegrad.keras import _tf as tf


# ---- time series -------------------------------------------------------------------------
def _check_window_arguments(n, start_index, end_index, sampling_rate, sequence_stride):
    # Keras's checks, in its order and words
    if start_index:
        if start_index < 0:
            raise ValueError("`start_index` must be 0 or greater. Received: "
                             f"start_index={start_index}")
        if start_index >= n:
            raise ValueError("`start_index` must be lower than the length of the data. "
                             f"Received: start_index={start_index}, for data of length {n}")
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError("`end_index` must be higher than `start_index`. Received: "
                             f"start_index={start_index}, and end_index={end_index} ")
        if end_index >= n:
            raise ValueError("`end_index` must be lower than the length of the data. "
                             f"Received: end_index={end_index}, for data of length {n}")
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= n:
            raise ValueError(f"`{name}` must be lower than the length of the data. Received: "
                             f"{name}={value}, for data of length {n}")


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1,
                                  sampling_rate=1, batch_size=128, shuffle=False, seed=None,
                                  start_index=None, end_index=None, format="tf"):
    """A ``tf.data.Dataset`` of sliding windows over ``data`` (axis 0 is time), as Keras's.

    Window ``k`` holds steps ``s, s + sampling_rate, ...`` (``sequence_length`` of them) with
    ``s = start_index + k * sequence_stride``; ``targets[k * sequence_stride]`` is its target.
    Windows are cut when they are read, so the dataset holds only ``data`` itself.
    ``shuffle`` permutes the windows as Keras does (NumPy's ``RandomState(seed)``), then
    shuffles each batch's neighbourhood.

    >>> import numpy as np
    >>> from tapegrad import keras
    >>> ds = keras.utils.timeseries_dataset_from_array(np.arange(10), None, 4,
    ...                                                sequence_stride=3, batch_size=2)
    >>> [b.numpy().tolist() for b in ds]
    [[[0, 1, 2, 3], [3, 4, 5, 6]], [[6, 7, 8, 9]]]
    """
    n = len(data)
    _check_window_arguments(n, start_index, end_index, sampling_rate, sequence_stride)
    if format != "tf":
        raise ValueError('`format` should be either "tf" or "grain". Received: '
                         f"format={format}" if format != "grain" else
                         'format="grain" needs the Grain library; tapegrad makes tf.data '
                         "datasets only.")
    start = start_index or 0
    end = n if end_index is None else end_index
    num_seqs = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        num_seqs = min(num_seqs, len(targets))
    index_dtype = np.int32 if num_seqs < 2147483647 else np.int64
    positions = np.arange(0, max(num_seqs, 0), sequence_stride, dtype=index_dtype)
    if shuffle:
        if seed is None:
            seed = np.random.randint(1e6)
        np.random.RandomState(seed).shuffle(positions)
    offsets = np.arange(sequence_length, dtype=index_dtype) * index_dtype(sampling_rate)
    values = tf.constant(np.asarray(data)[start:end])

    def window(p):
        return tf.gather(values, p + offsets)
    dataset = tf.data.Dataset.from_tensor_slices(positions).map(window)
    if targets is not None:
        labels = tf.constant(np.asarray(targets)[start:end])
        dataset = tf.data.Dataset.zip((dataset, tf.data.Dataset.from_tensor_slices(
            positions).map(lambda p: tf.gather(labels, p))))
    if batch_size is not None:
        if shuffle:
            dataset = dataset.shuffle(buffer_size=batch_size * 8, seed=seed)
        return dataset.batch(batch_size)
    return dataset.shuffle(buffer_size=1024, seed=seed) if shuffle else dataset


# ---- sequences ---------------------------------------------------------------------------
def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):
    """Pad (or cut) each sequence to ``maxlen`` steps: a NumPy array ``(len(sequences),
    maxlen) + step shape``, as Keras's ``pad_sequences``.

    >>> from tapegrad import keras
    >>> keras.utils.pad_sequences([[1, 2, 3], [4]], maxlen=2, padding="post",
    ...                           truncating="post").tolist()
    [[1, 2], [4, 0]]
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    lengths, step_shape = [], None
    for s in sequences:
        try:
            lengths.append(len(s))
        except TypeError as e:
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: "
                             f"{s}") from e
        if step_shape is None and len(s):
            step_shape = np.asarray(s).shape[1:]
    step_shape = step_shape or ()
    if maxlen is None:
        maxlen = int(np.max(lengths)) if lengths else 0
    textual = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not textual:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: "
                         f"{type(value)}\nYou should set `dtype=object` for variable length "
                         "strings.")
    out = np.full((len(sequences), maxlen) + tuple(step_shape), value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s):
            continue
        if truncating == "pre":
            kept = s[-maxlen:] if maxlen else s[:0]
        elif truncating == "post":
            kept = s[:maxlen]
        else:
            raise ValueError(f'Truncating type "{truncating}" not understood')
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != tuple(step_shape):
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} "
                             f"is different from expected shape {tuple(step_shape)}")
        if not len(kept):
            continue
        if padding == "post":
            out[i, :len(kept)] = kept
        elif padding == "pre":
            out[i, -len(kept):] = kept
        else:
            raise ValueError(f'Padding type "{padding}" not understood')
    return out


class PyDataset:
    """A dataset written as a Python class: ``__len__`` batches, ``__getitem__(index)``
    gives batch ``index``; ``fit`` calls ``on_epoch_end`` after each epoch (Keras's
    ``PyDataset``, formerly ``Sequence``). Batches are made in this process, one at a
    time: ``workers`` and ``use_multiprocessing`` are accepted and ignored.

    >>> import numpy as np
    >>> from tapegrad import keras
    >>> class Batches(keras.utils.PyDataset):
    ...     def __len__(self):
    ...         return 2
    ...     def __getitem__(self, i):
    ...         return np.full((3, 1), i, "float32"), np.zeros((3, 1), "float32")
    >>> [x.shape for x, y in Batches()]
    [(3, 1), (3, 1)]
    """

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    workers = property(lambda self: getattr(self, "_workers", 1))
    use_multiprocessing = property(lambda self: getattr(self, "_use_multiprocessing", False))
    max_queue_size = property(lambda self: getattr(self, "_max_queue_size", 10))

    def __getitem__(self, index):
        raise NotImplementedError

    @property
    def num_batches(self):
        """``len(self)`` where it is defined, else None (an endless dataset)."""
        if type(self).__len__ is PyDataset.__len__:
            return None
        return len(self)

    def __len__(self):
        raise NotImplementedError

    def on_epoch_begin(self):
        """Called before each epoch (override it)."""

    def on_epoch_end(self):
        """Called after each epoch (override it: reshuffle, for example)."""

    def __iter__(self):
        n = self.num_batches
        i = 0
        while n is None or i < n:
            yield self[i]
            i += 1


Sequence = PyDataset


# ---- splits and packing ------------------------------------------------------------------
def _split_sizes(left, right, total):
    # Keras's checks and words (its messages' spacing included)
    bad_left = left is not None and type(left) not in (int, float)
    bad_right = right is not None and type(right) not in (int, float)
    if bad_left and bad_right:
        raise TypeError("Invalid `left_size` and `right_size` Types. Expected: integer or "
                        f"float or None, Received: type(left_size)={type(left)} and "
                        f"type(right_size)={type(right)}")
    if bad_left:
        raise TypeError("Invalid `left_size` Type. Expected: int or float or None, "
                        f"Received: type(left_size)={type(left)}.  ")
    if bad_right:
        raise TypeError("Invalid `right_size` Type. Expected: int or float or None,"
                        f"Received: type(right_size)={type(right)}.")
    if left == 0 and right == 0:
        raise ValueError("Both `left_size` and `right_size` are zero. At least one of the "
                         "split sizes must be non-zero.")
    for name, v, words in (("left_size", left, f"smaller than {total}, or"),
                           ("right_size", right, f"and smaller than {total} or")):
        if (type(v) is int and (v <= 0 or v >= total)) or (
                type(v) is float and (v <= 0 or v >= 1)):
            raise ValueError(f"`{name}` should be either a positive integer {words} a float "
                             f"within the range `[0, 1]`. Received: {name}={v}")
    if type(left) is float and type(right) is float and left + right > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must "
                         "be less than or equal to 1.")
    # counts become floats on the way, as in Keras (its messages print 13.0)
    left = round(left * total) if type(left) is float else None if left is None else float(left)
    right = round(right * total) if type(right) is float else (
        None if right is None else float(right))
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the "
                         f"{total}. Received: left_size + right_size = {left + right}and "
                         f"total_length = {total}")
    for size, side in ((left, "left"), (right, "right")):
        if size == 0:
            raise ValueError(f"With `dataset` of length={total}, `left_size`={left} and "
                             f"`right_size`={right}.Resulting {side} side dataset split will "
                             "be empty. Adjust any of the aforementioned parameters")
    return int(left), int(right)


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None,
                  preferred_backend=None):
    """Split an array, a tuple or list of arrays, or a ``tf.data.Dataset`` into two
    datasets of ``left_size`` and ``right_size`` samples (counts, or fractions of the
    whole), as Keras's ``split_dataset``; a batched dataset's splits are batched alike.

    >>> import numpy as np
    >>> from tapegrad import keras
    >>> left, right = keras.utils.split_dataset(np.arange(10), left_size=0.8)
    >>> len(list(left)), len(list(right))
    (8, 2)
    """
    if right_size is None and left_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. "
                         "Received: left_size=None and right_size=None")
    batch = None
    if isinstance(dataset, tf.data.Dataset):
        # directly batched: split the samples, batch the splits alike (Keras's test)
        node = dataset._node
        batch = node.size if isinstance(node, Batch) else None
        samples = list(dataset.unbatch() if batch else dataset)
        samples = [tf.nest.map_structure(np.asarray, s) for s in samples]
        structure = "samples"
    elif isinstance(dataset, (list, tuple)) and dataset and all(
            hasattr(a, "__len__") and not isinstance(a, str) for a in dataset) and \
            len({len(a) for a in dataset}) == 1 and np.ndim(dataset[0]) > 0 and \
            not np.isscalar(dataset[0]):
        arrays = [np.asarray(a) for a in dataset]
        samples = list(zip(*arrays))
        structure = type(dataset)
    elif isinstance(dataset, np.ndarray) or isinstance(dataset, tf.Tensor):
        samples = list(np.asarray(dataset))
        structure = "array"
    else:
        raise TypeError("The `dataset` argument must be either a `tf.data.Dataset` object, or "
                        f"a list/tuple of arrays. Received: dataset={dataset} of type "
                        f"{type(dataset)}")
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(1e6))
        random.Random(seed).shuffle(samples)
    left, right = _split_sizes(left_size, right_size, len(samples))

    def restore(part):
        if structure == "array":
            return tf.data.Dataset.from_tensor_slices(np.stack(part))
        if structure == "samples":
            stacked = tf.nest.map_structure(lambda *xs: np.stack(xs), *part)
            return tf.data.Dataset.from_tensor_slices(stacked)
        columns = tuple(np.stack(c) for c in zip(*part))
        return tf.data.Dataset.from_tensor_slices(structure(columns) if structure is tuple
                                                  else columns)
    out = restore(samples[:left]), restore(samples[-right:])
    if batch:
        out = tuple(d.batch(batch) for d in out)
    return out


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """``x``, ``(x, y)`` or ``(x, y, sample_weight)``: what ``fit`` takes as one batch.

    >>> from tapegrad import keras
    >>> keras.utils.pack_x_y_sample_weight(1, 2)
    (1, 2)
    """
    if y is None:
        # a lone tuple x would read as (x, y): wrap it (a list stays as it is, as in Keras)
        return (x,) if isinstance(x, tuple) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def unpack_x_y_sample_weight(data):
    """``(x, y, sample_weight)`` of one batch, None for what it lacks.

    >>> from tapegrad import keras
    >>> keras.utils.unpack_x_y_sample_weight((1, 2))
    (1, 2, None)
    """
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return (data, None, None)
    if len(data) == 1:
        return (data[0], None, None)
    if len(data) == 2:
        return (data[0], data[1], None)
    if len(data) == 3:
        return (data[0], data[1], data[2])
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                     f"`(x, y, sample_weight)`, found: {data}")
