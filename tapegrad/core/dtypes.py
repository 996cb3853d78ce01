"""Dtypes are plain NumPy dtype objects, so ``tf.float32 == np.float32`` holds.

``tf.string`` is NumPy's object dtype: a string tensor holds an object array of ``bytes``
(TensorFlow's values), so strings of any length share one dtype. NumPy names it "object";
``name`` gives TensorFlow's names where a message or ``repr`` shows a dtype.

>>> name(string), name(float32)
('string', 'float32')
"""
import numpy as np

float16 = np.dtype("float16")
float32 = np.dtype("float32")
float64 = np.dtype("float64")
int8 = np.dtype("int8")
int16 = np.dtype("int16")
int32 = np.dtype("int32")
int64 = np.dtype("int64")
uint8 = np.dtype("uint8")
uint16 = np.dtype("uint16")
uint32 = np.dtype("uint32")
uint64 = np.dtype("uint64")
bool_ = np.dtype("bool")
complex64 = np.dtype("complex64")
complex128 = np.dtype("complex128")
string = np.dtype("O")
half, double = float16, float64

_BY_NAME = {
    "float16": float16, "float32": float32, "float64": float64, "half": float16,
    "double": float64, "int8": int8, "int16": int16, "int32": int32, "int64": int64,
    "uint8": uint8, "uint16": uint16, "uint32": uint32, "uint64": uint64, "bool": bool_, "complex64": complex64, "complex128": complex128, "string": string,
}


def as_dtype(d):
    """Normalise a dtype-like (``'float32'``, ``np.float32``, ``tf.float32``) to ``np.dtype``.

    >>> as_dtype('float64')
    dtype('float64')
    """
    if d is None:
        return None
    if isinstance(d, str) and d in _BY_NAME:
        return _BY_NAME[d]
    try:
        out = np.dtype(d)
    except TypeError:
        raise TypeError(f"Cannot convert {d!r} to a dtype") from None
    return string if out.kind in "US" else out  # str, bytes, "<U3": TensorFlow's one string


def name(d):
    """TensorFlow's name of the dtype ``d``: NumPy's, but "string" for the object dtype."""
    return "string" if d.kind == "O" else d.name


def is_string(d):
    """True for ``tf.string`` (object arrays of bytes)."""
    return d.kind == "O"


def is_floating(d):
    """True for float and complex dtypes: the only ones a tape differentiates."""
    return d.kind in "fc"
