"""Saved programs as bytes: how compiled programs travel (pickle, Dask workers).

``dumps`` gives the saved-format archive of a compiled function, ``loads`` reads one back
through the same validating loader as ``tapegrad.saved.load``, and ``load_cached`` keeps one
loaded (and compiled) program per archive hash in this process, so a worker compiles each
program once, not once per chunk. Pickling a ``ConcreteFunction`` or a loaded program
pickles only these bytes: nothing but data crosses the wire.

>>> import pickle, tapegrad as tf
>>> f = tf.function(lambda x: tf.tanh(x) * 2.0)
>>> cf = f.get_concrete_function(tf.TensorSpec([3], tf.float32))
>>> g = pickle.loads(pickle.dumps(cf))          # a LoadedFunction, rebuilt from data
>>> g(tf.constant([0.0, 0.0, 0.0])).numpy().tolist()
[0.0, 0.0, 0.0]
"""
import hashlib
import sys
import threading

from tapegrad.compile.concrete import ConcreteFunction
from tapegrad.saved.format import MAX_BYTES, LoadError

_CACHE = {}          # sha256 hex -> LoadedFunction, this process only
_CACHE_MAX = 64      # programs; a worker rarely sees more than a handful
_LOCK = threading.Lock()


def dumps(fn):
    """The saved-format bytes of ``fn`` (a ``ConcreteFunction``, loaded program, or
    ``tapegrad.function`` with an ``input_signature``); raises before anything is sent if
    ``fn`` cannot be saved."""
    from tapegrad.saved.archive import archive_bytes
    data = getattr(fn, "_saved_bytes", None)
    if data is not None:
        return data
    data = archive_bytes(_savable(fn))  # in memory: no file is written
    try:  # remember them: the hash (Dask's token) of one object must not change
        fn._saved_bytes = data
    except AttributeError:  # pragma: no cover - objects with __slots__
        pass
    return data


def _savable(fn):
    from tapegrad.saved.loaded import LoadedFunction
    if isinstance(fn, LoadedFunction):
        from tapegrad.compile.concrete import ConcreteFunction
        return ConcreteFunction.from_program(fn.program, fn.variables, fn._structure)
    return fn


def loads(data, max_bytes=MAX_BYTES):
    """A ``LoadedFunction`` from ``dumps`` bytes; only ``LoadError`` escapes for bad bytes."""
    from tapegrad.saved.archive import load
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise LoadError(f"loads: expected the bytes of a saved program, got "
                        f"{type(data).__name__}")
    data = bytes(data)
    fn = load(data, max_bytes=max_bytes)  # read in memory, with the same checks as a file
    fn._saved_bytes = data
    return fn


def token(data):
    """The hash that names a program's bytes (its Dask token and cache key)."""
    return hashlib.sha256(data).hexdigest()


def load_cached(data, digest=None):
    """``loads(data)``, once per process for each distinct archive (keyed by its hash)."""
    digest = digest or token(data)
    fn = _CACHE.get(digest)
    if fn is None:
        with _LOCK:
            fn = _CACHE.get(digest)
            if fn is None:
                if token(data) != digest:
                    raise LoadError("load_cached: the program bytes do not match their hash "
                                    "(corrupted in transit)")
                fn = loads(data)
                if len(_CACHE) >= _CACHE_MAX:
                    _CACHE.pop(next(iter(_CACHE)))
                _CACHE[digest] = fn
    return fn


def cache_info():
    """``{hash: program name}`` of the programs loaded in this process (for tests/diagnostics)."""
    return {k: v.program.name for k, v in _CACHE.items()}


def reduce_program(fn):
    """``__reduce__`` of compiled programs: unpickling loads (and validates) the bytes."""
    return loads, (dumps(fn),)


def tokenize_program(fn):
    """``__dask_tokenize__`` of compiled programs: the hash of their saved bytes."""
    return ("tapegrad-program", token(dumps(fn)))


# ConcreteFunction (a lower layer) pickles and tokenizes through this module.
ConcreteFunction.transport = sys.modules[__name__]
