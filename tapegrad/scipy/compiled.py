"""``Compiled``: one user function, compiled once into every derivative program SciPy asks for.

SciPy calls ``fun(x)`` and then ``jac(x)`` at the same point; here both come from one
program (value and gradient, or value and Jacobian) that runs once per distinct ``x``, and
the other call is answered from a one-entry cache keyed by ``x``'s bytes. Programs are
traced lazily, the first time each kind is needed, for ``x``'s shape in float64 (SciPy's
dtype); ``calls`` counts how often each program ran (the forward passes).
"""
import collections

import numpy as np

from tapegrad.compile import TensorSpec, function
from tapegrad.core.tensor import Tensor, constant
from tapegrad.transforms import functional
from tapegrad.batching.vmap import vmap


class TraceError(TypeError):
    """``fun`` could not be traced by ``tapegrad.function``."""


def _np(t):
    return np.asarray(t._value if isinstance(t, Tensor) else t)


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

    def __init__(self, fun, x0, args=(), trace=True, name="fun"):
        x0 = np.asarray(x0, dtype=np.float64)
        self.shape, self.size = x0.shape, x0.size
        self.args = tuple(args)
        self.trace = trace
        self.name = name
        self._fun = fun
        self._programs = {}
        self._last = {}   # kind -> (x bytes, result): the one-point caches
        self.key_extra = b""  # more of the point than x (solve_ivp's t)
        self.calls = collections.Counter()

    # -- the user's function, as tapegrad sees it ----------------------------------------------
    def f(self, x):
        return self._fun(x, *self.args)

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

    def _cached(self, kind, x, build, run):
        x = np.ascontiguousarray(x, dtype=np.float64).reshape(self.shape)
        key = self.key_extra + x.tobytes()
        hit = self._last.get(kind)
        if hit is not None and hit[0] == key:
            return hit[1]
        prog = self._program(kind, build)
        self.calls[kind] += 1
        out = run(prog, constant(x))
        self._last[kind] = (key, out)
        return out

    def out_shape(self, x):
        """The shape of ``f``'s result (traced once; eagerly at ``x`` with ``trace=False``)."""
        if "out_shape" not in self._programs:
            if self.trace:
                cf = self._program("vector", lambda: self.f).get_concrete_function(
                    TensorSpec(self.shape, np.float64))
                shape = tuple(cf.program.outputs[0].shape)
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
        return self._cached("value_and_grad", x, lambda: functional.value_and_grad(self.f), run)

    def value(self, x):
        return self.value_and_grad(x)[0]

    def grad(self, x):
        return self.value_and_grad(x)[1]

    def hessp(self, x, p):
        """The Hessian-vector product, forward-over-reverse (the Hessian is never built)."""
        p = np.ascontiguousarray(p, dtype=np.float64).reshape(self.shape)
        prog = self._program("hessp", lambda: lambda x, p: functional.hvp(self.f, (x,), (p,)), 2)
        self.calls["hessp"] += 1
        return _np(prog(constant(np.asarray(x, np.float64).reshape(self.shape)),
                        constant(p))).reshape(-1)

    def hess(self, x):
        """The dense Hessian (vectorized: all HVPs in one batched pass)."""
        return self._cached("hess", x, lambda: functional.hessian(self.f, sparse=False),
                            lambda prog, x: _np(prog(x)).reshape(self.size, self.size))

    # -- vector functions ----------------------------------------------------------------------
    def vector(self, x):
        """``f(x)`` flattened, for vector-valued ``fun`` (root, least_squares, ODEs)."""
        return self._cached("vector", x, lambda: self.f,
                            lambda prog, x: _np(prog(x)).reshape(-1))

    def jac(self, x):
        """The dense Jacobian ``(m, n)``, forward or reverse mode chosen by shape."""
        return self._cached("jac", x, lambda: functional.jacobian(self.f),
                            lambda prog, x: _np(prog(x)).reshape(-1, self.size))

    def jvp(self, x, v):
        v = np.ascontiguousarray(v, dtype=np.float64).reshape(self.shape)
        prog = self._program("jvp", lambda: lambda x, v: functional.jvp(self.f, (x,), (v,))[1], 2)
        self.calls["jvp"] += 1
        return _np(prog(constant(np.asarray(x, np.float64).reshape(self.shape)),
                        constant(v))).reshape(-1)

    def jac_of_vjp(self, x, v):
        """The Hessian of ``v . f(x)`` (a constraint's Lagrangian term, for trust-constr)."""
        v = np.ascontiguousarray(v, dtype=np.float64).reshape(-1)
        specs = [TensorSpec(self.shape, np.float64), TensorSpec(v.shape, np.float64)]

        def build():
            from tapegrad.ops.array_ops import reshape
            from tapegrad.ops.math_ops import reduce_sum
            return lambda x, v: functional.hessian(lambda x: reduce_sum(reshape(self.f(x), [-1]) * v),
                                          sparse=False)(x)
        prog = self._program(f"jac_of_vjp{v.shape}", build, specs=specs)
        self.calls["jac_of_vjp"] += 1
        return _np(prog(constant(np.asarray(x, np.float64).reshape(self.shape)),
                        constant(v))).reshape(self.size, self.size)

    # -- sparsity --------------------------------------------------------------------------------
    def sparse_jac(self, x, of="fun"):
        """The Jacobian of ``f`` (``of='fun'``) or the Hessian (``of='grad'``) as a SciPy
        CSR matrix: pattern detected once from the traced program, coloured, and evaluated
        as ``c`` JVPs in one compiled, vectorized pass."""
        plan = self.sparse_plan(of)
        if plan is None:
            raise ValueError("tapegrad.scipy: the sparsity pattern could not be detected")
        pattern, colours, seeds = plan
        target = self.f if of == "fun" else functional.grad(self.f)
        s = constant(seeds)
        decompress = self._programs.get(f"decompress_{of}")
        if decompress is None:
            from tapegrad.sparsity.large import Decompressor
            decompress = self._programs[f"decompress_{of}"] = Decompressor(pattern, colours)

        def build():
            return lambda x: vmap(lambda t: functional.jvp(target, (x,), (t,))[1])(s)

        return self._cached(f"sparse_{of}", x, build, lambda prog, x: decompress(_np(prog(x))))

    def sparse_plan(self, of="fun"):
        """``(pattern, colours, seeds)`` for the Jacobian of ``f`` or of its gradient, or None
        when detection fails (then only dense or matrix-free forms are possible)."""
        key = f"plan_{of}"
        if key not in self._programs:
            from tapegrad.sparsity import large
            target = self.f if of == "fun" else functional.grad(self.f)
            spec = TensorSpec(self.shape, np.float64)
            try:
                if of == "fun" and self.trace:  # the program f(x) already traced, reused
                    cf = self._program("vector", lambda: self.f).get_concrete_function(spec)
                else:
                    cf = function(target).get_concrete_function(spec)
                pattern = large.program_pattern(cf.program)
            except large.TooLarge:
                self._programs[key] = None
                return None
            except TraceError:
                raise
            except Exception as e:  # noqa: BLE001
                raise TraceError(f"tapegrad.scipy: {self.name} could not be traced for "
                                 f"sparsity detection ({type(e).__name__}: {e})") from e
            colours = large.greedy_colouring(pattern)
            self._programs[key] = (pattern, colours, large.seeds(colours))
        return self._programs[key]

    def sparse_pays(self, of="fun", max_fraction=0.25, min_size=64):
        """Whether the compressed form needs at most ``max_fraction`` of the dense passes."""
        if self.size < min_size:
            return False
        plan = self.sparse_plan(of)
        return plan is not None and plan[2].shape[0] <= max_fraction * self.size
