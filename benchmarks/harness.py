"""Rows of implementations, adaptive timing, and result checks.

A ``Row`` is one workload case in one mode (eager or compiled); it holds one or more ``Impl``
per system. For each row the harness builds every implementation, calls it once (compile and
first-call cost, excluded from timing), checks the result against the row's reference, calls
it once more as warm-up, picks a loop count so one repeat lasts about ``target`` seconds
(timeit-style), checks the result of a warm call too (``prepare_row``), and then times
``repeats`` rounds (``time_round``), interleaving the systems round by round so that drift in
machine load hits all of them alike: in this process (``--shared-process``), or with each
system in a process of its own driven round by round by ``benchmarks/isolate.py``. The
reported time is the median per call. Where a system has several implementations in a row, the fastest one whose result matches is
reported for it (all are kept in the JSON).
"""
import gc
import signal
import statistics
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from benchmarks.systems import Unavailable


@dataclass
class Impl:
    system: str
    label: str
    build: object  # () -> thunk; thunk() -> result (array-like or list of them)


@dataclass
class Row:
    workload: str
    case: str
    mode: str  # "eager" | "compiled"
    impls: list
    reference: object = None  # () -> np.ndarray (float64); None: first peer's result
    rtol: float = 1e-4
    atol: float = 1e-6  # relative to max|reference|
    flops: float = None  # per call, for the machine-limit comparison
    per: float = 1.0  # report time / per (e.g. per op)
    unit: str = "call"
    note: str = ""
    results: dict = field(default_factory=dict)  # system -> best result dict
    alternatives: list = field(default_factory=list)  # every impl result dict

    @property
    def key(self):
        return f"{self.workload} {self.case} [{self.mode}]"


SLOW_CALL_S = 0.25


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def to_numpy(x):
    """Flatten a result (tensor, array, Variable, list of them) into a float64 NumPy array."""
    if isinstance(x, (list, tuple)):
        return np.concatenate([to_numpy(v).ravel() for v in x])
    if hasattr(x, "detach"):
        x = x.detach()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        try:
            x = x.numpy()
        except Exception:
            pass
    return np.asarray(x, dtype=np.float64)


def _short(e):
    text = traceback.format_exception_only(type(e), e)[-1].strip()
    return text if len(text) <= 160 else text[:157] + "..."


def _time_loops(thunk, loops):
    t0 = time.perf_counter()
    for _ in range(loops):
        thunk()
    return time.perf_counter() - t0


def calibrate(thunk, target):
    """Loop count so that one repeat takes at least ``target`` s (like timeit.autorange)."""
    loops = 1
    while True:
        t = _time_loops(thunk, loops)
        if t >= target or loops >= 1_000_000:
            return loops
        grow = target / max(t, 1e-7)
        loops = min(max(2 * loops, int(loops * grow * 1.2) + 1), 1_000_000)
        if t * grow > 4 * target:  # keep the calibration itself cheap
            loops = max(loops // 2, 1)


def check(value, ref, rtol, atol):
    """(ok, detail) comparing a result with the reference."""
    if ref is None:
        return None, "unchecked"
    if value.size != ref.size:
        return False, f"shape {value.shape} vs reference {ref.shape}"
    value = value.reshape(ref.shape)
    scale = float(np.max(np.abs(ref))) if ref.size else 1.0
    a = atol * max(scale, 1e-30)
    if not np.all(np.isfinite(value)):
        return False, "non-finite values"
    err = np.abs(value - ref)
    ok = bool(np.all(err <= a + rtol * np.abs(ref)))
    rel = float(np.max(err) / max(scale, 1e-30))
    return ok, f"max err {float(np.max(err)):.2e} (rel. to max abs ref {rel:.1e})"


def _prepare(impl, row, ref, opts):
    """Build, first call, check, warm up, calibrate. Returns (record, thunk or None)."""
    rec = {"system": impl.system, "label": impl.label, "status": "ok", "reason": ""}
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(int(opts.setup_timeout))
    try:
        t0 = time.perf_counter()
        thunk = impl.build()
        rec["build_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        value = to_numpy(thunk())
        rec["first_call_s"] = time.perf_counter() - t0
        ok, detail = check(value, ref, row.rtol, row.atol)
        rec["check"] = {None: "unchecked", True: "ok", False: "MISMATCH"}[ok]
        rec["check_detail"] = detail
        rec["_value"] = value
        t0 = time.perf_counter()
        thunk()  # warm-up
        slow = time.perf_counter() - t0 >= opts.target  # then one call per repeat
        rec["loops"] = 1 if slow else calibrate(thunk, opts.target)
        # and again once warm: what is timed may be another code path (tapegrad compiles the
        # derivative passes of a tape structure it has seen twice; JAX and TF cache too)
        ok2, detail2 = check(to_numpy(thunk()), ref, row.rtol, row.atol)
        if ok is not None and not ok2:
            rec["check"], rec["check_detail"] = "MISMATCH", "after warm-up: " + detail2
    except Unavailable as e:  # a peer missing is a skip; a tapegrad API missing is n/a
        rec.update(status="n/a" if impl.system == "tapegrad" else "skip", reason=str(e))
        return rec, None
    except _Timeout:
        rec.update(status="n/a", reason=f"setup/warm-up exceeded {opts.setup_timeout}s")
        return rec, None
    except Exception as e:
        rec.update(status="n/a", reason=_short(e))
        if opts.verbose:
            traceback.print_exc()
        return rec, None
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return rec, thunk


def run_row(row, opts, log=print, isolated=False):
    """Time every implementation of ``row``; fills ``row.results`` and ``row.alternatives``.

    ``isolated``: this process runs one system's implementations only (``benchmarks/isolate.py``);
    a row without a closed-form reference keeps each result (``_value``) for the parent to
    check against the first peer's, instead of taking its own as the reference."""
    prepared = prepare_row(row, opts, isolated)
    for r in range(opts.repeats):
        time_round(prepared, r, opts)
    return finish_row(row, prepared, log, isolated)


def prepare_row(row, opts, isolated=False):
    """Build, first-call, check, warm up and calibrate every implementation of ``row``.

    Returns ``[(record, thunk or None)]`` for ``time_round`` and ``finish_row``; each record's
    ``times`` holds one slot per repeat, indexed by round, so that rounds can be paired."""
    ref = None
    if row.reference is not None:
        try:
            ref = np.asarray(row.reference(), dtype=np.float64)
        except Exception as e:
            row.note += f" reference failed: {_short(e)};"
    prepared = []
    for impl in row.impls:
        rec, thunk = _prepare(impl, row, ref, opts)
        if ref is None and rec.get("check") == "unchecked" and impl.system != "tapegrad" \
                and not isolated:
            ref = rec["_value"]  # no closed form: the first peer that ran is the reference
            rec["check"], rec["check_detail"] = "ok", "reference (first peer)"
        prepared.append((rec, thunk))
    if ref is not None:  # re-check anything that ran before the peer reference existed
        for rec, _ in prepared:
            if rec.get("check") == "unchecked":
                ok, detail = check(rec["_value"], ref, row.rtol, row.atol)
                rec["check"] = "ok" if ok else "MISMATCH"
                rec["check_detail"] = detail
    for rec, _ in prepared:
        rec["times"] = [None] * opts.repeats
        rec["_keep_value"] = isolated and ref is None  # the parent checks it
    return prepared


def time_round(prepared, r, opts):
    """Time repeat ``r`` of every prepared implementation (each after a collect and a settle)."""
    k = r % max(len(prepared), 1)  # rotate the order: no implementation always follows another
    for rec, thunk in prepared[k:] + prepared[:k]:
        if thunk is None or rec["status"] != "ok":
            continue
        done = [t for t in rec["times"] if t is not None]
        if len(done) >= 3 and min(done) > SLOW_CALL_S:
            continue  # slow calls: three repeats are enough, and keep the run short
        gc.collect()
        time.sleep(opts.settle)  # let the previous system's spinning pool threads sleep
        try:
            t = _time_loops(thunk, rec["loops"])
        except Exception as e:  # worked during warm-up, failed later: not timed
            rec.update(status="n/a", reason=f"failed while timed: {_short(e)}")
            continue
        rec["times"][r] = t / rec["loops"]


def finish_row(row, prepared, log=print, isolated=False):
    """Medians into the records; fills ``row.results`` (best per system) and ``row.alternatives``."""
    for rec, _ in prepared:
        if not rec.pop("_keep_value", False):
            rec.pop("_value", None)
        if rec["status"] == "ok":
            rec["time_s"] = statistics.median(t for t in rec["times"] if t is not None)
        row.alternatives.append(rec)
        best = row.results.get(rec["system"])
        if best is None or _better(rec, best):
            row.results[rec["system"]] = rec
    if isolated:
        return row
    for rec in row.results.values():
        if rec.get("check") == "MISMATCH":
            log(f"  !!! MISMATCH {row.key} {rec['label']}: {rec['check_detail']}")
    return row


def _better(a, b):
    """Is result ``a`` a better representative of its system than ``b``?"""
    def rank(r):
        return (r["status"] != "ok", r.get("check") == "MISMATCH", r.get("time_s", 0.0))
    return rank(a) < rank(b)


def skipped(system, label, reason):
    """An Impl whose build reports the system as unavailable."""
    def build():
        raise Unavailable(reason)
    return Impl(system, label, build)
