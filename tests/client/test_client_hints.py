"""One home for "did you mean" (issue 39, point 3): every unknown name or value the package refuses
ends its message's name with ``_values.did_you_mean``'s text, so the hint reads the same whatever
refused it.  One test per kind of caller (filters, json fields, attributes, feed tables, output
columns, enumerated values, sort keys, the service's makes and models, vehicles condition fields,
the package's names, the async client's keywords, a record's fields), each against the real emulator or before any request; and
a test that no other module builds the hint."""
from __future__ import annotations

import argparse
import ast
from pathlib import Path
from typing import Any, Callable, List, Set

import pytest

import vehicledata as vd
from vehicledata import client_cli, feed, schema, vehicles
from vehicledata._values import did_you_mean
from vehicledata.testing import Emulator

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "vehicledata"


def refused(call: Callable[[], Any], error: type = vd.QueryError) -> str:
    with pytest.raises(error) as info:
        call()
    return str(info.value)


def hint(text: str, valid: List[str], near: str, **how: Any) -> str:
    """The one hint for ``text``, which must name ``near`` (so that each test checks a hint, not its absence)."""
    out = did_you_mean(text, valid, **how)
    assert out == f"; did you mean {near!r}?"
    return out


def test_the_hint_names_the_nearest_or_nothing() -> None:
    assert did_you_mean("yaer", ["year", "make"]) == "; did you mean 'year'?"
    assert did_you_mean("zzz", ["year", "make"]) == ""
    assert did_you_mean("zzz", ["year", "make"], otherwise=".") == "."
    assert did_you_mean("AWD", ["all wheel drive", "rear wheel drive"], loose=True) == \
        "; did you mean 'all wheel drive'?"
    assert did_you_mean("AWD", ["all wheel drive"]) == ""  # (by spelling only: nothing near)
    assert did_you_mean("x" * 201, ["x" * 201]) == ""  # past ECHO_CHARS: not compared
    assert did_you_mean("toyota", ["Toyota"], loose=True, fold=str.lower) == ""


def test_a_filter(api: vd.Client) -> None:
    text = refused(lambda: api.trims.search(yaer=2019))
    assert "unknown filter 'yaer' for /api/trims/v2" + hint("yaer", api.trims.filters, "year") + " Valid: " in text


def test_a_json_field(api: vd.Client) -> None:
    text = refused(lambda: api.trims.search(vd.F("modifed") >= "2020"))
    assert "unknown json field 'modifed' for /api/trims/v2" + hint("modifed", api.trims.json_fields, "modified") \
        in text


def test_an_attribute(api: vd.Client) -> None:
    text = refused(lambda: api.vehicle_attributes("engines.fuel_typ"))
    assert "unknown attribute 'engines.fuel_typ'" + \
        " for " + schema.endpoint_for(schema.Kind.ATTRIBUTES).path + \
        hint("engines.fuel_typ", schema.attributes(), "engines.fuel_type") in text


def test_a_feed_table(api: vd.Client, tmp_path: Path) -> None:
    text = refused(lambda: api.data_feed.load(tmp_path / "feed.zip", tables=["bodys"]))
    assert "unknown feed table 'bodys' for the data feed" + hint("bodys", feed.feed_tables(), "bodies") in text


def test_an_output_column() -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"make": [], "model": []})
    text = refused(lambda: client_cli._select_columns(df, argparse.Namespace(columns="mak")), ValueError)
    assert "unknown column 'mak' for this output" + hint("mak", ["make", "model"], "make") in text


def test_an_enumerated_value(api: vd.Client) -> None:
    drives = list(schema.record("engine").field("drive_type").enum)
    text = refused(lambda: api.engines.search(drive_type="AWD"))
    assert "'AWD' for filter drive_type" in text and hint("AWD", drives, "all wheel drive", loose=True) in text
    text = refused(lambda: api.trims.search(vd.F("engines.drive_type") == "AWD"))
    assert "'AWD' for condition field engines.drive_type of /api/trims/v2" + \
        hint("AWD", drives, "all wheel drive", loose=True) in text


def test_a_sort_key(api: vd.Client) -> None:
    keys = api.trims.sort_keys
    text = refused(lambda: api.trims.search(sort="msrpp"))
    assert "unknown sort 'msrpp' for /api/trims/v2" + \
        hint("msrpp", keys + [k.rpartition(".")[2] for k in keys], "msrp") in text


def test_a_make_and_a_model_of_the_service(api: vd.Client, emulator: Emulator) -> None:
    from vehicledata._names import _fold

    makes = [str(m.name) for m in api.makes.search(limit=1000)]
    text = refused(lambda: api.trims.search(year=2019, make="Toyta"))
    assert "unknown make 'Toyta' for /api/trims/v2" + hint("Toyta", makes, "Toyota", loose=True, fold=_fold) in text
    models = sorted({str(m.name) for m in api.models.search(make="Toyota", limit=1000)})
    text = refused(lambda: api.trims.search(make="Toyota", model="Camri"))
    assert "unknown model 'Camri' of make 'Toyota' for /api/trims/v2" + \
        hint("Camri", models, "Camry", loose=True, fold=_fold) in text


def test_a_vehicles_condition_field(api: vd.Client) -> None:
    valid = [c for c, _ in vehicles.condition_table()]
    text = refused(lambda: api.vehicles.search(vd.F("mileage.combined_mgp") > 25, year=2020))
    assert "unknown vehicles condition field 'mileage.combined_mgp'" + \
        hint("mileage.combined_mgp", valid, "mileage.combined_mpg") + " Valid: " in text


def test_a_name_of_the_package() -> None:
    text = refused(lambda: vd.Clinet, AttributeError)  # type: ignore[attr-defined]
    assert text == "module 'vehicledata' has no attribute 'Clinet'" + hint("Clinet", vd.__all__, "Client")


def test_a_keyword_of_the_async_client() -> None:
    from vehicledata.options import NAMES

    text = refused(lambda: vd.AsyncClient(timeot=5.0), TypeError)
    assert text == "AsyncClient() got an unexpected keyword argument 'timeot'" + hint("timeot", list(NAMES), "timeout")


def test_a_field_of_a_record(api: vd.Client) -> None:
    record = api.makes.search(limit=1).first(1)[0]
    text = refused(lambda: record.nmae, AttributeError)
    assert text.startswith("record has no field 'nmae'" + hint("nmae", list(record), "name") + " Fields: ")


def _docstrings(tree: ast.AST) -> Set[int]:
    ids: Set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def test_no_other_module_builds_the_hint() -> None:
    """difflib and the hint's words appear in ``_values.py`` only (docstrings may quote a hint)."""
    builders: List[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name == "_values.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + ([node.module] if isinstance(node, ast.ImportFrom) else [])
                if "difflib" in names:
                    builders.append(f"{name}:{node.lineno}: imports difflib")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                    and "did you mean" in node.value:
                builders.append(f"{name}:{node.lineno}: {node.value!r}")
    assert builders == [], "a hint built outside vehicledata._values.did_you_mean:\n" + "\n".join(builders)
