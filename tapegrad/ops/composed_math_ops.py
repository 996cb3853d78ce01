"""``tf.math`` names composed of other ops, with TensorFlow 2.21's dtypes and values:
``reciprocal_no_nan``, ``zero_fraction``, ``scalar_mul``, ``softmax`` and ``log_softmax``
(the ``tf.nn`` functions under their ``tf.math`` names)."""
import numpy as np

from tapegrad.ops import math_ops
from tapegrad.ops._convert import cast, tensor
from tapegrad.ops._kinds import require
from tapegrad.ops.nn_ops import log_softmax, softmax  # noqa: F401  (tf.math's names too)

__all__ = ["reciprocal_no_nan", "zero_fraction", "scalar_mul", "softmax", "log_softmax"]


def reciprocal_no_nan(x, name=None):
    """``1 / x``, and 0 where x is 0 (its gradient there is 0, not NaN); floats and complex.

    >>> import tapegrad as tf
    >>> tf.math.reciprocal_no_nan([0.0, 2.0]).numpy().tolist()
    [0.0, 0.5]
    """
    x = tensor(x)
    require(x, "fc", "DivNoNan")
    return math_ops.divide_no_nan(1, x)


def zero_fraction(value, name=None):
    """The fraction of zeros in ``value``, as float32 (NaN for an empty tensor).

    >>> import tapegrad as tf
    >>> float(tf.math.zero_fraction([0.0, 1.0, 0.0, 3.0]))
    0.5
    """
    x = tensor(value)
    size = int(np.prod(x.shape))
    nonzero = math_ops.count_nonzero(x)
    with np.errstate(invalid="ignore"):  # 0 / 0 for an empty tensor: NaN, as TensorFlow
        return cast(size - nonzero, np.float32) / np.float32(size)


def scalar_mul(scalar, x, name=None):
    """``scalar * x`` for a 0-d ``scalar`` (a number or a scalar tensor).

    >>> import tapegrad as tf
    >>> tf.math.scalar_mul(2.0, [1.0, 2.0]).numpy().tolist()
    [2.0, 4.0]
    """
    shape = tuple(scalar.shape) if hasattr(scalar, "shape") else np.shape(scalar)
    if len(shape) != 0:
        raise ValueError(f"The input scalar must be a 0-D value. Received shape {shape}.")
    return math_ops.multiply(scalar, x)
