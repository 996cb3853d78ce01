"""``tf.keras.regularizers``: weight penalties added to ``model.losses``.

>>> import tapegrad as tf
>>> float(tf.keras.regularizers.L2(0.5)(tf.constant([1.0, 2.0])))
2.5
"""
from tapegrad.keras import _tf as tf


class Regularizer:
    def __call__(self, x):
        return 0.0

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    """l1 * sum(|x|) + l2 * sum(x**2)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        out = tf.constant(0.0, dtype=x.dtype)
        if self.l1:
            out = out + self.l1 * tf.reduce_sum(tf.abs(x))
        if self.l2:
            out = out + self.l2 * tf.reduce_sum(tf.square(x))
        return out

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    def __init__(self, l1=0.01):
        super().__init__(l1=l1)

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    def __init__(self, l2=0.01):
        super().__init__(l2=l2)

    def get_config(self):
        return {"l2": self.l2}


l1, l2, l1_l2 = L1, L2, L1L2


def get(identifier):
    if identifier is None or isinstance(identifier, Regularizer) or callable(identifier):
        return identifier
    by_name = {"l1": L1, "l2": L2, "l1_l2": L1L2}
    if isinstance(identifier, str) and identifier.lower() in by_name:
        return by_name[identifier.lower()]()
    raise ValueError(f"Could not interpret regularizer identifier: {identifier}")
