"""``tf.data``: lazy input pipelines (``tf.data.Dataset``).

>>> import tapegrad as tf
>>> ds = tf.data.Dataset.range(10**9).repeat().map(lambda x: x * 2).take(3)
>>> [int(x) for x in ds]
[0, 2, 4]
"""
from tapegrad import ops as _ops  # noqa: F401 (first: the primitives and Tensor's operators)
from tapegrad.data.dataset import (  # noqa: F401
    AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, Iterator)
from tapegrad.data import experimental  # noqa: F401
from tapegrad.data.options import Options  # noqa: F401
