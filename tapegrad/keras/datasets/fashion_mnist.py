"""``keras.datasets.fashion_mnist``: 28x28 grayscale clothes, from Keras's cached gzip files
(``~/.keras/datasets/fashion-mnist``)."""
import gzip

import numpy as np

from tapegrad.keras.datasets._files import _BASE, cached

_FILES = ("train-labels-idx1-ubyte.gz", "train-images-idx3-ubyte.gz",
          "t10k-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz")


def load_data():
    """``(x_train, y_train), (x_test, y_test)`` as uint8 arrays, as Keras gives them."""
    paths = [cached(f, "datasets/fashion-mnist", _BASE + "fashion-mnist/" + f,
                    "keras.datasets.fashion_mnist.load_data") for f in _FILES]
    out = []
    for labels, images in ((paths[0], paths[1]), (paths[2], paths[3])):
        with gzip.open(labels, "rb") as f:
            y = np.frombuffer(f.read(), np.uint8, offset=8)
        with gzip.open(images, "rb") as f:
            x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(len(y), 28, 28)
        out.append((x, y))
    return tuple(out)
