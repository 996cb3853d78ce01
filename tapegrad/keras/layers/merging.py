"""Layers that merge a list of inputs: ``Concatenate``, ``Add``, ``Subtract``, ``Multiply``,
``Average``, ``Maximum``, ``Minimum``.

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.layers.Concatenate()([np.ones((2, 1)), np.zeros((2, 2))]).shape
(2, 3)
"""
import functools

from tapegrad.keras import _tf as tf
from tapegrad.keras.layers.base import Layer


class Merge(Layer):
    """A layer of a list of same-shaped (broadcastable) inputs."""

    def _check(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError("A merge layer should be called on a list of inputs. "
                             f"Received: inputs={inputs} (not a list of tensors)")
        if len(inputs) < 1:
            raise ValueError("A merge layer should be called on a list of at least 1 input. "
                             f"Got {len(inputs)} inputs. Full input_shape received: "
                             f"{[tuple(x.shape) for x in inputs]}")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def build(self, input_shape):
        self._check(input_shape)

    def call(self, inputs):
        self._check(inputs)
        return functools.reduce(self._merge, inputs)

    def compute_mask(self, inputs, previous_mask=None):
        """The OR of the inputs' masks (None if any input has none), as Keras."""
        mask = previous_mask
        if mask is None or any(m is None for m in mask):
            return None
        return functools.reduce(tf.logical_or, mask)


class Add(Merge):
    def _merge(self, a, b):
        return a + b


class Subtract(Merge):
    def call(self, inputs):
        if len(inputs) != 2:
            raise ValueError("A `Subtract` layer should be called on exactly 2 inputs. "
                             f"Received: inputs={inputs}")
        return inputs[0] - inputs[1]


class Multiply(Merge):
    def _merge(self, a, b):
        return a * b


class Maximum(Merge):
    def _merge(self, a, b):
        return tf.maximum(a, b)


class Minimum(Merge):
    def _merge(self, a, b):
        return tf.minimum(a, b)


class Average(Merge):
    def call(self, inputs):
        self._check(inputs)
        return functools.reduce(lambda a, b: a + b, inputs) / len(inputs)


class Concatenate(Merge):
    """Joins the inputs along ``axis`` (the last by default)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def build(self, input_shape):
        self._check(input_shape)
        shapes = [tuple(s) for s in input_shape]
        ok = len({len(s) for s in shapes}) == 1
        if ok:
            ax = self.axis % len(shapes[0])
            for i in range(len(shapes[0])):
                known = {s[i] for s in shapes if s[i] is not None}  # None matches any size
                ok = ok and (i == ax or len(known) <= 1)
        if not ok:
            raise ValueError("A `Concatenate` layer requires inputs with matching shapes "
                             "except for the concatenation axis. Received: "
                             f"input_shape={shapes}")

    def call(self, inputs):
        self._check(inputs)
        return tf.concat(list(inputs), axis=self.axis)

    def compute_mask(self, inputs, previous_mask=None):
        """The inputs' masks (all True for an input without one) joined along ``axis``,
        then any() over the last axis, as Keras."""
        mask = previous_mask
        if mask is None or all(m is None for m in mask):
            return None
        parts = []
        for x, m in zip(inputs, mask):
            if m is None:
                m = tf.ones_like(x, dtype="bool")
            elif m.ndim < x.ndim:
                m = tf.logical_or(tf.expand_dims(m, -1), tf.zeros_like(x, dtype="bool"))
            parts.append(m)
        return tf.reduce_any(tf.concat(parts, axis=self.axis), axis=-1)


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    return Subtract(**kwargs)(inputs)


def average(inputs, **kwargs):
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    return Minimum(**kwargs)(inputs)
