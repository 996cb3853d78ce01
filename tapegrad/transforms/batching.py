"""The batching interpreter behind ``vmap``, ``vectorized_map`` and vectorized Jacobians.

A ``BatchedTensor`` carries a value whose axis 0 is the batch axis of one ``vmap`` level.
Code inside sees only the per-example shape. When an operation gets a batched input, the
dispatcher calls the primitive's batching rule once on the whole stacked value; a primitive
without a rule falls back to a Python loop, with a warning that names it.
"""
import contextlib
import warnings

import numpy as np

import tapegrad.ops as T
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor


class BatchedTensor(Tensor):
    """A tensor with a hidden leading batch axis (see module docstring)."""

    __slots__ = ("_val", "_level")
    _symbolic = True  # no single concrete value

    def __init__(self, val, level):
        self._val = val
        self._level = level

    @property
    def shape(self):
        return tuple(self._val.shape[1:])

    @property
    def dtype(self):
        return self._val.dtype

    @property
    def ndim(self):
        return len(self._val.shape) - 1

    def numpy(self):
        raise TypeError("A value inside vmap/vectorized_map has no single concrete value; "
                        "return it from the mapped function instead of calling .numpy().")

    def _scalar(self, kind):
        raise TypeError(f"{kind}() of a batched tensor inside vmap is not defined: the value "
                        "differs between examples. Use tf.where or tf.cond instead of Python "
                        "control flow.")

    def __repr__(self):
        return f"BatchedTensor(shape={self.shape}, dtype={self.dtype.name}, level={self._level})"


_warned = set()


def apply_batch_rule(prim, args, params, level):
    vals, flags = [], []
    for a in args:
        if getattr(a, "_level", 0) == level:
            vals.append(a._val)
            flags.append(True)
        else:
            vals.append(a)
            flags.append(False)
    out = None
    if prim.batch is not None:
        out = prim.batch(vals, flags, **params)
    if out is None:
        out = _loop(prim, vals, flags, params)
    return BatchedTensor(out, level)


def _loop(prim, vals, flags, params):
    if prim.name not in _warned:
        _warned.add(prim.name)
        warnings.warn(f"vmap: primitive '{prim.name}' has no batching rule for these inputs; "
                      "falling back to a Python loop over the batch.", stacklevel=4)
    n = next(v.shape[0] for v, f in zip(vals, flags) if f)
    outs = [prim.bind_raw(*[v[i] if f else v for v, f in zip(vals, flags)], **params)
            for i in range(n)]
    return T.stack(outs)


@contextlib.contextmanager
def batch_level():
    """Open a new vmap level; yields its number. Always restores the state."""
    STATE.batch_level += 1
    STATE.refresh()
    try:
        yield STATE.batch_level
    finally:
        STATE.batch_level -= 1
        STATE.refresh()


def batch_size_of(x, axis):
    return x.shape[axis]


def move_to_front(x, axis):
    if axis == 0:
        return x
    perm = [axis] + [i for i in range(x.ndim) if i != axis]
    return T.transpose(x, perm)


def move_from_front(x, axis):
    if axis == 0:
        return x
    nd = x.ndim
    axis = axis % nd
    perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, nd))
    return T.transpose(x, perm)


def unbatch(x, level, size):
    """The stacked value of ``x`` at ``level``; unbatched values are broadcast."""
    if getattr(x, "_level", 0) == level:
        return x._val
    x = T.convert_to_tensor(x) if not isinstance(x, Tensor) else x
    return T.broadcast_to(T.expand_dims(x, 0), (size,) + tuple(x.shape))


_ = np
