"""NumPy-in, NumPy-out derivative callables for users who call SciPy themselves."""
import numpy as np

from tapegrad.scipy.compiled import Compiled


class _PerShape:
    """A ``Compiled`` per shape of ``x`` (SciPy's solvers keep one shape; tests may not)."""

    def __init__(self, fun, args, trace):
        self.fun, self.args, self.trace, self.by_shape = fun, tuple(args), trace, {}

    def __call__(self, x):
        x = np.asarray(x, dtype=np.float64)
        c = self.by_shape.get(x.shape)
        if c is None:
            c = self.by_shape[x.shape] = Compiled(self.fun, x, self.args, self.trace)
        return c, x


def value_and_grad(fun, args=(), trace=True):
    """``x -> (f(x), grad f(x))``, for ``scipy.optimize.minimize(..., jac=True)``.

    >>> import numpy as np, tapegrad as tf
    >>> vg = value_and_grad(lambda x: tf.reduce_sum(x ** 3))
    >>> v, g = vg(np.array([1.0, 2.0]))
    >>> v, g.tolist()
    (9.0, [3.0, 12.0])
    """
    get = _PerShape(fun, args, trace)

    def value_and_grad_f(x, *more):
        c, x = get(x)
        return c.value_and_grad(x)
    return value_and_grad_f


def jac(fun, args=(), trace=True, sparse=False):
    """``x -> J(x)``: the gradient of a scalar ``fun``, else its Jacobian ``(m, n)``;
    ``sparse=True`` gives a SciPy CSR matrix (pattern detected and coloured once).

    >>> import numpy as np, tapegrad as tf
    >>> jac(lambda x: x[1:] * x[:-1])(np.array([1.0, 2.0, 3.0])).tolist()
    [[2.0, 1.0, 0.0], [0.0, 3.0, 2.0]]
    """
    get = _PerShape(fun, args, trace)

    def jac_f(x, *more):
        c, x = get(x)
        if c.out_shape(x) == ():
            return c.grad(x)
        return c.sparse_jac(x) if sparse else c.jac(x)
    return jac_f


def hess(fun, args=(), trace=True, sparse=False):
    """``x -> H(x)``, dense, or SciPy CSR with ``sparse=True``.

    >>> import numpy as np, tapegrad as tf
    >>> hess(lambda x: tf.reduce_sum(x ** 3))(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    get = _PerShape(fun, args, trace)

    def hess_f(x, *more):
        c, x = get(x)
        return c.sparse_jac(x, of="grad") if sparse else c.hess(x)
    return hess_f


def hessp(fun, args=(), trace=True):
    """``(x, p) -> H(x) @ p``, forward-over-reverse, the Hessian never built.

    >>> import numpy as np, tapegrad as tf
    >>> hessp(lambda x: tf.reduce_sum(x ** 3))(np.array([1.0, 2.0]), np.array([1.0, 1.0])).tolist()
    [6.0, 12.0]
    """
    get = _PerShape(fun, args, trace)

    def hessp_f(x, p, *more):
        c, x = get(x)
        return c.hessp(x, p)
    return hessp_f
