"""The client at home in notebooks and ETL jobs (issue 10): discovery, reprs, defaults, typed
conditions and nested frames, the CLI's table/columns/pipe handling, the feed loader's safety
(issue 13 item 9) and the emulator's lifetime."""
from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
import zipfile
from datetime import date, datetime, timezone

import pandas as pd
import pytest

import vehicledata as vd
from vehicledata import schema
from vehicledata.feed import MAX_MEMBER_BYTES, feed_tables
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

PREMIUM = DEMO_ACCOUNTS["premium"]


# ---- discovery --------------------------------------------------------------------------------
def test_package_dir_lists_lazy_names_and_hides_helpers():
    names = dir(vd)
    for name in ("F", "Client", "Pager", "Record", "DemoDataWarning", "QueryError"):
        assert name in names
    for name in ("Any", "annotations", "importlib"):
        assert name not in names
    with pytest.raises(AttributeError, match="did you mean 'Client'"):
        vd.Clinet  # noqa: B018


def test_resource_lists_come_from_the_schema_table(api):
    ep = schema.endpoint("/api/trims/v2")
    assert api.trims.filters == ep.filter_names()
    assert api.trims.json_fields == ep.json_field_names()
    assert api.trims.sort_keys == list(ep.sort_keys)
    assert {"filters", "json_fields", "sort_keys", "search", "get"} <= set(dir(api.trims))
    assert "trims" in dir(api) and "exterior_colors" in dir(api)
    doc = api.trims.search.__doc__
    for name in ep.filter_names() + list(ep.sort_keys) + ["engines.fuel_type"]:
        assert name in doc
    assert "horsepower_hp" in type(api.engines).__doc__


@pytest.mark.parametrize("call, kind, near", [
    (lambda api: api.trims.search(yaer=2019), "filter", "year"),
    (lambda api: api.trims.search(vd.F("modifed") >= "2020"), "json field", "modified"),
    (lambda api: api.trims.search(sort="MakeModelTrims.yaer"), "sort", "MakeModelTrims.year"),
    (lambda api: api.vehicle_attributes("engines.fuel_typ"), "attribute", "engines.fuel_type"),
])
def test_unknown_names_list_the_valid_ones_and_suggest(api, call, kind, near):
    with pytest.raises(vd.QueryError) as info:
        call(api)
    text = str(info.value)
    assert f"unknown {kind}" in text and f"did you mean {near!r}?" in text and "Valid: " in text
    assert api.stats()["requests"] == 0


# ---- reprs --------------------------------------------------------------------------------------
def test_record_page_pager_reprs(api, raw_json):
    pager = api.trims.search(year=2019, make="BMW", sort="MakeModelTrims.id")
    assert repr(pager) == "<Pager /api/trims/v2?year=2019&make=BMW&sort=MakeModelTrims.id not fetched>"
    first = raw_json("/api/trims/v2?year=2019&make=BMW&sort=MakeModelTrims.id")
    rec = next(iter(pager))
    want = first["data"][0]
    assert repr(rec) == (f"<Record trim id={want['id']} year=2019 make='BMW' model={want['model']!r} "
                         f"submodel={want['submodel']!r} trim={want['trim']!r} (15 fields; synthetic: msrp, invoice)>")
    total = first["collection"]["total"]
    assert repr(pager).endswith(f"total={total}, 1 page fetched>")  # not "1 pages"
    assert "<table>" in rec._repr_html_() and want["description"] in rec._repr_html_()
    detail = api.trims.get(want["id"])
    text = repr(detail)
    assert len(text) < 200 and "timezone(" not in text and "fields; synthetic: msrp, invoice" in text
    html = detail._repr_html_()
    assert "timedelta" not in html and want["modified"] in html  # ISO text with its offset, as served
    page = next(iter(pager.pages))
    assert repr(page).startswith("<Page 1 of 1:") and "<table" in page._repr_html_()
    assert "not fetched" in api.trims.search(year=2019)._repr_html_()


def test_error_and_feed_reprs(demo_api):
    with pytest.raises(vd.NotFoundError) as info:
        demo_api.obd_codes.get("P0999")
    html = info.value._repr_html_()
    assert html.startswith("<div><b>NotFoundError</b> 404") and "/api/obd-codes/P0999" in html
    assert repr(demo_api.data_feed).startswith("<DataFeed http://127.0.0.1:")
    assert "trims" in demo_api.data_feed._repr_html_()


# ---- defaults --------------------------------------------------------------------------------
def test_whole_result_methods_use_1000_record_pages(api, emulator):
    api.login()
    pager = api.trims.search(year=2019)
    before = emulator.stats()["requests"]
    df = pager.to_pandas()
    n = len(df)
    pages = -(-n // 1000)  # pages of 1000, not of 100
    assert n > 2000 and n % 1000 and pager.pages_fetched == pages
    assert emulator.stats()["requests"] - before == pages
    assert repr(pager) == f"<Pager /api/trims/v2?year=2019 total={n}, {pages} pages fetched>"
    assert pager.total == n
    frames = list(api.trims.search(year=2019).iter_pandas())
    assert [len(f) for f in frames] == [1000] * (pages - 1) + [n % 1000]
    assert [len(f) for f in api.trims.search(year=2019, limit=500).iter_pandas()] == \
        [500] * (-(-n // 500) - 1) + [n % 500 or 500]
    assert df["id"].tolist() == pd.concat(frames)["id"].tolist()
    assert len(api.trims.search(year=2019).to_arrow(page_size=200)) == len(df)


def test_demo_data_warning_and_obd_hint(demo_api, api):
    with pytest.warns(vd.DemoDataWarning, match="demo model years 2015-2020; year 2010"):
        assert demo_api.trims.search(vd.F("year") == 2010).total == 0
    # a year= keyword is checked against the service's years (test_client_names.py): an error
    with pytest.raises(vd.QueryError, match="outside the demo data-set's model years 2015-2020"):
        demo_api.trims.search(year=2010)
    with pytest.warns(vd.DemoDataWarning):
        demo_api.trims.search(vd.F("year").isin([2012, 2016]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        demo_api.trims.search(year=2016)
        demo_api.trims.search(vd.F("year") >= 2015)
        api.trims.search(year=2010)  # a subscription sees every year
    with pytest.raises(vd.NotFoundError, match="only its demo OBD codes"):
        demo_api.obd_codes.get("P0999")


def test_demo_data_warning_for_an_empty_result_without_a_year(demo_api, api):
    # Pontiac ends with model year 2010: an anonymous search for it finds nothing.
    with pytest.warns(vd.DemoDataWarning, match=r"/api/trims/v2: no rows; without a subscription .* demo model "
                                                r"years 2015-2020, so what you asked for may exist outside them"):
        assert demo_api.trims.search(model="Aztek").total == 0
    with pytest.warns(vd.DemoDataWarning, match="/api/models/v2: no rows"):
        assert len(demo_api.models.search(model="Aztek").to_pandas()) == 0
    with pytest.warns(vd.DemoDataWarning, match="/api/makes/v2: no rows"):
        assert demo_api.makes.search(make="Pontiac").total == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert demo_api.trims.search(make="BMW").total > 0  # rows: no warning
        assert demo_api.trims.search(model="Aztek", year=2016).total == 0  # a demo year asked for: no hint
        assert api.trims.search(make="Pontiac").total > 0  # a subscription sees every year


# ---- typed everywhere ---------------------------------------------------------------------------
def test_datetime_conditions_become_eastern_text(api, raw_json):
    assert vd.query.encode(vd.F("modified") >= datetime(2023, 6, 30, 1, 1, 6, tzinfo=timezone.utc)) == \
        '[{"field":"modified","op":">=","val":"2023-06-29T21:01:06-04:00"}]'
    assert vd.query.encode(vd.F("created") < pd.Timestamp("2020-01-15 12:00", tz="UTC")) == \
        '[{"field":"created","op":"<","val":"2020-01-15T07:00:00-05:00"}]'
    assert vd.query.encode([{"field": "modified", "op": ">=", "val": date(2020, 1, 1)}]) == \
        '[{"field":"modified","op":">=","val":"2020-01-01"}]'
    df = api.trims.search(year=2019).to_pandas()
    cut = df["modified"].sort_values().iloc[len(df) // 2]
    got = api.trims.search(vd.F("modified") > cut, year=2019).to_pandas()
    assert sorted(got["id"]) == sorted(df.loc[df["modified"] > cut, "id"])
    assert 0 < len(got) < len(df)


def test_nested_frames_and_json_safe_dicts(api):
    trim_id = int(api.trims.search(year=2019, make="BMW").first(1)[0].id)
    detail = api.trims.get(trim_id)
    engines = detail.frame("engines")
    reference = api.engines.search(vd.F("trim_id") == trim_id).to_pandas()
    assert len(engines) == len(detail.engines) == len(reference)
    for col in engines.columns.intersection(reference.columns):
        assert engines[col].dtype == reference[col].dtype, col
    assert engines["id"].tolist() == reference["id"].tolist()
    with pytest.raises(KeyError, match="nested lists: bodies, engines"):
        detail.frame("make")
    text = json.dumps(detail.to_dict(json_safe=True))
    back = json.loads(text)
    assert back["id"] == trim_id and back["modified"] == detail.modified.isoformat()
    with pytest.raises(TypeError):
        json.dumps(detail.to_dict())


# ---- CLI ------------------------------------------------------------------------------------------
def test_cli_vin_table_prints_the_trims(cli, api):
    expected = api.vin("1HGCM82633A004352")
    code, out, err = cli("vin", "1HGCM82633A004352", "--format", "table")
    assert code == 0, err
    head, _, table = out.partition(f"\ntrims ({len(expected.trims)}):\n")
    assert f"make: {expected.make}" in head and table
    rows = table.strip().splitlines()
    assert rows[0].split()[:4] == ["id", "year", "make", "model"]
    assert [int(r.split()[0]) for r in rows[1:]] == [t.id for t in expected.trims]


def test_cli_columns_and_the_showing_line(cli, api):
    code, out, err = cli("get", "trims", "--year", "2019", "--format", "csv", "--columns", "id,make")
    assert code == 0, err
    df = pd.read_csv(io.StringIO(out))
    assert list(df.columns) == ["id", "make"] and len(df) == 100
    assert err == f"showing 100 of {api.trims.search(year=2019).total:,}; --all for everything\n"
    code, out, err = cli("get", "trims", "--year", "2019", "--columns", "id,modle")
    assert code == 1 and "did you mean 'model'?" in err
    code, out, err = cli("get", "trims", "--year", "2019", "--all", "--format", "csv")
    assert code == 0 and err == "" and len(pd.read_csv(io.StringIO(out))) == api.trims.search(year=2019).total


def test_cli_one_timestamp_style(cli, api):
    code, out, _ = cli("vin", "1HGCM82633A004352")
    vin_created = json.loads(out)["trims"][0]["created"]
    code, out, _ = cli("get", "trims", "--year", "2019", "--limit", "1", "--format", "json")
    get_created = json.loads(out)[0]["created"]
    code, out, _ = cli("get", "trims", "--id", str(json.loads(out)[0]["id"]), "--format", "json")
    detail_created = json.loads(out)["created"]
    pattern = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"
    for value in (vin_created, get_created, detail_created):
        assert __import__("re").match(pattern, value), value
    assert get_created == detail_created


def test_cli_broken_pipe_exits_0(emulator):
    env = dict(os.environ, VEHICLEDATA_BASE_URL=emulator.url, VEHICLEDATA_API_TOKEN=PREMIUM["api_token"],
               VEHICLEDATA_API_SECRET=PREMIUM["api_secret"])
    proc = subprocess.run(f"'{sys.executable}' -m vehicledata get trims --all --format csv | head -2; "
                          "echo \"status=${PIPESTATUS[0]}\"", shell=True, executable="/bin/bash", env=env,
                          capture_output=True, text=True, timeout=120)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("id,make_id") and lines[-1] == "status=0", proc.stderr
    assert "Traceback" not in proc.stderr


# ---- data feed loader (issue 13 item 9) ---------------------------------------------------------
@pytest.fixture(scope="module")
def feed_zip(tmp_path_factory, emulator_session, client_factory):
    with client_factory(emulator_session.url) as api:
        return api.data_feed.download(tmp_path_factory.mktemp("feed") / "feed.zip")


def _rewrite(src, dst, replace=None, add=(), only=("makes.csv",)):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename not in only:
                continue
            data = zin.read(info)
            if replace and info.filename in replace:
                data = replace[info.filename](data)
            zout.writestr(info.filename, data)
        for name, data in add:
            zout.writestr(name, data)
    return dst


def test_feed_load_has_the_api_dtypes_and_tables(api, feed_zip):
    frames = api.data_feed.load(feed_zip, tables=["trims", "makes"])
    assert sorted(frames) == ["makes", "trims"]
    reference = api.trims.search(year=2019, make="BMW").to_pandas()
    trims = frames["trims"]
    for col in reference.columns:
        assert trims[col].dtype == reference[col].dtype, col
    mine = trims[(trims.year == 2019) & (trims.make == "BMW")].sort_values("id").reset_index(drop=True)
    ref = reference.sort_values("id").reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, ref, check_like=False)
    with pytest.raises(vd.QueryError, match="did you mean 'trims'"):
        api.data_feed.load(feed_zip, tables=["trim"])
    with pytest.raises(ValueError, match="engine must be 'pyarrow'"):
        api.data_feed.load(feed_zip, engine="c")


def test_feed_member_in_a_subfolder_does_not_replace_the_table(api, feed_zip, tmp_path):
    bad = _rewrite(feed_zip, tmp_path / "f.zip", add=[("zz/makes.csv", "id,name\n1,Fake\n")])
    frames = api.data_feed.load(bad)
    assert list(frames) == ["makes"]
    reference = api.data_feed.load(feed_zip, tables=["makes"])["makes"]
    pd.testing.assert_frame_equal(frames["makes"], reference)
    assert "Fake" not in set(frames["makes"]["name"])
    dup = tmp_path / "dup.zip"
    _rewrite(feed_zip, dup)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name it is asked to write
        with zipfile.ZipFile(dup, "a") as zf:
            zf.writestr("makes.csv", "id,name\n1,Fake\n")
    with pytest.raises(vd.DecodeError, match="holds 'makes.csv' twice"):
        api.data_feed.load(dup)


def test_feed_member_size_cap_fails_before_inflating(api, tmp_path):
    assert MAX_MEMBER_BYTES == 512 * 1024 * 1024
    path = tmp_path / "bomb.zip"
    header = b"id,name\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        with zf.open("makes.csv", "w", force_zip64=True) as fh:
            fh.write(header)
            chunk = b"1,x\n" * (1 << 20)  # 4 MiB
            for _ in range(256):  # 1 GiB of CSV in about 5 MB of ZIP
                fh.write(chunk)
    assert path.stat().st_size < 8 * 1024 * 1024
    with pytest.raises(vd.DecodeError, match=r"'makes.csv' is 1,073,741,832 bytes uncompressed, over "
                                             r"max_member_bytes=536,870,912"):
        api.data_feed.load(path)
    with pytest.raises(vd.DecodeError, match="over max_member_bytes=100"):
        api.data_feed.load(path, max_member_bytes=100)


def test_feed_non_integer_is_a_typed_decode_error(api, feed_zip, tmp_path):
    def spoil(data: bytes) -> bytes:
        lines = data.split(b"\n")
        cells = lines[3].split(b",")
        cells[0] = b"12x"
        lines[3] = b",".join(cells)
        return b"\n".join(lines)

    bad = _rewrite(feed_zip, tmp_path / "bad.zip", replace={"makes.csv": spoil})
    with pytest.raises(vd.DecodeError) as info:
        api.data_feed.load(bad, tables=["makes"])
    err = info.value
    assert (err.member, err.row, err.column) == ("makes.csv", 4, "id")
    assert "data feed member 'makes.csv', line 4, column 'id'" in str(err) and "12x" in str(err)


def test_feed_crc_damage_is_a_decode_error(api, feed_zip, tmp_path):
    data = bytearray(feed_zip.read_bytes())
    with zipfile.ZipFile(feed_zip) as zf:
        info = zf.getinfo("makes.csv")
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF
    bad = tmp_path / "crc.zip"
    bad.write_bytes(bytes(data))
    with pytest.raises(vd.DecodeError, match="'makes.csv' is damaged"):
        api.data_feed.load(bad, tables=["makes"])


def test_feed_to_parquet(api, feed_zip, tmp_path):
    written = api.data_feed.to_parquet(tmp_path / "pq", feed_zip, tables=["makes", "engines"])
    assert sorted(written) == ["engines", "makes"]
    back = pd.read_parquet(written["makes"])
    frames = api.data_feed.load(feed_zip, tables=["makes"])
    assert back["id"].tolist() == frames["makes"]["id"].tolist()
    assert set(feed_tables()) >= {"trims", "makes", "obd_codes"}


# ---- emulator lifetime ----------------------------------------------------------------------------
def _ended(pid: int) -> bool:
    """No such process, or a zombie waiting for init to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_emulator_dies_with_a_killed_parent(database, tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        from vehicledata.testing import Emulator
        emu = Emulator(db={str(database)!r}).start()
        print(emu._proc.pid, flush=True)
        time.sleep(120)
    """))
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    try:
        server_pid = int(parent.stdout.readline())
        os.kill(server_pid, 0)  # running
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        # an orphan would live on for ever: 30 s is a hang guard far above any machine's pace, not a speed check
        deadline = time.monotonic() + 30.0
        gone = False
        while time.monotonic() < deadline and not gone:
            gone = _ended(server_pid)
            time.sleep(0.05)
        if not gone:
            os.kill(server_pid, signal.SIGKILL)
        assert gone, "the emulator outlived its parent by 30 s"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)


# ---- ETL --------------------------------------------------------------------------------------------
def test_arrow_stream_and_iter_arrow(api):
    import pyarrow as pa

    reference = api.trims.search(year=2019).to_arrow()
    pager = api.trims.search(year=2019)
    streamed = pa.table(pager)  # __arrow_c_stream__
    assert streamed.schema == reference.schema == pager.arrow_schema()
    assert streamed["id"].to_pylist() == reference["id"].to_pylist()
    n = len(reference)
    assert [len(t) for t in api.trims.search(year=2019).iter_arrow(page_size=700)] == \
        [700] * (-(-n // 700) - 1) + [n % 700 or 700]


def test_resume_token_continues_in_another_pager(api):
    query = dict(year=2019, limit=300, sort="MakeModelTrims.id")
    pages = api.trims.search(**query).pages
    first = next(iter(pages))
    token = first.resume_token
    assert token == api.trims.search(**query).pages.__next__().resume_token  # stable
    rest = api.trims.search(start_token=token, **query).to_pandas()
    everything = api.trims.search(**query).to_pandas()
    assert [r.id for r in first] + rest["id"].tolist() == everything["id"].tolist()
    with pytest.raises(vd.QueryError, match="another query"):
        api.trims.search(start_token=token, year=2020, limit=300)
    with pytest.raises(vd.QueryError, match="not a resume token"):
        api.trims.search(start_token="page 2", **query)


_CRASHING_WRITER = """
import os, signal, sys
import vehicledata as vd
import vehicledata.pager as pager_mod
calls = {"n": 0}
real = os.replace
def replace(src, dst):
    if str(dst).endswith(pager_mod.CHECKPOINT_NAME):
        calls["n"] += 1
        if calls["n"] == 3:  # page 3's files are written, its checkpoint is not
            os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst)
os.replace = replace
with vd.Client(base_url=sys.argv[1], api_token=sys.argv[2], api_secret=sys.argv[3], rate_limit=None) as api:
    api.trims.search(year=2019).to_parquet(sys.argv[4], partition_cols=["make"], page_size=200, rows_per_file=200)
"""


def test_to_parquet_resumes_after_a_crash_with_exactly_the_same_ids(api, emulator, tmp_path):
    import pyarrow.dataset as ds

    clean = api.trims.search(year=2019).to_parquet(tmp_path / "clean", partition_cols=["make"], page_size=200)
    expected = sorted(api.trims.search(year=2019).to_pandas()["id"].tolist())
    assert sorted(ds.dataset(clean, partitioning="hive").to_table()["id"].to_pylist()) == expected
    assert (clean / "make=BMW").is_dir()

    script = tmp_path / "writer.py"
    script.write_text(_CRASHING_WRITER)
    target = tmp_path / "crashed"
    proc = subprocess.run([sys.executable, str(script), emulator.url, PREMIUM["api_token"], PREMIUM["api_secret"],
                           str(target)], env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    state = json.loads((target / "_vehicledata_checkpoint.json").read_text())
    assert state["pages_done"] == 2 and not state["complete"]
    assert any(p.name.startswith("part-r0001-000003-") for p in target.rglob("*.parquet"))  # the unrecorded page
    api.trims.search(year=2019).to_parquet(target, partition_cols=["make"], page_size=200, rows_per_file=200)
    ids = ds.dataset(target, partitioning="hive").to_table()["id"].to_pylist()
    assert sorted(ids) == expected and len(ids) == len(set(ids))
    assert json.loads((target / "_vehicledata_checkpoint.json").read_text())["complete"]
    with pytest.raises(vd.QueryError, match="another query"):
        api.trims.search(year=2020).to_parquet(target, partition_cols=["make"], page_size=200)


def test_one_debug_line_per_request_without_secrets(emulator, client_factory, caplog):
    import logging
    import re as _re

    caplog.set_level(logging.DEBUG, logger="vehicledata")
    with client_factory(emulator.url) as api:
        pages = api.trims.search(year=2019).to_pandas().shape[0] // 1000 + 1
        jwt = api._core.jwt if hasattr(api._core, "jwt") else ""
    lines = [r.getMessage() for r in caplog.records]
    assert f"GET {emulator.url}/api/years/v2 -> 200, " in "\n".join(lines)  # the year= check's list (once)
    gets = [m for m in lines if m.startswith("GET ") and "/api/years/v2 " not in m]
    assert len(gets) == pages, lines  # pages of 1000
    pattern = _re.compile(_re.escape(emulator.url) + r"/api/trims/v2\?year=2019&limit=1000(&page=\d+)? -> 200, "
                          r"\d+ bytes, \d+\.\d ms$")
    assert all(pattern.match(m[4:]) for m in gets), gets
    assert any(m.startswith(f"POST {emulator.url}/api/auth/login -> 200, ") for m in lines), lines
    text = caplog.text
    assert PREMIUM["api_secret"] not in text and (not jwt or jwt not in text)


def test_notebook_bars_stay_and_a_missing_ipywidgets_is_one_hint(api, monkeypatch, capsys):
    from vehicledata import _fetcher as fetcher_mod

    monkeypatch.setattr(fetcher_mod, "_in_jupyter", lambda: True)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # import fails
    monkeypatch.setattr(fetcher_mod, "_HINTED", {})
    bars = [api._fetcher.progress_bar(None, total=3, desc="x", unit="page") for _ in range(2)]
    assert all(b is not None and b.leave for b in bars)
    for b in bars:
        b.close()
    err = capsys.readouterr().err
    assert err.count("pip install ipywidgets") == 1
    monkeypatch.setattr(fetcher_mod, "_in_jupyter", lambda: False)
    bar = api._fetcher.progress_bar(True, total=3, desc="x", unit="page")
    assert bar is not None and not bar.leave
    bar.close()


def test_sync_returns_what_changed_after_the_watermark(api):
    everything, mark = api.trims.sync(since=None, year=2019, make="BMW")
    reference = api.trims.search(year=2019, make="BMW").to_pandas()
    assert sorted(everything["id"]) == sorted(reference["id"])
    assert mark == reference["modified"].max()
    again, same = api.trims.sync(since=mark, year=2019, make="BMW")
    assert len(again) == 0 and same == mark
    stamps = sorted(reference["modified"].dropna().unique())
    assert len(stamps) > 2
    cut = stamps[len(stamps) // 2]
    newer, newer_mark = api.trims.sync(since=cut, year=2019, make="BMW")
    assert sorted(newer["id"]) == sorted(reference.loc[reference["modified"] > cut, "id"])
    assert 0 < len(newer) < len(reference) and newer_mark == mark
    with pytest.raises(vd.QueryError, match="no modified field"):
        api.makes.sync()


def test_sync_sees_records_touched_through_the_emulator_control(database, client_factory):
    # A private emulator: the touch must not reach the session emulator other tests share.
    with Emulator(db=database) as emu, client_factory(emu.url) as api:
        everything, mark = api.trims.sync(since=None, year=2019, make="BMW")
        chosen = sorted(everything["id"])[1:4]
        assert len(chosen) == 3 and len(everything) > 3
        answer = emu.touch("trims", [int(i) for i in chosen])  # the emulator clock's now
        assert answer["touched"] == 3 and answer["missing"] == []
        changed, new_mark = api.trims.sync(since=mark, year=2019, make="BMW")
        assert sorted(changed["id"]) == chosen
        assert new_mark == pd.Timestamp(answer["modified"]) and new_mark > mark
        assert api.trims.get(int(chosen[0])).modified == new_mark
        again, same = api.trims.sync(since=new_mark, year=2019, make="BMW")
        assert len(again) == 0 and same == new_mark
        emu.reset()
        after_reset, reset_mark = api.trims.sync(since=mark, year=2019, make="BMW")
        assert len(after_reset) == 0 and reset_mark == mark
