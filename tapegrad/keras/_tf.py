"""The TensorFlow-named operations tapegrad.keras computes with (``tf`` in its modules).

Keras sits above tapegrad's namespaces and below the package root, so it takes the
operations from the modules that define them rather than from ``import tapegrad``; this is
the one place that lists them.
"""
from tapegrad.compile import function  # noqa: F401
from tapegrad.core.dtypes import (  # noqa: F401
    as_dtype, bool_ as bool, float32, float64, int32, int64, string)
from tapegrad.core.tensor import Tensor, Variable, constant, convert_to_tensor, is_tensor  # noqa: F401
from tapegrad.ops.array_ops import *  # noqa: F401,F403
from tapegrad.ops.indexing_ops import row_gather as gather  # noqa: F401 (TF's Gather)
from tapegrad.ops.indexed_slices import IndexedSlices  # noqa: F401
from tapegrad.ops.linalg_ops import clip_by_norm, einsum, matmul, norm, tensordot  # noqa: F401
from tapegrad.ops.math_ops import *  # noqa: F401,F403
from tapegrad.ops.gather_ops import repeat  # noqa: F401
from tapegrad.ops.nn_ops import sigmoid  # noqa: F401
from tapegrad.tape.gradient_tape import GradientTape  # noqa: F401
from tapegrad.util import nest  # noqa: F401
from tapegrad import data, image, math, module, nn, random, strings  # noqa: F401
from tapegrad.module import Module  # noqa: F401,E402
