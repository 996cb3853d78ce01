"""Broadcast rows merged: one cost model for eager execution and generated code.

NumPy runs ``d + c`` for ``d`` of shape (..., B, K) and ``c`` of shape (K,) or (..., 1, K)
(a bias; the basis rows of a batch Jacobian) one row at a time: with K = 16 its inner loop
has 16 elements, and the sum takes 2-3x the time of one on contiguous data (a few ns per
row; LeNet's (64, 28, 28, 6) + (6,) is 50,176 loops of 6). Viewed as (..., B / r, r * K),
with ``c`` tiled r times along its last axis, the same element pairs meet in loops r times
as long: the same numbers, bit for bit.

Cost model (``merge_factor``): rows of K <= ``MERGE_K`` elements become rows of
r * K <= ``MERGE_WIDTH`` (r the largest divisor of B that fits), for results of
``MERGE_ROWS`` rows and more (``MERGE_ROWS_COPY`` where an operand is tiled at run time).
Measured, one thread: 0.54x the time at (2048, 16), 0.66x at (1024, 8), 0.78x at (1024, 64),
a tiled argument included. Generated code applies it in ``trace/emit_forms.merged_rows``.
An eager operation (``primitives/families.py``) pays about 2 us more for it (its checks,
the reshapes and the tile, in Python), so it merges rows of at most ``EAGER_K`` elements in
results of ``EAGER_ROWS`` rows and more: measured, CPU time of the merged form over the
plain one, float32 / float64: LeNet's (64, 28, 28, 6) + (6,) 0.30 / 0.41, (64, 10, 10, 16)
+ (16,) 0.67 / 0.73; but (2048, 16) 0.70 / 0.98, (2048, 32) 0.83 / 1.10, (1024, 8)
1.18 / 1.10, (1024, 64) 1.08 / 1.05, (2048, 64) 0.98 / 1.12. Rows of one element never
merge: NumPy broadcasts a single value in one loop.

>>> merge_factor(28, 6, 64 * 28 * 28, runtime_tile=True, eager=True)  # rows of 6 -> of 168
28
>>> merge_factor(2048, 32, 2048, runtime_tile=True), merge_factor(2048, 32, 2048, True, True)
(16, None)
"""
import numpy as np

MERGE_WIDTH = 512     # merged rows hold at most this many elements
MERGE_K = 64          # longer rows gain too little (4% at 128, nothing at 256)
MERGE_ROWS = 256      # results of fewer rows keep the plain form (the reshapes cost more)
MERGE_ROWS_COPY = 1024  # ... and where an operand is tiled at run time (~1.5 us)
EAGER_K, EAGER_ROWS = 16, 4096  # an eager operation's longest rows, fewest rows


def merge_factor(b, k, rows, runtime_tile, eager=False):
    """Rows merged at a time for a result whose last two axes are (``b``, ``k``) and which
    has ``rows`` rows of ``k`` in all, or None (see the module doc)."""
    if eager:
        if not 1 < k <= EAGER_K or rows < EAGER_ROWS:
            return None
    elif not k or k > MERGE_K or rows < (MERGE_ROWS_COPY if runtime_tile else MERGE_ROWS):
        return None
    r = max(d for d in range(1, MERGE_WIDTH // k + 1) if b % d == 0)
    return r if r > 1 else None


def tile_rows(v, r):
    """1-D ``v`` repeated ``r`` times (``np.tile`` without its Python overhead)."""
    out = np.empty((r, v.shape[0]), v.dtype)
    out[...] = v
    return out.reshape(-1)
