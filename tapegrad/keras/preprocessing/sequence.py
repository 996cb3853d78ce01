"""``keras.preprocessing.sequence``: ``pad_sequences``.

>>> from tapegrad import keras
>>> keras.preprocessing.sequence.pad_sequences([[1], [2, 3]]).tolist()
[[0, 1], [2, 3]]
"""
from tapegrad.keras.dataset_utils import pad_sequences  # noqa: F401

__all__ = ["pad_sequences"]
