"""Linear-algebra products: ``matmul`` and ``einsum``. Matrices live in the last two axes;
leading axes are a batch.

``matmul`` only sees operands of rank >= 2: the op layer lifts vectors to matrices, so the
rules stay short. Batch axes broadcast, and the engine sums cotangents back to each input.
``einsum`` sees explicit subscripts without ellipsis and with one size per letter: the op
layer expands '...' and broadcasts, so the rules only deal with letters.

Inverses, determinants, solves and the Cholesky factor are in ``solvers.py``; the
decompositions (QR, SVD, eigh) in ``decompositions.py``.
"""
import string

import numpy as np

from tapegrad.primitives.api import (matmul, matrix_transpose, reshape)
from tapegrad.core.dispatch import Primitive
from tapegrad.primitives import identities
from tapegrad.primitives.shape import reshape_p
from tapegrad.core.tensor import Tensor
from tapegrad.primitives.params import fail
from tapegrad.primitives.families import broadcast_shapes, xp
from tapegrad.util.small_gemm import (SMALL_GEMM, inner_blocked, matmul_inner,
    matmul_rows, row_blocked)


def _mT(x):
    """Swap the last two axes."""
    return matrix_transpose(x)



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
    - a tall C-ordered matrix times a small one: GEMMs of 8-64 rows each, where NumPy's BLAS
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



# The code generator imports these by name for the ``emit`` strings above.
EMIT_HELPERS = {"_einsum": _einsum}
