"""Segment reductions by max, min and product: ``unsorted_segment_max(data, ids,
num_segments)`` reduces the rows ``data[k]`` of each segment ``ids[k]`` into ``out[ids[k]]``.
(Segment sums are ``take_add``, a scatter: ``primitives/shape.py``.)

As TensorFlow's kernels: ``ids`` indexes the leading axes of ``data`` (its shape is a prefix
of data's), a negative id drops its row, an id >= num_segments is an error, and an empty
segment holds the reduction's identity: the lowest value of the dtype for max (-FLT_MAX for
float32, not -inf), the highest for min, 1 for the product. The gradients are TensorFlow's:
max and min share each segment's cotangent among the elements equal to its result; the
product's is the product of the segment's other elements, computed as TensorFlow does (the
product divided by the element, or the product of the non-zeros for a segment's only zero).

>>> import numpy as np
>>> _segment_max(np.array([1.0, 5.0, 2.0]), np.array([0, 0, 2]), 3).tolist()[::2]
[5.0, 2.0]
"""
import numpy as np

from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.errors import InvalidArgumentError
from tapegrad.primitives.api import (cast, equal, gather, logical_and, reshape, transpose, where,
                                     zeros_like)
from tapegrad.primitives.bounds import segment_message
from tapegrad.primitives.families import xp
from tapegrad.primitives.params import check_int, fail


_ID_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind in "fc" else np.iinfo(dtype).min


def _highest(dtype):
    return np.finfo(dtype).max if dtype.kind in "fc" else np.iinfo(dtype).max


def check_segment_ids(ids, num_segments):
    """TensorFlow's error for an id at or past ``num_segments`` (negative ids are dropped)."""
    err = segment_message(ids, num_segments)
    if err is not None:
        raise InvalidArgumentError(err)


def _reducer(ufunc, identity):
    def impl(data, ids, num_segments):
        check_segment_ids(ids, num_segments)
        data = np.asarray(data)
        ids = np.asarray(ids)
        out = np.full((num_segments,) + data.shape[ids.ndim:], identity(data.dtype), data.dtype)
        keep = ids >= 0
        if keep.all():
            ufunc.at(out, ids, data)
        else:  # negative ids drop their rows
            ufunc.at(out, ids[keep], data[keep])
        return out
    return impl


_segment_max = _reducer(xp.maximum, _lowest)
_segment_min = _reducer(xp.minimum, _highest)
_segment_prod = _reducer(xp.multiply, lambda dtype: 1)


# ---- rules, of primitives ---------------------------------------------------------------------
def segment_sum(data, ids, num_segments):
    """The sum of each segment's rows; negative ids go to a spare segment that is cut off."""
    safe = where(ids < 0, num_segments, ids)
    out = PRIMITIVES["take_add"].bind_raw(data, safe, axis=0, size=num_segments + 1)
    return out[:num_segments]


def _rows(mask, data):
    """A mask over the ids' axes, with unit axes for the rows' own axes of ``data``."""
    return reshape(mask, tuple(mask.shape) + (1,) * (data.ndim - mask.ndim))


def _gather_rows(v, ids):
    """``v[ids[k]]`` for each k, with row 0 for the dropped (negative) ids."""
    return gather(v, where(ids < 0, 0, ids), axis=0)


def _safe_count(count):
    return where(count > 0, count, 1)


def _minmax_selected(ans, data, ids):
    """Where ``data`` attains its segment's result (the elements the gradient goes to)."""
    return logical_and(equal(data, _gather_rows(ans, ids)), _rows(ids >= 0, data))


def _minmax_vjp(g, ans, data, ids, *, num_segments):
    sel = _minmax_selected(ans, data, ids)
    count = segment_sum(cast(sel, g.dtype), ids, num_segments)
    return where(sel, _gather_rows(g / _safe_count(count), ids), zeros_like(data))


def _minmax_jvp(t, ans, data, ids, *, num_segments):
    sel = _minmax_selected(ans, data, ids)
    count = segment_sum(cast(sel, t.dtype), ids, num_segments)
    return segment_sum(where(sel, t, zeros_like(t)), ids, num_segments) / _safe_count(count)


def _prod_partials(ans, data, ids, num_segments):
    """(mask, d): d_k is the derivative of its segment's product by ``data[k]``, valid where
    ``mask`` (kept ids of segments with at most one zero; elsewhere the derivative is 0)."""
    is_zero = equal(data, 0)
    zeros = segment_sum(cast(is_zero, data.dtype), ids, num_segments)
    nonzero = where(is_zero, 1, data)
    nonzero_prod = unsorted_segment_prod_p.bind_raw(nonzero, ids, num_segments=num_segments)
    # the product over x (nonzero stands in for x where x == 0, so no 0 / 0 enters a pass)
    d = where(is_zero, _gather_rows(nonzero_prod, ids), _gather_rows(ans, ids) / nonzero)
    mask = logical_and(_rows(ids >= 0, data), _gather_rows(zeros, ids) <= 1)
    return mask, d


def _prod_vjp(g, ans, data, ids, *, num_segments):
    mask, d = _prod_partials(ans, data, ids, num_segments)
    return where(mask, _gather_rows(g, ids) * d, zeros_like(data))


def _prod_jvp(t, ans, data, ids, *, num_segments):
    mask, d = _prod_partials(ans, data, ids, num_segments)
    return segment_sum(where(mask, t * d, zeros_like(t)), ids, num_segments)


def _abstract(name):
    def rule(data, ids, *, num_segments):
        if ids.dtype not in _ID_DTYPES:  # TensorFlow's: signed, so a dropped id is -1
            raise TypeError(f"{name}: segment ids must be int32 or int64, got {ids.dtype.name}")
        if data.dtype.kind in "bc":
            raise TypeError(f"{name}: {data.dtype.name} data is not supported")
        return (num_segments,) + tuple(data.shape[ids.ndim:]), data.dtype
    return rule


def _validate(name):
    def rule(data, ids, *, num_segments):
        check_int(name, "num_segments", num_segments, 0)
        if tuple(data.shape[:ids.ndim]) != tuple(ids.shape):
            fail(name, "num_segments", f"needs ids of a prefix of the data's shape "
                                       f"{tuple(data.shape)}, got {tuple(ids.shape)}")
    return rule


def _batch(name):
    """Each example's segments become a block of ``num_segments`` in one reduction."""
    def rule(args, batched, *, num_segments):
        data, ids = args
        bd, bi = batched
        prim = PRIMITIVES[name]
        if not bi:  # shared ids: the batch axis moves behind the ids' axes
            k = ids.ndim
            d = transpose(data, tuple(range(1, k + 1)) + (0,) + tuple(range(k + 1, data.ndim)))
            out = prim.bind_raw(d, ids, num_segments=num_segments)
            return transpose(out, (1, 0) + tuple(range(2, out.ndim)))
        b = ids.shape[0]
        if not bd:
            data = reshape(data, (1,) + tuple(data.shape))
            data = PRIMITIVES["broadcast_to"].bind_raw(data, shape=(b,) + tuple(data.shape[1:]))
        offsets = reshape(cast(np.arange(b) * num_segments, ids.dtype), (b,) + (1,) * (ids.ndim - 1))
        folded = where(ids < 0, -1, ids + offsets)
        out = prim.bind_raw(data, folded, num_segments=b * num_segments)
        return reshape(out, (b, num_segments) + tuple(out.shape[1:]))
    return rule


def _segment_primitive(name, impl, vjp, jvp):
    return Primitive(name, impl, nin=2, fresh=True, abstract=_abstract(name),
                     validate=_validate(name), vjp=(vjp, None), jvp=(jvp, None),
                     batch=_batch(name), emit=f"_{name[9:]}({{0}}, {{1}}, {{num_segments}})")


unsorted_segment_max_p = _segment_primitive("unsorted_segment_max", _segment_max,
                                            _minmax_vjp, _minmax_jvp)
unsorted_segment_min_p = _segment_primitive("unsorted_segment_min", _segment_min,
                                            _minmax_vjp, _minmax_jvp)
unsorted_segment_prod_p = _segment_primitive("unsorted_segment_prod", _segment_prod,
                                             _prod_vjp, _prod_jvp)

EMIT_HELPERS = {"_segment_max": _segment_max, "_segment_min": _segment_min,
                "_segment_prod": _segment_prod}
