"""Norms: ``tf.norm`` (vector and matrix orders), ``tf.linalg.normalize``, ``tf.clip_by_norm``;
composed from math primitives, so they differentiate to any order.
"""
import numbers

import numpy as np

from tapegrad.core.tensor import Tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops import array_ops
from tapegrad.ops import math_ops
from tapegrad.ops._convert import axis1
from tapegrad.ops._convert import tensor as _tensor
from tapegrad.ops.indexed_slices import rows_of


def _shape(x):
    return tuple(x.shape)


_VECTOR_ORDS = ("euclidean", 1, 2, np.inf)
_MATRIX_ORDS = ("euclidean", "fro", 1, 2, np.inf)


def _norm_axes(x, axis):
    """(axes, is_matrix) for tf.norm's ``axis``: None (all, as a vector), an int or a pair."""
    if axis is None:
        return tuple(range(x.ndim)), False
    if isinstance(axis, Tensor):
        axis = np.asarray(axis._value).tolist()
    if np.ndim(axis) == 0:
        return (axis1(axis, x.ndim, "norm"),), False
    ax = tuple(axis1(a, x.ndim, "norm") for a in axis)
    if len(ax) not in (1, 2) or len(set(ax)) != len(ax):
        raise ValueError(f"norm: axis must be None, an int or a pair of distinct axes, got "
                         f"{axis!r} for a tensor of shape {_shape(x)}.")
    return ax, len(ax) == 2


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """Vector or matrix norm, as ``tf.norm``.

    ``axis`` None (the whole tensor as one vector), an int (vector norms along it) or a pair
    (matrix norms). Vector ``ord``: 'euclidean', 1, 2, ``np.inf`` or any p > 0. Matrix
    ``ord``: 'euclidean'/'fro', 1 (max column sum), ``np.inf`` (max row sum), 2 (the largest
    singular value). As in TensorFlow, the euclidean norm of complex numbers is
    ``sqrt(sum(x * conj(x)))`` in their dtype, and the gradient of the euclidean norm of a
    zero vector is nan (use ``clip_by_norm`` or add an epsilon where that matters).

    >>> import tapegrad as tf
    >>> float(tf.norm([3.0, 4.0]))
    5.0
    """
    x = _tensor(tensor)
    if x.dtype.kind not in "fc":
        raise TypeError(f"norm: input must be a floating tensor, got {x.dtype.name}.")
    ax, is_matrix = _norm_axes(x, axis)
    if isinstance(ord, bool):  # True == 1 in Python, but it is no norm order
        raise ValueError(f"norm: ord={ord!r} is not a norm order.")
    if is_matrix:
        if ord not in _MATRIX_ORDS:
            raise ValueError(f"norm: ord={ord!r} is not a supported matrix norm; use "
                             "'euclidean', 'fro', 1, 2 or np.inf.")
    elif not (ord in _VECTOR_ORDS or (isinstance(ord, numbers.Real) and ord > 0)):
        hint = " ('fro' is a matrix norm: give axis as a pair)" if ord == "fro" else ""
        raise ValueError(f"norm: ord={ord!r} is not a supported vector norm; use "
                         f"'euclidean', 1, 2, np.inf or a number > 0{hint}.")
    if ord in ("euclidean", "fro") or (ord == 2 and not is_matrix):
        sq = x * math_ops.conj(x) if x.dtype.kind == "c" else x * x
        out = math_ops.sqrt(math_ops.reduce_sum(sq, axis=ax, keepdims=True))
    elif ord == 2:  # the largest singular value of the matrices over the two axes
        from tapegrad.ops.decomp_ops import svd
        rest = [i for i in range(x.ndim) if i not in ax]
        s = svd(array_ops.transpose(x, rest + list(ax)), compute_uv=False)
        kept = [1 if i in ax else d for i, d in enumerate(_shape(x))]
        out = array_ops.reshape(math_ops.reduce_max(s, axis=-1), kept)
    elif ord == 1 and is_matrix:       # max over columns of the column sums
        sums = math_ops.reduce_sum(math_ops.abs(x), axis=ax[0], keepdims=True)
        out = math_ops.reduce_max(sums, axis=ax[1], keepdims=True)
    elif ord == np.inf and is_matrix:  # max over rows of the row sums
        sums = math_ops.reduce_sum(math_ops.abs(x), axis=ax[1], keepdims=True)
        out = math_ops.reduce_max(sums, axis=ax[0], keepdims=True)
    elif ord == 1:
        out = math_ops.reduce_sum(math_ops.abs(x), axis=ax, keepdims=True)
    elif ord == np.inf:
        out = math_ops.reduce_max(math_ops.abs(x), axis=ax, keepdims=True)
    else:
        p = float(ord)
        out = math_ops.pow(math_ops.reduce_sum(math_ops.pow(math_ops.abs(x), p), axis=ax,
                                               keepdims=True), 1.0 / p)
    return out if keepdims else array_ops.squeeze(out, axis=list(ax))


def normalize(tensor, ord="euclidean", axis=None, name=None):
    """``(tensor / norm, norm)`` with ``norm = tf.norm(tensor, ord, axis, keepdims=True)``,
    as ``tf.linalg.normalize`` (a zero norm gives NaN, as in TensorFlow).

    >>> import tapegrad as tf
    >>> [t.numpy().tolist() for t in tf.linalg.normalize([3.0, 4.0])]
    [[0.6000000238418579, 0.800000011920929], [5.0]]
    """
    x = _tensor(tensor)
    if x.dtype.kind not in "fc":  # TensorFlow's kernels refuse them
        raise InvalidArgumentError(f"normalize: {x.dtype.name} is not in the list of allowed "
                                   "types: half, float, double, complex64, complex128")
    n = norm(x, ord, axis, keepdims=True)
    n = array_ops.cast(n, x.dtype) if n.dtype != x.dtype else n
    return x / n, n


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Rescale ``t`` so that its L2 norm over ``axes`` is at most ``clip_norm``.

    >>> import tapegrad as tf
    >>> tf.clip_by_norm([3.0, 4.0], 1.0).numpy().tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    t, wrap = rows_of(t)  # tf.IndexedSlices: its rows clipped together, as TensorFlow
    t = _tensor(t)
    c = array_ops.cast(clip_norm, t.dtype) if isinstance(clip_norm, Tensor) else clip_norm
    l2sum = math_ops.reduce_sum(t * t, axis=axes, keepdims=True)
    # as TensorFlow: a zero norm takes sqrt of a safe 1 so its gradient stays finite
    pos = l2sum > 0
    l2norm = math_ops.where(
        pos, math_ops.sqrt(math_ops.where(pos, l2sum, array_ops.ones_like(l2sum))), l2sum)
    return wrap(t * c / math_ops.maximum(l2norm, c))
