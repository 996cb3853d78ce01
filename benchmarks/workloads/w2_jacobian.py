"""W2 jacobian-one: Jacobian (16 x 32) of the MLP 32-256-256-16 at one input, eager.

tapegrad and TensorFlow: ``g.jacobian(y, x)`` on a watched (1, 32) input; PyTorch
``torch.autograd.functional.jacobian(f, x, vectorize=True)``; JAX ``jax.jacrev`` without jit;
autograd ``jacobian``. Without --quick, TensorFlow also runs ``experimental_use_pfor=False``
(which needs a persistent tape) and the faster TensorFlow variant is reported.
"""
import operator

from benchmarks.harness import Impl, Row
from benchmarks.systems import load
from benchmarks.workloads import common

PARAMS = common.mlp_params()
X = common.inputs((common.MLP_SIZES[0],))


def tapegrad_tape():
    tg = load("tapegrad")
    params = [tg.constant(p) for p in PARAMS]
    x = tg.constant(X[None, :])

    def run():
        with tg.GradientTape() as g:
            g.watch(x)
            y = common.mlp(params, x, tg.matmul, tg.tanh)
        return g.jacobian(y, x)

    return run


def tensorflow_tape(use_pfor):
    def build():
        tf = load("tensorflow")
        params = [tf.constant(p) for p in PARAMS]
        x = tf.constant(X[None, :])

        def run():
            with tf.GradientTape(persistent=not use_pfor) as g:
                g.watch(x)
                y = common.mlp(params, x, tf.matmul, tf.tanh)
            return g.jacobian(y, x, experimental_use_pfor=use_pfor)

        return run

    return build


def torch_functional():
    torch = load("torch")
    params = [torch.from_numpy(p) for p in PARAMS]
    x = torch.from_numpy(X)

    def f(x):
        return common.mlp(params, x, operator.matmul, torch.tanh)

    return lambda: torch.autograd.functional.jacobian(f, x, vectorize=True)


def jax_jacrev():
    jax = load("jax")
    params = [jax.numpy.asarray(p) for p in PARAMS]
    x = jax.numpy.asarray(X)
    jac = jax.jacrev(lambda x: common.mlp(params, x, operator.matmul, jax.numpy.tanh))
    return lambda: jax.block_until_ready(jac(x))


def autograd_jacobian():
    ag = load("autograd")
    import autograd.numpy as anp

    jac = ag.jacobian(lambda x: common.mlp(PARAMS, x, operator.matmul, anp.tanh))
    return lambda: jac(X)


def rows(opts):
    impls = [
        Impl("tapegrad", "GradientTape.jacobian", tapegrad_tape),
        Impl("tensorflow", "GradientTape.jacobian", tensorflow_tape(True)),
        Impl("jax", "jacrev no jit", jax_jacrev),
        Impl("torch", "functional.jacobian vectorize", torch_functional),
        Impl("autograd", "jacobian", autograd_jacobian),
    ]
    if not opts.quick:
        impls.append(
            Impl("tensorflow", "jacobian(experimental_use_pfor=False)", tensorflow_tape(False))
        )
    return [
        Row(
            "W2", "jacobian-one MLP", "eager", impls,
            reference=lambda: common.np_mlp_jacobian(PARAMS, X), rtol=1e-3, atol=1e-5,
        )
    ]
