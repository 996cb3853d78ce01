"""``keras.ops.rearrange``: einops' axis notation (``"b h w c -> b (h w) c"``) as one
reshape, one transpose and one reshape.

>>> import numpy as np
>>> from tapegrad.keras import ops
>>> ops.rearrange(np.zeros((2, 3, 4)), "a b c -> (a b) c").shape
TensorShape([6, 4])
"""
import math
import re

from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import _tf as tf
from tapegrad.keras.ops.extra import _t

__all__ = ["rearrange"]

_TOKEN = r"\w+|\([\w\s]*\)"


def _groups(side):
    return [re.findall(r"\w+", t) for t in re.findall(_TOKEN, side)]


def rearrange(tensor, pattern, **axes_lengths):
    """Axes named on the left of ``->`` (a parenthesised group splits one axis, its sizes
    from ``axes_lengths`` with at most one left to infer) are reordered and grouped as on
    the right.

    >>> rearrange([[0, 1, 2], [3, 4, 5]], "a (b c) -> c a b", c=1).numpy().tolist()
    [[[0, 1, 2], [3, 4, 5]]]
    """
    x = _t(tensor)
    left, right = re.split(r"\s*->\s*", pattern)
    inputs, outputs = _groups(left), _groups(right)
    if len(inputs) != x.ndim:  # Keras's backend fails in its reshape
        raise InvalidArgumentError(f"Pattern {pattern!r} names {len(inputs)} axes, the input "
                                   f"has {x.ndim}: shape {tuple(x.shape)} [Op:Reshape]")
    sizes = dict(axes_lengths)
    for group, dim in zip(inputs, x.shape):
        unknown = [a for a in group if a not in sizes]
        if len(unknown) > 1:
            raise ValueError(f"Could not infer the sizes of {unknown} in {pattern!r}")
        if unknown:
            sizes[unknown[0]] = dim // math.prod(sizes[a] for a in group if a in sizes)
    names = [a for group in inputs for a in group]
    wanted = [a for group in outputs for a in group]
    if sorted(wanted) != sorted(names):
        raise InvalidArgumentError(f"transpose expects a vector of size {len(names)}. But "
                                   f"input(1) is a vector of size {len(wanted)} [Op:Transpose]")
    y = tf.reshape(x, [sizes[a] for a in names])
    y = tf.transpose(y, [names.index(a) for a in wanted])
    return tf.reshape(y, [math.prod(sizes[a] for a in group) for group in outputs])
