"""The endpoint table: declared once in cpp/core/schema.cpp, read by the emulator, the client and the CLI.

Adding an endpoint is one edit in schema.cpp: no other file names a path.  The emulator's
route table (tests/emulator/test_emu_routes.py), the client's accessors and the CLI's
resources (tests/client/test_client_endpoints.py) are checked against the table.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from vehicledata import _targets, client, client_cli, pager, schema

ROOT = Path(__file__).resolve().parent.parent
API_PATH = re.compile(r"""["']/api/""")


def _docstring_nodes(tree: ast.AST) -> set:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _python_path_literals(path: Path) -> Iterator[Tuple[int, str]]:
    """String constants (f-string parts too) that contain an /api/ path, docstrings excepted."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstring_nodes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if "/api/" in node.value:
                yield node.lineno, node.value


def _cpp_path_literals(path: Path) -> Iterator[Tuple[int, str]]:
    """Lines whose code (comments stripped) quotes a path starting /api/."""
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        code = line.split("//", 1)[0]
        if API_PATH.search(code):
            yield n, line.strip()


def test_no_path_literal_outside_the_schema_table():
    found: List[str] = []
    for path in sorted((ROOT / "python").rglob("*.py")):
        found += [f"{path.relative_to(ROOT)}:{n}: {text!r}" for n, text in _python_path_literals(path)]
    for path in sorted((ROOT / "cpp" / "emulator").rglob("*")):
        if path.suffix in (".cpp", ".h"):
            found += [f"{path.relative_to(ROOT)}:{n}: {text}" for n, text in _cpp_path_literals(path)]
    assert found == []
    # The scan does see paths where they are: the schema table.
    assert len(list(_cpp_path_literals(ROOT / "cpp" / "core" / "schema.cpp"))) >= 25


def test_the_scan_finds_a_literal_in_code_but_not_in_a_docstring(tmp_path: Path):
    f = tmp_path / "m.py"
    f.write_text('"""See "/api/trims/v2"."""\nP = "/api/trims/v2"\nQ = f"{P}/api/x"\n'
                 'def g():\n    """Docs of "/api/makes"."""\n    return \'/api/makes\'\n', encoding="utf-8")
    assert [n for n, _ in _python_path_literals(f)] == [2, 3, 6]
    c = tmp_path / "m.cpp"
    c.write_text('// GET "/api/trims"\nauto p = "/api/trims";\nint x;  // "/api/x"\n', encoding="utf-8")
    assert [n for n, _ in _cpp_path_literals(c)] == [2]


def test_every_endpoint_has_a_resource_and_a_kind():
    kinds = {"search", "detail", "years", "attributes", "vin", "plate", "account_requests", "account_today",
             "feed_last_updated", "feed_download", "login"}
    eps = list(schema.endpoints().values())
    assert {e.kind for e in eps} == kinds
    for e in eps:
        assert re.fullmatch(r"[a-z_]+", e.resource), e.path
        assert e.method == ("POST" if e.kind == "login" else "GET"), e.path
        assert e.parameter == (re.search(r"\{(\w+)\}", e.path) or [None, ""])[1], e.path
    # One current endpoint per (kind, resource).
    current = [(e.kind, e.resource) for e in eps if not e.deprecated]
    assert len(current) == len(set(current))
    assert schema.endpoint_for("login").path == "/api/auth/login"
    assert [e.path for e in eps if e.text_errors] == ["/api/data-feeds/download", "/api/auth/login"]
    with pytest.raises(KeyError, match="no deprecated search endpoint of submodels"):
        schema.endpoint_for("search", "submodels", deprecated=True)


def test_v2_and_legacy_pairs_point_at_each_other():
    eps = schema.endpoints()
    pairs = {e.path: e.deprecates for e in eps.values() if e.deprecates}
    assert pairs == {
        "/api/years/v2": "/api/years", "/api/makes/v2": "/api/makes", "/api/models/v2": "/api/models",
        "/api/trims/v2": "/api/trims", "/api/trims/v2/{id}": "/api/trims/{id}", "/api/bodies/v2": "/api/bodies",
        "/api/engines/v2": "/api/engines", "/api/mileages/v2": "/api/mileages",
        "/api/exterior-colors/v2": "/api/exterior-colors", "/api/interior-colors/v2": "/api/interior-colors",
    }
    for new, old in pairs.items():
        assert eps[old].deprecated and eps[old].replaced_by == new
        assert (eps[old].kind, eps[old].resource) == (eps[new].kind, eps[new].resource)
        assert schema.endpoint_for(eps[new].kind, eps[new].resource, deprecated=True) is eps[old]
    assert {e.path for e in eps.values() if e.deprecated} == set(pairs.values())


def test_the_legacy_trim_quirk_is_one_flag_on_its_endpoints():
    assert [e.path for e in schema.endpoints().values() if e.quirk] == ["/api/trims", "/api/trims/{id}"]
    assert {e.record for e in schema.endpoints().values() if e.quirk} == {"trim_legacy"}
    assert schema.record_quirk("trim_legacy") == "legacy_trim_verbose"
    assert schema.record_quirk("trim") == schema.record_quirk("body_legacy") == ""
    detail = schema.record("trim_detail")
    for old, member, first in schema.legacy_trim_aliases():
        assert schema.record("trim_legacy").field(member).type == "nested"
        assert detail.field(old).nested_array and first == (old in ("bodies", "engines", "mileages"))
    # The Python records type the older shape's arrays only for the record with the quirk.
    assert pager._field_types("trim_legacy")["bodies"] == ("nested", "body_legacy")
    assert "bodies" not in pager._field_types("trim")


def test_client_and_cli_tables_are_read_from_the_schema():
    assert client._SEARCHES == {e.resource: (e.path, e.deprecates or None) for e in schema.endpoints().values()
                                if e.kind == "search" and not e.deprecated}
    assert client._DETAILS == {"trims": ("/api/trims/v2/{id}", "/api/trims/{id}"),
                               "obd_codes": ("/api/obd-codes/{code}", None)}
    assert client_cli._PATHS == {
        "years": "/api/years/v2", "makes": "/api/makes/v2", "models": "/api/models/v2",
        "powersports-years": "/api/years/powersports", "powersports-makes": "/api/makes/powersports",
        "powersports-models": "/api/models/powersports",
        "submodels": "/api/submodels/v2", "trims": "/api/trims/v2", "bodies": "/api/bodies/v2",
        "engines": "/api/engines/v2", "mileages": "/api/mileages/v2", "exterior-colors": "/api/exterior-colors/v2",
        "interior-colors": "/api/interior-colors/v2", "obd-codes": "/api/obd-codes",
        "vehicle-attributes": "/api/vehicle-attributes",
    }
    assert set(client_cli._RESOURCES.values()) == {e.resource for e in schema.endpoints().values()
                                                   if e.kind in ("years", "search", "attributes")}


def test_targets_fill_path_parameters_and_encode():
    assert _targets.endpoint_path(schema.endpoint_for("detail", "obd_codes"), "P0/1 x") == "/api/obd-codes/P0%2F1%20x"
    assert _targets.endpoint_path(schema.endpoint_for("search", "trims")) == "/api/trims/v2"
    assert _targets.build_target("/p", [("verbose", True), ("make", "Mercedes-Benz & co")]) == \
        "/p?verbose=yes&make=Mercedes-Benz%20%26%20co"
    assert _targets.strip_userinfo("http://u:p@h:1/x") == "http://h:1/x"
    with pytest.raises(Exception, match="over the client's maximum of 8000"):
        _targets.check_target("/p?" + "x" * _targets.MAX_TARGET_BYTES)


def _runtime_imports(name: str) -> List[str]:
    """Relative imports of a module (in functions too), those for type checking only excepted."""
    tree = ast.parse((ROOT / "python" / "vehicledata" / name).read_text(encoding="utf-8"))
    typing_only = {id(n) for node in ast.walk(tree)
                   if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                   for n in ast.walk(node)}
    return [n.module or "" for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.level and id(n) not in typing_only]


def test_pager_and_client_do_not_import_each_other():
    assert "client" not in _runtime_imports("pager.py")
    assert "pager" in _runtime_imports("client.py") and "_targets" in _runtime_imports("pager.py")
    assert not {"client", "pager"} & set(_runtime_imports("_targets.py"))
