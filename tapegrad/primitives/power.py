"""``x ** y`` whose every element depends on its own ``x`` and ``y`` only, not on the layout.

NumPy's power loop (float32 and float64) takes a fast path when it reads the exponent with
stride 0 (a scalar exponent): at -1, 0, 0.5, 1 and 2 it computes ``1/x``, ``1``, ``sqrt(x)``,
``x`` and ``x*x`` instead of ``pow``, whose last bit differs (SVML's ``powf(x, 1)`` is not
even always ``x``). An array of exponents, even one holding 0.5 everywhere, gets ``pow``.
So ``vmap`` over the exponent (the per-example exponents stacked into an array) gave other
bits than the per-example calls, and a constant array of 2.0 that the graph simplifier
rewrites to ``x * x`` other bits than eager execution. ``exact_power`` computes those five
exponents by the exact operations wherever they sit in ``y``; the rest is NumPy's power.
"""
import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.primitives.families import recycling, xp

_recycled_power = recycling(xp.power, xp.power)  # large results into recycled memory


def _np_power(x, y):
    """NumPy's power, with TensorFlow's error for an integer to a negative integer power
    (NumPy's ValueError would escape a compiled program untranslated)."""
    try:
        return _recycled_power(x, y)
    except ValueError as e:
        if "negative integer powers" not in str(e):
            raise
        raise InvalidArgumentError("Integers to negative integer powers are not allowed") \
            from None
_OUTER_MAX = 64  # up to this many exponents, one comparison with all five values at once


def _ones(x):  # x ** 0 (and ** -0.0) is 1 for every x, NaN included
    return xp.ones_like(x) if isinstance(x, np.ndarray) else x.dtype.type(1)


# x ** v for each of those exponents, by its exact operation (x has the result's dtype;
# large results in recycled memory, as NumPy's power's); positive copies x, -0.0 and NaN
_sqrt = recycling(xp.sqrt, xp.sqrt)


def _half(x):
    """x ** 0.5 by sqrt, with pow's values where they differ: pow(-0.0, 0.5) is +0.0 and
    pow(-inf, 0.5) is +inf (C's pow, TensorFlow's), where sqrt gives -0.0 and NaN."""
    r = _sqrt(x)
    if not isinstance(r, np.ndarray):
        return r.dtype.type(np.inf) if x == -np.inf else r + r.dtype.type(0)
    xp.add(r, 0.0, out=r, casting="unsafe")  # -0.0 + 0.0 is +0.0; nothing else changes
    xp.copyto(r, np.inf, where=(x == -np.inf))
    return r


_EXACT = {2.0: recycling(xp.square, xp.square), 0.5: _half,
          -1.0: recycling(xp.reciprocal, xp.reciprocal),
          1.0: recycling(xp.positive, xp.positive), 0.0: _ones}
_EXPONENTS = tuple(sorted(_EXACT))
_EXPONENT_ARRAY = np.array(_EXPONENTS)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_FLOAT_SCALARS = (np.float32, np.float64)


def exact_power(x, y):
    """``np.power(x, y)`` (same dtype, shape and errors), with the exponents -1, 0, 0.5, 1
    and 2 of a float32 or float64 result computed as NumPy's scalar fast path does, whether
    ``y`` is a scalar or an array (a scalar exponent costs a dictionary look-up; an array
    one a scan of ``y``, cheap beside ``pow``, and the exact operations where it hits).

    >>> import numpy as np
    >>> x = np.array([2.0, 3.0], np.float32)
    >>> y = np.array([0.5, 0.5], np.float32)
    >>> bool((exact_power(x, y) == np.power(x, np.float32(0.5))).all())
    True
    """
    ty = type(y)
    if ty is type(x) and ty in _FLOAT_SCALARS:  # two NumPy scalars of one float dtype
        op = _EXACT.get(y)  # (a scalar optimizer's b ** t, each step)
        return xp.power(x, y) if op is None else op(x)
    n = getattr(y, "size", 1)
    if n == 1:
        op = _EXACT.get(y.item() if hasattr(y, "item") else y)
        if op is None:
            return _np_power(x, y)
        dt = getattr(x, "dtype", None)
        if dt is not getattr(y, "dtype", None) or dt not in _FLOATS:  # mixed: NumPy's rule
            dt = np.result_type(x, y)
            if dt not in _FLOATS:
                return _np_power(x, y)
            x = xp.asarray(x, dt)
        k = getattr(y, "ndim", 0) - x.ndim
        if k > 0:  # y's size-1 axes broadcast x: the result has y's rank
            x = xp.reshape(x, (1,) * k + x.shape)
        return op(x)
    r = _np_power(x, y)
    if r.dtype not in _FLOATS:
        return r
    y = xp.asarray(y)
    if y.dtype.kind not in "fiub":
        return r
    if n <= _OUTER_MAX:
        present = [v for v, hit in zip(_EXPONENTS, np.equal.outer(y.ravel(), _EXPONENT_ARRAY)
                                       .any(axis=0)) if hit]
    else:
        present = [v for v in _EXPONENTS if (y == v).any()]
    if present:
        xc = xp.asarray(x, r.dtype)
        for v in present:
            xp.copyto(r, _EXACT[v](xc), where=(y == v))
    return r
