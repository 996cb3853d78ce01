"""``tf.strings``: element-wise functions of string tensors (object arrays of bytes).

Each function takes a string tensor of any shape (or Python strings, converted) and applies
its rule to every element with ``np.frompyfunc``, so the loop runs in NumPy. Strings are
bytes, as in TensorFlow: ``lower`` and ``upper`` change ASCII letters only unless
``encoding="utf-8"``; regular expressions follow RE2's syntax where Python's ``re`` agrees
(``\\w``, ``\\d``, ``\\s`` are ASCII, ``.`` is one UTF-8 character). String tensors hold no
numbers, so nothing here is differentiable, and generated programs compute no strings:
inside ``tf.function`` these raise (``tf.data``'s ``map`` and Keras's eager steps call them
eagerly).

>>> import tapegrad as tf
>>> tf.strings.lower(["Hello World", "ABC"]).numpy().tolist()
[b'hello world', b'abc']
>>> tf.strings.length(tf.constant("été"), unit="UTF8_CHAR").numpy()
array(3, dtype=int32)
"""
import re

import numpy as np

from tapegrad.core import dtypes as _dt
from tapegrad.core.tensor import Tensor, convert_to_tensor
from tapegrad.errors import InvalidArgumentError, OutOfRangeError
from tapegrad.ops._kinds import tf_name

__all__ = ["lower", "upper", "length", "strip", "regex_replace", "regex_full_match", "join",
           "reduce_join", "substr", "to_number", "as_string"]

_wrap = Tensor._wrap


def strings(x, op, index=0):
    """``x`` as a concrete string tensor, or TensorFlow's error naming ``op``."""
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x)
    if x._symbolic:
        raise NotImplementedError(f"tf.strings ({op}) inside tf.function: tapegrad's "
                                  "generated programs compute no strings. Call it eagerly "
                                  "(tf.data's map does), or outside the function.")
    if x.dtype.kind != "O":
        raise InvalidArgumentError(f"cannot compute {op} as input #{index}(zero-based) was "
                                   "expected to be a string tensor but is a "
                                   f"{tf_name(x.dtype)} tensor [Op:{op}]")
    return x


def _apply(fn, x, dtype=object):
    """``fn`` on every element of the object array ``x``: an array of ``dtype``."""
    out = np.frompyfunc(fn, 1, 1)(x)
    return np.asarray(out, dtype=object).astype(dtype, copy=False)


def _text(b):
    """Bytes as str, any invalid UTF-8 byte kept (surrogateescape) so it encodes back."""
    return b.decode("utf-8", "surrogateescape")


def _bytes(s):
    return s.encode("utf-8", "surrogateescape")


def _check_encoding(encoding, op):
    if encoding not in ("", "utf-8", "UTF-8", "utf8", "UTF8"):
        raise InvalidArgumentError(f"{op}: encoding must be '' or 'utf-8', got {encoding!r}")
    return bool(encoding)


def lower(input, encoding="", name=None):
    """Lower-case letters: ASCII ones (``encoding=""``), or all of UTF-8 (``"utf-8"``)."""
    x = strings(input, "StringLower")
    if _check_encoding(encoding, "StringLower"):
        return _wrap(_apply(lambda b: _bytes(_text(b).lower()), x._value))
    return _wrap(_apply(bytes.lower, x._value))


def upper(input, encoding="", name=None):
    """Upper-case letters: ASCII ones (``encoding=""``), or all of UTF-8 (``"utf-8"``)."""
    x = strings(input, "StringUpper")
    if _check_encoding(encoding, "StringUpper"):
        return _wrap(_apply(lambda b: _bytes(_text(b).upper()), x._value))
    return _wrap(_apply(bytes.upper, x._value))


def _utf8_length(b):
    return len(b.decode("utf-8", "replace"))


def length(input, unit="BYTE", name=None):
    """The length of each string (int32), in bytes or (``unit="UTF8_CHAR"``) characters.

    >>> import tapegrad as tf
    >>> tf.strings.length(["ab", "é"]).numpy().tolist()
    [2, 2]
    """
    x = strings(input, "StringLength")
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise InvalidArgumentError(f"Value for attr 'unit' of \"{unit}\" is not in the list "
                                   "of allowed values: \"BYTE\", \"UTF8_CHAR\" "
                                   "[Op:StringLength]")
    return _wrap(_apply(len if unit == "BYTE" else _utf8_length, x._value, np.int32))


def strip(input, name=None):
    """Each string without its leading and trailing ASCII whitespace."""
    return _wrap(_apply(bytes.strip, strings(input, "StringStrip")._value))


def _pattern(pattern, op):
    """A compiled regular expression from RE2-style ``pattern`` (TensorFlow's syntax)."""
    if isinstance(pattern, Tensor):
        pattern = pattern.numpy()
    if isinstance(pattern, bytes):
        pattern = _text(pattern)
    try:
        return re.compile(pattern, re.ASCII)
    except re.error as e:
        raise InvalidArgumentError(f"Invalid pattern: {pattern}, error: {e} [Op:{op}]") \
            from None


def _rewrite(rewrite):
    """RE2's rewrite string (``\\1``; ``\\0`` the whole match) in Python's form."""
    if isinstance(rewrite, Tensor):
        rewrite = rewrite.numpy()
    if isinstance(rewrite, bytes):
        rewrite = _text(rewrite)
    return re.sub(r"\\(\d)", r"\\g<\1>", rewrite.replace("\\\\", "\x00")).replace(
        "\x00", "\\\\")


def regex_replace(input, pattern, rewrite, replace_global=True, name=None):
    """Each match of ``pattern`` replaced by ``rewrite`` (all of them, or only the first
    where ``replace_global=False``); ``\\1`` in ``rewrite`` is the first group.

    >>> import tapegrad as tf
    >>> tf.strings.regex_replace("a.b,c", r"[.,]", " ").numpy()
    b'a b c'
    """
    x = strings(input, "StaticRegexReplace")
    regex, repl = _pattern(pattern, "StaticRegexReplace"), _rewrite(rewrite)
    count = 0 if replace_global else 1
    return _wrap(_apply(lambda b: _bytes(regex.sub(repl, _text(b), count=count)), x._value))


def regex_full_match(input, pattern, name=None):
    """Whether each whole string matches ``pattern`` (bool)."""
    x = strings(input, "StaticRegexFullMatch")
    regex = _pattern(pattern, "StaticRegexFullMatch")
    return _wrap(_apply(lambda b: regex.fullmatch(_text(b)) is not None, x._value, bool))


def _separator(sep):
    if isinstance(sep, Tensor):
        sep = sep.numpy()
    return sep.encode("utf-8") if isinstance(sep, str) else bytes(sep)


def join(inputs, separator="", name=None):
    """Element-wise join of string tensors of one shape (scalars broadcast).

    >>> import tapegrad as tf
    >>> tf.strings.join([["a", "b"], "x"], separator="-").numpy().tolist()
    [b'a-x', b'b-x']
    """
    xs = [strings(x, "StringJoin", i) for i, x in enumerate(inputs)]
    sep = _separator(separator)
    shapes = {tuple(x.shape) for x in xs if x.ndim}
    if len(shapes) > 1:
        a, b = sorted(shapes)[:2]
        raise InvalidArgumentError(f"Input shapes do not match: {list(a)} vs. {list(b)} "
                                   "[Op:StringJoin]")
    if not xs:
        return _wrap(np.array(b"", dtype=object))
    shape = shapes.pop() if shapes else ()
    out = np.empty(shape, dtype=object)
    parts = [np.broadcast_to(x._value, shape).reshape(-1) for x in xs]
    out.reshape(-1)[:] = [sep.join(p) for p in zip(*parts)] if parts[0].size else []
    return _wrap(out)


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """The strings along ``axis`` (all axes where None) joined with ``separator``.

    >>> import tapegrad as tf
    >>> tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1).numpy().tolist()
    [b'ab', b'cd']
    """
    x = strings(inputs, "ReduceJoin")
    v, sep = x._value, _separator(separator)
    if axis is None:
        axes = tuple(range(v.ndim))
    else:
        raw = axis.numpy().tolist() if isinstance(axis, Tensor) else axis
        raw = [raw] if isinstance(raw, (int, np.integer)) else list(raw)
        for a in raw:
            if not -v.ndim <= a < max(v.ndim, 1):
                raise OutOfRangeError(f"Invalid reduction dimension {a} for input with "
                                      f"{v.ndim} dimensions. [Op:ReduceJoin]")
        axes = tuple(sorted({a % v.ndim for a in raw})) if v.ndim else ()
    kept = [a for a in range(v.ndim) if a not in axes]
    moved = np.transpose(v, kept + list(axes))
    rows = moved.reshape((-1, int(np.prod([v.shape[a] for a in axes], dtype=np.int64))))
    out = np.empty(len(rows), dtype=object)
    out[:] = [sep.join(r) for r in rows]
    out = out.reshape([v.shape[a] for a in kept])
    if keepdims:
        out = out.reshape([1 if a in axes else n for a, n in enumerate(v.shape)])
    return _wrap(out)


def substr(input, pos, len, unit="BYTE", name=None):
    """``len`` bytes (or UTF-8 characters) from ``pos`` of each string (a negative ``pos``
    counts from the end); ``pos`` beyond a string's end raises, as in TensorFlow."""
    x = strings(input, "Substr")
    if unit not in ("BYTE", "UTF8_CHAR"):
        raise InvalidArgumentError(f"Value for attr 'unit' of \"{unit}\" is not in the list "
                                   "of allowed values: \"BYTE\", \"UTF8_CHAR\" [Op:Substr]")
    pos_a = np.asarray(getattr(pos, "_value", pos), dtype=np.int64)
    len_a = np.asarray(getattr(len, "_value", len), dtype=np.int64)
    v, p, n = np.broadcast_arrays(x._value, pos_a, len_a)
    out = np.empty(v.shape, dtype=object)
    flat_out = out.reshape(-1)
    for i, (b, start, size) in enumerate(zip(v.reshape(-1), p.reshape(-1), n.reshape(-1))):
        s = _text(b) if unit == "UTF8_CHAR" else b
        if not -builtins_len(s) <= start <= builtins_len(s):
            shown = "" if unit == "UTF8_CHAR" else f"{b!r} "
            raise InvalidArgumentError(f"pos {start} out of range for string {shown}at index "
                                       f"{i} [Op:Substr]")
        start = start % builtins_len(s) if start < 0 else start
        piece = s[start:start + max(size, 0)]
        flat_out[i] = _bytes(piece) if unit == "UTF8_CHAR" else piece
    return _wrap(out)


builtins_len = len  # substr's argument ``len`` (TensorFlow's name) hides the builtin there


def _number(dtype):
    def parse(b):
        text = b.strip()
        try:
            return int(text) if dtype.kind in "iu" else float(text)
        except ValueError:
            raise InvalidArgumentError("StringToNumberOp could not correctly convert string: "
                                       f"{_text(b)} [Op:StringToNumber]") from None
    return parse


def to_number(input, out_type=_dt.float32, name=None):
    """Each string parsed as a number of ``out_type`` (float32 unless given).

    >>> import tapegrad as tf
    >>> tf.strings.to_number(["1.5", "-2"]).numpy().tolist()
    [1.5, -2.0]
    """
    x = strings(input, "StringToNumber")
    dtype = _dt.as_dtype(out_type)
    if dtype not in (_dt.float32, _dt.float64, _dt.int32, _dt.int64):
        raise TypeError(f"Value passed to parameter 'out_type' has DataType {_dt.name(dtype)} "
                        "not in list of allowed values: float32, float64, int32, int64")
    values = _apply(_number(dtype), x._value)
    if dtype.kind == "i":
        info = np.iinfo(dtype)
        flat = values.reshape(-1)
        if flat.size and (min(flat) < info.min or max(flat) > info.max):
            raise InvalidArgumentError("StringToNumberOp could not correctly convert string: "
                                       "out of range [Op:StringToNumber]")
    return _wrap(values.astype(dtype))


def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="",
              name=None):
    """Each number as a string, printf-style: floats ``%.6f`` (``precision`` digits,
    ``scientific`` ``%e``, ``shortest`` ``%g``), integers ``%d``, bools "true"/"false";
    ``width`` pads on the left with ``fill`` (" " or "0").

    >>> import tapegrad as tf
    >>> tf.strings.as_string([1.5, 2.0], precision=1).numpy().tolist()
    [b'1.5', b'2.0']
    """
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    if x.dtype.kind == "O" or x._symbolic:  # a string is itself; a traced input raises
        return strings(x, "AsString")
    if scientific and shortest:
        raise InvalidArgumentError("Cannot select both scientific and shortest notation "
                                   "[Op:AsString]")
    if fill not in ("", " ", "0"):
        raise InvalidArgumentError(f"Fill argument not supported: \"{fill}\" [Op:AsString]")
    v = x._value
    if v.dtype.kind == "b":
        return _wrap(_apply(lambda b: b"true" if b else b"false", v.astype(object)))
    spec = "%" + ("0" if fill == "0" else "") + (str(width) if width >= 0 else "")
    if v.dtype.kind in "iu":
        spec += "d"
    elif v.dtype.kind == "f":
        spec += ("." + str(precision) if precision >= 0 else "") + (
            "e" if scientific else "g" if shortest else "f")
    else:
        raise NotImplementedError("tf.strings.as_string of complex numbers is not "
                                  "implemented in tapegrad.")
    return _wrap(_apply(lambda a: (spec % a).encode(), v.astype(object)))
