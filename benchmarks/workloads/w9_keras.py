"""W9 Keras training step: 100 steps (25 with --quick) of Adam on an MLP 16-64-64-1 (tanh),
mean squared error, 128 x 16 float32 data, one full batch per step.

eager: tapegrad ``tf.keras`` (``Sequential`` of ``Dense``, ``GradientTape``,
``optimizer.apply_gradients``) and the same code in TF-Keras (Keras 3, TensorFlow backend);
PyTorch ``nn.Sequential`` + ``torch.optim.Adam``; JAX ``jax.grad`` with a hand-written Adam,
no jit. compiled: the same Keras step under ``tf.function`` (tapegrad and TensorFlow) and
``jax.jit`` of the JAX step. Every call restores the weights and the optimizer's state and
runs all the steps; the result is the final weights.
"""
import numpy as np

from benchmarks.harness import Impl, Row, skipped
from benchmarks.systems import load
from benchmarks.workloads import common

STEPS, QUICK_STEPS = 100, 25
N, SIZES, LR = 128, (16, 64, 64, 1), 1e-3
B1, B2 = 0.9, 0.999  # Keras's Adam defaults
# epsilon: tiny, so that Keras's placement (outside the bias-corrected root) and PyTorch's
# (inside) give the same numbers; with the default 1e-7 they differ by ~1e-3 here
EPS = 1e-12


def _data():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((N, SIZES[0])).astype(np.float32)
    y = np.sin(x @ rng.standard_normal((SIZES[0], 1))).astype(np.float32)
    return x, y


def _keras_step(mod, steps, compiled):
    """tapegrad and TensorFlow run this same code (``tf.keras``)."""
    keras = mod.keras
    x0, y0 = _data()
    layers = [keras.Input((SIZES[0],))]
    for width in SIZES[1:-1]:
        layers.append(keras.layers.Dense(width, activation="tanh"))
    layers.append(keras.layers.Dense(SIZES[-1]))
    model = keras.Sequential(layers)
    p0 = common.mlp_params(SIZES, seed=9)
    model.set_weights(p0)
    loss_fn = keras.losses.MeanSquaredError()
    opt = keras.optimizers.Adam(learning_rate=LR, epsilon=EPS)
    variables = model.trainable_variables
    opt.build(variables)
    state0 = [np.array(v.numpy()) for v in opt.variables]
    x, y = mod.constant(x0), mod.constant(y0)

    def step():
        with mod.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))

    step = mod.function(step) if compiled else step

    def run():
        model.set_weights(p0)
        for v, s in zip(opt.variables, state0):
            v.assign(s)
        for _ in range(steps):
            step()
        return model.get_weights()

    return run


def keras_step(name, steps, compiled):
    return lambda: _keras_step(load(name), steps, compiled)


def torch_step(steps):
    def build():
        torch = load("torch")
        x0, y0 = _data()
        mods = []
        for i, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:])):
            mods.append(torch.nn.Linear(a, b))
            if i < len(SIZES) - 2:
                mods.append(torch.nn.Tanh())
        model = torch.nn.Sequential(*mods)
        linears = [m for m in model if isinstance(m, torch.nn.Linear)]
        p0 = [torch.from_numpy(p) for p in common.mlp_params(SIZES, seed=9)]
        x, y = torch.from_numpy(x0), torch.from_numpy(y0)
        loss_fn = torch.nn.MSELoss()

        def run():
            with torch.no_grad():
                for lin, w, b in zip(linears, p0[0::2], p0[1::2]):
                    lin.weight.copy_(w.T)
                    lin.bias.copy_(b)
            opt = torch.optim.Adam(model.parameters(), lr=LR, betas=(B1, B2), eps=EPS)
            for _ in range(steps):
                opt.zero_grad(set_to_none=True)
                loss_fn(model(x), y).backward()
                opt.step()
            out = []
            for lin in linears:
                out += [lin.weight.detach().T.numpy().copy(), lin.bias.detach().numpy().copy()]
            return out

        return run

    return build


def jax_step(steps, compiled):
    def build():
        jax = load("jax")
        jnp = jax.numpy
        x0, y0 = _data()
        x, y = jnp.asarray(x0), jnp.asarray(y0)
        p0 = [jnp.asarray(p) for p in common.mlp_params(SIZES, seed=9)]

        def loss(params):
            return jnp.mean((common.mlp(params, x, jnp.matmul, jnp.tanh) - y) ** 2)

        def step(params, m, v, t):
            grads = jax.grad(loss)(params)
            t = t + 1.0
            alpha = LR * jnp.sqrt(1 - B2 ** t) / (1 - B1 ** t)
            m = [mi + (g - mi) * (1 - B1) for mi, g in zip(m, grads)]
            v = [vi + (g * g - vi) * (1 - B2) for vi, g in zip(v, grads)]
            params = [p - mi * alpha / (jnp.sqrt(vi) + EPS) for p, mi, vi in zip(params, m, v)]
            return params, m, v, t

        step = jax.jit(step) if compiled else step

        def run():
            params = p0
            m = [jnp.zeros_like(p) for p in p0]
            v = [jnp.zeros_like(p) for p in p0]
            t = jnp.asarray(0.0, jnp.float32)
            for _ in range(steps):
                params, m, v, t = step(params, m, v, t)
            return jax.block_until_ready(params)

        return run

    return build


def _reference(steps):
    """Keras's Adam in float64 NumPy."""
    def run():
        x, y = (a.astype(np.float64) for a in _data())
        params = [p.astype(np.float64) for p in common.mlp_params(SIZES, seed=9)]
        m = [np.zeros_like(p) for p in params]
        v = [np.zeros_like(p) for p in params]
        n = len(params) // 2
        for t in range(1, steps + 1):
            acts = [x]
            for i in range(n):
                z = acts[-1] @ params[2 * i] + params[2 * i + 1]
                acts.append(np.tanh(z) if i < n - 1 else z)
            g = 2 * (acts[-1] - y) / y.size
            grads = [None] * len(params)
            for i in reversed(range(n)):
                grads[2 * i], grads[2 * i + 1] = acts[i].T @ g, g.sum(0)
                if i:
                    g = (g @ params[2 * i].T) * (1 - acts[i] ** 2)
            alpha = LR * np.sqrt(1 - B2 ** t) / (1 - B1 ** t)
            for k, gk in enumerate(grads):
                m[k] += (gk - m[k]) * (1 - B1)
                v[k] += (gk * gk - v[k]) * (1 - B2)
                params[k] = params[k] - m[k] * alpha / (np.sqrt(v[k]) + EPS)
        return params
    return run


def rows(opts):
    n = QUICK_STEPS if opts.quick else STEPS
    ref = _reference(n)
    label = f"keras mlp 16-64-64-1 adam x{n}"
    eager = [
        Impl("tapegrad", "tf.keras Sequential + Adam", keras_step("tapegrad", n, False)),
        Impl("tensorflow", "tf.keras (Keras 3) Sequential + Adam",
             keras_step("tensorflow", n, False)),
        Impl("jax", "grad + hand-written Adam, no jit", jax_step(n, False)),
        Impl("torch", "nn.Sequential + torch.optim.Adam", torch_step(n)),
        skipped("autograd", "-", "no Keras-style model or optimizer"),
    ]
    compiled = [
        Impl("tapegrad", "function(keras step)", keras_step("tapegrad", n, True)),
        Impl("tensorflow", "tf.function(keras step)", keras_step("tensorflow", n, True)),
        Impl("jax", "jit(step with hand-written Adam)", jax_step(n, True)),
        skipped("torch", "torch.compile", "not compared"),
        skipped("autograd", "-", "autograd does not compile"),
    ]
    return [Row("W9", label, "eager", eager, ref, 2e-3, 1e-4),
            Row("W9", label, "compiled", compiled, ref, 2e-3, 1e-4)]
