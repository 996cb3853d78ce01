"""Per-call overhead of compiled functions against the same NumPy code written by hand.

``python -m benchmarks.overhead`` (run by ``make bench``) times small programs both ways in
one process, one BLAS thread, and writes ``benchmarks/results/overhead.md``. The target
(issue 3): a ``tapegrad.function`` call is within 1.3x of the hand-written NumPy, or within
about 10 µs of it for small programs.
"""
import pathlib
import time

from benchmarks import config

RESULTS = pathlib.Path(__file__).parent / "results"


def _best(fn, arg, seconds=0.4):
    fn(arg)
    n, t = 1, 0.0
    while t < 0.02:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(arg)
        t = time.perf_counter() - t0
        n *= 2
    best, end = float("inf"), time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(arg)
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def cases(np, tf):
    rng = np.random.default_rng(0)
    f32 = np.float32
    w1 = rng.standard_normal((32, 256)).astype(f32) / 6
    b1 = np.zeros(256, f32)
    w2 = rng.standard_normal((256, 256)).astype(f32) / 16
    w3 = rng.standard_normal((256, 16)).astype(f32) / 16
    x1 = rng.standard_normal((1, 32)).astype(f32)
    v16 = rng.standard_normal(16).astype(f32)
    t1, tb1, t2, t3 = (tf.constant(a) for a in (w1, b1, w2, w3))

    def np_layer(x):
        return np.tanh(x @ w1 + b1)

    def tg_layer(x):
        return tf.tanh(tf.matmul(x, t1) + tb1)

    def np_mlp(x):
        return np.tanh(np.tanh(x @ w1 + b1) @ w2) @ w3

    def tg_mlp(x):
        return tf.matmul(tf.tanh(tf.matmul(tf.tanh(tf.matmul(x, t1) + tb1), t2)), t3)

    def np_jac(x):  # the question's per-input Jacobian, by hand
        h1 = np.tanh(x @ w1 + b1)
        h2 = np.tanh(h1 @ w2)
        g = w3.T * (1 - h2 * h2)          # (16, 256)
        g = (g @ w2.T) * (1 - h1 * h1)    # (16, 256)
        return g @ w1.T                   # (16, 32)

    def tg_jac(x):
        with tf.GradientTape() as g:
            g.watch(x)
            y = tg_mlp(x)[0]
        return g.jacobian(y, x)[:, 0, :]

    def np_chain(x):
        for _ in range(2):
            x = np.exp(-np.abs(np.tanh(np.sin(x) * f32(1.0001)) + f32(0.1)))
        return x

    def tg_chain(x):
        for _ in range(2):
            x = tf.exp(-tf.abs(tf.tanh(tf.sin(x) * 1.0001) + 0.1))
        return x

    return [("tanh(x @ W + b), x 1x32, W 32x256", np_layer, tg_layer, x1),
            ("MLP 32-256-256-16 forward, 1 input", np_mlp, tg_mlp, x1),
            ("MLP Jacobian (16x32), 1 input", np_jac, tg_jac, x1),
            ("12-op elementwise chain, 16 elements", np_chain, tg_chain, v16)]


def main():
    config.configure(1)
    import numpy as np

    import tapegrad as tf
    rows = ["# Compiled-call overhead against hand-written NumPy", "",
            "`python -m benchmarks.overhead`: best of repeated timings in one process, one "
            "BLAS thread. Target (issue 3): within 1.3x of the NumPy code, or within about "
            "10 µs for small programs.", "",
            "| program | NumPy by hand | tapegrad.function | ratio | overhead | target |",
            "|---|---|---|---|---|---|"]
    for name, np_fn, tg_fn, x in cases(np, tf):
        compiled = tf.function(tg_fn)
        want = np_fn(x)
        got = np.asarray(compiled(tf.constant(x)))
        if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            raise AssertionError(f"{name}: tapegrad and NumPy disagree")
        t_np = _best(np_fn, x)
        t_tg = _best(compiled, tf.constant(x))
        ok = t_tg <= 1.3 * t_np or t_tg - t_np <= 10e-6
        rows.append(f"| {name} | {t_np * 1e6:.2f} µs | {t_tg * 1e6:.2f} µs | "
                    f"{t_tg / t_np:.2f} | {(t_tg - t_np) * 1e6:+.2f} µs | "
                    f"{'PASS' if ok else 'FAIL'} |")
        print(rows[-1], flush=True)
    # tracing + optimising + generating code for a program of 1,000 equations
    def long_chain(x):
        for k in range(400):
            x = tf.sin(x) * 1.0001 + 0.1 if k % 2 else tf.tanh(x) - 0.01
        return x
    ts = []
    for _ in range(3):
        f = tf.function(long_chain)
        t0 = time.perf_counter()
        cf = f.get_concrete_function(tf.constant(np.ones(16, np.float32)))
        ts.append(time.perf_counter() - t0)
    n_eqs = len(cf.raw_program.equations)
    rows += ["", "| trace + optimise + compile | equations traced | time | target |",
             "|---|---|---|---|",
             f"| 400-step elementwise chain | {n_eqs} | {min(ts) * 1e3:.0f} ms | "
             f"{'PASS' if min(ts) < 1.0 else 'FAIL'} (well under 1 s) |"]
    print(rows[-1], flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "overhead.md").write_text("\n".join(rows) + "\n")
    print(f"wrote {RESULTS / 'overhead.md'}")


if __name__ == "__main__":
    main()
