"""The primitive layer's functions: a thin ``bind`` wrapper per primitive, and a few helpers
composed of them. Derivative, batching and interpreter rules call these, not the
TensorFlow-named ``tapegrad.ops``: the rules stay below the op layer (docs/ARCHITECTURE.md,
"Layers"), and they skip its argument conversions, which they never need.

Each wrapper takes Tensors or NumPy arrays (a first-order pass that nothing records hands
the rules arrays); a Python number next to a tensor takes its dtype, as in the op layer. Arguments
are what the primitive takes (normalised axes, full shapes): checking user input is the op
layer's job. A wrapper that would not change its input returns it.

The primitives are looked up by name when a wrapper first runs, so that this module needs
none of the modules that define them (they import it for their rules).

>>> import numpy as np
>>> import tapegrad as tf
>>> from tapegrad.primitives import api
>>> api.reshape(np.arange(6.0), (2, 3)).shape
TensorShape([2, 3])
>>> api.reduce_sum(tf.ones([2, 3]), axis=(1,)).numpy().tolist()
[3.0, 3.0]
"""
import numpy as np

from tapegrad.core.dispatch import PRIMITIVES, bind
from tapegrad.core.tensor import Tensor, convert_to_tensor, full  # noqa: F401  (re-exported)

_wrap = Tensor._wrap


def tensor(x):
    """``x`` as a Tensor: Tensors pass, arrays and numbers are wrapped as they are."""
    if isinstance(x, Tensor):
        return x
    return _wrap(np.asarray(x))


def _array(x):
    """``x`` as a Tensor if it is one or an array (arrays keep their dtype), else None."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return _wrap(np.asarray(x))
    return None


def _operand(x, other):
    """A Python value as a tensor of ``other``'s dtype where that is exact, else by
    tapegrad's conversion rules."""
    if other is not None:
        try:
            return convert_to_tensor(x, dtype=other.dtype)
        except (TypeError, ValueError):
            pass
    return convert_to_tensor(x)


def _pair(x, y):
    """Two operands of one dtype, by the op layer's rules: a Python value takes the other
    operand's dtype, two tensors promote as in NumPy."""
    xt, yt = _array(x), _array(y)
    if xt is None and yt is None:
        xt = convert_to_tensor(x)
        yt = _operand(y, xt if xt.dtype.kind in "fc" else None)
    elif xt is None:
        xt = _operand(x, yt)
    elif yt is None:
        yt = _operand(y, xt)
    if xt.dtype != yt.dtype:
        dt = np.result_type(xt.dtype, yt.dtype)
        xt, yt = cast(xt, dt), cast(yt, dt)
    return xt, yt


def _unary(name):
    def f(x):
        return bind(PRIMITIVES[name], tensor(x))
    f.__name__ = name
    f.__doc__ = f"The ``{name}`` primitive."
    return f


def _binary(name):
    def f(x, y):
        return bind(PRIMITIVES[name], *_pair(x, y))
    f.__name__ = name
    f.__doc__ = f"The ``{name}`` primitive (a Python number takes the other's dtype)."
    return f


# ---- elementwise ----------------------------------------------------------------------------
exp, log, sin, cos = _unary("exp"), _unary("log"), _unary("sin"), _unary("cos")
sinh, cosh, rsqrt = _unary("sinh"), _unary("cosh"), _unary("rsqrt")
sign, sigmoid, floor = _unary("sign"), _unary("sigmoid"), _unary("floor")
step = _unary("step")
one_minus_square = _unary("one_minus_square")  # 1 - x*x: tanh's derivative


def leaky_relu_grad(g, x, alpha):
    """The ``leaky_relu_grad`` primitive: ``g`` where x > 0, else ``g * alpha``."""
    return bind(PRIMITIVES["leaky_relu_grad"], tensor(g), tensor(x), alpha=alpha)
square = _unary("square")
pow, floormod, equal = _binary("pow"), _binary("mod"), _binary("equal")
logical_and, multiply = _binary("logical_and"), _binary("mul")
sqrt_grad, rsqrt_grad = _binary("sqrt_grad"), _binary("rsqrt_grad")
reciprocal_grad = _binary("reciprocal_grad")


def integer_pow(x, y):
    """``x ** y`` for a Python int ``y``."""
    return bind(PRIMITIVES["integer_pow"], tensor(x), y=int(y))


def where(condition, x, y):
    """``x`` where the bool ``condition`` holds, else ``y``."""
    x, y = _pair(x, y)
    return bind(PRIMITIVES["where"], tensor(condition), x, y)


# ---- shape ----------------------------------------------------------------------------------
def cast(x, dtype):
    """``x`` converted to ``dtype`` (returned as is if it has it)."""
    x = tensor(x)
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    return bind(PRIMITIVES["cast"], x, dtype=dtype.name)


def reshape(x, shape):
    """``x`` with the full ``shape`` (no -1)."""
    x = tensor(x)
    shape = tuple(shape)
    if len(shape) == x.ndim and shape == tuple(x._raw_shape):  # rank first: fewer size guards
        return x
    return bind(PRIMITIVES["reshape"], x, shape=shape)


def expand_dims(x, axis):
    """A unit axis inserted at ``axis`` (negative counts from the end of the result)."""
    x = tensor(x)
    a = axis % (x.ndim + 1)
    return bind(PRIMITIVES["reshape"], x, shape=tuple(x.shape[:a]) + (1,) + tuple(x.shape[a:]))


def identity(x):
    """The same values as a new tensor (a tape sees an operation)."""
    x = tensor(x)
    return bind(PRIMITIVES["reshape"], x, shape=tuple(x.shape))


def broadcast_to(x, shape):
    """``x`` broadcast to ``shape``."""
    x = tensor(x)
    shape = tuple(shape)
    if shape == tuple(x._raw_shape):
        return x
    return bind(PRIMITIVES["broadcast_to"], x, shape=shape)


def transpose(x, perm=None):
    """The axes of ``x`` permuted (reversed by default)."""
    x = tensor(x)
    perm = tuple(range(x.ndim))[::-1] if perm is None else tuple(int(p) for p in perm)
    if perm == tuple(range(x.ndim)):
        return x
    return bind(PRIMITIVES["transpose"], x, perm=perm)


def matrix_transpose(x):
    """The last two axes swapped."""
    x = tensor(x)
    return bind(PRIMITIVES["transpose"], x,
                perm=tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


def concat(xs, axis):
    """Tensors of one dtype joined along the existing, non-negative ``axis``."""
    xs = [tensor(x) for x in xs]
    if len(xs) == 1:
        return xs[0]
    return bind(PRIMITIVES["concat"], *xs, axis=axis)


def stack(xs, axis=0):
    """Tensors of one shape joined along a new ``axis``."""
    return concat([expand_dims(x, axis) for x in xs], axis % (tensor(xs[0]).ndim + 1))


def gather(x, indices, axis=0):
    """The slices of ``x`` at the integer ``indices`` along the non-negative ``axis``."""
    return bind(PRIMITIVES["take"], tensor(x), tensor(indices), axis=axis)


def stop_gradient(x):
    """The same values, through which no gradient flows."""
    return bind(PRIMITIVES["stop_gradient"], tensor(x))


def pad(x, paddings, constant_values=0):
    """``x`` padded with ``paddings[i] = (before, after)`` along axis ``i``."""
    pads = tuple((int(a), int(b)) for a, b in paddings)
    return bind(PRIMITIVES["pad"], tensor(x), paddings=pads,
                constant_values=float(constant_values))


def zeros(shape, dtype):
    """Zeros of ``shape`` and ``dtype``."""
    return full(tuple(shape), 0, np.dtype(dtype))


def zeros_like(x):
    """Zeros of ``x``'s shape and dtype."""
    return full(tuple(x.shape), 0, x.dtype)


def ones_like(x):
    """Ones of ``x``'s shape and dtype."""
    return full(tuple(x.shape), 1, x.dtype)


UNITS = {}       # dtype -> the shared scalar one (a Tensor) of a real float dtype (read it only)
_UNIT_IDS = set()  # ids of those Tensors and of their arrays (kept alive in UNITS)


def unit(dtype):
    """The shared scalar one of a real float ``dtype``: the cotangent a gradient of a scalar
    target starts from (the unit). Its array is read-only (every tape shares it); ``times`` knows it.

    >>> import numpy as np
    >>> float(times(unit(np.float32), np.float32(3.0)))
    3.0
    """
    one = UNITS.get(dtype)
    if one is None:
        dtype = np.dtype(dtype)
        one = UNITS.get(dtype)
        if one is None:
            # a NumPy scalar, immutable: arithmetic on scalars skips the ufunc machinery
            # that a 0-d array goes through (~0.8 us an operation of a scalar program)
            arr = dtype.type(1)
            one = UNITS[dtype] = _wrap(arr)
            _UNIT_IDS.update((id(one), id(arr)))
    return one


def is_unit(g):
    """Whether ``g`` is a unit cotangent (``unit``) or its array."""
    return id(g) in _UNIT_IDS


def times(g, y):
    """``g * y`` for a cotangent ``g`` (a derivative rule's product): where ``g`` is the
    unit cotangent (``unit``, or its array in a pass on arrays) and ``y`` a real value of its
    dtype and shape (a scalar), ``y`` itself. ``1 * y`` is ``y`` bit for bit, NaN, inf and
    -0.0 included, for real floats (complex ones differ where a part is inf, and are never
    unit cotangents); skipping it saves an operation in every pass an outer tape records. A
    Python number ``y`` (a rule's constant factor) gives it as a constant of ``g``'s dtype,
    the value ``1 * y`` has.

    >>> import tapegrad as tf
    >>> y = tf.constant(2.0)
    >>> times(unit(y.dtype), y) is y, float(times(tf.constant(3.0), y))
    (True, 6.0)
    >>> float(times(unit(y.dtype), 3))
    3.0
    """
    if id(g) in _UNIT_IDS:
        if type(y) in (int, float):
            value = g.dtype.type(y)  # what NumPy makes of the number next to g's dtype
            return _wrap(value) if isinstance(g, Tensor) else value
        if y.dtype == g.dtype and y.ndim == 0:
            return y
    if isinstance(g, Tensor) and isinstance(y, Tensor) and g.dtype != y.dtype:
        return multiply(g, y)  # the primitive layer promotes (the op layer's * would raise)
    return g * y


def arange(n, dtype):
    """``0, 1, ..., n - 1`` as a constant tensor of ``dtype``."""
    return _wrap(np.arange(n, dtype=dtype))


# ---- reductions -----------------------------------------------------------------------------
def reduce_sum(x, axis=None, keepdims=False):
    """The sum over ``axis`` (an int, a tuple, or None for all axes)."""
    x = tensor(x)
    if axis is None:
        axis = tuple(range(x.ndim))
    elif isinstance(axis, (int, np.integer)):
        axis = (int(axis) % max(x.ndim, 1),)
    else:
        axis = tuple(sorted(int(a) % max(x.ndim, 1) for a in axis))
    return bind(PRIMITIVES["reduce_sum"], x, axis=axis, keepdims=bool(keepdims))


def cumsum(x, axis, exclusive=False, reverse=False):
    """The running sum along the non-negative ``axis``."""
    return bind(PRIMITIVES["cumsum"], tensor(x), axis=axis, exclusive=bool(exclusive),
                reverse=bool(reverse))


# ---- linear algebra -------------------------------------------------------------------------
def matmul(a, b):
    """The matrix product over the last two axes (``a`` may be a vector, as the primitive
    takes it); leading axes broadcast."""
    a, b = _pair(a, b)
    if b.ndim >= 2:
        return bind(PRIMITIVES["matmul"], a, b)
    # a matrix times a vector: the vector as a column, then the unit axis dropped
    out = bind(PRIMITIVES["matmul"], a, reshape(b, (b.shape[0], 1)))
    return reshape(out, tuple(out.shape[:-1]))


def inv(a):
    """The inverse of (a batch of) square matrices."""
    return bind(PRIMITIVES["inv"], tensor(a))


def solve(a, b, adjoint=False):
    """``X`` with ``a @ X = b`` (``a^T @ X = b`` if ``adjoint``)."""
    a, b = _pair(a, b)
    return bind(PRIMITIVES["solve"], matrix_transpose(a) if adjoint else a, b)


def triangular_solve(a, b, lower=True, adjoint=False):
    """``X`` with ``a @ X = b`` for the lower (or upper) triangle of ``a``."""
    a, b = _pair(a, b)
    return bind(PRIMITIVES["triangular_solve"], a, b, lower=bool(lower), adjoint=bool(adjoint))


def band_part(x, num_lower, num_upper):
    """``x`` with zeros outside ``num_lower`` diagonals below the main one and ``num_upper``
    above (-1: all); selected, not multiplied, so an inf outside gives 0."""
    x = tensor(x)
    i = np.arange(x.shape[-2])[:, None]
    j = np.arange(x.shape[-1])[None, :]
    keep = ((num_lower < 0) | (i - j <= num_lower)) & ((num_upper < 0) | (j - i <= num_upper))
    if keep.all():
        return x
    return where(_wrap(keep), x, _wrap(np.zeros((), x.dtype)))


def diag_part(x):
    """The main diagonal of the last two axes."""
    return bind(PRIMITIVES["diag_part"], tensor(x))


def trace(x):
    """The sum of the main diagonal of the last two axes."""
    d = diag_part(x)
    return reduce_sum(d, axis=d.ndim - 1)


def diag(v, num_rows, num_cols):
    """``num_rows x num_cols`` matrices with ``v`` on the main diagonal, zeros elsewhere."""
    v = tensor(v)
    n = v.shape[-1]
    out = multiply(expand_dims(v, -1), _wrap(np.eye(n, dtype=v.dtype)))
    if (num_rows, num_cols) != (n, n):
        out = pad(out, ((0, 0),) * (v.ndim - 1) + ((0, num_rows - n), (0, num_cols - n)))
    return out
