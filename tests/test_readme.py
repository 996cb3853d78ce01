"""Every ```python block of README.md runs, and the values its comments state are the results.

Each block runs in a fresh namespace holding a small prelude (``mlp``, ``xs``, ``new_xs``, the
names the repeated-Jacobian example takes from its surroundings), inside a temporary working
directory (one block writes ``jac.tgz``). A block runs one top-level statement at a time, so a
comment such as ``dy_dx = tape.gradient(y, x)  # 12`` is checked right after its statement,
before a later section of the same block rebinds the name.
"""
import ast
import re
from pathlib import Path

import numpy as np
import pytest

import tapegrad as tf

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
# `name = expression  # comment`, at any indentation
ASSIGN_WITH_COMMENT = re.compile(r"^\s*([A-Za-z_]\w*)\s*=[^=#].*?#\s*(.+?)\s*$")
NUMBER = r"-?\d+(?:\.\d+)?"


def readme_blocks():
    """(first line number in README.md, source) of every ```python block."""
    text = README.read_text(encoding="utf-8")
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in BLOCK.finditer(text)]


BLOCKS = readme_blocks()


def stated_value(comment):
    """The value a comment states, after its last `=` if any, before any `(`: a number
    (`12`, `3x² = 12`) or a nested list literal (`[[2, 0], [0, 4]]`, `3x² = [3, 12]`)."""
    text = comment.split("(")[0].split("=")[-1].strip()
    lst = re.match(r"(\[[-\d.,\s\[\]]*\])", text)
    if lst:
        return np.array(ast.literal_eval(lst.group(1)), dtype=float)
    m = re.match(rf"({NUMBER})(?![\w.])", text)
    return float(m.group(1)) if m else None


def stated_claims(source, first_line):
    """{README line: (name, value)} for each assignment whose comment states a value."""
    claims = {}
    for i, line in enumerate(source.splitlines()):
        m = ASSIGN_WITH_COMMENT.match(line)
        if m:
            value = stated_value(m.group(2))
            if value is not None:
                claims[first_line + i] = (m.group(1), value)
    return claims


def prelude():
    """The names README examples take from their surroundings: a small MLP 32 -> 16 -> 16."""
    rng = np.random.default_rng(0)
    w1 = tf.constant(rng.normal(0, 32 ** -0.5, (32, 16)).astype(np.float32))
    b1 = tf.constant(np.zeros(16, np.float32))
    w2 = tf.constant(rng.normal(0, 16 ** -0.5, (16, 16)).astype(np.float32))

    def mlp(x):
        return tf.matmul(tf.tanh(tf.matmul(x, w1) + b1), w2)

    return {
        "__name__": "readme_example",
        "mlp": mlp,
        "xs": rng.normal(size=(8, 32)).astype(np.float32),
        "new_xs": rng.normal(size=(8, 32)).astype(np.float32),
    }


def run_block(source, first_line, ns):
    """Run `source` statement by statement in `ns`; check each stated value as it is bound."""
    claims = stated_claims(source, first_line)
    tree = ast.parse(source, filename=str(README))
    ast.increment_lineno(tree, first_line - 1)  # tracebacks point at README.md lines
    checked = []
    for stmt in tree.body:
        code = compile(ast.Module(body=[stmt], type_ignores=[]), str(README), "exec")
        exec(code, ns)
        for line in range(stmt.lineno, stmt.end_lineno + 1):
            if line in claims:
                name, want = claims[line]
                got = np.asarray(ns[name])
                assert got.shape == np.shape(want), (
                    f"README.md:{line}: {name} has shape {got.shape}, the comment says "
                    f"{np.shape(want)}")
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6,
                                           err_msg=f"README.md:{line}: {name}")
                checked.append((name, line))
    return checked


@pytest.fixture
def in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_has_the_examples():
    sources = [src for _, src in BLOCKS]
    assert len(BLOCKS) >= 2
    assert any("GradientTape(persistent=True)" in s for s in sources)
    assert any("batch_jacobian" in s and "tf.saved.load" in s for s in sources)


@pytest.mark.parametrize("first_line,source", BLOCKS, ids=[f"line{n}" for n, _ in BLOCKS])
def test_readme_block_runs(first_line, source, in_tmp_dir):
    run_block(source, first_line, prelude())


def _block_with(text):
    found = [(n, s) for n, s in BLOCKS if text in s]
    assert found, f"no README python block contains {text!r}"
    return found[0]


def test_quickstart_lesson_values(in_tmp_dir):
    first_line, source = _block_with("GradientTape(persistent=True)")
    checked = run_block(source, first_line, prelude())
    names = [name for name, _ in checked]
    # default tape 12; persistent 12 and 12; nested 12 and 12; the Jacobian
    assert names.count("dy_dx") == 3, checked
    assert names.count("d2y_dx2") == 2, checked
    assert "jacobian" in names, checked
    ns = prelude()
    run_block(source, first_line, ns)
    assert float(ns["dy_dx"]) == 12.0 and float(ns["d2y_dx2"]) == 12.0
    np.testing.assert_array_equal(ns["jacobian"].numpy(), [[2.0, 0.0], [0.0, 4.0]])
    assert ns["jacobian"].shape == (2, 2)


def test_repeated_jacobian_workflow(in_tmp_dir, capsys):
    first_line, source = _block_with("batch_jacobian")
    ns = prelude()
    run_block(source, first_line, ns)
    assert (in_tmp_dir / "jac.tgz").is_file()
    J, J2 = ns["J"].numpy(), ns["J2"].numpy()
    assert J.shape == J2.shape == (8, 16, 32)  # [batch, 16, 32]
    # against an eager per-example Jacobian
    xs, new_xs, mlp = ns["xs"], ns["new_xs"], ns["mlp"]
    for b in (0, 7):
        for data, got in ((xs, J), (new_xs, J2)):
            x = tf.constant(data[b:b + 1])  # one row (tf.matmul takes no vector)
            with tf.GradientTape() as g:
                g.watch(x)
                y = mlp(x)
            np.testing.assert_allclose(got[b], g.jacobian(y, x).numpy()[0, :, 0],
                                       rtol=1e-4, atol=1e-5)
    # the source printed is NumPy code defining the function
    out = capsys.readouterr().out
    assert "def jac_batch(" in out and "np." in out
    assert "def " in ns["concrete"].source()


def test_functional_api_values(in_tmp_dir):
    first_line, source = _block_with("tf.vmap(")
    checked = run_block(source, first_line, prelude())
    assert {name for name, _ in checked} >= {"g", "J", "H", "G"}, checked
