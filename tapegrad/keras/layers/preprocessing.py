"""Preprocessing layers of the Keras guides: ``Rescaling``, ``Normalization`` (with
``adapt``) and ``RandomFlip``.

>>> import numpy as np
>>> from tapegrad import keras
>>> norm = keras.layers.Normalization(axis=-1)
>>> norm.adapt(np.array([[1.0, 10.0], [3.0, 30.0]]))
>>> norm.mean.numpy().tolist(), norm(np.array([[3.0, 10.0]])).numpy().tolist()
([[2.0, 20.0]], [[1.0, -1.0]])
"""
import math

import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend, random
from tapegrad.keras.layers.base import Layer


class Rescaling(Layer):
    """``inputs * scale + offset`` in the layer's dtype (``1 / 255`` maps bytes to [0, 1])."""

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset
        self.supports_masking = True

    def call(self, inputs):
        x = tf.cast(inputs, self._dtype)
        return x * tf.cast(self.scale, self._dtype) + tf.cast(self.offset, self._dtype)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class Normalization(Layer):
    """``(inputs - mean) / max(sqrt(variance), epsilon)`` per entry of the kept ``axis``
    (the last by default; None: one mean for everything). ``mean`` and ``variance`` are
    given, or computed from data by ``adapt`` (population variance) and kept in the
    non-trainable weights ``mean``, ``variance`` and ``count``. ``invert=True`` maps
    normalized values back."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        if axis is None:
            axis = ()
        elif isinstance(axis, int):
            axis = (axis,)
        else:
            axis = tuple(axis)
        self.axis = axis
        if (mean is None) != (variance is None):
            raise ValueError("When setting values directly, both `mean` and `variance` "
                             f"must be set. Received: mean={mean} and variance={variance}")
        self.input_mean, self.input_variance = mean, variance
        self.invert = invert
        self.supports_masking = True

    def build(self, input_shape):
        if input_shape is None:
            return
        ndim = len(input_shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError("All `axis` values must be in the range [-ndim, ndim). "
                             f"Received inputs with ndim={ndim}, while axis={self.axis}")
        keep = tuple(a % ndim for a in self.axis)
        shape = tuple(input_shape[a] for a in keep)
        if any(s is None for s in shape):
            raise ValueError("All `axis` values to be kept must have a known shape. "
                             f"Received axis={self.axis}, inputs.shape={input_shape}, with "
                             f"unknown axis at index {[a for a in keep if input_shape[a] is None][0]}")
        self._reduction_axes = tuple(a for a in range(ndim) if a not in keep)
        self._broadcast_shape = [input_shape[a] if a in keep else 1 for a in range(ndim)]
        self._var_shape = shape
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=shape, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int64",
                                         initializer="zeros", trainable=False)
        self.built = True

    def _stat(self, given, weight):
        if given is None:
            return tf.reshape(weight, self._broadcast_shape)
        value = np.broadcast_to(np.asarray(given, self._dtype), self._var_shape)
        return tf.constant(np.reshape(value, self._broadcast_shape))

    @property
    def mean(self):
        return self._stat(self.input_mean, getattr(self, "adapt_mean", None))

    @property
    def variance(self):
        return self._stat(self.input_variance, getattr(self, "adapt_variance", None))

    def adapt(self, data, batch_size=None, steps=None):
        """Set ``mean`` and ``variance`` from ``data``: an array, or batches (a
        ``tf.data.Dataset``), combined as Keras does batch by batch."""
        if self.input_mean is not None:
            raise ValueError("Cannot `adapt` a Normalization layer that is initialized "
                             "with static `mean` and `variance`.")
        if isinstance(data, (np.ndarray, tf.Tensor, list)):
            data = np.asarray(data)
            if not self.built:
                self.build(data.shape)
            mean = np.mean(data, axis=self._reduction_axes)
            var = np.var(data, axis=self._reduction_axes)
            count = math.prod(data.shape[a] for a in self._reduction_axes)
        else:
            mean = var = None
            count = 0
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                batch = np.asarray(batch, self._dtype)
                if not self.built:
                    self.build((None,) + batch.shape[1:])
                b_mean = np.mean(batch, axis=self._reduction_axes)
                b_var = np.var(batch, axis=self._reduction_axes)
                b_count = math.prod(batch.shape[a] for a in self._reduction_axes)
                if mean is None:
                    mean = var = np.zeros(self._var_shape, self._dtype)
                count += b_count
                w = b_count / count  # the weights in double, the statistics in float32
                w, keep = np.float32(w), np.float32(1.0 - w)
                new_mean = mean * keep + b_mean * w
                var = (var + (mean - new_mean) ** 2) * keep + (
                    b_var + (b_mean - new_mean) ** 2) * w
                mean = new_mean
            if mean is None:
                raise ValueError("Normalization.adapt: the data holds no batches.")
        self.adapt_mean.assign(np.asarray(mean, self._dtype).reshape(self._var_shape))
        self.adapt_variance.assign(np.asarray(var, self._dtype).reshape(self._var_shape))
        self.count.assign(np.int64(count))

    def call(self, inputs):
        x = tf.cast(inputs, self._dtype)
        scale = tf.maximum(tf.sqrt(self.variance), backend.epsilon())
        if self.invert:
            return self.mean + x * scale
        return (x - self.mean) / scale

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        def plain(v):
            return np.asarray(v).tolist() if isinstance(v, (np.ndarray, tf.Tensor)) else v
        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": plain(self.input_mean), "variance": plain(self.input_variance)}


class RandomFlip(Layer):
    """While training (its default, as in Keras), flips each image left-right
    (``"horizontal"``), upside down (``"vertical"``) or, for
    ``"horizontal_and_vertical"``, both at once (Keras 3.15 draws one coin per image for
    both axes), each with probability 1/2; at inference the images pass unchanged.
    The output is in the layer's dtype, as Keras casts."""

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None,
                 **kwargs):
        super().__init__(**kwargs)
        if mode not in ("horizontal", "vertical", "horizontal_and_vertical"):
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode "
                             f"argument {mode}")
        self.mode, self.seed = mode, seed
        self.data_format = backend.standardize_data_format(data_format)
        self._seeds = random.SeedGenerator(seed) if seed is not None else None

    def call(self, inputs, training=True):
        x = tf.convert_to_tensor(inputs)
        if len(x.shape) not in (3, 4):
            raise ValueError("Expected image tensor to have rank 3 (single image) or 4 "
                             f"(batch of images). Received: data.shape={tuple(x.shape)}")
        x = tf.cast(x, self._dtype)
        if not training:
            return x
        batched = len(x.shape) == 4
        images = x if batched else tf.expand_dims(x, 0)
        rows, cols = (2, 3) if self.data_format == "channels_first" else (1, 2)
        n = images.shape[0]
        flip = tf.reshape(tf.random.uniform([n], seed=self._draw()) <= 0.5, [n, 1, 1, 1])
        for axis, on in ((cols, self.mode != "vertical"), (rows, self.mode != "horizontal")):
            if on:
                images = tf.where(flip, tf.reverse(images, [axis]), images)
        return images if batched else images[0]

    def _draw(self):
        return self._seeds.next() if self._seeds is not None else None

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format,
                "seed": self.seed, "mode": self.mode}
