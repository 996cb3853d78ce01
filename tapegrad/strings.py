"""``tf.strings``: functions of string tensors (``tapegrad/ops/string_ops.py`` and
``string_split_ops.py``).

>>> import tapegrad as tf
>>> tf.strings.upper(tf.strings.strip("  hi ")).numpy()
b'HI'
"""
from tapegrad.ops.string_ops import *  # noqa: F401,F403
from tapegrad.ops.string_split_ops import *  # noqa: F401,F403
