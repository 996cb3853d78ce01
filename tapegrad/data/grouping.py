"""``Dataset.scan`` and ``Dataset.group_by_window`` (also in ``tf.data.experimental``):
stages with state carried across elements. As every stage here, they pull one element at a
time; user functions run eagerly on each element, with no tape recording them.

``group_by_window`` holds one list of elements per key; a key's window is reduced when it
is full, and at the end of the input the unfinished windows are reduced in increasing key
order (TensorFlow keeps its groups in an ordered map, so its order is the same).
"""
import numpy as np

from tapegrad.core.tensor import Tensor
from tapegrad.data import structure as data_structure
from tapegrad.data.sources import UNKNOWN
from tapegrad.data.transforms import Stage, call, probe
from tapegrad.data.windows import Rows
from tapegrad.errors import InvalidArgumentError


class _Invalid(TypeError):
    """A user function's output of the wrong kind: raised when the stage is made, as
    TensorFlow's tracing does, where the function runs on stand-ins."""


def check(fn, *args):
    """Run ``fn(*args)`` (on stand-ins) for its ``_Invalid`` errors only: any other error
    means the function cannot take stand-ins, and its elements will tell."""
    try:
        with np.errstate(all="ignore"):
            fn(*args)
    except _Invalid:
        raise
    except Exception:
        pass


def _standin(spec):
    return data_structure.pack(spec, [
        Tensor._wrap(np.zeros([2 if d is None else d for d in s.shape], s.dtype))
        for s in data_structure.flatten(spec)])


def _spec(x):
    try:
        return repr(data_structure.spec_of(x))
    except (TypeError, ValueError):
        return type(x).__name__


def _types(x):
    return data_structure.map_leaves(lambda t: t.dtype, x)


class Scan(Stage):
    kind = "_ScanDataset"

    def __init__(self, input, initial_state, fn):
        super().__init__(input)
        if not callable(fn):
            raise TypeError(f"`scan_func` must be callable, got {fn!r}.")
        self.state = data_structure.to_element(initial_state)
        self.fn, self._spec = fn, None
        if all(s.shape is not None for s in data_structure.flatten(input.spec())):
            check(self._step, self.state, _standin(input.spec()))

    def _step(self, state, e):
        out = data_structure.to_element(call(self.fn, (state, e)), from_function=True)
        if not isinstance(out, tuple) or len(out) != 2:
            raise _Invalid("Invalid `scan_func`. `scan_func` should return a pair consisting "
                            "of new state and the output value but its return type is "
                            f"{_spec(out)}.")
        new, value = out
        try:
            same = _types(new) == _types(self.state)
        except (TypeError, ValueError):
            same = False
        if not same:  # the structure and dtypes of the state are fixed (TensorFlow's rule)
            raise _Invalid("Invalid `scan_func`. The element types for the new state must "
                            f"match the initial state. Expected {_types(self.state)}, got "
                            f"{_types(new)}.")
        return new, value

    def __iter__(self):
        state = self.state
        for e in self.input:
            state, value = self._step(state, e)
            yield value

    def spec(self):
        if self._spec is None:
            state_spec = data_structure.spec_of(self.state)
            self._spec = probe(lambda s, e: self._step(s, e)[1],
                               (state_spec, self.input.spec()))
            if self._spec is None:  # the function reads values: the first output's spec
                for value in self:
                    self._spec = data_structure.spec_of(value)
                    break
                else:
                    raise ValueError("The element spec of an empty scanned dataset whose "
                                     "function cannot run on placeholder zeros is unknown.")
        return self._spec


def _int64_scalar(value, what):
    value = data_structure.to_element(value)
    if not isinstance(value, Tensor) or value.dtype != np.int64 or value.ndim != 0:
        raise ValueError(f"Invalid `{what}`. `{what}` must return a single tf.int64 scalar "
                         f"tensor but its return type is {_spec(value)}.")
    return value


class GroupByWindow(Stage):
    kind = "_GroupByWindowDataset"

    def __init__(self, input, key_func, reduce_func, window_size_func, dataset_type):
        super().__init__(input)
        self.key_func, self.reduce_func = key_func, reduce_func
        self.window_size_func, self.dataset_type = window_size_func, dataset_type
        self._spec = None
        check(self._reduce, Tensor._wrap(np.int64(0)), [])

    def _reduce(self, key, rows):
        window = self.dataset_type(_Elements(rows, self.input.spec()))
        out = call(self.reduce_func, (key, window))
        if not isinstance(out, self.dataset_type):
            raise _Invalid("Invalid `reduce_func`. `reduce_func` must return a single "
                            "`tf.data.Dataset` object but its return type is "
                            f"{_spec(data_structure.to_element(out))}.")
        return out

    def __iter__(self):
        groups = {}  # key -> (its int64 tensor, the elements of its open window)
        for e in self.input:
            key = _int64_scalar(call(self.key_func, e), "key_func")
            k = int(key._value)
            if k not in groups:
                groups[k] = (key, [])
            size = _int64_scalar(call(self.window_size_func, key), "window_size_func")
            if int(size._value) <= 0:
                raise InvalidArgumentError("Window size must be greater than zero, but got "
                                           f"{int(size._value)}.")
            rows = groups[k][1]
            rows.append(e)
            if len(rows) >= int(size._value):
                del groups[k]
                yield from self._reduce(key, rows)
        for k in sorted(groups):
            key, rows = groups[k]
            yield from self._reduce(key, rows)

    def spec(self):
        # the reduce function's dataset, on an empty window: its element spec
        if self._spec is None:
            key = Tensor._wrap(np.int64(0))
            self._spec = self._reduce(key, []).element_spec
        return self._spec

    def cardinality(self):
        return UNKNOWN


class _Elements(Rows):
    """A finite list of whole elements (a window of one key) as a dataset node."""
    kind = "_GroupWindow"
