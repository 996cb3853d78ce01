"""``tf.SparseTensor`` in COO form and the ``tf.sparse`` functions programs make and use it
with: ``to_dense`` (differentiable in the values), ``from_dense``, ``reorder`` and
``sparse_dense_matmul``. tapegrad computes with dense arrays, so a SparseTensor is the
three tensors TensorFlow keeps and densifies where it is used (fine for the masks and small
one-hot tables programs build; a large sparse matrix stays large here).

>>> import tapegrad as tf
>>> st = tf.SparseTensor(indices=[[0, 1], [2, 0]], values=[5.0, 7.0], dense_shape=[3, 2])
>>> tf.sparse.to_dense(st).numpy().tolist()
[[0.0, 5.0], [0.0, 0.0], [7.0, 0.0]]
"""
import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError
from tapegrad.ops.linalg_ops import matmul
from tapegrad.ops.scatter_ops import scatter_nd


class SparseTensor:
    """A sparse tensor: ``indices`` (int64, ``[N, rank]``), ``values`` (``[N]``) and
    ``dense_shape`` (int64, ``[rank]``).

    >>> import tapegrad as tf
    >>> st = tf.SparseTensor([[1]], [-float("inf")], [3])
    >>> st.shape, st.dtype.name
    (TensorShape([3]), 'float32')
    """

    def __init__(self, indices, values, dense_shape):
        self._indices = convert_to_tensor(indices, dtype=_dt.int64)
        self._values = values if isinstance(values, Tensor) else convert_to_tensor(values)
        self._dense_shape = convert_to_tensor(dense_shape, dtype=_dt.int64)
        ish, vsh, dsh = (tuple(t.shape) for t in (self._indices, self._values,
                                                   self._dense_shape))
        # TensorFlow's static checks, with its message
        if len(ish) != 2 or len(vsh) != 1 or len(dsh) != 1:
            raise ValueError(f"Shape must be rank 2 (indices), 1 (values) and 1 (dense_shape),"
                             f" got {ish}, {vsh} and {dsh}")
        if ish[0] != vsh[0]:
            raise ValueError(f"Dimensions {ish[0]} and {vsh[0]} are not compatible")
        if ish[1] != dsh[0]:
            raise ValueError(f"Dimensions {ish[1]} and {dsh[0]} are not compatible")

    indices = property(lambda self: self._indices)
    values = property(lambda self: self._values)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)

    @property
    def shape(self):
        from tapegrad.ops.framework_ops import TensorShape
        return TensorShape([int(d) for d in self._dense_shape.numpy()])

    def with_values(self, new_values):
        """The same indices and shape with ``new_values``."""
        return SparseTensor(self._indices, new_values, self._dense_shape)

    # a composite tensor: tf.is_tensor is True, tf.nest(expand_composites=True) sees the three
    _tf_composite = True

    # the indices and dense shape: a traced function takes them as static values
    # (compile/signature.py), as tf.sparse's ops need them concrete
    _tf_static_components = (0, 2)

    def _tf_components(self):
        return [self._indices, self._values, self._dense_shape]

    def _tf_from_components(self, parts):
        return SparseTensor(*parts)

    def __repr__(self):
        return (f"SparseTensor(indices={self._indices!r}, values={self._values!r}, "
                f"dense_shape={self._dense_shape!r})")


def _concrete(t, what):
    try:
        return np.asarray(t.numpy())
    except Exception:  # a traced value: its entries are not known yet
        raise NotImplementedError(
            f"tf.sparse: the {what} of a SparseTensor must be known when it is densified "
            "(make the SparseTensor outside tf.function or from constants).") from None


def _check_indices(indices, shape, op="SparseToDense"):
    """TensorFlow's validation: every index in bounds, in row-major order, none repeated."""
    for i, idx in enumerate(indices):
        if np.any(idx < 0) or np.any(idx >= shape):
            raise InvalidArgumentError(
                f"indices[{i}] = [{','.join(map(str, idx))}] is out of bounds: need 0 <= "
                f"index < [{','.join(map(str, shape))}] [Op:{op}]")
        if i:
            prev = tuple(indices[i - 1])
            if tuple(idx) == prev:
                raise InvalidArgumentError(
                    f"indices[{i}] = [{','.join(map(str, idx))}] is repeated [Op:{op}]")
            if tuple(idx) < prev:
                raise InvalidArgumentError(
                    f"indices[{i}] = [{','.join(map(str, idx))}] is out of order. Many sparse "
                    "ops require sorted indices.\n    Use `tf.sparse.reorder` to create a "
                    f"correctly ordered copy.\n\n [Op:{op}]")


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of ``sp_input``: its values at its indices, ``default_value``
    (zero by default) elsewhere. Differentiable with respect to the values.

    >>> import tapegrad as tf
    >>> tf.sparse.to_dense(tf.SparseTensor([[0]], [2.0], [3]), default_value=-1.0).numpy()
    array([ 2., -1., -1.], dtype=float32)
    """
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}")
    indices = _concrete(sp_input.indices, "indices")
    shape = _concrete(sp_input.dense_shape, "dense_shape")
    if validate_indices:
        _check_indices(indices, shape)
    values = sp_input.values
    dense = scatter_nd(indices, values, [int(d) for d in shape])
    if default_value is None:
        return dense
    mask = np.ones(shape.astype(np.int64), dtype=bool)
    if len(indices):
        mask[tuple(indices.T)] = False
    fill = np.where(mask, np.asarray(default_value, dtype=np.dtype(values.dtype.name)),
                    np.zeros((), np.dtype(values.dtype.name)))
    return dense + convert_to_tensor(fill, dtype=values.dtype)


def from_dense(tensor, name=None):
    """The SparseTensor of ``tensor``'s non-zero entries (row-major order).

    >>> import tapegrad as tf
    >>> tf.sparse.from_dense([[0, 2], [3, 0]]).indices.numpy().tolist()
    [[0, 1], [1, 0]]
    """
    from tapegrad.ops.indexing_ops import gather_nd
    t = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor)
    idx = np.argwhere(np.asarray(t.numpy()) != 0).astype(np.int64)
    return SparseTensor(idx, gather_nd(t, idx), np.asarray(t.shape, dtype=np.int64))


def reorder(sp_input, name=None):
    """The same SparseTensor with its entries in row-major (canonical) order."""
    indices = _concrete(sp_input.indices, "indices")
    from tapegrad.ops.indexing_ops import gather
    order = np.lexsort(indices.T[::-1]) if len(indices) else np.arange(0)
    return SparseTensor(indices[order], gather(sp_input.values, order), sp_input.dense_shape)


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """``sp_a @ b`` for a rank-2 SparseTensor ``sp_a`` (densified first) and a dense ``b``."""
    return matmul(to_dense(sp_a), b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)
