"""``Traced``: the user's ``fun`` traced once into a ``Program``, to run and to differentiate.

A solver call traces ``fun`` before anything else, if only to compare the trace with the
programs kept from earlier calls (``reuse.py``); when one matches, this trace is all the call
costs. So the trace is just the trace (about a fifth of what a ``tapegrad.function`` trace
costs: no optimisation, no code generation); the program is optimised and compiled the
first time it runs. SciPy's calls run the generated NumPy code; inside the derivative
traces (gradients, Jacobians, vmapped JVPs) the program runs through the interpreter, so
those are built from this program and never from ``fun`` again.

>>> import numpy as np, tapegrad as tf
>>> t = Traced(lambda x: tf.sin(x) * 2.0, (3,))
>>> t.run(np.zeros(3)).tolist()
[0.0, 0.0, 0.0]
>>> tf.grad(lambda x: tf.reduce_sum(t(x)))(tf.constant(np.zeros(3))).numpy().tolist()
[2.0, 2.0, 2.0]
"""
import numpy as np

from tapegrad.core.tensor import Tensor, Variable, update_locks
from tapegrad.ir import check, derivative_passes, evaluate, optimize
from tapegrad.trace.codegen import compile_program
from tapegrad.trace.tracer import GraphBuilder, tracing


class Traced:
    """``fun`` of one float64 array of ``shape``, as one program with one tensor output.

    A list or tuple of tensors is stacked (as ``np.asarray`` would), a number or array
    becomes a constant. ``variables``: the captured ``tf.Variable`` s, read at run time (and
    assigned, where ``fun`` assigns them). Tracing errors propagate.
    """

    def __init__(self, fun, shape, name="fun"):
        self.name = name
        may_create = True
        while True:  # TensorFlow's rule, as tapegrad.function applies it: a Variable created
            # on the first trace must not be created again on a second
            builder = GraphBuilder(name)
            builder.may_create_variables = may_create
            x = builder.add_input(tuple(shape), np.float64, "x")
            with tracing(builder):
                program = builder.build([_one_tensor(fun(x))])
            if not builder.created_variables or not may_create:
                break
            may_create = False
        self.program = check(program)  # as traced: what reuse.py compares
        self.variables = tuple(builder.variables)
        # a tf.custom_gradient inside left only its forward operations in the program:
        # derivatives must then come from fun itself (tape/custom_gradient.py says so)
        self.differentiable = not getattr(builder, "dropped_custom_gradient", False)
        self._optimized = self._diff = self._fn = None

    @property
    def optimized(self):
        """The fully optimised program (what the generated code computes)."""
        if self._optimized is None:
            self._optimized = check(optimize(self.program))
        return self._optimized

    def run(self, x):
        """The generated code on a NumPy array: the output array."""
        if self._fn is None:
            self._fn = compile_program(self.optimized)[0]
        vs, upd = self.variables, self.program.updates
        if not upd:
            return self._fn(x, *[v._value for v in vs])
        with update_locks([vs[i] for i, _ in upd]):  # read, compute, write (concrete.py)
            r = self._fn(x, *[v._value for v in vs])
            for (i, _), val in zip(upd, r[1:]):
                vs[i]._value = val
        return r[0]

    def __call__(self, x):
        """The program on a tensor, through ``bind``: traced, differentiated or batched by
        whatever is active."""
        if self._diff is None:  # no rewrite that would turn a zero gradient into none
            self._diff = optimize(self.program, derivative_passes())
        vs, upd = self.variables, self._diff.updates
        with update_locks([vs[i] for i, _ in upd]):
            (out,), vals = evaluate(self._diff, [x], [v.read_value() for v in vs])
            for (i, _), val in zip(upd, vals):
                vs[i].assign(val)
        return out


def _one_tensor(out):
    if isinstance(out, Variable):
        return out.read_value()
    if isinstance(out, Tensor):
        return out
    if isinstance(out, (list, tuple)) and any(isinstance(o, Tensor) for o in out):
        from tapegrad.ops.array_ops import stack
        return stack(list(out))
    return Tensor._wrap(np.asarray(out))
