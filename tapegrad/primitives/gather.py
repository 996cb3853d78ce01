"""Selecting primitives: ``getitem`` with a static NumPy index and ``take`` along an axis
with an integer tensor, and their transposes, ``index_add`` and ``take_add`` (scatter-adds).

All four are linear in the array they move, so their JVP is the primitive applied to the
tangent and their VJP the other one of the pair.
"""
import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.primitives.bounds import gather_message
from tapegrad.primitives.api import arange, broadcast_to, floormod, reshape, transpose
from tapegrad.core.dispatch import Primitive
from tapegrad.primitives.indexing import index_shape
from tapegrad.primitives.params import check_axis, check_int, check_shape, fail
from tapegrad.primitives.families import linear_jvp, xp


# ---- getitem (static index) and its transpose, index_add ------------------------------------
class Index:
    """A static NumPy index (ints, slices, None, Ellipsis, integer or boolean arrays).

    Wrapped so that it compares and hashes by value, which the graph passes need.
    """

    __slots__ = ("key", "_r", "_h")

    def __init__(self, key):
        self.key = key if isinstance(key, tuple) else (key,)
        self._r = self._text()  # compared on every replayed tape entry: made once
        self._h = hash(self._r)

    def __hash__(self):
        return self._h

    def __eq__(self, other):
        return isinstance(other, Index) and self._r == other._r

    def __repr__(self):
        return self._r

    def _text(self):
        parts = []
        for k in self.key:
            if isinstance(k, np.ndarray):
                parts.append(f"np.array({k.tolist()!r}, dtype='{k.dtype}')")
            elif isinstance(k, slice):
                parts.append(f"slice({k.start}, {k.stop}, {k.step})")
            elif k is Ellipsis:
                parts.append("Ellipsis")
            else:
                parts.append(repr(k))
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def shifted(self):
        """The same index applied behind a leading batch axis."""
        return Index((slice(None),) + self.key)

    def is_basic(self):
        return not any(isinstance(k, np.ndarray) for k in self.key)

    def names_each_once(self, shape):
        """True if, into an array of ``shape``, this index names no element twice (so a
        scatter through it is a plain assignment, with no sums to associate)."""
        if not any(isinstance(k, np.ndarray) and k.dtype != bool for k in self.key):
            return True
        return _names_elements_once(self.key, tuple(shape))


_UNIQUE = {}  # id(key) -> (key, shape, names each element at most once, flat positions)


def _scatter_plan(key, shape):
    """``(once, flat)`` for ``key`` into ``shape``, worked out once per key: whether it never
    names an element twice (slices, integers and masks never do; integer arrays may), and
    (where it does not, and holds one integer or integer array per axis) the flat positions
    it names, else None."""
    hit = _UNIQUE.get(id(key))
    if hit is not None and hit[0] is key and hit[1] == shape:
        return hit[2], hit[3]
    once, flat = True, None
    if any(isinstance(k, np.ndarray) and k.dtype != bool for k in key):
        count = np.zeros(shape, np.int32)
        xp.add.at(count, key, 1)  # (raises for an index out of bounds, before anything is kept)
        once = bool(count.max(initial=0) <= 1)
        flat = _flat_positions(key, shape) if once else None
    if len(_UNIQUE) > 1024:
        _UNIQUE.clear()
    _UNIQUE[id(key)] = (key, shape, once, flat)  # holding the key keeps its id from being reused
    return once, flat


def _names_elements_once(key, shape):
    """True if integer-array ``key`` never names an element twice (checked once per key)."""
    return _scatter_plan(key, shape)[0]


def _flat_positions(key, shape):
    """The positions in ``shape`` raveled that an in-bounds key of integers and integer arrays,
    one per axis, names (in the key's broadcast shape); None for any other key, or where
    that would be larger than the key's arrays (broadcast ones)."""
    if len(key) != len(shape) or not all(
            (isinstance(k, (int, np.integer)) and not isinstance(k, bool)) or
            (isinstance(k, np.ndarray) and k.dtype.kind in "iu") for k in key):
        return None
    parts = np.broadcast_arrays(*[np.asarray(k) for k in key])
    if parts[0].size > sum(np.size(k) for k in key):
        return None
    flat = np.zeros(parts[0].shape, np.intp)
    for a, n in zip(parts, shape):
        flat *= n
        flat += np.where(a < 0, a + n, a)  # NumPy's negative indices count from the end
    flat.flags.writeable = False
    return flat


def _index_add(g, index, shape):
    # generated code passes the key itself (the repr of an Index is a tuple); the plan is
    # looked up here first, without the call (a compressed Hessian makes three scatters)
    key = index.key if isinstance(index, Index) else index
    hit = _UNIQUE.get(id(key))
    if hit is not None and hit[0] is key and hit[1] == shape:
        once, flat = hit[2], hit[3]
    else:
        once, flat = _scatter_plan(key, tuple(shape))
    out = xp.zeros(shape, dtype=g.dtype)
    if flat is not None:
        # one index array into the raveled result: the same elements get the same values,
        # 2-4x faster than NumPy's several-array assignment (a compressed Hessian's scatter)
        out.reshape(-1)[flat] = g
    elif once:
        out[key] = g  # each element named at most once: a plain (fast) assignment
    else:
        xp.add.at(out, key, g)  # integer arrays that name an element twice: accumulate
    return out


def _check_index(prim, index, shape):
    if not isinstance(index, Index):
        fail(prim, "index", f"must be an Index, got {type(index).__name__}")
    try:
        return index_shape(shape, index.key)
    except (TypeError, IndexError, ValueError) as e:
        fail(prim, "index", f"does not index an array of shape {tuple(shape)}: {e}")


def _index_add_validate(g, *, index, shape):
    shape = check_shape("index_add", "shape", shape)
    if _check_index("index_add", index, shape) != tuple(g.shape):
        fail("index_add", "index", f"selects {index_shape(shape, index.key)} of {shape}, "
                                   f"not the shape {tuple(g.shape)} of its input")


def _moved_rank(key):
    """How many leading axes NumPy gives the advanced indices of ``key`` when it moves them.

    NumPy puts the axes of the broadcast advanced indices (arrays, and ints alongside them)
    first when those indices are not next to each other in the key; otherwise they stay in
    place and this is 0. Behind a batch axis they would then land in front of it.
    """
    arrays = [k for k in key if isinstance(k, np.ndarray)]
    if not arrays:
        return 0
    pos = [i for i, k in enumerate(key) if isinstance(k, (np.ndarray, int, np.integer))]
    if pos[-1] - pos[0] + 1 == len(pos):
        return 0
    # a boolean mask stands for its nonzero() index arrays: one axis of nnz entries
    shapes = [(int(np.count_nonzero(k)),) if k.dtype == bool else k.shape for k in arrays]
    return len(np.broadcast_shapes(*shapes))


def _getitem_batch(args, batched, *, index):
    out = getitem_p.bind_raw(args[0], index=index.shifted())
    r = _moved_rank(index.key)
    if r:  # the batch axis landed behind the moved advanced axes: bring it back to the front
        out = transpose(out, (r,) + tuple(range(r)) + tuple(range(r + 1, out.ndim)))
    return out


def _index_add_batch(args, batched, *, index, shape):
    g = args[0]
    r = _moved_rank(index.key)
    if r:  # the shifted index expects the batch axis where getitem's batch rule found it
        g = transpose(g, tuple(range(1, r + 1)) + (0,) + tuple(range(r + 1, g.ndim)))
    return index_add_p.bind_raw(g, index=index.shifted(), shape=(args[0].shape[0],) + tuple(shape))


def _getitem(x, index):
    out = x[index.key]
    if type(out) is not np.ndarray and x.dtype.kind == "O":
        out = np.array(out, dtype=object)  # one string: a 0-d array, not the bytes itself
    return out


getitem_p = Primitive(
    "getitem", _getitem, nin=1,
    abstract=lambda x, *, index: (index_shape(x.shape, index.key), x.dtype),
    validate=lambda x, *, index: _check_index("getitem", index, x.shape),
    vjp=(lambda g, ans, x, *, index: index_add_p.bind_raw(g, index=index, shape=tuple(x.shape)),),
    jvp=linear_jvp("getitem"), batch=_getitem_batch,
    emit="{0}[{index}]", sparsity="copy", complex="real_linear")

index_add_p = Primitive(
    "index_add", _index_add, nin=1, fresh=True,
    abstract=lambda x, *, index, shape: (tuple(shape), x.dtype), validate=_index_add_validate,
    vjp=(lambda g, ans, x, *, index, shape: getitem_p.bind_raw(g, index=index),),
    jvp=linear_jvp("index_add"), batch=_index_add_batch,
    emit="_index_add({0}, {index}, {shape})", sparsity="scatter", transposes="getitem",
    complex="real_linear")


# ---- take: gather along an axis with a (possibly traced) integer tensor --------------------
def _take_add(g, indices, axis, size):
    shape = list(g.shape[:axis]) + [size] + list(g.shape[axis + np.ndim(indices):])
    out = xp.zeros(shape, dtype=g.dtype)
    idx = (slice(None),) * axis + (indices,)
    xp.add.at(out, idx, g)
    return out


def _check_indices(prim, i):
    # NumPy takes integer indices it can cast to intp safely: no bools, no uint64
    if i.dtype.kind not in "iu" or (i.dtype.kind == "u" and i.dtype.itemsize >= 8):
        raise TypeError(f"{prim}: indices must be integers, got {i.dtype.name}")


def _take_abstract(x, i, *, axis):
    _check_indices("take", i)
    return tuple(x.shape[:axis]) + tuple(i.shape) + tuple(x.shape[axis + 1:]), x.dtype


def _take_validate(x, i, *, axis):
    check_axis("take", "axis", axis, x.ndim)
    if x.shape[axis] == 0 and 0 not in i.shape:
        fail("take", "axis", f"{axis} has size 0: there is nothing to take")


def _take_add_abstract(g, i, *, axis, size):
    _check_indices("take_add", i)
    return tuple(g.shape[:axis]) + (size,) + tuple(g.shape[axis + i.ndim:]), g.dtype


def _take_add_validate(g, i, *, axis, size):
    check_int("take_add", "size", size, 0)
    check_int("take_add", "axis", axis, 0, g.ndim - i.ndim)
    if tuple(g.shape[axis:axis + i.ndim]) != tuple(i.shape):
        fail("take_add", "axis", f"{axis}: the input {tuple(g.shape)} does not hold the "
                                 f"indices' shape {tuple(i.shape)} there")
    if size == 0 and 0 not in i.shape:
        fail("take_add", "size", "is 0: no index can be in range")


def _fold_batch(i, n):
    """Indices of each example into a batch folded into one axis of length B * n."""
    b = i.shape[0]
    offsets = reshape(arange(b, i.dtype) * n, (b,) + (1,) * (i.ndim - 1))
    return floormod(i, n) + offsets


def _take_batch(args, batched, *, axis):
    x, i = args
    bx, bi = batched
    if bx and not bi:
        return take_p.bind_raw(x, i, axis=axis + 1)
    if not bx:  # shared params, per-example indices: the batch axis appears at ``axis``
        out = take_p.bind_raw(x, i, axis=axis)
        return transpose(out, (axis,) + tuple(a for a in range(out.ndim) if a != axis))
    # both batched: fold the batch into the gathered axis and offset each example's indices
    b, n, ni = x.shape[0], x.shape[axis + 1], i.ndim - 1
    xm = transpose(x, (0, axis + 1) + tuple(a for a in range(1, x.ndim) if a != axis + 1))
    out = take_p.bind_raw(reshape(xm, (b * n,) + tuple(xm.shape[2:])), _fold_batch(i, n),
                          axis=0)  # (B, *i, x's axes before ``axis``, x's axes after it)
    perm = ((0,) + tuple(range(ni + 1, ni + 1 + axis)) + tuple(range(1, ni + 1))
            + tuple(range(ni + 1 + axis, out.ndim)))
    return transpose(out, perm)


def _take_add_batch(args, batched, *, axis, size):
    g, i = args
    bg, bi = batched
    if bg and not bi:
        return take_add_p.bind_raw(g, i, axis=axis + 1, size=size)
    if not bg:
        g = broadcast_to(g, (i.shape[0],) + tuple(g.shape))
    # per-example indices: the transpose of the folded take above
    b, ni = g.shape[0], i.ndim - 1
    perm = ((0,) + tuple(range(axis + 1, axis + 1 + ni)) + tuple(range(1, axis + 1))
            + tuple(range(axis + 1 + ni, g.ndim)))
    gm = transpose(g, perm)  # (B, *i, g's axes before ``axis``, the rest)
    out = take_add_p.bind_raw(gm, _fold_batch(i, size), axis=0, size=b * size)
    out = reshape(out, (b, size) + tuple(out.shape[1:]))
    return transpose(out, (0,) + tuple(range(2, axis + 2)) + (1,) + tuple(
        range(axis + 2, out.ndim)))


_UNSIGNED = {np.dtype(t): np.dtype(t.replace("int", "uint")) for t in ("int8", "int16", "int32")}


def _take(x, i, axis):
    """``np.take`` that refuses an index outside ``[0, n)`` with TensorFlow's error (NumPy
    would count a negative one from the end): narrow signed indices are read as unsigned,
    so that a negative one is past the end, for free; int64 ones cost one ``min``."""
    u = _UNSIGNED.get(i.dtype)
    try:
        if u is not None:
            return xp.take(x, i.view(u), axis=axis)
        if i.dtype.kind == "i" and i.size and i.min() < 0:
            raise IndexError
        return xp.take(x, i, axis=axis)
    except IndexError:
        raise InvalidArgumentError(gather_message(i, x.shape[axis])) from None


take_p = Primitive(
    "take", _take, nin=2, fresh=True,
    abstract=_take_abstract, validate=_take_validate,
    vjp=(lambda g, ans, x, i, *, axis: take_add_p.bind_raw(g, i, axis=axis, size=x.shape[axis]),
         None),
    jvp=(lambda t, ans, x, i, *, axis: take_p.bind_raw(t, i, axis=axis), None),
    batch=_take_batch, emit="_take({0}, {1}, {axis})", sparsity="copy",
    complex="real_linear")

take_add_p = Primitive(
    "take_add", _take_add, nin=2, fresh=True,
    abstract=_take_add_abstract, validate=_take_add_validate,
    vjp=(lambda g, ans, x, i, *, axis, size: take_p.bind_raw(g, i, axis=axis), None),
    jvp=(lambda t, ans, x, i, *, axis, size: take_add_p.bind_raw(t, i, axis=axis, size=size),
         None),
    batch=_take_add_batch, emit="_take_add({0}, {1}, {axis}, {size})",
    sparsity="scatter", transposes="take", complex="real_linear")


EMIT_HELPERS = {"_index_add": _index_add, "_take": _take, "_take_add": _take_add}
