"""tf.draw: DOT text, the SVG fallback, summaries of large programs, and bad input."""
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import tapegrad as tf
import tapegrad.drawing as drawing
from tapegrad.drawing.render import COLOURS

GOLDEN = Path(__file__).parent / "data" / "generated_mlp_jacobian.txt"
NODE = re.compile(r'^\s*"([^"]+)" \[label="([^"]*)"', re.M)
EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)";', re.M)


def _parse(dot):
    nodes = {n: label.replace("\\n", "\n") for n, label in NODE.findall(dot)}
    return nodes, set(EDGE.findall(dot))


def test_dot_of_a_small_program_has_exactly_its_nodes_and_edges():
    f = tf.function(lambda x: tf.sin(x) * 3.0)
    cf = f.get_concrete_function(tf.TensorSpec([2], tf.float32))
    nodes, edges = _parse(tf.draw(cf))
    [const] = [k for k, v in nodes.items() if v.startswith("3.0")]
    assert nodes == {"x": "x\nf32[2]", const: "3.0\nf32[]", "e0": "sin\nf32[2]",
                     "e1": "mul\nf32[2]", "out0": "output 0\nf32[2]"}
    assert edges == {("x", "e0"), ("e0", "e1"), (const, "e1"), ("e1", "out0")}


def test_user_code_and_derivative_code_are_told_apart():
    @tf.function
    def grad(x):
        with tf.GradientTape() as t:
            t.watch(x)
            y = tf.reduce_sum(tf.tanh(x) * x)   # this line: user code
        return t.gradient(y, x)                # this line: derivative code

    cf = grad.get_concrete_function(tf.TensorSpec([3], tf.float32))
    g = drawing.graph(cf)
    ops = [n for n in g.nodes if n.kind == "op"]
    user = {n.tooltip.split("  ")[0] for n in ops if not n.derivative}
    deriv = {n.tooltip.split("  ")[0] for n in ops if n.derivative}
    assert user and deriv and not user & deriv
    assert any("reduce_sum(tf.tanh(x) * x)" in n.tooltip for n in ops if not n.derivative)
    assert all("t.gradient(y, x)" in n.tooltip for n in ops if n.derivative)
    dot = tf.draw(cf)
    assert COLOURS["derivative"] in dot and COLOURS["op"] in dot


def test_control_flow_sub_programs_are_clusters():
    @tf.function
    def f(x):
        return tf.while_loop(lambda i, y: tf.reduce_sum(y) < 10.0,
                             lambda i, y: (i + 1, tf.sin(y) + 2.0), (tf.constant(0), x))[1]

    dot = tf.draw(f.get_concrete_function(tf.TensorSpec([2], tf.float32)))
    assert "subgraph \"cluster_" in dot and "sin" in dot


def test_tape_drawing_shows_its_records():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x * x
    nodes, edges = _parse(tf.draw(tape))
    assert sorted(v.split("\n")[0] for k, v in nodes.items() if k.startswith("e")) == \
        ["mul", "mul", "read_variable"]  # one read of the unchanged variable: three uses
    assert edges == {("leaf0", "e0"), ("e0", "e1"), ("e0", "e2"), ("e1", "e2")}
    tape.gradient(y, x)
    assert "mul" in tf.draw(tape)  # persistent: still drawable


def test_svg_fallback_is_well_formed_and_names_every_node(monkeypatch, tmp_path):
    monkeypatch.setattr(drawing, "has_dot", lambda: False)
    f = tf.function(lambda x: tf.exp(x) + tf.sin(x) * x)
    cf = f.get_concrete_function(tf.TensorSpec([4], tf.float64))
    path = tmp_path / "f.svg"
    tf.draw(cf, path)
    root = ET.parse(path).getroot()
    ids = {g.get("id") for g in root.iter("{http://www.w3.org/2000/svg}g")}
    assert ids == {n.id for n in drawing.graph(cf).nodes}
    assert ET.fromstring(cf._repr_svg_()).tag.endswith("svg")
    with pytest.raises(RuntimeError, match="apt install graphviz"):
        tf.draw(cf, tmp_path / "f.png")


@pytest.mark.skipif(not drawing.has_dot(), reason="Graphviz's dot is not installed")
def test_graphviz_writes_png_pdf_and_svg(tmp_path):
    cf = tf.function(lambda x: tf.tanh(x)).get_concrete_function(tf.TensorSpec([2]))
    for fmt, magic in (("png", b"\x89PNG"), ("pdf", b"%PDF"), ("svg", b"<?xml")):
        tf.draw(cf, tmp_path / f"f.{fmt}")
        assert (tmp_path / f"f.{fmt}").read_bytes().startswith(magic)


def test_large_programs_are_summarised_by_user_line():
    @tf.function
    def chain(x):
        for _ in range(700):
            x = tf.sin(x) * 1.0001   # one line, 1,400 equations
        return tf.reduce_sum(x)

    cf = chain.get_concrete_function(tf.TensorSpec([3], tf.float32))
    g = drawing.graph(cf, max_nodes=100)
    groups = [n for n in g.nodes if n.kind == "group"]
    assert 1 <= len(groups) <= 3 and not [n for n in g.nodes if n.kind == "op"]
    assert any("sin x700" in n.label for n in groups)
    plain = drawing.summarise(drawing.graph(cf, max_nodes=10 ** 6), origins_known=False)
    assert len([n for n in plain.nodes if n.kind == "group"]) < 10


def test_loaded_programs_draw_too(tmp_path):
    cf = tf.function(lambda x: x * x).get_concrete_function(tf.TensorSpec([2]))
    tf.saved.save(cf, tmp_path / "f.tgz")
    loaded = tf.saved.load(tmp_path / "f.tgz")
    assert "mul" in tf.draw(loaded)
    assert hasattr(loaded, "_repr_svg_") and hasattr(tf.GradientTape(), "_repr_svg_")


def test_bad_input():
    with pytest.raises(TypeError, match="expected a GradientTape, a ConcreteFunction"):
        tf.draw(42)
    cf = tf.function(lambda x: x + 1.0).get_concrete_function(tf.TensorSpec([1]))
    with pytest.raises(ValueError, match="supported formats: dot, svg, png, pdf"):
        tf.draw(cf, "picture.jpg")
    with pytest.raises(ValueError, match="supported formats"):
        tf.draw(cf, format="gif")


def _golden_program():
    rng = np.random.default_rng(0)
    w1 = tf.constant(rng.standard_normal((3, 4)).astype(np.float32))
    w2 = tf.constant(rng.standard_normal((4, 2)).astype(np.float32))

    @tf.function
    def jac(x):
        with tf.GradientTape() as g:
            g.watch(x)
            h = tf.tanh(x @ w1)
            y = h @ w2
        return g.batch_jacobian(y, x)
    return jac.get_concrete_function(tf.TensorSpec([5, 3], tf.float32))


def test_generated_code_matches_the_checked_in_file():
    """The generated source is stable: the same program gives the same text. Regenerate on
    purpose with TAPEGRAD_UPDATE_GOLDEN=1."""
    src = _golden_program().source()
    assert src == _golden_program().source()
    compile(src, "<golden>", "exec")  # valid Python
    if os.environ.get("TAPEGRAD_UPDATE_GOLDEN"):
        GOLDEN.write_text(src)
    assert src == GOLDEN.read_text(), "generated code changed: check it, then regenerate"
