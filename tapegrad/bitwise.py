"""``tf.bitwise``."""
from tapegrad.ops.bitwise_ops import *  # noqa: F401,F403
