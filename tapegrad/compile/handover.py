"""A used-up tape's arrays handed over to its compiled reverse pass.

A used-up tape's pass is the last reader of most of its arrays: after their last use in the
pass, their buffers can take the pass's own results, which then go to memory that was just
read (hot) instead of new memory (cold: W9P's outer pass allocates ~40 arrays of 256 KB).
An array is handed over only where nothing but the tape can reach it: its tensor is named by
the tape's entries alone and it is the tensor's own C-contiguous, writable array, which no
view shares (a view holds its base). Reference counts say so exactly: the tape's entries
name each output as often as the structure says (``uses``), and the pass's own frames hold
one list of the outputs (``outs``). A tensor the user, a memo, another tape or a view still
holds has more references, and the pass reads it as it is.

The derivative cache (``derivative_cache.py``) keeps, per compiled pass, the program, the
entries whose outputs it reads (with their input names) and how often the tape names each
output (``uses``); ``function`` picks the program to call.
"""
from sys import getrefcount

import numpy as np

from tapegrad.core.tensor import Tensor

# Only arrays from this size are handed over: a smaller one is a small part of its line's
# cost (malloc serves it from memory freed a moment ago), and the check costs ~0.3 us an
# array at every call. Measured on W9P's outer pass (256 KB arrays): 0.92x the step.
DONATE_BYTES = 64 << 10


def function(compiled, outs):
    """The function to call: the program that overwrites the arrays only the tape holds,
    where every array it was compiled to take over is so held now; else the plain one."""
    d = compiled.donating
    if d is None:  # the first pass whose tape is handed over: which arrays could be
        mine = tuple((k, name) for k, name in compiled.out_inputs
                     if type(outs[k]) is Tensor and outs[k]._value.nbytes >= DONATE_BYTES
                     and only_the_tape_holds(outs, k, compiled.uses[k]))
        d = ()
        if mine:
            from tapegrad.trace.codegen import compile_program
            fn, _ = compile_program(compiled.program, "derivative",
                                    donated=frozenset(name for _, name in mine))
            d = (fn, tuple((k, compiled.uses[k]) for k, _ in mine))
        compiled.donating = d
    if not d:
        return compiled.fn
    fn, checks = d
    for k, uses in checks:
        if not only_the_tape_holds(outs, k, uses):
            return compiled.fn
    return fn


def only_the_tape_holds(outs, k, uses):
    """Whether entry ``k``'s output (``outs[k]``) and its array are reachable only through
    the tape's ``uses`` references to it and the ``outs`` sequence."""
    t = outs[k]
    if type(t) is not Tensor:
        return False
    v = t._value
    # references: t's: the entries' ``uses``, ``outs``, the local ``t``, getrefcount's
    # argument; v's: t's slot, the local ``v``, the argument. Counted first: they decide
    # most calls, and cost less than the flags (a new object at each ``v.flags``)
    if type(v) is not np.ndarray or getrefcount(v) != 3 or getrefcount(t) != uses + 3 or \
            v.base is not None or not v.ndim:
        return False
    flags = v.flags
    return flags.c_contiguous and flags.writeable


def uses(key, n):
    """How many references the tape's entries hold to each entry's output: its own entry's,
    and one per argument naming it (``key``: the structure key, ``tape/structure.py``).

    >>> uses(((None, (-1,)), (None, (0, 0)), (None, (1, -2))), 3)  # y1 = y0 * y0; y2 = y1 * x1
    (3, 2, 1)
    """
    uses = [1] * n
    for k in range(n):
        for r in key[k][1]:
            if type(r) is int and r >= 0:
                uses[r] += 1
    return tuple(uses)
