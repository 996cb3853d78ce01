"""W8 and W8b: convolutional networks, float32, channels last.

W8 cnn-jacobian (compiled): the question's workload, per-example Jacobians of a small CNN at 128
inputs (128 x 10 x 28 x 28 x 1): 28x28x1 -> conv 3x3, 8 filters, tanh -> conv 3x3, 16
filters, stride 2, tanh -> dense 10 ('VALID' padding, biases everywhere).
tapegrad: ``tapegrad.function`` + ``batch_jacobian`` and ``function(vmap(jacrev))`` (the
faster is reported); TensorFlow: ``tf.function`` + ``batch_jacobian``; JAX:
``jit(vmap(jacrev))``; PyTorch: ``torch.func.vmap(jacrev)`` (eager).

W8b lenet-train (eager): one SGD step of a LeNet-size CNN on 64 images (28x28x1 -> conv 5x5, 6,
'SAME', relu -> max pool 2 -> conv 5x5, 16, relu -> max pool 2 -> dense 120 -> 84 -> 10, softmax
cross-entropy), 10 steps per call (3 with --quick); the result is the final parameters.
PyTorch runs NCHW (its native layout), with the same weights.
"""
import types

import numpy as np

from benchmarks.harness import Impl, Row, skipped
from benchmarks.systems import load
from benchmarks.workloads import common

BATCH = 128
LENET_BATCH, STEPS, QUICK_STEPS, LR = 64, 10, 3, 0.05


def _w(rng, shape, fan_in):
    return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def cnn_params(seed=0):
    rng = np.random.default_rng(seed)
    return [_w(rng, (3, 3, 1, 8), 9), (0.1 * rng.standard_normal(8)).astype(np.float32),
            _w(rng, (3, 3, 8, 16), 72), (0.1 * rng.standard_normal(16)).astype(np.float32),
            _w(rng, (12 * 12 * 16, 10), 2304), (0.1 * rng.standard_normal(10)).astype(np.float32)]


def lenet_params(seed=1):
    rng = np.random.default_rng(seed)
    shapes = [((5, 5, 1, 6), 25), ((6,), 0), ((5, 5, 6, 16), 150), ((16,), 0),
              ((400, 120), 400), ((120,), 0), ((120, 84), 120), ((84,), 0), ((84, 10), 84),
              ((10,), 0)]
    return [_w(rng, s, f) if f else np.zeros(s, np.float32) for s, f in shapes]


def _x(n=BATCH, seed=2):
    return common.inputs((n, 28, 28, 1), seed=seed)


def _labels():
    return np.random.default_rng(3).integers(0, 10, LENET_BATCH)


# -- W8: the question's CNN, written once per API --------------------------------------------------
def cnn_tf_api(mod, p, x):
    """tapegrad and TensorFlow share this code: the API is the same."""
    h = mod.tanh(mod.nn.conv2d(x, p[0], 1, "VALID") + p[1])
    h = mod.tanh(mod.nn.conv2d(h, p[2], 2, "VALID") + p[3])
    return mod.matmul(mod.reshape(h, (-1, 2304)), p[4]) + p[5]


def _tape_jacobian(name):
    def build():
        mod = load(name)
        p = [mod.constant(a) for a in cnn_params()]
        x = mod.constant(_x())

        @mod.function
        def jac(x):
            with mod.GradientTape() as g:
                g.watch(x)
                y = cnn_tf_api(mod, p, x)
            return g.batch_jacobian(y, x)
        return lambda: jac(x)
    return build


def tapegrad_vmap_jacrev():
    tg = load("tapegrad")
    p = [tg.constant(a) for a in cnn_params()]
    f = lambda x: cnn_tf_api(tg, p, tg.reshape(x, (1, 28, 28, 1)))[0]
    jac = tg.function(tg.vmap(tg.jacrev(f)))
    x = tg.constant(_x())
    return lambda: jac(x)


def jax_jit_vmap_jacrev():
    jax = load("jax")
    jnp, lax = jax.numpy, jax.lax
    p = [jnp.asarray(a) for a in cnn_params()]
    dn = ("NHWC", "HWIO", "NHWC")

    def f(x):
        h = x[None]
        h = jnp.tanh(lax.conv_general_dilated(h, p[0], (1, 1), "VALID",
                                              dimension_numbers=dn) + p[1])
        h = jnp.tanh(lax.conv_general_dilated(h, p[2], (2, 2), "VALID",
                                              dimension_numbers=dn) + p[3])
        return (h.reshape(1, -1) @ p[4] + p[5])[0]
    jac = jax.jit(jax.vmap(jax.jacrev(f)))
    x = jnp.asarray(_x())
    return lambda: jax.block_until_ready(jac(x))


def torch_func_vmap_jacrev():
    torch = load("torch")
    F = torch.nn.functional
    a = cnn_params()
    w1, w2 = (torch.from_numpy(np.ascontiguousarray(w.transpose(3, 2, 0, 1))) for w in a[0:4:2])
    b1, w3, b2, b3 = (torch.from_numpy(v) for v in (a[1], a[4], a[3], a[5]))

    def f(x):  # x: (28, 28, 1) channels last, as the other systems
        h = x.permute(2, 0, 1)[None]
        h = torch.tanh(F.conv2d(h, w1, b1))
        h = torch.tanh(F.conv2d(h, w2, b2, stride=2))
        return h.permute(0, 2, 3, 1).reshape(1, -1)[0] @ w3 + b3
    jac = torch.func.vmap(torch.func.jacrev(f))
    x = torch.from_numpy(_x())
    return lambda: jac(x)


# -- float64 NumPy reference: the reverse pass by hand ------------------------------------------
def _np_conv(x, w, s):
    k = w.shape[0]
    v = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(1, 2))[:, ::s, ::s]
    return np.einsum("nhwcij,ijcd->nhwd", v, w)


def _np_conv_t(g, w, s, size):
    """The transpose of _np_conv: scatter each output's contribution back onto the input."""
    k = w.shape[0]
    out = np.zeros(g.shape[:-3] + (size, size, w.shape[2]))
    o = g.shape[-2]
    for i in range(k):
        for j in range(k):
            out[..., i:i + s * (o - 1) + 1:s, j:j + s * (o - 1) + 1:s, :] += g @ w[i, j].T
    return out


def np_cnn_jacobian():
    p = [np.asarray(a, np.float64) for a in cnn_params()]
    x = np.asarray(_x(), np.float64)
    h1 = np.tanh(_np_conv(x, p[0], 1) + p[1])
    h2 = np.tanh(_np_conv(h1, p[2], 2) + p[3])
    g = np.broadcast_to(p[4].T.reshape(1, 10, 12, 12, 16), (BATCH, 10, 12, 12, 16))
    g = g * (1 - h2 * h2)[:, None]
    g = _np_conv_t(g, p[2], 2, 26) * (1 - h1 * h1)[:, None]
    return _np_conv_t(g, p[0], 1, 28)


# -- W8b: LeNet training steps -----------------------------------------------------------------
def _tape_lenet(name, steps):
    def build():
        mod = load(name)
        p0 = lenet_params()
        params = [mod.Variable(a) for a in p0]
        x, labels = mod.constant(_x(LENET_BATCH, seed=4)), mod.constant(_labels())

        def step():
            with mod.GradientTape() as tape:
                w1, b1, w2, b2, w3, b3, w4, b4, w5, b5 = params
                h = mod.nn.relu(mod.nn.conv2d(x, w1, 1, "SAME") + b1)
                h = mod.nn.max_pool2d(h, 2, 2, "VALID")
                h = mod.nn.relu(mod.nn.conv2d(h, w2, 1, "VALID") + b2)
                h = mod.reshape(mod.nn.max_pool2d(h, 2, 2, "VALID"), (-1, 400))
                h = mod.nn.relu(mod.matmul(h, w3) + b3)
                h = mod.nn.relu(mod.matmul(h, w4) + b4)
                logits = mod.matmul(h, w5) + b5
                loss = mod.reduce_mean(mod.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=labels, logits=logits))
            for v, g in zip(params, tape.gradient(loss, params)):
                v.assign_sub(LR * g)

        def run():
            for v, a in zip(params, p0):
                v.assign(a)
            for _ in range(steps):
                step()
            return params
        return run
    return build


def _torch_lenet(steps):
    def build():
        torch = load("torch")
        F = torch.nn.functional
        p0 = lenet_params()
        # NCHW / OIHW for convolutions; the flatten permutes to NHWC so the dense weights match
        conv = lambda w: np.ascontiguousarray(w.transpose(3, 2, 0, 1))
        init = [torch.from_numpy(conv(a) if a.ndim == 4 else a) for a in p0]
        params = [a.clone().requires_grad_() for a in init]
        x = torch.from_numpy(np.ascontiguousarray(_x(LENET_BATCH, seed=4).transpose(0, 3, 1, 2)))
        labels = torch.from_numpy(_labels())

        def run():
            with torch.no_grad():
                for v, a in zip(params, init):
                    v.copy_(a)
            for _ in range(steps):
                w1, b1, w2, b2, w3, b3, w4, b4, w5, b5 = params
                h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1, padding=2)), 2)
                h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2)), 2)
                h = h.permute(0, 2, 3, 1).reshape(-1, 400)
                h = F.relu(F.relu(h @ w3 + b3) @ w4 + b4)
                F.cross_entropy(h @ w5 + b5, labels).backward()
                with torch.no_grad():
                    for v in params:
                        v -= LR * v.grad
                        v.grad = None
            return [p.detach().permute(2, 3, 1, 0) if p.ndim == 4 else p.detach() for p in params]
        return run
    return build


def rows(opts):
    """W8: the CNN's per-example Jacobians (W8b is a workload of its own: ``training``)."""
    jac = [
        Impl("tapegrad", "function + batch_jacobian", _tape_jacobian("tapegrad")),
        Impl("tapegrad", "function(vmap(jacrev))", tapegrad_vmap_jacrev),
        Impl("tensorflow", "tf.function + batch_jacobian", _tape_jacobian("tensorflow")),
        Impl("jax", "jit(vmap(jacrev))", jax_jit_vmap_jacrev),
        Impl("torch", "torch.func vmap(jacrev) (eager)", torch_func_vmap_jacrev),
        skipped("autograd", "-", "autograd has no convolution"),
    ]
    return [Row("W8", "cnn-jacobian x128", "compiled", jac, reference=np_cnn_jacobian,
                rtol=1e-3, atol=1e-5)]


def training_rows(opts):
    """W8b: LeNet's training steps. Its own workload, so its own processes: after W8's row in
    the same process, glibc's malloc had raised its dynamic mmap and trim thresholds for
    PyTorch (freeing W8's large blocks), so PyTorch's step ran without its ~6,000-9,000 page
    faults (57-62 ms against 71-85 ms per call in a fresh process: the state of a user's
    process that trains LeNet), and the ratio depended on the row before it."""
    steps = QUICK_STEPS if opts.quick else STEPS
    train = [
        Impl("tapegrad", "GradientTape + assign_sub", _tape_lenet("tapegrad", steps)),
        Impl("torch", "backward + no_grad update", _torch_lenet(steps)),
        Impl("tensorflow", "GradientTape + assign_sub", _tape_lenet("tensorflow", steps)),
        skipped("jax", "-", "eager JAX training is W5's comparison; not run here"),
        skipped("autograd", "-", "autograd has no convolution"),
    ]
    return [Row("W8b", f"lenet-train x{steps}", "eager", train, reference=None, rtol=2e-3,
                atol=1e-4)]


TRAINING = types.SimpleNamespace(rows=training_rows)  # the W8b entry of WORKLOADS
