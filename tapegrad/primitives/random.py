"""Random-number primitives: stateful, so a traced function draws fresh numbers per call.

They take no tensor inputs; their params say what to draw. ``seed=None`` uses the global
generator of ``tapegrad.random`` (``set_seed``); an integer seed gives the same numbers on
every call, as an op-level seed does in eager TensorFlow.
"""
import numpy as np

from tapegrad.core.dispatch import Primitive
from tapegrad.primitives.params import check_dtype, check_int, check_number, check_shape, fail


# The global generator of ``tapegrad.random`` (``tf.random.set_seed`` replaces it): the
# primitives draw from it when their ``seed`` param is None.
_global = np.random.default_rng()


def generator():
    """The global generator."""
    return _global


def set_seed(seed):
    """Replace the global generator by one seeded with ``seed``."""
    global _global
    _global = np.random.default_rng(seed)


def _generator(seed):
    return np.random.default_rng(seed) if seed is not None else _global


def _random_normal(shape, dtype, mean, stddev, seed):
    return _generator(seed).normal(mean, stddev, shape).astype(dtype)


def _random_uniform(shape, dtype, minval, maxval, seed):
    g = _generator(seed)
    if np.dtype(dtype).kind in "iu":
        return g.integers(int(minval), int(maxval), shape).astype(dtype)
    return g.uniform(minval, maxval, shape).astype(dtype)


def _abstract(**params):
    return tuple(params["shape"]), np.dtype(params["dtype"])


def _common(name, shape, dtype, seed):
    check_shape(name, "shape", shape)
    if seed is not None:
        check_int(name, "seed", seed, 0)


def _normal_validate(*, shape, dtype, mean, stddev, seed):
    _common("random_normal", shape, dtype, seed)
    check_dtype("random_normal", "dtype", dtype, kinds="f")
    check_number("random_normal", "mean", mean, finite=True)
    if check_number("random_normal", "stddev", stddev, finite=True) < 0:
        fail("random_normal", "stddev", f"must be >= 0, got {stddev!r}")


def _uniform_validate(*, shape, dtype, minval, maxval, seed):
    _common("random_uniform", shape, dtype, seed)
    d = check_dtype("random_uniform", "dtype", dtype, kinds="fiu")
    lo = check_number("random_uniform", "minval", minval, finite=True)
    hi = check_number("random_uniform", "maxval", maxval, finite=True)
    if d.kind in "iu":  # integers in [lo, hi) of the dtype
        info = np.iinfo(d)
        if not (int(lo) < int(hi) and info.min <= int(lo) and int(hi) - 1 <= info.max):
            fail("random_uniform", "maxval", f"[{lo!r}, {hi!r}) is not a range of "
                                             f"{d.name} values")


def _never_batched(args, batched, **params):
    """No inputs, so never batched; the rule exists for the registry's completeness."""
    return None


random_normal_p = Primitive(
    "random_normal", lambda *, shape, dtype, mean, stddev, seed:
    _random_normal(shape, dtype, mean, stddev, seed), nin=0, nondiff=True, stateful=True,
    abstract=_abstract, validate=_normal_validate, batch=_never_batched, value_params=("seed",),
    emit="_random_normal({shape}, '{dtype}', {mean}, {stddev}, {seed})")
random_uniform_p = Primitive(
    "random_uniform", lambda *, shape, dtype, minval, maxval, seed:
    _random_uniform(shape, dtype, minval, maxval, seed), nin=0, nondiff=True, stateful=True,
    abstract=_abstract, validate=_uniform_validate, batch=_never_batched, value_params=("seed",),
    emit="_random_uniform({shape}, '{dtype}', {minval}, {maxval}, {seed})")

EMIT_HELPERS = {"_random_normal": _random_normal, "_random_uniform": _random_uniform}
