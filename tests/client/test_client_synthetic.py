"""Honest labels end to end: the emulator's X-Emulator-Synthetic header reaches every frame.

The emulator names, per answer, the fields of its record type with no public source (provenance
origin 'synthetic'; docs/emulator.md). The client keeps the list on the page and the pager
(``Page.synthetic``, ``Pager.synthetic``), in ``DataFrame.attrs["vehicledata.synthetic"]``, in the
Arrow schema and field metadata (and so in Parquet files), and in record reprs (docs/client.md,
"Synthetic fields"). The expected lists are written out below and checked against the database's
provenance table, so a builder change that moves a column's origin shows up here.
"""
from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

import vehicledata as vd
from vehicledata import frames, schema
from vehicledata.testing import Emulator

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

# The synthetic fields of each record type as the built catalogue labels them (docs/dataset.md's
# field tables): prices and the derived fuel figures; bodies and mileages carry none of them
# (bodies: vPIC or null; mileages: EPA). Record name -> header fields, in record order.
EXPECTED: Dict[str, List[str]] = {
    "trim": ["msrp", "invoice"],
    "body": [],
    "engine": [],
    "mileage": ["fuel_tank_capacity", "range_city", "range_highway", "battery_capacity_electric"],
    "make": [],
}


def provenance_synthetic(db: Path) -> Set[Tuple[str, str]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return set(con.execute("SELECT table_name, column_name FROM provenance WHERE origin = 'synthetic'"))
    finally:
        con.close()


def from_provenance(record: str, syn: Set[Tuple[str, str]]) -> List[str]:
    rec = schema.record(record)
    return [f.name for f in rec.fields if (f.in_record or f.verbose_only) and f.type != "nested"
            and rec.table and (rec.table, f.name) in syn]


@pytest.mark.parametrize("record", sorted(EXPECTED))
def test_expected_lists_are_the_provenance_tables(database: Path, record: str) -> None:
    assert from_provenance(record, provenance_synthetic(database)) == EXPECTED[record]


SEARCHES = [("trims", "trim"), ("bodies", "body"), ("engines", "engine"), ("mileages", "mileage"),
            ("makes", "make")]


@pytest.mark.parametrize("resource,record", SEARCHES)
def test_page_pager_frames_carry_the_header(api: vd.Client, resource: str, record: str) -> None:
    want = EXPECTED[record]
    pager = getattr(api, resource).search(year=2019, limit=20) if record != "make" else api.makes.search(limit=20)
    assert pager.synthetic == want
    page = next(iter(pager.pages))
    assert page.synthetic == want
    df = page.to_pandas()
    if want:
        assert df.attrs[frames.SYNTHETIC_ATTR] == want
    else:
        assert frames.SYNTHETIC_ATTR not in df.attrs
    table = page.to_arrow()
    meta = table.schema.metadata or {}
    if want:
        assert meta[b"vehicledata.synthetic"] == ",".join(want).encode()
    else:
        assert b"vehicledata.synthetic" not in meta
    labelled = [f.name for f in table.schema if (f.metadata or {}).get(b"vehicledata.origin") == b"synthetic"]
    assert labelled == want
    for r in page.records[:3]:
        assert r.synthetic_fields == want
        note = f"; synthetic: {', '.join(want)})>" if want else " fields)>"
        assert repr(r).endswith(note), repr(r)


def test_whole_result_frames_keep_the_labels(api: vd.Client) -> None:
    pager = api.trims.search(year=2019, make="Toyota")
    want = EXPECTED["trim"]
    df = pager.to_pandas(page_size=50)  # several pages appended in C++
    assert pager.pages_fetched > 1 and len(df) == pager.total
    assert df.attrs[frames.SYNTHETIC_ATTR] == want
    table = pager.to_arrow(page_size=50)
    assert table.schema.metadata[b"vehicledata.synthetic"] == b"msrp,invoice"
    assert table.schema.field("msrp").metadata == {b"vehicledata.origin": b"synthetic"}
    assert table.schema.field("invoice").metadata == {b"vehicledata.origin": b"synthetic"}
    assert table.schema.field("make").metadata is None
    for part in pager.iter_pandas(page_size=100):
        assert part.attrs[frames.SYNTHETIC_ATTR] == want
    streamed = pa.table(pager)  # the Arrow C stream: its schema from the first page's labels
    assert streamed.num_rows == pager.total
    assert streamed.schema.field("msrp").metadata == {b"vehicledata.origin": b"synthetic"}
    assert streamed.schema.metadata[b"vehicledata.synthetic"] == b"msrp,invoice"


def test_parquet_keeps_the_field_metadata(api: vd.Client, tmp_path: Path) -> None:
    out = api.trims.search(year=2019, make="Honda").to_parquet(tmp_path / "trims", page_size=100)
    files = sorted(Path(out).rglob("*.parquet"))
    assert files
    for f in files:
        s = pq.read_schema(f)
        assert s.field("msrp").metadata == {b"vehicledata.origin": b"synthetic"}
        assert s.field("year").metadata is None
        assert s.metadata[b"vehicledata.synthetic"] == b"msrp,invoice"


def test_record_repr_and_pickle(api: vd.Client) -> None:
    r = api.trims.search(year=2019, make="Toyota", model="Camry", limit=1).first(1)[0]
    assert r._is_view
    assert r.synthetic_fields == ["msrp", "invoice"]
    text = repr(r)  # materialises the view: the labels stay
    assert text.startswith("<Record trim id=") and text.endswith("fields; synthetic: msrp, invoice)>"), text
    assert not r._is_view and r.synthetic_fields == ["msrp", "invoice"]
    html = r._repr_html_()
    assert f"{r.msrp}" in html and html.count("(synthetic)") == 2
    back = pickle.loads(pickle.dumps(r))
    assert back == r and back.synthetic_fields == ["msrp", "invoice"]
    assert repr(back) == text
    # A record made by hand has no labels unless given.
    assert vd.Record({"msrp": 1}, "trim").synthetic_fields == []
    assert vd.Record({"msrp": 1}, "trim", ["msrp"]).synthetic_fields == ["msrp"]
    with pytest.raises(TypeError):
        vd.Record({"msrp": 1}, "trim", [1])


def test_polars_frame_without_labels(api: vd.Client) -> None:
    pl = pytest.importorskip("polars")
    pager = api.trims.search(year=2019, make="Toyota", model="Camry")
    df = pager.to_polars()
    assert isinstance(df, pl.DataFrame) and df.height == pager.total > 0
    assert pager.synthetic == ["msrp", "invoice"]  # polars holds no metadata: the pager says it


def test_no_header_no_labels(database: Path, tmp_path: Path, client_factory) -> None:  # type: ignore[no-untyped-def]
    """A database whose provenance has no synthetic column: no header, so no labels anywhere."""
    from vpic_damage import copy_dataset

    copy = copy_dataset(database, tmp_path)
    con = sqlite3.connect(copy)
    con.execute("UPDATE provenance SET origin = 'derived' WHERE origin = 'synthetic'")
    con.commit()
    con.close()
    with Emulator(db=copy, threads=2) as emu, client_factory(emu.url) as api:
        pager = api.trims.search(year=2019, make="Toyota", model="Camry", limit=5)  # a few pages, inside the rate limit
        assert pager.synthetic == []
        df = pager.to_pandas()
        assert frames.SYNTHETIC_ATTR not in df.attrs
        table = pager.to_arrow()
        assert table.schema.metadata is None
        assert all(f.metadata is None for f in table.schema)
        r = pager.first(1)[0]
        assert r.synthetic_fields == [] and repr(r).endswith(" fields)>")
