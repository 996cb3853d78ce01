"""W5 training loop: 200 steps (50 with --quick) of plain SGD on the mean squared error, float32.

Models: linear regression (256 x 8 data, w: 8 x 1, b: 1) and an MLP 8-64-1 (tanh).
Every call resets the parameters and runs all the steps; the result is the final parameters.

eager: tapegrad / TensorFlow ``GradientTape`` + ``Variable.assign_sub``; PyTorch
``loss.backward()`` + in-place update under ``no_grad``; JAX ``jax.grad`` without jit;
autograd ``grad``.  compiled: the same step under ``tapegrad.function`` / ``tf.function`` /
``jax.jit``; ``torch.compile`` only with ``--torch-compile`` (its compile takes long).
"""
import operator

import numpy as np

from benchmarks.harness import Impl, Row, skipped
from benchmarks.systems import load
from benchmarks.workloads import common

STEPS, QUICK_STEPS = 200, 50
N, D = 256, 8
MODELS = {  # name -> (layer sizes, learning rate)
    "linreg 256x8": ((D, 1), 0.05),
    "mlp 8-64-1": ((D, 64, 1), 0.05),
}


def _data():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((N, D)).astype(np.float32)
    y = (np.sin(x @ rng.standard_normal((D, 1))) + 0.1 * rng.standard_normal((N, 1)))
    return x, y.astype(np.float32)


def _tape_sgd(mod, sizes, lr, steps, compiled):
    """tapegrad and TensorFlow share this code: the API is the same."""
    x0, y0 = _data()
    p0 = common.mlp_params(sizes, seed=5)
    params = [mod.Variable(p) for p in p0]
    x, y = mod.constant(x0), mod.constant(y0)

    def step():
        with mod.GradientTape() as tape:
            r = common.mlp(params, x, mod.matmul, mod.tanh) - y
            loss = mod.reduce_sum(mod.square(r)) / r.shape[0]
        grads = tape.gradient(loss, params)
        for p, g in zip(params, grads):
            p.assign_sub(lr * g)

    step = mod.function(step) if compiled else step

    def run():
        for p, v in zip(params, p0):
            p.assign(v)
        for _ in range(steps):
            step()
        return params

    return run


def tape_sgd(name, sizes, lr, steps, compiled):
    return lambda: _tape_sgd(load(name), sizes, lr, steps, compiled)


def torch_sgd(sizes, lr, steps, compiled):
    def build():
        torch = load("torch")
        x0, y0 = _data()
        p0 = [torch.from_numpy(p) for p in common.mlp_params(sizes, seed=5)]
        params = [p.clone().requires_grad_() for p in p0]
        x, y = torch.from_numpy(x0), torch.from_numpy(y0)

        def loss_fn(params):
            return ((common.mlp(params, x, operator.matmul, torch.tanh) - y) ** 2).mean()

        if compiled:
            loss_fn = torch.compile(loss_fn)

        def run():
            with torch.no_grad():
                for p, v in zip(params, p0):
                    p.copy_(v)
            for _ in range(steps):
                loss_fn(params).backward()
                with torch.no_grad():
                    for p in params:
                        p -= lr * p.grad
                        p.grad = None
            return params

        return run

    return build


def jax_sgd(sizes, lr, steps, compiled):
    def build():
        jax = load("jax")
        x0, y0 = _data()
        x, y = jax.numpy.asarray(x0), jax.numpy.asarray(y0)
        p0 = [jax.numpy.asarray(p) for p in common.mlp_params(sizes, seed=5)]

        def loss(params):
            return jax.numpy.mean((common.mlp(params, x, operator.matmul, jax.numpy.tanh) - y) ** 2)

        def step(params):
            grads = jax.grad(loss)(params)
            return [p - lr * g for p, g in zip(params, grads)]

        step = jax.jit(step) if compiled else step

        def run():
            params = p0
            for _ in range(steps):
                params = step(params)
            return jax.block_until_ready(params)

        return run

    return build


def autograd_sgd(sizes, lr, steps):
    def build():
        ag = load("autograd")
        import autograd.numpy as anp

        x, y = _data()
        p0 = common.mlp_params(sizes, seed=5)

        def loss(params):
            return anp.mean((common.mlp(params, x, operator.matmul, anp.tanh) - y) ** 2)

        grad = ag.grad(loss)

        def run():
            params = p0
            for _ in range(steps):
                params = [p - lr * g for p, g in zip(params, grad(params))]
            return params

        return run

    return build


def _reference(sizes, lr, steps):
    x, y = _data()
    return lambda: common.np_sgd(common.mlp_params(sizes, seed=5), x, y, lr, steps)


def rows(opts):
    out = []
    n = QUICK_STEPS if opts.quick else STEPS
    for name, (sizes, lr) in MODELS.items():
        ref = _reference(sizes, lr, n)
        eager = [
            Impl("tapegrad", "GradientTape + assign_sub", tape_sgd("tapegrad", sizes, lr, n, False)),
            Impl("tensorflow", "GradientTape + assign_sub", tape_sgd("tensorflow", sizes, lr, n, False)),
            Impl("jax", "grad no jit", jax_sgd(sizes, lr, n, False)),
            Impl("torch", "backward + no_grad update", torch_sgd(sizes, lr, n, False)),
            Impl("autograd", "grad", autograd_sgd(sizes, lr, n)),
        ]
        if opts.torch_compile:
            torch_compiled = Impl("torch", "torch.compile(loss)", torch_sgd(sizes, lr, n, True))
        else:
            torch_compiled = skipped("torch", "torch.compile", "torch.compile off (--torch-compile)")
        compiled = [
            Impl("tapegrad", "function(step)", tape_sgd("tapegrad", sizes, lr, n, True)),
            Impl("tensorflow", "tf.function(step)", tape_sgd("tensorflow", sizes, lr, n, True)),
            Impl("jax", "jit(step)", jax_sgd(sizes, lr, n, True)),
            torch_compiled,
            skipped("autograd", "-", "autograd does not compile"),
        ]
        label = f"train {name} x{n}"
        out.append(Row("W5", label, "eager", eager, ref, 2e-3, 1e-4))
        out.append(Row("W5", label, "compiled", compiled, ref, 2e-3, 1e-4))
    return out
