"""The data ``fit``, ``evaluate`` and ``predict`` accept: arrays (NumPy, tensors, lists or
dicts of them) cut into batches, or an iterable of batches (a ``tf.data.Dataset``, a
generator). A re-iterable source is iterated afresh each epoch; a one-shot iterator is
consumed across epochs (``steps_per_epoch`` batches each, as in Keras)."""
import math
import warnings

import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.dataset_utils import PyDataset


def _is_leaf(x):
    return isinstance(x, (np.ndarray, tf.Tensor, np.generic))


def _is_array(x):
    # a list of arrays is a multi-input model's x (as in Keras); a list of tuples is a
    # list of batches
    return _is_leaf(x) or (isinstance(x, (list, tuple)) and len(x) > 0 and all(
        _is_leaf(v) or isinstance(v, dict) for v in x)) or (
        isinstance(x, dict) and all(_is_leaf(v) for v in x.values()))


def _length(x):
    return len(tf.nest.flatten(x)[0])


def _take(x, idx):
    def take(a):
        return np.asarray(a)[idx]
    return tf.nest.map_structure(take, x)


def _tensors(x):
    def conv(a):
        return tf.constant(a) if isinstance(a, np.ndarray) else a
    return tf.nest.map_structure(conv, x)


class _ArrayBatches:
    def __init__(self, x, y, sample_weight, batch_size, shuffle, steps):
        self.parts = tuple(p for p in (x, y, sample_weight) if p is not None)
        self.parts = tf.nest.map_structure(np.asarray, self.parts)
        self._lone = not isinstance(x, (list, tuple))
        self.n = _length(self.parts[0])
        for p in self.parts[1:]:
            if _length(p) != self.n:
                raise ValueError("Data cardinality is ambiguous. Make sure all arrays contain "
                                 "the same number of samples.")
        self.batch_size = batch_size or 32
        self.shuffle = shuffle
        self.total = math.ceil(self.n / self.batch_size)
        self.steps = self.total if steps is None else min(self.total, int(steps))
        self._continued = None if steps is None else _Continued(self._all, int(steps),
                                                                self.total)

    def _all(self):
        order = backend.rng().permutation(self.n) if self.shuffle else None
        for i in range(self.total):
            lo, hi = i * self.batch_size, min((i + 1) * self.batch_size, self.n)
            idx = order[lo:hi] if order is not None else slice(lo, hi)
            batch = tuple(_tensors(_take(p, idx)) for p in self.parts)
            # Keras hands train_step a lone x as itself (the VAE example's ``data``); a
            # list or tuple x stays (x,): a multi-input model's x, not (x, y)
            yield batch[0] if len(batch) == 1 and self._lone else batch

    def epoch(self):
        return self._all() if self._continued is None else self._continued.epoch()


def _ran_out():
    warnings.warn("Your input ran out of data; interrupting training. Make sure that your "
                  "dataset or generator can generate at least `steps_per_epoch * epochs` "
                  "batches. You may need to use the `.repeat()` function when building your "
                  "dataset.", stacklevel=3)


class _Continued:
    """Keras's epochs of ``steps_per_epoch`` batches: each epoch continues the pass over
    the data where the last one stopped; a pass that runs out ends its epoch early (with
    Keras's warning) and the next epoch starts a new pass (reshuffled)."""

    def __init__(self, make, per_epoch, total):
        self.make, self.per_epoch, self.total = make, per_epoch, total
        self.it, self.seen = None, 0

    def epoch(self):
        if self.it is None:
            self.it, self.seen = iter(self.make()), 0
        for _ in range(self.per_epoch):
            if self.total is not None and self.seen >= self.total:
                _ran_out()
                break
            try:
                batch = next(self.it)
            except StopIteration:
                _ran_out()
                self.it = None
                return
            self.seen += 1
            yield batch
        if self.total is not None and self.seen >= self.total:
            self.it = None


def _clean_class_weight(class_weight):
    if not hasattr(class_weight, "items") or not hasattr(class_weight, "get"):
        raise ValueError("`class_weight` must be a dict-like mapping of class indices to "
                         f"weights. Received: class_weight={class_weight} of type "
                         f"{type(class_weight)}.")
    out = {}
    for key, val in class_weight.items():
        try:
            out[int(key)] = float(val)
        except (TypeError, ValueError):
            raise ValueError("`class_weight` must be a dictionary with integer keys "
                             "representing class indices. Received an invalid key: "
                             f"{key!r} of type {type(key)}.") from None
    return out


def class_weight_to_sample_weights(y, class_weight):
    """Keras's per-sample weights from ``class_weight`` (``{class: weight}``): the class
    of a sample is its label, the argmax of a one-hot row, or the rounded value of a
    single column; classes not in the dict weigh 1.

    >>> class_weight_to_sample_weights(np.array([0, 1, 1, 2]), {1: 3.0}).tolist()
    [1.0, 3.0, 3.0, 1.0]
    """
    if tf.nest.is_nested(y):
        raise ValueError("`class_weight` is only supported for Models with a single "
                         "output.")
    weights = _clean_class_weight(class_weight)
    y = np.asarray(y)
    if y.ndim > 1:
        y = np.argmax(y, axis=-1) if y.shape[-1] != 1 else np.squeeze(y, axis=-1)
    classes = np.round(y).astype("int32").reshape(-1)
    return np.array([weights.get(int(c), 1.0) for c in classes], dtype=backend.floatx())


def _weigh_batch(batch, class_weight):
    if not isinstance(batch, tuple) or len(batch) < 2:
        raise ValueError("`class_weight` needs batches of `(x, y)`; received a batch "
                         f"without targets: {batch!r}")
    if len(batch) == 3 and batch[2] is not None:
        raise ValueError("You cannot `class_weight` and `sample_weight` at the same time.")
    return batch[0], batch[1], tf.constant(class_weight_to_sample_weights(batch[1],
                                                                          class_weight))


def _known_length(source):
    try:
        return len(source) if hasattr(source, "__len__") else None
    except TypeError:  # a dataset of infinite or unknown cardinality
        return None


class _IterableBatches:
    def __init__(self, source, steps, class_weight=None):
        self.source, self.steps = source, steps
        self.class_weight = class_weight
        self.one_shot = iter(source) is source
        if self.one_shot and steps is None:
            self.steps = None
        self._it = iter(source) if self.one_shot else None
        # a re-iterable source with steps_per_epoch: the epochs continue one pass, as Keras
        self._continued = None
        if not self.one_shot and steps is not None:
            self._continued = _Continued(lambda: source, int(steps), _known_length(source))
        if self.steps is None and hasattr(source, "__len__"):
            try:
                self.steps = len(source)
            except TypeError:
                self.steps = None

    def _batches(self):
        if self._continued is not None:
            yield from self._continued.epoch()
            return
        it = self._it if self.one_shot else iter(self.source)
        count = 0
        while self.steps is None or count < self.steps:
            try:
                batch = next(it)
            except StopIteration:
                return
            count += 1
            yield batch

    def epoch(self):
        # a keras.utils.PyDataset hears when each pass over it begins and ends (Keras's)
        hooks = isinstance(self.source, PyDataset)
        if hooks:
            self.source.on_epoch_begin()
        for batch in self._batches():
            batch = tuple(batch) if isinstance(batch, list) else batch
            yield batch if self.class_weight is None else _weigh_batch(batch,
                                                                       self.class_weight)
        if hooks:
            self.source.on_epoch_end()


def batches(x, y, sample_weight, batch_size, shuffle, steps, class_weight=None):
    """A source of batches with ``.steps`` (or None) and ``.epoch()``; ``class_weight``
    becomes each sample's weight (as in Keras)."""
    if x is None:
        raise ValueError("Unrecognized data type: x=None")
    if _is_array(x) or isinstance(x, (float, int)):
        if class_weight is not None:
            if sample_weight is not None:
                raise ValueError("You cannot `class_weight` and `sample_weight` at the "
                                 "same time.")
            if y is None:
                raise ValueError("`class_weight` needs targets `y`.")
            sample_weight = class_weight_to_sample_weights(y, class_weight)
        return _ArrayBatches(x, y, sample_weight, batch_size, shuffle, steps)
    if y is not None:
        raise ValueError("`y` argument is not supported when using a dataset or an iterable "
                         f"as input (received y={y!r}); the dataset should yield (x, y) "
                         "batches.")
    if batch_size is not None and hasattr(x, "element_spec"):
        raise ValueError("The `batch_size` argument must not be specified for the given "
                         "input type: the dataset is already batched.")
    if class_weight is not None:
        _clean_class_weight(class_weight)  # a bad dict fails before the first batch
    return _IterableBatches(x, steps, class_weight)


def split(x, y, sample_weight, fraction):
    """Keras's ``validation_split``: the last ``fraction`` of the samples (not shuffled)."""
    if not _is_array(x):
        raise ValueError("`validation_split` is only supported for Tensors or NumPy arrays, "
                         f"found: {type(x)}")
    n = _length(x)
    cut = int(n * (1.0 - fraction))
    head, tail = slice(0, cut), slice(cut, n)
    parts = [None if p is None else (_take(p, head), _take(p, tail))
             for p in (x, y, sample_weight)]
    train = tuple(None if p is None else p[0] for p in parts)
    val = tuple(None if p is None else p[1] for p in parts)
    return train, val


def unpack_validation(validation_data):
    """``(x, y)``, ``(x, y, sample_weight)`` or a dataset, as ``evaluate``'s x, y, sw."""
    if isinstance(validation_data, (tuple, list)) and len(validation_data) in (2, 3) and (
            _is_array(validation_data[0])):
        x, y, *rest = validation_data
        return x, y, (rest[0] if rest else None)
    return validation_data, None, None
