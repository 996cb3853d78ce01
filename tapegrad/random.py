"""``tf.random``."""
from tapegrad.ops.random_ops import normal, set_seed, truncated_normal, uniform  # noqa: F401
