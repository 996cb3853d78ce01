"""``keras.random``: random tensors with Keras 3's ``seed`` argument.

``seed`` is None (the global generator: fresh numbers per call), an integer (the same
numbers on every call, as a stateless draw) or a ``SeedGenerator``, whose own sequence of
seeds makes a program's draws reproducible and different from call to call. Inside
``tf.function`` a ``SeedGenerator`` draws from the global generator instead: a seed taken
while tracing would be baked into the trace and repeat on every call, where Keras's
generator (a Variable) advances.

>>> from tapegrad import keras
>>> gen = keras.random.SeedGenerator(1337)
>>> a, b = keras.random.normal((2,), seed=gen), keras.random.normal((2,), seed=gen)
>>> bool((a.numpy() != b.numpy()).all())
True
>>> again = keras.random.SeedGenerator(1337)
>>> bool((keras.random.normal((2,), seed=again).numpy() == a.numpy()).all())
True
"""
import numpy as np

from tapegrad.core.state import STATE
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend


class SeedGenerator:
    """A reproducible source of seeds for ``keras.random``'s functions and layers."""

    def __init__(self, seed=None, name=None, **kwargs):
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError("Argument `seed` must be an integer. "
                             f"Received: seed={seed}")
        self.name = name or "seed_generator"
        self._initial = seed
        self._rng = np.random.default_rng(seed)

    def next(self, ordered=True):
        """A fresh integer seed (None while tracing: see the module's notes)."""
        if STATE.stack.tracers:
            return None
        return int(self._rng.integers(0, 2**31 - 1))

    def get_config(self):
        return {"seed": self._initial}


def _seed(seed):
    if seed is None or isinstance(seed, (int, np.integer)):
        return seed
    if isinstance(seed, SeedGenerator):
        return seed.next()
    raise ValueError("Argument `seed` must be either an integer or an instance of "
                     f"`SeedGenerator`. Received: seed={seed} (of type {type(seed)})")


def _dtype(dtype):
    return dtype or backend.floatx()


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Samples of a normal distribution."""
    return tf.random.normal(shape, mean, stddev, _dtype(dtype), seed=_seed(seed))


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Samples of the uniform distribution on ``[minval, maxval)``."""
    return tf.random.uniform(shape, minval, maxval, _dtype(dtype), seed=_seed(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal samples redrawn until within two standard deviations of the mean."""
    return tf.random.truncated_normal(shape, mean, stddev, _dtype(dtype), seed=_seed(seed))


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Integers drawn uniformly from ``[minval, maxval)``."""
    return tf.random.uniform(shape, minval, maxval, dtype, seed=_seed(seed))


def dropout(inputs, rate, noise_shape=None, seed=None):
    """``inputs`` with each entry zeroed with probability ``rate``, the rest scaled by
    ``1 / (1 - rate)``."""
    inputs = tf.convert_to_tensor(inputs)
    shape = tf.shape(inputs) if noise_shape is None else noise_shape
    keep = tf.random.uniform(shape, dtype=inputs.dtype, seed=_seed(seed)) >= rate
    return tf.where(keep, inputs / (1.0 - rate), tf.zeros_like(inputs))


def shuffle(x, axis=0, seed=None):
    """``x`` with its entries along ``axis`` in a random order."""
    x = tf.convert_to_tensor(x)
    n = int(x.shape[axis])
    keys = tf.random.uniform([n], seed=_seed(seed))
    return tf.gather(x, tf.argsort(keys), axis=axis)
