"""Linear algebra: ``tf.matmul``, ``tf.linalg.*``."""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.ops import array_ops as A
from tapegrad.ops._convert import binary, tensor
from tapegrad.primitives import linalg as L
from tapegrad.primitives import shape as S


def matrix_transpose(a, name=None, conjugate=False):
    """Swap the last two axes."""
    x = tensor(a)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: needs rank >= 2, got shape {tuple(x.shape)}.")
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return bind(S.transpose_p, x, perm=perm)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           name=None):
    """Matrix product over the last two axes; leading axes broadcast as a batch.

    Vectors are accepted as in NumPy (a 1-D operand is a row or column).

    >>> import tapegrad as tf
    >>> tf.matmul([[1.0, 2.0]], [[3.0], [4.0]]).numpy().tolist()
    [[11.0]]
    """
    a, b = binary(a, b)
    if transpose_a or adjoint_a:
        a = matrix_transpose(a)
    if transpose_b or adjoint_b:
        b = matrix_transpose(b)
    va, vb = a.ndim == 1, b.ndim == 1
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must not be scalars, got shapes {tuple(a.shape)} "
                         f"and {tuple(b.shape)}.")
    if va:
        a = A.reshape(a, (1, a.shape[0]))
    if vb:
        b = A.reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"Matrix size-incompatible: In[0]: {list(a.shape)}, "
                         f"In[1]: {list(b.shape)} (matmul).")
    out = bind(L.matmul_p, a, b)
    if va or vb:
        shape = tuple(out.shape[:-2]) + (() if va else (out.shape[-2],)) + (
            () if vb else (out.shape[-1],))
        out = A.reshape(out, shape)
    return out


def diag(diagonal, name=None, k=0, num_rows=-1, num_cols=-1, padding_value=0, align=None):
    """Square (or ``num_rows`` x ``num_cols``) matrices with ``diagonal`` on the diagonal."""
    v = tensor(diagonal)
    if k != 0:
        raise NotImplementedError("linalg.diag: only k=0 is supported.")
    n = v.shape[-1]
    r = n if num_rows in (-1, None) else int(num_rows)
    c = n if num_cols in (-1, None) else int(num_cols)
    eye = A.eye(r, c, dtype=v.dtype)
    if r != n or c != n:
        m = min(r, c)
        v = A.pad(v, [[0, 0]] * (v.ndim - 1) + [[0, max(0, m - n)]])[..., :m] if m != n else v
        eye = eye[:m] if r >= c else eye[:, :m]
        return A.expand_dims(v, -1) * eye if r >= c else A.expand_dims(v, -2) * eye
    return A.expand_dims(v, -1) * eye


def diag_part(input, name=None, k=0, padding_value=0, align=None):
    """The diagonal of the last two axes."""
    x = tensor(input)
    if x.ndim < 2:
        raise ValueError(f"diag_part: needs rank >= 2, got shape {tuple(x.shape)}.")
    return bind(S.diag_part_p, x)


def trace(x, name=None):
    """Sum of the diagonal of the last two axes."""
    from tapegrad.ops.math_ops import reduce_sum
    return reduce_sum(diag_part(x), axis=-1)


_ = np
