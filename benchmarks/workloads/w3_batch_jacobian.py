"""W3 jacobian-batch: per-example Jacobians (512 x 16 x 32) of the W2 MLP, compiled.

tapegrad: a ``tapegrad.function`` using ``GradientTape.batch_jacobian``, and alternatively
``tapegrad.function(tapegrad.vmap(tapegrad.jacrev(f)))`` (the faster is reported);
TensorFlow: ``tf.function`` + ``batch_jacobian``; JAX: ``jax.jit(jax.vmap(jax.jacrev(f)))``;
PyTorch: ``torch.func.vmap(torch.func.jacrev(f))`` (eager: torch.func does not compile);
autograd has no batching or compilation and is not run.

FLOPs (reverse mode, the cheapest order for 16 outputs < 32 inputs): one forward pass plus 16
input-cotangent passes, each costing the forward's matmul FLOPs, per example.
"""
import operator

from benchmarks.harness import Impl, Row, skipped
from benchmarks.systems import load
from benchmarks.workloads import common

PARAMS = common.mlp_params()
BATCH = 512


def _x():
    return common.inputs((BATCH, common.MLP_SIZES[0]), seed=2)


def tapegrad_batch_jacobian():
    tg = load("tapegrad")
    params = [tg.constant(p) for p in PARAMS]
    x = tg.constant(_x())

    @tg.function
    def jac(x):
        with tg.GradientTape() as g:
            g.watch(x)
            y = common.mlp(params, x, tg.matmul, tg.tanh)
        return g.batch_jacobian(y, x)

    return lambda: jac(x)


def tapegrad_vmap_jacrev():
    tg = load("tapegrad")
    params = [tg.constant(p) for p in PARAMS]
    x = tg.constant(_x())
    f = lambda x: common.mlp(params, x, operator.matmul, tg.tanh)
    jac = tg.function(tg.vmap(tg.jacrev(f)))
    return lambda: jac(x)


def tensorflow_batch_jacobian():
    tf = load("tensorflow")
    params = [tf.constant(p) for p in PARAMS]
    x = tf.constant(_x())

    @tf.function
    def jac(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = common.mlp(params, x, tf.matmul, tf.tanh)
        return g.batch_jacobian(y, x)

    return lambda: jac(x)


def jax_jit_vmap_jacrev():
    jax = load("jax")
    params = [jax.numpy.asarray(p) for p in PARAMS]
    x = jax.numpy.asarray(_x())
    f = lambda x: common.mlp(params, x, operator.matmul, jax.numpy.tanh)
    jac = jax.jit(jax.vmap(jax.jacrev(f)))
    return lambda: jax.block_until_ready(jac(x))


def torch_func_vmap_jacrev():
    torch = load("torch")
    params = [torch.from_numpy(p) for p in PARAMS]
    x = torch.from_numpy(_x())
    f = lambda x: common.mlp(params, x, operator.matmul, torch.tanh)
    jac = torch.func.vmap(torch.func.jacrev(f))
    return lambda: jac(x)


def flops():
    per_pass = common.mlp_flops(common.MLP_SIZES, BATCH)
    return per_pass * (1 + common.MLP_SIZES[-1])


def rows(opts):
    impls = [
        Impl("tapegrad", "function + batch_jacobian", tapegrad_batch_jacobian),
        Impl("tapegrad", "function(vmap(jacrev))", tapegrad_vmap_jacrev),
        Impl("tensorflow", "tf.function + batch_jacobian", tensorflow_batch_jacobian),
        Impl("jax", "jit(vmap(jacrev))", jax_jit_vmap_jacrev),
        Impl("torch", "torch.func vmap(jacrev) (eager)", torch_func_vmap_jacrev),
        skipped("autograd", "-", "autograd has no vmap/jit"),
    ]
    return [
        Row(
            "W3", "jacobian-batch MLP x512", "compiled", impls,
            reference=lambda: common.np_mlp_jacobian(PARAMS, _x()), rtol=1e-3, atol=1e-5,
            flops=flops(),
        )
    ]
