"""``ConcreteFunction``: one traced program, optimised, compiled, and ready to call.

It holds three versions of the program: ``raw_program`` (the trace), ``program`` (fully
optimised; what the generated code computes; also ``graph``) and a differentiation-safe one
(constant folding and DCE only: ``ir.derivative_passes``) that the interpreter runs under
tapes and vmap: there, rewriting ``x * zeros`` to a constant would turn a zero gradient into
an unconnected one, and CSE would sum a merged value's cotangents in another order than
eager execution does.
"""
import numpy as np

from tapegrad.trace.codegen import compile_program
from tapegrad.compile.signature import TENSOR, VARIABLE, TensorSpec, rebuild, walk
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, convert_to_tensor, update_locks
from tapegrad.ir import check, derivative_passes, evaluate, optimize
from tapegrad.ir.names import value_names

_wrap = Tensor._wrap


class ConcreteFunction:
    """A program traced for one input signature (see ``Function.get_concrete_function``).

    - ``program`` / ``graph``: the optimised ``tapegrad.ir.Program``;
    - ``raw_program``: the program as traced;
    - ``source()``: the generated NumPy code;
    - ``structured_input_signature``: the TensorSpecs of the tensor arguments;
    - ``variables``: the captured variables (those not passed as arguments).
    """

    def __init__(self, program, slots, outputs, out_kinds, key, specs, keep=()):
        self.raw_program = check(program)
        self.program = check(optimize(program))
        self.graph = self.program
        self._diff = None  # built on the first call under a tape or vmap
        self.name = program.name
        self._fn, self._source = compile_program(self.program, self.name)
        self._slots = tuple(slots)  # per capture: a Variable, or the index of a Variable arg
        self._key = key
        self._keep = keep           # Python objects whose ids are in the key
        self.structured_input_signature = specs
        n_out = len(self.program.outputs)
        self._n_out, self._n_res = n_out, n_out + len(self.program.updates)
        self._upd = tuple(i for i, _ in self.program.updates)
        self._kinds = tuple(out_kinds)
        # the structure alone: the traced symbolic tensors need not stay alive
        self._out_struct = rebuild(outputs, iter([None] * len(out_kinds)))
        self._single = (len(out_kinds) == 1 and out_kinds[0] == (TENSOR, 0)
                        and self._out_struct is None)
        self._runner = self._make_runner()
        # set by Function when the trace ran a tf.custom_gradient with no tape inside: the
        # program then holds the forward operations only (see Function._call)
        self.custom_gradient_dropped = False
        self._python_function = None

    @classmethod
    def from_program(cls, program, variables=(), structure=None):
        """A callable for a ``Program`` without its Python function (e.g. a loaded one).

        ``variables``: one ``tf.Variable`` per capture, in order. ``structure``: how to nest
        the flat outputs (any structure with one leaf per output; default: the single
        output, or a tuple). Its calls take the program's inputs positionally.

        >>> import numpy as np, tapegrad as tf
        >>> from tapegrad.ir import Var, Equation, Program
        >>> from tapegrad.core.dispatch import PRIMITIVES
        >>> x, y = Var("x", (2,), np.dtype("float32")), Var("y", (2,), np.dtype("float32"))
        >>> p = Program((x,), (), (), (Equation(PRIMITIVES["exp"], (x,), (), (y,)),), (y,))
        >>> ConcreteFunction.from_program(p)(tf.zeros([2])).numpy().tolist()
        [1.0, 1.0]
        """
        n = len(program.outputs)
        if structure is None:
            structure = None if n == 1 else tuple([None] * n)
        if len(variables) != len(program.captures):
            raise ValueError(f"{program.name} captures {len(program.captures)} variables, "
                             f"got {len(variables)}.")
        kinds = [(TENSOR, j) for j in range(n)]
        examples = tuple(_wrap(np.broadcast_to(np.zeros((), v.dtype), v.shape))
                         for v in program.inputs)
        key = walk((examples, {}), [])
        specs = [TensorSpec(v.shape, v.dtype) for v in program.inputs]
        return cls(program, list(variables), structure, kinds, key, specs)

    # -- transport: pickled and tokenized as saved-format bytes, never as code ----------------
    # The saved layer (above this one) installs both: ``tapegrad.saved.transport``.
    transport = None

    def __reduce__(self):
        if ConcreteFunction.transport is None:
            raise TypeError("pickling a ConcreteFunction needs tapegrad.saved (import it): "
                            "programs are pickled as their saved-format bytes")
        return ConcreteFunction.transport.reduce_program(self)

    def __dask_tokenize__(self):
        if ConcreteFunction.transport is None:
            raise TypeError("tokenizing a ConcreteFunction needs tapegrad.saved (import it)")
        return ConcreteFunction.transport.tokenize_program(self)

    # -- introspection ------------------------------------------------------------------------
    def source(self):
        """The generated Python/NumPy source of this program."""
        return self._source

    @property
    def variables(self):
        return tuple(s for s in self._slots if not isinstance(s, int))

    @property
    def trainable_variables(self):
        return tuple(v for v in self.variables if v.trainable)

    @property
    def structured_outputs(self):
        return self._out_struct

    def pretty_printed_signature(self):
        names = value_names(self.program)  # as the printed program and the code say them
        ins = ", ".join(repr(v) for v in self.program.inputs)
        outs = ", ".join(repr(v._replace(name=names.get(v.name, v.name)))
                         for v in self.program.outputs)
        return f"{self.name}({ins}) -> ({outs})"

    def __repr__(self):
        return f"<ConcreteFunction {self.pretty_printed_signature()}>"

    @property
    def _diff_program(self):
        if self._diff is None:
            self._diff = optimize(self.raw_program, derivative_passes())
        return self._diff

    # -- calling --------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """Call with arguments of exactly this function's signature."""
        leaves = []
        key = walk((tuple(args), dict(kwargs)), leaves)
        if key != self._key:
            raise TypeError(f"ConcreteFunction {self.pretty_printed_signature()} was called "
                            f"with arguments of another signature: "
                            f"{[tuple(v.shape) for k, v in leaves if k == TENSOR]} "
                            f"(shapes of the tensor arguments). Call the tapegrad.function "
                            "instead, which traces new signatures.")
        if self.custom_gradient_dropped and STATE.stack.recorders:
            if self._python_function is None:
                raise LookupError(
                    f"{self.name}: the program was traced through a tf.custom_gradient "
                    "function, whose gradient function it does not hold; it cannot be "
                    "differentiated.")
            return self._python_function(*args, **kwargs)
        return self._run(leaves)

    def _run(self, leaves):
        tensors = [v for k, v in leaves if k == TENSOR]
        arg_vars = [v for k, v in leaves if k == VARIABLE]
        if STATE.stack.idle:
            vals = [t._value if isinstance(t, Tensor) else np.asarray(t) for t in tensors]
            return self._run_idle(vals, arg_vars)
        return self._run_interpreted(tensors, arg_vars)

    def _variables(self, arg_vars):
        return [arg_vars[s] if isinstance(s, int) else s for s in self._slots]

    def _run_idle(self, vals, arg_vars):
        """The generated code on NumPy values; variables are read and assigned directly."""
        if not self._slots:
            r = self._fn(*vals)
        elif self._upd:
            # read, compute and write under the updated variables' locks: concurrent calls
            # of a shared function never lose an update (TensorFlow's assign_add is atomic)
            vs = self._variables(arg_vars)
            with update_locks([vs[i] for i in self._upd]):
                r = self._fn(*vals, *[v._value for v in vs])
                r = (r,) if self._n_res == 1 else r
                for i, val in zip(self._upd, r[self._n_out:]):
                    vs[i]._value = val
            return self._pack([_wrap(a) for a in r[:self._n_out]])
        else:
            r = self._fn(*vals, *[v._value for v in self._variables(arg_vars)])
        if self._single and self._n_res == 1:
            return _wrap(r)
        if self._n_res == 1:
            r = (r,)
        return self._pack([_wrap(a) for a in r[:self._n_out]])

    def _make_runner(self):
        """A generated ``run(x0, .., xn)`` on NumPy values: the lean path of a plain call.

        Captured variables are read and assigned inline (under the locks of the updated
        ones, see ``_run_idle``); None where a captured variable is an argument (then
        ``_run_idle`` resolves it per call).
        """
        if any(isinstance(s, int) for s in self._slots):
            return None
        xs = [f"x{i}" for i in range(len(self.program.inputs))]
        ns = {"fn": self._fn, "_wrap": _wrap, "pack": self._pack, "new": object.__new__,
              "Tensor": Tensor}
        caps = []
        for k, var in enumerate(self._slots):
            ns[f"V{k}"] = var
            caps.append(f"V{k}._value")
        res = ["r"] if self._n_res == 1 else [f"r[{j}]" for j in range(self._n_res)]
        lines = [f"def run({', '.join(xs)}):"]
        pad = "    "
        locks = update_locks([self._slots[i] for i in self._upd]).locks if self._upd else ()
        for k, lock in enumerate(locks):  # unrolled: ~40 ns a lock less than a loop
            ns[f"A{k}"], ns[f"R{k}"] = lock.acquire, lock.release
            lines.append(f"    A{k}()")
        if locks:
            lines.append("    try:")
            pad = "        "
        lines.append(f"{pad}r = fn({', '.join(xs + caps)})")
        for i, j in zip(self._upd, range(self._n_out, self._n_res)):
            lines.append(f"{pad}V{i}._value = {res[j]}")
        if locks:
            lines.append("    finally:")
            lines += [f"        R{k}()" for k in reversed(range(len(locks)))]
        if self._single:  # Tensor._wrap, inlined: this line runs on every call
            lines += ["    t = new(Tensor)", f"    t._value = {res[0]}", "    return t"]
        else:
            outs = ", ".join(f"_wrap({res[j]})" for j in range(self._n_out))
            struct = self._out_struct
            if struct is None and len(self._kinds) == 1 and self._kinds[0][0] != TENSOR:
                ns["out"] = self._kinds[0][1]  # one Python value (None, a step's result)
                lines.append("    return out")
            elif type(struct) in (list, tuple) and all(x is None for x in struct) and \
                    self._kinds == tuple((TENSOR, j) for j in range(len(struct))):
                # a flat list or tuple of the outputs (the gradients of a list): built here
                close = "]" if type(struct) is list else ",)" if len(struct) == 1 else ")"
                lines.append(f"    return {'[' if close == ']' else '('}{outs}{close}")
            else:
                lines.append(f"    return pack([{outs}])")
        exec(compile("\n".join(lines) + "\n", f"<tapegrad call {self.name}>", "exec"), ns)
        return ns["run"]

    def _run_interpreted(self, tensors, arg_vars):
        """Through ``bind``: tapes record it, accumulators push tangents, vmap batches it."""
        ins = [t if isinstance(t, Tensor) else convert_to_tensor(np.asarray(t))
               for t in tensors]
        vs = self._variables(arg_vars)
        upd = self._diff_program.updates
        with update_locks([vs[i] for i, _ in upd]):
            outs, upds = evaluate(self._diff_program, ins, [v.read_value() for v in vs])
            for (i, _), val in zip(upd, upds):
                vs[i].assign(val)
        return self._pack(outs)

    def _pack(self, flat):
        if self._single:
            return flat[0]
        leaves = [flat[x] if k == TENSOR else x for k, x in self._kinds]
        return rebuild(self._out_struct, iter(leaves))

