"""``keras.datasets.boston_housing``: 13 features of Boston suburbs and their median price,
from Keras's cached ``boston_housing.npz``, split as Keras splits it."""
import numpy as np

from tapegrad.keras.datasets._files import cached


def load_data(path="boston_housing.npz", test_split=0.2, seed=113):
    """``(x_train, y_train), (x_test, y_test)``: Keras's shuffle (NumPy's ``RandomState``
    with ``seed``), then the last ``test_split`` of the rows for testing."""
    if not 0 <= test_split < 1:
        raise ValueError(f"Invalid `test_split` argument: {test_split}. It must be between 0 "
                         "and 1 (exclusive of 1).")
    path = cached(path, what="keras.datasets.boston_housing.load_data")
    with np.load(path, allow_pickle=False) as f:
        x, y = f["x"], f["y"]
    order = np.arange(len(x))
    np.random.RandomState(seed).shuffle(order)
    x, y = x[order], y[order]
    n = int(len(x) * (1 - test_split))
    return (np.array(x[:n]), np.array(y[:n])), (np.array(x[n:]), np.array(y[n:]))
