"""``tf.data.experimental``: the names real programs still use from it."""
import enum

from tapegrad.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY  # noqa: F401


def scan(initial_state, scan_func):
    """The transformation ``ds.scan(initial_state, scan_func)``, for ``Dataset.apply``."""
    return lambda dataset: dataset.scan(initial_state, scan_func)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """The transformation ``ds.group_by_window(...)``, for ``Dataset.apply``."""
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size,
                                                   window_size_func)


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
