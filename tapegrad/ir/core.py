"""The IR's data structures: ``Var``, ``Const``, ``Equation``, ``Program`` (see the package doc).

Everything here is immutable: a pass builds a new ``Program``; it never edits one.
"""
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class IRError(ValueError):
    """A program breaks an invariant of the IR (raised by the checker and the builders)."""


class Var(NamedTuple):
    """A value in a program: a name unique within the program, a static shape and a dtype.

    >>> Var("x", (2, 3), np.dtype("float32"))
    x:f32[2,3]
    """

    name: str
    shape: tuple
    dtype: np.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __repr__(self):
        return f"{self.name}:{type_str(self.shape, self.dtype)}"


@dataclass(frozen=True, eq=False)
class Const:
    """A constant: a ``Var`` bound to a read-only NumPy value (compared by identity)."""

    var: Var
    value: np.ndarray

    def __repr__(self):
        return f"Const({self.var!r})"


class Equation(NamedTuple):
    """``outs = prim(*inputs, **params)``.

    ``prim`` is the registered ``Primitive`` object; ``params`` is a tuple of ``(name, value)``
    pairs sorted by name, so an equation is hashable (common-subexpression elimination keys on
    it). ``outs`` is a tuple: one ``Var`` for every primitive of today; several for primitives
    with ``multiple_results = True`` (reserved for control flow).
    """

    prim: object
    inputs: tuple
    params: tuple
    outs: tuple

    @property
    def kwargs(self):
        """The params as a dict, ready for ``bind(prim, *xs, **eqn.kwargs)``."""
        return dict(self.params)

    @property
    def out(self):
        """The single output (every primitive but multi-result ones)."""
        return self.outs[0]


class Origin(NamedTuple):
    """Where a value came from: the user's ``file:line``, that line's source text, and
    whether a derivative pass (a tape's gradient, a Jacobian, forward mode) emitted it.

    ``name``: the user's name for the value where the tracer learned one (``h``, or ``h_ct``
    for the cotangent of ``h``); a hint that ``ir/names.py`` makes unique. ``of``: for
    derivative code, the program's name of the value whose record the derivative pass was
    differentiating when it emitted this one ("" if none)."""

    where: str
    source: str
    derivative: bool
    name: str = ""
    of: str = ""


def make_params(params):
    """Params dict -> the canonical sorted tuple that ``Equation.params`` holds."""
    return tuple(sorted(params.items()))


@dataclass(frozen=True, eq=False)
class Program:
    """A straight-line SSA program.

    - ``inputs``: the positional arguments (flattened tensors), in call order;
    - ``captures``: one input per captured variable, fed with its value at call time;
    - ``constants``: ``Const`` values baked into the program;
    - ``equations``: in execution order; each ``Var`` is defined exactly once;
    - ``outputs``: the flattened results;
    - ``updates``: ``(i, var)`` pairs: after a call, captured variable ``i`` is assigned
      the value of ``var`` (assign/assign_add/assign_sub inside a traced function).
    - ``name``: for printing and generated code.
    """

    inputs: tuple
    captures: tuple
    constants: tuple
    equations: tuple
    outputs: tuple
    updates: tuple = ()
    name: str = "program"
    origins: tuple = ()  # (var name, Origin) pairs: where the tracer saw each value made

    def replace(self, **changes):
        """A copy with some fields replaced (programs are immutable)."""
        fields = dict(inputs=self.inputs, captures=self.captures, constants=self.constants,
                      equations=self.equations, outputs=self.outputs, updates=self.updates,
                      name=self.name, origins=self.origins)
        fields.update(changes)
        return Program(**fields)

    def origin_of(self):
        """``{var name: Origin}``: the user's line (and whether it is derivative code) for
        each value the tracer recorded; empty for programs built by hand or loaded."""
        return dict(self.origins)

    def const_values(self):
        """``{name: value}`` of the constants."""
        return {c.var.name: c.value for c in self.constants}

    def all_names(self):
        """Every name defined in the program."""
        names = {v.name for v in self.inputs}
        names.update(v.name for v in self.captures)
        names.update(c.var.name for c in self.constants)
        for e in self.equations:
            names.update(v.name for v in e.outs)
        return names

    def __str__(self):
        from tapegrad.ir.printer import pretty
        return pretty(self)

    __repr__ = __str__


_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
          "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "bool", "complex64": "c64",
          "complex128": "c128"}


def type_str(shape, dtype):
    """``f32[2,3]``: the compact type notation of the printer."""
    d = np.dtype(dtype).name
    return f"{_SHORT.get(d, d)}[{','.join(str(s) for s in shape)}]"


def frozen_array(value, dtype=None):
    """A read-only array for a ``Const`` (constants are shared between calls)."""
    a = np.asarray(value, dtype=dtype)
    if a.flags.writeable:
        # Copy: the caller may still own (and later change) the array, as with a NumPy
        # array closed over by a traced function; the program must keep the traced value.
        a = a.copy()
        a.flags.writeable = False
    return a


class NameGen:
    """Fresh names that collide with none of ``taken``: ``prefix0``, ``prefix1``, ..."""

    def __init__(self, taken=()):
        self.taken = set(taken)
        self.counts = {}

    def __call__(self, prefix="t"):
        k = self.counts.get(prefix, 0)
        while f"{prefix}{k}" in self.taken:
            k += 1
        self.counts[prefix] = k + 1
        name = f"{prefix}{k}"
        self.taken.add(name)
        return name

    def reserve(self, name):
        """``name`` if free, else ``name_1``, ``name_2``... (for readable input names)."""
        out, k = name, 0
        while out in self.taken:
            k += 1
            out = f"{name}_{k}"
        self.taken.add(out)
        return out
