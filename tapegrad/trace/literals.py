"""Safe source text of a program's values in generated code.

Three ways a value from a program reaches the source of ``trace/codegen.py``, each checked
here: a name (``identifier``), text between quotes (``quoted_text``: dtypes, subscripts) and
a literal (``int_text``, ``literal_text``), plus the line of a scalar constant
(``_const_line``). A saved file is untrusted (``saved/``), so nothing else of it is ever
formatted into code.

>>> literal_text((1, 2.5, "a")), int_text(3), identifier("h_ct")
("(1, 2.5, 'a')", '3', 'h_ct')
>>> quoted_text("ij,jk->ik")
'ij,jk->ik'
"""
import operator
import re

import numpy as np

from tapegrad.ir.names import usable

_QUOTED = re.compile(r"[A-Za-z0-9_.,\->]*\Z")


def identifier(name):
    """``name`` if it is a plain identifier (no keyword, no dunder), else ``ValueError``."""
    if not usable(name):
        raise ValueError(f"codegen: {name!r:.60} cannot be a name in generated code")
    return name


def quoted_text(v):
    """The text of a dtype or string param placed between quotes (``astype('{dtype}')``):
    letters, digits and ``_.,->`` only, so it cannot close the quotes."""
    text = v.name if isinstance(v, np.dtype) else v
    if not (isinstance(text, str) and _QUOTED.match(text)):
        raise ValueError(f"codegen: {v!r:.60} cannot be written between quotes")
    return text


def int_text(v):
    """The source of an integer (``operator.index``: ints and NumPy integers only)."""
    return repr(operator.index(v))


def literal_text(v):
    """The source of a simple literal (see ``_is_simple``), from the built-in types' own
    ``repr`` (a subclass cannot change what is written)."""
    if v is None or isinstance(v, bool):
        return repr(bool(v)) if v is not None else "None"
    if isinstance(v, int):
        return int.__repr__(v)
    if isinstance(v, float):
        return float.__repr__(v)
    if isinstance(v, str):
        return str.__repr__(v)
    items = [literal_text(x) for x in v]
    if isinstance(v, list):
        return "[" + ", ".join(items) + "]"
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _is_simple(v):
    if v is None or isinstance(v, (bool, int, str)):
        return True
    if isinstance(v, float):
        return np.isfinite(v)
    if isinstance(v, (tuple, list)):
        return all(_is_simple(x) for x in v)
    return False


def _const_line(name, value, as_array=False):
    """``c0 = np.float32(2.0)`` for a scalar constant, or None (passed in the namespace).

    ``as_array``: ``c0 = frozen(np.float32(2.0))``, a read-only 0-d array: an operand
    NumPy's ufuncs take without converting a scalar first (about 150 ns of a 300 ns
    multiply on a small array), while two scalars are fastest as NumPy scalars (40 ns).
    """
    if value.ndim or value.dtype.kind not in "biuf":
        return None
    x = value.item()
    if isinstance(x, float) and not np.isfinite(x):
        return None
    text = f"np.{value.dtype.name}({x!r})" if value.dtype.kind != "b" else f"np.bool_({x!r})"
    return f"{name} = frozen({text})" if as_array else f"{name} = {text}"
