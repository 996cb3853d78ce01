"""``cumprod``: the running product along an axis (inclusive, left to right; the op layer
composes the exclusive and reversed forms of slices and pads around it).

Its derivatives divide by nothing, so they are exact where elements are zero (TensorFlow's
gradient divides by x and gives 0 or NaN there). With E_k = prod_{j<k} x_j (the exclusive
running product):

- JVP: dy_i = sum_{k<=i} t_k E_k prod_{k<j<=i} x_j, the recurrence r_i = t_i E_i + x_i r_{i-1};
- VJP: dx_k = E_k R_k with R_k = sum_{i>=k} g_i prod_{k<j<=i} x_j, the recurrence
  R_k = g_k + x_{k+1} R_{k+1}: the same recurrence taken the other way (its transpose).

Both are first-order linear recurrences r_i = b_i + a_i r_{i-1}, computed by ``_linear_scan``:
log2(n) doubling steps of multiplications and additions of primitives, so the rules
differentiate again to any order.

>>> import numpy as np
>>> _cumprod(np.array([2.0, 0.0, 3.0]), 0).tolist()
[2.0, 0.0, 0.0]
"""
from tapegrad.core.dispatch import Primitive
from tapegrad.primitives.api import concat, pad
from tapegrad.primitives.families import xp
from tapegrad.primitives.params import check_axis


def _cumprod(x, axis):
    return xp.cumprod(x, axis=axis, dtype=x.dtype)


def _part(v, axis, start=None, stop=None, step=None):
    return v[(slice(None),) * axis + (slice(start, stop, step),)]


def _linear_scan(a, b, axis):
    """r with r_i = b_i + a_i r_{i-1} along ``axis`` (r_0 = b_0; a_0 is never used).

    Doubling: after the step of stride k, r_i = B_i + A_i r_{i-k}; a step multiplies only
    real entries (the first k are final), so no inf meets a padding zero.
    """
    n = b.shape[axis]
    k = 1
    while k < n:
        head_b, tail_b = _part(b, axis, stop=k), _part(b, axis, start=k)
        b = concat([head_b, tail_b + _part(a, axis, start=k) * _part(b, axis, stop=n - k)], axis)
        if 2 * k < n:
            a = concat([_part(a, axis, stop=k),
                        _part(a, axis, start=k) * _part(a, axis, stop=n - k)], axis)
        k *= 2
    return b


def _exclusive(ans, axis):
    """E_k = prod_{j<k} x_j from the inclusive products: ans shifted one place, 1 first."""
    pads = [[0, 0]] * ans.ndim
    pads[axis] = [1, 0]
    return pad(_part(ans, axis, stop=-1), pads, constant_values=1.0)


def _reversed(v, axis):
    return _part(v, axis, step=-1)


def _cumprod_jvp(t, ans, x, *, axis):
    if x.shape[axis] == 0:
        return t
    return _linear_scan(x, t * _exclusive(ans, axis), axis)


def _cumprod_vjp(g, ans, x, *, axis):
    if x.shape[axis] == 0:
        return g
    # R_k = g_k + x_{k+1} R_{k+1}: reversed, r_m = g'_m + x'_{m-1} r_{m-1}
    pads = [[0, 0]] * x.ndim
    pads[axis] = [1, 0]
    xr = _reversed(x, axis)
    a = pad(_part(xr, axis, stop=-1), pads, constant_values=1.0)
    r = _reversed(_linear_scan(a, _reversed(g, axis), axis), axis)
    return _exclusive(ans, axis) * r


def _cumprod_abstract(x, *, axis):
    if x.dtype.kind == "b":
        raise TypeError("cumprod: bool inputs are not supported")
    return tuple(x.shape), x.dtype


cumprod_p = Primitive(
    "cumprod", _cumprod, nin=1, fresh=True,
    abstract=_cumprod_abstract,
    validate=lambda x, *, axis: check_axis("cumprod", "axis", axis, x.ndim),
    vjp=(_cumprod_vjp,), jvp=(_cumprod_jvp,),
    batch=lambda args, batched, *, axis: cumprod_p.bind_raw(args[0], axis=axis + 1),
    emit="np.cumprod({0}, axis={axis}, dtype={0}.dtype)")

