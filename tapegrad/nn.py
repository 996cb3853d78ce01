"""``tf.nn``."""
from tapegrad.ops.nn_ops import *  # noqa: F401,F403
from tapegrad.ops.gather_ops import embedding_lookup  # noqa: F401
from tapegrad.ops.special_ops import softsign  # noqa: F401
from tapegrad.ops.special_more_ops import in_top_k  # noqa: F401
from tapegrad.ops.nn_ops import batch_normalization  # noqa: F401
from tapegrad.ops.dropout_ops import dropout  # noqa: F401
from tapegrad.ops.sort_ops import top_k  # noqa: F401  (tf.nn.top_k, tf.math.top_k's alias)
from tapegrad.ops.nn_loss_ops import (  # noqa: F401,E402
    compute_average_loss, log_poisson_loss, weighted_cross_entropy_with_logits)
from tapegrad.ops.rearrange_ops import (  # noqa: F401,E402
    depth_to_space, local_response_normalization, lrn, space_to_depth)
