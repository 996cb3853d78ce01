"""``tf.TensorArray``: a list of tensors of one dtype and shape, written by index and read
back one by one or stacked, as TensorFlow 2's eager TensorArray does (its errors too).

Each element is an ordinary tensor, so a tape differentiates ``stack`` / ``read`` /
``gather`` through the writes, and a Python loop under ``tf.function`` traces like any other
code (a loop over a symbolic ``tf.range`` needs ``tf.while_loop``: tapegrad has no
AutoGraph).

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
from tapegrad.ops import array_ops


def _index(i):
    return int(i.numpy()) if isinstance(i, Tensor) else int(i)


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
        return convert_to_tensor(len(self._items), dtype="int32")

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
        if not self._items:
            return array_ops.zeros((0,) + (self._shape or ()), dtype=self._dtype)
        return array_ops.stack([self.read(i) for i in range(len(self._items))])

    def gather(self, indices, name=None):
        idx = indices.numpy().tolist() if isinstance(indices, Tensor) else list(indices)
        if not idx:
            return array_ops.zeros((0,) + (self._shape or ()), dtype=self._dtype)
        return array_ops.stack([self.read(i) for i in idx])

    def concat(self, name=None):
        """The elements joined along their first axis."""
        if not self._items:
            return array_ops.zeros((0,) + (self._shape or ())[1:], dtype=self._dtype)
        return array_ops.concat([self.read(i) for i in range(len(self._items))], 0)

    def unstack(self, value, name=None):
        """Write each row of ``value`` to the element of its index."""
        value = convert_to_tensor(value, dtype=self._dtype)
        return self.scatter(list(range(value.shape[0])), value)

    def scatter(self, indices, value, name=None):
        value = convert_to_tensor(value, dtype=self._dtype)
        idx = indices.numpy().tolist() if isinstance(indices, Tensor) else list(indices)
        for k, i in enumerate(idx):
            self.write(i, value[k])
        return self

    def identity(self):
        return self

    def close(self, name=None):
        self._items = []
