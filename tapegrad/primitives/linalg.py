"""Linear-algebra primitives. Matrices live in the last two axes; leading axes are a batch.

``matmul`` only sees operands of rank >= 2: the op layer lifts vectors to matrices, so the
rules stay short. Batch axes broadcast, and the engine sums cotangents back to each input.
``einsum`` sees explicit subscripts without ellipsis and with one size per letter: the op
layer expands '...' and broadcasts, so the rules only deal with letters.

The derivative rules are the textbook ones (Giles 2008, "Collected matrix derivative
results"; Murray 2016 for the Cholesky factor), written with the primitive layer's functions (``api.py``) so they
differentiate again.
"""
import string

import numpy as np

from tapegrad.primitives.api import (band_part, inv, matmul, matrix_transpose, reshape, solve,
    trace, triangular_solve)
from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.primitives import identities
from tapegrad.primitives.shape import reshape_p
from tapegrad.core.tensor import Tensor
from tapegrad.primitives.params import check_bool, fail
from tapegrad.primitives.families import broadcast_shapes, xp
from tapegrad.util.small_gemm import (SMALL_GEMM, inner_blocked, matmul_inner,
    matmul_rows, row_blocked)


def _mT(x):
    """Swap the last two axes."""
    return matrix_transpose(x)


def _sym(x):
    return 0.5 * (x + _mT(x))


def _expand2(x):
    """Append two unit axes, so a per-matrix scalar scales its whole matrix."""
    return reshape(x, tuple(x.shape) + (1, 1))


def _tr(x):
    return trace(x)


def _lift(args, batched, core):
    """Line up the vmapped axis 0 of batched operands whose own batch axes broadcast.

    ``core[i]`` is the number of trailing (matrix) axes of ``args[i]``. Batched operands get
    unit axes after axis 0 until they have as many batch axes as the widest operand, so that
    NumPy's right-aligned broadcasting pairs axis 0 with nothing but axis 0.
    """
    nb = max(a.ndim - int(b) - c for a, b, c in zip(args, batched, core))
    out = []
    for a, b, c in zip(args, batched, core):
        own = a.ndim - 1 - c
        if b and own < nb:
            a = reshape(a, (a.shape[0],) + (1,) * (nb - own) + tuple(a.shape[1:]))
        out.append(a)
    return out


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


# ---- matmul -----------------------------------------------------------------------------
def _matmul_abstract(a, b):
    if a.ndim < 1 or b.ndim < 2 or a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: inner dimensions differ: {tuple(a.shape)} @ {tuple(b.shape)}")
    if a.ndim == 1:  # a vector times a matrix (k,) @ (k, n), or a stack of them (batching)
        return tuple(b.shape[:-2]) + (b.shape[-1],), np.result_type(a.dtype, b.dtype)
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return batch + (a.shape[-2], b.shape[-1]), np.result_type(a.dtype, b.dtype)


def _matmul_vjp_b(g, ans, a, b):
    if a.ndim == 1:  # the outer product a g^T
        return reshape(a, (a.shape[0], 1)) * reshape(g, (1, g.shape[0]))
    return matmul(_mT(a), g)


# A vector operand stays a vector (no reshape to a row and back): one primitive instead of
# three in the forward pass and in every derivative of it, the common case of an MLP on one
# input.
def _matmul(a, b):
    if a.ndim <= 2 and b.ndim <= 2:
        return matmul_2d(a, b)
    return xp.matmul(a, b)


def matmul_2d(a, b, out=None):
    """A matmul of vectors and matrices, by the one rule that eager execution and generated
    code share (``trace/emit_forms.py`` emits a call of it wherever it cannot tell the
    operands' layouts when it writes the code): OpenBLAS's rounding depends on the operands'
    memory layout, so the form is chosen from the layout at run time, not from how a value
    was made.

    - inner size 1 (``outer_product``): a broadcast multiply, whatever the layouts;
    - an operand neither C- nor F-contiguous (a broadcast, a strided slice) is copied into C
      order first: NumPy would otherwise run its own loop, or BLAS on another layout, and a
      view and the same values in a new array must give the same bits;
    - a few rows times a large F-ordered matrix (``g @ W.T``): ``(W @ g.T).T``, in C order;
    - a small F-ordered right matrix: copied into C order first;
    - a tall C-ordered matrix times a small one: GEMMs of 64 rows each, where NumPy's BLAS
      has a faster path for small problems (``util/small_gemm.py``, its cost model);
    - a wide matrix times a tall one (``x.T @ g``, a weight gradient): GEMMs over blocks of
      the inner axis, summed in order, on that same path (``util/small_gemm.py``).

    ``out``: a C-contiguous buffer of the result's shape and dtype to write into (the same
    numbers: the same BLAS call or multiply). Example::

        matmul_2d(np.ones((2, 3)), np.broadcast_to(np.ones((1, 4)), (3, 4)))  # (2, 4) of 3.0
    """
    if b.flags.c_contiguous and a.flags.forc and a.shape[-1] != 1:  # x @ W: nothing to do
        if a.size * b.shape[1] > SMALL_GEMM and a.ndim == 2:
            if row_blocked(a, b):
                return matmul_rows(a, b, out)
            if inner_blocked(a, b):
                return matmul_inner(a, b, out)
        return a @ b if out is None else xp.matmul(a, b, out=out)
    if a.ndim == 2 and b.ndim == 2 and outer_product(a, b):
        return xp.multiply(a, b, out=out)  # one product an element: no layout matters
    if not a.flags.forc:
        a = xp.ascontiguousarray(a)
    fb = b.flags
    if not fb.c_contiguous:
        if not fb.f_contiguous:
            b = xp.ascontiguousarray(b)
        elif small_matrix(b):  # tested first: a small matrix is never large, and it is cheap
            b = xp.ascontiguousarray(b)
        elif a.ndim == 2 and b.ndim == 2 and few_rows_large_matrix(a, b):
            if out is None:
                return xp.ascontiguousarray((b.T @ a.T).T)
            out[...] = (b.T @ a.T).T
            return out
    if a.size * b.shape[1] > SMALL_GEMM and a.ndim == 2 and b.flags.c_contiguous:
        if row_blocked(a, b):
            return matmul_rows(a, b, out)
        if inner_blocked(a, b):
            return matmul_inner(a, b, out)
    return a @ b if out is None else xp.matmul(a, b, out=out)


# Shapes where a 2-D matmul has a faster NumPy form; the eager implementation above and the
# generated code (trace/emit_forms.py) make the same choices from these two tests.
def few_rows_large_matrix(a, b):
    """A few rows times a large matrix. When that matrix is a transposed view (the backward
    pass of a dense layer: g @ W.T), OpenBLAS computes (W @ g.T).T up to twice as fast: W is
    read contiguously. Small W gain nothing. The transposed result is copied into C order
    at once: what follows it (the activation's derivative times it, the bias gradient's row
    sums) runs on C-ordered operands, and on an F-ordered one it took 4-15x as long as the
    copy (float32, widths 256-1,024, one thread)."""
    return 1 < a.shape[0] <= 128 and min(b.shape) >= 128


def small_matrix(b):
    """A right operand small enough to copy into C order first (at most 4,096 elements).
    OpenBLAS multiplies by a transposed view (the backward pass of a dense layer: g @ W.T)
    more slowly than by the same matrix contiguous: 0.62-0.92x the time with the copy for
    8x8 to 64x64 weights, one thread (1.0x at 32x32 with 2,048 rows); larger W gain
    nothing (16,384 elements: 1.1-1.3x)."""
    return b.size <= 4096


def outer_product(a, b):
    """Inner size 1 (the backward pass of a layer with one output): a broadcast multiply
    does one product per element and no sum, several times faster than BLAS."""
    return a.shape[1] == 1 and a.dtype == b.dtype


def _matmul_batch(args, batched):
    a, b = args
    ba, bb = batched
    if a.ndim - ba == 1:  # a per-example vector (k,) with a (k, n) matrix
        if not bb:
            return matmul_p.bind_raw(a, b)       # (B, k) @ (k, n) or (k,) @ (B, k, n)
        if not ba:
            return matmul_p.bind_raw(a, b)
        out = matmul_p.bind_raw(reshape_p.bind_raw(a, shape=(a.shape[0], 1, a.shape[1])), b)
        return reshape_p.bind_raw(out, shape=(a.shape[0], b.shape[-1]))
    if ba and not bb and b.ndim == 2 and a.ndim == 3:
        # (B, m, k) @ (k, n): one large GEMM on (B*m, k)
        B, m, k = a.shape
        out = matmul_p.bind_raw(reshape_p.bind_raw(a, shape=(B * m, k)), b)
        return reshape_p.bind_raw(out, shape=(B, m, b.shape[-1]))
    return matmul_p.bind_raw(*_lift(args, batched, (2, 2)))


matmul_p = Primitive(
    "matmul", _matmul, nin=2, fresh=True, abstract=_matmul_abstract,
    vjp=(lambda g, ans, a, b: matmul(g, _mT(b)), _matmul_vjp_b),
    jvp=(lambda a_dot, ans, a, b: matmul(a_dot, b),
         lambda b_dot, ans, a, b: matmul(a, b_dot)),
    batch=_matmul_batch, emit="{0} @ {1}", sparsity="matmul", identities=identities.matmul,
    # multiply-adds of one call: the BLAS-thread cost model (util/blas.py) reads it
    blas_work=lambda ins, outs, params: outs[0].size * (ins[0].shape[-1] if ins[0].shape
                                                        else 1), complex="holomorphic")


# ---- einsum: variadic; subscripts are explicit, e.g. 'ij,jk->ik' ------------------------
def _einsum(*xs, subscripts):
    # NumPy's path optimiser hands contractions to BLAS (4x faster at 64 x 64) and orders three
    # or more operands well, but its search costs ~10us: skip it for one operand or tiny ones.
    big = len(xs) > 2 or (len(xs) == 2 and max(np.size(x) for x in xs) >= 1024)
    return xp.einsum(subscripts, *xs, optimize=big)


def _split(subscripts):
    lhs, out = subscripts.split("->")
    return lhs.split(","), out


def _letter_sizes(ins, shapes):
    sizes = {}
    for s, shape in zip(ins, shapes):
        for c, n in zip(s, shape):
            sizes[c] = n
    return sizes


def _einsum_abstract(*avals, subscripts):
    ins, out = _split(subscripts)
    sizes = _letter_sizes(ins, [a.shape for a in avals])
    return tuple(sizes[c] for c in out), np.result_type(*[a.dtype for a in avals])


def _einsum_validate(*avals, subscripts):
    """Explicit subscripts: one letter term per operand, each letter one size everywhere."""
    def bad(msg):
        fail("einsum", "subscripts", f"{subscripts!r:.80} {msg}")
    if not isinstance(subscripts, str) or subscripts.count("->") != 1:
        bad("must be a string 'ab,bc->ac' with one '->'")
    ins, out = _split(subscripts)
    if len(ins) != len(avals):
        bad(f"name {len(ins)} operands, the equation has {len(avals)}")
    sizes = {}
    for term, a in zip(ins + [out], list(avals) + [None]):
        if not all(c in string.ascii_letters for c in term):
            bad("may hold letters only (no '...', no spaces)")
        if a is not None:
            if len(term) != a.ndim:
                bad(f"give {len(term)} letters to an operand of rank {a.ndim}")
            for c, n in zip(term, a.shape):
                if sizes.setdefault(c, n) != n:
                    bad(f"give the letter {c!r} sizes {sizes[c]} and {n}")
    if len(set(out)) != len(out) or not set(out) <= set(sizes):
        bad("must name each output letter once, and only letters of the operands")


def _fresh(subscripts):
    """Letters the subscripts do not use, for new axes."""
    return iter([c for c in string.ascii_letters if c not in subscripts])


def _einsum_ct(i, g, xs, subscripts):
    """Cotangent of operand ``i``: contract ``g`` with every other operand.

    Two cases need constants. A letter repeated in operand i ('ii') reads a diagonal, so its
    cotangent lives on that diagonal: the repeat gets a fresh letter tied to the first by an
    identity matrix. A letter summed within operand i alone ('ij->i') reaches no other
    operand, so the cotangent is constant along it: a ones vector carries it.
    """
    ins, out = _split(subscripts)
    sizes = _letter_sizes(ins, [x.shape for x in xs])
    fresh = _fresh(subscripts)
    dt = g.dtype
    target, seen, subs, ops = [], [], [], []
    for c in ins[i]:
        if c in seen:
            f = next(fresh)
            target.append(f)
            subs.append(c + f)
            ops.append(Tensor._wrap(np.eye(sizes[c], dtype=dt)))
        else:
            seen.append(c)
            target.append(c)
    elsewhere = set(out).union(*[ins[j] for j in range(len(ins)) if j != i])
    for c in seen:
        if c not in elsewhere:
            subs.append(c)
            ops.append(Tensor._wrap(np.ones(sizes[c], dtype=dt)))
    others = [j for j in range(len(xs)) if j != i]
    eq = ",".join([out] + [ins[j] for j in others] + subs) + "->" + "".join(target)
    return einsum_p.bind_raw(g, *[xs[j] for j in others], *ops, subscripts=eq)


def _einsum_vjp(g, ans, *xs, subscripts):
    return tuple(_einsum_ct(i, g, xs, subscripts) for i in range(len(xs)))


def _einsum_jvp(tangents, ans, *xs, subscripts):
    # einsum is linear in each operand: the tangent is a sum of einsums, one per tangent
    out = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        term = einsum_p.bind_raw(*xs[:i], t, *xs[i + 1:], subscripts=subscripts)
        out = term if out is None else out + term
    return out


def _einsum_batch(args, batched, *, subscripts):
    ins, out = _split(subscripts)
    z = next(_fresh(subscripts))
    ins = [z + s if b else s for s, b in zip(ins, batched)]
    return einsum_p.bind_raw(*args, subscripts=",".join(ins) + "->" + z + out)


def _einsum_work(ins, outs, params):
    """Multiply-adds of one einsum: the product of every index's size."""
    subs = params["subscripts"].replace(" ", "")
    if "..." in subs:  # sizes the letters do not name: assume big (the library's threads)
        return max(v.size for v in ins) * max(1, outs[0].size)
    sizes = {}
    for term, v in zip(subs.split("->")[0].split(","), ins):
        sizes.update(zip(term, v.shape))
    work = 1
    for n in sizes.values():
        work *= n
    return work


einsum_p = Primitive("einsum", _einsum, nin=None, abstract=_einsum_abstract, vjp=_einsum_vjp,
                     validate=_einsum_validate,
                     jvp=_einsum_jvp, batch=_einsum_batch,
                     emit="_einsum({args}, subscripts='{subscripts}')",
                     sparsity="multilinear", blas_work=_einsum_work, complex="holomorphic")


# ---- inverse and determinants --------------------------------------------------------------
inv_p = Primitive(
    "inv", xp.linalg.inv, nin=1, abstract=_square_abstract("inv", True),
    vjp=(lambda g, ans, a: -matmul(_mT(ans), matmul(g, _mT(ans))),),
    jvp=(lambda a_dot, ans, a: -matmul(ans, matmul(a_dot, ans)),),
    batch=_unary_batch("inv"), emit="np.linalg.inv({0})", sparsity="matrix")

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
    return xp.linalg.solve(xp.broadcast_to(a, batch + a.shape[-2:]),
                           xp.broadcast_to(b, batch + b.shape[-2:]))


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


cholesky_p = Primitive("cholesky", xp.linalg.cholesky, nin=1,
                       abstract=_square_abstract("cholesky", True),
                       vjp=(_cholesky_vjp,), jvp=(_cholesky_jvp,),
                       batch=_unary_batch("cholesky"), emit="np.linalg.cholesky({0})",
                       sparsity="matrix")


# ---- triangular solve --------------------------------------------------------------------------
def _triangular_solve(a, b, lower, adjoint):
    # Only the named triangle of ``a`` is read, as in TensorFlow. An LU solve of the masked
    # matrix keeps NumPy the only dependency and handles any batch of matrices.
    a = xp.tril(a) if lower else xp.triu(a)
    if adjoint:
        a = xp.swapaxes(a, -1, -2)
    return _solve(a, b)


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
EMIT_HELPERS = {"_einsum": _einsum, "_solve": _solve, "_triangular_solve": _triangular_solve}
