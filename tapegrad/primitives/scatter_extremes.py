"""``scatter_max`` / ``scatter_min``: a copy of ``tensor`` (its addressed axes flattened
into one, ``slices`` rows) where each row ``ids[k]`` becomes the max (min) of itself and
the update rows that name it, as TensorFlow's ``TensorScatterMax`` / ``TensorScatterMin``.

The CPU kernel applies the updates in order with ``out = (out < u) ? u : out`` (min:
``u < out``), so a NaN in the tensor stays and a NaN update changes nothing; ties keep the
tensor's value (its sign of zero). The gradient is TensorFlow's: each output element's
cotangent is shared among the tensor element and the updates equal to it (NaN where none
is: a NaN output). Duplicate ids are fine; ``ops/scatter_ops.py`` checks the ids.

>>> import numpy as np
>>> _scatter_max(np.array([1.0, 5.0]), np.array([0, 0, 1]), np.array([4.0, 2.0, np.nan]))
array([4., 5.])
"""
import numpy as np

from tapegrad.core.dispatch import PRIMITIVES, Primitive
from tapegrad.primitives.api import cast, equal, gather, reshape
from tapegrad.primitives.families import xp

_ID_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _extreme(ufunc, less, worst):
    def impl(tensor, ids, updates):
        out = xp.array(tensor, copy=True)
        ids, u = xp.asarray(ids), xp.asarray(updates)
        if ids.size == 0:
            return out
        if u.dtype.kind != "f":  # integers: the order of the updates cannot show
            ufunc.at(out, ids, u)
            return out
        # TensorFlow's out = (out < u) ? u : out, update by update: NaN updates never win,
        # a NaN in out stays, and of updates equal to the best (0.0 and -0.0) the first wins
        u = xp.where(xp.isnan(u), u.dtype.type(worst), u)
        best = xp.full(out.shape, u.dtype.type(worst))
        ufunc.at(best, ids, u)
        m = u.shape[0]
        rank = xp.arange(m).reshape((m,) + (1,) * (u.ndim - 1))
        first = xp.full(out.shape, m)
        xp.minimum.at(first, ids, xp.where(u == best[ids], rank, m))
        has = first < m
        pick = xp.take_along_axis(u, xp.where(has, first, 0), axis=0)
        wins = has & less(out, pick)
        out[wins] = pick[wins]
        return out
    return impl


_scatter_max = _extreme(xp.maximum, xp.less, -np.inf)
_scatter_min = _extreme(xp.minimum, xp.greater, np.inf)


def _indicators(g, ans, tensor, ids, updates):
    """TensorFlow's: where the tensor and the updates equal the output, and how many do."""
    slices = tensor.shape[0]
    x_ind = cast(equal(tensor, ans), g.dtype)
    y_ind = cast(equal(updates, gather(ans, ids, axis=0)), g.dtype)
    count = x_ind + PRIMITIVES["take_add"].bind_raw(y_ind, ids, axis=0, size=slices)
    return x_ind, y_ind, count


def _vjp_tensor(g, ans, tensor, ids, updates):
    x_ind, _, count = _indicators(g, ans, tensor, ids, updates)
    return g * x_ind / count


def _vjp_updates(g, ans, tensor, ids, updates):
    _, y_ind, count = _indicators(g, ans, tensor, ids, updates)
    return gather(g / count, ids, axis=0) * y_ind


def _jvp(tangents, ans, tensor, ids, updates):
    t_dot, _, u_dot = tangents
    like = t_dot if t_dot is not None else u_dot
    x_ind, y_ind, count = _indicators(like, ans, tensor, ids, updates)
    out = None
    if t_dot is not None:
        out = t_dot * x_ind / count
    if u_dot is not None:
        shared = PRIMITIVES["take_add"].bind_raw(u_dot * y_ind, ids, axis=0,
                                                size=tensor.shape[0]) / count
        out = shared if out is None else out + shared
    return out


def _abstract(name):
    def rule(tensor, ids, updates):
        if ids.dtype not in _ID_DTYPES:
            raise TypeError(f"{name}: indices must be int32 or int64, got {ids.dtype.name}")
        if tensor.dtype.kind in "bc" or updates.dtype != tensor.dtype:
            raise TypeError(f"{name}: needs real numbers of one dtype, got "
                            f"{tensor.dtype.name} and {updates.dtype.name}")
        if tensor.ndim < 1 or ids.ndim != 1 or tuple(updates.shape) != (
                tuple(ids.shape) + tuple(tensor.shape[1:])):
            raise ValueError(f"{name}: updates of shape {tuple(updates.shape)} do not fit ids "
                             f"{tuple(ids.shape)} into {tuple(tensor.shape)}")
        return tuple(tensor.shape), tensor.dtype
    return rule


def _batch(name):
    """Each example's rows become a block of ``slices`` rows of one scatter."""
    def rule(args, batched):
        tensor, ids, updates = args
        b = next(a.shape[0] for a, bt in zip(args, batched) if bt)
        like = [tensor, ids, updates]
        for i, (a, bt) in enumerate(zip(args, batched)):
            if not bt:
                a = reshape(a, (1,) + tuple(a.shape))
                like[i] = PRIMITIVES["broadcast_to"].bind_raw(a, shape=(b,) + tuple(a.shape[1:]))
        tensor, ids, updates = like
        slices, m = tensor.shape[1], ids.shape[1]
        offsets = reshape(cast(np.arange(b) * slices, ids.dtype), (b, 1))
        out = PRIMITIVES[name].bind_raw(
            reshape(tensor, (b * slices,) + tuple(tensor.shape[2:])),
            reshape(ids + offsets, (b * m,)),
            reshape(updates, (b * m,) + tuple(updates.shape[2:])))
        return reshape(out, (b, slices) + tuple(out.shape[1:]))
    return rule


def _primitive(name, impl):
    return Primitive(name, impl, nin=3, fresh=True, abstract=_abstract(name),
                     vjp=(_vjp_tensor, None, _vjp_updates),
                     jvp=_jvp, batch=_batch(name), emit=f"_{name}({{0}}, {{1}}, {{2}})")


scatter_max_p = _primitive("scatter_max", _scatter_max)
scatter_min_p = _primitive("scatter_min", _scatter_min)
