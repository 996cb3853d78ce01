"""``keras.datasets.mnist``: 28x28 grayscale digits, from Keras's cached ``mnist.npz``."""
import numpy as np

from tapegrad.keras.datasets._files import cached


def load_data(path="mnist.npz"):
    """``(x_train, y_train), (x_test, y_test)`` as uint8 arrays, as Keras gives them; the file
    is read from Keras's cache (``~/.keras/datasets``), never downloaded."""
    path = cached(path, what="keras.datasets.mnist.load_data")
    with np.load(path, allow_pickle=False) as f:
        return (f["x_train"], f["y_train"]), (f["x_test"], f["y_test"])
