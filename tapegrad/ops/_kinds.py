"""The dtypes each op takes, as TensorFlow 2.21's kernels do, and TensorFlow's errors.

An op's rule is a string of NumPy dtype kinds: ``b`` bool, ``i`` signed and ``u`` unsigned
integers, ``f`` floats, ``c`` complex. A dtype outside it raises what TensorFlow raises
(``InvalidArgumentError``: "Value for attr 'T' of uint8 is not in the list of allowed
values..."), never a number TensorFlow would not give: ``tf.abs`` of uint8, ``tf.floor`` of
int32, a sum of bools, ``tf.math.is_nan`` of integers, ``tf.exp`` or ``tf.sqrt`` of int32
(a float function of integers: cast them first, as TensorFlow asks).
"""
import numpy as np

from tapegrad.errors import InvalidArgumentError, NotFoundError

_NAMES = {"b": "bool", "i": "int8, int16, int32, int64", "u": "uint8, uint16, uint32, uint64",
          "f": "bfloat16, half, float, double", "c": "complex64, complex128"}
_TF = {"float16": "half", "float32": "float", "float64": "double"}

# the rules of ops that many share
NUMBERS = "iufc"       # no bool: add, multiply, reduce_sum, square, ...
REAL = "iuf"           # and no complex: maximum, less, reduce_max, ...
SIGNED = "ifc"         # abs, sign, negative: no bool, no unsigned
FLOATS = "f"           # floor, ceil, is_nan, is_inf, is_finite
FLOAT_FNS = "fc"       # exp, sin, sqrt, ...: floats and complex numbers only
BOOL = "b"             # logical_and, logical_or, logical_xor, logical_not, reduce_any/all


def tf_name(dtype):
    """TensorFlow's name of a dtype in its error messages (float32 is 'float')."""
    name = np.dtype(dtype).name
    return "string" if name == "object" else _TF.get(name, name)


def require(x, kinds, op, missing=""):
    """Raise TensorFlow's error unless ``x``'s dtype kind is in ``kinds``.

    ``missing``: kinds TensorFlow registers the op for but has no CPU kernel of
    (``tf.math.reciprocal`` of int32), which raise ``NotFoundError`` as there.
    """
    kind = x.dtype.kind
    if kind in kinds:
        return
    if kind in missing:
        raise NotFoundError(f"Could not find device for node: {{{{node {op}}}}} = {op}"
                            f"[T=DT_{x.dtype.name.upper()}] (no CPU kernel for "
                            f"{tf_name(x.dtype)})")
    allowed = ", ".join(_NAMES[k] for k in "fciub" if k in kinds)
    raise InvalidArgumentError(f"Value for attr 'T' of {tf_name(x.dtype)} is not in the list "
                               f"of allowed values: {allowed} [Op:{op}]")


def require_bool(x, op, index=0):
    """The logical ops' error: their inputs are bool tensors, not numbers."""
    if x.dtype.kind != "b":
        raise InvalidArgumentError(
            f"cannot compute {op} as input #{index}(zero-based) was expected to be a bool "
            f"tensor but is a {tf_name(x.dtype)} tensor [Op:{op}]")


_GROUP = {"u": "i"}  # integers of either sign are one kind


def same_kind(x, y):
    """Whether two tensors' dtypes are of one kind (bool, integer, float, complex): the
    dtypes NumPy's promotion may join (README); other pairs get ``mismatch``."""
    a, b = x.dtype.kind, y.dtype.kind
    return _GROUP.get(a, a) == _GROUP.get(b, b)


def mismatch(op, x, y):
    """TensorFlow's error for two tensors of different dtypes in one op."""
    raise InvalidArgumentError(
        f"cannot compute {op} as input #1(zero-based) was expected to be a {tf_name(x.dtype)} "
        f"tensor but is a {tf_name(y.dtype)} tensor [Op:{op}]")
