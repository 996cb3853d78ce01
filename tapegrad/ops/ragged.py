"""A minimal ``tf.RaggedTensor``: rows of different lengths, as ``tf.strings.split`` returns.

It holds ``flat_values`` (a Tensor) split into rows by ``row_splits`` (int64, row ``i`` is
``values[row_splits[i]:row_splits[i + 1]]``), possibly nested: the values may be another
RaggedTensor (a ragged rank above one). It is a container of concrete values: ``to_list``,
``to_tensor``, indexing rows, ``shape``, ``nrows`` and ``row_lengths``; no arithmetic.

>>> import tapegrad as tf
>>> rt = tf.RaggedTensor.from_row_splits([b"a", b"b", b"c"], [0, 2, 2, 3])
>>> rt.to_list()
[[b'a', b'b'], [], [b'c']]
>>> rt.to_tensor(default_value=b"-").numpy().tolist()
[[b'a', b'b'], [b'-', b'-'], [b'c', b'-']]
"""
import numpy as np

from tapegrad.core.shape import TensorShape
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError

__all__ = ["RaggedTensor"]


class RaggedTensor:
    """Rows of different lengths over flat values (see the module docstring)."""

    _tf_composite = True  # tf.is_tensor says True, as for TensorFlow's composite tensors

    def __init__(self, values, row_splits):
        splits = np.asarray(getattr(row_splits, "_value", row_splits), dtype=np.int64)
        n = values.nrows() if isinstance(values, RaggedTensor) else values.shape[0]
        if splits.ndim != 1 or not len(splits) or splits[0] != 0 or splits[-1] != n \
                or (np.diff(splits) < 0).any():
            raise InvalidArgumentError("Arguments to from_row_splits do not form a valid "
                                       "RaggedTensor: row_splits must start at 0, rise, and "
                                       f"end at the number of values ({n}); got "
                                       f"{splits.tolist()}")
        self._values, self._row_splits = values, splits

    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """The RaggedTensor whose row ``i`` is ``values[row_splits[i]:row_splits[i+1]]``."""
        if not isinstance(values, RaggedTensor):
            values = convert_to_tensor(values)
        return cls(values, row_splits)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        """The RaggedTensor whose rows have the lengths ``row_lengths``."""
        lengths = np.asarray(getattr(row_lengths, "_value", row_lengths), dtype=np.int64)
        return cls.from_row_splits(values, np.concatenate([[0], np.cumsum(lengths)]))

    # -- structure ---------------------------------------------------------------------------
    @property
    def values(self):
        """The values the rows split (a Tensor, or a RaggedTensor for nested rows)."""
        return self._values

    @property
    def flat_values(self):
        """The innermost values, a Tensor."""
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v._values
        return v

    @property
    def row_splits(self):
        return Tensor._wrap(self._row_splits.copy())

    @property
    def ragged_rank(self):
        return 1 + (self._values.ragged_rank if isinstance(self._values, RaggedTensor) else 0)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def shape(self):
        """``[nrows, None, ...]``: the ragged dimensions are unknown (None)."""
        inner = self._values.shape
        return TensorShape((self.nrows(), None) + tuple(inner[1:]))

    def nrows(self):
        return len(self._row_splits) - 1

    def row_lengths(self):
        return Tensor._wrap(np.diff(self._row_splits))

    def __len__(self):
        return self.nrows()

    def __getitem__(self, i):
        """Row ``i`` (a Tensor, or a RaggedTensor where the rows nest)."""
        if not isinstance(i, (int, np.integer)):
            raise TypeError("tapegrad's RaggedTensor takes an integer row index only; "
                            "use to_list() or to_tensor() for other reads.")
        n = self.nrows()
        if not -n <= i < n:
            raise IndexError(f"row {i} out of range for a RaggedTensor of {n} rows")
        lo, hi = self._row_splits[i % n], self._row_splits[i % n + 1]
        v = self._values
        if isinstance(v, RaggedTensor):
            return RaggedTensor(v._slice(lo, hi), v._row_splits[lo:hi + 1] - v._row_splits[lo])
        return Tensor._wrap(v._value[lo:hi])

    def _slice(self, lo, hi):
        """The values of rows lo..hi-1 (what a row of the ragged tensor above holds)."""
        v, a, b = self._values, self._row_splits[lo], self._row_splits[hi]
        if isinstance(v, RaggedTensor):
            return RaggedTensor(v._slice(a, b), v._row_splits[a:b + 1] - v._row_splits[a])
        return Tensor._wrap(v._value[a:b])

    # -- conversion --------------------------------------------------------------------------
    def to_list(self):
        """The rows as nested Python lists."""
        v = self._values
        inner = v.to_list() if isinstance(v, RaggedTensor) else v.numpy().tolist()
        s = self._row_splits
        return [inner[s[i]:s[i + 1]] for i in range(self.nrows())]

    def to_tensor(self, default_value=None, name=None, shape=None):
        """A dense Tensor, each row padded with ``default_value`` (zero, or b"") to the
        longest row's length."""
        v = self._values
        dense = v.to_tensor(default_value) if isinstance(v, RaggedTensor) else v
        arr = dense._value
        lengths = np.diff(self._row_splits)
        width = int(lengths.max()) if len(lengths) else 0
        if default_value is None:
            fill = b"" if arr.dtype.kind == "O" else 0
        else:
            fill = convert_to_tensor(default_value, dtype=arr.dtype)._value
        out = np.empty((self.nrows(), width) + arr.shape[1:], dtype=arr.dtype)
        out[...] = fill
        rows = np.repeat(np.arange(self.nrows()), lengths)
        cols = np.arange(len(rows)) - np.repeat(self._row_splits[:-1], lengths)
        out[rows, cols] = arr
        if shape is not None:
            out = _fit(out, [None if s is None else int(s) for s in shape], fill)
        return Tensor._wrap(out)

    def numpy(self):
        """The rows as an object array of 1-D arrays (TensorFlow's ``numpy()``)."""
        out = np.empty(self.nrows(), dtype=object)
        for i in range(self.nrows()):
            row = self[i]
            out[i] = row.numpy() if isinstance(row, RaggedTensor) else row._value.copy()
        return out

    def __repr__(self):
        return f"<tf.RaggedTensor {self.to_list()}>"

    __str__ = __repr__


def _fit(arr, shape, fill):
    """``arr`` cut or padded (with ``fill``) to ``shape`` (None keeps a dimension)."""
    want = tuple(arr.shape[i] if s is None else s for i, s in enumerate(shape))
    out = np.empty(want, dtype=arr.dtype)
    out[...] = fill
    common = tuple(slice(0, min(a, b)) for a, b in zip(arr.shape, want))
    out[common] = arr[common]
    return out
