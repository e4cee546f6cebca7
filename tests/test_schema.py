"""The schema table as Python sees it."""
import pickle

import pytest

import vehicledata
from vehicledata import errors, schema


def test_storage_tables_and_create_sql_come_from_the_schema():
    assert schema.tables() == [
        "makes", "models", "submodels", "trims", "bodies", "engines", "mileages",
        "exterior_colors", "interior_colors", "obd_codes",
        "powersports_makes", "powersports_models", "powersports_model_years",
    ]
    sql = schema.create_table_sql("trims")
    assert sql.startswith("CREATE TABLE trims (id INTEGER NOT NULL, make_id INTEGER NOT NULL")
    assert "series TEXT," in sql and "msrp INTEGER" in sql


def test_trim_record_fields_in_served_order():
    assert schema.record("trim").field_names() == [
        "id", "make_id", "model_id", "submodel_id", "year", "make", "model", "series", "submodel", "trim",
        "description", "msrp", "invoice", "created", "modified",
    ]


def test_body_v2_hides_created_modified_but_searches_them():
    body = schema.record("body")
    assert "created" not in body.field_names()
    assert body.field("created").in_record is False
    assert {"created", "modified"} <= set(schema.endpoint("/api/bodies/v2").json_field_names())


def test_decimal_fields_and_enumerations():
    engine = schema.record("engine")
    assert engine.field("size").type == "decimal"
    assert engine.field("cylinders").enum[:3] == ("flat 4", "flat 6", "I2")
    assert engine.field("fuel_type").max_length == 64


def test_every_spec_filter_of_engines_v2():
    ep = schema.endpoint("/api/engines/v2")
    assert dict(ep.filters) == {
        "year": "value", "make": "value", "model": "value", "series": "value", "submodel": "value",
        "make_id": "value", "model_id": "value", "submodel_id": "value", "trim_id": "value", "size": "value",
        "horsepower_hp": "value", "valves": "value", "trim": "like", "description": "like", "cylinders": "like",
        "valve_timing": "like", "cam_type": "like", "drive_type": "like", "transmission": "like",
        "engine_type": "like", "fuel_type": "like",
    }


def test_unknown_names_raise_key_errors_that_say_what():
    with pytest.raises(KeyError, match="no record named 'nope'"):
        schema.record("nope")
    with pytest.raises(KeyError, match="no endpoint"):
        schema.endpoint("/api/nope")


def test_errors_are_picklable_and_carry_their_context():
    err = errors.RateLimitError("Max Per Minute: 600", status=429, url="/api/trims/v2", exception="TooManyRequestsException", retry_after=3.0)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is errors.RateLimitError
    assert (back.status, back.url, back.exception, back.retry_after) == (429, "/api/trims/v2", "TooManyRequestsException", 3.0)
    assert str(back) == "429 TooManyRequestsException: Max Per Minute: 600 (url: /api/trims/v2)"
    assert isinstance(errors.QueryError("x"), ValueError)
    assert errors.error_for_status(500, "UnauthenticatedException") is errors.AuthenticationError
    assert errors.error_for_status(502) is errors.ServerError


def test_version_is_the_one_in_pyproject_toml():
    import tomllib
    from importlib.metadata import version
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert vehicledata.__version__ == pyproject["project"]["version"] == version("pyvehicledata")
    assert vehicledata._core.client.USER_AGENT == f"vehicledata/{pyproject['project']['version']}"


def test_docs_resources_md_is_generated_from_the_schema():
    from pathlib import Path

    doc = Path(__file__).resolve().parent.parent / "docs" / "resources.md"
    assert doc.read_text(encoding="utf-8") == schema.markdown() + "\n", "run tools/gen_docs.py"


def test_json_field_types_come_from_the_table_columns():
    years = {j.name: j.type for j in schema.endpoint("/api/years/v2").json_fields}
    assert years["make_id"] == "int" and years["created"] == "timestamp"
    trims = {j.name: j for j in schema.endpoint("/api/trims/v2").json_fields}
    assert trims["engines.valves"].type == "int" and trims["engines.valves"].related == "engines"
    assert trims["bodies.type"].enum[0] == "Cargo Van"


def test_powersports_endpoints_require_type():
    for path in ("/api/years/powersports", "/api/makes/powersports", "/api/models/powersports"):
        assert schema.endpoint(path).required_parameters() == {"type": ("street_motorcycle",)}
    assert all(not e.required_parameters() for e in schema.endpoints().values() if "powersports" not in e.path)
