"""``tf.dynamic_partition`` and ``tf.dynamic_stitch``: gathers, so they differentiate with
respect to ``data`` as TensorFlow's do. The partitions and indices must be known values (as
they are eagerly); inside ``tf.function`` symbolic ones raise a ValueError saying so."""
import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.ops import array_ops
from tapegrad.ops._convert import tensor
from tapegrad.ops.framework_ops import get_static_value

__all__ = ["dynamic_partition", "dynamic_stitch"]


def _known(t, what, fn):
    v = get_static_value(t)
    if v is None:
        raise ValueError(f"tf.{fn} in tapegrad needs {what} whose values are known: inside "
                         "tf.function they must not depend on the function's inputs.")
    return np.asarray(v)


def dynamic_partition(data, partitions, num_partitions, name=None):
    """``num_partitions`` tensors: the slices of ``data`` whose partition is 0, 1, ...
    (``data``'s shape starts with ``partitions``' shape), each in its original order.

    >>> import tapegrad as tf
    >>> [t.numpy().tolist() for t in tf.dynamic_partition([10, 20, 30, 40], [0, 1, 1, 0], 2)]
    [[10, 40], [20, 30]]
    """
    data = tensor(data)
    p = _known(tensor(partitions), "partitions", "dynamic_partition").astype(np.int64)
    if tuple(data.shape[:p.ndim]) != p.shape:
        raise InvalidArgumentError(
            f"data.shape must start with partitions.shape, got data.shape = "
            f"{list(data.shape)}, partitions.shape = {list(p.shape)} [Op:DynamicPartition]")
    flat = p.reshape(-1)
    bad = np.flatnonzero((flat < 0) | (flat >= num_partitions))
    if bad.size:
        raise InvalidArgumentError(f"partitions[{bad[0]}] = {flat[bad[0]]} is not in [0, "
                                   f"{num_partitions}) [Op:DynamicPartition]")
    rows = array_ops.reshape(data, [-1] + list(data.shape[p.ndim:]))
    return [array_ops.gather(rows, np.flatnonzero(flat == i).astype(np.int64))
            for i in range(num_partitions)]


def dynamic_stitch(indices, data, name=None):
    """Interleave the ``data`` tensors into one: ``out[indices[m][i]] = data[m][i]``; where
    an index repeats, the last one wins, and indices never given are zeros.

    >>> import tapegrad as tf
    >>> tf.dynamic_stitch([[0, 3], [1, 2]], [[1.0, 2.0], [3.0, 4.0]]).numpy().tolist()
    [1.0, 3.0, 4.0, 2.0]
    """
    idx = [_known(tensor(i), "indices", "dynamic_stitch").astype(np.int64) for i in indices]
    data = [tensor(d) for d in data]
    rows, inner = [], None
    for m, (i, d) in enumerate(zip(idx, data)):
        if tuple(d.shape[:i.ndim]) != i.shape:
            raise InvalidArgumentError(
                f"data[{m}].shape = {list(d.shape)} does not start with indices[{m}].shape "
                f"= {list(i.shape)} [Op:DynamicStitch]")
        rest = list(d.shape[i.ndim:])
        if inner is None:
            inner = rest
        elif rest != inner:
            raise InvalidArgumentError(
                f"Need data[0].shape[{idx[0].ndim}:] = data[{m}].shape[{i.ndim}:], got "
                f"data[0].shape = {list(data[0].shape)}, data[{m}].shape = {list(d.shape)}, "
                f"indices[0].shape = {list(idx[0].shape)}, indices[{m}].shape = "
                f"{list(i.shape)} [Op:DynamicStitch]")
        rows.append(array_ops.reshape(d, [-1] + rest))
    flat = np.concatenate([i.reshape(-1) for i in idx]) if idx else np.zeros(0, np.int64)
    if flat.size and flat.min() < 0:
        raise InvalidArgumentError(f"indices[{int(np.flatnonzero(flat < 0)[0])}] = "
                                   f"{int(flat.min())} is out of range [Op:DynamicStitch]")
    n = int(flat.max()) + 1 if flat.size else 0
    # for each output row, the position of its last source row; n_rows (a zero row): none
    source = np.full(n, flat.size, np.int64)
    source[flat] = np.arange(flat.size)  # NumPy keeps the last of repeated indices
    all_rows = array_ops.concat(rows + [array_ops.zeros([1] + inner, rows[0].dtype)], axis=0)
    return array_ops.gather(all_rows, source)
