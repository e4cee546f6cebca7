"""No shape named by its text outside the schema module (issue 39, point 3: one typed door).  How an
answer is laid out is ``vehicledata.schema.Shape`` (``ENVELOPE``, ``ARRAY``, ``OBJECT``), read from
the schema table with each endpoint and carried by its ``BoundEndpoint`` to the Fetcher; a string
``"envelope"``, ``"array"`` or ``"object"`` anywhere else in the package is a second spelling of it.
Read from the source (AST: string constants equal to a shape's name; words inside longer text and
docstrings are not names), nothing imported."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set, Tuple

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "vehicledata"
SHAPES = {"envelope", "array", "object"}

# The home of the names: the enum and the table's reading.
HOME = "schema.py"

# (file, text): why that string is not a shape.  Generated files have none (tools/gen_docs.py
# writes _resources.py without one); keep this list short.
ALLOWED: Dict[Tuple[str, str], str] = {
    ("frames.py", "object"): "pandas' dtype name of nested columns (PANDAS_DTYPES), not a shape",
}


def shape_literals(source: str) -> List[Tuple[str, int]]:
    """(text, line) of each string constant that is a shape's name."""
    return [(node.value, node.lineno) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in SHAPES]


def test_the_finder_finds_a_shape_named_by_its_text():
    src = 'x = get(t, "trim", "envelope")\ny = f(shape="array")\n"""an object, array"""\nz = "objects"\n'
    assert shape_literals(src) == [("envelope", 1), ("array", 2)]


def test_no_shape_literal_outside_the_schema_module():
    found: List[str] = []
    used: Set[Tuple[str, str]] = set()
    files = sorted(PACKAGE.rglob("*.py")) + sorted(PACKAGE.rglob("*.pyi"))
    assert len(files) > 20 and (PACKAGE / HOME) in files
    for path in files:
        name = path.relative_to(PACKAGE).as_posix()
        if name == HOME:
            continue
        for text, line in shape_literals(path.read_text(encoding="utf-8")):
            if (name, text) in ALLOWED:
                used.add((name, text))
                continue
            found.append(f"{name}:{line}: {text!r}")
    assert found == [], "a shape named by its text (use vehicledata.schema.Shape, or the endpoint's " \
                        "BoundEndpoint):\n" + "\n".join(found)
    assert used == set(ALLOWED), f"allowed literals that are gone (drop them): {sorted(set(ALLOWED) - used)}"


def test_the_schema_module_names_every_shape_of_the_table():
    from vehicledata import schema

    assert {s.value for s in schema.Shape} == SHAPES
    assert {e.shape for e in schema.endpoints().values()} == set(schema.Shape)
    assert all(isinstance(e.shape, schema.Shape) and isinstance(e.kind, schema.Kind)
               for e in schema.endpoints().values())
    assert {e.kind for e in schema.endpoints().values()} == set(schema.Kind)
