"""Matrix decompositions: ``eigh``, ``svd``, ``qr``, and the matrix exponential ``expm``.

A primitive has one output, so a decomposition returns its factors packed into one array
(one LAPACK call gives factors that belong together, in eager and generated code alike);
the op layer slices them apart, and each rule slices its cotangent the same way:

- ``eigh``: ``(..., n + 1, n)``; row 0 holds the eigenvalues (ascending), rows 1: the
  eigenvectors as columns.
- ``svd``: ``(..., m + n + 1, w)``; rows ``:m`` hold U, rows ``m:m + n`` V, row ``m + n``
  the singular values (descending), each zero-padded to ``w = max(ku, kv)`` columns.
- ``qr``: ``(..., m + n, kq)``; rows ``:m`` hold Q, rows ``m:`` the transpose of R.

The derivative rules follow TensorFlow's (Giles 2008; Townsend 2016 for the thin SVD;
Walter & Lehmann / Roberts & Roberts 2020 for QR), with its safe reciprocal
``x / (x**2 + 1e-20)`` of eigenvalue and singular-value gaps: an exactly repeated
eigenvalue contributes 0, a nearly repeated one a huge number, as in TensorFlow. The rules
are written with the primitive layer's functions, so they differentiate again. Complex
inputs compute; their derivatives raise ``TypeError`` (TensorFlow has complex rules).
"""
import numpy as np

from tapegrad.core.dispatch import Primitive
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.primitives.api import (band_part, concat, diag, diag_part, expand_dims, matmul,
                                     matrix_transpose, triangular_solve, where,
                                     zeros_like)
from tapegrad.primitives.families import xp
from tapegrad.primitives.solvers import _lapack_dtype, _square_abstract, _unary_batch
from tapegrad.primitives.params import check_bool

_mT = matrix_transpose


def _safe_reciprocal(x):
    """TensorFlow's ``x / (x*x + 1e-20)``: 0 at 0, ``1/x`` elsewhere (to 1e-20/x**2)."""
    return x / (x * x + 1e-20)


def _gaps(w):
    """``F[i, j] = 1 / (w[j] - w[i])``, 0 where they are equal. The diagonal is selected
    away (TensorFlow's set_diag): the safe reciprocal's derivative at 0 is 1e20, which would
    swamp second derivatives even though the diagonal gap is identically 0."""
    n = w.shape[-1]
    f = _safe_reciprocal(expand_dims(w, -2) - expand_dims(w, -1))
    return where(Tensor._wrap(np.eye(n, dtype=bool)), Tensor._wrap(np.zeros((), f.dtype)), f)


def _diag(v):
    n = v.shape[-1]
    return diag(v, n, n)


def _rows(parts):
    """Join matrices along their rows (axis -2, given non-negative)."""
    return concat(parts, parts[0].ndim - 2)


def _columns(parts):
    """Join matrices along their columns (axis -1, given non-negative)."""
    return concat(parts, parts[0].ndim - 1)


def _matrix_abstract(name, a):
    if a.ndim < 2:
        raise ValueError(f"{name}: expected matrices of rank >= 2, got shape {tuple(a.shape)}")
    return _lapack_dtype(name, a.dtype)


# ---- eigh: symmetric (Hermitian) eigendecomposition, lower triangle read --------------------
def _eigh(a):
    if not xp.isfinite(xp.tril(a)).all():  # NumPy would give partly NaN factors
        raise InvalidArgumentError("eigh: Self-adjoint eigen decomposition was not "
                                   "successful: the input holds NaN or inf (as TensorFlow)")
    w, v = xp.linalg.eigh(a)  # UPLO='L', as TensorFlow
    return xp.concatenate([w[..., None, :].astype(v.dtype), v], axis=-2)


def _eigh_abstract(a):
    shape, dtype = _square_abstract("eigh", True)(a)
    return shape[:-2] + (shape[-1] + 1, shape[-1]), dtype


def _halved_diagonal(x):
    n = x.shape[-1]
    return x * Tensor._wrap(1.0 - 0.5 * np.eye(n, dtype=x.dtype))


def _eigh_vjp(g, ans, a):
    w, v = ans[..., 0, :], ans[..., 1:, :]
    inner = _diag(g[..., 0, :]) + _gaps(w) * matmul(_mT(v), g[..., 1:, :])
    x = matmul(v, matmul(inner, _mT(v)))
    # the forward pass reads the lower triangle: its cotangent is tril(X + X^T), diagonal X's
    return _halved_diagonal(band_part(x + _mT(x), -1, 0))


def _eigh_jvp(a_dot, ans, a):
    w, v = ans[..., 0, :], ans[..., 1:, :]
    low = band_part(a_dot, -1, 0)  # the symmetric matrix the forward pass sees
    s = low + _mT(low) - _diag(diag_part(a_dot))
    vsv = matmul(_mT(v), matmul(s, v))
    return _rows([expand_dims(diag_part(vsv), -2), matmul(v, _gaps(w) * vsv)])


eigh_p = Primitive("eigh", _eigh, nin=1, abstract=_eigh_abstract, vjp=(_eigh_vjp,),
                   jvp=(_eigh_jvp,), batch=_unary_batch("eigh"), emit="_eigh({0})",
                   sparsity="matrix", fresh=True)


# ---- svd --------------------------------------------------------------------------------
def _svd_sizes(m, n, full_matrices):
    k = min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    return k, ku, kv, max(ku, kv)


def _svd(a, full_matrices):
    m, n = a.shape[-2:]
    k, ku, kv, w = _svd_sizes(m, n, full_matrices)
    out = xp.zeros(a.shape[:-2] + (m + n + 1, w), a.dtype)
    if out.size:
        # LAPACK refuses NaN and inf; TensorFlow gives NaN factors for those matrices
        bad = ~xp.isfinite(a).all(axis=(-2, -1))
        if bad.any():
            a = xp.where(bad[..., None, None], xp.zeros((), a.dtype), a)
        u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
        out[..., :m, :ku] = u
        out[..., m:m + n, :kv] = xp.conj(xp.swapaxes(vh, -1, -2))
        out[..., m + n, :k] = s
        if bad.any():
            out[bad] = np.nan
    return out


def _svd_abstract(a, *, full_matrices):
    dtype = _matrix_abstract("svd", a)
    m, n = a.shape[-2:]
    return tuple(a.shape[:-2]) + (m + n + 1, _svd_sizes(m, n, full_matrices)[3]), dtype


def _svd_validate(a, *, full_matrices):
    check_bool("svd", "full_matrices", full_matrices)


def svd_parts(p, m, n, full_matrices):
    """``(s, u, v)`` of a packed ``svd`` output of an ``m x n`` input."""
    k, ku, kv, _ = _svd_sizes(m, n, full_matrices)
    return p[..., m + n, :k], p[..., :m, :ku], p[..., m:m + n, :kv]


def _svd_differentiable(m, n, full_matrices):
    if full_matrices and abs(m - n) > 1:
        raise NotImplementedError(
            f"svd: no derivative with full_matrices=True for a {m}x{n} input: with "
            "abs(m - n) > 1 the extra singular vectors are not unique (as in TensorFlow); "
            "use full_matrices=False")


def _split_extra(x, k):
    """The first ``k`` columns of ``x`` and the rest: with ``full_matrices`` and
    ``abs(m - n) == 1``, the one extra singular vector, orthogonal to the others."""
    return x[..., :, :k], x[..., :, k:]


def _svd_vjp(g, ans, a, *, full_matrices):
    m, n = a.shape[-2:]
    _svd_differentiable(m, n, full_matrices)
    s, u, v = svd_parts(ans, m, n, full_matrices)
    gs, gu, gv = svd_parts(g, m, n, full_matrices)
    k = min(m, n)
    # The extra vector of a full U (m = n + 1) is the unit vector orthogonal to A's columns,
    # unique up to its sign: du = -U1 S^-1 V^T dA^T u, so A's cotangent gets
    # -u (V S^-1 U1^T g)^T; and V's (n = m + 1) -(U S^-1 V1^T g) v^T. TensorFlow drops it.
    if full_matrices and m > n:
        (u, u_x), (gu, g_x) = _split_extra(u, k), _split_extra(gu, k)
    if full_matrices and n > m:
        (v, v_x), (gv, g_x) = _split_extra(v, k), _split_extra(gv, k)
    f = _gaps(s * s)
    j = f * matmul(_mT(u), gu)
    k = f * matmul(_mT(v), gv)
    inner = _diag(gs) + (j + _mT(j)) * expand_dims(s, -2) + expand_dims(s, -1) * (k + _mT(k))
    out = matmul(u, matmul(inner, _mT(v)))
    s_inv = expand_dims(_safe_reciprocal(s), -2)
    if m > n:  # (I - U U^T) gU S^-1 V^T
        out = out + matmul((gu - matmul(u, matmul(_mT(u), gu))) * s_inv, _mT(v))
    if n > m:  # U S^-1 gV^T (I - V V^T)
        out = out + matmul(u * s_inv, _mT(gv - matmul(v, matmul(_mT(v), gv))))
    if full_matrices and m > n:
        out = out - matmul(u_x, _mT(matmul(v * s_inv, matmul(_mT(u), g_x))))
    if full_matrices and n > m:
        out = out - matmul(matmul(u * s_inv, matmul(_mT(v), g_x)), _mT(v_x))
    return out


def _svd_jvp(a_dot, ans, a, *, full_matrices):
    m, n = a.shape[-2:]
    _svd_differentiable(m, n, full_matrices)
    s, u, v = svd_parts(ans, m, n, full_matrices)
    k = min(m, n)
    if full_matrices and m > n:
        u, u_x = _split_extra(u, k)
    if full_matrices and n > m:
        v, v_x = _split_extra(v, k)
    f = _gaps(s * s)
    a_dot_v = matmul(a_dot, v)
    dp = matmul(_mT(u), a_dot_v)
    dps = dp * expand_dims(s, -2)
    sdp = expand_dims(s, -1) * dp
    du = matmul(u, f * (dps + _mT(dps)))
    dv = matmul(v, f * (sdp + _mT(sdp)))
    s_inv = expand_dims(_safe_reciprocal(s), -2)
    if m > n:
        du = du + (a_dot_v - matmul(u, dp)) * s_inv
    if n > m:
        a_dot_t_u = matmul(_mT(a_dot), u)
        dv = dv + (a_dot_t_u - matmul(v, _mT(dp))) * s_inv
    ds = expand_dims(diag_part(dp), -2)
    if not full_matrices or m == n:
        return _rows([du, dv, ds])
    # the extra vector's tangent (see _svd_vjp), then every part zero-padded to m + n ... w
    if m > n:
        du = _columns([du, -matmul(u * s_inv, matmul(_mT(v), matmul(_mT(a_dot), u_x)))])
    else:
        dv = _columns([dv, -matmul(v * s_inv, matmul(_mT(u), matmul(a_dot, v_x)))])
    w = max(m, n)
    return _rows([_pad_columns(x, w) for x in (du, dv, ds)])


def _pad_columns(x, w):
    """``x`` with zero columns up to ``w`` (one at most: ``abs(m - n) == 1``)."""
    return x if x.shape[-1] == w else _columns([x, zeros_like(x[..., :, :1])])


svd_p = Primitive("svd", _svd, nin=1, abstract=_svd_abstract, validate=_svd_validate,
                  vjp=(_svd_vjp,), jvp=(_svd_jvp,), batch=_unary_batch("svd"),
                  emit="_svd({0}, {full_matrices})", sparsity="matrix", fresh=True)


# ---- qr -----------------------------------------------------------------------------------
def _qr_cols(m, n, full_matrices):
    return m if full_matrices else min(m, n)


def _qr(a, full_matrices):
    m, n = a.shape[-2:]
    kq = _qr_cols(m, n, full_matrices)
    if a.size == 0:
        return xp.zeros(a.shape[:-2] + (m + n, kq), a.dtype)
    q, r = xp.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return xp.concatenate([q, xp.swapaxes(r, -1, -2)], axis=-2)


def _qr_abstract(a, *, full_matrices):
    dtype = _matrix_abstract("qr", a)
    m, n = a.shape[-2:]
    return tuple(a.shape[:-2]) + (m + n, _qr_cols(m, n, full_matrices)), dtype


def _qr_validate(a, *, full_matrices):
    check_bool("qr", "full_matrices", full_matrices)


def qr_parts(p, m):
    """``(q, r)`` of a packed ``qr`` output of an input with ``m`` rows."""
    return p[..., :m, :], _mT(p[..., m:, :])


def _qr_differentiable(m, n, full_matrices):
    if full_matrices and m > n:
        raise NotImplementedError(
            f"qr: no derivative with full_matrices=True for a {m}x{n} input with more rows "
            "than columns (as in TensorFlow); use full_matrices=False")


def _times_r_inv(x, r):
    """``x R^-1`` for upper triangular ``r``."""
    return _mT(triangular_solve(r, _mT(x), lower=False, adjoint=True))


def _times_r_inv_t(x, r):
    """``x R^-T`` for upper triangular ``r``."""
    return _mT(triangular_solve(r, _mT(x), lower=False, adjoint=False))


def _qr_vjp_tall(q, r, gq, gr):
    qgq = matmul(_mT(q), gq)
    rgr = matmul(r, _mT(gr))
    low = band_part(qgq - _mT(qgq) + rgr - _mT(rgr), -1, 0)
    return matmul(q, gr + _times_r_inv_t(low, r)) + _times_r_inv_t(gq - matmul(q, qgq), r)


def _qr_vjp(g, ans, a, *, full_matrices):
    m, n = a.shape[-2:]
    _qr_differentiable(m, n, full_matrices)
    (q, r), (gq, gr) = qr_parts(ans, m), qr_parts(g, m)
    if m >= n:
        return _qr_vjp_tall(q, r, gq, gr)
    # wide: A = [X | Y] with X square; R = [U | Q^T Y]
    y, gv = a[..., :, m:], gr[..., :, m:]
    dx = _qr_vjp_tall(q, r[..., :, :m], gq + matmul(y, _mT(gv)), gr[..., :, :m])
    return concat([dx, matmul(q, gv)], dx.ndim - 1)


def _qr_jvp_tall(q, r, a_dot):
    x = _times_r_inv(a_dot, r)
    c = matmul(_mT(q), x)
    low = band_part(c, -1, 0) - _diag(diag_part(c))
    omega = low - _mT(low)  # Q^T dQ, antisymmetric
    return matmul(q, omega - c) + x, matmul(c - omega, r)


def _qr_jvp(a_dot, ans, a, *, full_matrices):
    m, n = a.shape[-2:]
    _qr_differentiable(m, n, full_matrices)
    q, r = qr_parts(ans, m)
    if m >= n:
        dq, dr = _qr_jvp_tall(q, r, a_dot)
    else:
        dq, du = _qr_jvp_tall(q, r[..., :, :m], a_dot[..., :, :m])
        dv = matmul(_mT(dq), a[..., :, m:]) + matmul(_mT(q), a_dot[..., :, m:])
        dr = concat([du, dv], du.ndim - 1)
    return _rows([dq, _mT(dr)])


qr_p = Primitive("qr", _qr, nin=1, abstract=_qr_abstract, validate=_qr_validate,
                 vjp=(_qr_vjp,), jvp=(_qr_jvp,), batch=_unary_batch("qr"),
                 emit="_qr({0}, {full_matrices})", sparsity="matrix", fresh=True)


# ---- expm: the matrix exponential ---------------------------------------------------------------
# Pade [13/13] coefficients and the scaling threshold of Higham (2005), "The scaling and
# squaring method for the matrix exponential revisited".
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _scipy_expm():
    """SciPy's ``expm`` when SciPy is installed (an optional extra), else None."""
    try:
        from scipy.linalg import expm
    except ImportError:
        return None
    return expm


def expm_pade(a):
    """``exp(a)`` of one square float64/complex128 matrix by scaling and squaring with a
    [13/13] Pade approximant (NumPy only)."""
    n = a.shape[-1]
    norm = np.abs(a).sum(axis=0).max() if n else 0.0
    s = int(max(0, np.ceil(np.log2(norm / _THETA13)))) if np.isfinite(norm) and norm else 0
    a = a / 2.0 ** s
    b, eye = _PADE13, np.eye(n, dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = np.linalg.solve(v - u, v + u)
    for _ in range(s):
        r = r @ r
    return r


def _expm(a):
    f = _scipy_expm()
    if f is not None and a.size:
        return np.asarray(f(a), dtype=a.dtype)
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    out = np.empty(a.shape, a.dtype)
    for i in np.ndindex(a.shape[:-2]):
        out[i] = expm_pade(a[i].astype(wide))
    return out


def _block(a, b):
    """``[[a, b], [0, a]]``: its exponential holds the Frechet derivative of ``exp`` at ``a``
    in direction ``b`` in the top right block (Najfeld & Havel 1995)."""
    top = concat([a, b], a.ndim - 1)
    bottom = concat([zeros_like(a), a], a.ndim - 1)
    return _rows([top, bottom])


def _frechet(a, e):
    n = a.shape[-1]
    return expm_p.bind_raw(_block(a, e))[..., :n, n:]


expm_p = Primitive("expm", _expm, nin=1, abstract=_square_abstract("expm", True),
                   vjp=(lambda g, ans, a: _frechet(_mT(a), g),),
                   jvp=(lambda a_dot, ans, a: _frechet(a, a_dot),),
                   batch=_unary_batch("expm"), emit="_expm({0})", sparsity="matrix",
                   fresh=True)

# The code generator imports these by name for the ``emit`` strings above.
EMIT_HELPERS = {"_eigh": _eigh, "_svd": _svd, "_qr": _qr, "_expm": _expm}
