"""tf.math's elementwise ops, comparisons and reductions, with TensorFlow's names and
signatures: elementwise_ops.py and reduction_ops.py, in one namespace (other ops modules
read ``math_ops.reduce_sum`` and the like from here)."""
from tapegrad.ops import elementwise_ops, reduction_ops
from tapegrad.ops._convert import cast  # noqa: F401  (read as math_ops.cast; not public)
from tapegrad.ops.elementwise_ops import *  # noqa: F401,F403
from tapegrad.ops.reduction_ops import *  # noqa: F401,F403

__all__ = elementwise_ops.__all__ + reduction_ops.__all__
