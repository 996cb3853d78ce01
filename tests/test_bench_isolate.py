"""The benchmark harness's interleaved isolated mode (benchmarks/isolate.py), its paired ratios
and its noise report. The peers are never imported: the rows here are synthetic (NumPy thunks
under system names), and the one end-to-end run times tapegrad alone."""
import os
import sys
import types

import numpy as np
import pytest

from benchmarks import isolate, report, run, targets
from benchmarks.harness import Impl, Row


def _opts(repeats=3):
    return types.SimpleNamespace(repeats=repeats, target=1e-4, settle=0.0, setup_timeout=30,
                                 verbose=False)


def _thunk(value):
    return lambda: (lambda: np.asarray(value, dtype=np.float64))


def _rows(reference=True):
    ref = (lambda: np.arange(3.0)) if reference else None
    return [
        Row("W0", "both", "eager", [Impl("tapegrad", "tg", _thunk(np.arange(3.0))),
                                    Impl("torch", "pt", _thunk(np.arange(3.0)))], reference=ref),
        Row("W0", "torch only", "eager", [Impl("torch", "pt", _thunk([1.0]))],
            reference=(lambda: np.ones(1)) if reference else None),
        Row("W0", "tg wrong", "eager", [Impl("torch", "pt", _thunk(np.arange(3.0))),
                                        Impl("tapegrad", "tg", _thunk([0.0, 1.0, 5.0]))],
            reference=ref),
    ]


class _Local:
    """A child served in this process: what the pipe would carry, without the process."""

    def __init__(self, system, opts, reference=True, die_at=None):
        self.server = isolate.Server(system, _rows(reference), opts)
        self.log, self.die_at = [], die_at

    def call(self, msg):
        if len(self.log) == self.die_at:
            raise isolate.ChildDied("its process exited with status 1")
        self.log.append(msg)
        reply = self.server.handle(msg)
        assert reply == {"ok": True}
        return reply


def test_schedule_times_repeat_r_of_every_system_before_repeat_r_plus_1():
    rows = _rows()
    systems = ["torch", "tapegrad", "jax"]  # jax has no implementation here: never called
    sent = list(isolate.schedule(rows, systems, repeats=4, turn=1))
    assert all(s != "jax" for s, _ in sent)
    for row in rows:
        mine = [(s, m) for s, m in sent if m["row"] == row.key]
        present = {i.system for i in row.impls}
        cmds = [m["cmd"] for _, m in mine]
        n = len(present)
        assert cmds == ["prepare"] * n + ["round"] * 4 * n + ["finish"] * n
        rounds = [(m["r"], s) for s, m in mine if m["cmd"] == "round"]
        assert [r for r, _ in rounds] == sorted(r for r, _ in rounds)  # r before r + 1
        for r in range(4):
            assert {s for rr, s in rounds if rr == r} == present
        if n == 2:  # the order rotates from round to round
            firsts = [s for (r, s), k in zip(rounds, range(len(rounds))) if k % 2 == 0]
            assert firsts[0] != firsts[1] and firsts[0] == firsts[2]


def _run_local(reference=True, die=None):
    opts = _opts()
    children = {s: _Local(s, opts, reference, die_at=(3 if s == die else None))
                for s in ("torch", "tapegrad")}
    failed = isolate.drive(_rows(reference), children, opts.repeats)
    got = {s: c.server.results("run-1") + (None,) for s, c in children.items()}
    got.update({s: ({}, {}, why) for s, why in failed.items()})
    rows = _rows(reference)
    for row in rows:
        isolate._fill(row, got)
    return rows, children, failed


@pytest.mark.parametrize("reference", [True, False])
def test_interleaved_rows_are_timed_checked_and_paired(reference):
    rows, children, failed = _run_local(reference)
    assert not failed
    both, torch_only, wrong = rows
    for row in rows:
        for rec in row.results.values():
            assert rec["status"] == "ok" and rec["rounds"] == "run-1"
            assert len(rec["times"]) == 3 and all(t > 0 for t in rec["times"])
            assert rec["time_s"] == sorted(rec["times"])[1]
    assert both.results["tapegrad"]["check"] == "ok"
    assert wrong.results["tapegrad"]["check"] == "MISMATCH"  # parent or child, same verdict
    assert wrong.results["torch"]["check"] == "ok"
    assert set(torch_only.results) == {"torch"}
    # shared rounds: the ratio is the median of the per-round ratios, not of the medians
    rounds = targets.paired(both, "torch")
    tg, pt = both.results["tapegrad"]["times"], both.results["torch"]["times"]
    assert rounds == [a / b for a, b in zip(tg, pt)]
    assert targets.ratio(both, "torch") == sorted(rounds)[1]
    assert targets.rounds_range(both, ("torch",)) == (min(rounds), max(rounds))


def test_unpaired_results_fall_back_to_the_ratio_of_medians():
    rows, _, _ = _run_local()
    both = rows[0]
    both.results["torch"]["rounds"] = "another run"
    both.results["torch"]["process"] = -1
    assert targets.paired(both, "torch") is None
    assert targets.ratio(both, "torch") == (both.results["tapegrad"]["time_s"]
                                            / both.results["torch"]["time_s"])
    assert targets.rounds_range(both, ("torch",)) is None


def test_a_child_that_dies_leaves_its_rows_not_applicable():
    rows, children, failed = _run_local(die="torch")
    assert failed == {"torch": "its process exited with status 1"}
    both = rows[0]
    assert both.results["torch"]["status"] == "n/a"
    assert "exited" in both.results["torch"]["reason"]
    assert both.results["tapegrad"]["status"] == "ok"
    assert targets.ratio(both, "torch") is None


def test_unknown_rows_and_commands_are_refused():
    server = isolate.Server("tapegrad", _rows(), _opts())
    assert not server.handle({"cmd": "prepare", "row": "W0 torch only [eager]"})["ok"]
    assert not server.handle({"cmd": "jump", "row": "W0 both [eager]"})["ok"]


def test_spread_is_the_interquartile_range_over_the_median():
    row = Row("W0", "c", "eager", [])
    row.results["tapegrad"] = {"status": "ok", "times": [1.0, 2.0, 3.0, 4.0, 5.0, None]}
    row.results["torch"] = {"status": "ok", "times": [2.0, 2.0, 2.0]}
    row.results["jax"] = {"status": "n/a"}
    assert report.iqr(row.results["tapegrad"]) == pytest.approx((4.0 - 2.0) / 3.0)
    assert report.spread(row) == "tg 67% torch 0%"
    assert report.fmt_range((0.123, 0.456)) == "0.12-0.46"
    assert report.fmt_range(None) == "-"


def test_end_to_end_one_child_process_per_system(monkeypatch):
    """A real child process (tapegrad only), driven over its pipes."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    monkeypatch.setenv("PYTHONPATH", root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    opts = run.parse(["--quick", "--only", "W1", "--systems", "tapegrad", "--repeats", "2",
                      "--target", "0.001", "--settle", "0"])
    assert sys.executable
    rows = isolate.run_workload("W1", opts)
    assert rows
    for row in rows:
        assert set(row.results) == {"tapegrad"}
        rec = row.results["tapegrad"]
        assert rec["status"] == "ok" and rec["check"] == "ok", rec
        assert len(rec["times"]) == 2 and all(rec["times"]) and rec["rounds"]
