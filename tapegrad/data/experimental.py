"""``tf.data.experimental``: the names real programs still use from it."""
import enum

from tapegrad.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY  # noqa: F401


def cardinality(dataset):
    """``dataset.cardinality()``, TensorFlow's older spelling."""
    return dataset.cardinality()


class AutoShardPolicy(enum.IntEnum):
    """``tf.data.experimental.AutoShardPolicy`` (accepted; tapegrad does not distribute)."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3
