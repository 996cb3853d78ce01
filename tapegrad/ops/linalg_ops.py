"""Linear algebra: ``tf.matmul``, ``tf.einsum``, ``tf.tensordot``, ``tf.linalg.*`` (diagonals in
``diag_ops``, norms in ``norm_ops``).

Matrices live in the last two axes and leading axes are a batch, as in TensorFlow. This layer
checks shapes (errors name the op and both shapes) and normalises arguments, so that the
primitives see only the cases their rules are written for.
"""
import collections
import string

import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.errors import InvalidArgumentError, NotFoundError
from tapegrad.ops import array_ops
from tapegrad.ops import math_ops
from tapegrad.ops._convert import axis1, binary
from tapegrad.ops._convert import matrices as _matrices
from tapegrad.ops._convert import tensor as _tensor
from tapegrad.ops._kinds import mismatch
from tapegrad.ops.array_ops import eye
from tapegrad.primitives import linalg, solvers
from tapegrad.primitives import shape as shape_prims
from tapegrad.primitives.complex import conj
# the diagonal and norm ops live in modules of their own; tf.linalg re-exports them from here
from tapegrad.ops.diag_ops import band_part, diag, diag_part, trace  # noqa: F401
from tapegrad.ops.norm_ops import clip_by_norm, norm, normalize  # noqa: F401


_PLAIN = (Tensor, Variable)  # concrete values (a Variable is read by bind)


def _shape(x):
    return tuple(x.shape)


__all__ = [
    "adjoint", "band_part", "cholesky", "cholesky_solve", "det", "diag", "diag_part", "einsum",
    "eye", "inv", "logdet", "matmul", "matrix_transpose", "matvec", "norm", "normalize",
    "slogdet", "solve",
    "tensordot", "trace", "triangular_solve",
]




def _batch_compatible(a, b, op):
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"{op}: batch shapes of {_shape(a)} and {_shape(b)} do not "
                         "broadcast.") from None


# ---- products ---------------------------------------------------------------------------
def matrix_transpose(a, name=None, conjugate=False):
    """Swap the last two axes.

    >>> import tapegrad as tf
    >>> tf.linalg.matrix_transpose([[1.0, 2.0]]).shape
    TensorShape([2, 1])
    """
    x = _tensor(a)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: needs rank >= 2, got shape {_shape(x)}.")
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    out = bind(shape_prims.transpose_p, x, perm=perm)
    return conj(out) if conjugate else out


def adjoint(matrix, name=None):
    """The conjugate transpose of the last two axes (the transpose, for real tensors).

    >>> import tapegrad as tf
    >>> tf.linalg.adjoint([[1 + 2j, 3j]]).numpy().ravel().tolist()
    [(1-2j), -3j]
    """
    return matrix_transpose(matrix, conjugate=True)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           name=None):
    """Matrix product over the last two axes; leading axes broadcast as a batch.

    Both operands have rank 2 or more, as in TensorFlow (``tf.linalg.matvec`` takes a
    vector).

    >>> import tapegrad as tf
    >>> tf.matmul([[1.0, 2.0]], [[3.0], [4.0]]).numpy().tolist()
    [[11.0]]
    """
    if type(a) in _PLAIN and type(b) in _PLAIN and not (
            transpose_a or transpose_b or adjoint_a or adjoint_b):
        # the common case (a dense layer, its kernel a Variable, which bind reads): two
        # matrices of one dtype, no flags
        av, bv = a._value, b._value
        if av.ndim == 2 and bv.ndim == 2 and av.shape[1] == bv.shape[0] \
                and av.dtype == bv.dtype and av.dtype.kind in "fc":
            return bind(linalg.matmul_p, a, b)
    a, b = binary(a, b, "MatMul")
    if transpose_a and adjoint_a or transpose_b and adjoint_b:
        raise ValueError("Only one of transpose and adjoint can be True for each operand.")
    if transpose_a or adjoint_a:
        a = matrix_transpose(a, conjugate=adjoint_a)
    if transpose_b or adjoint_b:
        b = matrix_transpose(b, conjugate=adjoint_b)
    for i, v in enumerate((a, b)):
        if v.ndim < 2:  # NumPy's vector rule is not TensorFlow's: an error there
            raise InvalidArgumentError(f"In[{i}] ndims must be >= 2: {v.ndim} (matmul of "
                                       f"shapes {_shape(a)} and {_shape(b)})")
    if a.dtype.kind not in "fc":
        _matmul_dtype(a.dtype, a.ndim == 2 and b.ndim == 2)
    return _matmul(a, b)


def _matmul_dtype(dtype, plain):
    """TensorFlow's errors for the integer and bool dtypes its CPU kernels lack: MatMul (two
    matrices) takes int32 and int64, BatchMatMulV2 also int16; unsigned integers are in
    their lists but have no CPU kernel."""
    op = "MatMul" if plain else "BatchMatMulV2"
    ints = ("int32", "int64") if plain else ("int16", "int32", "int64")
    if dtype.name in ints:
        return
    if dtype.kind == "u":  # (the flags as TensorFlow prints them; tapegrad has transposed)
        flags = "grad_a=false, grad_b=false, transpose_a=false, transpose_b=false" if plain \
            else "adj_x=false, adj_y=false, grad_x=false, grad_y=false"
        raise NotFoundError(f"Could not find device for node: {{{{node {op}}}}} = {op}"
                            f"[T=DT_{dtype.name.upper()}, {flags}] (no CPU kernel for "
                            f"{dtype.name})")
    allowed = ", ".join(("bfloat16", "half", "float", "double") + ints + (
        "uint8", "uint16", "uint32", "uint64", "complex64", "complex128"))
    raise InvalidArgumentError(f"Value for attr 'T' of {dtype.name} is not in the list of "
                               f"allowed values: {allowed} [Op:{op}]")


def _matmul(a, b):
    """``a @ b`` of one dtype, with NumPy's rule for a 1-D operand (a row or a column), which
    the matmul primitive and its batching rule keep (``tf.matmul`` refuses vectors first, as
    TensorFlow; tests/test_vmap.py batches the vector forms through this)."""
    va, vb = a.ndim == 1, b.ndim == 1
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must not be scalars, got shapes {_shape(a)} "
                         f"and {_shape(b)}.")
    if va and b.ndim == 2:
        if a.shape[0] != b.shape[0]:
            raise ValueError(f"Matrix size-incompatible: In[0]: {list(a.shape)}, "
                             f"In[1]: {list(b.shape)} (matmul).")
        return bind(linalg.matmul_p, a, b)  # the primitive takes a vector times a matrix as is
    if va:
        a = array_ops.reshape(a, (1, a.shape[0]))
    if vb:
        b = array_ops.reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"Matrix size-incompatible: In[0]: {list(a.shape)}, "
                         f"In[1]: {list(b.shape)} (matmul).")
    if a.ndim > 2 or b.ndim > 2:
        _batch_compatible(a, b, "matmul")
    out = bind(linalg.matmul_p, a, b)
    if va or vb:
        shape = tuple(out.shape[:-2]) + (() if va else (out.shape[-2],)) + (
            () if vb else (out.shape[-1],))
        out = array_ops.reshape(out, shape)
    return out


def matvec(a, b, transpose_a=False, adjoint_a=False, name=None):
    """Matrix times vector over the last axes: ``a @ b[..., None]`` without the unit axis."""
    out = matmul(a, array_ops.expand_dims(_tensor(b), -1), transpose_a=transpose_a, adjoint_a=adjoint_a)
    return array_ops.squeeze(out, -1)


def tensordot(a, b, axes, name=None):
    """Sum of products over the given axes of ``a`` and ``b`` (a transpose, reshape, matmul).

    ``axes`` is N (the last N axes of ``a`` with the first N of ``b``) or a pair of axis
    lists.

    >>> import tapegrad as tf
    >>> tf.tensordot(tf.ones([2, 3]), tf.ones([3, 4]), axes=1).shape
    TensorShape([2, 4])
    """
    a, b = binary(a, b)
    if isinstance(axes, Tensor):
        axes = np.asarray(axes._value).tolist()
    if np.ndim(axes) == 0:
        n = int(axes)
        if not 0 <= n <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={n} is out of range for shapes {_shape(a)} and "
                             f"{_shape(b)}.")
        ax_a, ax_b = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        if len(axes) != 2:
            raise ValueError(f"tensordot: axes must be an int or a pair of axis lists, got "
                             f"{axes!r}.")
        ax_a, ax_b = ([int(v)] if np.ndim(v) == 0 else [int(w) for w in v] for v in axes)
        ax_a = [axis1(i, a.ndim, "tensordot") for i in ax_a]
        ax_b = [axis1(i, b.ndim, "tensordot") for i in ax_b]
    if (len(ax_a) != len(ax_b) or len(set(ax_a)) != len(ax_a) or len(set(ax_b)) != len(ax_b)
            or any(a.shape[i] != b.shape[j] for i, j in zip(ax_a, ax_b))):
        raise ValueError(f"tensordot: cannot contract axes {ax_a} of shape {_shape(a)} with "
                         f"axes {ax_b} of shape {_shape(b)}.")
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [j for j in range(b.ndim) if j not in ax_b]
    k = int(np.prod([a.shape[i] for i in ax_a]))
    fa = [a.shape[i] for i in free_a]
    fb = [b.shape[j] for j in free_b]
    a2 = array_ops.reshape(array_ops.transpose(a, free_a + ax_a), (int(np.prod(fa)), k))
    b2 = array_ops.reshape(array_ops.transpose(b, ax_b + free_b), (k, int(np.prod(fb))))
    return array_ops.reshape(bind(linalg.matmul_p, a2, b2), fa + fb)


# ---- einsum -----------------------------------------------------------------------------------
def _parse_einsum(equation, shapes):
    """Explicit subscripts with '...' spelled out in fresh letters, or a ValueError."""
    eq = equation.replace(" ", "")
    if eq.count("->") > 1:
        raise ValueError(f"einsum: equation {equation!r} has more than one '->'.")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise ValueError(f"einsum: equation {equation!r} names {len(ins)} operand(s), but "
                         f"{len(shapes)} were given.")
    for s in ins + [out]:
        if not all(c in string.ascii_letters for c in s.replace("...", "", 1)):
            raise ValueError(f"einsum: invalid subscripts {s!r} in {equation!r}: use letters, "
                             "',', '->' and at most one '...' per operand.")
    ranks = []
    for s, shape in zip(ins, shapes):
        r = len(shape) - len(s.replace("...", ""))
        if r < 0 or (r and "..." not in s):
            raise ValueError(f"einsum: subscripts {s!r} in {equation!r} do not fit an operand "
                             f"of shape {tuple(shape)}.")
        ranks.append(r)
    free = [c for c in string.ascii_letters if c not in eq]
    n_ell = max(ranks, default=0)
    if n_ell > len(free):
        raise ValueError(f"einsum: too many axes under '...' in {equation!r}.")
    ell = "".join(free[:n_ell])
    ins = [s.replace("...", ell[n_ell - r:]) for s, r in zip(ins, ranks)]
    if not arrow:
        # implicit output: broadcast axes, then the letters used once, in ASCII order (NumPy)
        counts = collections.Counter("".join(ins))
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    elif "..." in out:
        out = out.replace("...", ell)
    elif n_ell:
        raise ValueError(f"einsum: operands of {equation!r} have axes under '...', so the "
                         "output must name them with '...' too.")
    used = set("".join(ins))
    for c in out:
        if c not in used or out.count(c) > 1:
            raise ValueError(f"einsum: output subscript {c!r} of {equation!r} must appear in "
                             "an input and only once in the output.")
    return ins, out


def einsum(equation, *inputs, **kwargs):
    """Einstein summation, as ``np.einsum``: repeated letters, implicit output and '...'.

    >>> import tapegrad as tf
    >>> tf.einsum('ij,jk->ik', tf.ones([2, 3]), tf.ones([3, 4])).shape
    TensorShape([2, 4])
    >>> tf.einsum('ii->i', [[1.0, 2.0], [3.0, 4.0]]).numpy().tolist()
    [1.0, 4.0]
    """
    if not inputs:
        raise ValueError("einsum: needs at least one operand.")
    xs = [_tensor(x) for x in inputs]
    for i, x in enumerate(xs[1:], 1):  # one dtype: TensorFlow promotes none (float16, float32)
        if x.dtype != xs[0].dtype and isinstance(inputs[i], Tensor) and \
                isinstance(inputs[0], Tensor):
            mismatch("Einsum", xs[0], x)
    dt = np.result_type(*[x.dtype for x in xs])
    xs = [array_ops.cast(x, dt) for x in xs]
    ins, out = _parse_einsum(equation, [x.shape for x in xs])
    # one size per letter: size-1 axes broadcast; a repeated letter (a diagonal) must not
    sizes = {}
    for s, x in zip(ins, xs):
        for c, n in zip(s, x.shape):
            sizes[c] = max(sizes.get(c, 1), n)
    for s, x in zip(ins, xs):
        for c, n in zip(s, x.shape):
            if n != sizes[c] and (n != 1 or s.count(c) > 1):
                raise ValueError(f"einsum: subscript {c!r} of {equation!r} has sizes {n} and "
                                 f"{sizes[c]} in operands of shapes "
                                 + ", ".join(str(_shape(v)) for v in xs) + ".")
    xs = [array_ops.broadcast_to(x, [sizes[c] for c in s]) for s, x in zip(ins, xs)]
    return bind(linalg.einsum_p, *xs, subscripts=",".join(ins) + "->" + out)


# ---- inverse, determinants, solves -------------------------------------------------------
def inv(input, adjoint=False, name=None):
    """Inverse of (a batch of) square matrices; of their adjoint if ``adjoint``.

    >>> import tapegrad as tf
    >>> tf.linalg.inv([[2.0, 0.0], [0.0, 4.0]]).numpy().tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    x = _matrices(input, "inv")
    return bind(solvers.inv_p, matrix_transpose(x, conjugate=True) if adjoint else x)


def det(input, name=None):
    """Determinant of (a batch of) square matrices.

    >>> import tapegrad as tf
    >>> float(tf.linalg.det([[2.0, 1.0], [1.0, 3.0]]))
    5.0
    """
    return bind(solvers.det_p, _matrices(input, "det"))


def slogdet(input, name=None):
    """``(sign, log|det|)`` of (a batch of) square matrices; the sign has no gradient.

    >>> import tapegrad as tf
    >>> sign, logabsdet = tf.linalg.slogdet([[-2.0, 0.0], [0.0, 1.0]])
    >>> float(sign), round(float(logabsdet), 4)
    (-1.0, 0.6931)
    """
    x = _matrices(input, "slogdet")
    return bind(solvers.detsign_p, x), bind(solvers.logabsdet_p, x)


def logdet(matrix, name=None):
    """log det of (a batch of) symmetric positive-definite matrices, through Cholesky."""
    c = cholesky(matrix)  # (real: a Hermitian matrix's factor has a real diagonal)
    return 2.0 * math_ops.reduce_sum(math_ops.log(math_ops.real(diag_part(c))), axis=-1)


def _rhs(matrix, rhs, op):
    a, b = binary(matrix, rhs)
    a = _matrices(a, op)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"{op}: matrix of shape {_shape(a)} and rhs of shape {_shape(b)} are "
                         f"incompatible: rhs must have shape [..., {a.shape[-1]}, K].")
    _batch_compatible(a, b, op)
    return a, b


def solve(matrix, rhs, adjoint=False, name=None):
    """``X`` with ``matrix @ X = rhs`` (``matrix^T @ X = rhs`` if ``adjoint``); batched.

    >>> import tapegrad as tf
    >>> tf.linalg.solve([[2.0, 0.0], [0.0, 4.0]], [[1.0], [1.0]]).numpy().tolist()
    [[0.5], [0.25]]
    """
    a, b = _rhs(matrix, rhs, "solve")
    return bind(solvers.solve_p, matrix_transpose(a, conjugate=True) if adjoint else a, b)


def cholesky(input, name=None):
    """Lower Cholesky factor ``L`` (``L @ L^T = input``) of symmetric positive-definite matrices.

    Only the lower triangle of ``input`` is read, and its gradient is symmetric, as in
    TensorFlow.

    >>> import tapegrad as tf
    >>> tf.linalg.cholesky([[4.0, 2.0], [2.0, 2.0]]).numpy().tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    return bind(solvers.cholesky_p, _matrices(input, "cholesky"))


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """Solve ``matrix @ X = rhs`` for triangular ``matrix`` (``matrix^T`` if ``adjoint``).

    Only the lower (or, with ``lower=False``, upper) triangle of ``matrix`` is read.

    >>> import tapegrad as tf
    >>> tf.linalg.triangular_solve([[2.0, 0.0], [1.0, 1.0]], [[2.0], [3.0]]).numpy().tolist()
    [[1.0], [2.0]]
    """
    a, b = _rhs(matrix, rhs, "triangular_solve")
    if adjoint:  # the primitive transposes; TensorFlow's adjoint also conjugates
        a = conj(a)
    return bind(solvers.triangular_solve_p, a, b, lower=bool(lower), adjoint=bool(adjoint))


def cholesky_solve(chol, rhs, name=None):
    """Solve ``A X = rhs`` given the Cholesky factor ``chol`` of ``A``."""
    y = triangular_solve(chol, rhs, lower=True)
    return triangular_solve(chol, y, lower=True, adjoint=True)
