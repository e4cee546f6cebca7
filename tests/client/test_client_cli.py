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


@pytest.fixture()
def cli(emulator, monkeypatch, capsys):
    monkeypatch.setenv("VEHICLEDATA_BASE_URL", emulator.url)
    monkeypatch.setenv("VEHICLEDATA_API_TOKEN", PREMIUM["api_token"])
    monkeypatch.setenv("VEHICLEDATA_API_SECRET", PREMIUM["api_secret"])

    def run(*argv: str):
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


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


def test_error_exit_status(cli):
    code, out, err = cli("get", "trims", "--year", "abc")
    assert code == 1
    assert "BadRequestError" in err and "Invalid value for year" in err


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
