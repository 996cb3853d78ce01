"""Lazy, thread-configured imports of the compared systems.

``load(name)`` imports a system once and applies the thread settings of ``benchmarks.config``;
it raises ``Unavailable`` (with the reason) when the package is missing or fails to import, so
the harness can skip that system with a note instead of faking a number.
"""
import importlib
import importlib.metadata
import traceback

from benchmarks import config

SYSTEMS = ("tapegrad", "tensorflow", "jax", "torch", "autograd")
PEERS = SYSTEMS[1:]
_cache = {}
_errors = {}


class Unavailable(Exception):
    """A system (or one of its APIs) cannot be used; the message says why."""


def _import_tensorflow():
    import tensorflow as tf

    try:
        tf.config.threading.set_intra_op_parallelism_threads(config.THREADS)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:  # already initialised: keep going, the numbers stay valid
        pass
    tf.get_logger().setLevel("ERROR")
    return tf


def _import_jax():
    import jax

    jax.config.update("jax_enable_x64", True)  # W4 is float64; float32 inputs stay float32
    jax.config.update("jax_platforms", "cpu")
    return jax


def _import_torch():
    import torch

    torch.set_num_threads(config.THREADS)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    return torch


def _import_autograd():
    import autograd

    return autograd


def _import_tapegrad():
    import tapegrad

    if not hasattr(tapegrad, "GradientTape"):
        raise Unavailable("tapegrad imports but has no GradientTape yet (package incomplete)")
    return tapegrad


_IMPORTERS = {
    "tapegrad": _import_tapegrad,
    "tensorflow": _import_tensorflow,
    "jax": _import_jax,
    "torch": _import_torch,
    "autograd": _import_autograd,
}


def load(name):
    """Import system ``name`` (once) or raise ``Unavailable``."""
    if name in _cache:
        return _cache[name]
    if name in _errors:
        raise Unavailable(_errors[name])
    try:
        module = _IMPORTERS[name]()
    except Unavailable as e:
        _errors[name] = str(e)
        raise
    except Exception as e:  # ImportError, or a half-written package raising anything
        last = traceback.format_exception_only(type(e), e)[-1].strip()
        _errors[name] = f"import failed: {last}"
        raise Unavailable(_errors[name]) from e
    _cache[name] = module
    return module


def available(name):
    try:
        load(name)
        return True
    except Unavailable:
        return False


def _dist_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def versions():
    """Version string of every system and support library, or why it is unavailable."""
    out = {}
    for name in SYSTEMS:
        try:
            mod = load(name)
            out[name] = getattr(mod, "__version__", None) or _dist_version(name)
        except Unavailable as e:
            out[name] = f"{_dist_version(name)} (unavailable: {e})"
    for extra in ("numpy", "jaxlib", "matplotlib", "scipy"):
        try:
            out[extra] = importlib.import_module(extra).__version__
        except Exception:
            out[extra] = "not installed"
    return out
