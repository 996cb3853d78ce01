"""Reference values shared by the tests: central-difference Jacobians and the Rosenbrock
function with its closed-form Hessian (float64, NumPy only)."""
import numpy as np

import tapegrad as tf


def num_jac(f, x, eps=1e-6):
    """Central-difference Jacobian of ``f`` (NumPy -> NumPy) at ``x``: out.shape + x.shape."""
    x = np.asarray(x, dtype=np.float64)
    y0 = np.asarray(f(x))
    J = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        J[(Ellipsis,) + idx] = (np.asarray(f(x + d)) - np.asarray(f(x - d))) / (2 * eps)
    return J


def rosenbrock(x):
    """sum(100 (x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2), with tapegrad ops."""
    return tf.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_hessian(x):
    """The closed-form Hessian of ``rosenbrock`` at ``x``."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    h = np.zeros((n, n))
    i = np.arange(n - 1)
    h[i, i] += 1200 * x[:-1] ** 2 - 400 * x[1:] + 2
    h[i + 1, i + 1] += 200
    h[i, i + 1] = h[i + 1, i] = -400 * x[:-1]
    return h
