"""Checks of a primitive's params, for its ``validate`` rule (see ``core/dispatch.Primitive``).

A saved program is untrusted, so every param of every equation is checked against its
primitive's domain before the shape rule runs: types first (an axis is an int, not a string
or a tuple), then ranges that depend on the inputs (an axis of a rank-2 input is 0 or 1).
Each helper returns the checked value or raises ``ValueError`` naming the primitive and the
param. A block states its rule in a few lines::

    def _argmax_validate(x, *, axis, output_type):
        check_axis("argmax", "axis", axis, x.ndim)
        check_dtype("argmax", "output_type", output_type, names=("int32", "int64"))

Axes are non-negative (the op layer normalises them) unless a helper says otherwise.
"""
import string

import numpy as np

MAX_RANK = 32  # NumPy's limit on the number of axes (64 in NumPy 2; saved files allow 32)
# Every dtype a tensor may have: the only names a dtype param (and a saved file) may hold.
DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float16", "float32", "float64", "complex64", "complex128")


def param_names(prim):
    """The params a primitive takes: the fields of its code-generation form (``emit``)."""
    return {f for _, f, _, _ in string.Formatter().parse(prim.emit or "")
            if f is not None and not f.isdigit() and f != "args"}


def fail(prim, param, msg):
    raise ValueError(f"{prim}: param {param} {msg}")


def is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def check_int(prim, param, v, lo=None, hi=None):
    """An int (not a bool) in ``[lo, hi]``."""
    if not is_int(v):
        fail(prim, param, f"must be an int, got {_short(v)}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        fail(prim, param, f"must lie in [{lo}, {hi}], got {v}")
    return int(v)


def check_bool(prim, param, v):
    if not isinstance(v, (bool, np.bool_)):
        fail(prim, param, f"must be True or False, got {_short(v)}")
    return bool(v)


def check_number(prim, param, v, finite=False):
    """A real Python/NumPy number (bools count as 0 and 1)."""
    if not isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating)):
        fail(prim, param, f"must be a number, got {_short(v)}")
    if finite and not np.isfinite(float(v)):
        fail(prim, param, f"must be finite, got {v!r}")
    return v


def check_axis(prim, param, axis, ndim):
    """One axis of a rank-``ndim`` input: an int in ``[0, ndim)``."""
    return check_int(prim, param, axis, 0, ndim - 1) if ndim else fail(
        prim, param, f"needs an input of rank >= 1, got {_short(axis)} for rank 0")


def check_axes(prim, param, axes, ndim):
    """A tuple of distinct axes of a rank-``ndim`` input."""
    if not isinstance(axes, tuple):
        fail(prim, param, f"must be a tuple of axes, got {_short(axes)}")
    out = tuple(check_axis(prim, param, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        fail(prim, param, f"repeats an axis: {out}")
    return out


def check_perm(prim, param, perm, ndim):
    """A permutation of ``range(ndim)``."""
    if not (isinstance(perm, tuple) and len(perm) == ndim and all(is_int(p) for p in perm)
            and sorted(int(p) for p in perm) == list(range(ndim))):
        fail(prim, param, f"must be a permutation of range({ndim}), got {_short(perm)}")
    return tuple(int(p) for p in perm)


def check_shape(prim, param, shape):
    """A tuple of at most ``MAX_RANK`` non-negative ints."""
    if not (isinstance(shape, tuple) and len(shape) <= MAX_RANK
            and all(is_int(s) and s >= 0 for s in shape)):
        fail(prim, param, f"must be a tuple of at most {MAX_RANK} sizes >= 0, got "
                          f"{_short(shape)}")
    return tuple(int(s) for s in shape)


def check_dtype(prim, param, v, names=None, kinds=None):
    """A dtype (``np.dtype`` or its name) among ``names`` or of one of ``kinds``."""
    name = v.name if isinstance(v, np.dtype) else v
    if not isinstance(name, str) or name not in DTYPE_NAMES:
        fail(prim, param, f"must be a dtype name, got {_short(v)}")
    d = np.dtype(name)
    if (names is not None and name not in names) or (kinds is not None and d.kind not in kinds):
        fail(prim, param, f"must be one of {names or 'kinds ' + kinds}, got {name}")
    return d


def _short(v):
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."
