"""Stateless random numbers: ``tf.random.stateless_*`` and ``tf.random.experimental``'s
``stateless_split`` / ``stateless_fold_in``. The numbers are a function of the ``seed`` (a
shape-[2] int32 or int64 tensor) alone, TensorFlow's Philox streams
(``primitives/philox.py``): uniform floats and integers, splits and folds give
TensorFlow's bits; normals agree with TensorFlow's to the last bit of float32, where about
1.5% of them differ.

>>> import tapegrad as tf
>>> tf.random.stateless_uniform([3], seed=[1, 2]).numpy()
array([0.8440604 , 0.19204533, 0.9962232 ], dtype=float32)
"""
import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops import math_ops
from tapegrad.ops.shape_ops import cast, reshape, stack
from tapegrad.primitives.philox import philox_random_p

__all__ = ["stateless_normal", "stateless_uniform", "stateless_truncated_normal",
           "stateless_categorical", "stateless_split", "stateless_fold_in"]

UNIFORM_DTYPES = ("float16", "float32", "float64", "int32", "int64", "uint32", "uint64")
_ALGS = (None, "philox", "auto_select", 1, 3)


def check_alg(alg):
    """``alg`` names Philox (TensorFlow's CPU choice for ``"auto_select"``)."""
    value = getattr(alg, "value", alg)
    if value not in _ALGS:
        from tapegrad.errors import UnimplementedError
        raise UnimplementedError(f"tapegrad's random numbers use the Philox algorithm "
                                 f"only; got alg={alg!r}")


def seed_tensor(seed):
    """``seed`` as a shape-[2] int32/int64 tensor (TensorFlow's errors otherwise)."""
    seed = seed if isinstance(seed, Tensor) else convert_to_tensor(seed)
    if seed.dtype.name not in ("int32", "int64"):
        raise InvalidArgumentError(f"Value for attr 'Tseed' of {seed.dtype.name} is not in "
                                   "the list of allowed values: int32, int64")
    if tuple(seed.shape) != (2,):
        raise InvalidArgumentError(f"seed must have shape [2], not "
                                   f"[{','.join(str(d) for d in seed.shape)}]")
    return seed


def shape_of(shape):
    """A static shape from a list, tuple or tensor of non-negative sizes."""
    if isinstance(shape, Tensor):
        shape = shape.numpy()
    dims = [int(d) for d in np.asarray(shape, dtype=np.int64).reshape(-1)]
    for d in dims:
        if d < 0:
            raise InvalidArgumentError(f"Dimension {d} must be >= 0")
    return tuple(dims)


def draw(source, shape, dtype, dist, from_seed, minval=None, maxval=None):
    """The primitive's draw from a seed (``from_seed``) or a generator state."""
    return bind(philox_random_p, source, shape=shape, dtype=dtype, dist=dist,
                from_seed=from_seed, minval=minval, maxval=maxval)


def _float_dtype(dtype, what):
    dtype = _dt.as_dtype(dtype)
    if dtype.name not in ("float16", "float32", "float64"):
        raise TypeError(f"Cannot convert {what} to EagerTensor of dtype {dtype.name}")
    return dtype


def _scalar_int(v, name):
    if isinstance(v, Tensor):
        v = v.numpy()  # a symbolic bound raises here: integer bounds must be known
    v = np.asarray(v)
    if v.ndim or v.dtype.kind not in "iub":
        raise TypeError(f"tapegrad: integer random bounds must be Python or NumPy "
                        f"integers (or known scalar tensors); got {name}={v!r}")
    return int(v)


def uniform_from(source, shape, minval, maxval, dtype, from_seed):
    """``stateless_uniform`` / ``Generator.uniform`` on a seed or a state."""
    dtype = _dt.as_dtype(dtype)
    if dtype.name not in UNIFORM_DTYPES:
        raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes "
                         "are (tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.int32, "
                         "tf.int64, tf.uint32, tf.uint64).")
    shape = shape_of(shape)
    if dtype.kind in "iu":
        if (minval is None) != (maxval is None):
            raise ValueError(f"For integer `dtype` argument {dtype!r}, argument `minval` "
                             "and `maxval` must be both None or not None. Got "
                             f"`minval`={minval} and `maxval`={maxval}.")
        if minval is None:
            return draw(source, shape, dtype.name, "full_int", from_seed)
        if dtype.kind == "u":
            raise ValueError(f"Argument `dtype` got invalid value {dtype!r} when argument "
                             "`minval` is not None. Please don't use unsigned integers in "
                             "this case.")
        lo, hi = _scalar_int(minval, "minval"), _scalar_int(maxval, "maxval")
        if not lo < hi:
            raise InvalidArgumentError(f"Need minval < maxval, got {lo} >= {hi}")
        return draw(source, shape, dtype.name, "uniform_int", from_seed, lo, hi)
    maxval = 1 if maxval is None else maxval
    lo = convert_to_tensor(minval, dtype=dtype)
    hi = convert_to_tensor(maxval, dtype=dtype)
    return draw(source, shape, dtype.name, "uniform", from_seed) * (hi - lo) + lo


def normal_from(source, shape, mean, stddev, dtype, from_seed, truncated=False):
    """``stateless_normal`` / ``Generator.normal`` (truncated: within 2 deviations)."""
    dtype = _float_dtype(dtype, "0.0")
    z = draw(source, shape_of(shape), dtype.name,
             "truncated_normal" if truncated else "normal", from_seed)
    return z * convert_to_tensor(stddev, dtype=dtype) + convert_to_tensor(mean, dtype=dtype)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=_dt.float32, name=None,
                      alg="auto_select"):
    """Uniform numbers in [minval, maxval) determined by ``seed``; integer dtypes need both
    bounds, or neither for the full range.

    >>> import tapegrad as tf
    >>> tf.random.stateless_uniform([3], [1, 2], minval=2, maxval=9, dtype=tf.int32).numpy()
    array([7, 3, 7], dtype=int32)
    """
    check_alg(alg)
    return uniform_from(seed_tensor(seed), shape, minval, maxval, dtype, True)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dt.float32, name=None,
                     alg="auto_select"):
    """Normal numbers determined by ``seed``.

    >>> import tapegrad as tf
    >>> tf.random.stateless_normal([2], seed=[1, 2]).numpy()
    array([0.5441101 , 0.20738031], dtype=float32)
    """
    check_alg(alg)
    return normal_from(seed_tensor(seed), shape, mean, stddev, dtype, True)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=_dt.float32,
                               name=None, alg="auto_select"):
    """Normal numbers within two standard deviations of ``mean``, determined by ``seed``.

    >>> import tapegrad as tf
    >>> x = tf.random.stateless_truncated_normal([1000], [3, 4], mean=1.0, stddev=0.5)
    >>> bool(tf.reduce_all(tf.abs(x - 1.0) < 1.0))
    True
    """
    check_alg(alg)
    return normal_from(seed_tensor(seed), shape, mean, stddev, dtype, True, truncated=True)


def stateless_categorical(logits, num_samples, seed, dtype=_dt.int64, name=None):
    """``num_samples`` class indices per row of the 2-D ``logits``, determined by ``seed``
    (the Gumbel-max rule on stateless uniforms: not TensorFlow's stream).

    >>> import tapegrad as tf
    >>> tf.random.stateless_categorical([[-30.0, 30.0]], 3, [1, 2]).numpy()
    array([[1, 1, 1]])
    """
    dtype = _dt.as_dtype(dtype)
    if dtype.name not in ("int32", "int64"):
        raise ValueError(f"Argument `dtype` got invalid value {dtype!r}. Accepted dtypes are "
                         "(tf.int32, tf.int64).")
    logits = convert_to_tensor(logits)
    if len(logits.shape) != 2:
        raise InvalidArgumentError(f"logits should be a matrix, got shape "
                                   f"[{','.join(str(d) for d in logits.shape)}]")
    rows, classes = logits.shape
    n = int(num_samples)
    u = draw(seed_tensor(seed), (rows, n, classes), "float64", "uniform", True)
    gumbel = -math_ops.log(-math_ops.log(u))  # u = 0 gives -inf: never the largest
    scores = reshape(cast(logits, _dt.float64), (rows, 1, classes)) + gumbel
    return math_ops.argmax(scores, axis=-1, output_type=dtype)


def stateless_split(seed, num=2, alg="auto_select"):
    """``num`` new seeds (shape ``[num, 2]``) from ``seed``, as TensorFlow splits them.

    >>> import tapegrad as tf
    >>> tf.random.experimental.stateless_split([1, 2], num=2).numpy()
    array([[1105988140, 1738052849],
           [-335576002,  370444179]], dtype=int32)
    """
    check_alg(alg)
    seed = seed_tensor(seed)
    return draw(seed, (int(num), 2), seed.dtype.name, "full_int", True)


def stateless_fold_in(seed, data, alg="auto_select"):
    """A new seed from ``seed`` and an integer ``data`` (a step or a replica number), as
    TensorFlow folds it in (the new seed has ``data``'s dtype).

    >>> import tapegrad as tf
    >>> tf.random.experimental.stateless_fold_in([1, 2], 7).numpy()
    array([1105988140,          7], dtype=int32)
    """
    check_alg(alg)
    data = convert_to_tensor(data)
    if data.dtype.name not in ("int32", "int64"):
        raise ValueError(f"stateless_fold_in: `data` must be an int32 or int64 scalar, got "
                         f"{data.dtype.name}")
    return stack([draw(seed_tensor(seed), (), data.dtype.name, "full_int", True), data])
