"""W11: default thread settings, on a quiet machine and on one whose every core is busy.

    .venv-bench/bin/python -m benchmarks.busy            # writes results/busy.md

For each workload and system (tapegrad, JAX), in its own process with the environment as a
user has it (no thread variables): the median time quiet, then with one busy-loop process
per core started and stopped by this script, and quiet with one pinned thread. Targets
(issue 13): tapegrad's busy/quiet slowdown at most 1.5x JAX's; tapegrad quiet with default
settings no slower than with one pinned thread (within 10% for noise).
"""
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).parent / "results" / "busy.md"
WORKLOADS = ("W3 batch-jacobian MLP x512", "W7 mlp-grad w=256", "W7 mlp-grad w=1024")
PINNED = {v: "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


def _spin():
    while True:
        pass


def build(system, workload):
    import numpy as np

    from benchmarks.workloads import common
    rng = np.random.default_rng(0)
    if workload.startswith("W3"):
        params, x = common.mlp_params(), common.inputs((512, 32), seed=2)
    else:
        w = int(workload.split("=")[1])
        params, x = common.mlp_params((64, w, w, 1)), rng.standard_normal((64, 64)).astype(
            np.float32)
    if system == "tapegrad":
        import tapegrad as tg
        ps, xt = [tg.constant(p) for p in params], tg.constant(x)
        if workload.startswith("W3"):
            @tg.function
            def f(x):
                with tg.GradientTape() as g:
                    g.watch(x)
                    y = common.mlp(ps, x, tg.matmul, tg.tanh)
                return g.batch_jacobian(y, x)
        else:
            @tg.function
            def f(x):
                with tg.GradientTape() as g:
                    g.watch(ps)
                    y = tg.reduce_sum(common.mlp(ps, x, tg.matmul, tg.tanh) ** 2)
                return g.gradient(y, ps)
        return lambda: f(xt)
    import jax
    import jax.numpy as jnp
    ps, xj = [jnp.asarray(p) for p in params], jnp.asarray(x)
    if workload.startswith("W3"):
        g = jax.jit(jax.vmap(jax.jacrev(lambda x: common.mlp(ps, x[None], jnp.matmul,
                                                              jnp.tanh)[0])))
        return lambda: g(xj).block_until_ready()
    g = jax.jit(jax.grad(lambda ps: jnp.sum(common.mlp(ps, xj, jnp.matmul, jnp.tanh) ** 2)))
    return lambda: jax.block_until_ready(g(ps))


def measure(system, workload, seconds=2.0):
    fn = build(system, workload)
    for _ in range(3):
        fn()
    times, t_end = [], time.perf_counter() + seconds
    while time.perf_counter() < t_end or len(times) < 5:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def run(system, workload, env):
    out = subprocess.run([sys.executable, "-m", "benchmarks.busy", system, workload],
                         env=env, capture_output=True, text=True, timeout=600)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    if len(sys.argv) == 3:
        print(json.dumps(measure(sys.argv[1], sys.argv[2])))
        return
    base = {k: v for k, v in os.environ.items() if k not in PINNED and k != "XLA_FLAGS"}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = []
    for workload in WORKLOADS:
        r = {}
        for system in ("tapegrad", "jax"):
            r[system, "quiet"] = run(system, workload, base)
            r[system, "pinned"] = run(system, workload, dict(base, **PINNED))
            spinners = [mp.Process(target=_spin, daemon=True) for _ in range(os.cpu_count())]
            for p in spinners:
                p.start()
            try:
                time.sleep(0.5)
                r[system, "busy"] = run(system, workload, base)
            finally:
                for p in spinners:
                    p.terminate()
                for p in spinners:
                    p.join()
        rows.append((workload, r))
    lines = ["# W11: default threads, quiet and busy machine", "",
             f"`python -m benchmarks.busy`, {os.cpu_count()} cores, no thread variables set "
             "(busy: one spinning process per core); medians over ~2 s per cell. Load "
             f"average when it started: {load:.2f} (quiet means no spinners of ours; other "
             "processes on the machine are not stopped).", "",
             "| workload | system | quiet | busy | slowdown | pinned 1 thread |",
             "|---|---|---|---|---|---|"]
    checks = []
    for workload, r in rows:
        for system in ("tapegrad", "jax"):
            q, b, p = r[system, "quiet"], r[system, "busy"], r[system, "pinned"]
            lines.append(f"| {workload} | {system} | {q * 1e3:.3f} ms | {b * 1e3:.3f} ms | "
                         f"{b / q:.2f}x | {p * 1e3:.3f} ms |")
        tg = r["tapegrad", "busy"] / r["tapegrad", "quiet"]
        jx = r["jax", "busy"] / r["jax", "quiet"]
        checks.append((workload, "busy slowdown <= 1.5x JAX's", tg / jx, tg / jx <= 1.5))
        qp = r["tapegrad", "quiet"] / r["tapegrad", "pinned"]
        checks.append((workload, "quiet default <= pinned (10% noise)", qp, qp <= 1.1))
    lines += ["", "| workload | target | value | status |", "|---|---|---|---|"]
    lines += [f"| {w} | {t} | {v:.2f} | {'PASS' if ok else 'FAIL'} |" for w, t, v, ok in checks]
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
