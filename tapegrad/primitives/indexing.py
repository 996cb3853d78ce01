"""NumPy's indexing rules as arithmetic on shapes: the shape and domain rules of getitem.

``index_shape(shape, key)`` is ``np.empty(shape)[key].shape`` computed without an array:
ints and slices select, ``None`` adds an axis, one ``Ellipsis`` stands for the axes no other
item names, integer arrays and boolean masks are advanced indices. The advanced indices
(and, alongside them, the ints) broadcast to one shape that replaces their axes where they
are adjacent, and goes first where they are not. Every int and every integer-array entry
must lie in its axis (``IndexError`` otherwise), as NumPy requires when the index is used.

>>> index_shape((3, 4, 5), (np.array([0, 2]), slice(None), 1))
(2, 4)
"""
import numpy as np

from tapegrad.primitives.params import is_int


def _items(shape, key):
    """``key`` with its Ellipsis expanded (or trailing slices added): one item per use."""
    if not isinstance(key, tuple):
        raise TypeError(f"an index is a tuple, got {type(key).__name__}")
    used = 0
    for k in key:
        if is_int(k) or isinstance(k, slice):
            used += 1
        elif isinstance(k, np.ndarray):
            if k.dtype.kind == "b" and k.ndim == 0:
                raise IndexError("a 0-d boolean index is not supported")
            used += k.ndim if k.dtype.kind == "b" else 1
        elif k is not None and k is not Ellipsis:
            raise TypeError(f"an index item must be an int, slice, None, Ellipsis or an "
                            f"integer or boolean array, got {type(k).__name__}")
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis")
    if used > len(shape):
        raise IndexError(f"too many indices: {used} for an array of rank {len(shape)}")
    fill = (slice(None),) * (len(shape) - used)
    if not any(k is Ellipsis for k in key):
        return key + fill
    i = next(i for i, k in enumerate(key) if k is Ellipsis)
    return key[:i] + fill + key[i + 1:]


def _slice_len(s, n):
    for part in (s.start, s.stop, s.step):
        if part is not None and not is_int(part):
            raise TypeError(f"slice bounds must be ints or None, got {part!r}")
    if s.step == 0:
        raise ValueError("slice step cannot be zero")
    return len(range(*s.indices(n)))


def _check_position(k, n):
    if not -n <= k < n:
        raise IndexError(f"index {k} is out of bounds for an axis of size {n}")


def index_shape(shape, key):
    """The shape of ``x[key]`` for ``x`` of ``shape`` (see the module doc); checks ``key``."""
    items = _items(tuple(shape), key)
    advanced = any(isinstance(k, np.ndarray) for k in items)
    out, adv_pos, adv_shapes, d = [], [], [], 0
    for k in items:
        if k is None:
            out.append(1)
        elif isinstance(k, slice):
            out.append(_slice_len(k, shape[d]))
            d += 1
        elif is_int(k):
            _check_position(int(k), shape[d])
            if advanced:
                adv_pos.append(len(out))
                adv_shapes.append(())
            d += 1
        elif k.dtype.kind == "b" and not (k.shape == (0,) and shape[d] != 0):
            if k.shape != tuple(shape[d:d + k.ndim]):
                raise IndexError(f"a boolean index of shape {k.shape} does not match the axes "
                                 f"{tuple(shape[d:d + k.ndim])} it selects from")
            adv_pos.append(len(out))
            adv_shapes.append((int(np.count_nonzero(k)),))
            d += k.ndim
        else:  # an integer array (or an empty 1-d mask: NumPy reads it as one)
            if k.dtype.kind not in "iub":
                raise IndexError(f"index arrays must be integers or booleans, got {k.dtype}")
            if k.size and (int(k.min()) < -shape[d] or int(k.max()) >= shape[d]):
                raise IndexError(f"an index array holds entries outside an axis of size "
                                 f"{shape[d]}")
            adv_pos.append(len(out))
            adv_shapes.append(k.shape)
            d += 1
    if not advanced:
        return tuple(out)
    try:
        b = tuple(np.broadcast_shapes(*adv_shapes))
    except ValueError:
        raise IndexError(f"index arrays of shapes {adv_shapes} do not broadcast") from None
    # adjacent advanced items (no basic item between them) keep their place; else go first
    adjacent = all(p == adv_pos[0] for p in adv_pos)
    at = adv_pos[0] if adjacent else 0
    return tuple(out[:at]) + b + tuple(out[at:])
