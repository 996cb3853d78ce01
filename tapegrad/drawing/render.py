"""A ``Graph`` as Graphviz DOT text, and as SVG without Graphviz (a layered layout)."""
from xml.sax.saxutils import escape

COLOURS = {  # fill per node kind; derivative ops get their own colour
    "input": "#dbe9f6", "variable": "#e2f0d9", "constant": "#eeeeee", "output": "#fde9d9",
    "op": "#fff2cc", "group": "#fff2cc", "derivative": "#f4cccc"}
SHAPES = {"input": "ellipse", "variable": "ellipse", "constant": "plaintext",
          "output": "ellipse", "op": "box", "group": "box3d"}


def _fill(n):
    return COLOURS["derivative"] if n.derivative else COLOURS[n.kind]


def _dot_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(g):
    """DOT text of ``g``: user operations yellow, derivative code red, clusters boxed."""
    lines = [f"digraph {_dot_str(g.name)} {{", "  rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=10, style="filled,rounded"];',
             '  edge [color="#666666", arrowsize=0.6];']

    def node_line(n, indent="  "):
        attrs = [f"label={_dot_str(n.label)}", f"shape={SHAPES[n.kind]}",
                 f'fillcolor="{_fill(n)}"']
        if n.tooltip:
            attrs.append(f"tooltip={_dot_str(n.tooltip)}")
        return f"{indent}{_dot_str(n.id)} [{', '.join(attrs)}];"

    for n in g.nodes:
        if not n.cluster:
            lines.append(node_line(n))
    for cid, label in g.clusters:
        lines.append(f"  subgraph {_dot_str('cluster_' + cid)} {{")
        lines.append(f"    label={_dot_str(label)}; style=dashed; color=\"#999999\";")
        lines += [node_line(n, "    ") for n in g.nodes if n.cluster == cid]
        lines.append("  }")
    for a, b in g.edges:
        lines.append(f"  {_dot_str(a)} -> {_dot_str(b)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_svg(g):
    """Well-formed SVG of ``g`` by a layered layout (for machines without Graphviz): a
    node's layer is its longest path from a source; layers stack top to bottom."""
    ids = [n.id for n in g.nodes]
    preds = {i: [] for i in ids}
    for a, b in g.edges:
        if a in preds and b in preds:
            preds[b].append(a)
    layer = {}
    for i in ids:  # nodes come in a topological order (programs and tapes are)
        layer[i] = 1 + max((layer.get(p, -1) for p in preds[i]), default=-1)
    rows = {}
    for n in g.nodes:
        rows.setdefault(layer[n.id], []).append(n)
    w, h, gx, gy = 150, 38, 24, 40
    width = max(len(r) for r in rows.values()) * (w + gx) + gx if rows else 200
    height = len(rows) * (h + gy) + gy
    pos = {}
    for y, (_, row) in enumerate(sorted(rows.items())):
        x0 = (width - len(row) * (w + gx) + gx) / 2
        for j, n in enumerate(row):
            pos[n.id] = (x0 + j * (w + gx), gy / 2 + y * (h + gy))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="Helvetica" font-size="10">',
           f"<title>{escape(g.name)}</title>",
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" '
           'markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#666"/>'
           "</marker></defs>"]
    for a, b in g.edges:
        if a in pos and b in pos:
            (x1, y1), (x2, y2) = pos[a], pos[b]
            out.append(f'<line x1="{x1 + w / 2:.1f}" y1="{y1 + h:.1f}" x2="{x2 + w / 2:.1f}" '
                       f'y2="{y2:.1f}" stroke="#666" marker-end="url(#arrow)"/>')
    for n in g.nodes:
        x, y = pos[n.id]
        rx = h / 2 if SHAPES[n.kind] == "ellipse" else 4
        out.append(f'<g id="{escape(n.id)}"><title>{escape(n.tooltip or n.label)}</title>'
                   f'<rect x="{x:.1f}" y="{y:.1f}" width="{w}" height="{h}" rx="{rx}" '
                   f'fill="{_fill(n)}" stroke="#555"/>')
        for k, text in enumerate(n.label.split("\n")[:2]):
            out.append(f'<text x="{x + w / 2:.1f}" y="{y + 15 + 13 * k:.1f}" '
                       f'text-anchor="middle">{escape(text[:28])}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
