"""Data feed: last-updated, and the ZIP of one CSV per resource (columns as the v2 records)."""
from __future__ import annotations

import csv
import io
import zipfile
from typing import Dict

from emu_support import Db, Http, record_fields, render_row
from vehicledata import schema


def test_last_updated_is_the_build_time_in_eastern_time(api: Http, db: Db) -> None:
    built = db.one("SELECT value FROM meta WHERE key = 'built_at'")
    assert api.get("/api/data-feeds/last-updated").json() == {"last_updated": built}
    assert len(built) == 19 and built[10] == " "


def test_download_is_a_zip_of_every_table(api: Http, db: Db, tokens: Dict[str, str]) -> None:
    r = api.get("/api/data-feeds/download", token=tokens["premium"])
    assert r.status == 200
    assert r.headers["content-type"] == "application/zip"
    assert int(r.headers["content-length"]) == len(r.body)
    assert "attachment" in r.headers["content-disposition"]
    z = zipfile.ZipFile(io.BytesIO(r.body))
    assert z.testzip() is None
    tables = schema.tables()
    assert sorted(z.namelist()) == sorted(f"{t}.csv" for t in tables)
    for t in tables:
        rec = schema.table_record(t)
        names = [f.name for f in record_fields(rec.name)]
        with z.open(f"{t}.csv") as fh:
            rows = list(csv.reader(io.TextIOWrapper(fh, encoding="utf-8", newline="")))
        assert rows[0] == names, t
        assert len(rows) - 1 == db.count(t), t
        # The first data row equals the database's first row, rendered as the JSON record is.
        order = "id" if "id" in names else "code"
        first = db.records(rec.name, order=order, limit=1)[0]
        as_text = {k: "" if v is None else str(v) for k, v in first.items()}
        assert dict(zip(names, rows[1])) == as_text, t
    again = api.get("/api/data-feeds/download", token=tokens["premium"])
    assert again.body == r.body  # built once, served identically


def test_download_honours_range_requests(api: Http, tokens: Dict[str, str]) -> None:
    full = api.get("/api/data-feeds/download", token=tokens["premium"]).body
    r = api.get("/api/data-feeds/download", token=tokens["premium"], headers={"Range": "bytes=100-1123"})
    assert r.status == 206
    assert r.headers["content-range"] == f"bytes 100-1123/{len(full)}"
    assert r.body == full[100:1124]
