"""Matrix decompositions and what is built on them: ``tf.linalg.eigh``, ``eigvalsh``, ``svd``,
``qr``, ``expm``, ``pinv`` and ``lstsq``.

``eigh``, ``svd`` and ``qr`` bind one primitive each, whose output packs the factors
(``primitives/decompositions.py``); this layer slices them apart, so one decomposition serves
every factor and the slices carry the gradient back. ``pinv`` and ``lstsq`` are composed of
primitives, as in TensorFlow, so they differentiate (and batch, and trace) through them.
"""
import collections

import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.ops import math_ops
from tapegrad.ops._convert import tensor as _tensor
from tapegrad.ops.array_ops import eye
from tapegrad.ops._convert import binary
from tapegrad.ops.linalg_ops import _matrices, cholesky, cholesky_solve, matmul, matrix_transpose
from tapegrad.primitives import decompositions

__all__ = ["eigh", "eigvalsh", "expm", "lstsq", "pinv", "qr", "svd"]

Qr = collections.namedtuple("Qr", ["q", "r"])


def eigh(tensor, name=None):
    """``(e, v)``: the eigenvalues (ascending) and eigenvectors (columns) of (a batch of)
    symmetric or Hermitian matrices, of which only the lower triangle is read.

    The eigenvector gradient divides by eigenvalue gaps with TensorFlow's safe reciprocal,
    so it is huge for nearly repeated eigenvalues (and drops the pair's term where they are
    exactly equal), as in TensorFlow.

    >>> import tapegrad as tf
    >>> e, v = tf.linalg.eigh([[2.0, 1.0], [1.0, 2.0]])
    >>> e.numpy().round(4).tolist()
    [1.0, 3.0]
    """
    x = _matrices(tensor, "eigh")
    p = bind(decompositions.eigh_p, x)
    e = math_ops.real(p[..., 0, :])
    # TensorFlow's eigenvalues of a Hermitian matrix have its complex dtype (zero imaginary
    # parts)
    return (math_ops.cast(e, x.dtype) if x.dtype.kind == "c" else e), p[..., 1:, :]


def eigvalsh(tensor, name=None):
    """The eigenvalues (ascending) of (a batch of) symmetric or Hermitian matrices (lower
    triangle read). The gradient needs the eigenvectors: one ``eigh`` computes both.

    >>> import tapegrad as tf
    >>> tf.linalg.eigvalsh([[2.0, 0.0], [0.0, -1.0]]).numpy().tolist()
    [-1.0, 2.0]
    """
    return eigh(tensor)[0]


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """The singular values ``s`` (descending) of (a batch of) matrices, and with
    ``compute_uv`` the tuple ``(s, u, v)`` with ``tensor = u @ diag(s) @ adjoint(v)``.

    ``full_matrices`` gives square ``u`` and ``v``; their derivative exists where the extra
    singular vectors are unique up to sign, as in TensorFlow: for square inputs and where
    the two sizes differ by one (the one extra vector is differentiated too, where
    TensorFlow drops its gradient). ``s`` alone always differentiates. Gradients through ``u`` and ``v`` divide by gaps between singular values
    with TensorFlow's safe reciprocal, as ``eigh``.

    >>> import tapegrad as tf
    >>> tf.linalg.svd([[3.0, 0.0], [0.0, -4.0]], compute_uv=False).numpy().tolist()
    [4.0, 3.0]
    """
    x = _matrices(tensor, "svd", square=False)
    m, n = x.shape[-2:]
    full = bool(full_matrices) and bool(compute_uv)  # TensorFlow ignores it for s alone
    packed = bind(decompositions.svd_p, x, full_matrices=full)
    s, u, v = decompositions.svd_parts(packed, m, n, full)
    s = math_ops.real(s)
    return (s, u, v) if compute_uv else s


def qr(input, full_matrices=False, name=None):
    """``Qr(q, r)`` with ``input = q @ r``: ``q`` has orthonormal columns, ``r`` is upper
    triangular (Householder signs, as NumPy's and TensorFlow's LAPACK-style kernels).

    ``full_matrices`` gives a square ``q`` and an ``r`` as tall as ``input``. Derivatives
    exist where TensorFlow has them: not for ``full_matrices=True`` with more rows than
    columns.

    >>> import tapegrad as tf
    >>> q, r = tf.linalg.qr([[3.0, 1.0], [4.0, 2.0]])
    >>> bool(abs(tf.matmul(q, r).numpy() - [[3.0, 1.0], [4.0, 2.0]]).max() < 1e-6)
    True
    """
    x = _matrices(input, "qr", square=False)
    packed = bind(decompositions.qr_p, x, full_matrices=bool(full_matrices))
    q, r = decompositions.qr_parts(packed, x.shape[-2])
    return Qr(q, r)


def expm(input, name=None):
    """The matrix exponential of (a batch of) square matrices: SciPy's ``expm`` when SciPy
    is installed, else scaling and squaring with a [13/13] Pade approximant in NumPy.
    Derivatives are exact Frechet derivatives (the exponential of a block matrix).

    >>> import tapegrad as tf
    >>> round(float(tf.linalg.expm([[0.0, 0.0], [0.0, 1.0]])[1, 1]), 4)
    2.7183
    """
    return bind(decompositions.expm_p, _matrices(input, "expm"))


def pinv(a, rcond=None, validate_args=False, name=None):
    """The Moore-Penrose pseudo-inverse of (a batch of) matrices, from the SVD: singular
    values up to ``rcond * max(s)`` count as zero (default ``rcond``: 10 * max(m, n) * eps
    of the dtype, as in TensorFlow).

    >>> import tapegrad as tf
    >>> tf.linalg.pinv([[2.0, 0.0], [0.0, 0.0]]).numpy().tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    x = _matrices(a, "pinv", square=False)
    real = np.empty((), x.dtype).real.dtype
    if rcond is None:
        rcond = 10.0 * max(x.shape[-2:]) * np.finfo(real).eps
    s, u, v = svd(x)
    cutoff = _tensor(rcond, real) * math_ops.reduce_max(s, axis=-1, keepdims=True)
    # small singular values become inf: 1/s is 0 there, with a zero (not NaN) gradient
    s = math_ops.where(s > cutoff, s, _tensor(np.inf, real))
    return matmul(v / math_ops.cast(s[..., None, :], x.dtype), _adjoint(u))


def _adjoint(x):
    return matrix_transpose(math_ops.conj(x))  # linalg_ops.adjoint does not conjugate


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """``X`` minimising ``||matrix @ X - rhs||^2 + l2_regularizer * ||X||^2`` for (a batch
    of) ``M x N`` matrices and ``M x K`` right-hand sides.

    ``fast`` solves the regularized normal equations by Cholesky, as TensorFlow
    (``A^T A + l I`` for ``M >= N``, else ``A^T (A A^T + l I)^-1``): stable for well
    conditioned matrices. ``fast=False`` uses the pseudo-inverse (the minimum-norm solution,
    also for rank-deficient matrices) and ignores ``l2_regularizer``, as TensorFlow; unlike
    TensorFlow's kernel, it differentiates.

    >>> import tapegrad as tf
    >>> tf.linalg.lstsq([[1.0], [1.0]], [[1.0], [3.0]]).numpy().tolist()
    [[2.0]]
    """
    a, b = binary(matrix, rhs, "MatMul")
    a = _matrices(a, "lstsq", square=False)
    if b.ndim < 2 or b.shape[-2] != a.shape[-2]:
        raise ValueError(f"lstsq: matrix of shape {tuple(a.shape)} and rhs of shape "
                         f"{tuple(b.shape)} are incompatible: rhs must have shape "
                         f"[..., {a.shape[-2]}, K].")
    if not fast:
        m, n = a.shape[-2:]
        eps = np.finfo(np.empty((), a.dtype).real.dtype).eps
        return matmul(pinv(a, rcond=max(m, n) * eps), b)
    if a.dtype == np.complex128 and not (isinstance(l2_regularizer, (int, float))
                                         and l2_regularizer == 0):
        raise NotImplementedError("lstsq is disabled for complex128 with l2_regularizer != 0, "
                                  "as in TensorFlow (poor accuracy)")
    m, n = a.shape[-2:]
    gram = matmul(_adjoint(a), a) if m >= n else matmul(a, _adjoint(a))
    if isinstance(l2_regularizer, Tensor) or l2_regularizer != 0:  # as TensorFlow: a Python
        # number in the matrix's dtype (0.3 stays 0.3 in float64), no term for a plain 0
        l2 = math_ops.cast(l2_regularizer, a.dtype) if isinstance(l2_regularizer, Tensor) \
            else _tensor(l2_regularizer, a.dtype)
        gram = gram + l2 * eye(min(m, n), dtype=a.dtype)
    chol = cholesky(gram)
    if m >= n:
        return cholesky_solve(chol, matmul(_adjoint(a), b))
    return matmul(_adjoint(a), cholesky_solve(chol, b))

