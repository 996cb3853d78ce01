"""SciPy with exact derivatives: ``minimize``, ``least_squares``, ``root`` and ``solve_ivp``.

Each mirrors the SciPy function's signature and returns SciPy's own result object; ``fun``
is a function tapegrad can trace (of NumPy or tensor input). Gradients, Jacobians,
Hessians and Hessian-vector products come from programs compiled once; value and gradient
share one program run per distinct ``x``; sparse Jacobians and Hessians are detected,
coloured and evaluated compressed where that pays. ``jac``, ``hess``, ``hessp`` and
``value_and_grad`` are the same machinery for users who call SciPy themselves.

>>> import numpy as np, tapegrad as tf, tapegrad.scipy as tgs
>>> rosen = lambda x: tf.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
>>> res = tgs.minimize(rosen, np.zeros(5), method="trust-ncg")
>>> res.success, np.allclose(res.x, 1.0, atol=1e-4)
(True, True)

Needs SciPy (the ``scipy`` extra).
"""
from tapegrad.scipy.compiled import Compiled, TraceError  # noqa: F401
from tapegrad.scipy.integrate import solve_ivp  # noqa: F401
from tapegrad.scipy.optimize import least_squares, minimize, root  # noqa: F401
from tapegrad.scipy.wrappers import hess, hessp, jac, value_and_grad  # noqa: F401

__all__ = ["minimize", "least_squares", "root", "solve_ivp", "jac", "hess", "hessp",
           "value_and_grad", "Compiled", "TraceError"]
