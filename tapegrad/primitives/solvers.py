"""Linear-algebra primitives on square matrices: inverse, determinants, solve, the Cholesky
factor and triangular solve. Matrices live in the last two axes; leading axes are a batch.

The derivative rules are the textbook ones (Giles 2008, "Collected matrix derivative
results"; Murray 2016 for the Cholesky factor), written with the primitive layer's functions
(``api.py``) so they differentiate again.
"""
import numpy as np

from tapegrad.primitives.api import band_part, inv, matmul, reshape, solve, trace, triangular_solve
from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.primitives.linalg import _lift, _mT
from tapegrad.primitives.params import check_bool
from tapegrad.primitives.families import broadcast_shapes, xp


def _sym(x):
    return 0.5 * (x + _mT(x))


def _expand2(x):
    """Append two unit axes, so a per-matrix scalar scales its whole matrix."""
    return reshape(x, tuple(x.shape) + (1, 1))


def _tr(x):
    return trace(x)



def _unary_batch(name):
    """A primitive on the last two axes already maps over any leading axes (``name``: the
    block's own primitive, made with this rule)."""
    return lambda args, batched, **params: PRIMITIVES[name].bind_raw(args[0], **params)


def _lapack_dtype(name, *dtypes):
    """NumPy's LAPACK routines take float32/64 and complex64/128 (no ints, no float16)."""
    d = np.result_type(*dtypes)
    if any(x.kind not in "fc" or x.itemsize < 4 for x in dtypes):
        raise TypeError(f"{name}: expected float32, float64 or complex matrices, got "
                        f"{', '.join(x.name for x in dtypes)}")
    return d


def _square_abstract(name, keep, real=False):
    def rule(a, **params):
        if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
            raise ValueError(f"{name}: expected square matrices, got shape {tuple(a.shape)}")
        d = _lapack_dtype(name, a.dtype)
        d = np.empty((), d).real.dtype if real else d  # log|det| of a complex matrix is real
        return (tuple(a.shape) if keep else tuple(a.shape[:-2])), d
    return rule


def _solve_abstract(name):
    def rule(a, b, **params):
        if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] != b.shape[-2]:
            raise ValueError(f"{name}: matrix {tuple(a.shape)} and rhs {tuple(b.shape)} do not "
                             "fit")
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return batch + tuple(b.shape[-2:]), _lapack_dtype(name, a.dtype, b.dtype)
    return rule


def _matrix_batch(name):
    """Batching rule of a two-matrix primitive whose batch axes broadcast (solve...)."""
    def rule(args, batched, **params):
        return PRIMITIVES[name].bind_raw(*_lift(args, batched, (2, 2)), **params)
    return rule


# ---- inverse and determinants --------------------------------------------------------------
def _inv(a):
    """The inverse; an exactly singular matrix raises TensorFlow's error (eagerly and in a
    compiled program alike: NumPy's LinAlgError never reaches the user)."""
    try:
        return xp.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError("Input is not invertible.") from None


inv_p = Primitive(
    "inv", _inv, nin=1, abstract=_square_abstract("inv", True),
    vjp=(lambda g, ans, a: -matmul(_mT(ans), matmul(g, _mT(ans))),),
    jvp=(lambda a_dot, ans, a: -matmul(ans, matmul(a_dot, ans)),),
    batch=_unary_batch("inv"), emit="_inv({0})", sparsity="matrix")

# d det(A) = det(A) tr(A^-1 dA); the VJP needs A invertible, as in TensorFlow
det_p = Primitive(
    "det", xp.linalg.det, nin=1, abstract=_square_abstract("det", False),
    vjp=(lambda g, ans, a: _expand2(g * ans) * _mT(inv(a)),),
    jvp=(lambda a_dot, ans, a: ans * _tr(solve(a, a_dot)),),
    batch=_unary_batch("det"), emit="np.linalg.det({0})", sparsity="matrix")


def _logabsdet(a):
    return xp.linalg.slogdet(a)[1]


def _detsign(a):
    return xp.linalg.slogdet(a)[0]


logabsdet_p = Primitive(
    "logabsdet", _logabsdet, nin=1, abstract=_square_abstract("logabsdet", False, real=True),
    vjp=(lambda g, ans, a: _expand2(g) * _mT(inv(a)),),
    jvp=(lambda a_dot, ans, a: _tr(solve(a, a_dot)),),
    batch=_unary_batch("logabsdet"), emit="np.linalg.slogdet({0})[1]")

# the sign of the determinant is piecewise constant: no gradient
detsign_p = Primitive("detsign", _detsign, nin=1, abstract=_square_abstract("detsign", False),
                      nondiff=True, batch=_unary_batch("detsign"),
                      emit="np.linalg.slogdet({0})[0]")


# ---- solve ---------------------------------------------------------------------------------
def _solve(a, b):
    # Broadcast the batch axes explicitly: NumPy 1.x reads a rhs with one axis fewer than
    # the matrix as a stack of vectors, NumPy 2 as a matrix. Equal ranks mean the same to both.
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    try:
        return xp.linalg.solve(xp.broadcast_to(a, batch + a.shape[-2:]),
                               xp.broadcast_to(b, batch + b.shape[-2:]))
    except np.linalg.LinAlgError:  # (TensorFlow's error, also in compiled programs)
        raise InvalidArgumentError("Input matrix is not invertible.") from None


def _solve_vjp_b(g, ans, a, b):
    return solve(a, g, adjoint=True)


solve_p = Primitive(
    "solve", _solve, nin=2, abstract=_solve_abstract("solve"),
    vjp=(lambda g, ans, a, b: -matmul(_solve_vjp_b(g, ans, a, b), _mT(ans)),
         _solve_vjp_b),
    jvp=(lambda a_dot, ans, a, b: -solve(a, matmul(a_dot, ans)),
         lambda b_dot, ans, a, b: solve(a, b_dot)),
    batch=_matrix_batch("solve"), emit="_solve({0}, {1})", sparsity="matrix")


# ---- Cholesky factor -------------------------------------------------------------------------
def _phi(x):
    """The lower triangle with the diagonal halved (Murray 2016's Phi)."""
    n = x.shape[-1]
    c = np.tril(np.ones((n, n), dtype=x.dtype)) - 0.5 * np.eye(n, dtype=x.dtype)
    return x * Tensor._wrap(c)


def _cholesky_vjp(g, L, a):
    # A_bar = sym(L^-T Phi(L^T G) L^-1), with triangular solves in place of inverses
    x = triangular_solve(L, _phi(matmul(_mT(L), g)), lower=True, adjoint=True)
    s_t = triangular_solve(L, _mT(x), lower=True, adjoint=True)
    return _sym(s_t)


def _cholesky_jvp(a_dot, L, a):
    # dL = L Phi(L^-1 sym(dA) L^-T). Only sym(dA) matters, so that this JVP is the exact
    # transpose of the symmetrised VJP (both read A as symmetric, as TensorFlow does).
    y = triangular_solve(L, _sym(a_dot), lower=True)
    m = _mT(triangular_solve(L, _mT(y), lower=True))
    return matmul(L, _phi(m))


def _cholesky(a):
    """The lower Cholesky factor. As TensorFlow's kernel, a matrix that is not positive
    definite gives a factor of NaN (its lower triangle; zeros above), not an error."""
    try:
        return xp.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        pass
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.empty_like(flat)
    lower = np.tril(np.ones(a.shape[-2:], bool))
    for k, m in enumerate(flat):  # only the failing matrices of a batch are NaN
        try:
            out[k] = xp.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            out[k] = np.where(lower, np.nan, 0)
    return out.reshape(a.shape)


cholesky_p = Primitive("cholesky", _cholesky, nin=1,
                       abstract=_square_abstract("cholesky", True),
                       vjp=(_cholesky_vjp,), jvp=(_cholesky_jvp,),
                       batch=_unary_batch("cholesky"), emit="_cholesky({0})",
                       sparsity="matrix")


# ---- triangular solve --------------------------------------------------------------------------
def _triangular_solve(a, b, lower, adjoint):
    # Only the named triangle of ``a`` is read, as in TensorFlow. An LU solve of the masked
    # matrix keeps NumPy the only dependency and handles any batch of matrices; a zero (or
    # non-finite) diagonal entry, where LU would raise or pivot around it, gets TensorFlow's
    # substitution with its infinities and NaN instead.
    a = xp.tril(a) if lower else xp.triu(a)
    if adjoint:
        a = xp.swapaxes(a, -1, -2)  # (the op layer conjugates a complex matrix)
    d = xp.diagonal(a, axis1=-2, axis2=-1)
    if d.size and not (xp.isfinite(d) & (d != 0)).all():
        return _substitute(a, b, lower != adjoint)
    return _solve(a, b)


def _substitute(a, b, forward):
    """Solve the triangular system ``a x = b`` row by row (``forward``: ``a`` is lower)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    x = xp.array(xp.broadcast_to(b, batch + b.shape[-2:]), dtype=np.result_type(a, b))
    n = a.shape[-1]
    with np.errstate(all="ignore"):
        for i in (range(n) if forward else range(n - 1, -1, -1)):
            done = slice(0, i) if forward else slice(i + 1, n)
            r = x[..., i, :] - xp.einsum("...j,...jk->...k", a[..., i, done], x[..., done, :])
            x[..., i, :] = r / a[..., i, i, None]
    return x


def _band(x, lower):
    return band_part(x, -1, 0) if lower else band_part(x, 0, -1)


def _trsolve_vjp_b(g, ans, a, b, *, lower, adjoint):
    return triangular_solve(a, g, lower=lower, adjoint=not adjoint)


def _trsolve_vjp_a(g, ans, a, b, *, lower, adjoint):
    b_bar = _trsolve_vjp_b(g, ans, a, b, lower=lower, adjoint=adjoint)
    ct = -matmul(ans, _mT(b_bar)) if adjoint else -matmul(b_bar, _mT(ans))
    return _band(ct, lower)


def _trsolve_jvp_a(a_dot, ans, a, b, *, lower, adjoint):
    d = _band(a_dot, lower)
    d = _mT(d) if adjoint else d
    return -triangular_solve(a, matmul(d, ans), lower=lower, adjoint=adjoint)


def _trsolve_validate(a, b, *, lower, adjoint):
    check_bool("triangular_solve", "lower", lower)
    check_bool("triangular_solve", "adjoint", adjoint)


triangular_solve_p = Primitive(
    "triangular_solve", _triangular_solve, nin=2, abstract=_solve_abstract("triangular_solve"),
    validate=_trsolve_validate,
    vjp=(_trsolve_vjp_a, _trsolve_vjp_b),
    jvp=(_trsolve_jvp_a,
         lambda b_dot, ans, a, b, *, lower, adjoint:
         triangular_solve(a, b_dot, lower=lower, adjoint=adjoint)),
    batch=_matrix_batch("triangular_solve"),
    emit="_triangular_solve({0}, {1}, {lower}, {adjoint})", sparsity="matrix")



# The code generator imports these by name for the ``emit`` strings above.
EMIT_HELPERS = {"_solve": _solve, "_triangular_solve": _triangular_solve, "_inv": _inv,
                "_cholesky": _cholesky}
