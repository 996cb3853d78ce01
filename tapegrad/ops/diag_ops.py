"""Diagonals and bands of (batches of) matrices: ``tf.linalg.diag``, ``diag_part``, ``trace``,
``band_part``; composed from shape and select primitives, so they differentiate to any order.
"""
import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor
from tapegrad.ops import array_ops
from tapegrad.ops import math_ops
from tapegrad.ops._convert import matrices as _matrices
from tapegrad.ops._convert import tensor as _tensor
from tapegrad.ops.array_ops import eye
from tapegrad.primitives import shape as shape_prims


def _shape(x):
    return tuple(x.shape)


def _diag_len(rows, cols, k):
    return min(rows + min(0, k), cols - max(0, k))


def diag(diagonal, name=None, k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT"):
    """Matrices with ``diagonal`` on diagonal ``k`` (0 the main one); batched.

    The output is square unless ``num_rows``/``num_cols`` say otherwise; ``padding_value``
    fills the rest.

    >>> import tapegrad as tf
    >>> tf.linalg.diag([1.0, 2.0]).numpy().tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    v = _tensor(diagonal)
    if np.ndim(k) != 0:
        raise NotImplementedError("linalg.diag: only a single diagonal (an int k) is supported.")
    k = int(k)
    if v.ndim < 1:
        raise ValueError(f"linalg.diag: diagonal must have rank >= 1, got shape {_shape(v)}.")
    n = v.shape[-1]
    min_r, min_c = n + max(0, -k), n + max(0, k)
    r = -1 if num_rows is None else int(num_rows)
    c = -1 if num_cols is None else int(num_cols)
    if r == -1 and c == -1:
        r = c = max(min_r, min_c)
    elif r == -1:
        r = min_r
    elif c == -1:
        c = min_c
    if r < min_r or c < min_c or _diag_len(r, c, k) != n:
        raise ValueError(f"linalg.diag: a diagonal of length {n} does not fit diagonal {k} of "
                         f"a {r} x {c} matrix.")
    # the n x n diagonal matrix, padded into place: top rows for k < 0, left columns for k > 0
    out = array_ops.expand_dims(v, -1) * eye(n, dtype=v.dtype)
    top, left = max(0, -k), max(0, k)
    if (r, c) != (n, n):
        out = array_ops.pad(out, [[0, 0]] * (v.ndim - 1) + [[top, r - n - top], [left, c - n - left]])
    if padding_value != 0:
        on = Tensor._wrap(np.eye(r, c, k=k, dtype=bool))
        out = math_ops.where(on, out, array_ops.cast(_tensor(padding_value), out.dtype))
    return out


def diag_part(input, name=None, k=0, padding_value=0, align="RIGHT_LEFT"):
    """Diagonal ``k`` (0 the main one) of the last two axes.

    >>> import tapegrad as tf
    >>> tf.linalg.diag_part([[1.0, 2.0], [3.0, 4.0]]).numpy().tolist()
    [1.0, 4.0]
    """
    x = _matrices(input, "diag_part", square=False, floating=False)
    if np.ndim(k) != 0:
        raise NotImplementedError("linalg.diag_part: only a single diagonal (an int k) is "
                                  "supported.")
    k = int(k)
    if k == 0:
        return bind(shape_prims.diag_part_p, x)
    rows, cols = x.shape[-2:]
    n = _diag_len(rows, cols, k)
    if n <= 0:
        raise ValueError(f"linalg.diag_part: diagonal {k} is outside matrices of shape "
                         f"{_shape(x)}.")
    i = np.arange(n)
    return array_ops.getitem(x, (Ellipsis, i + max(0, -k), i + max(0, k)))


def trace(x, name=None):
    """Sum of the main diagonal of the last two axes.

    >>> import tapegrad as tf
    >>> float(tf.linalg.trace([[1.0, 2.0], [3.0, 4.0]]))
    5.0
    """
    return math_ops.reduce_sum(diag_part(x), axis=-1)


def band_part(input, num_lower, num_upper, name=None):
    """Keep ``num_lower`` diagonals below and ``num_upper`` above the main one (-1: all).

    >>> import tapegrad as tf
    >>> tf.linalg.band_part(tf.ones([3, 3]), 0, -1).numpy().tolist()
    [[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    """
    x = _matrices(input, "band_part", square=False, floating=False)
    lo, up = int(num_lower), int(num_upper)
    i = np.arange(x.shape[-2])[:, None]
    j = np.arange(x.shape[-1])[None, :]
    keep = ((lo < 0) | (i - j <= lo)) & ((up < 0) | (j - i <= up))
    if keep.all():
        return x
    # select rather than multiply, so an inf outside the band gives 0, not nan
    return math_ops.where(Tensor._wrap(keep), x, array_ops.zeros((), dtype=x.dtype))
