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


# ---- TensorFlow's device and execution settings --------------------------------------------
# tapegrad computes on the CPU with NumPy: one physical and one logical device, and every
# device scope places there (TensorFlow's soft placement, on by default, does the same for a
# GPU name on a machine without one).
class PhysicalDevice(tuple):
    """``PhysicalDevice(name, device_type)``, as ``tf.config.list_physical_devices`` gives."""

    __slots__ = ()

    def __new__(cls, name, device_type):
        return tuple.__new__(cls, (name, device_type))

    name = property(lambda self: self[0])
    device_type = property(lambda self: self[1])

    def __repr__(self):
        return f"{type(self).__name__}(name='{self[0]}', device_type='{self[1]}')"


class LogicalDevice(PhysicalDevice):
    """``LogicalDevice(name, device_type)``, as ``tf.config.list_logical_devices`` gives."""

    __slots__ = ()


_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
_visible = [_CPU]
_run_eagerly = False
_soft_placement = True
_listeners = []  # called with no arguments when run_functions_eagerly changes (compile/)


def list_physical_devices(device_type=None):
    """The machine's devices of ``device_type`` ('CPU', 'GPU'; None: all): here one CPU.

    >>> import tapegrad as tf
    >>> tf.config.list_physical_devices("GPU")
    []
    """
    return [d for d in (_CPU,) if device_type is None or d.device_type == device_type]


def list_logical_devices(device_type=None):
    """The logical devices the runtime computes on (one per visible physical device)."""
    return [LogicalDevice("/device:CPU:0", "CPU") for d in _visible
            if device_type is None or d.device_type == device_type]


def get_visible_devices(device_type=None):
    return [d for d in _visible if device_type is None or d.device_type == device_type]


def set_visible_devices(devices, device_type=None):
    """Choose the visible devices; the CPU cannot be hidden (tapegrad computes on it)."""
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for d in devices:
        if not isinstance(d, PhysicalDevice) or d not in list_physical_devices():
            raise ValueError(f"Unrecognized device: {d!r}")
    if (device_type in (None, "CPU")) and _CPU not in devices:
        raise ValueError("Cannot hide the CPU: tapegrad computes on it.")


def run_functions_eagerly(run_eagerly):
    """Run every ``tf.function`` as plain Python (no tracing), for debugging: prints and
    breakpoints inside see every call, as in TensorFlow.

    >>> import tapegrad as tf
    >>> tf.config.run_functions_eagerly(True); tf.config.functions_run_eagerly()
    True
    >>> tf.config.run_functions_eagerly(False)
    """
    global _run_eagerly
    _run_eagerly = bool(run_eagerly)
    for listener in _listeners:
        listener()


def functions_run_eagerly():
    """Whether ``run_functions_eagerly(True)`` is in effect."""
    return _run_eagerly


def set_soft_device_placement(enabled):
    global _soft_placement
    _soft_placement = bool(enabled)


def get_soft_device_placement():
    return _soft_placement


def _device_spec(name):
    """Check a device string as TensorFlow parses it (``/job:localhost/device:GPU:0``,
    ``/cpu:0``, ``CPU:0``); a bad one raises TensorFlow's ValueError."""
    for p in (p for p in name.split("/") if p):
        fields = p.split(":")
        key = fields[0].lower()
        if key == "job" and len(fields) == 2 and fields[1]:
            continue
        if key in ("replica", "task") and len(fields) == 2 and fields[1].isdigit():
            continue
        if key == "device":
            fields = fields[1:]
        if len(fields) == 2 and fields[0].isalpha() and (fields[1].isdigit() or fields[1] == "*"):
            continue
        raise ValueError(f"Unknown attribute '{p}' is encountered while parsing the device "
                         f"spec: '{name}'.")


class device:  # noqa: N801 - TensorFlow's ``tf.device``
    """``with tf.device('/GPU:0'):`` — a placement scope. Every operation runs on the CPU
    here, so a scope changes nothing; a malformed name raises TensorFlow's ValueError.

    >>> import tapegrad as tf
    >>> with tf.device("/GPU:0"):
    ...     x = tf.constant(1.0) + 1
    >>> float(x), x.device
    (2.0, '/job:localhost/replica:0/task:0/device:CPU:0')
    """

    __slots__ = ("name",)

    def __init__(self, device_name):
        if device_name is not None and not callable(device_name):
            _device_spec(str(device_name))
        self.name = device_name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class experimental:  # noqa: N801 - TensorFlow's namespace
    """``tf.config.experimental``: memory growth (no GPU here) and determinism."""

    list_physical_devices = staticmethod(list_physical_devices)
    list_logical_devices = staticmethod(list_logical_devices)
    get_visible_devices = staticmethod(get_visible_devices)
    set_visible_devices = staticmethod(set_visible_devices)

    @staticmethod
    def set_memory_growth(device, enable):
        if getattr(device, "device_type", None) != "GPU":
            raise ValueError("Cannot set memory growth on non-GPU and non-Pluggable devices")

    @staticmethod
    def get_memory_growth(device):
        if getattr(device, "device_type", None) != "GPU":
            raise ValueError("Cannot get memory growth on non-GPU and non-Pluggable devices")

    @staticmethod
    def enable_op_determinism():
        """Accepted: tapegrad's operations are deterministic already (one NumPy call each,
        in program order)."""
