"""``Compiled``: one user function, compiled once into every derivative program SciPy asks for.

SciPy calls ``fun(x)`` and then ``jac(x)`` at the same point; here both come from one
program (value and gradient, or value and Jacobian) that runs once per distinct ``x``, and
the other call is answered from a one-entry cache keyed by ``x``'s bytes. ``fun`` is traced
once, for ``x``'s shape in float64 (SciPy's dtype), into ``base``; every derivative program
is built from that trace (``g``), lazily, the first time each kind is needed, so the trace
alone decides what they compute (``reuse.py`` relies on it). ``calls`` counts how often each
program ran (the forward passes).
"""
import collections

import numpy as np

from tapegrad.compile import TensorSpec, function
from tapegrad.core.tensor import Tensor, constant
from tapegrad.transforms import functional
from tapegrad.batching.vmap import vmap
from tapegrad.scipy.traced import Traced


class TraceError(TypeError):
    """``fun`` could not be traced by ``tapegrad.function``."""


def _np(t):
    return np.asarray(t._value if isinstance(t, Tensor) else t)


# What a program returns may be one of its read-only constants (the gradient of a linear
# function) or a view of its input (f(y) = y[1:]); SciPy writes into what it is given
# (SLSQP's gradient) and updates its x in place (BDF's Newton step). So what is handed out is
# always an array of its own, and what the one-point caches keep is never handed out.
def _copy(v):
    if isinstance(v, tuple):
        return tuple(_copy(a) for a in v)
    return v if isinstance(v, float) else v.copy()  # an array or a scipy.sparse matrix


def _shares(v, x):
    if isinstance(v, tuple):
        return any(_shares(a, x) for a in v)
    return isinstance(v, np.ndarray) and np.may_share_memory(v, x)


def _own(a, *inputs):
    """``a`` itself if nothing else holds its memory and it is writeable, else a copy."""
    if a.flags.writeable and not any(np.may_share_memory(a, i) for i in inputs):
        return a
    return a.copy()


class Compiled:
    """The programs of ``fun(x, *args)`` for one shape of ``x``.

    ``trace=False`` evaluates every derivative eagerly with tapes instead of compiling
    (slower; for functions that branch on values in Python).

    >>> import numpy as np, tapegrad as tf
    >>> c = Compiled(lambda x: tf.reduce_sum(x ** 2), np.zeros(3))
    >>> c.value(np.array([1.0, 2.0, 3.0])), c.grad(np.array([1.0, 2.0, 3.0])).tolist()
    (14.0, [2.0, 4.0, 6.0])
    >>> dict(c.calls)                       # value and gradient: one program, one run
    {'value_and_grad': 1}
    """

    def __init__(self, fun, x0, args=(), trace=True, name="fun", stand_ins=()):
        x0 = np.asarray(x0, dtype=np.float64)
        self.shape, self.size = x0.shape, x0.size
        self.args = tuple(args)
        self.trace = trace
        self.name = name
        self.stand_ins = tuple(stand_ins)  # Variables the caller feeds (solve_ivp's t)
        self._fun = fun
        self._programs = {}
        self._last = {}   # kind -> (x bytes, result): the one-point caches
        self.key_extra = b""  # more of the point than x (solve_ivp's t)
        self.calls = collections.Counter()
        self.key = None  # the trace's fingerprint, when reuse.py keeps this one
        self.base = self._trace_base() if trace else None
        if self.base is not None:
            self._programs["vector"] = self.base.run  # f's own trace, as generated code

    # -- the user's function, as tapegrad sees it ----------------------------------------------
    def f(self, x):
        return self._fun(x, *self.args)

    def g(self, x):
        """``f`` as its one trace: what every derived program differentiates, so none of
        them runs the user's Python again (``f`` itself with ``trace=False``, or where the
        trace lost a ``tf.custom_gradient``)."""
        if self.base is None or not self.base.differentiable:
            return self.f(x)
        return self.base(x)

    def _trace_base(self):
        try:
            return Traced(self.f, self.shape, self.name)
        except Exception as e:  # noqa: BLE001 - any tracing failure gets one message
            raise TraceError(
                f"tapegrad.scipy: {self.name} could not be traced by tapegrad.function "
                f"({type(e).__name__}: {e}); pass trace=False to evaluate it eagerly "
                "instead") from e

    def restart(self):
        """Forget the one-point caches and counts (a new solve reuses this one)."""
        self._last.clear()
        self.key_extra = b""
        self.calls.clear()

    def _program(self, kind, build, n_inputs=1, specs=None):
        prog = self._programs.get(kind)
        if prog is None:
            fn = build()
            if self.trace:
                fn = function(fn)
                specs = specs or [TensorSpec(self.shape, np.float64)] * n_inputs
                try:
                    fn.get_concrete_function(*specs)
                except Exception as e:  # noqa: BLE001 - any tracing failure gets one message
                    raise TraceError(
                        f"tapegrad.scipy: {self.name} could not be traced by "
                        f"tapegrad.function ({type(e).__name__}: {e}); pass trace=False to "
                        f"evaluate it eagerly instead") from e
            prog = self._programs[kind] = fn
        return prog

    def _point(self, x):
        """``x`` as a C-contiguous float64 array of the traced shape (SciPy's ``x`` already
        is: then no copy and no NumPy call)."""
        if type(x) is not np.ndarray or x.dtype != np.float64 or x.shape != self.shape \
                or not x.flags.c_contiguous:
            x = np.ascontiguousarray(x, dtype=np.float64).reshape(self.shape)
        return x

    def _cached(self, kind, x, build, run):
        x = self._point(x)
        key = (self.key_extra, x.tobytes())
        hit = self._last.get(kind)
        if hit is not None and hit[0] == key:
            return _copy(hit[1])
        prog = self._program(kind, build)
        self.calls[kind] += 1
        # compiled programs take the array as it is (their fast path); eager ones a tensor
        out = run(prog, x if self.trace else constant(x))
        if _shares(out, x):  # kept: nothing the caller holds; handed out: copies of it
            out = _copy(out)
        self._last[kind] = (key, out)
        return _copy(out)

    def out_shape(self, x):
        """The shape of ``f``'s result (traced once; eagerly at ``x`` with ``trace=False``)."""
        if "out_shape" not in self._programs:
            if self.base is not None:
                shape = tuple(self.base.program.outputs[0].shape)
            else:
                shape = tuple(_np(self.f(constant(np.asarray(x, np.float64)))).shape)
            self._programs["out_shape"] = shape
        return self._programs["out_shape"]

    # -- scalar functions ----------------------------------------------------------------------
    def value_and_grad(self, x):
        """``(f(x), grad f(x))`` from one program run (cached for the last ``x``)."""
        def run(prog, x):
            v, g = prog(x)
            v = _np(v)
            if v.size != 1:
                raise ValueError(f"tapegrad.scipy: {self.name} must return a scalar, got an "
                                 f"array of shape {v.shape}")
            return float(v.reshape(())), _np(g).reshape(-1)
        return self._cached("value_and_grad", x, lambda: functional.value_and_grad(self.g), run)

    def value(self, x):
        return self.value_and_grad(x)[0]

    def grad(self, x):
        return self.value_and_grad(x)[1]

    def hessp(self, x, p):
        """The Hessian-vector product, forward-over-reverse (the Hessian is never built)."""
        p = np.ascontiguousarray(p, dtype=np.float64).reshape(self.shape)
        prog = self._program("hessp", lambda: lambda x, p: functional.hvp(self.g, (x,), (p,)), 2)
        self.calls["hessp"] += 1
        x = np.asarray(x, np.float64).reshape(self.shape)
        return _own(_np(prog(constant(x), constant(p))).reshape(-1), x, p)

    def hess(self, x):
        """The dense Hessian (vectorized: all HVPs in one batched pass)."""
        return self._cached("hess", x, lambda: functional.hessian(self.g, sparse=False),
                            lambda prog, x: _np(prog(x)).reshape(self.size, self.size))

    # -- vector functions ----------------------------------------------------------------------
    def vector(self, x):
        """``f(x)`` flattened, for vector-valued ``fun`` (root, least_squares, ODEs)."""
        return self._cached("vector", x, lambda: self.f,
                            lambda prog, x: _np(prog(x)).reshape(-1))

    def jac(self, x):
        """The dense Jacobian ``(m, n)``, forward or reverse mode chosen by shape."""
        return self._cached("jac", x, lambda: functional.jacobian(self.g),
                            lambda prog, x: _np(prog(x)).reshape(-1, self.size))

    def jvp(self, x, v):
        v = np.ascontiguousarray(v, dtype=np.float64).reshape(self.shape)
        prog = self._program("jvp", lambda: lambda x, v: functional.jvp(self.g, (x,), (v,))[1], 2)
        self.calls["jvp"] += 1
        x = np.asarray(x, np.float64).reshape(self.shape)
        return _own(_np(prog(constant(x), constant(v))).reshape(-1), x, v)

    def jac_of_vjp(self, x, v):
        """The Hessian of ``v . f(x)`` (a constraint's Lagrangian term, for trust-constr)."""
        v = np.ascontiguousarray(v, dtype=np.float64).reshape(-1)
        specs = [TensorSpec(self.shape, np.float64), TensorSpec(v.shape, np.float64)]

        def build():
            from tapegrad.ops.array_ops import reshape
            from tapegrad.ops.math_ops import reduce_sum
            return lambda x, v: functional.hessian(lambda x: reduce_sum(reshape(self.g(x), [-1]) * v),
                                          sparse=False)(x)
        prog = self._program(f"jac_of_vjp{v.shape}", build, specs=specs)
        self.calls["jac_of_vjp"] += 1
        x = np.asarray(x, np.float64).reshape(self.shape)
        return _own(_np(prog(constant(x), constant(v))).reshape(self.size, self.size), x, v)

    # -- sparsity --------------------------------------------------------------------------------
    def sparse_jac(self, x, of="fun"):
        """The Jacobian of ``f`` (``of='fun'``) or the Hessian (``of='grad'``) as a SciPy
        CSR matrix: pattern detected once from the traced program, coloured, and evaluated
        as ``c`` JVPs in one compiled, vectorized pass."""
        plan = self.sparse_plan(of)
        if plan is None:
            raise ValueError("tapegrad.scipy: the sparsity pattern could not be detected")
        pattern, colours, directions = plan
        target = self.g if of == "fun" else functional.grad(self.g)
        s = constant(directions)
        decompress = self._programs.get(f"decompress_{of}")
        if decompress is None:
            from tapegrad.sparsity.large import Decompressor
            decompress = self._programs[f"decompress_{of}"] = Decompressor(pattern, colours)

        def build():
            return lambda x: vmap(lambda t: functional.jvp(target, (x,), (t,))[1])(s)

        return self._cached(f"sparse_{of}", x, build, lambda prog, x: decompress(_np(prog(x))))

    def sparse_plan(self, of="fun"):
        """``(pattern, colours, directions)`` for the Jacobian of ``f`` or of its gradient, or None
        when detection fails (then only dense or matrix-free forms are possible)."""
        key = f"plan_{of}"
        if key not in self._programs:
            from tapegrad.sparsity import large
            target = self.g if of == "fun" else functional.grad(self.g)
            spec = TensorSpec(self.shape, np.float64)
            try:
                if of == "fun" and self.base is not None:  # f's own trace
                    program = self.base.optimized
                else:
                    program = function(target).get_concrete_function(spec).program
                pattern = large.program_pattern(program)
            except large.TooLarge:
                self._programs[key] = None
                return None
            except TraceError:
                raise
            except Exception as e:  # noqa: BLE001
                raise TraceError(f"tapegrad.scipy: {self.name} could not be traced for "
                                 f"sparsity detection ({type(e).__name__}: {e})") from e
            colours = large.greedy_colouring(pattern)
            self._programs[key] = (pattern, colours, large.directions(colours))
        return self._programs[key]

    def sparse_pays(self, of="fun", max_fraction=0.25, min_size=64):
        """Whether the compressed form needs at most ``max_fraction`` of the dense passes."""
        if self.size < min_size:
            return False
        plan = self.sparse_plan(of)
        return plan is not None and plan[2].shape[0] <= max_fraction * self.size
