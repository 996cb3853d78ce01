"""``tf.IndexedSlices``: rows ``values[i]`` of a tensor of shape ``dense_shape`` at row
``indices[i]``, rows that repeat summed when it is made dense.

``GradientTape.gradient`` gives a tensor's or variable's gradient in this form where it
reaches the target only through ``tf.gather`` on its first axis (an embedding lookup), as
TensorFlow does (tape/sparse_rows.py). Programs build IndexedSlices, test for them
(``isinstance(g, tf.IndexedSlices)``) and pass them on: ``tf.convert_to_tensor`` and every op
densify them as TensorFlow does, ``tf.clip_by_norm`` and ``tf.clip_by_global_norm`` clip their
rows, and Keras's optimizers step them per slice as its TensorFlow backend does.

>>> import tapegrad as tf
>>> s = tf.IndexedSlices(tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([1, 1]),
...                      tf.constant([3, 2]))
>>> tf.convert_to_tensor(s).numpy().tolist()
[[0.0, 0.0], [4.0, 6.0], [0.0, 0.0]]
"""
from tapegrad.core import dtypes as _dt
from tapegrad.core import hooks
from tapegrad.core.tensor import Tensor, convert_to_tensor


def _as_tensor(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


class IndexedSlices:
    """Sparse rows of a dense tensor: ``values`` (``[N, ...]``), ``indices`` (``[N]``, int32
    or int64) and, optionally, ``dense_shape`` (the dense tensor's shape).

    >>> import tapegrad as tf
    >>> s = tf.IndexedSlices(tf.constant([[5.0]]), tf.constant([2]), tf.constant([4, 1]))
    >>> s.shape, s.dtype.name
    (TensorShape([4, 1]), 'float32')
    """

    _tf_composite = True  # tf.is_tensor is True; tf.nest expands it with expand_composites

    def __init__(self, values, indices, dense_shape=None):
        self._values = _as_tensor(values)
        self._indices = _as_tensor(indices)
        self._dense_shape = None if dense_shape is None else _as_tensor(dense_shape)

    values = property(lambda self: self._values, doc="The rows, ``[N, ...]``.")
    indices = property(lambda self: self._indices, doc="Each row's index, ``[N]``.")
    dense_shape = property(lambda self: self._dense_shape,
                           doc="The dense tensor's shape (None where not given).")
    dtype = property(lambda self: self._values.dtype, doc="The values' dtype.")
    name = property(lambda self: None, doc="None: eager tensors have no names.")
    device = property(lambda self: self._values.device, doc="The values' device.")

    @property
    def shape(self):
        """The dense tensor's ``TensorShape`` (unknown rank without a ``dense_shape``)."""
        from tapegrad.ops.framework_ops import TensorShape
        if self._dense_shape is None:
            return TensorShape(None)
        return TensorShape([int(d) for d in self._dense_shape.numpy()])

    def __neg__(self):
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __str__(self):
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"

    def __tf_tensor__(self, dtype=None, name=None):
        """The dense tensor: rows summed into zeros of ``dense_shape``, as TensorFlow
        converts (``unsorted_segment_sum``); differentiable in ``values``."""
        dtype = _dt.as_dtype(dtype)
        if dtype is not None and dtype != self.dtype:
            raise ValueError(f"Incompatible tensor conversion requested to `dtype` "
                             f"{dtype.name} for IndexedSlices ({self}) with dtype "
                             f"{self.dtype.name}")
        if self._dense_shape is None:
            raise ValueError("Tensor conversion requested for IndexedSlices for argument "
                             f"`value` without dense_shape: {self}")
        from tapegrad.ops.segment_ops import unsorted_segment_sum
        return unsorted_segment_sum(self._values, self._indices, self._dense_shape[0])

    # tf.nest with expand_composites=True sees the three tensors
    # the dense shape: a traced function takes it as a static value (compile/signature.py)
    _tf_static_components = (2,)

    def _tf_components(self):
        return [self._values, self._indices] + (
            [] if self._dense_shape is None else [self._dense_shape])

    def _tf_from_components(self, parts):
        return IndexedSlices(*parts)


def rows_of(t):
    """``t``'s values if it is IndexedSlices, with a function that wraps new values back
    (``t`` itself and the identity otherwise): the clip functions clip the rows."""
    if isinstance(t, IndexedSlices):
        return t.values, lambda v: IndexedSlices(v, t.indices, t.dense_shape)
    return t, lambda v: v


def _gradient_slices(parts, dense_shape):
    """The hook ``hooks.indexed_slices``: ``parts`` holds each row gather's ``(output
    cotangent, indices)``, in the gathers' order; their rows at their indices (int64 where
    the gathers' index dtypes differ) make one IndexedSlices of ``dense_shape``."""
    from tapegrad.ops.shape_ops import cast, concat, reshape
    row = list(dense_shape[1:])
    values = [reshape(g, [-1] + row) for g, _ in parts]
    indices = [reshape(i, [-1]) for _, i in parts]
    if len({i.dtype for i in indices}) > 1:
        indices = [cast(i, "int64") for i in indices]
    if len(values) > 1:
        values, indices = [concat(values, 0)], [concat(indices, 0)]
    return IndexedSlices(values[0], indices[0], convert_to_tensor(dense_shape, "int32"))


hooks.install(indexed_slices=_gradient_slices)
