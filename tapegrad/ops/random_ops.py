"""Random tensors. ``set_seed`` makes the sequence of draws reproducible."""
import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.ops._convert import static_shape
from tapegrad.primitives import random as _random

def set_seed(seed):
    """Seed the global generator.

    >>> import tapegrad as tf
    >>> tf.random.set_seed(0); a = tf.random.normal([2])
    >>> tf.random.set_seed(0); b = tf.random.normal([2])
    >>> bool(tf.reduce_all(a == b))
    True
    """
    _random.set_seed(int(seed))


def _gen(seed):
    return np.random.default_rng(int(seed)) if seed is not None else _random.generator()


def generator():
    """The global generator (replaced by ``set_seed``)."""
    return _random.generator()


def normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None):
    """Samples from a normal distribution; inside ``tf.function``, fresh on every call.

    >>> import tapegrad as tf
    >>> tf.random.normal([2, 3]).shape
    TensorShape([2, 3])
    """
    return bind(_random.random_normal_p, shape=static_shape(shape), dtype=_dt.as_dtype(dtype).name,
                mean=float(mean), stddev=float(stddev),
                seed=None if seed is None else int(seed))


def uniform(shape, minval=0, maxval=None, dtype=_dt.float32, seed=None, name=None):
    """Samples from a uniform distribution on [minval, maxval); fresh per call when traced.

    >>> import tapegrad as tf
    >>> float(tf.reduce_max(tf.random.uniform([100]))) < 1.0
    True
    """
    dtype = _dt.as_dtype(dtype)
    if dtype.kind in "iu" and maxval is None:
        raise ValueError("uniform: maxval must be given for integer dtypes.")
    maxval = 1.0 if maxval is None else maxval
    return bind(_random.random_uniform_p, shape=static_shape(shape), dtype=dtype.name,
                minval=float(minval), maxval=float(maxval),
                seed=None if seed is None else int(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=_dt.float32, seed=None, name=None):
    g = _gen(seed)
    v = g.normal(0.0, 1.0, static_shape(shape))
    bad = np.abs(v) > 2
    while bad.any():
        v[bad] = g.normal(0.0, 1.0, int(bad.sum()))
        bad = np.abs(v) > 2
    return Tensor._wrap((v * float(stddev) + float(mean)).astype(_dt.as_dtype(dtype)))
