"""The CLI: get (every resource), vin, feed download, formats and errors."""
from __future__ import annotations

import io
import json
import zipfile

import pandas as pd
import pytest

from vehicledata.cli import main
from vehicledata import schema

from vehicledata.testing import DEMO_ACCOUNTS

PREMIUM = DEMO_ACCOUNTS["premium"]


def test_get_trims_csv_matches_api(cli, api):
    code, out, err = cli("get", "trims", "--year", "2019", "--make", "BMW", "--format", "csv", "--all",
                         "--no-rate-limit")
    assert code == 0, err
    df = pd.read_csv(io.StringIO(out))
    expected = api.trims.search(year=2019, make="BMW").to_pandas()
    assert df["id"].tolist() == expected["id"].tolist()
    assert list(df.columns) == schema.record("trim").field_names()


def test_get_json_and_limit(cli, api):
    code, out, _ = cli("get", "engines", "--year", "2019", "--make", "BMW", "--format", "json", "--limit", "7",
                       "--page-size", "5")
    assert code == 0
    rows = json.loads(out)
    assert [r["id"] for r in rows] == [r.id for r in api.engines.search(year=2019, make="BMW").first(7)]


def test_get_where_and_table(cli, api):
    where = '[{"field":"horsepower_hp","op":">=","val":600}]'
    code, out, _ = cli("get", "engines", "--year", "2019", "--where", where, "--all")
    assert code == 0
    ids = [r.id for r in api.engines.search(where=where, year=2019)]
    assert out.splitlines()[0].split()[0] == "id"
    assert [int(line.split()[0]) for line in out.splitlines()[1:]] == ids


@pytest.mark.parametrize("resource,args", [
    ("makes", ["--year", "2019"]), ("models", ["--make", "BMW"]), ("submodels", ["--make", "BMW"]),
    ("bodies", ["--year", "2019"]), ("mileages", ["--year", "2019"]), ("exterior-colors", ["--year", "2019"]),
    ("interior-colors", ["--year", "2019"]), ("obd-codes", ["--code", "P01%"]), ("years", ["--make", "BMW"]),
    ("vehicle-attributes", ["--attribute", "engines.cylinders"]),
])
def test_every_resource(cli, resource, args):
    code, out, err = cli("get", resource, *args, "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert len(rows) > 0


def test_get_detail_by_id(cli, api):
    trim_id = api.trims.search(year=2019, make="BMW").first(1)[0].id
    code, out, _ = cli("get", "trims", "--id", str(trim_id), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["id"] == trim_id and data["engines"]


def test_parquet(cli, tmp_path, api):
    out_file = tmp_path / "trims.parquet"
    code, _, _ = cli("get", "trims", "--year", "2019", "--make", "BMW", "--all", "--format", "parquet",
                     "--output", str(out_file))
    assert code == 0
    df = pd.read_parquet(out_file)
    assert df["id"].tolist() == api.trims.search(year=2019, make="BMW").to_pandas()["id"].tolist()


def test_error_exit_status(cli, capsys):
    code, out, err = cli("get", "trims", "--year", "1800")  # an int, but not a year of the service
    assert code == 1
    assert "QueryError" in err and "year 1800 for /api/trims/v2 is outside the service's model years" in err
    with pytest.raises(SystemExit) as e:  # an int filter's option takes an int: a usage error
        cli("get", "trims", "--year", "abc")
    assert e.value.code == 2
    assert "argument --year: takes an integer, not 'abc'" in capsys.readouterr().err


def test_vin(cli, api):
    code, out, err = cli("vin", "1HGCM82633A004352")
    assert code == 0, err
    expected = api.vin("1HGCM82633A004352")
    data = json.loads(out)
    assert (data["year"], data["make"], data["model"]) == (expected.year, expected.make, expected.model)
    code, out, _ = cli("vin", "1HGCM82633A004352", "--format", "table")
    assert code == 0 and f"make: {expected.make}" in out


def test_feed_download(cli, tmp_path):
    code, out, err = cli("feed", "download", str(tmp_path / "f.zip"))
    assert code == 0, err
    assert zipfile.ZipFile(tmp_path / "f.zip").testzip() is None
    code, out, _ = cli("feed", "last-updated")
    assert code == 0 and out.strip()


def test_account(cli):
    cli("get", "makes")
    code, out, _ = cli("account", "today")
    assert code == 0 and int(out) >= 1


def _sections(text: str):
    out = {}
    for block in text.strip().split("\n\n"):
        title, _, body = block.partition("\n")
        assert title.startswith("# ")
        out[title[2:]] = pd.read_csv(io.StringIO(body))
    return out


def test_get_detail_csv_keeps_nested_arrays_and_prints_utc(cli, api):
    trim_id = api.trims.search(year=2019, make="BMW").first(1)[0].id
    rec = api.trims.get(trim_id)
    code, out, err = cli("get", "trims", "--id", str(trim_id), "--format", "csv")
    assert code == 0, err
    sections = _sections(out)
    nested = [f.name for f in schema.record("trim_detail").fields if f.type == "nested"]
    assert list(sections) == ["trim"] + nested
    for name in nested:
        assert len(sections[name]) == len(rec[name]), name
    assert sections["bodies"]["id"].tolist() == [b.id for b in rec.bodies]
    assert sections["engines"]["horsepower_hp"].tolist() == [e.horsepower_hp for e in rec.engines]
    # The trim's columns print as the search's CSV prints them (timestamps in UTC).
    code, search_csv, _ = cli("get", "trims", "--year", "2019", "--make", "BMW", "--format", "csv", "--all")
    row = pd.read_csv(io.StringIO(search_csv)).set_index("id").loc[trim_id]
    trim = sections["trim"].iloc[0]
    assert list(sections["trim"].columns) == schema.record("trim").field_names()
    assert (trim["created"], trim["modified"]) == (row["created"], row["modified"])
    assert trim["created"].endswith("+00:00")
    code, out, err = cli("get", "trims", "--id", str(trim_id))
    assert code == 0 and out.startswith("trim (1):") and f"\nengines ({len(rec.engines)}):\n" in out


def test_cli_errors_are_one_line(cli, monkeypatch, tmp_path):
    code, out, err = cli("get", "makes", "--output", str(tmp_path / "missing" / "x.csv"), "--format", "csv")
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "No such file or directory" in err and "missing" in err
    code, out, err = cli("get", "makes", "--timeout", "0")
    assert code == 1 and "Traceback" not in err and "timeout" in err and len(err.strip().splitlines()) == 1
    monkeypatch.setenv("VEHICLEDATA_BASE_URL", "ftp://x")
    code, out, err = cli("get", "makes")
    assert code == 1 and "ftp://x" in err and len(err.strip().splitlines()) == 1


def test_cli_rejects_non_positive_limit(cli, capsys):
    with pytest.raises(SystemExit) as info:
        main(["get", "trims", "--limit", "-90"])
    assert info.value.code == 2
    assert "--limit: must be a positive integer, not -90" in capsys.readouterr().err


def test_cli_broken_pipe_exits_quietly(emulator, tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, VEHICLEDATA_BASE_URL=emulator.url, VEHICLEDATA_API_TOKEN=PREMIUM["api_token"],
               VEHICLEDATA_API_SECRET=PREMIUM["api_secret"], PYTHONPATH=os.pathsep.join(sys.path))
    cmd = [sys.executable, "-m", "vehicledata", "get", "trims", "--year", "2019", "--all", "--format", "csv",
           "--no-rate-limit"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=root)
    assert proc.stdout is not None and proc.stderr is not None
    head = [proc.stdout.readline() for _ in range(3)]
    proc.stdout.close()  # like `| head -3`
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert head[0].startswith(b"id,")
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_the_cli_prints_demo_data_warning_without_file_and_line(emulator, monkeypatch, capsys):
    monkeypatch.setenv("VEHICLEDATA_BASE_URL", emulator.url)
    monkeypatch.delenv("VEHICLEDATA_API_TOKEN", raising=False)
    monkeypatch.delenv("VEHICLEDATA_API_SECRET", raising=False)
    # (no --year 2010: outside the demo years it is a QueryError, checked against /api/years/v2)
    assert main(["get", "trims", "--model", "Aztek", "--no-rate-limit"]) == 0
    err = capsys.readouterr().err
    assert "vehicledata: DemoDataWarning: /api/trims/v2: no rows; without a subscription" in err
    assert ".py:" not in err and "warnings.warn" not in err
