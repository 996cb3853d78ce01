"""Copy the latest benchmark table, targets and chart into the README.

``python -m benchmarks.readme`` (run by ``make bench``) replaces the part of README.md between
``<!-- BENCH:START -->`` and ``<!-- BENCH:END -->`` with the date, machine, main table and
targets of ``benchmarks/results/latest.md``, a link to ``latest.png``, the compiled-call
overhead (``overhead.md``), the W11 busy-machine run (``busy.md``) and W7's large row with
one process per system (``isolated.md``).
"""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
LATEST = ROOT / "benchmarks" / "results" / "latest.md"
README = ROOT / "README.md"


def _section(md, title):
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", md, re.S | re.M)
    return m.group(1).strip() if m else ""


def build(md):
    lines = md.splitlines()
    facts = [ln for ln in lines if ln.startswith(("Date:", "Machine:", "Threads:", "Versions:"))]
    table = []
    for ln in lines:
        if ln.startswith("| workload"):
            table = [ln]
        elif table and ln.startswith("|"):
            table.append(ln)
        elif table:
            break
    targets = _section(md, "Targets")
    isolated = "each system in a process of its own" in md
    how = ("each system in a process of its own, repeats interleaved across the processes, "
           "one thread each; ratios are medians of per-round ratios"
           if "repeats interleaved" in md else
           "each system in a process of its own, one thread each; ratios are ratios of "
           "medians" if isolated else
           "all systems in one process, medians of interleaved repeats, one thread each")
    parts = [f"Measured with `make bench` ({how}: tapegrad time / peer time, < 1 means "
             "tapegrad is faster). Full report: `benchmarks/results/latest.md`; where the "
             "time goes: `benchmarks/results/profile.md`.", ""]
    parts += [f.rstrip() + "  " for f in facts] + [""] + table + [""]
    parts += ["![tapegrad / peer time ratios](benchmarks/results/latest.png)", ""]
    parts += ["### Targets", "", targets]
    overhead = LATEST.parent / "overhead.md"
    if overhead.exists():  # compiled-call overhead against hand-written NumPy
        lines = overhead.read_text().splitlines()
        parts += ["", "### Compiled-call overhead (`python -m benchmarks.overhead`)", ""]
        parts += [ln for ln in lines if ln.startswith("|")]
    for name, title in (
            ("busy.md", "W11: default threads on a busy machine (`python -m benchmarks.busy`)"),
            ("isolated.md", "W7 chain10 n=1e7, one process per system "
                            "(`python -m benchmarks.isolated`)")):
        path = LATEST.parent / name
        if path.exists():  # reports of their own: text and tables below a heading
            parts += ["", f"### {title}", ""]
            for ln in path.read_text().splitlines()[1:]:
                if ln and not ln.startswith("#"):
                    parts.append(ln)
                elif parts[-1]:
                    parts.append("")
    return "\n".join(parts)


def main():
    md = LATEST.read_text()
    readme = README.read_text()
    start, end = "<!-- BENCH:START -->", "<!-- BENCH:END -->"
    i, j = readme.index(start) + len(start), readme.index(end)
    README.write_text(readme[:i] + "\n" + build(md) + "\n" + readme[j:])
    print(f"updated {README}")


if __name__ == "__main__":
    main()
