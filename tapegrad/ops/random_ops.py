"""Random tensors. ``set_seed`` makes the sequence of draws reproducible."""
import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.tensor import Tensor
from tapegrad.ops._convert import static_shape

_rng = np.random.default_rng()


def set_seed(seed):
    """Seed the global generator.

    >>> import tapegrad as tf
    >>> tf.random.set_seed(0); a = tf.random.normal([2])
    >>> tf.random.set_seed(0); b = tf.random.normal([2])
    >>> bool(tf.reduce_all(a == b))
    True
    """
    global _rng
    _rng = np.random.default_rng(int(seed))


def _gen(seed):
    return np.random.default_rng(int(seed)) if seed is not None else _rng


def normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None):
    """Samples from a normal distribution."""
    v = _gen(seed).normal(float(mean), float(stddev), static_shape(shape))
    return Tensor._wrap(v.astype(_dt.as_dtype(dtype)))


def uniform(shape, minval=0, maxval=None, dtype=_dt.float32, seed=None, name=None):
    """Samples from a uniform distribution on [minval, maxval)."""
    dtype = _dt.as_dtype(dtype)
    shape = static_shape(shape)
    if dtype.kind in "iu":
        if maxval is None:
            raise ValueError("uniform: maxval must be given for integer dtypes.")
        return Tensor._wrap(_gen(seed).integers(int(minval), int(maxval), shape).astype(dtype))
    maxval = 1.0 if maxval is None else float(maxval)
    return Tensor._wrap(_gen(seed).uniform(float(minval), maxval, shape).astype(dtype))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None):
    g = _gen(seed)
    v = g.normal(0.0, 1.0, static_shape(shape))
    bad = np.abs(v) > 2
    while bad.any():
        v[bad] = g.normal(0.0, 1.0, int(bad.sum()))
        bad = np.abs(v) > 2
    return Tensor._wrap((v * float(stddev) + float(mean)).astype(_dt.as_dtype(dtype)))
