"""Row-blocked GEMMs: a tall matrix times a small one as GEMMs of ``ROW_BLOCK`` rows each,
where NumPy's BLAS has a faster path for small problems.

OpenBLAS (0.3.16 and later, x86-64 AVX-512 kernels: SkylakeX and later, which Zen 4 uses)
runs a GEMM of at most ``SMALL_GEMM`` (10^6) multiply-adds on dedicated small-matrix kernels,
with no packing of the operands. A tall GEMM with few columns, ``(m, k) @ (k, n)`` with
m = 2,048 and k = n = 64 (a batch Jacobian's cotangent rows through a layer, a PINN's
collocation points), is past that limit and takes the general path; the same rows as one
stacked matmul of ``(m / 64, 64, k) @ (k, n)`` (NumPy calls BLAS once per block) run on the
small kernels. Measured, one thread, float32 / float64 (CPU time, the blocked form over the
plain one): 2048x64x64 0.84 / 0.83, 512x64x64 0.76 / 0.84, 2048x32x32 0.69 / 0.76,
2048x64x8 0.75 / 0.41, 2048x8x64 0.76 / 0.66, 2048x128x64 0.83 / 0.84, 256x64x64 0.91 / 0.85;
where a block holds little work the calls cost more than they save (2048x2x32 1.71 / 1.20,
4096x4x4 1.04 / 1.46): hence ``MIN_KN``.

The cost model (``row_blocked``): k * n in [``MIN_KN``, ``MAX_KN``] (a block of 64 rows is
then a small problem), m * k * n above ``SMALL_GEMM`` (below it the whole GEMM is small
already) and at most ``MAX_WORK`` (the small kernels run on one thread: a larger GEMM may
gain more from OpenBLAS's threads on a quiet machine), float32 or float64 operands of one
dtype, and only where NumPy's BLAS is OpenBLAS on an AVX-512 CPU (``HAS_SMALL_PATH``,
decided once at import from NumPy's build configuration and CPU features, so the choice, and
the bits, never depend on timing). Blocks start at row 0; the last ``m % 64`` rows are one
more GEMM.

The bits: the small kernels round some shapes differently from the general path (about 1 in
5 random shapes differ in a last bit), and a row's result depends on the block it is in. So
every 2-D matmul of eager execution, the IR interpreter and generated code takes this one
rule (``primitives/linalg.matmul_2d``; ``trace/emit_forms.py`` emits a call of it for these
shapes, ``trace/blocking.py`` keeps them out of its loops): the same numbers everywhere.

>>> import numpy as np
>>> a, b = np.ones((4096, 32), np.float32), np.ones((32, 32), np.float32)
>>> bool((matmul_rows(a, b) == a @ b).all())
True
"""
import numpy as np

ROW_BLOCK = 64           # rows per GEMM
SMALL_GEMM = 10 ** 6     # OpenBLAS's small-matrix limit, in multiply-adds (m * n * k)
MIN_KN = 256             # k * n: less work a block and the calls cost more than they save
MAX_KN = 8192            # k * n: at most 64 * 8192 (< SMALL_GEMM) multiply-adds a block
MAX_SIDE = 128           # k and n each (measured up to 128)
MAX_WORK = 1 << 24       # m * k * n: larger GEMMs keep their BLAS threads
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


def blocked_shape(m, k, n, dtype):
    """Whether a 2-D ``(m, k) @ (k, n)`` GEMM of ``dtype`` runs in row blocks (the shapes and
    dtype alone; ``row_blocked`` adds the layout).

    >>> blocked_shape(2048, 64, 64, np.float32) == HAS_SMALL_PATH
    True
    >>> blocked_shape(128, 64, 64, np.float32)  # 0.5 M multiply-adds: small already
    False
    """
    return (HAS_SMALL_PATH and MIN_KN <= k * n <= MAX_KN and k <= MAX_SIDE and n <= MAX_SIDE
            and SMALL_GEMM < m * k * n <= MAX_WORK and np.dtype(dtype) in _DTYPES)


def row_blocked(a, b):
    """Whether ``a @ b`` (2-D NumPy arrays, ``b`` C-contiguous) runs as ``matmul_rows``:
    ``blocked_shape`` and a C-contiguous ``a`` of ``b``'s dtype (its blocks are then views)."""
    if a.shape[0] * a.shape[1] * b.shape[1] <= SMALL_GEMM or a.dtype != b.dtype:
        return False  # the common small case, decided cheaply
    return a.flags.c_contiguous and blocked_shape(a.shape[0], a.shape[1], b.shape[1], a.dtype)


def matmul_rows(a, b, out=None):
    """``a @ b`` as stacked GEMMs of ``ROW_BLOCK`` rows (a C-contiguous, 2-D), into ``out``
    (a C-contiguous array of the result's shape) where given."""
    m, k = a.shape
    n = b.shape[1]
    if out is None:
        out = np.empty((m, n), np.result_type(a.dtype, b.dtype))
    m0 = m - m % ROW_BLOCK
    if m0:
        np.matmul(a[:m0].reshape(m0 // ROW_BLOCK, ROW_BLOCK, k), b,
                  out=out[:m0].reshape(m0 // ROW_BLOCK, ROW_BLOCK, n))
    if m0 < m:
        np.matmul(a[m0:], b, out=out[m0:])
    return out
