"""``LoadedFunction``: a loaded program, callable like the function that was saved."""
import numpy as np

from tapegrad.trace.codegen import compile_program
from tapegrad.compile.signature import TensorSpec
from tapegrad.core.state import STATE
from tapegrad.core.tensor import Tensor, convert_to_tensor, update_locks
from tapegrad.ir import cse, dce, evaluate, optimize, simplify
from tapegrad.util import nest


class LoadedFunction:
    """A function loaded by ``tapegrad.saved.load``.

    Call it with the tensor arguments of the saved trace (flat, or nested as saved). With
    nothing active it runs NumPy code generated from the loaded IR; under a tape, forward
    accumulator, ``vmap`` or trace it runs the IR through the dispatcher, so it is
    differentiated, batched or inlined like any other operation.

    - ``program``: the loaded ``tapegrad.ir.Program``; ``source()``: the generated code;
    - ``variables`` / ``trainable_variables``: the restored ``tf.Variable`` s it reads (and,
      if the saved function assigned them, updates);
    - ``structured_input_signature``: a ``TensorSpec`` per input.
    """

    def __init__(self, program, variables, structure):
        self.program = program
        # No constant folding here: loading never runs the program (nor a crafted loop).
        self.graph = optimize(program, (simplify, cse, dce))
        self._fn, self._source = compile_program(self.graph, program.name)
        self.variables = tuple(variables)
        self._structure = structure
        self.structured_input_signature = tuple(
            TensorSpec(v.shape, v.dtype, v.name) for v in program.inputs)

    @property
    def trainable_variables(self):
        return tuple(v for v in self.variables if v.trainable)

    def source(self):
        """The generated Python/NumPy source."""
        return self._source

    def __reduce__(self):  # pickled as its saved bytes (tapegrad.saved.transport)
        from tapegrad.saved.transport import reduce_program
        return reduce_program(self)

    def __dask_tokenize__(self):
        from tapegrad.saved.transport import tokenize_program
        return tokenize_program(self)

    def __repr__(self):
        ins = ", ".join(repr(v) for v in self.program.inputs)
        return f"<LoadedFunction {self.program.name}({ins})>"

    def __call__(self, *args):
        want = self.program.inputs
        # one argument per input (a list is then one tensor), or nested structures of them
        flat = list(args) if len(args) == len(want) else nest.flatten(list(args))
        if len(flat) != len(want):
            raise TypeError(f"{self.program.name}: takes {len(want)} tensor arguments "
                            f"({', '.join(map(repr, want))}), got {len(flat)}.")
        ins = [self._conform(x, v, k) for k, (x, v) in enumerate(zip(flat, want))]
        n_out, upd = len(self.program.outputs), self.program.updates
        # read, compute and write under the updated variables' locks (see concrete.py)
        with update_locks([self.variables[i] for i, _ in upd]):
            if STATE.stack.idle:
                r = self._fn(*[t._value for t in ins], *[v._value for v in self.variables])
                r = (r,) if n_out + len(upd) == 1 else r
                for (i, _), val in zip(upd, r[n_out:]):
                    self.variables[i]._value = val
                outs = [Tensor._wrap(np.asarray(o)) for o in r[:n_out]]
            else:
                outs, vals = evaluate(self.program, ins,
                                      [v.read_value() for v in self.variables])
                for (i, _), val in zip(upd, vals):
                    self.variables[i].assign(val)
        return nest.pack_sequence_as(self._structure, outs)

    def _conform(self, x, v, k):
        t = x if isinstance(x, Tensor) else convert_to_tensor(
            x, dtype=None if isinstance(x, (np.ndarray, np.generic)) else v.dtype)
        if t.dtype != v.dtype or tuple(t.shape) != v.shape:
            raise TypeError(f"{self.program.name}: argument {k} should be "
                            f"{v.dtype.name}{list(v.shape)}, got {t.dtype.name}"
                            f"{list(t.shape)}.")
        return t
