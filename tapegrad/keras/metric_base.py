"""``keras.metrics.Metric``: the base class, its state in Variables made with
``add_variable`` (``metrics.py`` and ``confusion_metrics.py`` build on it).

>>> from tapegrad import keras
>>> class Count(keras.metrics.Metric):
...     def __init__(self):
...         super().__init__(name="count")
...         self.n = self.add_variable(name="n")
...     def update_state(self, x):
...         self.n.assign_add(float(len(x)))
...     def result(self):
...         return self.n
>>> c = Count(); c.update_state([1, 2, 3]); float(c.result())
3.0
"""
import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend


class Metric:
    """Base class: state in Variables made with ``add_variable``."""

    def __init__(self, name=None, dtype=None):
        self.name = name or tf.module._snake(type(self).__name__)
        self.dtype = dtype or backend.floatx()
        self._variables = []

    def add_variable(self, shape=(), initializer="zeros", dtype=None, name=None,
                     aggregation="sum"):
        from tapegrad.keras import initializers
        v = tf.Variable(initializers.get(initializer)(tuple(shape), dtype=dtype or self.dtype),
                        trainable=False)
        v.name = name or "variable"
        self._variables.append(v)
        return v

    add_weight = add_variable

    @property
    def variables(self):
        return list(self._variables)

    def reset_state(self):
        for v in self._variables:
            v.assign(np.zeros(v.shape, v.dtype))

    reset_states = reset_state

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}>"
