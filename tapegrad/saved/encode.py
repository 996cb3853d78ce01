"""Program -> JSON-ready data plus named arrays (the writing half of the format).

Every param value is written with an explicit type (``{"int": 3}``, ``{"tuple": [...]}``), so
the reader never has to guess, and nothing but data is ever written.
"""
import itertools

import numpy as np

from tapegrad.primitives.gather import Index
from tapegrad.saved.format import MAX_STR, SAFE_STR


class Encoder:
    """Encodes programs; collects their arrays in ``arrays`` (npz key -> array)."""

    def __init__(self):
        self.arrays = {}
        self._count = itertools.count()

    def array(self, prefix, value):
        key = f"{prefix}{next(self._count)}"
        self.arrays[key] = np.asarray(value)
        return key

    def program(self, p):
        return {"name": p.name,
                "inputs": [var(v) for v in p.inputs],
                "captures": [var(v) for v in p.captures],
                "constants": [self.constant(c) for c in p.constants],
                "equations": [self.equation(e) for e in p.equations],
                "outputs": [v.name for v in p.outputs],
                "updates": [[i, v.name] for i, v in p.updates]}

    def constant(self, c):
        val = np.asarray(c.value)
        # A constant of one repeated value is a zero-strided broadcast: store the value once.
        broadcast = val.size > 1 and all(s == 0 for s in val.strides)
        data = val.reshape(-1)[0] if broadcast else val
        return {"var": var(c.var), "data": self.array("const", data), "broadcast": broadcast}

    def equation(self, e):
        return {"primitive": e.prim.name,
                "inputs": [v.name for v in e.inputs],
                "params": {k: self.value(v, f"{e.prim.name}.{k}") for k, v in e.params},
                "outputs": [var(v) for v in e.outs]}

    def value(self, v, where):
        from tapegrad.control_flow.primitives import Subprogram
        if v is None:
            return {"none": None}
        if isinstance(v, (bool, np.bool_)):
            return {"bool": bool(v)}
        if isinstance(v, (int, np.integer)):
            return {"int": int(v)}
        if isinstance(v, (float, np.floating)):
            return {"float": repr(float(v))}  # repr round-trips exactly, nan and inf too
        if isinstance(v, str):
            if len(v) > MAX_STR or not SAFE_STR.match(v):
                raise ValueError(f"save: param {where} holds the string {v!r}, which the "
                                 "format does not allow (letters, digits and _.,-> only).")
            return {"str": v}
        if isinstance(v, np.dtype):
            return {"dtype": v.name}
        if isinstance(v, (tuple, list)):
            return {"list" if isinstance(v, list) else "tuple":
                    [self.value(x, where) for x in v]}
        if isinstance(v, Index):
            return {"index": [self.index_item(k, where) for k in v.key]}
        if isinstance(v, Subprogram):
            return {"program": self.program(v.program)}
        raise TypeError(f"save: param {where} has a value of type {type(v).__name__}, which "
                        "the saved format cannot hold.")

    def index_item(self, k, where):
        if k is None:
            return {"none": None}
        if k is Ellipsis:
            return {"ellipsis": None}
        if isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)):
            return {"int": int(k)}
        if isinstance(k, slice):
            return {"slice": [None if x is None else int(x) for x in (k.start, k.stop, k.step)]}
        if isinstance(k, np.ndarray) and k.dtype.kind in "iub":
            return {"array": self.array("index", k)}
        raise TypeError(f"save: the index in {where} holds {k!r}, which cannot be saved.")


def var(v):
    return {"name": v.name, "shape": [int(s) for s in v.shape], "dtype": v.dtype.name}


def tree(x, counter):
    """The nesting of a function's outputs, leaves numbered in flattening order."""
    if isinstance(x, dict):
        if not all(isinstance(k, str) for k in x):
            raise TypeError("save: output dicts must have string keys.")
        return {"dict": [[k, tree(x[k], counter)] for k in sorted(x)]}
    if isinstance(x, list):
        return {"list": [tree(v, counter) for v in x]}
    if isinstance(x, tuple):  # namedtuples come back as plain tuples
        return {"tuple": [tree(v, counter) for v in x]}
    return {"tensor": next(counter)}
