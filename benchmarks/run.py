"""Run the benchmark suite: ``python -m benchmarks.run [--quick] [--only W1,W3] [--threads N]``.

Writes benchmarks/results/latest.{md,json,png} (and a timestamped copy of the JSON under
benchmarks/results/raw/), and prints the table and the targets.
"""
import argparse
import datetime
import gc
import os
import sys
import time

from benchmarks import config
from benchmarks.systems import SYSTEMS  # imports no numerical library (config first)

ALL = ("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W8B", "W9", "W9P", "W10")


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    p.add_argument("--quick", action="store_true", help="smoke run (~1-2 min): short repeats")
    p.add_argument("--only", default="", help="comma-separated workloads, e.g. W1,W3")
    p.add_argument("--threads", type=int, default=1,
                   help="compute threads per system (default 1, see benchmarks/README.md)")
    p.add_argument("--repeats", type=int,
                   help="timed repeats per implementation (default 15; 3 with --quick)")
    p.add_argument("--target", type=float, help="seconds per timed repeat")
    p.add_argument("--settle", type=float,
                   help="idle seconds before each timed repeat (default 0.02; 0.2 if threads > 1)")
    p.add_argument("--setup-timeout", type=float, default=120.0,
                   help="seconds allowed for build + first call + calibration")
    p.add_argument("--torch-compile", action="store_true", help="also run torch.compile in W5")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    p.add_argument("--no-save", action="store_true", help="print only, write no files")
    p.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    p.add_argument("--systems", default="",
                   help="comma-separated subset of " + ",".join(SYSTEMS) + " (default: all)")
    p.add_argument("--shared-process", action="store_true",
                   help="time every system in this one process, rounds interleaved (the default "
                        "runs each system in a process of its own, rounds interleaved across "
                        "the processes)")
    p.add_argument("--child", help=argparse.SUPPRESS)       # isolated mode: the one system
    p.add_argument("--child-out", help=argparse.SUPPRESS)   # ... and where its results go
    p.add_argument("--child-pipe", help=argparse.SUPPRESS)  # ... and its command/reply fds
    opts = p.parse_args(argv)
    opts.repeats = opts.repeats or (3 if opts.quick else 15)
    opts.target = opts.target or (0.02 if opts.quick else 0.05)
    if opts.settle is None:
        opts.settle = 0.2 if opts.threads > 1 else 0.02
    chosen = [w.strip().upper() for w in opts.only.split(",") if w.strip()] or list(ALL)
    unknown = [w for w in chosen if w not in ALL]
    if unknown:
        p.error(f"unknown workload(s) {unknown}; choose from {','.join(ALL)}")
    opts.workloads = chosen
    opts.systems = tuple(s.strip().lower() for s in opts.systems.split(",") if s.strip()) \
        or SYSTEMS
    unknown = [s for s in opts.systems if s not in SYSTEMS]
    if unknown:
        p.error(f"unknown system(s) {unknown}; choose from {','.join(SYSTEMS)}")
    return opts


def main(argv=None):
    opts = parse(sys.argv[1:] if argv is None else argv)
    thread_settings = config.configure(opts.threads)  # before any numerical library loads
    started = time.time()
    if opts.child:
        from benchmarks import isolate
        return isolate.child(opts)

    from benchmarks import harness, machine, report, systems, targets
    from benchmarks.workloads import WORKLOADS

    versions = systems.versions()  # imports every system once (import cost kept out of rows)
    # (--shared-process) Four frameworks share this process; a real user's has one. Their modules' objects are
    # moved out of the cyclic collector's reach, so that a collection triggered by one
    # system's allocations does not scan every other system's heap inside its timing.
    gc.collect()
    gc.freeze()
    print("versions:", ", ".join(f"{k} {v}" for k, v in versions.items()), flush=True)
    floor, by_size = machine.matmul_rate(opts.quick)
    print(f"NumPy float32 matmul floor: {floor:.1f} GFLOP/s {by_size}", flush=True)

    rows = []
    for name in opts.workloads:
        if opts.shared_process:
            built = []
            for row in WORKLOADS[name].rows(opts):
                row.impls = [i for i in row.impls if i.system in opts.systems]
                harness.run_row(row, opts)
                built.append(row)
        else:
            from benchmarks import isolate
            built = isolate.run_workload(name, opts)
        for row in built:
            rows.append(row)
            cells = "  ".join(f"{s}={report.cell(row, s)}" for s in systems.SYSTEMS)
            print(f"{row.key:<44} {cells}", flush=True)

    # The floor is a peak rate and noise only lowers a measurement: take the best of two,
    # one before and one after the workloads.
    floor_end, by_size_end = machine.matmul_rate(opts.quick)
    print(f"NumPy float32 matmul floor (after): {floor_end:.1f} GFLOP/s {by_size_end}")
    by_size = {"before": by_size, "after": by_size_end}
    floor = max(floor, floor_end)
    results = targets.evaluate(rows, floor)
    meta = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "command": " ".join(["python -m benchmarks.run"] + (sys.argv[1:] if argv is None else argv)),
        "quick": opts.quick,
        "workloads": opts.workloads,
        "machine": machine.describe(),
        "threads": opts.threads,
        "isolated": not opts.shared_process,
        "interleaved": not opts.shared_process,  # repeats interleaved across the processes
        "systems": list(opts.systems),
        "thread_settings": thread_settings,
        "versions": versions,
        "floor": {"gflops": floor, "by_size": by_size},
        "repeats": opts.repeats,
        "target_s": opts.target,
        "elapsed_s": time.time() - started,
    }
    summary(meta, rows, results, report)
    if not opts.no_save:
        save(opts, meta, rows, results, report)
    print(f"\ntotal {time.time() - started:.0f}s")


def summary(meta, rows, results, report):
    """The terminal report: table, machine limit, targets, notes."""
    print()
    print(report.render_text(report.table(rows)))
    print(f"\nmachine limit (NumPy float32 matmul floor {meta['floor']['gflops']:.1f} GFLOP/s):")
    for line in report.floor_text(rows, meta["floor"]):
        print(line)
    print("\ntargets:")
    for t in results:
        v = t["value"]
        floor_target = "floor" in t["target"]
        value = f"{v:.1f}%" if floor_target and v is not None else report.fmt_ratio(v)
        why = f"  ({t['why'][:70]})" if t["why"] else ""
        spread = report.fmt_range(t.get("rounds"))
        print(f"  {t['status']:<4} {t['row']:<44} {t['target']:<26} {value:>7} "
              f"[{spread:>11}]{why}")
    for n in report.notes(rows):
        print("  note:", n)


def save(opts, meta, rows, results, report):
    from benchmarks import plot

    os.makedirs(os.path.join(opts.out, "raw"), exist_ok=True)
    text = report.to_json(meta, rows, results)
    stamp = meta["date"].replace(":", "").replace("-", "")[:15]
    for path in (os.path.join(opts.out, "latest.json"),
                 os.path.join(opts.out, "raw", f"{stamp}.json")):
        with open(path, "w") as f:
            f.write(text)
    with open(os.path.join(opts.out, "latest.md"), "w") as f:
        f.write(report.markdown(meta, rows, results))
    title = f"tapegrad / peer time ratio - {meta['date']} - {meta['machine']['cpu']}"
    try:
        plot.chart(rows, os.path.join(opts.out, "latest.png"), title)
    except Exception as e:  # matplotlib missing: the tables are still written
        print(f"chart not written: {e}")
    print(f"wrote {opts.out}/latest.md, latest.json, latest.png")


if __name__ == "__main__":
    main()
