"""Recycled memory for large results, so that a loop over big arrays does not page-fault.

A new NumPy array of more than glibc's largest ``mmap`` threshold (32 MiB on 64-bit Linux)
is a fresh ``mmap`` every time: the kernel maps and zeroes its pages on first touch, which
costs about as much as the sine that fills it (a 40 MB ``np.sin`` takes ~2x as long into a
new array as into an old one). Smaller blocks come back from malloc's free lists warm, so
nothing is done for them.

``empty(shape, dtype)`` returns an array for a result of at least ``MIN_BYTES``: a block that
a dead array left behind when one of the same size is idle, else a new one. A block goes back
when the last array or view on it dies (CPython frees it at once; a block in a reference
cycle comes back when the cycle is collected), so a block in use is never handed out twice.
At most ``IDLE_BYTES`` (1 GiB, or 1/16 of the memory of a smaller machine) of idle blocks
are kept; the rest are freed, so the pool never holds more than the program recently used at
once, nor more than that bound (``set_idle_limit``; 0 turns recycling off).

>>> import numpy as np
>>> a = empty((MIN_BYTES // 4,), np.float32)
>>> a.shape == (MIN_BYTES // 4,) and a.dtype == np.float32 and a.flags.writeable
True
>>> empty((16,), np.float32) is None          # small: NumPy's own allocation is fine
True
"""
import threading

import numpy as np

from tapegrad.util.machine import memory

MIN_BYTES = 32 << 20   # glibc's largest dynamic mmap threshold: below it malloc reuses
IDLE_BYTES = min(1 << 30, memory() // 16)  # idle blocks kept at most

_lock = threading.RLock()  # re-entrant: a block can come back (a __del__) inside empty()
_idle = {}                 # nbytes -> [idle block (uint8 array), ...]
_state = {"idle_bytes": 0, "limit": IDLE_BYTES}


class _Lease:
    """The base of the arrays made on one block; it gives the block back when they die."""

    __slots__ = ("block", "__array_interface__")

    def __init__(self, block, shape, dtype):
        self.block = block
        self.__array_interface__ = {"shape": shape, "typestr": dtype.str, "version": 3,
                                    "data": (block.ctypes.data, False)}

    def __del__(self):
        try:
            _give_back(self.block)
        except Exception:  # noqa: BLE001 - at interpreter exit the module may be torn down
            pass


def _give_back(block):
    with _lock:
        if _state["idle_bytes"] + block.nbytes > _state["limit"]:
            return  # over the bound: the block is freed with this lease
        _idle.setdefault(block.nbytes, []).append(block)
        _state["idle_bytes"] += block.nbytes


def empty(shape, dtype):
    """An uninitialised C-contiguous array on recycled memory, or None below ``MIN_BYTES``
    (and for dtypes that hold Python objects)."""
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize
    for n in shape:
        nbytes *= n
    if nbytes < MIN_BYTES or dtype.hasobject or dtype.fields is not None:
        return None
    with _lock:
        free = _idle.get(nbytes)
        if free:
            block = free.pop()
            _state["idle_bytes"] -= nbytes
        else:
            block = None
    if block is None:
        block = np.empty(nbytes, np.uint8)
    return np.asarray(_Lease(block, tuple(shape), dtype))


def idle_bytes():
    """Bytes of idle blocks the pool holds now."""
    return _state["idle_bytes"]


def set_idle_limit(nbytes):
    """Keep at most ``nbytes`` of idle blocks (0: keep none, every large result is new);
    None restores the default. Blocks over the new bound are freed now."""
    limit = IDLE_BYTES if nbytes is None else int(nbytes)
    if limit < 0:
        raise ValueError(f"the idle limit must be >= 0 bytes, got {nbytes!r}")
    with _lock:
        _state["limit"] = limit
        while _state["idle_bytes"] > limit:
            size = max(_idle)
            _idle[size].pop()
            if not _idle[size]:
                del _idle[size]
            _state["idle_bytes"] -= size
