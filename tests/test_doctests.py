"""Every docstring example in the package runs and prints what it says (STYLE.md, point 10)."""
import doctest
import importlib
import pathlib
import pkgutil

import pytest

import tapegrad
from tapegrad.core.dispatch import PRIMITIVES


def _modules():
    names = ["tapegrad"]
    for info in pkgutil.walk_packages(tapegrad.__path__, prefix="tapegrad."):
        if info.name.endswith("__main__") or ".demo" in info.name:
            continue
        names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failures = []
    for test in finder.find(module, name):
        if test.examples and test.name.startswith(name):
            result = runner.run(test, out=failures.append)
            del result
    assert not failures, "".join(failures)


# Known gaps in files other engineers own; remove a name once it has its docstring.
KNOWN_UNDOCUMENTED = set()


def test_public_functions_have_docstrings():
    missing = []
    for mod in (tapegrad, tapegrad.math, tapegrad.nn, tapegrad.linalg):
        for n in dir(mod):
            f = getattr(mod, n)
            if n.startswith("_") or n in KNOWN_UNDOCUMENTED or not callable(f) \
                    or isinstance(f, type):
                continue
            if getattr(f, "__module__", "") and f.__module__.startswith("tapegrad") \
                    and not (f.__doc__ or "").strip():
                missing.append(f"{mod.__name__}.{n}")
    assert not missing, f"public functions without a docstring: {sorted(set(missing))}"


def test_architecture_walkthrough():
    """docs/ARCHITECTURE.md's walkthrough runs and prints what it says."""
    path = pathlib.Path(__file__).resolve().parents[1] / "docs" / "ARCHITECTURE.md"
    before = set(PRIMITIVES)
    try:
        failed, attempted = doctest.testfile(
            str(path), module_relative=False, report=True,
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    finally:  # the primitive the walkthrough defines must not reach the registry tests
        for name in set(PRIMITIVES) - before:
            del PRIMITIVES[name]
    assert attempted > 0 and failed == 0, f"{failed} of {attempted} examples failed"
