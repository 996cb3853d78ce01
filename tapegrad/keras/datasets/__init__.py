"""``keras.datasets``: the tutorials' datasets, read from the files Keras keeps in its cache
(``$KERAS_HOME/datasets``, by default ``~/.keras/datasets``). tapegrad downloads nothing: a
missing file raises FileNotFoundError naming the address to fetch it from and where to put it.
"""
from tapegrad.keras.datasets import boston_housing, fashion_mnist, mnist  # noqa: F401

__all__ = ["boston_housing", "fashion_mnist", "mnist"]
