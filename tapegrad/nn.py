"""``tf.nn``."""
from tapegrad.ops.nn_ops import *  # noqa: F401,F403
from tapegrad.ops.gather_ops import embedding_lookup  # noqa: F401
from tapegrad.ops.special_ops import softsign  # noqa: F401
from tapegrad.ops.nn_ops import batch_normalization  # noqa: F401
