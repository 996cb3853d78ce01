"""Argument conversion shared by the op modules: the dtype rules of tapegrad.

- Python floats and lists of floats are float32, Python ints int32 (TensorFlow's rule).
- NumPy arrays keep their dtype on their own; next to a tensor they take its dtype.
- A Python scalar mixed with a Tensor takes the Tensor's dtype.
- Two tensors of different dtypes raise TensorFlow's InvalidArgumentError, of one kind too
  (TensorFlow promotes neither float16 with float32 nor float32 with float64), never a
  number TensorFlow would not give. (Derivative rules pair their operands with
  ``primitives/api.py``, which promotes: that is the primitive layer's rule, not a user's.)
"""
import math

import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, convert_to_tensor, holds_size, is_size
from tapegrad.ops._kinds import mismatch, same_kind

_wrap = Tensor._wrap


def tensor(x, dtype=None):
    """``x`` as a Tensor (Variables pass through: bind records their reads)."""
    if isinstance(x, Tensor):
        if dtype is not None and x.dtype != dtype:
            return cast(x, dtype)
        return x
    if dtype is None and type(x) is np.ndarray and x.dtype.kind not in "OUS":
        return _wrap(x)  # arrays keep their dtype; derivative rules pass arrays here often
    return convert_to_tensor(x, dtype=dtype)


_consts = {}


def like(v, t):
    """A Python value as a tensor of ``t``'s dtype, refusing lossy conversions.

    Python numbers are cached per (value, dtype): tensors are immutable, so one constant
    object can serve every operation that uses it.
    """
    tv = type(v)
    if (tv is float or tv is int) and not STATE.stack.tracers:  # the hot case: a cached constant
        c = _consts.get((tv, v, t.dtype) if v or tv is int else _zero_key(v, t.dtype))
        if c is not None:
            return c
    if isinstance(v, (bool, int, float)) and not holds_size(v):
        dt = t.dtype
        if dt.kind == "O":  # a number is no string (TensorFlow converts it to none)
            raise TypeError(f"Cannot convert {v!r} to EagerTensor of dtype string")
        # isinstance, not type(v) is float: np.float64 subclasses float, and its zeros must not
        # share a key either (np.float64(0.0) once got a cached -0.0, so 1 / it was -inf)
        key = (type(v), v, dt) if v or not isinstance(v, float) else _zero_key(v, dt)
        c = _consts.get(key)
        if c is not None:
            return c
        if dt.kind in "iu" and isinstance(v, float) and (type(v) is float or
                                                         not float(v).is_integer()):
            # TensorFlow converts no Python float to an integer dtype, not even 1.0 (a NumPy
            # float64 scalar it truncates: here it must be integral)
            raise TypeError(f"Cannot convert {v!r} to EagerTensor of dtype {dt.name}")
        if dt.kind == "b" and not isinstance(v, bool):
            raise TypeError(f"Cannot convert {v!r} to EagerTensor of dtype bool")
        c = _wrap(np.asarray(v, dtype=dt))
        if len(_consts) < 4096 and v == v:  # NaN keys never match; don't cache them
            _consts[key] = c
        return c
    if isinstance(v, np.generic) and v.dtype.kind in "biuf" and t.dtype.kind in "biufc":
        return _numpy_scalar_like(v, t.dtype)
    if isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind not in "OUS":
        return _wrap(np.asarray(v))
    if v is None:
        raise ValueError("Attempt to convert a value (None) with an unsupported type "
                         "(<class 'NoneType'>) to a Tensor.")
    if isinstance(v, (str, bytes)):  # only beside a string tensor (TensorFlow's TypeError)
        return convert_to_tensor(v, dtype=t.dtype)
    try:
        return convert_to_tensor(v, dtype=t.dtype)
    except (TypeError, ValueError):
        return convert_to_tensor(v)


def _numpy_scalar_like(v, dt):
    """A NumPy scalar takes the tensor's dtype, as a Python number does (TensorFlow's rule:
    ``int32 tensor - np.int64(1)`` is int32), if it keeps its value there (TensorFlow
    truncates ``np.float32(1.5)`` to an int32 1; that raises here)."""
    with np.errstate(invalid="ignore", over="ignore"):  # NaN or too large: raises below
        out = np.asarray(v).astype(dt)
    if dt.kind == "b" and v.dtype.kind != "b" or dt.kind in "iu" and out != v:
        raise TypeError(f"Cannot convert {v!r} to EagerTensor of dtype {dt.name}")
    return _wrap(out)


def _zero_key(v, dt):
    """The cache key of a float zero: -0.0 == 0.0 (and hashes alike), yet 1 / -0.0 is -inf,
    so x + -0.0 must not get the +0.0 constant."""
    return (float, "-0.0" if math.copysign(1.0, v) < 0 else "0.0", dt)


def cast(x, dtype):
    from tapegrad.primitives.shape import cast_p
    return bind(cast_p, x, dtype=np.dtype(dtype).name)


def binary(x, y, op="binary op"):
    """Two operands of one dtype (``op`` names the operation in TensorFlow's error).

    Two tensors of different dtypes raise TensorFlow's InvalidArgumentError, even of one kind
    (float16 with float32: TensorFlow has no promotion); a NumPy value or Python number
    takes the tensor's dtype (``float16 tensor + np.float32 array`` is float16 there)."""
    x_is, y_is = isinstance(x, Tensor), isinstance(y, Tensor)
    if x_is:
        if not isinstance(y, Tensor):
            y = like(y, x)
    elif isinstance(y, Tensor):
        x = like(x, y)
    else:
        # TensorFlow converts the first operand and gives the second its dtype:
        # tf.maximum(0., [1, -1]) is float32, not a promotion of float32 and int32.
        # An integer first operand keeps the promotion rule below.
        x = convert_to_tensor(x)
        if x.dtype.kind in "fc":
            try:
                y = like(y, x)
            except (TypeError, ValueError):
                y = convert_to_tensor(y)
        else:
            y = convert_to_tensor(y)
    if x.dtype != y.dtype:
        if not same_kind(x, y) or x_is and y_is:
            mismatch(op, x, y)
        if y_is:  # x was a NumPy value: it takes the tensor's dtype
            x = cast(x, y.dtype)
        else:  # y was not a tensor (nor was x, perhaps: then x's dtype is the first's)
            y = cast(y, x.dtype)
    return x, y


ALL_AXES = [tuple(range(n)) for n in range(33)]


def axes(axis, ndim, op="reduction"):
    """Normalise ``axis`` (None, int, list, tensor) to a sorted tuple of non-negative ints."""
    if axis is None:
        return ALL_AXES[ndim] if ndim < len(ALL_AXES) else tuple(range(ndim))
    if isinstance(axis, Tensor):
        axis = np.asarray(axis._value).tolist()
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    out = set()
    for a in axis:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(
                f"Invalid {op} dimension {a} for input with {ndim} dimensions.")
        out.add(a % ndim if ndim else 0)
    return tuple(sorted(out))


def axis1(axis, ndim, op="axis"):
    """One axis, normalised to a non-negative int."""
    if isinstance(axis, Tensor):
        axis = int(axis)
    a = int(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"{op}: axis {a} is out of range for a tensor of rank {ndim}.")
    return a % ndim


def static_shape(shape):
    """A shape given as ints, a list holding scalar tensors, or a 1-D integer tensor."""
    if isinstance(shape, Tensor):
        a = np.asarray(shape._value)
        if a.dtype.kind not in "iub":
            _not_integral(shape)
        return tuple(int(s) for s in a.reshape(-1))
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    if is_size(shape):  # one symbolic size (trace/symbolic.py)
        return (shape,)
    out = []
    for s in shape:
        if s is None:
            out.append(-1)
        elif holds_size(s):  # a symbolic size stays one (trace/symbolic.py)
            out.append(s)
        elif isinstance(s, (int, np.integer)):  # bool too: TensorFlow takes [True] as [1]
            out.append(int(s))
        elif isinstance(s, Tensor):
            if s.dtype.kind not in "iub":
                _not_integral(shape)
            out.append(int(s))
        elif isinstance(s, (str, bytes)) or not hasattr(s, "__index__") and \
                np.asarray(getattr(s, "_value", s)).dtype.kind not in "iub":
            _not_integral(shape)  # 2.5 is not a size, nor is 2.0 (int() would truncate)
        else:
            out.append(int(s))
    return tuple(out)


def _not_integral(shape):
    raise TypeError(f"Cannot convert {list(shape) if isinstance(shape, tuple) else shape!r} "
                    "to EagerTensor of dtype int32")


def matrices(x, op, square=True, floating=True):
    """``x`` as a tensor of (a batch of) matrices, or a clear error naming ``op``.

    >>> tuple(matrices([[1.0, 2.0], [3.0, 4.0]], "det").shape)
    (2, 2)
    """
    x = tensor(x)
    if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
        what = "square matrices" if square else "matrices"
        raise ValueError(f"{op}: input must be a (batch of) {what}, with shape [..., M, "
                         f"{'M' if square else 'N'}], got shape {tuple(x.shape)}.")
    if floating and x.dtype.kind not in "fc":
        raise TypeError(f"{op}: input must be a floating tensor, got {x.dtype.name}.")
    return x
