"""``tf.keras``: Keras 3's layers, models, optimizers, losses, metrics and training loop,
written for tapegrad (``from tapegrad import keras``, or ``tf.keras`` after
``import tapegrad as tf``). Every computation goes through tapegrad's TensorFlow-named
operations and all state is in Variables, so GradientTape, ``tf.function`` and the
Jacobian machinery work on Keras models.

>>> import numpy as np
>>> import tapegrad as tf
>>> model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
>>> model.compile(optimizer="sgd", loss="mse")
>>> hist = model.fit(np.ones((8, 2)), np.ones((8, 1)), epochs=2, verbose=0)
>>> sorted(hist.history)
['loss']
"""
from tapegrad.keras import activations, applications, backend, callbacks, constraints  # noqa: F401
from tapegrad.keras import datasets  # noqa: F401
from tapegrad.keras import initializers, mixed_precision  # noqa: F401
from tapegrad.keras import random  # noqa: F401
from tapegrad.keras import layers, losses, metrics, models, ops, optimizers  # noqa: F401
from tapegrad.keras import preprocessing, regularizers, saving, utils  # noqa: F401
from tapegrad.keras.layers import Input, InputSpec, Layer  # noqa: F401
from tapegrad.keras.models import Model, Sequential  # noqa: F401

__version__ = "3.15.0"  # the Keras API version whose names and defaults this follows
