"""Regularization layers beside ``Dropout``: ``GaussianNoise``, ``GaussianDropout``,
``AlphaDropout``, ``SpatialDropout1D/2D/3D`` and ``ActivityRegularization`` (Keras 3's).

The noise layers act only while training (``training=True``, as ``fit`` passes); in inference
they are the identity. ``seed`` makes a layer's draws reproducible (a ``keras.random``
``SeedGenerator`` of its own); None draws from the global generator.

>>> import numpy as np
>>> from tapegrad import keras
>>> x = np.ones((2, 3), "float32")
>>> bool((keras.layers.GaussianNoise(0.1)(x).numpy() == x).all())   # inference: identity
True
>>> y = keras.layers.SpatialDropout1D(0.5, seed=1)(np.ones((3, 4, 2), "float32"),
...                                                training=True).numpy()
>>> bool((y == y[:, :1]).all()), sorted(set(y.ravel().tolist())) <= [0.0, 2.0]  # per channel
(True, True)
"""
import math

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras import random as krandom
from tapegrad.keras import regularizers
from tapegrad.keras.layers.base import Layer
from tapegrad.keras.layers.input_spec import InputSpec


def _rate(value, what="rate"):
    if not 0 <= value <= 1:
        raise ValueError(f"Invalid value received for argument `{what}`. Expected a float "
                         f"value between 0 and 1. Received: {what}={value}")
    return value


class _Noise(Layer):
    """A layer that draws noise while training, from a seed generator of its own."""

    def __init__(self, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.seed_generator = krandom.SeedGenerator(seed) if seed is not None else None
        self.supports_masking = True

    def compute_output_shape(self, input_shape):
        return input_shape


class GaussianNoise(_Noise):
    """Adds zero-mean normal noise of standard deviation ``stddev`` while training."""

    def __init__(self, stddev, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.stddev = _rate(stddev, "stddev")

    def call(self, inputs, training=False):
        if not training or self.stddev == 0:
            return inputs
        return inputs + krandom.normal(tf.shape(inputs), 0.0, self.stddev, inputs.dtype,
                                       seed=self.seed_generator)


class GaussianDropout(_Noise):
    """Multiplies by normal noise of mean 1 and standard deviation
    ``sqrt(rate / (1 - rate))`` while training."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rate = _rate(rate)

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        stddev = math.sqrt(self.rate / (1.0 - self.rate))
        return inputs * krandom.normal(tf.shape(inputs), 1.0, stddev, inputs.dtype,
                                       seed=self.seed_generator)


class AlphaDropout(_Noise):
    """Dropout that keeps a SELU network's mean and variance: dropped entries become
    SELU's negative saturation ``-scale * alpha``, then an affine map restores the moments.
    ``noise_shape`` as ``Dropout``'s (None entries take the input's size)."""

    _ALPHA, _SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rate, self.noise_shape = _rate(rate), noise_shape

    def call(self, inputs, training=False):
        if not training or self.rate <= 0:
            return inputs
        shape = tf.shape(inputs) if self.noise_shape is None else [
            d if d is not None else inputs.shape[i] for i, d in enumerate(self.noise_shape)]
        alpha_p = -self._ALPHA * self._SCALE
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        keep = krandom.uniform(shape, dtype=inputs.dtype, seed=self.seed_generator) >= self.rate
        kept = tf.cast(keep, inputs.dtype)
        x = inputs * kept + alpha_p * (1 - kept)
        return a * x + b


class _SpatialDropout(_Noise):
    """Dropout of whole feature maps: one draw per (example, channel)."""

    _rank = None

    def get_config(self):
        config = super().get_config()
        del config["trainable"]  # Keras's config has none (nor does the constructor take it)
        return config

    def __init__(self, rate, data_format=None, seed=None, name=None, dtype=None):
        super().__init__(seed=seed, name=name, dtype=dtype)
        self.rate = _rate(rate)
        if self._rank != 1:
            self.data_format = backend.standardize_data_format(data_format)
        self.input_spec = InputSpec(ndim=self._rank + 2)

    def _noise_shape(self, inputs):
        n, c = inputs.shape[0], inputs.shape[-1]
        if getattr(self, "data_format", "channels_last") == "channels_first":
            return [n, inputs.shape[1]] + [1] * self._rank
        return [n] + [1] * self._rank + [c]

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return tf.zeros_like(inputs)
        return krandom.dropout(inputs, self.rate, noise_shape=self._noise_shape(inputs),
                               seed=self.seed_generator)


class SpatialDropout1D(_SpatialDropout):
    """Drops whole channels of ``(batch, steps, channels)`` inputs while training."""
    _rank = 1

    def __init__(self, rate, seed=None, name=None, dtype=None):
        super().__init__(rate, seed=seed, name=name, dtype=dtype)


class SpatialDropout2D(_SpatialDropout):
    """Drops whole 2-D feature maps (``data_format`` says where the channels are)."""
    _rank = 2


class SpatialDropout3D(_SpatialDropout):
    """Drops whole 3-D feature maps (``data_format`` says where the channels are)."""
    _rank = 3


class ActivityRegularization(Layer):
    """The identity, adding ``l1 * sum(|x|) + l2 * sum(x**2)`` of its output to the losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = l1, l2
        self.supports_masking = True

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape
