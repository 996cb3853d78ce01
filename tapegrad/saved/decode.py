"""JSON data plus arrays -> a checked ``Program`` (the reading half of the format).

The file is untrusted. Every field is checked for its type and range before it is used, every
name must be defined exactly once before use, primitives are looked up in the registry by
name (never imported or evaluated), params are rebuilt from typed data only, and arrays come
from ``np.load(allow_pickle=False)`` after their headers were checked. The IR checker then
re-derives every shape with the primitives' own rules. Any problem raises ``LoadError``.
"""
import math
import re

import numpy as np

from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.ir import Const, Equation, IRError, Program, Var, make_params
from tapegrad.primitives.params import param_names
from tapegrad.primitives.gather import Index
from tapegrad.saved.format import (DTYPES, MAX_DEPTH, MAX_ELEMENTS, MAX_INT, MAX_STR,
                                   SAFE_STR, LoadError, valid_name)

_FLOAT = re.compile(r"-?(inf|nan|\d+(\.\d*)?([eE][-+]?\d+)?)\Z")
# Integer params are sizes, axes or positions, bounded by the equation's own dimensions and
# arity (a crafted pad width must not allocate terabytes while shapes are checked), but the
# ones a block names as values (``Primitive.value_params``).


def fail(where, msg):
    raise LoadError(f"{where}: {msg}")


def keys(d, want, where):
    if not isinstance(d, dict):
        fail(where, f"expected an object, got {type(d).__name__}")
    if set(d) != set(want):
        extra, missing = sorted(set(d) - set(want)), sorted(set(want) - set(d))
        fail(where, f"unexpected fields {extra[:5]}" if extra else f"missing fields {missing}")
    return d


def as_list(x, where):
    if not isinstance(x, list):
        fail(where, f"expected a list, got {type(x).__name__}")
    return x


def as_int(x, where, lo=-MAX_INT, hi=MAX_INT):
    if not isinstance(x, int) or isinstance(x, bool) or not lo <= x <= hi:
        fail(where, f"expected an integer in [{lo}, {hi}], got {_short(x)}")
    return x


def _short(x):
    r = repr(x)
    return r if len(r) <= 80 else r[:77] + "..."


class Decoder:
    """Decodes programs; ``arrays`` reads the npz members (see ``archive.Arrays``)."""

    def __init__(self, arrays):
        self.arrays = arrays

    def var(self, d, where):
        keys(d, ("name", "shape", "dtype"), where)
        if not valid_name(d["name"]):
            fail(where, f"invalid variable name {_short(d['name'])}")
        shape = tuple(as_int(s, f"{where}.shape", 0, MAX_ELEMENTS)
                      for s in as_list(d["shape"], f"{where}.shape"))
        if len(shape) > 32 or math.prod(shape) > MAX_ELEMENTS:
            fail(where, f"absurd shape {list(shape)[:33]} (more than 2**40 elements or "
                        "32 axes)")
        if not isinstance(d["dtype"], str) or d["dtype"] not in DTYPES:
            fail(where, f"unsupported dtype {_short(d['dtype'])}")
        return Var(d["name"], shape, DTYPES[d["dtype"]])

    def program(self, d, where, depth=0):
        if depth > MAX_DEPTH:
            fail(where, f"sub-programs nested more than {MAX_DEPTH} deep")
        keys(d, ("name", "inputs", "captures", "constants", "equations", "outputs", "updates"),
             where)
        if not valid_name(d["name"]):
            fail(where, f"invalid program name {_short(d['name'])}")
        env = {}

        def define(v, w):
            if v.name in env:
                fail(w, f"variable {v.name!r} is defined twice")
            env[v.name] = v
            return v

        def use(name, w):
            if not isinstance(name, str) or name not in env:
                fail(w, f"variable {_short(name)} is used but not defined before")
            return env[name]

        ins = [define(self.var(v, f"{where}.inputs[{k}]"), where)
               for k, v in enumerate(as_list(d["inputs"], f"{where}.inputs"))]
        caps = [define(self.var(v, f"{where}.captures[{k}]"), where)
                for k, v in enumerate(as_list(d["captures"], f"{where}.captures"))]
        consts = [self.constant(c, f"{where}.constants[{k}]", define)
                  for k, c in enumerate(as_list(d["constants"], f"{where}.constants"))]
        eqs = []
        for k, e in enumerate(as_list(d["equations"], f"{where}.equations")):
            w = f"{where}.equations[{k}]"
            keys(e, ("primitive", "inputs", "params", "outputs"), w)
            prim = self.primitive(e["primitive"], w)
            args = tuple(use(n, w) for n in as_list(e["inputs"], f"{w}.inputs"))
            if (prim.nin is None and not args) or (prim.nin is not None and len(args) != prim.nin):
                fail(w, f"{prim.name} takes {prim.nin or 'at least 1'} inputs, got {len(args)}")
            outs = tuple(self.var(v, f"{w}.outputs[{j}]")
                         for j, v in enumerate(as_list(e["outputs"], f"{w}.outputs")))
            if len(outs) != 1 and not getattr(prim, "multiple_results", False):
                fail(w, f"{prim.name} has one output, got {len(outs)}")
            params = self.params(prim, e["params"], w, args + outs, depth)
            for v in outs:
                define(v, w)
            eqs.append(Equation(prim, args, make_params(params), outs))
        outputs = tuple(use(n, f"{where}.outputs")
                        for n in as_list(d["outputs"], f"{where}.outputs"))
        updates = []
        for u in as_list(d["updates"], f"{where}.updates"):
            if not isinstance(u, list) or len(u) != 2:
                fail(f"{where}.updates", f"expected [capture index, variable], got {_short(u)}")
            updates.append((as_int(u[0], f"{where}.updates", 0, len(caps) - 1),
                            use(u[1], f"{where}.updates")))
        return Program(tuple(ins), tuple(caps), tuple(consts), tuple(eqs), outputs,
                       tuple(updates), d["name"])

    def constant(self, c, where, define):
        keys(c, ("var", "data", "broadcast"), where)
        v = self.var(c["var"], f"{where}.var")
        if not isinstance(c["broadcast"], bool):
            fail(where, "broadcast must be true or false")
        if c["broadcast"]:  # one value, repeated: stored once
            value = np.broadcast_to(self.arrays.read(c["data"], where, (), v.dtype), v.shape)
        else:
            value = self.arrays.read(c["data"], where, v.shape, v.dtype)
            value.flags.writeable = False
        return Const(define(v, where), value)

    def primitive(self, name, where):
        prim = PRIMITIVES.get(name) if isinstance(name, str) else None
        if prim is None:  # the name is only ever a dictionary key: never imported or run
            fail(where, f"unknown primitive {_short(name)}")
        return prim

    def params(self, prim, d, where, vars_, depth):
        if not isinstance(d, dict):
            fail(where, "params must be an object")
        want = param_names(prim)
        if set(d) != want:
            extra, missing = sorted(set(d) - want), sorted(want - set(d))
            fail(where, f"{prim.name} takes params {sorted(want)}; unknown "
                        f"[{', '.join(_short(k) for k in extra[:5])}], missing {missing}")
        bound = max([64, len(vars_)] + [s for v in vars_ for s in v.shape])
        out = {}
        for k, v in d.items():
            w = f"{where}.params.{k}"
            out[k] = self.value(v, w, depth)
            if k not in prim.value_params:
                _bounded(out[k], bound, w)
        return out

    def value(self, x, where, depth):
        if not isinstance(x, dict) or len(x) != 1:
            fail(where, f"expected a typed value like {{\"int\": 3}}, got {_short(x)}")
        (kind, v), = x.items()
        if kind == "none" and v is None:
            return None
        if kind == "bool" and isinstance(v, bool):
            return v
        if kind == "int":
            return as_int(v, where)
        if kind == "float" and isinstance(v, str) and _FLOAT.match(v):
            return float(v)
        if kind == "str" and isinstance(v, str):
            if len(v) > MAX_STR or not SAFE_STR.match(v):
                fail(where, f"string params hold letters, digits and _.,-> only, got {_short(v)}")
            return v
        if kind == "dtype" and isinstance(v, str) and v in DTYPES:
            return DTYPES[v]
        if kind in ("tuple", "list"):
            items = [self.value(i, where, depth) for i in as_list(v, where)]
            return tuple(items) if kind == "tuple" else items
        if kind == "index":
            return Index(tuple(self.index_item(i, where) for i in as_list(v, where)))
        if kind == "program":
            from tapegrad.control_flow.primitives import Subprogram
            try:
                return Subprogram(self.program(v, f"{where}.program", depth + 1))
            except IRError as e:
                fail(where, f"invalid sub-program: {e}")
        fail(where, f"invalid value {_short(x)}")

    def index_item(self, x, where):
        if not isinstance(x, dict) or len(x) != 1:
            fail(where, f"invalid index item {_short(x)}")
        (kind, v), = x.items()
        if kind in ("none", "ellipsis") and v is None:
            return None if kind == "none" else Ellipsis
        if kind == "int":
            return as_int(v, where)
        if kind == "slice" and isinstance(v, list) and len(v) == 3:
            parts = [None if p is None else as_int(p, where) for p in v]
            if parts[2] == 0:
                fail(where, "slice step cannot be zero")
            return slice(*parts)
        if kind == "array":
            return self.arrays.read(v, where, None, None, kinds="iub")
        fail(where, f"invalid index item {_short(x)}")


def _bounded(v, bound, where):
    if isinstance(v, (tuple, list)):
        for x in v:
            _bounded(x, bound, where)
    elif isinstance(v, int) and not isinstance(v, bool) and abs(v) > bound:
        fail(where, f"integer {v} exceeds the dimensions of its equation ({bound})")
