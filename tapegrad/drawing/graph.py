"""The picture's model: nodes, edges and clusters, built from a program or a tape.

A node is a value's source (an input, a captured variable, a constant) or one primitive
application, labelled with its output shapes and dtypes (and the generated code's name of
its value where that is not made up, ``t7``: ``tanh / h: f32[5,4]``); derivative code (what a tape's
gradient, a Jacobian or forward mode emitted while tracing) is told apart from the user's
own operations. Control-flow sub-programs become clusters. Programs of more than
``max_nodes`` operations are summarised: one node per user line (and part), or, without
line information, one node per chain of single-use operations.
"""
import re
from typing import NamedTuple

import numpy as np

from tapegrad.ir.core import Program, type_str
from tapegrad.ir.names import value_names

_FRESH = re.compile(r"[a-z]\d+\Z")  # a name the tracer made up (t7), not shown


class Node(NamedTuple):
    id: str
    label: str
    kind: str            # "input", "variable", "constant", "op", "output", "group"
    derivative: bool = False
    cluster: str = ""    # the sub-program it belongs to ("" for the top level)
    tooltip: str = ""


class Graph(NamedTuple):
    name: str
    nodes: tuple
    edges: tuple         # (source id, target id)
    clusters: tuple      # (cluster id, label)


def _types(vs):
    return ", ".join(type_str(v.shape, v.dtype) for v in vs)


def from_program(program, max_nodes=300):
    """The ``Graph`` of an IR ``Program`` (see the module doc)."""
    nodes, edges, clusters = [], [], []
    origins = program.origin_of()
    _add_program(program, origins, nodes, edges, clusters, "", {})
    g = Graph(program.name, tuple(nodes), tuple(dict.fromkeys(edges)), tuple(clusters))
    if sum(n.kind == "op" for n in g.nodes) > max_nodes:
        g = summarise(g, origins_known=bool(origins))
    return g


def _add_program(program, origins, nodes, edges, clusters, cluster, made):
    pre = f"{cluster}_" if cluster else ""
    names = value_names(program)  # the generated code's names, shown for the user's values
    for v in program.inputs:
        made[v.name] = f"{pre}{v.name}"
        nodes.append(Node(made[v.name], f"{v.name}\n{type_str(v.shape, v.dtype)}", "input",
                          cluster=cluster))
    for v in program.captures:
        made[v.name] = f"{pre}{v.name}"
        nodes.append(Node(made[v.name], f"variable {v.name}\n{type_str(v.shape, v.dtype)}",
                          "variable", cluster=cluster))
    used = {v.name for e in program.equations for v in e.inputs}
    used.update(v.name for v in program.outputs)
    for c in program.constants:
        if c.var.name in used:
            made[c.var.name] = f"{pre}{c.var.name}"
            nodes.append(Node(made[c.var.name], _const_label(c), "constant", cluster=cluster))
    for k, e in enumerate(program.equations):
        nid = f"{pre}e{k}"
        o = origins.get(e.outs[0].name)
        tip = f"{o.where}  {o.source}" if o else ""
        named = [names[v.name] for v in e.outs if not _FRESH.match(names[v.name])]
        label = f"{e.prim.name}\n{', '.join(named) + ': ' if named else ''}{_types(e.outs)}"
        nodes.append(Node(nid, label, "op", bool(o and o.derivative), cluster, tip))
        for v in e.inputs:
            if v.name in made:
                edges.append((made[v.name], nid))
        for v in e.outs:
            made[v.name] = nid
        for pname, val in e.params:
            val = getattr(val, "program", val)  # control flow holds Subprograms
            if isinstance(val, Program):  # a control-flow branch or loop body
                cid = f"{nid}_{pname}"
                clusters.append((cid, f"{e.prim.name} {pname}"))
                _add_program(val, val.origin_of(), nodes, edges, clusters, cid, {})
                sub_out = [n for n in nodes if n.cluster == cid and n.kind == "op"]
                if sub_out:
                    edges.append((sub_out[-1].id, nid))
    for i, v in enumerate(program.outputs):
        oid = f"{pre}out{i}"
        nodes.append(Node(oid, f"output {i}\n{type_str(v.shape, v.dtype)}", "output",
                          cluster=cluster))
        if v.name in made:
            edges.append((made[v.name], oid))


def _const_label(c):
    a = np.asarray(c.value)
    if a.size == 1:
        return f"{a.reshape(()).item()!r}\n{type_str(c.var.shape, c.var.dtype)}"
    return f"const\n{type_str(c.var.shape, c.var.dtype)}"


def from_tape(tape, max_nodes=300):
    """The ``Graph`` of what a ``GradientTape`` recorded (its entries, in order).

    Entries recorded while a gradient, a Jacobian or forward mode was computing (an outer
    tape recording an inner tape's gradient, a persistent tape its own) are derivative code.
    """
    nodes, edges, made = [], [], {}
    derived = set()
    for start, end in tape._derived:
        derived.update(range(start, end))
    for k, (prim, args, _params, out) in enumerate(tape._entries):
        nid = f"e{k}"
        for a in args:
            key = id(a)
            if key not in made:
                made[key] = f"leaf{len(made)}"
                name = getattr(a, "name", None) or "tensor"
                kind = "variable" if hasattr(a, "assign") else "input"
                nodes.append(Node(made[key], f"{name}\n{type_str(a.shape, a.dtype)}", kind))
            edges.append((made[key], nid))
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        nodes.append(Node(nid, f"{prim.name}\n{', '.join(type_str(o.shape, o.dtype) for o in outs)}",
                          "op", k in derived,
                          tooltip="derivative code" if k in derived else ""))
        for o in outs:
            made[id(o)] = nid
    g = Graph("tape", tuple(nodes), tuple(dict.fromkeys(edges)), ())
    if sum(n.kind == "op" for n in g.nodes) > max_nodes:
        g = summarise(g, origins_known=False)
    return g


def summarise(g, origins_known):
    """Fewer nodes for a large graph: group ops by user line (when known), else collapse
    chains of ops that have one input and one consumer into one node."""
    ops = [n for n in g.nodes if n.kind == "op"]
    group = {}
    if origins_known:
        for n in ops:
            key = (n.tooltip.split("  ")[0] or "?", n.derivative, n.cluster)
            group[n.id] = key
    else:
        preds, succs = {}, {}
        for a, b in g.edges:
            preds.setdefault(b, []).append(a)
            succs.setdefault(a, []).append(b)
        is_op = {n.id for n in ops}
        head = {}
        for n in ops:  # constants feeding an op do not break its chain
            p = [q for q in preds.get(n.id, []) if q in is_op]
            if len(p) == 1 and len(succs.get(p[0], [])) == 1:
                head[n.id] = head[p[0]]
            else:
                head[n.id] = n.id
            group[n.id] = (head[n.id], n.derivative, n.cluster)
    members = {}
    for n in ops:
        members.setdefault(group[n.id], []).append(n)
    gid = {key: f"g{i}" for i, key in enumerate(members)}
    nodes = [n for n in g.nodes if n.kind != "op"]
    for key, ns in members.items():
        names = [n.label.split("\n")[0] for n in ns]
        counts = {}
        for x in names:
            counts[x] = counts.get(x, 0) + 1
        top = ", ".join(f"{k} x{v}" if v > 1 else k for k, v in
                        sorted(counts.items(), key=lambda kv: -kv[1])[:4])
        where = key[0] if origins_known else f"{len(ns)} ops"
        label = f"{where}\n{top}" + ("" if len(counts) <= 4 else ", ...")
        nodes.append(Node(gid[key], label, "group", key[1], key[2], ns[0].tooltip))
    remap = {n.id: gid[group[n.id]] for n in ops}
    edges = []
    for a, b in g.edges:
        a, b = remap.get(a, a), remap.get(b, b)
        if a != b:
            edges.append((a, b))
    return Graph(g.name, tuple(nodes), tuple(dict.fromkeys(edges)), g.clusters)
