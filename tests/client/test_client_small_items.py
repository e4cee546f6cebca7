"""Small items of issue 22, point 7, each against the real emulator: a VIN answer's make in the
catalogue's case, vd.vin.validate and the model-year code U, the pager's repr in the singular, the
CLI's DemoDataWarning without a Python file and line, the download bar's final value."""
from __future__ import annotations

import shutil

import pytest

import vehicledata as vd
from vehicledata import _fetcher


def test_a_vin_answer_names_the_make_as_the_catalogue_does(api):
    r = api.vin("4T1BB3EK5AU118081")
    assert (r.year, r.make, r.model) == (2010, "Toyota", "Camry")  # vPIC says TOYOTA
    assert api.makes.search(make="Toyota").first(1)[0].name == r.make
    assert api.vin("1GTG6CEN0L1139305").make == "GMC"


@pytest.mark.parametrize("code", ["U", "Z", "0"])
def test_validate_refuses_a_model_year_code_no_year_has(code):
    vin = "1GTG6CEN0L1139305"
    with pytest.raises(vd.QueryError, match=f"position 10 \\(model year\\) must be one of A-H, J-N, P, R-T, V-Y, "
                                            f"1-9, got '{code}'"):
        vd.vin.validate(vin[:9] + code + vin[10:])


def test_the_pager_repr_counts_in_the_singular(api):
    pager = api.trims.search(year=2020, make="Toyota", model="Camry", limit=1000)
    pager.total
    assert repr(pager).endswith(f"total={pager.total}, 1 page fetched>")
    assert "1 page fetched" in pager._repr_html_()


def test_the_cli_prints_demo_data_warning_without_file_and_line(emulator, monkeypatch, capsys):
    from vehicledata.cli import main

    monkeypatch.setenv("VEHICLEDATA_BASE_URL", emulator.url)
    monkeypatch.delenv("VEHICLEDATA_API_TOKEN", raising=False)
    monkeypatch.delenv("VEHICLEDATA_API_SECRET", raising=False)
    # (no --year 2010: outside the demo years it is a QueryError, checked against /api/years/v2)
    assert main(["get", "trims", "--model", "Aztek", "--no-rate-limit"]) == 0
    err = capsys.readouterr().err
    assert "vehicledata: DemoDataWarning: /api/trims/v2: no rows; without a subscription" in err
    assert ".py:" not in err and "warnings.warn" not in err


def test_the_download_bar_ends_at_the_file_size(api, tmp_path, monkeypatch):
    from tqdm import tqdm
    import io

    first = api.data_feed.download(tmp_path / "a.zip")
    size = first.stat().st_size
    bars = []

    def bar(self, progress, total, desc, unit, probe=False):
        b = tqdm(total=total, desc=desc, unit=unit, unit_scale=True, file=io.StringIO())
        bars.append(b)
        return b

    monkeypatch.setattr(_fetcher.Fetcher, "progress_bar", bar)
    shutil.copy(first, tmp_path / "b.zip.part")  # complete already: the server answers 416, nothing arrives
    api.data_feed.download(tmp_path / "b.zip", progress=True)
    assert bars and bars[-1].n == size and bars[-1].total == size
    assert "0.00B" not in str(bars[-1])
