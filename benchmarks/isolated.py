"""W7's large-array row with every system in its own process (issue 13, item 5).

    .venv-bench/bin/python -m benchmarks.isolated        # writes results/isolated.md

The 10-op chain and its gradient on 1e7 float32 elements (``common.chain``, W7), eager and
compiled. In the main suite all frameworks share one process, so their allocators and
thread pools disturb each other in a way no user sees; here each (system, mode) runs alone
in a fresh process, one compute thread as in the main suite (``benchmarks/config.py``), and
the processes take turns round by round. Each process checks its result against the float64
reference, times ``--calls`` calls and measures ``np.copyto`` on the same arrays; the reported
time is the median over rounds of each round's median call.

"Bandwidth" is the one pass any implementation must make (read x, write the gradient: 2 x
40 MB) per call time, as a fraction of what ``np.copyto`` reaches for the same 2 x 40 MB in
that process: 100% would be a gradient as cheap as copying its input.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).parent / "results" / "isolated.md"
SYSTEMS = ("tapegrad", "tensorflow", "jax", "torch", "autograd")
N, OPS = 10**7, 10


def child(mode, system, calls):
    from benchmarks import config
    config.configure(1)
    import numpy as np

    from benchmarks import harness, systems
    from benchmarks.workloads.w6_overhead import chain_rows
    systems.load(system)
    eager, compiled = chain_rows("W7", "chain10 n=1e7", OPS, N)
    row = eager if mode == "eager" else compiled
    impl = next(i for i in row.impls if i.system == system)
    thunk = impl.build()
    ok, detail = harness.check(harness.to_numpy(thunk()), np.asarray(row.reference(),
                                                                      np.float64),
                               row.rtol, row.atol)
    thunk()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        thunk()
        times.append(time.perf_counter() - t0)
    src, dst = np.ones(N, np.float32), np.empty(N, np.float32)
    copy = []
    for _ in range(10):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        copy.append(time.perf_counter() - t0)
    return {"time": statistics.median(times), "copy": min(copy), "ok": ok, "check": detail}


def run(mode, system, calls):
    out = subprocess.run([sys.executable, "-m", "benchmarks.isolated", "--child", mode, system,
                          "--calls", str(calls)], capture_output=True, text=True, timeout=900)
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.isolated", description=__doc__)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--calls", type=int, default=5)
    p.add_argument("--child", nargs=2, metavar=("MODE", "SYSTEM"), help=argparse.SUPPRESS)
    opts = p.parse_args(argv)
    if opts.child:
        print(json.dumps(child(*opts.child, opts.calls)))
        return
    from benchmarks import systems
    names = [s for s in SYSTEMS if systems.available(s)]
    cells = {(m, s): [] for m in ("eager", "compiled") for s in names
             if not (m == "compiled" and s in ("torch", "autograd"))}
    errors = {}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    for _ in range(opts.rounds):
        for key in cells:
            r = run(*key, opts.calls)
            if "error" in r or not r["ok"]:
                errors[key] = r.get("error") or f"MISMATCH: {r['check']}"
            else:
                cells[key].append(r)
    lines = ["# W7 chain10 n=1e7, every system in its own process", "",
             f"`python -m benchmarks.isolated --rounds {opts.rounds} --calls {opts.calls}`: "
             f"one thread per system, median over {opts.rounds} rounds of each process's "
             f"median of {opts.calls} calls; load average at the start {load:.2f} (other "
             "processes on the machine are not stopped). Bandwidth: reading x and writing "
             "the gradient once (2 x 40 MB) per call, as a fraction of np.copyto's rate.", "",
             "| mode | system | time | tapegrad / system | bandwidth (of np.copyto) |",
             "|---|---|---|---|---|"]
    for mode in ("eager", "compiled"):
        tg = cells.get((mode, "tapegrad"))
        for s in names:
            rs = cells.get((mode, s))
            if rs is None:
                continue
            if not rs:
                lines.append(f"| {mode} | {s} | n/a ({errors.get((mode, s), '')}) | - | - |")
                continue
            t = statistics.median(r["time"] for r in rs)
            bw = statistics.median(r["copy"] / r["time"] for r in rs)
            ratio = (statistics.median(r["time"] for r in tg) / t) if tg else float("nan")
            lines.append(f"| {mode} | {s} | {t * 1e3:.1f} ms | {ratio:.2f} | {bw:.1%} |")
    fastest = {}
    for (mode, s), rs in cells.items():
        if rs and s != "tapegrad":
            t = statistics.median(r["time"] for r in rs)
            fastest[mode] = min(fastest.get(mode, (t, s)), (t, s))
    lines += ["", "| mode | target | value | status |", "|---|---|---|---|"]
    for mode, (t, s) in fastest.items():
        tg = cells.get((mode, "tapegrad"))
        if tg:
            v = statistics.median(r["time"] for r in tg) / t
            status = "PASS" if v <= 1.0 else "FAIL"
            lines.append(f"| {mode} | tapegrad / fastest peer ({s}) <= 1.0 | {v:.2f} | {status} |")
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
