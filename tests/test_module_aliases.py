"""Modules are imported under real names (issue 10.6): ``math_ops.exp``, not ``M.exp``.

Only the community's short names for NumPy and friends are allowed as aliases.
"""
import ast
import pathlib

import tapegrad

ROOT = pathlib.Path(tapegrad.__file__).parent
# np, tf and xp (the array namespace), and the usual names for dask.array, scipy.sparse,
# scipy.optimize and tapegrad.dask in their own docs
CONVENTIONAL = {"np", "_np", "tf", "xp", "da", "sp", "so", "tgd", "nn", "_dt"}


def test_no_module_is_imported_under_a_cryptic_alias():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    alias = (a.asname or "").lstrip("_")
                    if a.asname and len(alias) <= 3 and a.asname not in CONVENTIONAL \
                            and alias != a.name.split(".")[-1]:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno} as {a.asname}")
    assert not found, f"cryptic module aliases: {found}"
