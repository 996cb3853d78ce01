"""Each system in a process of its own: the default of ``python -m benchmarks.run``.

A user's process holds one framework, with its own allocator settings, thread pools and
garbage. So for each workload the parent starts one child per system, in an order that
rotates from workload to workload: ``python -m benchmarks.run --only W --child SYSTEM``
imports that one system, builds and times its implementations of every row exactly as the
shared-process mode does (first call, warm-up, calibration, median of the repeats), and
writes its records to a JSON file and its results to an ``.npz``. The parent fills the rows
from them and checks every result: against the row's closed-form reference in the child, or,
for a row without one, here against the first peer that ran, as in one process.

Ratios of systems timed in different processes are ratios of their medians (there are no
shared rounds to pair); ``--shared-process`` keeps the old paired, interleaved mode.
"""
import gc
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from benchmarks import harness
from benchmarks.systems import SYSTEMS, Unavailable, load
from benchmarks.workloads import WORKLOADS

_turn = {"n": 0}


def _child_args(opts, name, system, out):
    args = ["--only", name, "--child", system, "--child-out", out, "--threads", str(opts.threads),
            "--repeats", str(opts.repeats), "--target", str(opts.target),
            "--settle", str(opts.settle), "--setup-timeout", str(opts.setup_timeout), "--no-save"]
    args += ["--quick"] * opts.quick + ["--torch-compile"] * opts.torch_compile
    return args + ["--verbose"] * opts.verbose


def child(opts):
    """Time ``opts.child``'s implementations of the chosen workloads; write the records."""
    system = opts.child
    try:
        load(system)  # imported once, outside every timing
    except Unavailable:
        pass
    gc.collect()
    gc.freeze()
    records, values = {}, {}
    for name in opts.workloads:
        for row in WORKLOADS[name].rows(opts):
            row.impls = [i for i in row.impls if i.system == system]
            if not row.impls:
                continue
            harness.run_row(row, opts, isolated=True)
            for k, rec in enumerate(row.alternatives):
                value = rec.pop("_value", None)
                rec["process"] = os.getpid()
                if value is not None:
                    values[f"{row.key}|{k}"] = value
            records[row.key] = row.alternatives
    with open(opts.child_out + ".json", "w") as f:
        json.dump(records, f)
    np.savez(opts.child_out + ".npz", **values)


def run_workload(name, opts):
    """The rows of workload ``name``, each system timed in its own child process."""
    rows = list(WORKLOADS[name].rows(opts))
    order = list(SYSTEMS)
    k = _turn["n"] % len(order)
    _turn["n"] += 1
    got = {}
    with tempfile.TemporaryDirectory() as tmp:
        for system in order[k:] + order[:k]:
            if not any(i.system == system for row in rows for i in row.impls):
                continue
            out = os.path.join(tmp, system)
            r = subprocess.run([sys.executable, "-m", "benchmarks.run",
                                *_child_args(opts, name, system, out)],
                               cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            if r.returncode or not os.path.exists(out + ".json"):
                got[system] = ({}, {}, f"its process exited with status {r.returncode}")
                continue
            with open(out + ".json") as f, np.load(out + ".npz") as z:
                got[system] = (json.load(f), {key: z[key] for key in z.files}, None)
    for row in rows:
        _fill(row, got)
    return rows


def _fill(row, got):
    """``row.alternatives`` and ``row.results`` from the children's records, in impl order."""
    recs = []
    for system in dict.fromkeys(i.system for i in row.impls):
        records, values, failed = got.get(system, ({}, {}, "not run"))
        if failed:
            recs += [{"system": i.system, "label": i.label, "status": "n/a", "reason": failed}
                     for i in row.impls if i.system == system]
            continue
        for k, rec in enumerate(records.get(row.key, [])):
            rec["_value"] = values.get(f"{row.key}|{k}")
            recs.append(rec)
    if row.reference is None:  # the first peer that ran is the reference, as in one process
        ref = next((r["_value"] for r in recs if r["system"] != "tapegrad"
                    and r.get("_value") is not None), None)
        for r in recs:
            if r.get("_value") is None:
                continue
            if r["_value"] is ref:
                r["check"], r["check_detail"] = "ok", "reference (first peer)"
            elif ref is not None:
                ok, detail = harness.check(r["_value"], ref, row.rtol, row.atol)
                r["check"], r["check_detail"] = ("ok" if ok else "MISMATCH"), detail
    for r in recs:
        r.pop("_value", None)
        row.alternatives.append(r)
        best = row.results.get(r["system"])
        if best is None or harness._better(r, best):
            row.results[r["system"]] = r
    for r in row.results.values():
        if r.get("check") == "MISMATCH":
            print(f"  !!! MISMATCH {row.key} {r['label']}: {r['check_detail']}")
