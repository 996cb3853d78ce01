"""Bitwise primitives of integers (``tf.bitwise``; Python's ``& | ^ ~`` on integer tensors).

Elementwise and without gradients: the integers carry none. The op layer
(``ops/bitwise_ops.py``) takes integer tensors only, as TensorFlow's kernels.
"""
from tapegrad.primitives.families import nondiff, xp

_ew = dict(batch="elementwise")
bitwise_and_p = nondiff("bitwise_and", xp.bitwise_and, 2, emit="np.bitwise_and({0}, {1})", **_ew)
bitwise_or_p = nondiff("bitwise_or", xp.bitwise_or, 2, emit="np.bitwise_or({0}, {1})", **_ew)
bitwise_xor_p = nondiff("bitwise_xor", xp.bitwise_xor, 2, emit="np.bitwise_xor({0}, {1})", **_ew)
invert_p = nondiff("invert", xp.invert, 1, emit="np.invert({0})", **_ew)
