"""``tf.keras.utils``: seeds, label helpers and the data helpers of dataset_utils.py.

>>> from tapegrad import keras
>>> keras.utils.to_categorical([0, 2], num_classes=3).tolist()
[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
"""
import random

import numpy as np

from tapegrad.keras import _tf as tf
from tapegrad.keras.dataset_utils import (  # noqa: F401  (keras.utils's data helpers)
    PyDataset, Sequence, pack_x_y_sample_weight, pad_sequences, split_dataset,
    timeseries_dataset_from_array, unpack_x_y_sample_weight)


def set_random_seed(seed):
    """Seed Python's, NumPy's and tapegrad's generators (new weights, dropout, shuffling)."""
    random.seed(seed)
    np.random.seed(seed)
    tf.random.set_seed(seed)


def to_categorical(x, num_classes=None):
    """Class indices to one-hot rows (float32)."""
    x = np.asarray(x, dtype="int64")
    shape = x.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    x = x.reshape(-1)
    if num_classes is None:
        num_classes = int(x.max()) + 1
    out = np.zeros((x.size, num_classes), dtype="float32")
    out[np.arange(x.size), x] = 1.0
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    x = np.asarray(x)
    norm = np.linalg.norm(x, order, axis, keepdims=True)
    norm[norm == 0] = 1
    return x / norm


from tapegrad.keras.serialization import (  # noqa: E402,F401  (keras.utils' aliases)
    CustomObjectScope, custom_object_scope, get_custom_objects, get_registered_name,
    get_registered_object, register_keras_serializable)
