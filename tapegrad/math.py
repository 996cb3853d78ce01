"""``tf.math``."""
from tapegrad.ops.math_ops import *  # noqa: F401,F403
from tapegrad.ops.nn_ops import softplus  # noqa: F401
from tapegrad.ops.array_ops import cast  # noqa: F401
from tapegrad.ops.array_ops import argsort, top_k  # noqa: F401,E402
from tapegrad.ops.special_ops import *  # noqa: F401,F403,E402
from tapegrad.ops.segment_ops import *  # noqa: F401,F403,E402
from tapegrad.ops.unique_ops import bincount  # noqa: F401
from tapegrad.ops.composed_math_ops import *  # noqa: F401,F403,E402
from tapegrad.ops.binning_ops import confusion_matrix, polyval  # noqa: F401,E402
from tapegrad.ops.cumulative_ops import cumulative_logsumexp  # noqa: F401,E402
