"""W4 hessian: Hessian (100 x 100) of the 100-variable Rosenbrock function, float64.

compiled: ``jax.jit(jax.hessian(f))``; ``tf.function`` with nested tapes + ``jacobian``;
``torch.func.hessian`` (runs eagerly); ``tapegrad.function(tapegrad.hessian(f))`` and, as an
alternative, ``tapegrad.function`` with nested tapes.
eager: ``jax.hessian`` without jit, ``torch.func.hessian``, ``autograd.hessian``, TensorFlow
nested tapes (``jacobian`` with pfor and, without --quick, also without), ``tapegrad.hessian``
and tapegrad nested tapes. Where a system has two variants the faster is reported.
A third row times the Hessian as a TensorFlow user writes it, the same code for tapegrad and
TensorFlow (nested tapes inside ``tf.function``, ``t2.jacobian(g, x)``), against
``jit(jax.hessian)`` and ``torch.func.hessian``.
"""
import numpy as np

from benchmarks.harness import Impl, Row, skipped
from benchmarks.systems import load
from benchmarks.workloads import common

N = 100
X = np.random.default_rng(3).uniform(-1.5, 1.5, N)  # float64


def rosenbrock(x):
    return (100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2).sum()


def _tf_rosenbrock(tf):
    return lambda x: tf.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def _nested_tapes(mod, f, **jacobian_kw):
    def hess(x):
        with mod.GradientTape(persistent=bool(jacobian_kw)) as outer:
            outer.watch(x)
            with mod.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        return outer.jacobian(g, x, **jacobian_kw)

    return hess


def tapegrad_hessian(compiled):
    def build():
        tg = load("tapegrad")
        h = tg.hessian(_tf_rosenbrock(tg))
        h = tg.function(h) if compiled else h
        x = tg.constant(X)
        return lambda: h(x)

    return build


def tapegrad_tapes(compiled):
    def build():
        tg = load("tapegrad")
        h = _nested_tapes(tg, _tf_rosenbrock(tg))
        h = tg.function(h) if compiled else h
        x = tg.constant(X)
        return lambda: h(x)

    return build


def tensorflow_tapes(compiled, use_pfor=True):
    def build():
        tf = load("tensorflow")
        kw = {} if use_pfor else {"experimental_use_pfor": False}
        h = _nested_tapes(tf, _tf_rosenbrock(tf), **kw)
        h = tf.function(h) if compiled else h
        x = tf.constant(X)
        return lambda: h(x)

    return build


def jax_hessian(compiled):
    def build():
        jax = load("jax")
        h = jax.hessian(rosenbrock)
        h = jax.jit(h) if compiled else h
        x = jax.numpy.asarray(X)
        return lambda: jax.block_until_ready(h(x))

    return build


def torch_func_hessian():
    torch = load("torch")
    h = torch.func.hessian(rosenbrock)
    x = torch.from_numpy(X)
    return lambda: h(x)


def autograd_hessian():
    ag = load("autograd")
    h = ag.hessian(rosenbrock)
    return lambda: h(X)


def tf_user_hessian(name):
    """The TensorFlow user's code, as written (the same text runs on tapegrad)."""
    def build():
        tf = load(name)
        rosenbrock = _tf_rosenbrock(tf)

        @tf.function
        def hessian(x):
            with tf.GradientTape() as t2:
                t2.watch(x)
                with tf.GradientTape() as t1:
                    t1.watch(x)
                    y = rosenbrock(x)
                g = t1.gradient(y, x)
            return t2.jacobian(g, x)

        x = tf.constant(X)
        return lambda: hessian(x)

    return build


def rows(opts):
    ref = lambda: common.rosenbrock_hessian(X)
    as_written = [
        Impl("tapegrad", "tf.function nested tapes, t2.jacobian", tf_user_hessian("tapegrad")),
        Impl("tensorflow", "tf.function nested tapes, t2.jacobian",
             tf_user_hessian("tensorflow")),
        Impl("jax", "jit(hessian)", jax_hessian(True)),
        Impl("torch", "torch.func.hessian (eager)", torch_func_hessian),
        skipped("autograd", "-", "autograd does not compile"),
    ]
    compiled = [
        Impl("tapegrad", "function(hessian)", tapegrad_hessian(True)),
        Impl("tapegrad", "function(nested tapes)", tapegrad_tapes(True)),
        Impl("tensorflow", "tf.function nested tapes", tensorflow_tapes(True)),
        Impl("jax", "jit(hessian)", jax_hessian(True)),
        Impl("torch", "torch.func.hessian (eager)", torch_func_hessian),
        skipped("autograd", "-", "autograd does not compile"),
    ]
    eager = [
        Impl("tapegrad", "hessian", tapegrad_hessian(False)),
        Impl("tapegrad", "nested tapes", tapegrad_tapes(False)),
        Impl("tensorflow", "nested tapes", tensorflow_tapes(False)),
        Impl("jax", "hessian no jit", jax_hessian(False)),
        Impl("torch", "torch.func.hessian", torch_func_hessian),
        Impl("autograd", "hessian", autograd_hessian),
    ]
    if not opts.quick:
        eager.append(
            Impl("tensorflow", "nested tapes, no pfor", tensorflow_tapes(False, use_pfor=False))
        )
    return [
        Row("W4", "hessian rosenbrock-100 f64", "compiled", compiled, ref, 1e-9, 1e-12),
        Row("W4", "hessian rosenbrock-100 f64", "eager", eager, ref, 1e-9, 1e-12),
        Row("W4", "hessian rosenbrock-100 f64 tf-style", "compiled", as_written,
            ref, 1e-9, 1e-12),
    ]
