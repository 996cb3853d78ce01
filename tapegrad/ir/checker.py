"""The checker: a program is valid, or ``check`` says exactly why not.

Checked: field types; every name defined exactly once, before use; each use agrees with the
definition (shape and dtype); primitives are registered; arities; each output's shape and
dtype re-derived with the primitive's ``abstract`` rule after its ``validate`` rule checked the
params' domain; constants match their declared type;
updates name a captured variable and keep its type.
"""
import numpy as np

from tapegrad.core.dispatch import PRIMITIVES
from tapegrad.ir.core import Const, Equation, IRError, Program, Var


def check(program):
    """Validate ``program``; return it unchanged, or raise ``IRError``.

    >>> import numpy as np
    >>> from tapegrad.ir import Var, Equation, Program, check
    >>> from tapegrad.core.dispatch import PRIMITIVES
    >>> x = Var("x", (2,), np.dtype("float32")); y = Var("y", (2,), np.dtype("float32"))
    >>> p = Program((x,), (), (), (Equation(PRIMITIVES["exp"], (x,), (), (y,)),), (y,))
    >>> check(p) is p
    True
    """
    if not isinstance(program, Program):
        raise IRError(f"expected a Program, got {type(program).__name__}")
    env = {}  # name -> Var, in definition order

    def define(v, where):
        _check_var(v, where)
        if v.name in env:
            raise IRError(f"{where}: variable {v.name!r} is defined more than once")
        env[v.name] = v

    def use(v, where):
        _check_var(v, where)
        d = env.get(v.name)
        if d is None:
            raise IRError(f"{where}: variable {v.name!r} is used before it is defined")
        if d != v:
            raise IRError(f"{where}: {v!r} does not match its definition {d!r}")

    for v in program.inputs:
        define(v, "inputs")
    for v in program.captures:
        define(v, "captures")
    for c in program.constants:
        if not isinstance(c, Const):
            raise IRError(f"constants: expected Const, got {type(c).__name__}")
        define(c.var, "constants")
        val = c.value
        if not isinstance(val, (np.ndarray, np.generic)):
            raise IRError(f"constant {c.var.name}: value is a {type(val).__name__}, "
                          "not a NumPy array")
        if tuple(val.shape) != c.var.shape or val.dtype != c.var.dtype:
            raise IRError(f"constant {c.var.name}: value has type {val.dtype}{list(val.shape)}"
                          f" but is declared {c.var!r}")
    for k, e in enumerate(program.equations):
        where = f"equation {k} ({_name(e)})"
        _check_equation_form(e, where)
        for v in e.inputs:
            use(v, where)
        _check_types(e, where)
        for v in e.outs:
            define(v, where)
    for v in program.outputs:
        use(v, "outputs")
    seen = set()
    for item in program.updates:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], int)):
            raise IRError(f"updates: expected (capture index, Var) pairs, got {item!r}")
        i, v = item
        if not 0 <= i < len(program.captures):
            raise IRError(f"updates: capture index {i} is out of range "
                          f"({len(program.captures)} captures)")
        if i in seen:
            raise IRError(f"updates: captured variable {i} is assigned twice")
        seen.add(i)
        use(v, "updates")
        cap = program.captures[i]
        if (v.shape, v.dtype) != (cap.shape, cap.dtype):
            raise IRError(f"updates: {v!r} cannot be assigned to captured {cap!r}")
    return program


def _name(e):
    return getattr(e.prim, "name", repr(e.prim)) if isinstance(e, Equation) else "?"


def _check_var(v, where):
    if not isinstance(v, Var):
        raise IRError(f"{where}: expected a Var, got {type(v).__name__}")
    if not isinstance(v.name, str) or not v.name.isidentifier():
        raise IRError(f"{where}: variable name {v.name!r} is not an identifier")
    if not isinstance(v.shape, tuple) or not all(
            isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s >= 0
            for s in v.shape):
        raise IRError(f"{where}: variable {v.name!r} has an invalid shape {v.shape!r}")
    if not isinstance(v.dtype, np.dtype):
        raise IRError(f"{where}: variable {v.name!r} has dtype {v.dtype!r}, not a np.dtype")


def _check_equation_form(e, where):
    if not isinstance(e, Equation):
        raise IRError(f"{where}: expected an Equation, got {type(e).__name__}")
    name = getattr(e.prim, "name", None)
    if PRIMITIVES.get(name) is not e.prim:
        raise IRError(f"{where}: unknown primitive {e.prim!r}")
    nin = e.prim.nin
    n = len(e.inputs)
    if (nin is None and n < 1) or (nin is not None and n != nin):
        want = "at least 1" if nin is None else str(nin)
        raise IRError(f"{where}: {name} takes {want} inputs, got {n}")
    if not isinstance(e.params, tuple) or not all(
            isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in e.params):
        raise IRError(f"{where}: params must be a tuple of (name, value) pairs")
    want_outs = None if getattr(e.prim, "multiple_results", False) else 1
    if not isinstance(e.outs, tuple) or (want_outs and len(e.outs) != want_outs):
        raise IRError(f"{where}: {name} has one output, got {e.outs!r}")


def _check_types(e, where):
    params = dict(e.params)
    if e.prim.validate is not None:  # the params' domain first: the shape rule assumes it
        try:
            e.prim.validate(*e.inputs, **params)
        except Exception as err:  # noqa: BLE001 - any failure means the equation is invalid
            raise IRError(f"{where}: {err}") from None
    try:
        res = e.prim.abstract(*e.inputs, **params)
    except Exception as err:  # any failure of the shape rule means the equation is invalid
        raise IRError(f"{where}: the shape rule rejects inputs "
                      f"{', '.join(map(repr, e.inputs))}: {err}") from None
    results = res if getattr(e.prim, "multiple_results", False) else [res]
    if len(results) != len(e.outs):
        raise IRError(f"{where}: {len(results)} results but {len(e.outs)} output variables")
    for (shape, dtype), v in zip(results, e.outs):
        if tuple(int(s) for s in shape) != v.shape or np.dtype(dtype) != v.dtype:
            got = Var(v.name, tuple(int(s) for s in shape), np.dtype(dtype))
            raise IRError(f"{where}: output declared {v!r} but the rule gives {got!r}")
