"""``tf.linalg``."""
from tapegrad.ops.linalg_ops import *  # noqa: F401,F403
from tapegrad.ops.linalg_ops import matmul  # noqa: F401
from tapegrad.ops.clip_ops import global_norm  # noqa: F401
from tapegrad.ops.decomp_ops import *  # noqa: F401,F403
