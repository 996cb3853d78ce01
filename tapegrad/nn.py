"""``tf.nn``."""
from tapegrad.ops.nn_ops import *  # noqa: F401,F403
