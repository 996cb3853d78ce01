"""Shape manipulation, indexing, creation and sorting, with TensorFlow's names and signatures.

The ops live in modules by topic; this one gathers their public names (``tapegrad`` and the
ops modules import them from here): ``shape_ops`` (reshape, transpose, concat, pad, ...),
``indexing_ops`` (``x[key]``, gather, boolean_mask), ``creation_ops`` (zeros, range,
linspace, one_hot, ...), ``sort_ops`` (argsort, sort, top_k) and ``logging_ops`` (print).
"""
from tapegrad.ops import creation_ops, indexing_ops, logging_ops, shape_ops, sort_ops
from tapegrad.ops.creation_ops import *  # noqa: F401,F403
from tapegrad.ops.indexing_ops import *  # noqa: F401,F403
from tapegrad.ops.logging_ops import *  # noqa: F401,F403
from tapegrad.ops.shape_ops import *  # noqa: F401,F403
from tapegrad.ops.sort_ops import *  # noqa: F401,F403

# only the ops: `from ... import *` must not re-export the topic modules themselves
__all__ = [*shape_ops.__all__, *indexing_ops.__all__, *creation_ops.__all__, *sort_ops.__all__,
           *logging_ops.__all__]
