"""``tf.nn.dropout``: entries zeroed with probability ``rate``, the others scaled by
``1 / (1 - rate)``, so the expected value is unchanged (a fresh mask on every call, also
inside ``tf.function``).

>>> import tapegrad as tf
>>> y = tf.nn.dropout(tf.ones([1000]), rate=0.5, seed=1)
>>> sorted(set(y.numpy().tolist()))
[0.0, 2.0]
"""
import numbers

from tapegrad.ops._convert import tensor
from tapegrad.ops.random_ops import uniform
from tapegrad.ops.shape_ops import cast

__all__ = ["dropout"]


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """``x * (1 / (1 - rate)) * keep`` with ``keep = uniform(noise_shape) >= rate``;
    ``noise_shape`` (default ``x``'s shape) broadcasts against ``x``, so ``[n, 1]`` drops
    whole rows. ``rate == 0`` returns ``x``."""
    x = tensor(x)
    if x.dtype.kind != "f":
        raise ValueError("`x.dtype` must be a floating point tensor as `x` will be scaled. "
                         f"Received: x_dtype=<dtype: '{x.dtype.name}'>")
    if isinstance(rate, numbers.Real):
        if not 0 <= rate < 1:
            raise ValueError("`rate` must be a scalar tensor or a float in the range [0, 1). "
                             f"Received: rate={rate}")
        if rate == 0:
            return x
    rate = cast(tensor(rate), x.dtype)
    shape = tuple(x.shape) if noise_shape is None else noise_shape
    keep = uniform(shape, dtype=x.dtype, seed=seed) >= rate
    return x * (1 / (1 - rate)) * cast(keep, x.dtype)
