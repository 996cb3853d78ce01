"""``minimize``, ``least_squares`` and ``root`` with exact, compiled derivatives."""
import warnings

import numpy as np

from tapegrad.scipy import reuse

_NO_JAC = {"nelder-mead", "powell", "cobyla", "cobyqa"}
_HESS = {"newton-cg", "dogleg", "trust-ncg", "trust-krylov", "trust-exact", "trust-constr"}
_HESSP = {"newton-cg", "trust-ncg", "trust-krylov", "trust-constr"}
_DENSE_HESS = {"dogleg", "trust-exact"}
HESS_MODES = ("auto", "dense", "sparse", "hessp")


def _scipy_optimize():
    try:
        import scipy.optimize as so
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("tapegrad.scipy needs SciPy: pip install 'tapegrad[scipy]'") from None
    return so


def _x0(x0, name):
    x0 = np.asarray(x0, dtype=np.float64)
    if x0.ndim > 1:
        raise ValueError(f"{name}: 'x0' must only have one dimension, got shape {x0.shape}")
    return np.atleast_1d(x0)


def _default_method(constraints, bounds):
    if constraints:
        return "slsqp"
    return "l-bfgs-b" if bounds is not None else "bfgs"


def minimize(fun, x0, args=(), method=None, jac=None, hess=None, hessp=None, bounds=None,
             constraints=(), tol=None, callback=None, options=None, hess_mode="auto",
             trace=True):
    """``scipy.optimize.minimize`` with the exact gradient and, for the methods that take
    them, the Hessian or Hessian-vector products of ``fun``, compiled once.

    Value and gradient come from one program run per distinct ``x``. ``hess_mode``:
    ``'auto'`` (Hessian-vector products for the Krylov methods, a sparse Hessian for
    ``trust-constr`` when its colouring pays, dense where the method needs it), or force
    ``'dense'``, ``'sparse'`` or ``'hessp'``. Constraints given as functions (dicts or
    ``NonlinearConstraint``) get exact Jacobians, and for ``trust-constr`` Hessians. A
    ``jac``/``hess``/``hessp`` you pass yourself is used as given. ``trace=False``
    evaluates eagerly (for functions tapegrad cannot trace).

    >>> import numpy as np, tapegrad as tf
    >>> f = lambda x: tf.reduce_sum((x - 3.0) ** 2)
    >>> minimize(f, np.zeros(2), method="Newton-CG").x.round(6).tolist()
    [3.0, 3.0]
    """
    so = _scipy_optimize()
    if hess_mode not in HESS_MODES:
        raise ValueError(f"minimize: hess_mode must be one of {HESS_MODES}, got {hess_mode!r}")
    x0 = _x0(x0, "minimize")
    with reuse.Kept() as kept:
        return _minimize(so, kept, fun, x0, args, method, jac, hess, hessp, bounds,
                         constraints, tol, callback, options, hess_mode, trace)


def _minimize(so, kept, fun, x0, args, method, jac, hess, hessp, bounds, constraints, tol,
              callback, options, hess_mode, trace):
    m = (method or _default_method(constraints, bounds))
    m = m.lower() if isinstance(m, str) else m
    c = kept(fun, x0, args, trace, name="fun")
    shape = c.out_shape(x0)
    if int(np.prod(shape)) != 1:
        raise ValueError(f"minimize: fun must return a scalar, got an array of shape {shape}")
    if shape != ():  # a one-element array, as SciPy tolerates: differentiate its element
        c = kept(lambda x, *a: _scalar(fun(x, *a)), x0, args, trace, name="fun")
    kw = dict(args=(), method=method, bounds=bounds, tol=tol, callback=callback,
              options=options)
    if isinstance(m, str) and m in _NO_JAC and jac is None:
        kw["jac"] = None
        f = c.value
    elif jac is None or jac is True:
        f, kw["jac"] = c.value_and_grad, True
    else:
        f, kw["jac"] = c.value, jac
    if isinstance(m, str) and m in _HESS and hess is None and hessp is None:
        kw.update(_hessian_args(c, m, hess_mode))
    else:
        kw["hess"], kw["hessp"] = hess, hessp
    if constraints:
        kw["constraints"] = _constraints(constraints, x0, trace, kept)
    f(x0)  # trace (and report a non-scalar or untraceable fun) before SciPy starts
    res = so.minimize(f, x0, **{k: v for k, v in kw.items() if v is not None or k == "jac"})
    res.programs = dict(c.calls)  # how often each compiled program ran
    return res


def _scalar(y):
    from tapegrad.ops.array_ops import reshape
    return reshape(y, [])


def _hessian_args(c, method, mode):
    if mode == "auto":
        if method in _DENSE_HESS:
            mode = "dense"
        elif method == "trust-constr":
            mode = "sparse" if c.sparse_pays("grad") else "hessp"
        else:
            mode = "hessp"
    if mode == "hessp":
        if method not in _HESSP:
            raise ValueError(f"minimize: method {method!r} needs a Hessian matrix; "
                             f"hess_mode='hessp' is for {sorted(_HESSP)}")
        return {"hessp": lambda x, p, *a: c.hessp(x, p)}
    if mode == "sparse":
        if method == "trust-constr":
            return {"hess": lambda x, *a: c.sparse_jac(x, of="grad")}
        if method not in _HESSP:
            raise ValueError(f"minimize: method {method!r} takes a dense Hessian only")
        # the Krylov methods take products: the sparse Hessian of each x, times p
        return {"hessp": lambda x, p, *a: c.sparse_jac(x, of="grad") @ p}
    return {"hess": lambda x, *a: c.hess(x)}


def _constraints(constraints, x0, trace, kept):
    so = _scipy_optimize()
    single = isinstance(constraints, (dict, so.NonlinearConstraint, so.LinearConstraint))
    out = []
    for k, con in enumerate([constraints] if single else list(constraints)):
        if isinstance(con, dict):
            con = dict(con)
            if "jac" not in con:
                cc = kept(con["fun"], x0, con.get("args", ()), trace, name=f"constraint {k}")
                con["fun"] = lambda x, *a, cc=cc: cc.vector(x)
                con["jac"] = lambda x, *a, cc=cc: cc.jac(x)
                con.pop("args", None)
        elif isinstance(con, so.NonlinearConstraint) and not callable(con.jac):
            cc = kept(con.fun, x0, (), trace, name=f"constraint {k}")

            def weighted_hess(x, v, cc=cc):
                return cc.jac_of_vjp(x, v)  # the Hessian of v . c(x)

            con = so.NonlinearConstraint(
                lambda x, cc=cc: cc.vector(x), con.lb, con.ub,
                jac=lambda x, cc=cc: cc.jac(x), hess=weighted_hess,
                keep_feasible=con.keep_feasible)
        out.append(con)
    return out[0] if single else out


def least_squares(fun, x0, jac="auto", bounds=(-np.inf, np.inf), method="trf", ftol=1e-8,
                  xtol=1e-8, gtol=1e-8, x_scale=1.0, loss="linear", f_scale=1.0,
                  diff_step=None, tr_solver=None, tr_options=None, jac_sparsity=None,
                  max_nfev=None, verbose=0, args=(), kwargs=None, sparse="auto", trace=True):
    """``scipy.optimize.least_squares`` with the exact Jacobian of the residuals.

    For ``'trf'`` and ``'dogbox'`` the Jacobian is a SciPy sparse matrix when its detected
    pattern colours into at most a quarter of ``n`` directions (``sparse='auto'``; ``True``
    or ``False`` force it); ``'lm'`` is always dense. ``jac`` other than ``'auto'`` is
    passed to SciPy unchanged (a callable, or a finite-difference scheme).

    >>> import numpy as np, tapegrad as tf
    >>> r = lambda x: tf.stack([x[0] - 1.0, 10.0 * (x[1] - x[0] ** 2)])
    >>> least_squares(r, np.array([-1.2, 1.0])).x.round(6).tolist()
    [1.0, 1.0]
    """
    so = _scipy_optimize()
    x0 = _x0(x0, "least_squares")
    kwargs = kwargs or {}
    kw = dict(bounds=bounds, method=method, ftol=ftol, xtol=xtol, gtol=gtol, x_scale=x_scale,
              loss=loss, f_scale=f_scale, diff_step=diff_step, tr_solver=tr_solver,
              tr_options=tr_options or {}, max_nfev=max_nfev, verbose=verbose)
    with reuse.Kept() as kept:
        c = kept(lambda x, *a: fun(x, *a, **kwargs), x0, args, trace, name="fun")
        if jac == "auto":
            use_sparse = method != "lm" and (sparse is True or (sparse == "auto"
                                                                 and c.sparse_pays("fun")))
            kw["jac"] = (lambda x: c.sparse_jac(x)) if use_sparse else (lambda x: c.jac(x))
        else:
            kw["jac"], kw["jac_sparsity"] = jac, jac_sparsity
        c.vector(x0)
        res = so.least_squares(lambda x: c.vector(x), x0, **kw)
        res.programs = dict(c.calls)
        return res


def root(fun, x0, args=(), method="hybr", jac=None, tol=None, callback=None, options=None,
         trace=True):
    """``scipy.optimize.root`` with the exact Jacobian (``'hybr'``, ``'lm'`` and the other
    Jacobian methods), or, for ``method='krylov'``, Newton-Krylov with exact
    Jacobian-vector products instead of finite differences (GMRES on a ``LinearOperator``).

    >>> import numpy as np, tapegrad as tf
    >>> f = lambda x: tf.stack([x[0] ** 2 + x[1] - 3.0, x[0] - x[1] + 1.0])
    >>> root(f, np.array([1.5, 1.5])).x.round(6).tolist()
    [1.0, 2.0]
    """
    so = _scipy_optimize()
    x0 = _x0(x0, "root")
    with reuse.Kept() as kept:
        c = kept(fun, x0, args, trace, name="fun")
        c.vector(x0)
        if isinstance(method, str) and method.lower() == "krylov" and jac is None:
            res = _newton_krylov(c, x0, tol, callback, options or {})
        else:
            if jac is None:
                jac = lambda x, *a: c.jac(x)  # noqa: E731
            res = so.root(lambda x, *a: c.vector(x), x0, method=method, jac=jac, tol=tol,
                          callback=callback, options=options)
        res.programs = dict(c.calls)
        return res


def _newton_krylov(c, x, tol, callback, options):
    """Newton's method, each step solved by GMRES on exact JVPs, with backtracking."""
    so = _scipy_optimize()
    from scipy.sparse.linalg import LinearOperator, gmres
    f_tol = options.get("fatol", tol if tol is not None else 6e-6)
    maxiter = options.get("maxiter", 100 * (x.size + 1))
    fx = c.vector(x)
    nit, status, msg = 0, 2, "The maximum number of iterations was reached."
    for nit in range(1, maxiter + 1):
        if np.max(np.abs(fx), initial=0.0) <= f_tol:
            status, msg, nit = 1, "A solution was found at the specified tolerance.", nit - 1
            break
        op = LinearOperator((fx.size, x.size), matvec=lambda v, x=x: c.jvp(x, v),
                            dtype=np.float64)
        step, info = gmres(op, -fx, rtol=min(0.5, np.sqrt(np.linalg.norm(fx))), atol=0.0,
                           maxiter=options.get("inner_maxiter", 20))
        norm0, t = np.linalg.norm(fx), 1.0
        while t > 1e-8:  # Armijo backtracking on ||F||
            x_new = x + t * step
            f_new = c.vector(x_new)
            if np.linalg.norm(f_new) <= (1 - 1e-4 * t) * norm0:
                break
            t *= 0.5
        else:
            status, msg = 4, "The line search failed to decrease the residual."
            break
        x, fx = x_new, f_new
        if callback is not None:
            callback(x, fx)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return so.OptimizeResult(x=x, fun=fx, success=status == 1, status=status,
                                 message=msg, nit=nit, method="krylov")
