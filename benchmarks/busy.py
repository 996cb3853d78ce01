"""W11: default threads, on a quiet machine and on one whose every core is busy.

    .venv-bench/bin/python -m benchmarks.busy            # writes results/busy.md
    .venv-bench/bin/python -m benchmarks.busy --only w=256 --no-save

For each workload and system (tapegrad, JAX), in processes of their own with the environment
as a user has it (no thread variables): the time quiet, quiet with one pinned thread, and
with one busy-loop process per core started and stopped by this script. Targets (issue 13):
tapegrad's busy/quiet slowdown at most 1.5x JAX's; tapegrad quiet with default settings no
slower than with one pinned thread (within 10% for noise).

The processes of a phase (quiet: default and pinned of both systems; busy: default of both)
each build and warm up once, then wait on their stdin and are driven round by round, one at
a time, the order rotating (``ROUNDS`` of ``ROUND_SECONDS`` each): a noisy second of the
machine hits every cell alike, not the one cell measured then. A round's time is its total
time over its number of calls: the time of a run of calls, as a user waits for it, every
call included. (Until session 12 it was the median over 10 ms batches of calls. On a loaded
machine the scheduler keeps a one-thread process for tenths of a second either alone on a
core or sharing one with a spinner, a 2x difference, so the median batch of a round picked
whichever placement held longest, and the busy cell of W7 w=1024 came out 1.25x or 1.85x
JAX's slowdown from run to run; the total counts both placements as the user meets them.)
The cell is the median over its rounds.
"""
import argparse
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
ROUNDS = 9
ROUND_SECONDS = 0.3
WARM_SECONDS = 0.3


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


def _round(fn, seconds):
    """The time per call of the calls made in ``seconds`` (at least three calls), in all."""
    n, t0 = 0, time.perf_counter()
    t_end = t0 + seconds
    while True:
        fn()
        n += 1
        t = time.perf_counter()
        if t >= t_end and n >= 3:
            return (t - t0) / n


def serve(system, workload):
    """A worker: build, warm up (the thread policy's first probes included), then measure a
    round for each ``go`` line on stdin, printing its median batch time."""
    fn = build(system, workload)
    for _ in range(3):
        fn()
    _round(fn, WARM_SECONDS)
    print("ready", flush=True)
    while sys.stdin.readline().strip() == "go":
        print(json.dumps(_round(fn, ROUND_SECONDS)), flush=True)


class Worker:
    def __init__(self, system, workload, env):
        self.p = subprocess.Popen([sys.executable, "-m", "benchmarks.busy", "--worker", system,
                                   workload], env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        self.times = []

    def _line(self):
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"worker {self.p.args[-2:]} ended with {self.p.wait()}")
        return line.strip()

    def ready(self):
        while self._line() != "ready":
            pass

    def go(self):
        self.p.stdin.write("go\n")
        self.p.stdin.flush()
        self.times.append(json.loads(self._line()))

    def close(self):
        try:
            self.p.stdin.close()
        finally:
            self.p.wait(timeout=60)


def phase(cells):
    """``{name: (system, workload, env)}`` -> ``{name: [round times]}``, interleaved."""
    workers = {}
    try:
        for name, args in cells.items():  # one at a time: the others wait on their stdin
            workers[name] = Worker(*args)
            workers[name].ready()
        names = list(workers)
        for r in range(ROUNDS):
            for name in names[r % len(names):] + names[:r % len(names)]:
                workers[name].go()
    finally:
        for w in workers.values():
            w.close()
    return {name: w.times for name, w in workers.items()}


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        serve(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(prog="python -m benchmarks.busy", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="workloads whose name contains this")
    parser.add_argument("--no-save", action="store_true", help=f"do not write {OUT.name}")
    opts = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if k not in PINNED and k != "XLA_FLAGS"}
    pinned = dict(base, **PINNED)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = []
    for workload in [w for w in WORKLOADS if opts.only in w]:
        r = phase({(s, m): (s, workload, env) for s in ("tapegrad", "jax")
                   for m, env in (("quiet", base), ("pinned", pinned))})
        spinners = [mp.Process(target=_spin, daemon=True) for _ in range(os.cpu_count())]
        for p in spinners:
            p.start()
        try:
            time.sleep(0.5)
            r.update(phase({(s, "busy"): (s, workload, base) for s in ("tapegrad", "jax")}))
        finally:
            for p in spinners:
                p.terminate()
            for p in spinners:
                p.join()
        rows.append((workload, r))
    lines = ["# W11: default threads, quiet and busy machine", "",
             f"`python -m benchmarks.busy`, {os.cpu_count()} cores, no thread variables set "
             "(busy: one spinning process per core). Each cell: the median over "
             f"{ROUNDS} rounds of {ROUND_SECONDS} s, the cells of a phase (quiet and pinned; "
             "busy) interleaved round by round in processes of their own; a round's time is "
             "its total time over its calls (every call counted, as a user waits for them). "
             f"Load average when it started: {load:.2f} (quiet means no spinners of ours; "
             "other processes on the machine are not stopped).", "",
             "| workload | system | quiet | busy | slowdown | pinned 1 thread |",
             "|---|---|---|---|---|---|"]
    checks = []
    med = statistics.median
    for workload, r in rows:
        for system in ("tapegrad", "jax"):
            q, b, p = (med(r[system, m]) for m in ("quiet", "busy", "pinned"))
            lines.append(f"| {workload} | {system} | {q * 1e3:.3f} ms | {b * 1e3:.3f} ms | "
                         f"{b / q:.2f}x | {p * 1e3:.3f} ms |")
        tg = med(r["tapegrad", "busy"]) / med(r["tapegrad", "quiet"])
        jx = med(r["jax", "busy"]) / med(r["jax", "quiet"])
        checks.append((workload, "busy slowdown <= 1.5x JAX's", tg / jx, tg / jx <= 1.5))
        # rounds of the same phase ran side by side: the median of their paired ratios
        qp = med(q / p for q, p in zip(r["tapegrad", "quiet"], r["tapegrad", "pinned"]))
        checks.append((workload, "quiet default <= pinned (10% noise)", qp, qp <= 1.1))
    lines += ["", "| workload | target | value | status |", "|---|---|---|---|"]
    lines += [f"| {w} | {t} | {v:.2f} | {'PASS' if ok else 'FAIL'} |" for w, t, v, ok in checks]
    text = "\n".join(lines) + "\n"
    if not opts.no_save:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
