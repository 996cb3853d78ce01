"""W10 shape sweep: compiled batch Jacobians and MLP gradients at shapes other than the
benchmark's, against JAX ``jit`` and TF ``tf.function``.

The benchmark's shapes are samples; a rewrite that helps them and hurts another shape is a
regression. Twelve shapes: batch 8 .. 2,048, widths 4 .. 1,024, depth 2 .. 4; square,
tall and wide. Targets (issue 13): no shape slower than 1.25x the fastest peer, geometric
mean at most 0.8x.
"""
import operator

from benchmarks.harness import Impl, Row, skipped
from benchmarks.systems import load
from benchmarks.workloads import common

# (kind, batch, sizes)
SHAPES = (
    ("jac", 16, (32, 512, 512)),          # the shape the weight-into-basis fold used to make 3x slower
    ("jac", 8, (4, 4, 4)),
    ("jac", 2048, (8, 16, 4)),
    ("jac", 64, (256, 64, 16)),           # tall: many inputs, few outputs
    ("jac", 32, (16, 128, 128, 64)),      # wide outputs, depth 3
    ("jac", 256, (64, 64, 64, 64, 8)),    # depth 4
    ("grad", 8, (4, 1024, 1)),
    ("grad", 2048, (32, 32, 1)),
    ("grad", 128, (512, 512, 512, 1)),
    ("grad", 512, (64, 256, 256, 256, 1)),
    ("grad", 64, (1024, 16, 1)),
    ("grad", 1024, (8, 8, 8, 1)),
)


def _data(batch, sizes):
    return common.mlp_params(sizes, seed=21), common.inputs((batch, sizes[0]), seed=22)


def tape_impl(name, kind, batch, sizes):
    def build():
        mod = load(name)
        p0, x0 = _data(batch, sizes)
        params, x = [mod.constant(p) for p in p0], mod.constant(x0)
        if kind == "jac":
            @mod.function
            def f(x):
                with mod.GradientTape() as g:
                    g.watch(x)
                    y = common.mlp(params, x, mod.matmul, mod.tanh)
                return g.batch_jacobian(y, x)
            return lambda: f(x)

        @mod.function
        def f(params):
            with mod.GradientTape() as g:
                g.watch(params)
                loss = mod.reduce_mean(common.mlp(params, x, mod.matmul, mod.tanh) ** 2)
            return g.gradient(loss, params)
        return lambda: f(params)
    return build


def jax_impl(kind, batch, sizes):
    def build():
        jax = load("jax")
        jnp = jax.numpy
        p0, x0 = _data(batch, sizes)
        params, x = [jnp.asarray(p) for p in p0], jnp.asarray(x0)
        if kind == "jac":
            one = lambda x: common.mlp(params, x[None], operator.matmul, jnp.tanh)[0]  # noqa
            f = jax.jit(jax.vmap(jax.jacrev(one)))
            return lambda: f(x).block_until_ready()
        g = jax.jit(jax.grad(lambda p: jnp.mean(common.mlp(p, x, operator.matmul,
                                                           jnp.tanh) ** 2)))
        return lambda: jax.block_until_ready(g(params))
    return build


def rows(opts):
    out = []
    shapes = SHAPES[::3] if opts.quick else SHAPES
    for kind, batch, sizes in shapes:
        impls = [Impl("tapegrad", "function", tape_impl("tapegrad", kind, batch, sizes)),
                 Impl("tensorflow", "tf.function", tape_impl("tensorflow", kind, batch, sizes)),
                 Impl("jax", "jit", jax_impl(kind, batch, sizes)),
                 skipped("torch", "-", "not in the sweep"),
                 skipped("autograd", "-", "does not compile")]
        case = f"{kind} b={batch} {'-'.join(map(str, sizes))}"
        out.append(Row("W10", case, "compiled", impls, None, 2e-3, 1e-4))
    return out

