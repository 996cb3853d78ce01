"""Shared data (fixed-seed NumPy arrays), model definitions and float64 NumPy references.

Models are written once against a ``matmul``/``tanh`` pair so that every system runs the same
arithmetic: ``mlp(params, x, matmul, tanh)`` with ``params = [W1, b1, W2, b2, ...]``, tanh on
the hidden layers and a linear output layer.
"""
import operator

import numpy as np

MLP_SIZES = (32, 256, 256, 16)


def mlp_params(sizes=MLP_SIZES, seed=0, dtype=np.float32):
    """Fixed random weights (N(0, 1/fan_in)) and small biases, flat [W1, b1, W2, b2, ...]."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append((rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(dtype))
        params.append((0.1 * rng.standard_normal(fan_out)).astype(dtype))
    return params


def mlp(params, x, matmul=operator.matmul, tanh=np.tanh):
    """The MLP used everywhere: tanh hidden layers, linear output."""
    n = len(params) // 2
    for i in range(n):
        x = matmul(x, params[2 * i]) + params[2 * i + 1]
        if i < n - 1:
            x = tanh(x)
    return x


def inputs(shape, seed=1, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def mlp_flops(sizes, batch):
    """Matmul FLOPs of one forward pass over ``batch`` rows."""
    return 2.0 * batch * sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))


# -- float64 NumPy references ----------------------------------------------------------------
def _f64(arrays):
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def np_mlp_jacobian(params, x):
    """d mlp(x) / dx for x of shape (in,) -> (out, in), or (B, in) -> (B, out, in)."""
    params = _f64(params)
    x = np.asarray(x, dtype=np.float64)
    single = x.ndim == 1
    x = np.atleast_2d(x)
    n = len(params) // 2
    derivs = []
    h = x
    for i in range(n - 1):
        h = np.tanh(h @ params[2 * i] + params[2 * i + 1])
        derivs.append(1.0 - h * h)
    jac = np.broadcast_to(params[-2].T, (x.shape[0],) + params[-2].T.shape)
    for i in reversed(range(n - 1)):
        jac = (jac * derivs[i][:, None, :]) @ params[2 * i].T
    return jac[0] if single else jac


def np_mse_grad(params, x, y):
    """(loss, grads) of mean((mlp(x) - y)**2) with respect to params, by hand."""
    params = _f64(params)
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    n = len(params) // 2
    acts = [x]
    for i in range(n):
        z = acts[-1] @ params[2 * i] + params[2 * i + 1]
        acts.append(np.tanh(z) if i < n - 1 else z)
    r = acts[-1] - y
    loss = np.mean(r * r)
    g = 2.0 * r / r.size
    grads = [None] * len(params)
    for i in reversed(range(n)):
        grads[2 * i] = acts[i].T @ g
        grads[2 * i + 1] = g.sum(axis=0)
        if i > 0:
            g = (g @ params[2 * i].T) * (1.0 - acts[i] ** 2)
    return loss, grads


def np_sgd(params, x, y, lr, steps):
    """Final parameters after ``steps`` of plain SGD on the MSE loss (float64)."""
    params = _f64(params)
    for _ in range(steps):
        _, grads = np_mse_grad(params, x, y)
        params = [p - lr * g for p, g in zip(params, grads)]
    return np.concatenate([p.ravel() for p in params])


def rosenbrock_hessian(x):
    """Closed-form Hessian of sum(100 (x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    h = np.zeros((n, n))
    i = np.arange(n - 1)
    h[i, i] += 1200 * x[:-1] ** 2 - 400 * x[1:] + 2
    h[i + 1, i + 1] += 200
    h[i, i + 1] = h[i + 1, i] = -400 * x[:-1]
    return h


# -- the elementwise chain (W6, W7) ----------------------------------------------------------
# One cycle of five primitive ops; values stay bounded whatever the length.
CHAIN_CYCLE = ("sin", "mul 1.0001", "tanh", "add 0.1", "exp")


def chain(x, n_ops, sin, tanh, exp):
    """Apply ``n_ops`` ops cycling through CHAIN_CYCLE."""
    for k in range(n_ops):
        op = k % 5
        if op == 0:
            x = sin(x)
        elif op == 1:
            x = x * 1.0001
        elif op == 2:
            x = tanh(x)
        elif op == 3:
            x = x + 0.1
        else:
            x = exp(x)
    return x


def np_chain_grad(x, n_ops):
    """d sum(chain(x)) / dx by the chain rule (float64)."""
    x = np.asarray(x, dtype=np.float64)
    g = np.ones_like(x)
    for k in range(n_ops):
        op = k % 5
        if op == 0:
            g, x = g * np.cos(x), np.sin(x)
        elif op == 1:
            g, x = g * 1.0001, x * 1.0001
        elif op == 2:
            x = np.tanh(x)
            g = g * (1 - x * x)
        elif op == 3:
            x = x + 0.1
        else:
            x = np.exp(x)
            g = g * x
    return g
