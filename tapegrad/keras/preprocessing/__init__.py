"""``keras.preprocessing``: the older names of keras.utils's data helpers, which tutorials
and answers still use (``keras.preprocessing.sequence.pad_sequences``)."""
from tapegrad.keras.dataset_utils import timeseries_dataset_from_array  # noqa: F401
from tapegrad.keras.preprocessing import sequence  # noqa: F401

__all__ = ["sequence", "timeseries_dataset_from_array"]
