"""``tf.data.experimental``: the names real programs still use from it."""
from tapegrad.data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY  # noqa: F401


def cardinality(dataset):
    """``dataset.cardinality()``, TensorFlow's older spelling."""
    return dataset.cardinality()
