"""glibc's malloc started where its own dynamic thresholds end, so that a step's arrays are
not handed back to the kernel at its end and faulted in again at the next step.

A step of tapegrad (an eager tape with its derivative pass, a compiled program) allocates
hundreds of arrays of 100 KB to a few MB and frees most of them together at its end. glibc
serves a block of 128 KB or more with its own ``mmap`` (unmapped again by ``free``) until
the first such block is freed; from then on the *mmap threshold* follows the largest block
freed (up to 32 MB on 64-bit) and the *trim threshold* is twice that. Both stay far below
what one step frees at once: the free memory at the top of the heap is returned to the
kernel (``trim``) after every step, and every page of the next step's arrays is a page
fault again (the kernel zeroes it first). On W9P's PINN step (2,048 x 32 float32 arrays)
that was ~1,700 faults per step and more than half of its time.

``tune()`` sets the values the dynamic rule reaches after a 32 MB block has been freed:
blocks below 32 MB from the heap, and up to 64 MB of free heap kept for the next step. So
the process keeps at most 64 MB it could have returned; blocks of 32 MB and more keep their
own mappings, as before. It is called when tapegrad is imported, on Linux with glibc only.
It changes nothing where the user already tuned malloc (``MALLOC_TRIM_THRESHOLD_``,
``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TOP_PAD_`` or ``GLIBC_TUNABLES`` set), or where
``TAPEGRAD_MALLOC=default`` is set. malloc is the process's, so the same settings serve
every library in it.

>>> tune() in ("tuned", "already", "not glibc", "left to the user")
True
"""
import ctypes
import os
import sys

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>
MMAP_THRESHOLD = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # what the dynamic rule pairs with it
_USER_VARS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_",
              "GLIBC_TUNABLES")
_state = {"done": None}


def user_decided():
    """Whether the user set malloc's thresholds themselves (then tapegrad leaves them)."""
    return os.environ.get("TAPEGRAD_MALLOC", "auto") != "auto" or \
        any(os.environ.get(v) for v in _USER_VARS)


def _mallopt():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        if not libc.gnu_get_libc_version:  # musl and others: no such symbol
            return None
        return libc.mallopt
    except (OSError, AttributeError):
        return None


def tune():
    """Set glibc's thresholds once (see the module doc); says what happened."""
    if _state["done"] is not None:
        return "already"
    if user_decided():
        _state["done"] = "left to the user"
        return _state["done"]
    mallopt = _mallopt()
    if mallopt is None:
        _state["done"] = "not glibc"
        return _state["done"]
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    ok = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    _state["done"] = "tuned" if ok else "not glibc"
    return "tuned" if ok else "not glibc"


def state():
    """What ``tune()`` did: None (not called), or its answer."""
    return _state["done"]
