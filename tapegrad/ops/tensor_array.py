"""``tf.TensorArray``: a list of tensors of one dtype and shape, written by index and read
back one by one or stacked, as TensorFlow 2's eager TensorArray does (its errors too).

Each element is an ordinary tensor, so a tape differentiates ``stack`` / ``read`` /
``gather`` through the writes, and a Python loop under ``tf.function`` traces like any other
code. Inside a staged loop (``tf.while_loop``, or a converted loop over a symbolic range) the
index is symbolic: the array then holds one tensor of shape ``(size, *element_shape)``
(zeros where nothing was written), written with ``tensor_scatter_nd_update`` and read with
``gather``, which raise for an index out of range when the program runs. It is carried
through the loop as that tensor (``_tg_components`` / ``_tg_rebuild``: the control-flow
layer's protocol for such objects), so its size and element shape must be known there.

>>> import tapegrad as tf
>>> ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
>>> for i in range(3):
...     ta = ta.write(i, float(i) ** 2)
>>> ta.stack().numpy().tolist(), ta.size().numpy().item()
([0.0, 1.0, 4.0], 3)
"""
from tapegrad.core import dtypes as _dt
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError, OutOfRangeError
from tapegrad.ops import array_ops, scatter_ops


def _index(i):
    return int(i.numpy()) if isinstance(i, Tensor) else int(i)


def _symbolic(i):
    return isinstance(i, Tensor) and getattr(i, "_symbolic", False)


def _rows(i):
    """Index tensor(s) as the ``(n, 1)`` indices of a scatter."""
    i = convert_to_tensor(i)
    return array_ops.reshape(array_ops.cast(i, "int32"), (-1, 1))


class TensorArray:
    """``TensorArray(dtype, size=None, dynamic_size=None, element_shape=None, ...)``."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        if size is None and not dynamic_size:
            raise ValueError("Size must be declared for TensorArrays when eager execution "
                             "is enabled.")
        self._dtype = _dt.as_dtype(dtype)
        self._dynamic = bool(dynamic_size)
        self._items = [None] * (_index(size) if size is not None else 0)
        self._infer_shape = infer_shape
        self._shape = None if element_shape is None else tuple(element_shape)
        self._buffer = None  # (size, *element_shape) once an index was symbolic

    # -- the dense form, for symbolic indices and staged loops -----------------------------
    def _dense(self):
        """The elements stacked (zeros where nothing was written); becomes the array."""
        if self._buffer is None:
            if self._shape is None or not self._items:
                raise TypeError(
                    "A TensorArray written or carried with a symbolic index (inside a "
                    "staged loop) needs its size and element shape before the loop: give "
                    "size= and element_shape= (or write an element first).")
            self._buffer = array_ops.stack([self.read(i) for i in range(len(self._items))])
            self._items = None
        return self._buffer

    def _tg_components(self):
        """The tensors a staged loop carries for this array."""
        return [self._dense()]

    def _tg_rebuild(self, components):
        """The array whose dense form is ``components[0]`` (a staged loop's state)."""
        new = TensorArray.__new__(TensorArray)
        new.__dict__.update(self.__dict__)
        new._buffer, new._items = components[0], None
        return new

    @property
    def dtype(self):
        return self._dtype

    @property
    def element_shape(self):
        return self._shape

    @property
    def dynamic_size(self):
        return self._dynamic

    def size(self, name=None):
        n = len(self._items) if self._buffer is None else self._buffer.shape[0]
        return convert_to_tensor(n, dtype="int32")

    def _value(self, index, value):
        if isinstance(value, Tensor) and value.dtype != self._dtype:
            raise InvalidArgumentError(f"TensorArray dtype is {self._dtype.name} but Op is "
                                       f"trying to write dtype {value.dtype.name} ")
        value = convert_to_tensor(value, dtype=self._dtype)
        shape = tuple(value.shape)
        if self._shape is not None and self._infer_shape and shape != self._shape:
            raise ValueError(f"Incompatible shape for value ({shape}), expected "
                             f"({self._shape})")
        if self._infer_shape:
            self._shape = shape
        return value

    def write(self, index, value, name=None):
        """Set element ``index`` (a later write replaces it, as in eager TensorFlow);
        returns the array, to be used as TensorFlow's ``ta = ta.write(i, x)``."""
        if self._buffer is not None or _symbolic(index):
            value = self._value(index, value)
            buf = self._dense()
            self._buffer = scatter_ops.tensor_scatter_nd_update(
                buf, _rows(index), array_ops.expand_dims(value, 0))
            return self
        index = _index(index)
        if index < 0:
            raise OutOfRangeError(f"Writing to negative indices (index {index}) is not "
                                  "allowed.")
        if index >= len(self._items):
            if not self._dynamic:
                raise OutOfRangeError(f"Tried to write to index {index} but array is not "
                                      f"resizeable and size is: {len(self._items)} ")
            self._items.extend([None] * (index + 1 - len(self._items)))
        self._items[index] = self._value(index, value)
        return self

    def read(self, index, name=None):
        """Element ``index``: zeros of the element shape where nothing was written."""
        if self._buffer is not None or _symbolic(index):
            return array_ops.gather(self._dense(), index)
        index = _index(index)
        if not 0 <= index < len(self._items):
            raise OutOfRangeError(f"Tried to read from index {index} but array size is: "
                                  f"{len(self._items)} ")
        item = self._items[index]
        if item is None:
            if self._shape is None:
                raise InvalidArgumentError(f"Could not read from TensorArray index {index}. "
                                           "Furthermore, the element shape is not fully "
                                           "defined: None. It is possible you are working "
                                           "with a resizeable TensorArray and stop_gradients "
                                           "is not allowing the gradients to be written. If "
                                           "you set the full element_shape property on the "
                                           "forward TensorArray, the proper all-zeros "
                                           "tensor will be returned instead of incurring "
                                           "this error.")
            return array_ops.zeros(self._shape, dtype=self._dtype)
        return item

    def stack(self, name=None):
        """The elements stacked along a new first axis."""
        if self._buffer is not None:
            return self._buffer
        if not self._items:
            return array_ops.zeros((0,) + (self._shape or ()), dtype=self._dtype)
        return array_ops.stack([self.read(i) for i in range(len(self._items))])

    def gather(self, indices, name=None):
        if self._buffer is not None or _symbolic(indices):
            return array_ops.gather(self._dense(), indices)
        idx = indices.numpy().tolist() if isinstance(indices, Tensor) else list(indices)
        if not idx:
            return array_ops.zeros((0,) + (self._shape or ()), dtype=self._dtype)
        return array_ops.stack([self.read(i) for i in idx])

    def concat(self, name=None):
        """The elements joined along their first axis."""
        if self._buffer is not None:
            b = self._buffer
            return array_ops.reshape(b, (b.shape[0] * b.shape[1],) + tuple(b.shape[2:]))
        if not self._items:
            return array_ops.zeros((0,) + (self._shape or ())[1:], dtype=self._dtype)
        return array_ops.concat([self.read(i) for i in range(len(self._items))], 0)

    def unstack(self, value, name=None):
        """Write each row of ``value`` to the element of its index."""
        value = convert_to_tensor(value, dtype=self._dtype)
        return self.scatter(list(range(value.shape[0])), value)

    def scatter(self, indices, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        if self._buffer is not None or _symbolic(indices):
            self._buffer = scatter_ops.tensor_scatter_nd_update(self._dense(), _rows(indices),
                                                                value)
            return self
        idx = indices.numpy().tolist() if isinstance(indices, Tensor) else list(indices)
        for k, i in enumerate(idx):
            self.write(i, value[k])
        return self

    def identity(self):
        return self

    def close(self, name=None):
        self._items, self._buffer = [], None
