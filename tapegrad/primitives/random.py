"""Random-number primitives: stateful, so a traced function draws fresh numbers per call.

They take no tensor inputs; their params say what to draw. ``seed=None`` uses the global
generator of ``tapegrad.random`` (``set_seed``); an integer seed gives the same numbers on
every call, as an op-level seed does in eager TensorFlow.
"""
import numpy as np

from tapegrad.core.dispatch import Primitive


def _generator(seed):
    from tapegrad.ops import random_ops
    return np.random.default_rng(seed) if seed is not None else random_ops.generator()


def _random_normal(shape, dtype, mean, stddev, seed):
    return _generator(seed).normal(mean, stddev, shape).astype(dtype)


def _random_uniform(shape, dtype, minval, maxval, seed):
    g = _generator(seed)
    if np.dtype(dtype).kind in "iu":
        return g.integers(int(minval), int(maxval), shape).astype(dtype)
    return g.uniform(minval, maxval, shape).astype(dtype)


def _abstract(**params):
    return tuple(params["shape"]), np.dtype(params["dtype"])


random_normal_p = Primitive(
    "random_normal", lambda *, shape, dtype, mean, stddev, seed:
    _random_normal(shape, dtype, mean, stddev, seed), nin=0, nondiff=True, stateful=True,
    abstract=_abstract,
    emit="_random_normal({shape}, '{dtype}', {mean}, {stddev}, {seed})")
random_uniform_p = Primitive(
    "random_uniform", lambda *, shape, dtype, minval, maxval, seed:
    _random_uniform(shape, dtype, minval, maxval, seed), nin=0, nondiff=True, stateful=True,
    abstract=_abstract,
    emit="_random_uniform({shape}, '{dtype}', {minval}, {maxval}, {seed})")
# no inputs, so never batched; the rule exists for the registry's completeness
random_normal_p.batch = lambda args, batched, **params: None
random_uniform_p.batch = lambda args, batched, **params: None

EMIT_HELPERS = {"_random_normal": _random_normal, "_random_uniform": _random_uniform}
