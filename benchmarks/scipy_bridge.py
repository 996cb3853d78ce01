"""W12: SciPy's solvers driven by tapegrad, by JAX and by finite differences, side by side.

    .venv-bench/bin/python -m benchmarks.scipy_bridge          # writes results/scipy_bridge.md

(a) ``minimize`` of the extended Rosenbrock function, n = 1,000, trust-ncg with hessp;
(b) ``solve_ivp(method='BDF')`` on the 2-D Brusselator, N = 32 (2,048 states);
(c) ``least_squares`` on 10,000 sparse residuals.
Each (case, system) runs in its own process, one thread, and reports the median total
solve time of a few repeats (after one warm-up solve: compilation is reported separately).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).parent / "results" / "scipy_bridge.md"
CASES = {
    "a": ("minimize rosenbrock n=1000 trust-ncg", ["tapegrad", "jax", "fd"]),
    "b": ("solve_ivp BDF brusselator 2048", ["tapegrad", "fd_sparsity", "fd"]),
    "c": ("least_squares 10000 sparse residuals", ["tapegrad", "fd_sparsity"]),
}
N_ROSEN, N_BRUSS, N_LSQ = 1000, 32, 10_000


# -- the problems, once per system ------------------------------------------------------------
def rosen_np(x):
    import numpy as np
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2))


def case_a(system):
    import numpy as np
    import scipy.optimize as so
    x0 = np.full(N_ROSEN, -0.5)
    x0[::2] = 1.2
    if system == "tapegrad":
        import tapegrad as tf
        import tapegrad.scipy as tgs
        f = lambda x: tf.reduce_sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2  # noqa: E731
                                    + (1 - x[:-1]) ** 2)
        return lambda: tgs.minimize(f, x0, method="trust-ncg")
    if system == "jax":
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
        f = lambda x: jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)  # noqa
        vg = jax.jit(jax.value_and_grad(f))
        hvp = jax.jit(lambda x, p: jax.jvp(jax.grad(f), (x,), (p,))[1])

        def fun(x):
            v, g = vg(x)
            return float(v), np.asarray(g)
        return lambda: so.minimize(fun, x0, jac=True, method="trust-ncg",
                                   hessp=lambda x, p: np.asarray(hvp(x, p)))
    return lambda: so.minimize(rosen_np, x0, method="trust-ncg", jac="2-point",
                               hess=so.BFGS())  # finite differences: hessp is not possible


def brusselator_np(n):
    import numpy as np
    alpha = 0.002 * (n + 1) ** 2

    def lap(u):
        return (np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1)
                - 4 * u)

    def f(t, y):
        u, v = y[:n * n].reshape(n, n), y[n * n:].reshape(n, n)
        return np.concatenate([(1 + u * u * v - 4.4 * u + alpha * lap(u)).ravel(),
                               (3.4 * u - u * u * v + alpha * lap(v)).ravel()])
    return f


def brusselator_tg(n):
    import tapegrad as tf
    alpha = 0.002 * (n + 1) ** 2

    def roll(u, k, axis):
        return tf.concat([u[-k:], u[:-k]], 0) if axis == 0 else \
            tf.concat([u[:, -k:], u[:, :-k]], 1)

    def lap(u):
        return roll(u, 1, 0) + roll(u, n - 1, 0) + roll(u, 1, 1) + roll(u, n - 1, 1) - 4 * u

    def f(t, y):
        u, v = tf.reshape(y[:n * n], [n, n]), tf.reshape(y[n * n:], [n, n])
        return tf.concat([tf.reshape(1 + u * u * v - 4.4 * u + alpha * lap(u), [-1]),
                          tf.reshape(3.4 * u - u * u * v + alpha * lap(v), [-1])], 0)
    return f


def case_b(system):
    import numpy as np
    import scipy.sparse as sp
    from scipy.integrate import solve_ivp
    n = N_BRUSS
    y0 = 1.0 + 0.5 * np.sin(np.arange(2 * n * n))
    span, tol = (0.0, 10.0), dict(rtol=1e-6, atol=1e-8)
    if system == "tapegrad":
        import tapegrad.scipy as tgs
        f = brusselator_tg(n)
        return lambda: tgs.solve_ivp(f, span, y0, method="BDF", **tol)
    f = brusselator_np(n)
    if system == "fd_sparsity":
        m = n * n
        eye = sp.identity(n, format="csr")
        ring = sp.diags([1, 1, 1, 1, 1], [-(n - 1), -1, 0, 1, n - 1], shape=(n, n))
        lap = (sp.kron(ring, eye) + sp.kron(eye, ring)) != 0
        blk = sp.bmat([[lap, sp.identity(m)], [sp.identity(m), lap]]) != 0
        return lambda: solve_ivp(f, span, y0, method="BDF", jac_sparsity=blk, **tol)
    return lambda: solve_ivp(f, span, y0, method="BDF", **tol)


def case_c(system):
    import numpy as np
    import scipy.optimize as so
    import scipy.sparse as sp
    n = N_LSQ
    b = np.linspace(-1.0, 1.0, n)
    x0 = np.zeros(n)
    if system == "tapegrad":
        import tapegrad as tf
        import tapegrad.scipy as tgs
        bt = tf.constant(b)

        def r(x):
            inner = x[1:-1] - 0.3 * tf.sin(x[2:] + x[:-2]) - bt[1:-1]
            return tf.concat([x[:1] - bt[:1], inner, x[-1:] - bt[-1:]], 0)
        return lambda: tgs.least_squares(r, x0)

    def r_np(x):
        inner = x[1:-1] - 0.3 * np.sin(x[2:] + x[:-2]) - b[1:-1]
        return np.concatenate([x[:1] - b[:1], inner, x[-1:] - b[-1:]])
    pattern = sp.diags([1, 1, 1], [-1, 0, 1], shape=(n, n))
    return lambda: so.least_squares(r_np, x0, jac_sparsity=pattern)


def run_one(case, system, repeats):
    """In this process: warm up, then time ``repeats`` solves; print JSON."""
    t0 = time.perf_counter()
    solve = {"a": case_a, "b": case_b, "c": case_c}[case](system)
    first = solve()
    warm = time.perf_counter() - t0
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = solve()
        times.append(time.perf_counter() - t0)
    x = res.y[:, -1] if hasattr(res, "y") else res.x
    print(json.dumps({"median": statistics.median(times), "first": warm,
                      "x": [float(v) for v in x[:8]], "success": bool(first.success)}))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(CASES))
    ap.add_argument("--system")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    if args.case and args.system:
        return run_one(args.case, args.system, args.repeats)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    lines = ["# W12: SciPy solvers with exact derivatives", "",
             f"`{' '.join([Path(sys.executable).name, '-m', 'benchmarks.scipy_bridge'])}`: "
             f"each system in its own process, one thread, median of {args.repeats} solves "
             "after a warm-up solve (the warm-up, compilation included, in brackets).", "",
             "| case | system | solve | first solve | ratio tapegrad/system | success |",
             "|---|---|---|---|---|---|"]
    for case, (title, systems) in CASES.items():
        got = {}
        for system in systems:
            out = subprocess.run([sys.executable, "-m", "benchmarks.scipy_bridge", "--case",
                                  case, "--system", system, "--repeats", str(args.repeats)],
                                 env=env, capture_output=True, text=True, timeout=1800)
            if out.returncode:
                got[system] = None
                print(out.stderr[-2000:], file=sys.stderr)
                continue
            got[system] = json.loads(out.stdout.strip().splitlines()[-1])
        tg = got.get("tapegrad")
        for system in systems:
            r = got[system]
            if r is None:
                lines.append(f"| {case} {title} | {system} | failed | | | |")
                continue
            ratio = tg["median"] / r["median"] if tg else float("nan")
            lines.append(f"| {case} {title} | {system} | {r['median']:.3f} s | "
                         f"({r['first']:.3f} s) | {ratio:.2f} | {r['success']} |")
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
