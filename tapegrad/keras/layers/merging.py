"""Layers that merge a list of inputs: ``Concatenate``, ``Add``, ``Subtract``, ``Multiply``,
``Average``, ``Maximum``, ``Minimum``, and ``Dot`` (Keras's batch dot product of two).

>>> import numpy as np
>>> from tapegrad import keras
>>> keras.layers.Concatenate()([np.ones((2, 1)), np.zeros((2, 2))]).shape
TensorShape([2, 3])
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


class Dot(Merge):
    """The dot product of two batches of samples along ``axes`` (one int for both, or one
    per input; never the batch axis), optionally of L2-normalized samples (their cosine
    similarity). Shapes ``(B, 3, 5)`` and ``(B, 10, 3)`` with ``axes=(1, 2)`` give
    ``(B, 5, 10)``; a result of rank 1 is ``(B, 1)``.

    >>> import numpy as np
    >>> from tapegrad import keras
    >>> keras.layers.Dot(axes=1)([np.ones((2, 3)), np.ones((2, 3))]).numpy().tolist()
    [[3.0], [3.0]]
    """

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)):
                raise TypeError("Invalid type for argument `axes`: it should be a list or an "
                                f"int. Received: axes={axes}")
            if len(axes) != 2:
                raise ValueError("Invalid format for argument `axes`: it should contain two "
                                 f"elements. Received: axes={axes}")
            if not all(isinstance(a, int) for a in axes):
                raise ValueError("Invalid format for argument `axes`: list elements should "
                                 f"be integers. Received: axes={axes}")
        self.axes, self.normalize = axes, normalize

    def _axes(self, shapes):
        axes = [self.axes] * 2 if isinstance(self.axes, int) else list(self.axes)
        return [a % len(s) if a < 0 else a for a, s in zip(axes, shapes)]

    def build(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) != 2 or not all(
                isinstance(s, (list, tuple)) for s in input_shape):
            raise ValueError("A `Dot` layer should be called on a list of 2 inputs. "
                             f"Received: input_shape={input_shape}")
        a, b = self._axes(input_shape)
        s1, s2 = input_shape
        if s1[a] is not None and s2[b] is not None and s1[a] != s2[b]:
            raise ValueError(f"Incompatible input shapes: axis values {s1[a]} (at axis {a}) "
                             f"!= {s2[b]} (at axis {b}). Full input shapes: {s1}, {s2}")

    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise ValueError("A `Dot` layer should be called on exactly 2 inputs. "
                             f"Received: inputs={inputs}")
        x, y = (tf.convert_to_tensor(t) for t in inputs)
        axes = self._axes([x.shape, y.shape])
        if self.normalize:
            from tapegrad.keras.ops import normalize
            x, y = normalize(x, axis=axes[0]), normalize(y, axis=axes[1])
        return batch_dot(x, y, axes)

    def compute_mask(self, inputs, previous_mask=None):
        return None


def batch_dot(x, y, axes):
    """Keras's ``batch_dot``: per sample, ``x`` contracted with ``y`` along ``axes`` (the
    batch axis excluded); the result holds ``x``'s other axes, then ``y``'s."""
    nx, ny = x.ndim, y.ndim
    if nx < 2 or ny < 2:
        raise ValueError("Cannot do batch_dot on inputs with rank < 2. Received inputs with "
                         f"shapes {tuple(x.shape)} and {tuple(y.shape)}.")
    if None not in (x.shape[0], y.shape[0]) and x.shape[0] != y.shape[0]:
        raise ValueError("Cannot do batch_dot on inputs with different batch sizes. "
                         f"Received inputs with shapes {tuple(x.shape)} and {tuple(y.shape)}.")
    a, b = axes
    if 0 in (a, b):
        raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not "
                         "batched, add a dummy batch dimension to your inputs using "
                         "keras.ops.expand_dims(x, 0)")
    if None not in (x.shape[a], y.shape[b]) and x.shape[a] != y.shape[b]:
        raise ValueError(f"Cannot do batch_dot on inputs with shapes {tuple(x.shape)} and "
                         f"{tuple(y.shape)} with axes={list(axes)}. x.shape[{a}] != "
                         f"y.shape[{b}] ({x.shape[a]} != {y.shape[b]}).")
    # (B, rest of x, k) @ (B, k, rest of y) with the other axes flattened, as one matmul
    xr = tf.transpose(x, [0] + [i for i in range(1, nx) if i != a] + [a])
    yr = tf.transpose(y, [0, b] + [i for i in range(1, ny) if i != b])
    x_rest, y_rest = list(xr.shape[1:-1]), list(yr.shape[2:])
    out = tf.matmul(tf.reshape(xr, [-1, _prod(x_rest), xr.shape[-1]]),
                    tf.reshape(yr, [-1, yr.shape[1], _prod(y_rest)]))
    return tf.reshape(out, [-1] + (x_rest + y_rest or [1]))


def _prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


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


def dot(inputs, axes=-1, **kwargs):
    """``Dot(axes)(inputs)``."""
    return Dot(axes=axes, **kwargs)(inputs)


def minimum(inputs, **kwargs):
    return Minimum(**kwargs)(inputs)
