"""Index checks with TensorFlow's errors: ``check_indices(i; bound, what)`` returns the integer
tensor ``i`` itself once every index in it lies in range, and raises TensorFlow's
``InvalidArgumentError``, with its message, when one does not.

NumPy counts a negative index from the end and raises ``IndexError`` past it; TensorFlow's
CPU kernels raise ``InvalidArgumentError`` for both, also inside ``tf.function``. Eager ops
check their concrete indices before they bind; a traced op puts this primitive in front of
the scatter or gather it feeds, so that the compiled program checks them when it runs.
(``take``, the plain gather, checks its own indices, at the cost of one ``min``.)

``what`` chooses the rule and TensorFlow's wording:

- ``"gather"``: each index in ``[0, bound[0])`` (``tf.gather`` with ``batch_dims``);
- ``"segment"``: each id below ``bound[0]``; a negative id drops its row, so it passes;
- ``"gather_nd"`` / ``"scatter_nd"``: the last axis of ``i`` holds one index per leading
  axis of a tensor of shape ``bound``.

>>> import numpy as np
>>> _check_indices(np.array([0, 2]), (3,), "gather").tolist()
[0, 2]
"""
import numpy as np

from tapegrad.core.dispatch import Primitive
from tapegrad.errors import InvalidArgumentError
from tapegrad.primitives.families import xp
from tapegrad.primitives.params import check_shape, fail

KINDS = ("gather", "segment", "gather_nd", "scatter_nd")


def _at(flat, shape):
    """TensorFlow's position of flat element ``flat`` of an array of ``shape``: ``[1,0]``."""
    return "[" + ",".join(str(int(k)) for k in np.unravel_index(flat, shape)) + "]"


def gather_message(i, n):
    """TensorFlow's message for the first index of ``i`` outside ``[0, n)`` (None if none is)."""
    i = np.asarray(i)
    bad = np.flatnonzero((i.reshape(-1) < 0) | (i.reshape(-1) >= n))
    if not bad.size:
        return None
    k = int(bad[0])
    at = _at(k, i.shape) if i.ndim else ""
    return f"indices{at} = {int(i.reshape(-1)[k])} is not in [0, {n})"


def segment_message(ids, n):
    """TensorFlow's message for the first segment id at or past ``n`` (None if none is)."""
    ids = np.asarray(ids)
    bad = np.flatnonzero(ids.reshape(-1) >= n)
    if not bad.size:
        return None
    k = int(bad[0])
    return f"segment_ids{_at(k, ids.shape)} = {int(ids.reshape(-1)[k])} is out of range [0, {n})"


def nd_message(i, shape, what):
    """TensorFlow's message of gather_nd (``what="gather_nd"``) or of the scatters for the first
    index tuple (the last axis of ``i``) that does not address ``shape``; None if all do."""
    i = np.asarray(i)
    k = i.shape[-1]
    rows = i.reshape(-1, k)
    bad = np.flatnonzero(((rows < 0) | (rows >= np.asarray(shape[:k], np.int64))).any(axis=1))
    if not bad.size:
        return None
    r = int(bad[0])
    at = _at(r, i.shape[:-1]) if i.ndim > 1 else "[0]"
    tup = "[" + ", ".join(str(int(v)) for v in rows[r]) + "]"
    dims = ",".join(str(int(d)) for d in shape)
    if what == "gather_nd":
        return (f"indices{at} = {tup} does not index into param shape [{dims}], node name: "
                "GatherNd")
    return f"indices{at} = {tup} does not index into shape [{dims}]"


def _check_indices(i, bound, what):
    i = xp.asarray(i)
    if i.size == 0:
        return i
    if what == "gather":
        ok = int(i.min()) >= 0 and int(i.max()) < bound[0]
        err = None if ok else gather_message(i, bound[0])
    elif what == "segment":
        err = None if int(i.max()) < bound[0] else segment_message(i, bound[0])
    else:
        err = nd_message(i, bound, what)
    if err is not None:
        raise InvalidArgumentError(err)
    return i


def _validate(i, *, bound, what):
    check_shape("check_indices", "bound", bound)
    if what not in KINDS:
        fail("check_indices", "what", f"must be one of {KINDS}, got {what!r}")
    if what in ("gather", "segment") and len(bound) != 1:
        fail("check_indices", "bound", f"must hold one size for {what!r}, got {bound}")
    if what in ("gather_nd", "scatter_nd") and (i.ndim < 1 or i.shape[-1] > len(bound)):
        fail("check_indices", "bound", f"{bound} has fewer axes than the last axis of the "
                                       f"indices {tuple(i.shape)} addresses")


def _abstract(i, *, bound, what):
    if i.dtype.kind not in "iu":
        raise TypeError(f"check_indices: indices must be integers, got {i.dtype}")
    if what == "segment" and i.dtype.name not in ("int32", "int64"):  # TensorFlow's ids
        raise TypeError(f"check_indices: segment ids must be int32 or int64, got {i.dtype}")
    return tuple(i.shape), i.dtype


check_indices_p = Primitive(
    "check_indices", _check_indices, nin=1, nondiff=True,
    abstract=_abstract, validate=_validate,
    # the rules are per index (per index tuple: the last axis), so a batch axis in front
    # changes nothing
    batch=lambda args, batched, *, bound, what: check_indices_p.bind_raw(
        args[0], bound=bound, what=what),
    emit="_check_indices({0}, {bound}, '{what}')")


EMIT_HELPERS = {"_check_indices": _check_indices}
