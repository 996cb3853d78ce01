"""Transparent huge pages for the malloc heap, where the kernel gives them only when asked.

An eager training step keeps every value its tapes recorded until the outer gradient is
taken: W9P's PINN step holds ~40 arrays of 256 KB (~11 MB), and each new result is written to
memory the step has not touched for a while. With 4 KB pages that is ~2,800 pages, more than
the CPU's second-level TLB holds, so the writes and reads miss the TLB as well as the cache.
NumPy asks for huge pages itself for arrays of 4 MB and more; the arrays between 128 KB and
4 MB come from malloc's heap (``allocator.py`` keeps them there), which gets none where the
kernel's THP mode is ``madvise`` (the default of most distributions). Measured, one thread,
two processes with interleaved rounds, CPU time, medians (on a machine busy with other work):
W9P's eager step 0.88x and 0.93x with the heap advised (glibc's own ``glibc.malloc.hugetlb=1``
tunable, which can only be set before the process starts, gave 0.88x), its compiled step
0.95x.

``advise()`` grows the heap by ``RESERVE`` bytes of blocks (below the mmap threshold, so they
come from the heap) and frees them at once: below the trim threshold, the free top of the heap
stays mapped. Then it asks for huge pages on the whole heap (``madvise(MADV_HUGEPAGE)``). Pages
are still given on first touch, so the process grows only by what it uses, in 2 MB steps;
what the heap gains later (past the reserve) has ordinary pages. Nothing changes a value:
this is where the memory lies, not what is computed. ``allocator.tune()`` calls it; the same
opt-outs (``TAPEGRAD_MALLOC=default``, your own malloc settings) leave the heap alone.

>>> mode("always [madvise] never")
'madvise'
>>> mode("")
"""
import ctypes
import re

MADV_HUGEPAGE = 14  # <sys/mman.h> on Linux
RESERVE_BLOCK = 16 << 20  # below allocator.MMAP_THRESHOLD: from the heap
RESERVE_BLOCKS = 3  # 48 MB, below allocator.TRIM_THRESHOLD: kept mapped once freed
_THP = "/sys/kernel/mm/transparent_hugepage/"
_state = {"done": None}


def mode(text):
    """The selected mode of a THP sysfs file's text (``always [madvise] never``), or None."""
    m = re.search(r"\[(\w+)\]", text)
    return m.group(1) if m else None


def _read(name):
    try:
        with open(_THP + name) as f:
            return f.read().strip()
    except OSError:
        return ""


def heap():
    """``(start, end)`` of this process's malloc heap (its ``[heap]`` mappings in
    /proc/self/maps, first to last), or None."""
    spans = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if line.rstrip().endswith("[heap]"):
                    lo, hi = line.split()[0].split("-")
                    spans.append((int(lo, 16), int(hi, 16)))
    except OSError:
        return None
    return (spans[0][0], spans[-1][1]) if spans else None


def advise(libc):
    """Reserve heap and ask for huge pages on it (see the module doc); says what happened:
    ``"advised"``, or why not (the kernel's mode, no heap, a failed call)."""
    if _state["done"] is not None:
        return _state["done"]
    kernel = mode(_read("enabled"))
    if kernel != "madvise":  # "always": the kernel gives them unasked; "never", None: none
        _state["done"] = f"kernel: {kernel}"
        return _state["done"]
    try:
        page = int(_read("hpage_pmd_size") or 2 << 20)
        malloc, free, madvise = libc.malloc, libc.free, libc.madvise
        malloc.restype, malloc.argtypes = ctypes.c_void_p, (ctypes.c_size_t,)
        free.argtypes = (ctypes.c_void_p,)
        madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        blocks = [malloc(RESERVE_BLOCK) for _ in range(RESERVE_BLOCKS)]
        for b in blocks:
            free(b)
        where = heap()
        if where is None:
            _state["done"] = "no heap"
            return _state["done"]
        lo = -(-where[0] // page) * page  # whole huge pages inside the heap
        hi = where[1] // page * page
        ok = hi > lo and madvise(lo, hi - lo, MADV_HUGEPAGE) == 0
        _state["done"] = "advised" if ok else "madvise failed"
    except (OSError, AttributeError, ValueError):
        _state["done"] = "failed"
    return _state["done"]


def state():
    """What ``advise()`` did: None (not called), or its answer."""
    return _state["done"]
