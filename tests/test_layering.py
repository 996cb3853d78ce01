"""Layers import only downward (docs/ARCHITECTURE.md, "Layers").

The layer order is written once, in the ``layers`` block of docs/ARCHITECTURE.md; this test
reads it. Every import in tapegrad/ counts, at module level or inside a function (only
``if TYPE_CHECKING:`` blocks are skipped), and

- no module imports from a higher layer;
- no cycle runs through module-level imports;
- no cycle runs between sub-packages (``tapegrad.core``, ``tapegrad.ops``, ...) through any
  import;
- every module imports on its own, in a fresh interpreter, without ``tapegrad/__init__.py``
  running first (so the order of the imports there does not matter).

The ``KNOWN_*`` sets are the violations still to remove: they only shrink. An entry that no
longer occurs fails the test too, so whoever removes a violation also deletes its entry.
A new upward import is a design question, not a list entry: derivative rules call the
primitive layer, and a lower layer that needs a higher one gets a hook installed by it.
"""
import ast
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tapegrad"

# (importer, imported) pairs that point upward today
KNOWN_UPWARD = set()
# the import cycles of today, each as the set of modules (or sub-packages) on it
KNOWN_MODULE_CYCLES = set()
KNOWN_PACKAGE_CYCLES = set()
# modules that fail to import unless tapegrad/__init__.py has run first
KNOWN_IMPORT_FAILURES = set()


def read_layers():
    """The ``layers`` block of docs/ARCHITECTURE.md: a list of (layer, prefixes), lowest first."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    start = text.index("```layers\n") + len("```layers\n")
    block = text[start:text.index("```", start)]
    layers = []
    for line in block.splitlines():
        if not line.strip():
            continue
        words = line.split()
        if line[0].isspace():  # a continuation line
            layers[-1][1].extend(words)
        else:
            layers.append((words[0], words[1:]))
    return layers


LAYERS = read_layers()
_RANK = {prefix: i for i, (_, prefixes) in enumerate(LAYERS) for prefix in prefixes}


def layer_of(module):
    """Rank of ``module``'s layer: its longest prefix in the table."""
    name = module
    while name:
        if name in _RANK:
            return _RANK[name]
        name = name.rpartition(".")[0]
    raise AssertionError(f"{module} is in no layer of docs/ARCHITECTURE.md")


def _module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _target(name):
    """The tapegrad module an import of ``name`` runs: the longest existing prefix."""
    while name not in MODULES:
        name = name.rpartition(".")[0]
    return name


def _is_type_checking(node):
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(module):
    """``(imported module, top_level, line)`` for every tapegrad import in ``module``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []

    def visit(node, top):
        for child in ast.iter_child_nodes(node):
            if _is_type_checking(child):
                continue
            inner = top and not isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef))
            # a class body runs at import time: its imports are top-level
            inner = inner or (top and isinstance(child, ast.ClassDef))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "tapegrad":
                        found.append((_target(alias.name), top, child.lineno))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")[:len(package.split(".")) - child.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                if base.split(".")[0] == "tapegrad":
                    for alias in child.names:
                        full = f"{base}.{alias.name}"
                        found.append((full if full in MODULES else _target(base), top,
                                      child.lineno))
            visit(child, inner)

    visit(ast.parse(path.read_text(), str(path)), True)
    return found


EDGES = {m: imports_of(m) for m in MODULES}


def _package(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def cycles(graph):
    """The strongly connected components of ``graph`` (node -> set of nodes) with more than
    one node: each is a set of nodes that reach each other."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def strong(v):  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in list(graph):
        if v not in index:
            strong(v)
    return set(found)


def _check_cycles(found, known, what):
    worse = [sorted(c) for c in found if not any(c <= k for k in known)]
    assert not worse, f"new {what} cycles: {worse}"
    assert found == known, (f"fewer {what} cycles than listed: set its KNOWN list to "
                            f"{sorted(sorted(c) for c in found)}")


def test_layer_table_covers_every_module():
    for module in MODULES:
        layer_of(module)


def test_imports_point_downward():
    upward = {}
    for module, imports in EDGES.items():
        for target, _, line in imports:
            if layer_of(target) > layer_of(module):
                upward.setdefault((module, target), line)
    new = {k: v for k, v in upward.items() if k not in KNOWN_UPWARD}
    gone = KNOWN_UPWARD - set(upward)
    names = [name for name, _ in LAYERS]
    assert not new, "imports from a higher layer (docs/ARCHITECTURE.md, Layers):\n" + "\n".join(
        f"  {m}:{line} imports {t} ({names[layer_of(m)]} -> {names[layer_of(t)]})"
        for (m, t), line in sorted(new.items()))
    assert not gone, f"fixed, delete from KNOWN_UPWARD: {sorted(gone)}"


def test_no_cycle_through_top_level_imports():
    graph = {m: {t for t, top, _ in imports if top and t != m} for m, imports in EDGES.items()}
    # importing a submodule runs its packages' __init__ first: not an edge of the module
    for m in graph:
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    _check_cycles(cycles(graph), KNOWN_MODULE_CYCLES, "module-level import")


def test_no_cycle_between_subpackages():
    graph = {}
    for module, imports in EDGES.items():
        a = _package(module)
        for target, _, _ in imports:
            b = _package(target)
            if a and b and a != b:
                graph.setdefault(a, set()).add(b)
    _check_cycles(cycles(graph), KNOWN_PACKAGE_CYCLES, "sub-package")


# Each module is imported with an empty stand-in for the root package, so that
# tapegrad/__init__.py does not run first: the module's own imports must bring in all it
# needs. One fresh interpreter imports the third-party libraries once and forks a child per
# module, so that no tapegrad module is loaded before the one under test (a new interpreter
# per module costs ten times as much, mostly in importing NumPy and SciPy again).
_ALONE = """
import importlib, json, os, sys, types
import numpy  # noqa: F401
try:
    import scipy.special  # noqa: F401
except ImportError:
    pass

def alone(name):
    root = types.ModuleType("tapegrad")
    root.__path__ = [{path!r}]
    root.__file__ = {init!r}
    sys.modules["tapegrad"] = root
    importlib.import_module(name)

failed = {{}}
for name in {names!r}:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        status = 0
        try:
            alone(name)
        except BaseException as e:
            os.write(w, f"{{type(e).__name__}}: {{e}}".encode()[:4000])
            status = 1
        os._exit(status)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        message = f.read().decode()
    if os.waitpid(pid, 0)[1]:
        failed[name] = message or "the import crashed"
print(json.dumps(failed))
"""


# ~70 s on a quiet 2-core machine; over 300 s with every core busy (several test runs at
# once): the bound is for a hung import, not for speed
@pytest.mark.timeout(1200)
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_each_module_imports_alone_in_a_fresh_interpreter():
    public = [m for m in MODULES if m != "tapegrad" and not any(
        part.startswith("_") for part in m.split(".")) and not m.endswith("demo")]
    code = _ALONE.format(path=str(PACKAGE), init=str(PACKAGE / "__init__.py"), names=public)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    failed = json.loads(r.stdout.strip().splitlines()[-1])
    gone = KNOWN_IMPORT_FAILURES - set(failed)
    failed = {k: v for k, v in failed.items() if k not in KNOWN_IMPORT_FAILURES}
    assert not gone, f"fixed, delete from KNOWN_IMPORT_FAILURES: {sorted(gone)}"
    assert not failed, "modules that fail to import on their own:\n" + "\n".join(
        f"  {name}: {err}" for name, err in sorted(failed.items()))


def test_the_package_imports_in_a_fresh_interpreter():
    r = subprocess.run([sys.executable, "-c", "import tapegrad as tf; tf.exp(1.0)"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
