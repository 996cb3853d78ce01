"""W9P physics-informed training step (issue 13's "W9"; W9 is the Keras step).

Burgers' residual ``r = u_t + u u_x - nu u_xx`` of an MLP 2-32-32-32-1 (tanh) at 2,048
collocation points, with u_t, u_x and u_xx by nested tapes (``torch.autograd.grad`` with
``create_graph=True``; ``jax.grad`` of sums), then the gradient of ``mean(r**2)`` with
respect to every weight: the most common nested-tape program in the wild. float32. The
result checked is the flat weight gradient; systems are checked against each other.
"""
from benchmarks.harness import Impl, Row, skipped
from benchmarks.systems import load
from benchmarks.workloads import common

SIZES = (2, 32, 32, 32, 1)
N_POINTS = 2048
NU = 0.01


def _data():
    return common.mlp_params(SIZES, seed=11), common.inputs((N_POINTS, 2), seed=12)


def tape_step(name, compiled):
    def build():
        mod = load(name)
        p0, tx0 = _data()
        params = [mod.constant(p) for p in p0]
        tx = mod.constant(tx0)

        def step(params, tx):
            with mod.GradientTape() as outer:
                outer.watch(params)
                with mod.GradientTape() as t2:
                    t2.watch(tx)
                    with mod.GradientTape() as t1:
                        t1.watch(tx)
                        u = common.mlp(params, tx, mod.matmul, mod.tanh)
                    du = t1.gradient(u, tx)
                    u_x = du[:, 1:2]
                u_xx = t2.gradient(u_x, tx)[:, 1:2]
                r = du[:, 0:1] + u * u_x - NU * u_xx
                loss = mod.reduce_mean(r * r)
            return outer.gradient(loss, params)

        step = mod.function(step) if compiled else step
        return lambda: step(params, tx)
    return build


def torch_step():
    torch = load("torch")
    p0, tx0 = _data()
    params = [torch.from_numpy(p).requires_grad_() for p in p0]
    tx = torch.from_numpy(tx0).requires_grad_()

    def run():
        u = common.mlp(params, tx, torch.matmul, torch.tanh)
        (du,) = torch.autograd.grad(u.sum(), tx, create_graph=True)
        u_x = du[:, 1:2]
        (d2,) = torch.autograd.grad(u_x.sum(), tx, create_graph=True)
        r = du[:, 0:1] + u * u_x - NU * d2[:, 1:2]
        return torch.autograd.grad((r * r).mean(), params)
    return run


def jax_step(compiled):
    def build():
        jax = load("jax")
        jnp = jax.numpy
        p0, tx0 = _data()
        params, tx = [jnp.asarray(p) for p in p0], jnp.asarray(tx0)

        def loss(params, tx):
            u_of = lambda tx: common.mlp(params, tx, jnp.matmul, jnp.tanh)  # noqa: E731
            du_of = jax.grad(lambda tx: u_of(tx).sum())
            du = du_of(tx)
            d2 = jax.grad(lambda tx: du_of(tx)[:, 1].sum())(tx)
            u = u_of(tx)
            r = du[:, 0:1] + u * du[:, 1:2] - NU * d2[:, 1:2]
            return jnp.mean(r * r)

        g = jax.grad(loss)
        g = jax.jit(g) if compiled else g
        return lambda: jax.block_until_ready(g(params, tx))
    return build


def rows(opts):
    eager = [Impl("tapegrad", "nested GradientTape", tape_step("tapegrad", False)),
             Impl("tensorflow", "nested GradientTape", tape_step("tensorflow", False)),
             Impl("jax", "grad of grads, no jit", jax_step(False)),
             Impl("torch", "autograd.grad(create_graph=True)", torch_step),
             skipped("autograd", "-", "not run (slow at this size)")]
    compiled = [Impl("tapegrad", "function", tape_step("tapegrad", True)),
                Impl("tensorflow", "tf.function", tape_step("tensorflow", True)),
                Impl("jax", "jit(grad)", jax_step(True)),
                skipped("torch", "-", "no compiled variant (torch.compile not run here)"),
                skipped("autograd", "-", "autograd does not compile")]
    case = f"pinn burgers {N_POINTS} pts"
    return [Row("W9P", case, "eager", eager, None, 2e-3, 1e-4),
            Row("W9P", case, "compiled", compiled, None, 2e-3, 1e-4)]
