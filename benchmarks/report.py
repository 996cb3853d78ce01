"""Terminal table, Markdown report and JSON dump of a run."""
import json
import statistics

from benchmarks.systems import PEERS, SYSTEMS
from benchmarks.targets import floor_pct, ratio

SHORT = {"tapegrad": "tg", "tensorflow": "tf", "jax": "jax", "torch": "torch", "autograd": "ag"}


def fmt_time(seconds):
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def cell(row, system):
    rec = row.results.get(system)
    if rec is None:
        return "-"
    if rec["status"] == "skip":
        return "skip"
    if rec["status"] != "ok":
        return "n/a"
    text = fmt_time(rec["time_s"] / row.per)
    return text + " MISMATCH" if rec.get("check") == "MISMATCH" else text


def iqr(rec):
    """Interquartile range of a result's timed repeats over their median, or None."""
    times = [t for t in rec.get("times") or [] if t]
    if rec.get("status") != "ok" or len(times) < 2:
        return None
    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
    return (q3 - q1) / statistics.median(times)


def spread(row):
    """The noise of a row: each system's IQR/median of its repeats, e.g. ``tg 2% torch 11%``."""
    parts = [f"{SHORT[s]} {100 * v:.0f}%" for s in SYSTEMS
             if s in row.results and (v := iqr(row.results[s])) is not None]
    return " ".join(parts) or "-"


def fmt_ratio(value):
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 0.1 else f"{value:.2f}"


def table(rows):
    """Rows of strings: header first."""
    head = ["workload", "case", "mode", "per"] + list(SYSTEMS)
    head += [f"tg/{SHORT[p]}" for p in PEERS] + ["IQR/median"]
    lines = [head]
    for row in rows:
        line = [row.workload, row.case, row.mode, row.unit]
        line += [cell(row, s) for s in SYSTEMS]
        line += [fmt_ratio(ratio(row, p)) for p in PEERS] + [spread(row)]
        lines.append(line)
    return lines


def render_text(lines):
    widths = [max(len(str(r[i])) for r in lines) for i in range(len(lines[0]))]
    out = []
    for k, r in enumerate(lines):
        out.append("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def render_md_table(lines):
    def row(cells):
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return "\n".join([row(lines[0]), "|" + "---|" * len(lines[0])] + [row(r) for r in lines[1:]])


def notes(rows):
    """Mismatches, then every implementation not timed (same reason: rows grouped)."""
    out, grouped = [], {}
    for row in rows:
        for rec in row.alternatives:
            if rec["status"] == "ok" and rec.get("check") == "MISMATCH":
                out.append(f"RESULT MISMATCH {row.key} {rec['system']} ({rec['label']}): "
                           f"{rec['check_detail']}")
            elif rec["status"] != "ok":
                key = (rec["status"], rec["system"], rec["reason"])
                grouped.setdefault(key, []).append(f"{row.workload} {row.case} [{row.mode}]")
    for (status, system, reason), where in grouped.items():
        rows_text = "; ".join(where) if len(where) <= 3 else f"{len(where)} rows ({where[0]}, ...)"
        out.append(f"{status} {system}: {reason} - {rows_text}")
    return out


def implementations_md(rows):
    lines = [("row", "system", "implementation", "time/call", "repeats min-max", "first call",
              "check")]
    for row in rows:
        for rec in row.alternatives:
            if rec["status"] != "ok":
                continue
            best = row.results.get(rec["system"]) is rec
            times = [t for t in rec.get("times") or [] if t]
            lines.append((
                row.key, rec["system"], rec["label"] + (" (reported)" if best else ""),
                fmt_time(rec["time_s"]),
                f"{fmt_time(min(times))} - {fmt_time(max(times))} ({len(times)})" if times else "-",
                fmt_time(rec.get("first_call_s")), f"{rec['check']}: {rec['check_detail']}",
            ))
    return render_md_table(lines)


def floor_md(rows, floor):
    lines = [("row", "GFLOP/call") + tuple(f"{s} % floor" for s in SYSTEMS)]
    for row in rows:
        if not row.flops:
            continue
        pcts = []
        for s in SYSTEMS:
            p = floor_pct(row, s, floor["gflops"])
            pcts.append("-" if p is None else f"{p:.1f}%")
        lines.append((row.key, f"{row.flops / 1e9:.3f}", *pcts))
    return render_md_table(lines)


def floor_text(rows, floor):
    """Terminal lines: GFLOP/s and % of the matmul floor of each FLOP-bound row."""
    out = []
    for row in rows:
        if not row.flops:
            continue
        parts = []
        for s in SYSTEMS:
            p = floor_pct(row, s, floor["gflops"])
            if p is not None:
                gflops = p * floor["gflops"] / 100
                parts.append(f"{s} {gflops:.1f} GFLOP/s ({p:.0f}%)")
        out.append(f"  {row.key:<44} " + ", ".join(parts or ["no timings"]))
    return out


def fmt_range(rounds):
    return "-" if not rounds else f"{fmt_ratio(rounds[0])}-{fmt_ratio(rounds[1])}"


def targets_md(targets):
    lines = [("row", "target", "value", "rounds min-max", "status", "why")]
    for t in targets:
        v = t["value"]
        value = "-" if v is None else (f"{v:.1f}%" if "floor" in t["target"] else fmt_ratio(v))
        lines.append((t["row"], t["target"], value, fmt_range(t.get("rounds")), t["status"],
                      t["why"]))
    return render_md_table(lines)


def markdown(meta, rows, targets):
    m = meta["machine"]
    out = [
        "# tapegrad benchmarks",
        "",
        f"Date: {meta['date']}  ",
        f"Command: `{meta['command']}`  ",
        f"Machine: {m['cpu']}, {m['logical_cores']} logical cores ({m['cores_used']} used), "
        f"{m['memory_gib']} GiB, {m['platform']}, Python {m['python']}, "
        f"NumPy BLAS: {m['numpy_blas']}  ",
        f"Threads: {meta['threads']} per system ("
        + "; ".join(f"{k}={v}" for k, v in meta["thread_settings"].items()) + ")  ",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
        + f" (tapegrad checkout {m['tapegrad_revision']})  ",
        f"NumPy float32 matmul floor: {meta['floor']['gflops']:.1f} GFLOP/s (best of the "
        f"runs before and after the workloads, GFLOP/s by size: {meta['floor']['by_size']})  ",
        (f"Timing: each system in a process of its own, repeats interleaved across the "
         f"processes (one persistent process per system and workload; repeat r of every "
         f"system, the order rotating, before repeat r+1 of any); median of "
         f"{meta['repeats']} repeats, each >= {meta['target_s']} s of calls"
         if meta.get("interleaved") else
         f"Timing: each system in a process of its own, one workload at a time, the order "
         f"of the systems rotating; median of {meta['repeats']} repeats, each >= "
         f"{meta['target_s']} s of calls" if meta.get("isolated") else
         f"Timing: all systems in one process; median of {meta['repeats']} interleaved repeats, "
         f"each >= {meta['target_s']} s of calls")
        + "; first call and one warm-up call excluded; import-time objects are frozen out of "
        f"the cyclic GC (gc.freeze). Total run {meta['elapsed_s']:.0f} s.",
        "",
        "Times are medians per call (per op for W6); ratios are tapegrad time / peer time "
        "(< 1: tapegrad faster), " + ("the ratio of the medians" if meta.get("isolated")
                                      and not meta.get("interleaved") else
                                      "the median of per-round paired ratios")
        + "; IQR/median: the interquartile range of each system's repeats over their median "
        "(the noise); the targets' rounds min-max: the lowest and highest per-round ratio. "
        "`n/a`: not runnable (see notes); `skip`: peer not installed or no such mode.",
        "",
        render_md_table(table(rows)),
        "",
        "## Targets",
        "",
        targets_md(targets),
        "",
        "## Machine limit (FLOP-bound rows)",
        "",
        "Matmul FLOPs per call / fastest repeat, as % of the NumPy float32 matmul floor.",
        "",
        floor_md(rows, meta["floor"]),
        "",
        "## Implementations",
        "",
        implementations_md(rows),
        "",
        "## Notes",
        "",
    ]
    out += [f"- {n}" for n in notes(rows)] or ["- none"]
    return "\n".join(out) + "\n"


def to_json(meta, rows, targets):
    def clean(rec):
        return {k: v for k, v in rec.items() if not k.startswith("_")}

    data = dict(meta)
    data["rows"] = [
        {
            "key": row.key, "workload": row.workload, "case": row.case, "mode": row.mode,
            "per": row.per, "unit": row.unit, "flops": row.flops, "note": row.note.strip(),
            "ratios": {p: ratio(row, p) for p in PEERS},
            "results": {s: clean(r) for s, r in row.results.items()},
            "implementations": [clean(r) for r in row.alternatives],
        }
        for row in rows
    ]
    data["targets"] = targets
    return json.dumps(data, indent=1, default=str)
