"""W6 overhead: a chain of 100 elementwise ops on a 16-element float32 vector, forward plus
gradient of the sum, reported per op (time / 100).

The ops cycle through sin, x*1.0001, tanh, x+0.1, exp (``common.chain``). With 16 elements the
arithmetic is negligible, so this measures each system's per-op dispatch and recording cost.
Eager: tapegrad / TensorFlow GradientTape, PyTorch ``backward``, JAX ``grad`` without jit,
autograd ``grad``. Compiled (for information): ``tapegrad.function``, ``tf.function``,
``jax.jit``.
"""
from benchmarks.harness import Impl, Row, skipped
from benchmarks.systems import load
from benchmarks.workloads import common

N_OPS = 100
SIZE = 16


def chain_rows(workload, case, n_ops, size, extra=None):
    """Eager and compiled rows for d sum(chain(x)) / dx (shared with W7)."""
    x0 = common.inputs((size,), seed=6)
    ref = lambda: common.np_chain_grad(x0, n_ops)

    def tape(name, compiled):
        def build():
            mod = load(name)
            x = mod.constant(x0)

            def grad(x):
                with mod.GradientTape() as g:
                    g.watch(x)
                    y = mod.reduce_sum(common.chain(x, n_ops, mod.sin, mod.tanh, mod.exp))
                return g.gradient(y, x)

            grad = mod.function(grad) if compiled else grad
            return lambda: grad(x)

        return build

    def jax_grad(compiled):
        def build():
            jax = load("jax")
            jnp = jax.numpy
            f = lambda x: jnp.sum(common.chain(x, n_ops, jnp.sin, jnp.tanh, jnp.exp))
            grad = jax.jit(jax.grad(f)) if compiled else jax.grad(f)
            x = jnp.asarray(x0)
            return lambda: jax.block_until_ready(grad(x))

        return build

    def torch_backward():
        torch = load("torch")
        x = torch.from_numpy(x0).requires_grad_()

        def run():
            common.chain(x, n_ops, torch.sin, torch.tanh, torch.exp).sum().backward()
            g, x.grad = x.grad, None
            return g

        return run

    def autograd_grad():
        ag = load("autograd")
        import autograd.numpy as anp

        grad = ag.grad(lambda x: anp.sum(common.chain(x, n_ops, anp.sin, anp.tanh, anp.exp)))
        return lambda: grad(x0)

    eager = [
        Impl("tapegrad", "GradientTape", tape("tapegrad", False)),
        Impl("tensorflow", "GradientTape", tape("tensorflow", False)),
        Impl("jax", "grad no jit", jax_grad(False)),
        Impl("torch", "backward", torch_backward),
        Impl("autograd", "grad", autograd_grad),
    ]
    compiled = [
        Impl("tapegrad", "function", tape("tapegrad", True)),
        Impl("tensorflow", "tf.function", tape("tensorflow", True)),
        Impl("jax", "jit(grad)", jax_grad(True)),
        skipped("torch", "-", "no compiled variant (torch.compile not run here)"),
        skipped("autograd", "-", "autograd does not compile"),
    ]
    kw = dict(reference=ref, rtol=1e-3, atol=1e-5, **(extra or {}))
    return [Row(workload, case, "eager", eager, **kw), Row(workload, case, "compiled", compiled, **kw)]


def rows(opts):
    extra = dict(per=N_OPS, unit="op")
    return chain_rows("W6", f"overhead {N_OPS}-op chain n={SIZE}", N_OPS, SIZE, extra)
