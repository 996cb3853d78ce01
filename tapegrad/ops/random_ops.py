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


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """``num_samples`` class indices per row of the 2-D ``logits`` (unnormalized log
    probabilities), drawn by the Gumbel-max rule from ``uniform`` draws: fresh per call
    inside ``tf.function``; not TensorFlow's stream.

    >>> import tapegrad as tf
    >>> tf.random.categorical([[-30.0, 30.0]], 3).numpy()
    array([[1, 1, 1]])
    """
    from tapegrad.errors import InvalidArgumentError, NotFoundError
    from tapegrad.ops import elementwise_ops
    from tapegrad.ops import reduction_ops, shape_ops
    from tapegrad.ops._convert import tensor
    dtype = _dt.int64 if dtype is None else _dt.as_dtype(dtype)
    if dtype.name not in ("int32", "int64"):
        raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are "
                         "(tf.int32, tf.int64).")
    logits = tensor(logits)
    if logits.dtype.kind != "f":  # TensorFlow has no such kernel
        raise NotFoundError(f"Could not find a Multinomial kernel for {logits.dtype.name} "
                            "logits (half, float and double only)")
    if logits.ndim != 2:
        raise InvalidArgumentError(f"logits should be a matrix, got shape "
                                   f"[{','.join(str(d) for d in logits.shape)}]")
    rows, classes = logits._raw_shape
    n = int(num_samples)
    if n < 0:
        raise InvalidArgumentError(f"num_samples should be non-negative, got {n}")
    u = uniform((rows, n, classes), dtype=_dt.float64, seed=seed)
    gumbel = -elementwise_ops.log(-elementwise_ops.log(u))  # u = 0 gives -inf: never the largest
    scores = shape_ops.reshape(shape_ops.cast(logits, _dt.float64), (rows, 1, classes)) + gumbel
    return reduction_ops.argmax(scores, axis=-1, output_type=dtype)


def shuffle(value, seed=None, name=None):
    """``value`` with its first dimension randomly permuted (fresh per call inside
    ``tf.function``; not TensorFlow's stream).

    >>> import tapegrad as tf
    >>> sorted(tf.random.shuffle(tf.range(4)).numpy().tolist())
    [0, 1, 2, 3]
    """
    from tapegrad.ops import indexing_ops, sort_ops
    from tapegrad.ops._convert import tensor
    value = tensor(value)
    if value.ndim == 0:
        return value
    keys = uniform((value._raw_shape[0],), dtype=_dt.float64, seed=seed)
    return indexing_ops.gather(value, sort_ops.argsort(keys, stable=True))
