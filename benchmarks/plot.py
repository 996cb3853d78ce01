"""PNG chart of tapegrad/peer time ratios (log scale; left of 1.0 = tapegrad faster)."""
from benchmarks.systems import PEERS
from benchmarks.targets import ratio

MARKERS = {"tensorflow": ("o", "tab:orange"), "jax": ("s", "tab:blue"),
           "torch": ("D", "tab:red"), "autograd": ("^", "tab:green")}


def chart(rows, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 0.32 * len(rows) + 1.8))
    labels = [row.key for row in rows]
    ys = range(len(rows))[::-1]
    plotted = False
    for peer in PEERS:
        pts = [(ratio(row, peer), y) for row, y in zip(rows, ys)]
        pts = [(r, y) for r, y in pts if r is not None and r > 0]
        if pts:
            marker, color = MARKERS[peer]
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color,
                       label=f"tapegrad / {peer}", zorder=3)
            plotted = True
    for row, y in zip(rows, ys):
        tg = row.results.get("tapegrad", {})
        if tg.get("status") != "ok":
            ax.text(1.0, y, "  tapegrad n/a", va="center", fontsize=7, color="gray")
        elif tg.get("check") == "MISMATCH":
            ax.text(1.0, y, "  tapegrad result MISMATCH", va="center", fontsize=7, color="red")
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", lw=1)
    ax.axvline(0.5, color="gray", lw=0.8, ls="--")
    ax.set_yticks(list(ys))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel("time ratio tapegrad / peer (log; < 1: tapegrad faster; dashed: 0.5)")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="x", which="both", alpha=0.3)
    if plotted:
        ax.legend(fontsize=7, loc="best")
    else:
        ax.set_xlim(0.1, 10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
