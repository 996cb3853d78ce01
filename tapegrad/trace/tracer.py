"""Tracing: run Python code on symbolic tensors and record the operations as a ``Program``.

A ``GraphBuilder`` is an interpreter (core/state.py) on the stack; the dispatcher hands it every
operation that has a symbolic input (``process``, which stages an equation). Concrete tensors used with symbolic ones become constants.
Variables are captured by reference: a read inside the trace becomes a program input that is
fed with the variable's value at call time, and an assignment becomes an update applied after
the call (later reads in the same trace see the assigned value).

Tapes, accumulators and vmap need no special support: their rules call ``bind`` too, so the
derivative computations they perform on symbolic tensors are recorded like any other.

>>> import tapegrad as tf
>>> b = GraphBuilder("double")
>>> with tracing(b):
...     x = b.add_input((2,), "float32", "x")
...     y = x * 2.0
>>> print(b.build([y]))
program double(x:f32[2]) {
  c0:f32[] = 2.0
  y:f32[2] = mul x c0
  return (y)
}
"""
import builtins
import keyword
import linecache
import re

import numpy as np

from tapegrad.core.dispatch import _op_error
from tapegrad.core.shape import TensorShape
from tapegrad.core.state import STATE, Interpreter, interpreters, recording
from tapegrad.core.tensor import Tensor
from tapegrad.ir.core import Const, Equation, NameGen, Program, Var, make_params
from tapegrad.ir.passes import compress
from tapegrad.primitives.api import cast
from tapegrad.trace.naming import Namer
from tapegrad.util.frames import user_frame

# Names an argument of generated code must not take: keywords, NumPy, builtins, and the
# helpers of codegen's faster forms (trace/codegen.py).
_tnew = tuple.__new__
_RESERVED = set(keyword.kwlist) | set(dir(builtins)) | {"np", "frozen", "recycled"}


class OperatorNotAllowedInGraphError(TypeError):
    """A Python operation needs the value of a symbolic tensor (e.g. ``if x > 0:``)."""


def user_location():
    """``(file:line, source line)`` of the innermost frame outside tapegrad."""
    f, _, _ = user_frame(1)
    if f is None:
        return "<unknown>", ""
    line = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
    return f"{f.f_code.co_filename}:{f.f_lineno}", line


class SymbolicTensor(Tensor):
    """A tensor inside a trace: it has a shape and a dtype but no value yet."""

    __slots__ = ("_var", "_builder", "_shape")
    _symbolic = True

    def __init__(self, var, builder, shape=None):
        self._var = var
        self._builder = builder
        # with symbolic sizes (trace/symbolic.py) the shape holds SymInts; the Var never
        self._shape = var.shape if shape is None else shape

    shape = property(lambda self: _tnew(TensorShape, self._shape))  # internal code: _raw_shape
    _raw_shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._var.dtype)
    ndim = property(lambda self: len(self._var.shape))

    @property
    def _value(self):
        where, line = user_location()
        raise TypeError(
            f"The symbolic tensor {self._var.name!r} (shape {self.shape}, {self.dtype.name}) "
            f"has no value: inside tapegrad.function, values exist only when the compiled "
            f"program runs. At {where}: {line!r}. Either this operation needs a concrete "
            "value, or the tensor escaped the function it was traced in (e.g. stored in a "
            "global); return it from the function instead.")

    def numpy(self):
        where, line = user_location()
        raise TypeError(f".numpy() is not available on a symbolic tensor inside "
                        f"tapegrad.function (at {where}: {line!r}); return the tensor from "
                        "the function and call .numpy() on the result.")

    def __array__(self, dtype=None, copy=None):
        where, line = user_location()
        raise TypeError(f"A symbolic tensor inside tapegrad.function cannot be converted to a "
                        f"NumPy array (at {where}: {line!r}); use tapegrad ops on it instead.")

    def __bool__(self):
        where, line = user_location()
        raise OperatorNotAllowedInGraphError(
            f"Using a symbolic tensor as a Python bool is not allowed inside tapegrad.function "
            f"(at {where}: {line!r}): its value is only known when the compiled program runs. "
            "tapegrad.function converts Python `if`/`while`/`for` on symbolic tensors "
            "(AutoGraph) where it can read the function's source; here the code was not "
            "converted (autograph=False, do_not_convert, no source, or a source file changed "
            "since it was imported), so Python runs it once, at tracing time. Use tapegrad.cond(pred, true_fn, false_fn) "
            "instead of `if`, and tapegrad.while_loop(cond, body, loop_vars) instead of "
            "`while`.")

    def _scalar(self, kind):
        where, line = user_location()
        raise OperatorNotAllowedInGraphError(
            f"{kind}() of a symbolic tensor is not allowed inside tapegrad.function (at "
            f"{where}: {line!r}): its value is only known when the compiled program runs.")

    def __repr__(self):
        return (f"<tapegrad.SymbolicTensor '{self._var.name}' shape={self.shape} "
                f"dtype={self.dtype.name}>")

    __str__ = __repr__


def identifier(name, default="x"):
    """``name`` made into a Python identifier usable in generated code."""
    s = re.sub(r"\W", "_", str(name).split(":")[0]).strip("_")
    if not s:
        return default
    if s[0].isdigit() or s in _RESERVED:
        s = f"{default}_{s}"
    return s


class GraphBuilder(Interpreter):
    """Records the operations on its symbolic tensors into a ``Program``: the tracing
    interpreter. It computes the operations on its values and owns variables (a read is a
    program input, an assignment a deferred update).

    ``parent``: the enclosing builder when tracing a sub-program (a control-flow branch):
    symbolic tensors of an enclosing trace used inside become extra inputs, listed in
    ``lifted`` as ``(outer tensor, inner Var)`` and appended after the explicit inputs.
    """

    computes = owns_variables = True

    def __init__(self, name="program", parent=None):
        self.name = identifier(name, "fn")
        self.parent = parent
        self.names = NameGen(_RESERVED)
        self.inputs, self.equations, self.constants = [], [], []
        self._const_of = {}            # id(tensor) -> Var
        self._keep = []                # those tensors, kept alive so ids stay unique
        self.captures, self.variables = [], []
        self._capture_index = {}       # variable uid -> index in captures
        self._current = {}             # variable uid -> Var of its latest value
        self.lifted, self._lifted_of = [], {}
        self.origins = {}              # Var name -> Origin (ir/core.py)
        self.namer = Namer(self)       # notes origins and the user's names (trace/naming.py)
        self.sizes = None              # symbolic.Sizes in a trace for all sizes
        self.sym_shapes = {}           # Var name -> shape holding SymInts
        # tf.Variable creation (TensorFlow's rule: only on a function's first call); the
        # concrete inputs of the call being traced give a traced initial value its value
        self.may_create_variables = True
        self.created_variables = False
        self.example_inputs = None

    # -- values -----------------------------------------------------------------------------
    def add_input(self, shape, dtype, name="x"):
        """A new explicit input; returns its symbolic tensor."""
        v = Var(self.names.reserve(identifier(name)), tuple(int(s) for s in shape),
                np.dtype(dtype))
        self.inputs.append(v)
        if self.sizes is not None:
            shape = self.sizes.input_shape(len(self.inputs) - 1, v.shape)
            if any(a is not b for a, b in zip(shape, v.shape)):  # no SymInt comparisons
                self.sym_shapes[v.name] = shape
                return SymbolicTensor(v, self, shape)
        return SymbolicTensor(v, self)

    def var_of(self, t):
        """The ``Var`` standing for tensor ``t`` in this program (constants are added)."""
        if getattr(t, "_symbolic", False):
            if getattr(t, "_builder", None) is self:
                return t._var
            if isinstance(t, SymbolicTensor) and self._encloses(t._builder):
                return self._lift(t)
            if t._level:
                raise TypeError("A vmap-batched tensor from outside cannot be used inside a "
                                "traced tapegrad.function; pass it as an argument instead.")
            raise TypeError(f"{t!r} belongs to another trace: a symbolic tensor escaped the "
                            "tapegrad.function it was created in (e.g. through a global or "
                            "a list). Return it from that function instead.")
        key = id(t)
        v = self._const_of.get(key)
        if v is None:
            value = compress(np.asarray(t._value))
            v = Var(self.names("c"), tuple(value.shape), value.dtype)
            self.constants.append(Const(v, value))
            self._const_of[key] = v
            self._keep.append(t)
        return v

    def _encloses(self, other):
        b = self.parent
        while b is not None:
            if b is other:
                return True
            b = b.parent
        return False

    def _lift(self, t):
        v = self._lifted_of.get(id(t))
        if v is None:
            v = Var(self.names("l"), t.shape, t.dtype)
            self._lifted_of[id(t)] = v
            self.lifted.append((t, v))
        return v

    # -- the interpreter protocol (core/state.py) --------------------------------------------
    def process(self, prim, args, params):
        """Stage ``prim`` if an input is symbolic or it is stateful (random numbers: a trace
        records each call, even on concrete inputs); else None (NumPy computes it)."""
        if prim.stateful:
            return self.stage(prim, args, params)
        for a in args:
            if getattr(a, "_symbolic", False):
                return self.stage(prim, args, params)
        return None

    def read_variable(self, var, val):
        """A read of ``var`` in the trace: its current value here, a symbolic tensor."""
        return self.capture_variable(var)

    def stage(self, prim, args, params):
        """Record ``prim(*args, **params)`` as an equation; return its symbolic output."""
        ins = tuple(self.var_of(a) for a in args)
        multi = getattr(prim, "multiple_results", False)
        if self.sizes is not None:
            return self._stage_sized(prim, args, ins, params, multi)
        try:
            res = prim.abstract(*ins, **params)
        except (ValueError, IndexError, np.linalg.LinAlgError) as e:
            raise _op_error(prim, args, params, e) from None
        outs = tuple(Var(self.names("t"), tuple(int(s) for s in shape), np.dtype(dtype))
                     for shape, dtype in (res if multi else [res]))
        self.equations.append(Equation(prim, ins, make_params(params), outs))
        self._note_origin(outs)
        syms = tuple(SymbolicTensor(v, self) for v in outs)
        return syms if multi else syms[0]

    def _note_origin(self, outs):
        self.namer.note(outs)

    def _stage_sized(self, prim, args, ins, params, multi):
        """``stage`` in a trace with symbolic sizes (see trace/symbolic.py)."""
        try:
            res, shapes, probe, plain, sym = self.sizes.stage(prim, args, ins, params)
        except (ValueError, IndexError, np.linalg.LinAlgError) as e:
            raise _op_error(prim, args, params, e) from None
        outs = tuple(Var(self.names("t"), shape, np.dtype(dtype))
                     for shape, (_, dtype) in zip(shapes, res))
        if sym:
            self.sizes.params[len(self.equations)] = sym
        self.equations.append(Equation(prim, ins, make_params(plain), outs))
        self._note_origin(outs)
        syms = []
        for v, p in zip(outs, probe):
            shape = self.sizes.output_shape(v, v.shape, p)
            if any(a is not b for a, b in zip(shape, v.shape)):
                self.sym_shapes[v.name] = shape
            syms.append(SymbolicTensor(v, self, shape))
        return tuple(syms) if multi else syms[0]

    def capture_variable(self, var):
        """A read of ``var``: a fresh symbolic tensor for its current value in this trace."""
        cur = self._current.get(var._uid)
        if cur is None:
            cur = Var(self.names.reserve(identifier(var.name, "v")), tuple(var.shape), var.dtype)
            self._capture_index[var._uid] = len(self.captures)
            self.captures.append(cur)
            self.variables.append(var)
            self._current[var._uid] = cur
        return SymbolicTensor(cur, self)

    def assign_variable(self, var, value, op):
        """``var.<op>(value)`` inside the trace: becomes an update; returns None (deferred)."""
        cur = self.capture_variable(var)
        # An assignment is not an operation that tapes see (eagerly it is plain NumPy).
        with recording(()):
            if not getattr(value, "_symbolic", False):
                value = Tensor._wrap(np.asarray(value._value if isinstance(value, Tensor)
                                                else value))
            if tuple(value.shape) != tuple(var.shape):
                raise ValueError(f"Cannot {op} a value of shape {tuple(value.shape)} to "
                                 f"variable '{var.name}' of shape {tuple(var.shape)}.")
            if value.dtype != var.dtype:
                if var.dtype.kind in "iub" and value.dtype.kind in "fc":
                    raise TypeError(f"Cannot {op} a {value.dtype} value to the {var.dtype} "
                                    f"variable '{var.name}'.")
                value = cast(value, var.dtype)
            if op == "assign_add":
                value = cur + value
            elif op == "assign_sub":
                value = cur - value
            self._current[var._uid] = self.var_of(value)
        return None

    # -- tf.Variable created inside the trace ------------------------------------------------
    def create_variable(self, initial):
        """A ``tf.Variable`` is created during the trace with ``initial`` (a tensor).

        TensorFlow allows it on the first call only (the function is traced a second time
        to check that it does not create variables on every call). A symbolic initial value
        (computed from the function's arguments) is evaluated on this call's arguments.
        Returns the concrete initial value.
        """
        if not all(b.may_create_variables for b in STATE.stack.tracers):
            raise ValueError(
                "tf.function only supports singleton tf.Variables created on the first call. "
                "Make sure the tf.Variable is only created once or created outside "
                "tf.function. See https://www.tensorflow.org/guide/function"
                "#creating_tfvariables for more information.")
        STATE.stack.tracers[0].created_variables = True
        if not getattr(initial, "_symbolic", False):
            return initial
        b = getattr(initial, "_builder", None)
        if not isinstance(b, GraphBuilder) or b.parent is not None or b.example_inputs is None:
            raise ValueError("A Variable's initial value must be concrete, not a traced "
                             "tensor (here it is computed inside a control-flow branch or "
                             "a vmap).")
        program = b.build([initial])
        # the operations so far, on this call's arguments, outside every trace
        with interpreters(()):
            from tapegrad.ir import evaluate
            (value,), _ = evaluate(program, list(b.example_inputs) + [
                t for t, _ in b.lifted], [v.read_value() for v in b.variables])
        return value

    # -- result -----------------------------------------------------------------------------
    def build(self, outputs):
        """The ``Program`` computing tensors ``outputs`` (a flat list)."""
        outs = tuple(self.var_of(t) for t in outputs)
        updates = tuple((i, self._current[uid]) for uid, i in self._capture_index.items()
                        if self._current[uid] != self.captures[i])
        return Program(tuple(self.inputs) + tuple(v for _, v in self.lifted),
                       tuple(self.captures), tuple(self.constants), tuple(self.equations),
                       outs, updates, self.name, self.namer.origins())


def tracing(builder, isolate=True):
    """Make ``builder`` the innermost tracer; always restore the state afterwards.

    ``isolate``: hide the active tapes and vmap levels from the trace, as when a
    ``tapegrad.function`` is traced on first call under an outer tape (the outer tape sees
    the evaluation of the finished program instead). Outer traces stay: the builder lifts
    their symbolic tensors (control-flow bodies traced inside a trace).
    """
    st = STATE.stack
    below = tuple(st.tracers) if isolate else st.interpreters
    return interpreters(below + (builder,))
