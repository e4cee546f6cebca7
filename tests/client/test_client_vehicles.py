"""``api.vehicles``: trims joined with their body, engine and mileage, checked against the four
searches made one by one (records read through the ordinary accessors) on the real emulator."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List

import pyarrow.parquet as pq
import pytest

import vehicledata as vd
from vehicledata import vehicles

ROOT = Path(__file__).resolve().parents[2]


def by_trim(api: vd.Client, resource: str, **filters: Any) -> Dict[int, Any]:
    return {int(r.trim_id): r for r in getattr(api, resource).search(limit=1000, **filters)}


_EXPECTED: Dict[str, List[Dict[str, Any]]] = {}  # the catalogue does not change between tests


def expected_rows(api: vd.Client, **filters: Any) -> List[Dict[str, Any]]:
    """Each trim of the search with its body, engine and mileage, merged by hand from four searches."""
    key = repr(sorted(filters.items()))
    if key not in _EXPECTED:
        _EXPECTED[key] = _merged(api, **filters)
    return _EXPECTED[key]


def _merged(api: vd.Client, **filters: Any) -> List[Dict[str, Any]]:
    bodies, engines, mileages = (by_trim(api, r, **filters) for r in ("bodies", "engines", "mileages"))
    rows = []
    for t in api.trims.search(limit=1000, **filters):
        row = dict(t.to_dict())
        for rec, parts in (("body", bodies), ("engine", engines), ("mileage", mileages)):
            part = parts.get(int(t.id))
            for col, (record, field) in vehicles.columns().items():
                if record == rec:
                    row[col] = None if part is None else part[field]
        rows.append(row)
    return rows


def test_one_row_per_trim_with_its_parts(api):
    df = api.vehicles.search(year=2020, make="Toyota").to_pandas()
    want = expected_rows(api, year=2020, make="Toyota")
    assert len(df) == len(want) > 10
    assert list(df.columns) == list(vehicles.columns())
    assert list(df["id"]) == [r["id"] for r in want]  # the trims' order
    for col in ("type", "doors", "drive_type", "horsepower_hp", "combined_mpg", "body_id", "engine_id",
                "mileage_id", "msrp", "description"):
        got = [None if v is None or v != v else v for v in df[col].astype(object).where(df[col].notna(), None)]
        assert got == [r[col] for r in want], col
    # prefixes only where names clash; the parts' copies of the trim's fields are dropped
    assert {"body_id", "engine_id", "mileage_id", "type", "combined_mpg"} <= set(df.columns)
    assert "trim_id" not in df.columns and "trim_description" not in df.columns
    assert str(df["combined_mpg"].dtype) == "Int64" and str(df["length"].dtype) == "float64"


def test_the_suv_question_is_one_call(api):
    suvs = api.vehicles.search(vd.F("body.type") == "SUV", vd.F("engine.drive_type") == "all wheel drive",
                               vd.F("msrp") < 40_000, vd.F("mileage.combined_mpg") > 25, year=2020).to_pandas()
    want = [r["id"] for r in expected_rows(api, year=2020)
            if r["type"] == "SUV" and r["drive_type"] == "all wheel drive" and r["msrp"] is not None
            and r["msrp"] < 40_000 and r["combined_mpg"] is not None and r["combined_mpg"] > 25]
    assert list(suvs["id"]) == want and len(want) > 3
    assert set(suvs["type"]) == {"SUV"} and (suvs["combined_mpg"] > 25).all()


def test_two_models_compared_in_one_call(api):
    both = api.vehicles.search(vd.F("model").isin(["Camry", "Accord"]), year=2020).to_pandas()
    assert set(both["model"]) == {"Camry", "Accord"}
    want = [r for r in expected_rows(api, year=2020) if r["model"] in ("Camry", "Accord")]
    assert list(both["id"]) == [r["id"] for r in want]
    assert list(both["horsepower_hp"]) == [r["horsepower_hp"] for r in want]


def test_conditions_go_to_the_server_where_an_endpoint_takes_them(api):
    pager = api.vehicles.search(vd.F("mileage.combined_mpg") > 25, vd.F("body.type") == "SUV",
                                vd.F("engine.torque_ft_lbs").is_null(), vd.F("msrp") < 40000, year=2020)
    params = {res: dict(p.params).get("json", "") for res, p in pager._pagers.items()}
    assert '"mileages"' not in params["trims"] and '"bodies.type"' in params["trims"]
    assert '"msrp"' in params["trims"] and '"torque_ft_lbs"' not in params["engines"]
    assert '"combined_mpg"' in params["mileages"] and '"type"' in params["bodies"]
    assert params["engines"] == ""  # torque_ft_lbs: no endpoint takes it, applied after the join
    df = pager.to_pandas()
    want = [r["id"] for r in expected_rows(api, year=2020)
            if r["combined_mpg"] is not None and r["combined_mpg"] > 25 and r["type"] == "SUV"
            and r["torque_ft_lbs"] is None and r["msrp"] < 40000]  # torque: no public source, null (dataset.md)
    assert list(df["id"]) == want and want
    by_id = api.vehicles.search(vd.F("id") == int(df["id"].iloc[0]))._pagers  # the parts repeat trim_id
    assert all('"field":"trim_id"' in dict(p.params)["json"] for p in by_id.values())
    table = dict(vehicles.condition_table())
    assert table["engine.torque_ft_lbs"] == "after the join"
    assert table["body.type"] == "server: trims, bodies; after the join"
    assert table["mileage.combined_mpg"] == "server: mileages; after the join"
    assert table["msrp"] == "server: trims"


def test_conditions_after_the_join_follow_the_service_rules(api):
    rows = expected_rows(api, year=2019, make="Ford")
    null = api.vehicles.search(vd.F("mileage.range_electric").is_null(), year=2019, make="Ford").to_pandas()
    assert list(null["id"]) == [r["id"] for r in rows if r["range_electric"] is None]
    like = api.vehicles.search(vd.F("engine.transmission").like("%AUTOMATIC%"), year=2019, make="Ford").to_pandas()
    assert list(like["id"]) == [r["id"] for r in rows if r["transmission"] and "automatic" in r["transmission"]]
    notin = api.vehicles.search(vd.F("cylinders").notin(["V8"]), year=2019, make="Ford").to_pandas()
    assert list(notin["id"]) == [r["id"] for r in rows if r["cylinders"] is not None and r["cylinders"] != "V8"]


def test_an_unknown_field_is_a_query_error_before_any_request(api):
    before = api.stats()["requests"]
    with pytest.raises(vd.QueryError, match=r"unknown vehicles condition field 'mileage.combined_mgp'; "
                                            r"did you mean 'mileage.combined_mpg'\?"):
        api.vehicles.search(vd.F("mileage.combined_mgp") > 25, year=2020)
    with pytest.raises(vd.QueryError, match="unknown filter 'yaer'"):
        api.vehicles.search(yaer=2020)
    assert api.stats()["requests"] == before


def test_get_one_vehicle(api):
    row = api.vehicles.search(year=2020, make="Honda").to_arrow().to_pylist()[3]
    car = api.vehicles.get(row["id"])
    assert car.to_dict() == row and car.combined_mpg == row["combined_mpg"]
    assert car.drive_type == api.engines.search(trim_id=row["id"]).first(1)[0].drive_type
    with pytest.raises(vd.NotFoundError, match="no trim with id 999999999"):
        api.vehicles.get(999999999)
    with pytest.raises(vd.QueryError):
        api.vehicles.get("abc")  # type: ignore[arg-type]


def test_every_frame_method(api, tmp_path):
    search = api.vehicles.search(year=2020, make="Toyota")
    table = search.to_arrow()
    assert table.column_names == list(vehicles.columns())
    assert search.to_polars().to_arrow().column("id").to_pylist() == table["id"].to_pylist()
    pages = list(search.iter_pandas(page_size=25))
    assert len(pages) == -(-table.num_rows // 25) and sum(len(p) for p in pages) == table.num_rows
    assert [int(i) for p in pages for i in p["id"]] == table["id"].to_pylist()
    assert [r.id for r in search] == table["id"].to_pylist()
    out = search.to_parquet(tmp_path / "v", partition_cols=["model"])
    back = pq.read_table(out)
    assert sorted(back["id"].to_pylist()) == sorted(table["id"].to_pylist())
    assert set(back.column_names) == set(table.column_names)


def test_docs_table_is_generated():
    text = (ROOT / "docs/client.md").read_text()
    assert vehicles.condition_markdown() in text
    assert re.search(r"api\.vehicles\.search\(vd\.F\(\"body\.type\"\) == \"SUV\"", text)


def test_a_trim_without_a_part_has_nulls_there(api):
    def part(resource: str, make: str) -> Any:
        # (a condition: a make= keyword naming no make is a QueryError, test_client_names.py)
        return getattr(api, resource).search(vd.F("make") == make, year=2020).to_arrow()

    trims = api.trims.search(year=2020, make="Honda").to_arrow()
    makes = {"body": "NoSuchMake", "engine": "Honda", "mileage": "NoSuchMake"}  # no body, no mileage found
    table = vehicles.join(trims, {r: part(res, makes[r]) for r, res in vehicles.PARTS})
    assert table.num_rows == trims.num_rows > 10 and table["id"].to_pylist() == trims["id"].to_pylist()
    assert table["type"].null_count == table.num_rows and table["combined_mpg"].null_count == table.num_rows
    assert table["drive_type"].null_count == 0 and table["engine_id"].null_count == 0


def test_the_core_join_is_the_arrow_join(api):
    """join_pages (the whole-result path: the core gathers the columns into one page) gives the table
    and the frame of join (Arrow take), also with conditions after the join and parts missing."""
    import pandas as pd

    from vehicledata import frames

    def core(resource: str, make: str) -> Any:
        # (a condition: a make= keyword naming no make is a QueryError, test_client_names.py)
        return getattr(api, resource).search(vd.F("make") == make, year=2019)._bulk_collected(None)

    makes = {"body": "Ford", "engine": "Ford", "mileage": "NoSuchMake"}  # no mileage found: nulls
    after = vehicles._Plan([vd.F("engine.transmission").like("%automatic%"),
                            vd.F("mileage.range_electric").is_null()]).after
    trims = core("trims", "Ford")
    parts = {r: core(res, makes[r]) for r, res in vehicles.PARTS}
    page = vehicles.join_pages(trims, parts, after)
    arrow = vehicles.join(frames.page_to_arrow(trims), {r: frames.page_to_arrow(p) for r, p in parts.items()}, after)
    assert 10 < page.rows < trims.rows and page.column_names == list(vehicles.columns())
    assert frames.page_to_arrow(page).equals(arrow.combine_chunks())
    pd.testing.assert_frame_equal(frames.page_to_pandas(page), frames.arrow_to_pandas(arrow), check_exact=True)
    assert frames.page_to_pandas(page)["combined_mpg"].isna().all()


def test_gather_refuses_rows_outside_the_page(api):
    import numpy as np

    from vehicledata import _core

    page = api.trims.search(year=2020, make="Honda")._bulk_collected(None)
    with pytest.raises(ValueError, match="row 99999 outside a page of"):
        _core.client.gather([(page, np.array([0, 99999]), ["id"], ["id"])], 2, "vehicle")
    with pytest.raises(ValueError, match="no column 'nope'"):
        _core.client.gather([(page, None, ["nope"], ["nope"])], page.rows, "vehicle")
    with pytest.raises(ValueError, match="another number of rows"):
        _core.client.gather([(page, None, ["id"], ["id"])], page.rows + 1, "vehicle")
    one = _core.client.gather([(page, np.array([2, -1]), ["id", "msrp"], ["id", "price"])], 2, "vehicle")
    got, src = one.to_lists(), page.to_lists()
    assert one.column_names == ["id", "price"] and got == {"id": [src["id"][2], None], "price": [src["msrp"][2], None]}


def test_to_parquet_modes(api, emulator, tmp_path):
    from vehicledata.checkpoint import CheckpointWarning

    out = tmp_path / "v"
    search = api.vehicles.search(year=2020, make="Toyota")
    want = sorted(search.to_arrow()["id"].to_pylist())
    search.to_parquet(out, partition_cols=["model"])
    files = sorted(out.rglob("*.parquet"))
    models = {f.parent.name for f in files}
    assert len(files) == len(models) > 3  # one file per partition
    assert sorted(pq.read_table(out)["id"].to_pylist()) == want
    sent = emulator.stats()["requests"]
    with pytest.warns(CheckpointWarning, match="nothing fetched"):
        api.vehicles.search(year=2020, make="Toyota").to_parquet(out, partition_cols=["model"], mode="resume")
    assert emulator.stats()["requests"] == sent  # resume after a finished run: no request
    api.vehicles.search(year=2020, make="Toyota").to_parquet(out, partition_cols=["model"])  # refresh: again
    assert emulator.stats()["requests"] > sent and sorted(pq.read_table(out)["id"].to_pylist()) == want
    sent = emulator.stats()["requests"]
    api.vehicles.search(year=2020, make="Toyota").to_parquet(out, partition_cols=["model"], mode="overwrite")
    assert emulator.stats()["requests"] > sent and sorted(out.rglob("*.parquet")) == files
    api.vehicles.search(year=2020, make="Toyota").to_parquet(out, partition_cols=["model"], mode="append")
    assert sorted(pq.read_table(out)["id"].to_pylist()) == sorted(want * 2)
    with pytest.raises(vd.QueryError, match="another query"):
        api.vehicles.search(year=2020, make="Honda").to_parquet(out, partition_cols=["model"])


def test_part_pages_decode_only_the_columns_the_join_takes(api, emulator, client_factory, tmp_path):
    """Pager.fields (api.vehicles' part searches): the decoder makes only those columns, with the values
    the full decode has, on every fetch path and from the response cache; an unknown field is refused."""
    vp = api.vehicles.search(year=2020, make="Toyota")
    assert vp._pagers["bodies"].fields == [f for col, (rec, f) in vehicles.columns().items() if rec == "body"] + \
        ["trim_id"]
    full = api.bodies.search(year=2020, make="Toyota").to_arrow()
    keep = ["id", "trim_id", "type", "doors"]
    names = [c for c in full.column_names if c in keep]  # the record's order
    for page_size in (None, 7):  # one page, and many collected in C++
        part = api.bodies.search(year=2020, make="Toyota")
        part.fields = keep
        got = part.to_arrow(page_size)
        assert got.column_names == names and got.num_rows == full.num_rows > 7
        assert got.to_pylist() == full.select(names).to_pylist()
    paged = api.bodies.search(year=2020, make="Toyota", limit=7)
    paged.fields = keep
    records = list(paged)  # page by page (get_page, get_pages)
    assert [r.to_dict() for r in records] == full.select(names).to_pylist()
    with client_factory(emulator.url, cache=tmp_path / "cache") as cached:
        assert cached.bodies.search(year=2020, make="Toyota").to_arrow().equals(full)
        sent = cached.stats()["requests"]
        again = cached.bodies.search(year=2020, make="Toyota")
        again.fields = keep
        assert again.to_arrow().to_pylist() == full.select(names).to_pylist()
        assert cached.stats()["requests"] == sent  # the stored body, decoded with the projection
    bad = api.bodies.search(year=2020)
    bad.fields = ["id", "no_such_field"]
    with pytest.raises(ValueError, match="record 'body' has no field 'no_such_field'"):
        bad.to_arrow()
    vehicles_df = vp.to_pandas()
    assert list(vehicles_df["id"]) == [r["id"] for r in expected_rows(api, year=2020, make="Toyota")]


# ---- labels: synthetic and null columns (issue 40, point 8) ----------------------------------------------
# The fields each record's search labels synthetic (test_client_synthetic.py holds these lists against the
# database's provenance table), as vehicle columns: the trim's, then the mileage's.
SYNTHETIC = ["msrp", "invoice", "fuel_tank_capacity", "range_city", "range_highway", "battery_capacity_electric"]


def null_everywhere(df: Any) -> List[str]:
    """The frame's columns null on every row, read off the values (pandas)."""
    return [c for c in df.columns if df[c].isna().all()]


@pytest.fixture()
def fresh_notes(monkeypatch):
    """No NullColumnWarning said yet in this process (each column is named once per process)."""
    from vehicledata import frames

    monkeypatch.setattr(frames, "_NULL_NOTED", set())


def null_warnings(caught: List[Any]) -> List[str]:
    return [str(w.message) for w in caught if issubclass(w.category, vd.NullColumnWarning)]


def test_vehicle_frames_name_their_synthetic_and_null_columns(api, tmp_path, fresh_notes):
    import warnings

    from vehicledata import frames

    search = api.vehicles.search(year=2020, make="Toyota")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = search.to_pandas()
        nulls = null_everywhere(df)
        assert {"length", "width", "height"} <= set(nulls) and "msrp" not in nulls and len(df) > 100
        assert df.attrs == {frames.SYNTHETIC_ATTR: SYNTHETIC, frames.ALWAYS_NULL_ATTR: nulls}
        said = null_warnings(caught)
        assert len(said) == 1 and "\n" not in said[0], said  # one warning, one line
        assert said[0].startswith(", ".join(nulls) + f" are null in all {len(df):,} rows of this vehicles frame")
        assert caught[0].filename == __file__  # it points at the caller's line
        # said once: the same columns again, in every other shape, say nothing more
        table = search.to_arrow()
        meta = table.schema.metadata
        assert meta[b"vehicledata.synthetic"] == ",".join(SYNTHETIC).encode()
        assert meta[b"vehicledata.always_null"] == ",".join(nulls).encode()
        labelled = [f.name for f in table.schema if (f.metadata or {}).get(b"vehicledata.origin") == b"synthetic"]
        assert labelled == SYNTHETIC
        assert search.to_pandas().attrs == df.attrs
        for page in search.iter_pandas(page_size=40):  # each page names its own null columns
            assert page.attrs[frames.SYNTHETIC_ATTR] == SYNTHETIC
            assert page.attrs[frames.ALWAYS_NULL_ATTR] == null_everywhere(page)
        for part in search.iter_arrow(page_size=40):
            assert part.schema.metadata[b"vehicledata.always_null"].decode().split(",") == \
                [c for c in part.column_names if part[c].null_count == part.num_rows]
            assert part.schema.field("range_city").metadata == {b"vehicledata.origin": b"synthetic"}
        out = search.to_parquet(tmp_path / "v")
        files = sorted(Path(out).rglob("*.parquet"))
        assert files and all(pq.read_schema(f).metadata[b"vehicledata.always_null"] == meta[b"vehicledata.always_null"]
                             for f in files)
        car = api.vehicles.get(int(df["id"][0]))  # one vehicle: its synthetic fields, no warning
        assert car.synthetic_fields == SYNTHETIC and repr(car).endswith("synthetic: " + ", ".join(SYNTHETIC) + ")>")
        assert [r.synthetic_fields for r in api.vehicles.search(year=2020, make="Toyota", model="Camry")][0] == SYNTHETIC
        assert len(null_warnings(caught)) == 1
        # a frame with a column no warning named yet: that column, once
        electric = api.vehicles.search(year=2020, make="Tesla").to_pandas()
        assert len(electric) > 1
        new = [c for c in null_everywhere(electric) if c not in nulls]
        assert electric.attrs[frames.ALWAYS_NULL_ATTR] == null_everywhere(electric)
        said = null_warnings(caught)
        assert len(said) == (2 if new else 1) and (not new or said[1].startswith(", ".join(new) + " "))


def test_a_vehicles_frame_without_null_columns_has_no_such_label(api, fresh_notes):
    import warnings

    from vehicledata import frames

    cond = [vd.F("engine.horsepower_hp") > 0, vd.F("body.length") > 0]  # no rows: no column is null "in all rows"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        empty = api.vehicles.search(*cond, year=2020, make="Toyota").to_pandas()
        assert len(empty) == 0 and frames.ALWAYS_NULL_ATTR not in empty.attrs
        # the labels are those of vehicle rows only: a trims frame keeps its own attrs
        trims = api.trims.search(year=2020, make="Toyota").to_pandas()
        assert trims.attrs == {frames.SYNTHETIC_ATTR: ["msrp", "invoice"]}
        bodies = api.bodies.search(year=2020, make="Toyota").to_arrow()
        assert bodies["length"].null_count == bodies.num_rows and \
            b"vehicledata.always_null" not in (bodies.schema.metadata or {})


def test_polars_frames_say_it_too(api, fresh_notes):
    pl = pytest.importorskip("polars")
    with pytest.warns(vd.NullColumnWarning, match=r"^series, length, width, height,") as caught:
        df = api.vehicles.search(year=2020, make="Toyota").to_polars()
    assert isinstance(df, pl.DataFrame) and df["length"].null_count() == df.height > 1
    assert len(caught) == 1
