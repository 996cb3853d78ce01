"""Casts from floating point to integers as TensorFlow's CPU kernels compute them, where
NumPy's ``astype`` leaves NaN, inf and out-of-range values to the C compiler (0 with a
RuntimeWarning on x86, -2**31 for some dtypes, anything elsewhere).

TensorFlow (2.21, x86-64) converts through the processor's truncating conversions:

- to int32 and int64: the value truncated toward zero where it fits, else (NaN, ±inf, too
  large) the "integer indefinite" value, the most negative integer;
- to uint32 and uint64: the truncated value where it fits, through two signed conversions
  (of ``x`` and of ``x - 2**(n-1)``, combined as ``a | (b & (a >> n-1))``): NaN, ±inf and
  values past the top give ``2**(n-1)``, negative ones the wrapped ``-trunc(x)``;
- to int8, int16, uint8 and uint16: the int32 conversion above, saturated to the target's
  range (NaN -> -128 for int8, 0 for uint8; 300.0 -> 127 for int8, 255 for uint8), in the
  kernel's steps: float64 and float16 to uint8 through an unsigned 16-bit saturation read
  back as int16, so 32768.0 and above give 0 there (float32: 255).

TensorFlow's narrow casts have a second path: tensors of fewer elements than one vector of
the kernel (32 float32, 16 float64; 8 for uint32) and the last elements of larger ones
wrap the int32 (or int64) conversion instead of saturating it (NaN -> 0 for int8, 300.0 ->
44). tapegrad gives every element the first rule, whatever the size of its tensor (README,
"Differences from TensorFlow"). Float16 values convert as float32, as TensorFlow's do.
Complex values keep their real part. Casts between integers wrap, in NumPy and TensorFlow
alike; every other cast is ``astype``.
"""
import numpy as np

_I32 = np.dtype(np.int32)
_MIN, _MAX = np.minimum.reduce, np.maximum.reduce
_I64 = np.dtype(np.int64)


def cast_array(x, dtype):
    """``x`` (an array or NumPy scalar) as ``dtype``, float to integer as TensorFlow casts.

    >>> import numpy as np
    >>> x = np.array([np.nan, np.inf, -1.5, 300.0, 3e9], np.float32)
    >>> cast_array(x, "int8").tolist(), cast_array(x, "int32").tolist()
    ([-128, -128, -1, 127, -128], [-2147483648, -2147483648, -1, 300, -2147483648])
    >>> cast_array(x, "uint32").tolist()
    [2147483648, 2147483648, 4294967295, 300, 3000000000]
    """
    to = _DTYPES.get(dtype) if type(dtype) is str else None
    if to is None:
        to = np.dtype(dtype)
    if not hasattr(x, "astype"):
        x = np.asarray(x)
    if to.kind not in "iu" or x.dtype.kind not in "fc":
        return x.astype(to, copy=False)
    scalar = not isinstance(x, np.ndarray)  # a NumPy scalar stays one
    a = np.asarray(x.real if x.dtype.kind == "c" else x)
    u16 = a.dtype.itemsize != 4  # float16 and float64 pack to uint8 alike (see the module)
    if a.dtype.itemsize < 4:  # float16 converts as float32
        a = a.astype(np.float32)
    out = _to_integer(a, to, u16)
    return out[()] if scalar else out


_DTYPES = {str(np.dtype(t)): np.dtype(t) for t in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")}


def _truncate(x, bits):
    """The signed ``bits``-bit conversion of float array ``x``: ``trunc(x)`` where it fits,
    else the most negative integer (NaN, inf, out of range)."""
    to = _I32 if bits == 32 else _I64
    hi = 2.0 ** (bits - 1)  # exact in float32 and float64
    # trunc(x) fits iff -hi - 1 < x < hi. Only float64 has values in (-hi - 1, -hi), and
    # only for 32 bits: elsewhere the test is -hi <= x
    below = -hi - 1 if (x.dtype.itemsize == 8 and bits == 32) else None
    if x.size == 0 or (float(_MAX(x, None)) < hi and (
            float(_MIN(x, None)) > below if below is not None
            else float(_MIN(x, None)) >= -hi)):
        return x.astype(to)  # every value fits (NaN fails every comparison)
    t = x.dtype.type
    fits = ((x > t(below)) if below is not None else (x >= t(-hi))) & (x < t(hi))
    return np.where(fits, np.where(fits, x, 0).astype(to), to.type(np.iinfo(to).min))


def _to_integer(x, dtype, u16):
    bits = dtype.itemsize * 8
    if dtype.kind == "i" and bits >= 32:
        return _truncate(x, bits)
    if dtype.kind == "u" and bits >= 32:
        half = x.dtype.type(2.0 ** (bits - 1))
        a = _truncate(x, bits)
        with np.errstate(invalid="ignore", over="ignore"):
            b = _truncate(x - half, bits)  # in x's own precision, as the kernel rounds it
        return (a | (b & (a >> (bits - 1)))).view(dtype)
    c = _truncate(x, 32)
    if dtype == np.uint8 and u16:  # packed as the kernel packs: to uint16, read as int16
        c = np.minimum(np.maximum(c, 0), 65535).astype(np.uint16).view(np.int16)
    info = np.iinfo(dtype)
    return np.minimum(np.maximum(c, info.min), info.max).astype(dtype)
