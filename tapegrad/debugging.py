"""``tf.debugging``: assertions and numeric checks (ops/debugging_ops.py).

>>> import tapegrad as tf
>>> tf.debugging.assert_rank(tf.zeros((2, 3)), 2)
"""
from tapegrad.ops.debugging_ops import *  # noqa: F401,F403
