"""W12: SciPy's solvers driven by tapegrad, by JAX and by finite differences, side by side.

    .venv-bench/bin/python -m benchmarks.scipy_bridge          # writes results/scipy_bridge.md

(a) ``minimize`` of the extended Rosenbrock function, n = 1,000, trust-ncg with hessp;
(b) ``solve_ivp(method='BDF')`` on the 2-D Brusselator, N = 32 (2,048 states);
(c) ``least_squares`` on 10,000 sparse residuals;
(j) the Brusselator's Jacobian, sparse (detected and coloured) against tapegrad's dense one.
Each (case, system) runs in its own process, one thread, and reports the median total
solve time of a few repeats (after one warm-up solve: compilation is reported separately),
wall clock and CPU time of the process (the CPU time is what to compare on a shared machine),
and then the issue's targets (issue 15, item 3 and item 2).

Finite differences for (a): trust-ncg needs a callable gradient and a Hessian or its
products, so its finite-difference baseline is a central-difference gradient and
Hessian-vector products by central differences of that gradient (forward differences stall
after about ten iterations: "a bad approximation"). One iteration costs thousands of
function evaluations and the solve needs about 4,000 iterations, so that baseline runs its
first ``FD_ITERATIONS`` iterations only and is compared per iteration.
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
    "j": ("jacobian brusselator 2048", ["sparse", "dense"]),
}
N_ROSEN, N_BRUSS, N_LSQ = 1000, 32, 10_000
FD_ITERATIONS = 20
ROUNDS = {"b": 5, "c": 3}  # close races: the systems measured in turns (plain FD once)
BDF_TOL = dict(rtol=1e-6, atol=1e-8)


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
    return lambda: so.minimize(rosen_np, x0, method="trust-ncg", jac=_fd_grad(rosen_np),
                               hessp=_fd_hessp(rosen_np), options={"maxiter": FD_ITERATIONS})


def _fd_grad(f):
    from scipy.optimize._numdiff import approx_derivative
    last = {}

    def grad(x):  # SciPy asks for the gradient at one x several times: compute it once
        key = x.tobytes()
        if last.get("key") != key:
            last["key"], last["g"] = key, approx_derivative(f, x, method="3-point")
        return last["g"]
    return grad


def _fd_hessp(f):
    import numpy as np
    from scipy.optimize._numdiff import approx_derivative

    def hessp(x, p):
        h = np.finfo(np.float64).eps ** (1 / 3) / max(float(np.linalg.norm(p)), 1e-300)
        return (approx_derivative(f, x + h * p, method="3-point")
                - approx_derivative(f, x - h * p, method="3-point")) / (2 * h)
    return hessp


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
    span, tol = (0.0, 10.0), BDF_TOL
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


def case_j(system):
    """One Jacobian of the Brusselator's right-hand side at a new point per call."""
    import itertools

    import numpy as np

    from tapegrad.scipy.compiled import Compiled
    n = N_BRUSS
    y0 = 1.0 + 0.5 * np.sin(np.arange(2 * n * n))
    f = brusselator_tg(n)
    c = Compiled(lambda y: f(0.0, y), y0)
    jac = c.sparse_jac if system == "sparse" else c.jac
    points = itertools.count(1)

    def one():
        J = jac(y0 + 1e-3 * next(points))  # a new point: the one-point cache never answers
        values = J.data if hasattr(J, "data") and not isinstance(J, np.ndarray) else J
        return _Result(x=J.diagonal()[:8], success=bool(np.isfinite(values).all()))
    return one


class _Result(dict):
    """What ``run_one`` reads of a solver's result (``x``, ``success``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def run_one(case, system, repeats):
    """In this process: warm up, then time ``repeats`` solves; print JSON."""
    t0 = time.perf_counter()
    solve = {"a": case_a, "b": case_b, "c": case_c, "j": case_j}[case](system)
    first = solve()
    warm = time.perf_counter() - t0
    times, cpu = [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        res = solve()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    x = res.y[:, -1] if hasattr(res, "y") else res.x
    print(json.dumps({"median": statistics.median(times), "cpu": statistics.median(cpu),
                      "first": warm, "x": [float(v) for v in x],
                      "nit": int(res.get("nit", 0) or 0), "success": bool(first.success)}))


def _measure(case, system, repeats, env):
    out = subprocess.run([sys.executable, "-m", "benchmarks.scipy_bridge", "--case", case,
                          "--system", system, "--repeats", str(repeats)],
                         env=env, capture_output=True, text=True, timeout=1800)
    if out.returncode:
        print(out.stderr[-2000:], file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median_round(results):
    """The round with the median CPU time (None if any round failed)."""
    if any(r is None for r in results):
        return None
    return sorted(results, key=lambda r: r["cpu"])[len(results) // 2]


def _s(t):
    return f"{t:.3f} s" if t >= 0.1 else f"{t * 1e3:.3g} ms"


def _per(r, case, system):
    """The time to compare: per iteration for the truncated finite-difference run of (a)."""
    if case == "a" and system in ("fd", "tapegrad@fd"):
        return r["cpu"] / max(1, r["nit"]), r["median"] / max(1, r["nit"])
    return r["cpu"], r["median"]


def _targets(got):
    import numpy as np
    rows = []

    def ratio(case, a, b, per=False):
        ra, rb = got[case].get(a), got[case].get(b)
        if not ra or not rb:
            return None
        if per:
            return (ra["cpu"] / ra["nit"]) / (rb["cpu"] / rb["nit"])
        return ra["cpu"] / rb["cpu"]

    def row(name, value, ok, fmt="{:.2f}"):
        shown = "-" if value is None else fmt.format(value)
        rows.append(f"| {name} | {shown} | "
                    f"{'-' if value is None else ('PASS' if ok(value) else 'FAIL')} |")

    row("(a) tapegrad/JAX total solve, CPU <= 1.0", ratio("a", "tapegrad", "jax"),
        lambda v: v <= 1.0)
    row("(a) tapegrad/finite differences per iteration <= 0.1 (well under)",
        ratio("a", "tapegrad", "fd", per=True), lambda v: v <= 0.1, "{:.1e}")
    row("(b) tapegrad/SciPy FD with jac_sparsity, CPU <= 1.0",
        ratio("b", "tapegrad", "fd_sparsity"), lambda v: v <= 1.0)
    row("(b) tapegrad/SciPy plain FD, CPU <= 0.2", ratio("b", "tapegrad", "fd"),
        lambda v: v <= 0.2, "{:.3f}")
    b = got["b"]
    if b.get("tapegrad") and b.get("fd_sparsity"):
        y, ref = np.array(b["tapegrad"]["x"]), np.array(b["fd_sparsity"]["x"])
        err = np.max(np.abs(y - ref) / (BDF_TOL["atol"] + BDF_TOL["rtol"] * np.abs(ref)))
        row("(b) same solution: max abs(y - y_fd) / (atol + rtol abs(y_fd)) <= 1", err,
            lambda v: v <= 1.0, "{:.1e}")
    c = got["c"]
    if c.get("tapegrad") and c.get("fd_sparsity"):
        err = float(np.max(np.abs(np.array(c["tapegrad"]["x"]) - c["fd_sparsity"]["x"])))
        row("(c) same result: max abs(x - x_fd) <= 1e-6", err, lambda v: v <= 1e-6, "{:.1e}")
        row("(c) tapegrad/SciPy FD with jac_sparsity, CPU (no target)",
            ratio("c", "tapegrad", "fd_sparsity"), lambda v: True)
    dense_over_sparse = ratio("j", "dense", "sparse")
    row("(item 2) sparse Jacobian >= 50x faster than dense, Brusselator 2048",
        dense_over_sparse, lambda v: v >= 50, "{:.0f}x")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(CASES))
    ap.add_argument("--system")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    if args.case and args.system:
        return run_one(args.case, args.system, args.repeats)
    from benchmarks.machine import load_line
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               XLA_FLAGS="--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
    before = load_line()
    lines = ["# W12: SciPy solvers with exact derivatives", "",
             f"`{' '.join([Path(sys.executable).name, '-m', 'benchmarks.scipy_bridge'])}`: "
             f"each system in its own process, one thread, median of {args.repeats} solves "
             "after a warm-up solve (the warm-up, compilation included, in brackets). "
             "Ratios compare CPU time (the machine may be shared; wall clock shown too). "
             f"(a)'s finite differences run {FD_ITERATIONS} iterations and are compared per "
             "iteration. Close races (" + ", ".join(f"{c}: {k} rounds" for c, k in ROUNDS.items())
             + ") measure the systems in turns, in fresh processes, and keep each system's "
             "median round.", "",
             "| case | system | solve (wall) | CPU | first solve | iterations | "
             "ratio tapegrad/system (CPU) | success |",
             "|---|---|---|---|---|---|---|---|"]
    got = {}
    for case, (title, systems) in CASES.items():
        rounds = {s: [] for s in systems}
        for k in range(ROUNDS.get(case, 1)):  # systems take turns: drifting load hits all
            for system in systems:
                if k == 0 or system != "fd":  # plain finite differences are far behind
                    rounds[system].append(_measure(case, system, args.repeats, env))
        got[case] = {s: _median_round(r) for s, r in rounds.items()}
        tg = got[case].get("tapegrad") or got[case].get("sparse")
        for system in systems:
            r = got[case][system]
            if r is None:
                lines.append(f"| {case} {title} | {system} | failed | | | | | |")
                continue
            mine, theirs = _per(tg, case, "tapegrad@fd" if system == "fd" else "tapegrad") \
                if tg else (float("nan"),) * 2, _per(r, case, system)
            lines.append(f"| {case} {title} | {system} | {_s(r['median'])} | {_s(r['cpu'])}"
                         f" | ({_s(r['first'])}) | {r['nit'] or '-'} | "
                         f"{mine[0] / theirs[0]:.3g} | {r['success']} |")
    lines += ["", "| target | value | status |", "|---|---|---|"] + _targets(got)
    lines += ["", f"Machine load: {before} before, {load_line()} after."]
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
