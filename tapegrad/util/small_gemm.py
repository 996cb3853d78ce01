"""Row-blocked GEMMs: a tall matrix times a small one as GEMMs of a few rows each
(``row_block``), where NumPy's BLAS has a faster path for small problems; and inner-blocked
GEMMs: a small result summed over a long inner axis (a dense layer's weight gradient
``x.T @ g``) as GEMMs of a few hundred inner indices each, summed.

OpenBLAS (0.3.16 and later, x86-64 AVX-512 kernels: SkylakeX and later, which Zen 4 uses)
runs a GEMM of at most ``SMALL_GEMM`` (10^6) multiply-adds on dedicated small-matrix kernels,
with no packing of the operands. A tall GEMM with few columns, ``(m, k) @ (k, n)`` with
m = 2,048 and k = n = 64 (a batch Jacobian's cotangent rows through a layer, a PINN's
collocation points), is past that limit and takes the general path; the same rows as one
stacked matmul of ``(m / 64, 64, k) @ (k, n)`` (NumPy calls BLAS once per block) run on the
small kernels. Measured, one thread, float32 / float64 (CPU time, the blocked form over the
plain one): 2048x64x64 0.84 / 0.83, 512x64x64 0.76 / 0.84, 2048x32x32 0.69 / 0.76,
2048x64x8 0.75 / 0.41, 2048x8x64 0.76 / 0.66, 2048x128x64 0.83 / 0.84, 256x64x64 0.91 / 0.85;
where a block holds little work the calls cost more than they save (2048x2x32 in blocks of 64:
1.71 / 1.20, 4096x4x4: 1.04 / 1.46; both small GEMMs already).

Wider or deeper right matrices take blocks of fewer rows: ``row_block(k, n)`` is the largest
power of two up to ``ROW_BLOCK`` (64) whose block is still a small GEMM
(``rows * k * n <= SMALL_GEMM``), and at least ``MIN_ROWS`` (8: blocks of fewer rows than
the kernels' own tiles lose). Narrower ones (k * n < 256) take more rows, so that a block
holds at least ``MIN_BLOCK_WORK`` multiply-adds (the call per block costs more than it
saves below): measured, blocked over plain, float32 / float64, 8192x16x8 in blocks of 128:
0.84 / 0.45, 8192x8x16: 0.60 / 0.52, 8192x2x64: 0.53 / 0.65, 16384x4x16 in blocks of 256:
0.55 / 0.45, 32768x4x8 in blocks of 512: 0.49 / 0.34; down to k * n = ``MIN_KN`` (32,
the narrowest measured). Measured on a grid of m 16-8,192 and k, n 16-1,024 (blocked
over plain, one thread, CPU time, interleaved), float32: every shape the rule blocks gains,
0.52-0.93 (1024x64x256 in blocks of 32: 0.87-0.91, 64x256x64: 0.82-0.85, 64x64x1024 in
blocks of 8: 0.64, 512x256x256: 0.92, 256x128x512: 0.92); float64 gains as much where
n <= 128 (0.63-0.98) but not for wider results (1024x32x512 in blocks of 32: 1.05,
100x256x256: 1.00), hence ``MAX_N``.

The cost model (``row_blocked``): a ``row_block`` exists (k * n at most
``SMALL_GEMM / MIN_ROWS``), k * n at least ``MIN_KN``, k at most ``MAX_K`` and n at most
``MAX_N`` of the dtype (the measured range), m * k * n above ``SMALL_GEMM`` (below it the
whole GEMM is small already) and at most ``MAX_WORK`` (the small kernels run on one thread:
a larger GEMM may gain more from OpenBLAS's threads on a quiet machine), float32 or float64
operands of one dtype, not a shape the inner blocks take (``inner_blocked_shape`` decides
those: the two rules never both apply), and only where NumPy's BLAS is OpenBLAS on an
AVX-512 CPU (``HAS_SMALL_PATH``, decided once at import from NumPy's build configuration
and CPU features, so the choice, and the bits, never depend on timing). Blocks start at
row 0; the last ``m % rows`` rows are one more GEMM.

The bits: the small kernels round some shapes differently from the general path (about 1 in
5 random shapes differ in a last bit), and a row's result depends on the block it is in. So
every 2-D matmul of eager execution, the IR interpreter and generated code takes this one
rule (``primitives/linalg.matmul_2d``; ``trace/emit_forms.py`` emits a call of it for these
shapes, ``trace/blocking.py`` keeps them out of its loops): the same numbers everywhere.

Inner blocks (``inner_blocked``): ``x.T @ g`` with x, g of shape (2,048, 32) (the weight
gradient of every dense layer at 2,048 points) is 2 M multiply-adds, past ``SMALL_GEMM``, and
OpenBLAS packs both operands on its general path. Cut along the inner axis into ``nb`` blocks
of ``kb`` = ``inner_block(m, n)`` indices (the largest power of two up to ``MAX_INNER_BLOCK``
whose GEMM is small), the blocks run as one stacked matmul ``(nb, m, kb) @ (nb, kb, n)`` on the
small kernels and their ``nb`` partial products are summed in order (``p0 + p1``, then
``+ p2``...), then a last GEMM for the ``k % kb`` remaining indices is added. Measured, one thread, float32 / float64 (CPU time, blocked over plain): 32x2048x32
0.74 / 0.69, 32x1024x32 0.78 / 0.73, 32x16384x32 0.67 / 0.65, 64x2048x64 0.86 / 0.82,
48x2048x48 0.84 / 0.80, 16x2048x64 0.75 / 0.73, 4x2048x256 0.60 / 0.68, 256x2048x4
0.36 / 0.38; it loses where the result is smaller (16x2048x16 1.23 / 1.15, 8x2048x8 1.42 /
1.39: ``MIN_MN``), larger (128x2048x128 1.03 / 1.06: ``MAX_MN``) or the GEMM small already
(32x512x32 1.23 / 1.15: ``SMALL_GEMM``). A C-ordered left operand (a constant ``x.T`` in
compiled code) gains too: 32x2048x32 0.86 / 0.67, 4x2048x256 0.55 / 0.52, 256x2048x4
0.48 / 0.45, 64x2048x64 0.93 / 0.82. Only contiguous left operands (their blocks are views)
and a C-ordered right one, of one float dtype; ``MAX_WORK`` as for rows. The partial sums are a summation order of their own (as BLAS's own
blocking of the inner axis is): every 2-D matmul takes this one rule, so the bits agree
everywhere, as for the row blocks.

>>> import numpy as np
>>> a, b = np.ones((4096, 32), np.float32), np.ones((32, 32), np.float32)
>>> bool((matmul_rows(a, b) == a @ b).all())
True
>>> bool((matmul_inner(a.T, a) == a.T @ a).all())
True
"""
import numpy as np

ROW_BLOCK = 64           # rows per GEMM at most
MIN_ROWS = 8             # rows per GEMM at least
SMALL_GEMM = 10 ** 6     # OpenBLAS's small-matrix limit, in multiply-adds (m * n * k)
MIN_KN = 32              # k * n at least (the narrowest measured)
MIN_BLOCK_WORK = 1 << 14  # multiply-adds a block at least: narrower rows take more rows
MAX_K = 1024             # k (measured up to 1,024)
MAX_N = {np.dtype(np.float32): 1024, np.dtype(np.float64): 128}  # n: measured up to 1,024;
#                          wider float64 results gain little or lose
MAX_WORK = 1 << 24       # m * k * n: larger GEMMs keep their BLAS threads
MIN_MN = 1024            # m * n of an inner-blocked GEMM: smaller results lose (16 x 16)
MAX_MN = 4096            # m * n: larger results lose (128 x 128)
MAX_INNER_BLOCK = 512    # inner indices a block at most (measured 128-512)
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _has_small_path():
    """NumPy's BLAS is OpenBLAS and the CPU has the AVX-512 kernels with the small path."""
    try:
        blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
        from numpy._core._multiarray_umath import __cpu_features__
    except (AttributeError, KeyError, ImportError, TypeError):  # pragma: no cover
        return False
    name = str(blas.get("name", "")).lower()
    return "openblas" in name and bool(__cpu_features__.get("AVX512F")) and \
        bool(__cpu_features__.get("AVX512_SKX"))


HAS_SMALL_PATH = _has_small_path()


def row_block(k, n):
    """Rows per GEMM of a row-blocked ``(m, k) @ (k, n)``: the largest power of two up to
    ``ROW_BLOCK`` whose GEMM is small (``rows * k * n <= SMALL_GEMM``), or None where even
    ``MIN_ROWS`` rows are not; for k * n below 256, the smallest power of two from
    ``ROW_BLOCK`` whose GEMM holds ``MIN_BLOCK_WORK`` multiply-adds.

    >>> row_block(64, 64), row_block(64, 256), row_block(256, 256), row_block(512, 512)
    (64, 32, 8, None)
    >>> row_block(16, 8), row_block(4, 16), row_block(4, 8)
    (128, 256, 512)
    """
    rows = ROW_BLOCK
    while rows * k * n < MIN_BLOCK_WORK:
        rows *= 2
    while rows * k * n > SMALL_GEMM:
        if rows == MIN_ROWS:
            return None
        rows //= 2
    return rows


_DECIDED = {}  # (rule, m, k, n, dtype, HAS_SMALL_PATH) -> the rule's answer
_MAX_DECIDED = 4096


def _remembered(rule):
    """``rule(m, k, n, dtype)`` (a function of its arguments and ``HAS_SMALL_PATH`` alone)
    answered from a table: every GEMM past ``SMALL_GEMM`` asks, and a program's shapes repeat
    (the rule's own arithmetic took ~0.5 us a GEMM; the table is cleared when it fills)."""
    def decide(m, k, n, dtype):
        key = (rule, m, k, n, dtype, HAS_SMALL_PATH)
        answer = _DECIDED.get(key)
        if answer is None:
            if len(_DECIDED) >= _MAX_DECIDED:
                _DECIDED.clear()
            answer = _DECIDED[key] = rule(m, k, n, dtype)
        return answer
    decide.__doc__, decide.__name__, decide.__wrapped__ = rule.__doc__, rule.__name__, rule
    return decide


@_remembered
def blocked_shape(m, k, n, dtype):
    """Whether a 2-D ``(m, k) @ (k, n)`` GEMM of ``dtype`` runs in row blocks (the shapes and
    dtype alone; ``row_blocked`` adds the layout).

    >>> blocked_shape(2048, 64, 64, np.float32) == HAS_SMALL_PATH
    True
    >>> blocked_shape(128, 64, 64, np.float32)  # 0.5 M multiply-adds: small already
    False
    """
    dtype = np.dtype(dtype)
    return bool(HAS_SMALL_PATH and dtype in _DTYPES and MIN_KN <= k * n and k <= MAX_K
                and n <= MAX_N[dtype] and SMALL_GEMM < m * k * n <= MAX_WORK
                and row_block(k, n) is not None and not inner_blocked_shape(m, k, n, dtype))


def row_blocked(a, b):
    """Whether ``a @ b`` (2-D NumPy arrays, ``b`` C-contiguous) runs as ``matmul_rows``:
    ``blocked_shape`` and a C-contiguous ``a`` of ``b``'s dtype (its blocks are then views)."""
    m, k = a.shape
    n = b.shape[1]
    if m * k * n <= SMALL_GEMM:
        return False  # the common small case, decided cheaply
    dtype = a.dtype
    return dtype == b.dtype and blocked_shape(m, k, n, dtype) and a.flags.c_contiguous


def matmul_rows(a, b, out=None):
    """``a @ b`` as stacked GEMMs of ``row_block(k, n)`` rows (a C-contiguous, 2-D), into
    ``out`` (a C-contiguous array of the result's shape) where given."""
    m, k = a.shape
    n = b.shape[1]
    if out is None:
        out = np.empty((m, n), np.result_type(a.dtype, b.dtype))
    rows = row_block(k, n)
    m0 = m - m % rows
    if m0:
        np.matmul(a[:m0].reshape(m0 // rows, rows, k), b,
                  out=out[:m0].reshape(m0 // rows, rows, n))
    if m0 < m:
        np.matmul(a[m0:], b, out=out[m0:])
    return out


def inner_block(m, n):
    """The inner indices of one block of an inner-blocked ``(m, k) @ (k, n)``: the largest
    power of two up to ``MAX_INNER_BLOCK`` whose GEMM stays within ``SMALL_GEMM``.

    >>> inner_block(32, 32), inner_block(64, 64)
    (512, 128)
    """
    kb = MAX_INNER_BLOCK
    while kb > 1 and m * kb * n > SMALL_GEMM:
        kb //= 2
    return kb


@_remembered
def inner_blocked_shape(m, k, n, dtype):
    """Whether a 2-D ``(m, k) @ (k, n)`` GEMM of ``dtype`` runs in inner blocks (the shapes and
    dtype alone; ``inner_blocked`` adds the layout).

    >>> inner_blocked_shape(32, 2048, 32, np.float32) == HAS_SMALL_PATH
    True
    >>> inner_blocked_shape(32, 512, 32, np.float32)  # 0.5 M multiply-adds: small already
    False
    """
    return bool(HAS_SMALL_PATH and MIN_MN <= m * n <= MAX_MN and SMALL_GEMM < m * k * n <= MAX_WORK
                and k >= 2 * inner_block(m, n) and np.dtype(dtype) in _DTYPES)


def inner_blocked(a, b):
    """Whether ``a @ b`` (2-D NumPy arrays, ``b`` C-contiguous) runs as ``matmul_inner``:
    ``inner_blocked_shape`` and a contiguous ``a`` (C- or F-ordered: its blocks are then
    views BLAS reads in place) of ``b``'s dtype."""
    m, k = a.shape
    n = b.shape[1]
    if m * k * n <= SMALL_GEMM:
        return False
    dtype = a.dtype
    return dtype == b.dtype and inner_blocked_shape(m, k, n, dtype) and a.flags.forc


def matmul_inner(a, b, out=None):
    """``a @ b`` as the sum of GEMMs over blocks of ``inner_block`` inner indices, in order,
    then the remaining indices' GEMM (``a`` C- or F-contiguous, ``b`` C-contiguous, 2-D),
    into ``out`` (a C-contiguous array of the result's shape) where given."""
    m, k = a.shape
    n = b.shape[1]
    kb = inner_block(m, n)
    nb = k // kb
    k0 = nb * kb
    if a.flags.f_contiguous:  # a transposed C-ordered (k, m): its blocks of rows are views
        blocks = a.T[:k0].reshape(nb, kb, m).transpose(0, 2, 1)
    else:  # C-ordered: blocks of columns, each read with the row stride k
        blocks = a[:, :k0].reshape(m, nb, kb).transpose(1, 0, 2)
    parts = np.matmul(blocks, b[:k0].reshape(nb, kb, n))
    out = np.add(parts[0], parts[1], out)
    for j in range(2, nb):
        np.add(out, parts[j], out)
    if k0 < k:
        np.add(out, a[:, k0:] @ b[k0:], out)
    return out
