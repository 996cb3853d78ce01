"""Keras's categorical preprocessing layers: ``CategoryEncoding`` (integer ids to
one-hot, multi-hot or count vectors) and ``Discretization`` (numbers to bucket ids, the
boundaries given or found by ``adapt`` with Keras's approximate quantiles).

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.layers.CategoryEncoding(4, output_mode="multi_hot")(np.array([[0, 1, 1], [3, 2, 0]])).numpy().tolist()
[[1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 1.0, 1.0]]
>>> keras.layers.Discretization([0.0, 1.0])(np.array([-0.5, 0.0, 0.5, 2.0])).numpy().tolist()
[0, 1, 1, 2]
"""
import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.base import Layer

MODES = ("int", "one_hot", "multi_hot", "count")


def encode(ids, mode, depth, dtype, count_weights=None):
    """Keras's ``encode_categorical_inputs``: ``one_hot`` adds an axis (a trailing axis of
    size 1 is replaced); ``multi_hot`` and ``count`` reduce the ids of each row (a 1-D or
    0-D input is one row); ids outside [0, depth) count for nothing, negative ones are an
    error as in TensorFlow's bincount."""
    if mode == "int":
        return tf.cast(ids, dtype)
    ids = tf.convert_to_tensor(ids)
    if ids.dtype.kind == "f":
        ids = tf.cast(ids, tf.int64)  # truncation, as TensorFlow's bincount and one_hot
    if len(ids.shape) == 0:
        ids = tf.reshape(ids, [1])
    if mode == "one_hot":
        if len(ids.shape) > 1 and ids.shape[-1] == 1:
            ids = tf.squeeze(ids, [-1])
        return tf.one_hot(ids, depth, dtype=dtype)
    if len(ids.shape) <= 2:
        _check_non_negative(ids)
    axis = 1 if len(ids.shape) > 1 else 0
    if mode == "multi_hot":
        return tf.reduce_max(tf.one_hot(ids, depth, dtype=dtype), axis=axis)
    if count_weights is not None:
        weights = tf.convert_to_tensor(count_weights)
        hot = tf.one_hot(ids, depth, dtype=weights.dtype) * tf.expand_dims(weights, -1)
    else:
        hot = tf.one_hot(ids, depth, dtype=dtype)
    return tf.reduce_sum(hot, axis=axis)


def _check_non_negative(ids):
    # a concrete tensor (eager): TensorFlow's error; inside a trace the ids are unknown
    # (a symbolic tensor's ``_value`` raises TypeError, so ask before reading it)
    if getattr(ids, "_symbolic", False):
        return
    values = getattr(ids, "_value", None)
    if isinstance(values, np.ndarray) and values.size and values.min() < 0:
        raise InvalidArgumentError("Input arr must be non-negative!")


class CategoryEncoding(Layer):
    """Integer ids (below ``num_tokens``) to ``one_hot``, ``multi_hot`` (``binary``) or
    ``count`` vectors (``count_weights`` weigh the counts), in the layer's dtype."""
    _config_omits = ("sparse",)

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in MODES[1:]:
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of "
                             "tokens is not known beforehand, use the IntegerLookup layer "
                             "instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        if sparse:
            raise NotImplementedError("CategoryEncoding(sparse=True) is not implemented in "
                                      "tapegrad.")
        self.num_tokens, self.output_mode, self.sparse = num_tokens, output_mode, sparse

    def call(self, inputs, count_weights=None):
        if count_weights is not None:
            if self.output_mode != "count":
                raise ValueError("`count_weights` is not used when `output_mode` is not "
                                 f"`'count'`. Received `count_weights={count_weights}`.")
            count_weights = tf.cast(tf.convert_to_tensor(count_weights), self._dtype)
        return encode(inputs, self.output_mode, self.num_tokens, self._dtype, count_weights)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if not shape:
            return (self.num_tokens,)
        if self.output_mode == "one_hot" and (shape[-1] != 1 or len(shape) == 1):
            return shape + (self.num_tokens,)
        return shape[:-1] + (self.num_tokens,)

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode}


def _summary(values, epsilon):
    """Every ``step``-th of the sorted values, each weighing ``step`` (Keras's summary)."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(values.size / (1.0 / epsilon), 1)
    kept = values[int(step - 1)::int(step)]
    return np.stack([kept, np.full_like(kept, step)])


def _compress(summary, epsilon):
    """The summary at the quantiles epsilon, 2 epsilon, ..., 1 (interpolated)."""
    if summary.shape[1] * epsilon < 1:
        return summary
    quantiles = epsilon + np.arange(0.0, 1.0, epsilon)
    totals = np.cumsum(summary[1])
    fractions = totals / totals[-1]
    points = np.interp(quantiles, fractions, summary[0])
    totals = np.interp(quantiles, fractions, totals)
    weights = np.diff(totals, prepend=0.0)
    return np.stack((points, weights)).astype(np.float32)


class Discretization(Layer):
    """Bucket ids of numbers: ``i`` where ``bin_boundaries[i-1] <= x < bin_boundaries[i]``
    (compared in float32; NaN goes to the last bucket), then encoded by ``output_mode``
    (``int``: int32 ids). With ``num_bins`` the boundaries come from ``adapt``."""

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse=False, dtype=None, name=None):
        super().__init__(name=name, dtype=dtype)
        if sparse:
            raise NotImplementedError("Discretization(sparse=True) is not implemented in "
                                      "tapegrad.")
        if output_mode not in MODES:
            raise ValueError("Unknown value for `output_mode` argument of Discretization. "
                             f"Allowed values are: {MODES}. Received: output_mode={output_mode}")
        if num_bins is not None and num_bins < 0:
            raise ValueError("`num_bins` must be greater than or equal to 0. Received: "
                             f"`num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. "
                             f"Received: `num_bins={num_bins}` and "
                             f"`bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries, self.num_bins = bin_boundaries, num_bins
        self.epsilon, self.output_mode, self.sparse = epsilon, output_mode, sparse
        self.summary = None if bin_boundaries else np.zeros((2, 0), np.float32)

    def adapt(self, data, steps=None):
        """Set ``bin_boundaries`` to ``num_bins`` approximate quantiles of ``data`` (an
        array, or batches: a ``tf.data.Dataset`` or another iterable)."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized "
                             "with `bin_boundaries`, use `num_bins` instead.")
        self.summary = np.zeros((2, 0), np.float32)
        if isinstance(data, (np.ndarray, tf.Tensor)) or not hasattr(data, "__iter__"):
            data = [data]
        for i, batch in enumerate(data):
            if steps is not None and i >= steps:
                break
            merged = np.concatenate(
                (_summary(np.asarray(batch).astype(np.float32), self.epsilon), self.summary),
                axis=1)
            merged = np.take(merged, np.argsort(merged[0]), axis=1)
            self.summary = _compress(merged, self.epsilon)
        self.bin_boundaries = _compress(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at "
                             "construction time or call `adapt(dataset)` before you can "
                             "start using the `Discretization` layer.")
        bounds = np.asarray(self.bin_boundaries, np.float32)
        if np.any(bounds[1:] < bounds[:-1]):
            raise InvalidArgumentError("Expected sorted boundaries")
        x = tf.expand_dims(tf.cast(tf.convert_to_tensor(inputs), tf.float32), -1)
        # not (x < b) counts the boundaries at or below x, and every one for NaN
        ids = tf.reduce_sum(tf.cast(tf.logical_not(x < tf.constant(bounds)), tf.int32),
                            axis=-1)
        dtype = tf.int32 if self.output_mode == "int" else self._dtype
        return encode(ids, self.output_mode, len(bounds) + 1, dtype)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if self.output_mode == "int":
            return shape
        depth = (len(self.bin_boundaries) + 1 if self.bin_boundaries is not None
                 else self.num_bins)
        if self.output_mode == "one_hot":
            if shape and shape[-1] == 1 and len(shape) > 1:
                return shape[:-1] + (depth,)
            return shape + (depth,)
        return (shape[0],) + shape[2:] + (depth,) if len(shape) >= 2 else (depth,)

    def get_config(self):
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": self._dtype_config()}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        bounds = config.pop("bin_boundaries", None)
        if bounds is not None and config.get("num_bins") is not None:
            layer = cls(**config)  # adapted: num_bins and the boundaries it found
            layer.bin_boundaries = bounds
            return layer
        return cls(bin_boundaries=bounds, **config)
