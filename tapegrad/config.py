"""Library-wide settings."""
from tapegrad.util.machine import memory as _machine_memory

_budget = None
_derivative_cache = True
_function_cache_size = 128


def memory_budget():
    """Bytes one vectorized Jacobian/Hessian chunk may use (default: 1/8 of RAM, max 4 GiB)."""
    if _budget is not None:
        return _budget
    return max(64 << 20, min(4 << 30, _machine_memory() // 8))


def set_memory_budget(nbytes):
    """Set the memory budget for automatic chunking; None restores the default.

    >>> import tapegrad as tf
    >>> tf.config.set_memory_budget(256 << 20); tf.config.memory_budget()
    268435456
    >>> tf.config.set_memory_budget(None)
    """
    global _budget
    if nbytes is not None and (not isinstance(nbytes, int) or nbytes <= 0):
        raise ValueError(f"memory budget must be a positive number of bytes, got {nbytes!r}")
    _budget = nbytes


def derivative_cache():
    """Whether repeated tape structures get compiled derivative passes (default: True)."""
    return _derivative_cache


def set_derivative_cache(enabled):
    """Switch compiled derivative passes for repeated tapes (``compile/derivative_cache.py``).

    Off, every gradient and Jacobian runs the interpretive passes (handy when debugging a rule).

    >>> import tapegrad as tf
    >>> tf.config.set_derivative_cache(False); tf.config.derivative_cache()
    False
    >>> tf.config.set_derivative_cache(True)
    """
    global _derivative_cache
    if not isinstance(enabled, bool):
        raise TypeError(f"set_derivative_cache expects True or False, got {enabled!r}")
    _derivative_cache = enabled


class threading:  # noqa: N801 - TensorFlow's namespace ``tf.config.threading``
    """``tf.config.threading``: the threads BLAS may use.

    By default tapegrad decides per compiled program: one thread for programs of small
    GEMMs (where threads only spin, painfully so on a busy machine), the library's default
    for large ones (``tapegrad/util/blas.py``). Setting a number here (or
    ``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` in the environment) turns that off.

    >>> import tapegrad as tf
    >>> tf.config.threading.get_intra_op_parallelism_threads()
    0
    """

    @staticmethod
    def set_intra_op_parallelism_threads(num_threads):
        """Use ``num_threads`` BLAS threads everywhere (0: the library's default)."""
        from tapegrad.util import blas
        if not isinstance(num_threads, int) or num_threads < 0:
            raise ValueError(f"num_threads must be a non-negative int, got {num_threads!r}")
        blas.set_user_threads(num_threads)

    @staticmethod
    def get_intra_op_parallelism_threads():
        from tapegrad.util import blas
        return blas.user_threads()

    @staticmethod
    def set_inter_op_parallelism_threads(num_threads):
        """Accepted for TensorFlow compatibility: tapegrad runs one op at a time."""
        if not isinstance(num_threads, int) or num_threads < 0:
            raise ValueError(f"num_threads must be a non-negative int, got {num_threads!r}")
        threading._inter = num_threads

    @staticmethod
    def get_inter_op_parallelism_threads():
        return getattr(threading, "_inter", 0)


def function_cache_size():
    """How many traced programs one ``tf.function`` keeps (default 128; see below)."""
    return _function_cache_size


def set_function_cache_size(n):
    """Bound each ``tf.function``'s caches: at most ``n`` concrete functions (one per call
    signature), least recently used evicted first; also ``n`` per-signature records of
    ``reduce_retracing`` and ``None``-dimension program families. An evicted signature is
    traced again when it comes back. None restores the default, 128.

    >>> import tapegrad as tf
    >>> tf.config.set_function_cache_size(16); tf.config.function_cache_size()
    16
    >>> tf.config.set_function_cache_size(None)
    """
    global _function_cache_size
    if n is None:
        n = 128
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"function cache size must be a positive int, got {n!r}")
    _function_cache_size = n
