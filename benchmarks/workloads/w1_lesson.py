"""W1, the lesson: d2/dx2 of x**3 at the scalar 2.0 (float32) with nested differentiation, eager.

Expected value 12. tapegrad and TensorFlow use nested GradientTapes, PyTorch
``autograd.grad(create_graph=True)`` twice, JAX and autograd ``grad(grad(f))``.

Two rows: ``x**3`` of a watched constant, and the code as the lesson writes it
(``x = tf.Variable(2.0)``, ``y = x * x * x``, nested tapes without ``watch``; the other
systems' ``x * x * x`` in their own idiom).
"""
import numpy as np

from benchmarks.harness import Impl, Row
from benchmarks.systems import load


def tapegrad_tapes():
    tg = load("tapegrad")
    x = tg.constant(2.0)

    def run():
        with tg.GradientTape() as outer:
            outer.watch(x)
            with tg.GradientTape() as inner:
                inner.watch(x)
                y = x**3
            dy = inner.gradient(y, x)
        return outer.gradient(dy, x)

    return run


def tapegrad_grad_grad():
    tg = load("tapegrad")
    d2f = tg.grad(tg.grad(lambda x: x**3))
    x = tg.constant(2.0)
    return lambda: d2f(x)


def tensorflow_tapes():
    tf = load("tensorflow")
    x = tf.constant(2.0)

    def run():
        with tf.GradientTape() as outer:
            outer.watch(x)
            with tf.GradientTape() as inner:
                inner.watch(x)
                y = x**3
            dy = inner.gradient(y, x)
        return outer.gradient(dy, x)

    return run


def torch_autograd():
    torch = load("torch")
    x = torch.tensor(2.0, requires_grad=True)

    def run():
        y = x**3
        (dy,) = torch.autograd.grad(y, x, create_graph=True)
        (d2y,) = torch.autograd.grad(dy, x)
        return d2y

    return run


def jax_grad_grad():
    jax = load("jax")
    d2f = jax.grad(jax.grad(lambda x: x**3))
    x = jax.numpy.float32(2.0)
    return lambda: jax.block_until_ready(d2f(x))


def autograd_grad_grad():
    ag = load("autograd")
    d2f = ag.grad(ag.grad(lambda x: x**3))
    x = np.float32(2.0)
    return lambda: d2f(x)


def cube(x):
    return x * x * x


def tapegrad_as_written(name="tapegrad"):
    def build():
        tf = load(name)
        x = tf.Variable(2.0)

        def run():
            with tf.GradientTape() as t2:
                with tf.GradientTape() as t1:
                    y = x * x * x
                dy_dx = t1.gradient(y, x)
            return t2.gradient(dy_dx, x)

        return run

    return build


def torch_as_written():
    torch = load("torch")
    x = torch.tensor(2.0, requires_grad=True)

    def run():
        y = x * x * x
        (dy,) = torch.autograd.grad(y, x, create_graph=True)
        (d2y,) = torch.autograd.grad(dy, x)
        return d2y

    return run


def jax_as_written():
    jax = load("jax")
    d2f = jax.grad(jax.grad(cube))
    x = jax.numpy.float32(2.0)
    return lambda: jax.block_until_ready(d2f(x))


def autograd_as_written():
    ag = load("autograd")
    d2f = ag.grad(ag.grad(cube))
    x = np.float32(2.0)
    return lambda: d2f(x)


def rows(opts):
    written = [
        Impl("tapegrad", "Variable, nested GradientTape", tapegrad_as_written()),
        Impl("tensorflow", "Variable, nested GradientTape", tapegrad_as_written("tensorflow")),
        Impl("jax", "grad(grad) no jit", jax_as_written),
        Impl("torch", "autograd.grad create_graph", torch_as_written),
        Impl("autograd", "grad(grad)", autograd_as_written),
    ]
    impls = [
        Impl("tapegrad", "nested GradientTape", tapegrad_tapes),
        Impl("tapegrad", "tapegrad.grad(grad)", tapegrad_grad_grad),
        Impl("tensorflow", "nested GradientTape", tensorflow_tapes),
        Impl("jax", "grad(grad) no jit", jax_grad_grad),
        Impl("torch", "autograd.grad create_graph", torch_autograd),
        Impl("autograd", "grad(grad)", autograd_grad_grad),
    ]
    return [Row("W1", "lesson d2(x^3) at 2", "eager", impls, reference=lambda: 12.0, rtol=1e-6),
            Row("W1", "lesson as written (Variable, x*x*x)", "eager", written,
                reference=lambda: 12.0, rtol=1e-6)]
