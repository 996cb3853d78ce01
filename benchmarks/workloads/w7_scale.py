"""W7 scale: time against problem size.

* MLP gradient: loss mean((mlp(x) - y)**2) for an MLP 64-w-w-1 (tanh) on a batch of 64,
  gradient with respect to all weights, for a few widths w (64 .. 4096), float32. FLOPs =
  forward + weight cotangents + input cotangents of the hidden layers.
* elementwise chain: 10 ops (W6's cycle) and the gradient of the sum on 1e3 .. 1e7 elements.

Eager and compiled rows, like W6.
"""
import operator

import numpy as np

from benchmarks.harness import Impl, Row, skipped
from benchmarks.systems import load
from benchmarks.workloads import common
from benchmarks.workloads.w6_overhead import chain_rows

BATCH, D_IN = 64, 64
CHAIN_OPS = 10


def _sizes(width):
    return (D_IN, width, width, 1)


def mlp_grad_flops(width):
    sizes = _sizes(width)
    fwd = common.mlp_flops(sizes, BATCH)
    first = 2.0 * BATCH * sizes[0] * sizes[1]  # no cotangent for the input x
    return 3 * fwd - first


def mlp_rows(width):
    sizes = _sizes(width)
    p0 = common.mlp_params(sizes, seed=7)
    x0 = common.inputs((BATCH, D_IN), seed=8)
    y0 = common.inputs((BATCH, 1), seed=9)

    def tape(name, compiled):
        def build():
            mod = load(name)
            params = [mod.constant(p) for p in p0]
            x, y = mod.constant(x0), mod.constant(y0)

            def grad(params):
                with mod.GradientTape() as g:
                    g.watch(params)
                    r = common.mlp(params, x, mod.matmul, mod.tanh) - y
                    loss = mod.reduce_sum(mod.square(r)) / BATCH
                return g.gradient(loss, params)

            grad = mod.function(grad) if compiled else grad
            return lambda: grad(params)

        return build

    def jax_grad(compiled):
        def build():
            jax = load("jax")
            jnp = jax.numpy
            x, y = jnp.asarray(x0), jnp.asarray(y0)
            f = lambda p: jnp.mean((common.mlp(p, x, operator.matmul, jnp.tanh) - y) ** 2)
            grad = jax.jit(jax.grad(f)) if compiled else jax.grad(f)
            params = [jnp.asarray(p) for p in p0]
            return lambda: jax.block_until_ready(grad(params))

        return build

    def torch_backward():
        torch = load("torch")
        params = [torch.from_numpy(p).requires_grad_() for p in p0]
        x, y = torch.from_numpy(x0), torch.from_numpy(y0)

        def run():
            loss = ((common.mlp(params, x, operator.matmul, torch.tanh) - y) ** 2).mean()
            return torch.autograd.grad(loss, params)

        return run

    def autograd_grad():
        ag = load("autograd")
        import autograd.numpy as anp

        f = lambda p: anp.mean((common.mlp(p, x0, operator.matmul, anp.tanh) - y0) ** 2)
        grad = ag.grad(f)
        return lambda: grad(p0)

    def ref():
        return np.concatenate([g.ravel() for g in common.np_mse_grad(p0, x0, y0)[1]])

    eager = [
        Impl("tapegrad", "GradientTape", tape("tapegrad", False)),
        Impl("tensorflow", "GradientTape", tape("tensorflow", False)),
        Impl("jax", "grad no jit", jax_grad(False)),
        Impl("torch", "autograd.grad", torch_backward),
        Impl("autograd", "grad", autograd_grad),
    ]
    compiled = [
        Impl("tapegrad", "function", tape("tapegrad", True)),
        Impl("tensorflow", "tf.function", tape("tensorflow", True)),
        Impl("jax", "jit(grad)", jax_grad(True)),
        skipped("torch", "-", "no compiled variant (torch.compile not run here)"),
        skipped("autograd", "-", "autograd does not compile"),
    ]
    case = f"mlp-grad w={width}"
    kw = dict(reference=ref, rtol=2e-3, atol=1e-4, flops=mlp_grad_flops(width))
    return [Row("W7", case, "eager", eager, **kw), Row("W7", case, "compiled", compiled, **kw)]


def rows(opts):
    widths = (64, 1024) if opts.quick else (64, 256, 1024, 4096)
    sizes = (10**3, 10**6) if opts.quick else (10**3, 10**5, 10**7)
    out = []
    for w in widths:
        out += mlp_rows(w)
    for n in sizes:
        out += chain_rows("W7", f"chain{CHAIN_OPS} n=1e{len(str(n)) - 1}", CHAIN_OPS, n)
    return out
