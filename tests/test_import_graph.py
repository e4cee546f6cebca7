"""The Python layer's modules import each other without circles: every rule lives in the module
below the ones that use it (docs/architecture.md, "The single home of each rule").  Imports inside
functions count (they are circles put off until the call); ``if TYPE_CHECKING:`` ones do not."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "vehicledata"


def _type_checking_lines(tree: ast.AST) -> Set[int]:
    lines: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def graph() -> Dict[str, Set[str]]:
    """module -> the package's top-level modules it imports (``from .x import``, ``from . import x``)."""
    modules = {p.stem for p in PACKAGE.glob("*.py")} | {p.name for p in PACKAGE.iterdir() if p.is_dir()}
    out: Dict[str, Set[str]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text())
        skip = _type_checking_lines(tree)
        deps: Set[str] = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or node.level != 1 or node.lineno in skip:
                continue
            if node.module:
                deps.add(node.module.split(".")[0])
            else:
                deps.update(a.name for a in node.names if a.name in modules)
        out[path.stem] = {d for d in deps if d != path.stem and (PACKAGE / f"{d}.py").exists()}
    return out


def cycles(g: Dict[str, Set[str]]) -> List[str]:
    """The modules that reach themselves through the package's imports (any length of circle)."""
    found: List[str] = []
    for start in sorted(g):
        seen: Set[str] = set()
        todo = list(g[start])
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(g.get(m, ()))
        if start in seen:
            found.append(start)
    return found


def test_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c"]


def test_no_module_imports_itself_through_others():
    g = graph()
    assert g["_fetcher"] and "pager" not in g["_fetcher"]  # records_of is handed in by the client
    assert "client" not in g["feed"]  # _unknown lives in _values
    assert cycles(g) == []
