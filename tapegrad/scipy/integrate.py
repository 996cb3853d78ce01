"""``solve_ivp`` with the exact Jacobian of ``fun(t, y)``, sparse where the pattern pays."""
import numpy as np

from tapegrad.core.tensor import constant
from tapegrad.scipy import reuse

_IMPLICIT = {"bdf", "radau", "lsoda"}


def solve_ivp(fun, t_span, y0, method="BDF", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=None, jac=None, sparse="auto", trace=True, **options):
    """``scipy.integrate.solve_ivp`` with ``fun(t, y)`` compiled once and, for the implicit
    methods (``'BDF'``, ``'Radau'``, ``'LSODA'``), its exact Jacobian ``d fun / d y``.

    ``sparse='auto'`` detects the Jacobian's pattern and, when its colouring needs at most a
    quarter of ``n`` directions, hands BDF and Radau a SciPy sparse matrix (``True``/
    ``False`` force it); LSODA takes dense Jacobians only, so it gets the dense one with
    ``lband``/``uband`` set when the pattern is banded. A ``jac`` you pass is used as given.

    >>> import numpy as np, tapegrad as tf
    >>> sol = solve_ivp(lambda t, y: -50.0 * (y - tf.cos(t)), (0.0, 1.0), np.zeros(1))
    >>> sol.success, bool(abs(sol.y[0, -1] - np.cos(1.0)) < 2e-2)
    (True, True)
    """
    try:
        from scipy.integrate import solve_ivp as scipy_solve_ivp
    except ImportError:  # pragma: no cover
        raise ImportError("tapegrad.scipy needs SciPy: pip install 'tapegrad[scipy]'") from None
    y0 = np.asarray(y0, dtype=np.float64)
    if y0.ndim != 1:
        raise ValueError(f"solve_ivp: y0 must be 1-dimensional, got shape {y0.shape}")
    extra = tuple(args) if args is not None else ()
    # The programs take y; t is a captured Variable assigned before each call, so a new t
    # neither retraces nor bakes in, and it joins the one-point caches' key. A Compiled kept
    # from an earlier call whose trace is exactly this one's comes with its own t.
    t_var = _time_variable()
    with reuse.Kept() as kept:
        c = kept(lambda y: fun(t_var, y, *extra), y0, (), trace, name="fun", stand_ins=(t_var,))
        return _solve(scipy_solve_ivp, c, t_span, y0, method, t_eval, dense_output, events,
                      jac, sparse, options)


def _solve(scipy_solve_ivp, c, t_span, y0, method, t_eval, dense_output, events, jac, sparse,
           options):
    t_tensor = _TimeInput(c)

    def f(t, y):
        t_tensor.set(t)
        return c.vector(y)

    kw = dict(options)
    m = method.lower() if isinstance(method, str) else None
    if jac is not None:
        kw["jac"] = jac
    elif m in _IMPLICIT:
        use_sparse = m != "lsoda" and (sparse is True or (sparse == "auto"
                                                          and c.sparse_pays("fun")))

        def jac_f(t, y):
            t_tensor.set(t)
            return c.sparse_jac(y) if use_sparse else c.jac(y)
        kw["jac"] = jac_f
        if m == "lsoda" and sparse is not False:
            band = _bandwidths(c)
            if band is not None:
                kw.setdefault("lband", band[0])
                kw.setdefault("uband", band[1])
    f(float(t_span[0]), y0)  # run once now: errors surface before the solver starts
    sol = scipy_solve_ivp(f, t_span, y0, method=method, t_eval=t_eval,
                          dense_output=dense_output, events=events, vectorized=False, **kw)
    sol.programs = dict(c.calls)
    return sol


def _time_variable():
    from tapegrad.core.tensor import Variable
    return Variable(constant(np.float64(0.0)), trainable=False, name="t")


class _TimeInput:
    """The time ``t`` as a Variable the compiled programs read (so ``t`` is not baked in)."""

    def __init__(self, compiled):
        self.value = compiled.stand_ins[0]
        self.compiled = compiled
        # an autonomous fun's trace does not read t: then nothing depends on it
        base = compiled.base
        self.read = base is None or any(v is self.value for v in base.variables)

    def set(self, t):
        if self.read:
            t = np.float64(t)
            self.value.assign(t)
            self.compiled.key_extra = t.tobytes()  # a cached f(y) at another t is not f(t, y)


def _bandwidths(c):
    plan = c.sparse_plan("fun")
    if plan is None:
        return None
    coo = plan[0].tocoo()
    if coo.nnz == 0:
        return 0, 0
    d = coo.col - coo.row
    lower, upper = int(max(0, -d.min())), int(max(0, d.max()))
    n = c.size
    return (lower, upper) if lower + upper + 1 <= n // 4 else None
