"""The pretty-printer: one line per equation, in the notation ``name:f32[2,3]``.

::

    program f(x:f32[2], captured v:f32[2]) {
      c0:f32[] = 2.0
      t0:f32[2] = mul x c0
      t1:f32[2] = add t0 v
      return (t1)
      assign v <- t1
    }
"""
import numpy as np

from tapegrad.ir.core import type_str
from tapegrad.ir.names import value_names

_MAX_CONST = 6  # constants with more elements are shown by type only


def pretty(program):
    """The program as readable text (see the module docstring for the format). Values are
    shown under the names the generated code gives them (``ir/names.py``)."""
    names = value_names(program)

    def typed(v):
        return f"{names.get(v.name, v.name)}:{type_str(v.shape, v.dtype)}"

    def name(v):
        return names.get(v.name, v.name)

    head = [typed(v) for v in program.inputs]
    head += [f"captured {typed(v)}" for v in program.captures]
    lines = [f"program {program.name}({', '.join(head)}) {{"]
    for c in program.constants:
        lines.append(f"  {typed(c.var)} = {_const_str(c.value)}")
    for e in program.equations:
        outs = ", ".join(typed(v) for v in e.outs)
        args = " ".join(name(v) for v in e.inputs)
        params = " ".join(f"{k}={_param_str(v)}" for k, v in e.params)
        lines.append("  " + " ".join(s for s in (f"{outs} =", e.prim.name, args, params) if s))
    lines.append(f"  return ({', '.join(name(v) for v in program.outputs)})")
    for i, v in program.updates:
        lines.append(f"  assign {name(program.captures[i])} <- {name(v)}")
    lines.append("}")
    return "\n".join(lines)


def _const_str(value):
    a = np.asarray(value)
    if a.size <= _MAX_CONST:
        return np.array2string(a, separator=", ") if a.ndim else repr(a.item())
    if a.size and a.strides == (0,) * a.ndim:  # broadcast scalar (e.g. symbolic zeros)
        return f"broadcast({a.reshape(-1)[0].item()!r})"
    return f"<{type_str(a.shape, a.dtype)}>"


def _param_str(v):
    if isinstance(v, np.dtype):
        return v.name
    if isinstance(v, tuple):
        return "(" + ",".join(_param_str(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return repr(v).replace(" ", "")
