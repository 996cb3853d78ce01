"""``keras.ops``' ``cholesky_inverse`` and ``lu_factor`` (Keras 3's TensorFlow backend), as
triangular solves and a pivoted elimination written in tensor operations, so that they
differentiate.

>>> import numpy as np
>>> from tapegrad.keras import ops
>>> ops.cholesky_inverse(np.array([[2.0, 0.0], [0.0, 0.5]], "float32")).numpy().tolist()
[[0.25, 0.0], [0.0, 4.0]]
"""
from tapegrad import linalg as _linalg
from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import _tf as tf
from tapegrad.keras.ops.extra import _float

__all__ = ["cholesky_inverse", "lu_factor"]


def _matrix(x, square_message=None):
    if x.ndim < 2:
        raise ValueError(f"Expected input to have rank >= 2. Received input with shape "
                         f"{tuple(x.shape)}.")
    if x.shape[-1] != x.shape[-2]:
        message = ("Expected a square matrix. Received non-square input with shape "
                   f"{tuple(x.shape)}")
        raise ValueError(message if square_message is None else square_message(message))
    return x


def cholesky_inverse(x, upper=False):
    """The inverse of ``A = L L^T`` from its Cholesky factor ``L`` (``U^T U`` from ``U``
    with ``upper=True``).

    >>> cholesky_inverse([[1.0, 0.0], [1.0, 1.0]]).numpy().tolist()
    [[2.0, -1.0], [-1.0, 1.0]]
    """
    x = _matrix(_float(x))
    eye = tf.eye(x.shape[-1], batch_shape=list(x.shape[:-2]), dtype=x.dtype)
    inv = _linalg.triangular_solve(x, eye, lower=not upper)
    if upper:
        return tf.matmul(inv, inv, transpose_b=True)
    return tf.matmul(inv, inv, transpose_a=True)


def lu_factor(x):
    """The LU factorization with partial pivoting of a square matrix: ``lu`` holds ``U``
    and, below the diagonal, ``L``'s multipliers; ``p`` is the permutation with
    ``x[i] = (L U)[p[i]]`` (row ``i`` of ``x`` is row ``p[i]`` of ``L U``).

    >>> lu, p = lu_factor([[0.0, 1.0], [2.0, 4.0]])
    >>> lu.numpy().tolist(), p.numpy().tolist()
    ([[2.0, 4.0], [0.0, 1.0]], [1, 0])
    """
    a = _matrix(_float(x), lambda m: f"LU decomposition failed: {m}. LU decomposition is "
                "only supported for square matrices in Tensorflow.")
    if a.ndim != 2:  # Keras's TensorFlow backend inverts a permutation of one matrix only
        raise InvalidArgumentError(f"perm must be a vector, got shape {list(a.shape[:-1])} "
                                   "[Op:InvertPermutation]")
    n = a.shape[0]
    rows = tf.range(n)
    order = rows
    for k in range(n):
        # the row of the largest |pivot| (the first of equals) changes place with row k
        p = tf.cast(tf.argmax(tf.abs(a[k:, k]), axis=0), "int32") + k
        swap = tf.where(rows == k, p, tf.where(rows == p, k, rows))
        a, order = tf.gather(a, swap), tf.gather(order, swap)
        if k == n - 1:
            break
        below = a[k + 1:, k] / a[k, k]
        rest = a[k + 1:, k + 1:] - tf.expand_dims(below, 1) * tf.expand_dims(a[k, k + 1:], 0)
        bottom = tf.concat([a[k + 1:, :k], tf.expand_dims(below, 1), rest], axis=1)
        a = tf.concat([a[:k + 1], bottom], axis=0)
    # `order[i]` is the row of x that went to row i; Keras returns its inverse
    return a, tf.cast(tf.argsort(order), "int32")
