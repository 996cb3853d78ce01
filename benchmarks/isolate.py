"""Each system in a process of its own, repeats interleaved: the default of ``benchmarks.run``.

A user's process holds one framework, with its own allocator settings, thread pools and
garbage. So for each workload the parent starts one persistent child per system
(``python -m benchmarks.run --only W --child SYSTEM --child-pipe R,W``), one after another:
each imports only its system, builds its rows' implementations and then waits, blocked on a
read of its command pipe. The parent then drives them row by row:

* ``prepare``: each child in turn builds, first-calls, checks, warms up and calibrates its
  implementations of the row (``harness.prepare_row``), while the others wait;
* ``round r``, for r = 0, 1, ...: repeat r of every system, the order of the systems rotating
  from round to round, before repeat r + 1 of any (``harness.time_round``: a collect and the
  ``--settle`` sleep before each timed repeat, so the previous child's pool threads are idle);
* ``finish``: medians into the records.

So every system is timed in every stretch of the run, and a slow minute of this shared VM
hits all of them alike; the ratios are medians of per-round paired ratios, as in
``--shared-process`` (``targets.ratio``). At the end each child writes its records to a JSON
file and its results to an ``.npz``; the parent fills the rows from them and checks every
result: against the row's closed-form reference in the child, or, for a row without one, here
against the first peer that ran, as in one process.
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
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class ChildDied(Exception):
    """A child process ended (or broke its pipe) before its work was done."""


def _child_args(opts, name, system, out):
    args = ["--only", name, "--child", system, "--child-out", out, "--threads", str(opts.threads),
            "--repeats", str(opts.repeats), "--target", str(opts.target),
            "--settle", str(opts.settle), "--setup-timeout", str(opts.setup_timeout), "--no-save"]
    args += ["--quick"] * opts.quick + ["--torch-compile"] * opts.torch_compile
    return args + ["--verbose"] * opts.verbose


class Server:
    """The child's side: one system's rows, and the commands the parent sends it."""

    def __init__(self, system, rows, opts):
        self.system, self.opts, self.prepared = system, opts, {}
        self.rows = {}
        for row in rows:
            row.impls = [i for i in row.impls if i.system == system]
            if row.impls:
                self.rows[row.key] = row

    def handle(self, msg):
        """Run one command (``prepare`` / ``round`` / ``finish`` of a row); returns the reply."""
        cmd, row = msg["cmd"], self.rows.get(msg.get("row"))
        if row is None:
            return {"ok": False, "error": f"no row {msg.get('row')!r} for {self.system}"}
        if cmd == "prepare":
            self.prepared[row.key] = harness.prepare_row(row, self.opts, isolated=True)
        elif cmd == "round":
            harness.time_round(self.prepared[row.key], msg["r"], self.opts)
        elif cmd == "finish":
            harness.finish_row(row, self.prepared.pop(row.key), isolated=True)
        else:
            return {"ok": False, "error": f"unknown command {cmd!r}"}
        return {"ok": True}

    def results(self, rounds_id=None):
        """(records by row key, result arrays by ``"key|index"``) of the finished rows."""
        records, values = {}, {}
        for key, row in self.rows.items():
            for k, rec in enumerate(row.alternatives):
                value = rec.pop("_value", None)
                rec["process"] = os.getpid()
                if rounds_id is not None:  # timed in the parent's interleaved rounds
                    rec["rounds"] = rounds_id
                if value is not None:
                    values[f"{key}|{k}"] = value
            if row.alternatives:
                records[key] = row.alternatives
        return records, values


def child(opts):
    """The child process: import ``opts.child``, serve the parent's commands, write the records.

    Without ``--child-pipe`` it runs every row itself, start to end (for debugging by hand)."""
    system = opts.child
    try:
        load(system)  # imported once, outside every timing
    except Unavailable:
        pass
    rows = [row for name in opts.workloads for row in WORKLOADS[name].rows(opts)]
    server = Server(system, rows, opts)
    gc.collect()
    gc.freeze()
    rounds_id = None
    if opts.child_pipe:
        rfd, wfd = (int(x) for x in opts.child_pipe.split(","))
        rounds_id = os.path.basename(os.path.dirname(opts.child_out))  # one per workload run
        with os.fdopen(rfd, "r") as commands, os.fdopen(wfd, "w") as replies:
            replies.write('{"ok": true}\n')  # ready
            replies.flush()
            for line in commands:  # blocked on this read while another system is timed
                msg = json.loads(line)
                if msg["cmd"] == "exit":
                    break
                replies.write(json.dumps(server.handle(msg)) + "\n")
                replies.flush()
    else:
        for key in list(server.rows):
            server.handle({"cmd": "prepare", "row": key})
            for r in range(opts.repeats):
                server.handle({"cmd": "round", "row": key, "r": r})
            server.handle({"cmd": "finish", "row": key})
    records, values = server.results(rounds_id)
    with open(opts.child_out + ".json", "w") as f:
        json.dump(records, f)
    np.savez(opts.child_out + ".npz", **values)


class _Child:
    """The parent's handle on one child process and its two pipes."""

    def __init__(self, name, system, out, opts):
        self.system, self.out = system, out
        cmd_r, self._cmd_w = os.pipe()
        self._rep_r, rep_w = os.pipe()
        args = _child_args(opts, name, system, out) + ["--child-pipe", f"{cmd_r},{rep_w}"]
        self.proc = subprocess.Popen([sys.executable, "-m", "benchmarks.run", *args],
                                     cwd=ROOT, pass_fds=(cmd_r, rep_w))
        os.close(cmd_r)
        os.close(rep_w)
        self._w = os.fdopen(self._cmd_w, "w")
        self._r = os.fdopen(self._rep_r, "r")
        self._reply()  # wait until it has imported its system and built its rows

    def _reply(self):
        line = self._r.readline()
        if not line:
            raise ChildDied(f"its process exited with status {self.proc.wait()}")
        return json.loads(line)

    def call(self, msg):
        try:
            self._w.write(json.dumps(msg) + "\n")
            self._w.flush()
        except (BrokenPipeError, OSError):
            raise ChildDied(f"its process exited with status {self.proc.wait()}") from None
        reply = self._reply()
        if not reply.get("ok"):
            raise ChildDied(reply.get("error", "failed"))
        return reply

    def close(self):
        """Ask it to write its records and exit; returns (records, values, failure or None)."""
        try:
            self._w.write('{"cmd": "exit"}\n')
            self._w.close()
        except (BrokenPipeError, OSError):
            pass
        self._r.close()
        code = self.proc.wait()
        if code or not os.path.exists(self.out + ".json"):
            return {}, {}, f"its process exited with status {code}"
        with open(self.out + ".json") as f, np.load(self.out + ".npz") as z:
            return json.load(f), {key: z[key] for key in z.files}, None


def schedule(rows, systems, repeats, turn=0):
    """The commands in the order the parent sends them: ``(system, message)``.

    Per row: each system prepares in turn; then for each repeat r every system times repeat r,
    the order rotating with r (and with ``turn``, the workload's index); then each finishes."""
    for row in rows:
        present = [s for s in systems if any(i.system == s for i in row.impls)]
        if not present:
            continue
        for s in present:
            yield s, {"cmd": "prepare", "row": row.key}
        for r in range(repeats):
            k = (r + turn) % len(present)
            for s in present[k:] + present[:k]:
                yield s, {"cmd": "round", "row": row.key, "r": r}
        for s in present:
            yield s, {"cmd": "finish", "row": row.key}


def drive(rows, children, repeats, turn=0):
    """Send ``schedule``'s commands to ``children`` ({system: object with ``call(msg)``}).

    A child that dies (``ChildDied``) is dropped; returns {system: why} for those."""
    failed = {}
    for system, msg in schedule(rows, list(children), repeats, turn):
        if system in failed:
            continue
        try:
            children[system].call(msg)
        except ChildDied as e:
            failed[system] = str(e)
    return failed


def run_workload(name, opts):
    """The rows of workload ``name``, each system in its own child process, rounds interleaved."""
    rows = list(WORKLOADS[name].rows(opts))
    wanted = getattr(opts, "systems", None) or SYSTEMS
    order = [s for s in SYSTEMS if s in wanted]
    turn = _turn["n"]
    _turn["n"] += 1
    k = turn % len(order)
    got, children = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for system in order[k:] + order[:k]:
                if not any(i.system == system for row in rows for i in row.impls):
                    continue
                try:
                    children[system] = _Child(name, system, os.path.join(tmp, system), opts)
                except ChildDied as e:
                    got[system] = ({}, {}, str(e))
            failed = drive(rows, children, opts.repeats, turn)
        finally:
            for system, c in children.items():
                got[system] = c.close()
        for system, why in failed.items():
            got[system] = ({}, {}, why)
    for row in rows:
        row.impls = [i for i in row.impls if i.system in order]
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
