"""Data feed: last-updated, and the ZIP of one CSV per resource (columns as the v2 records)."""
from __future__ import annotations

import csv
import io
import re
import zipfile
import zlib
from typing import Dict

import pytest

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


# ---- Accept-Ranges, ETag and If-Range (issue 38, point 7) -----------------------------------
DOWNLOAD = "/api/data-feeds/download"
PATHS = {"direct": {}, "httplib": {"X-Empty": ""}}  # a field of empty value: the direct path declines it


@pytest.mark.parametrize("path", PATHS)
def test_download_sends_accept_ranges_and_a_strong_etag(api: Http, tokens: Dict[str, str], path: str) -> None:
    extra = PATHS[path]
    r = api.get(DOWNLOAD, token=tokens["premium"], headers=extra)
    assert r.status == 200
    assert r.headers["accept-ranges"] == "bytes"
    etag = r.headers["etag"]
    m = re.fullmatch(r'"([0-9a-f]+)-([0-9a-f]{8})"', etag)
    assert m, etag  # strong: no W/
    assert (int(m.group(1), 16), int(m.group(2), 16)) == (len(r.body), zlib.crc32(r.body))
    part = api.get(DOWNLOAD, token=tokens["premium"], headers={**extra, "Range": "bytes=0-9"})
    assert part.status == 206
    assert (part.headers["accept-ranges"], part.headers["etag"]) == ("bytes", etag)
    head = api.request("HEAD", DOWNLOAD, token=tokens["premium"], headers=extra)
    assert head.status == 200 and head.body == b""
    assert {k: v for k, v in head.headers.items() if k != "date"} == {
        k: v for k, v in r.headers.items() if k != "date"}
    # the errors of the download carry no Accept-Ranges (GET and HEAD alike)
    for method in ("GET", "HEAD"):
        assert "accept-ranges" not in api.request(method, DOWNLOAD, headers=extra).headers  # 401
        unsat = api.request(method, DOWNLOAD, token=tokens["premium"], headers={**extra, "Range": "bytes=99999999-"})
        assert unsat.status == 416 and "accept-ranges" not in unsat.headers
    # nor does any other path
    assert "accept-ranges" not in api.get("/api/makes/v2?limit=1", headers=extra).headers


@pytest.mark.parametrize("path", PATHS)
def test_if_range_that_matches_answers_206(api: Http, tokens: Dict[str, str], path: str) -> None:
    extra = PATHS[path]
    full = api.get(DOWNLOAD, token=tokens["premium"])
    etag = full.headers["etag"]
    r = api.get(DOWNLOAD, token=tokens["premium"], headers={**extra, "Range": "bytes=100-199", "If-Range": etag})
    assert r.status == 206
    assert r.headers["content-range"] == f"bytes 100-199/{len(full.body)}"
    assert r.headers["content-length"] == "100"
    assert r.body == full.body[100:200]
    # a matching If-Range leaves an unsatisfiable Range unsatisfiable
    r = api.get(DOWNLOAD, token=tokens["premium"], headers={**extra, "Range": "bytes=99999999-", "If-Range": etag})
    assert r.status == 416
    assert r.headers["content-range"] == f"bytes */{len(full.body)}"


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("if_range", ['"0-00000000"', "W/{etag}", "{bare}", "Wed, 25 Nov 2026 19:46:06 GMT",
                                      "garbage"])
def test_if_range_that_does_not_match_answers_200_with_the_whole_archive(api: Http, tokens: Dict[str, str],
                                                                          path: str, if_range: str) -> None:
    extra = PATHS[path]
    full = api.get(DOWNLOAD, token=tokens["premium"])
    etag = full.headers["etag"]
    value = if_range.format(etag=etag, bare=etag.strip('"'))
    for rng in ("bytes=100-199", "bytes=-50", "bytes=99999999-"):  # an unsatisfiable Range is ignored too
        r = api.get(DOWNLOAD, token=tokens["premium"], headers={**extra, "Range": rng, "If-Range": value})
        assert r.status == 200, (rng, value, r.status)
        assert "content-range" not in r.headers
        assert r.headers["content-length"] == str(len(full.body))
        assert (r.headers["accept-ranges"], r.headers["etag"]) == ("bytes", etag)
        assert r.body == full.body


def test_if_range_without_range_is_ignored(api: Http, tokens: Dict[str, str]) -> None:
    full = api.get(DOWNLOAD, token=tokens["premium"])
    r = api.get(DOWNLOAD, token=tokens["premium"], headers={"If-Range": '"0-00000000"'})
    assert r.status == 200 and r.body == full.body
