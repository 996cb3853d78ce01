"""The batching interpreter behind ``vmap``, ``vectorized_map`` and vectorized Jacobians.

A ``BatchedTensor`` carries a value whose axis 0 is the batch axis of one ``vmap`` level.
Code inside sees only the per-example shape. When an operation gets a batched input, the
dispatcher calls the primitive's batching rule once on the whole stacked value; a primitive
without a rule falls back to a Python loop, with a warning that names it.

Levels nest: the value of a level-2 ``BatchedTensor`` may itself be a level-1 one, so
``vmap(vmap(f))`` and ``vmap(jacrev(f))`` work by peeling one level per rule application.
"""
import warnings


from tapegrad.primitives.api import broadcast_to, convert_to_tensor, expand_dims, stack, transpose
from tapegrad.core.shape import TensorShape
from tapegrad.core.state import IDLE, STATE, Interpreter, switch
from tapegrad.core.tensor import Tensor
from tapegrad.util.frames import user_frame

_new = object.__new__
_tnew = tuple.__new__


class BatchedTensor(Tensor):
    """A tensor with a hidden leading batch axis (see module docstring).

    ``shape``, ``dtype`` and ``ndim`` are the per-example facts, stored once: the batching
    rules and the derivative engine read them for every operation.
    """

    __slots__ = ("_val", "_level", "shape", "dtype", "ndim")
    _symbolic = True  # no single concrete value

    def __init__(self, val, level):
        self._val = val
        self._level = level
        self.shape = _tnew(TensorShape, val.shape[1:])
        self.dtype = val.dtype
        self.ndim = len(self.shape)

    _raw_shape = property(lambda self: self.shape)

    def numpy(self):
        raise TypeError("A value inside vmap/vectorized_map has no single concrete value; "
                        "return it from the mapped function instead of calling .numpy().")

    def __array__(self, dtype=None, copy=None):
        self.numpy()

    def _scalar(self, kind):
        raise TypeError(f"{kind}() of a batched tensor inside vmap is not defined: the value "
                        "differs between examples. Use tf.where or tf.cond instead of Python "
                        "control flow.")

    def __repr__(self):
        return f"BatchedTensor(shape={self.shape}, dtype={self.dtype.name}, level={self._level})"

    __str__ = __repr__


def _batched(val, level):
    b = _new(BatchedTensor)
    b._val = val
    b._level = level
    shape = val.shape
    b.shape = _tnew(TensorShape, shape[1:])
    b.dtype = val.dtype
    b.ndim = len(shape) - 1
    return b


# -- levels -------------------------------------------------------------------------------------
class Batcher(Interpreter):
    """One vmap level on the interpreter stack (core/state.py).

    Its ``level`` is its rank among the batchers on the stack (1 for the outermost); a
    ``BatchedTensor`` carries the level whose batch axis it holds. ``fallback=False`` makes a
    primitive without a batching rule an error instead of a Python loop; ``warn=False``
    silences the loop's warning.
    """

    __slots__ = ("level", "fallback", "warn")
    computes = batches = True

    def __init__(self, level, fallback=True, warn=True):
        self.level, self.fallback, self.warn = level, fallback, warn

    def process(self, prim, args, params):
        """Apply ``prim``'s batching rule if an input is batched at this level or above (the
        levels follow the data: the highest one among the inputs is peeled first): the
        rule runs once on the values batched at that level (a leading batch axis)."""
        level = 0
        for a in args:
            lv = a._level  # 0 for a tensor of no vmap level
            if lv > level:
                level = lv
        if level < self.level:
            return None
        vals, flags = [], []
        nested = False
        for a in args:
            if type(a) is BatchedTensor:
                if a._level == level:
                    a = a._val
                    vals.append(a)
                    flags.append(True)
                    if type(a) is BatchedTensor:
                        nested = True
                    continue
                nested = True
            vals.append(a)
            flags.append(False)
        st = STATE.stack
        rule = prim.batch
        # The rule's own operations work on plain arrays. When no tape or tracer can see
        # them (no interpreter reads: readers), and no outer vmap level is among the inputs,
        # they run with the stack empty: the dispatcher's fast path. This is
        # ``interpreters(IDLE)`` as two calls of ``switch``, because a ``with`` costs about
        # 1 µs per operation here.
        idle = not (nested or st.readers)
        if idle:
            switch(st, IDLE)
        try:
            out = rule(vals, flags, **params) if rule is not None else None
            if out is None:
                batchers = st.batchers
                out = _loop(prim, vals, flags, params, level,
                            batchers[level - 1] if level <= len(batchers) else None)
        finally:
            if idle:
                switch(IDLE, st)
        b = _new(BatchedTensor)  # _batched(out, level), inlined: this runs for every operation
        b._val = out
        b._level = level
        shape = out._raw_shape
        b.shape = _tnew(TensorShape, shape[1:])
        b.dtype = out.dtype
        b.ndim = len(shape) - 1
        return b


class batch_level:
    """Open a new vmap level: ``with batch_level() as lvl:``. Always restores the state.

    ``fallback=False`` makes a primitive without a batching rule an error instead of a
    Python loop; ``warn=False`` silences the loop's warning.
    """

    __slots__ = ("fallback", "warn", "batcher")

    def __init__(self, fallback=True, warn=True):
        self.fallback, self.warn = fallback, warn

    def __enter__(self):
        st = STATE
        self.batcher = Batcher(st.stack.batch_level + 1, self.fallback, self.warn)
        st.push(self.batcher)
        return self.batcher.level

    def __exit__(self, *exc):
        STATE.remove(self.batcher)
        return False


# -- the loop without a rule ------------------------------------------------------------------
def _loop(prim, vals, flags, params, level=None, batcher=None):
    """The fallback: apply ``prim`` example by example and stack the results
    (``batcher``: the level's interpreter, whose flags say whether it may and warns)."""
    b = batcher
    if b is not None and not b.fallback:
        raise ValueError(f"vectorized_map: primitive '{prim.name}' has no batching rule for "
                         "these inputs, and fallback_to_while_loop is False.")
    if b is None or b.warn:
        warnings.warn(f"vmap: primitive '{prim.name}' has no batching rule for these inputs; "
                      "falling back to a Python loop over the batch.",
                      stacklevel=_user_stacklevel())
    n = next(v.shape[0] for v, f in zip(vals, flags) if f)
    outs = [prim.bind_raw(*[v[i] if f else v for v, f in zip(vals, flags)], **params)
            for i in range(n)]
    return stack(outs)


def _user_stacklevel():
    """The stacklevel of the first caller outside tapegrad, so the warning points there."""
    return user_frame(2)[1] - 1


# -- moving the batch axis ----------------------------------------------------------------------
def move_to_front(x, axis):
    """``x`` with axis ``axis`` (non-negative) moved to position 0."""
    if axis == 0:
        return x
    perm = (axis,) + tuple(i for i in range(x.ndim) if i != axis)
    return transpose(x, perm)


def move_from_front(x, axis):
    """``x`` with axis 0 moved to position ``axis`` (may be negative: counted in the result)."""
    nd = x.ndim
    axis = axis % nd if nd else 0
    if axis == 0:
        return x
    perm = tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, nd))
    return transpose(x, perm)


def unbatch(x, level, size):
    """The stacked value of ``x`` at ``level``; unbatched values are broadcast."""
    if type(x) is BatchedTensor and x._level == level:
        return x._val
    x = convert_to_tensor(x) if not isinstance(x, Tensor) else x
    return broadcast_to(expand_dims(x, 0), (size,) + tuple(x.shape))


def is_batched_at(x, level):
    return type(x) is BatchedTensor and x._level == level


def batch_size_of(x, axis):
    return x.shape[axis]

