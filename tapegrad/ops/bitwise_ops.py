"""``tf.bitwise``: and, or, xor and invert of integer tensors, as TensorFlow's kernels (which
take no bool or float tensors: ``&``, ``|``, ``^``, ``~`` of bools are the logical ops)."""
from tapegrad.core.dispatch import bind
from tapegrad.ops._convert import binary, tensor
from tapegrad.ops._kinds import require
from tapegrad.primitives import bitwise

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert"]


def _binary(prim, x, y):
    x, y = binary(x, y, prim.name)
    require(x, "iu", prim.name)
    return bind(prim, x, y)


def bitwise_and(x, y, name=None):
    """Elementwise ``x & y`` of integers.

    >>> import tapegrad as tf
    >>> tf.bitwise.bitwise_and([12, 10], [10, 6]).numpy().tolist()
    [8, 2]
    """
    return _binary(bitwise.bitwise_and_p, x, y)


def bitwise_or(x, y, name=None):
    """Elementwise ``x | y`` of integers."""
    return _binary(bitwise.bitwise_or_p, x, y)


def bitwise_xor(x, y, name=None):
    """Elementwise ``x ^ y`` of integers."""
    return _binary(bitwise.bitwise_xor_p, x, y)


def invert(x, name=None):
    """Elementwise ``~x`` of integers (two's complement: ``~1`` is -2, of uint8 254).

    >>> import tapegrad as tf
    >>> tf.bitwise.invert([1, -1]).numpy().tolist()
    [-2, 0]
    """
    x = tensor(x)
    require(x, "iu", "Invert")
    return bind(bitwise.invert_p, x)
