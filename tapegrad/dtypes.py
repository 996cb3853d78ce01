"""``tf.dtypes``. tapegrad's dtypes are NumPy dtype objects, so ``DType`` is ``np.dtype``.

>>> import tapegrad as tf
>>> tf.dtypes.as_dtype('float64') == tf.float64, isinstance(tf.float32, tf.dtypes.DType)
(True, True)
"""
import numpy as _np

from tapegrad.core.dtypes import (  # noqa: F401
    as_dtype, bool_ as bool, complex64, complex128, double, float16, float32, float64, half,
    int8, int16, int32, int64, string, uint8, uint16, uint32, uint64)
from tapegrad.ops.array_ops import cast  # noqa: F401
from tapegrad.ops.clip_ops import saturate_cast  # noqa: F401

DType = _np.dtype
del _np
