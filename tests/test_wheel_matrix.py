"""The wheel matrix (issue 21, docs/installing.md "The wheel matrix").

Fast (in `make test`): the identifiers the pinned cibuildwheel builds from pyproject's
[tool.cibuildwheel] (configured for a real CI, not run here).
Marked `wheels` (run by `make wheels-test` after `make wheels` and tools/wheels/test.sh, never by
`make test`): every wheel in dist/ keeps the manylinux_2_31 floor, bundles only allowed libraries
(at most 10), stays within 6 MB, passed its Debian root's checks, and docs/installing.md lists it
with its size and library count.
"""
from __future__ import annotations

import os
import re
import subprocess
import tomllib
import zipfile
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
CIBUILDWHEEL = ROOT / ".venv" / "bin" / "cibuildwheel"
FLOOR = 31  # manylinux_2_31: Debian 11's glibc
# The libraries a wheel may bundle (pyvehicledata.libs/): the lean libcurl and what it and the
# emulator need that manylinux does not promise. simdjson and cpp-httplib are linked in statically.
ALLOWED = {"libcurl", "libssl", "libcrypto", "libnghttp2", "libsqlite3", "libminizip"}
MAX_LIBS, MAX_BYTES = 10, 6_000_000
TAGS = ("cp39", "cp311", "cp313", "cp314")
PYS = ("cp310", "cp311", "cp312", "cp313", "cp314")


def identifiers(platform: str) -> List[str]:
    assert CIBUILDWHEEL.is_file(), "cibuildwheel is pinned in pyproject's dev extras: `make install`"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    proc = subprocess.run([str(CIBUILDWHEEL), "--print-build-identifiers", "--platform", platform], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_cibuildwheel_configures_cp310_to_cp314_on_linux_and_macos() -> None:
    linux = set(identifiers("linux"))
    assert linux == {f"{py}-{plat}" for py in PYS
                     for plat in ("manylinux_x86_64", "manylinux_aarch64", "musllinux_x86_64")}
    macos = set(identifiers("macos"))
    assert macos == {f"{py}-macosx_{arch}" for py in PYS for arch in ("x86_64", "arm64")}


def platform_wheels() -> List[Path]:
    return sorted(DIST.glob(f"pyvehicledata-{VERSION}-cp3*-manylinux_2_*_x86_64.whl"))


def bundled(wheel: Path) -> List[str]:
    with zipfile.ZipFile(wheel) as zf:
        return sorted(Path(n).name for n in zf.namelist() if n.startswith("pyvehicledata.libs/") and not n.endswith("/"))


@pytest.mark.wheels
def test_make_wheels_built_every_python_and_the_data_wheel() -> None:
    tags = sorted(re.search(r"-(cp3\d+)-cp3\d+-", w.name).group(1) for w in platform_wheels())  # type: ignore[union-attr]
    assert tags == sorted(TAGS), platform_wheels()
    assert len(list(DIST.glob("vehicledata_data-*-py3-none-any.whl"))) == 1


@pytest.mark.wheels
@pytest.mark.parametrize("tag", TAGS)
def test_wheel_keeps_the_floor_and_bundles_only_allowed_libraries(tag: str) -> None:
    (wheel,) = [w for w in platform_wheels() if f"-{tag}-{tag}-" in w.name]
    glibc = int(re.search(r"manylinux_2_(\d+)_x86_64", wheel.name).group(1))  # type: ignore[union-attr]
    assert glibc <= FLOOR, f"{wheel.name}: manylinux_2_{glibc} is above the manylinux_2_{FLOOR} floor"
    libs = bundled(wheel)
    names = {lib.split("-")[0].split(".so")[0] for lib in libs}
    assert names <= ALLOWED, f"{wheel.name} bundles {sorted(names - ALLOWED)} outside the allowed list"
    assert len(libs) <= MAX_LIBS, libs
    assert wheel.stat().st_size <= MAX_BYTES, (wheel.name, wheel.stat().st_size)
    auditwheel = ROOT / ".venv" / "bin" / "auditwheel"
    proc = subprocess.run([str(auditwheel), "show", str(wheel)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": f"{auditwheel.parent}:{os.environ['PATH']}"})
    assert proc.returncode == 0, proc.stderr
    shown = " ".join(proc.stdout.split())
    assert f'consistent with the following platform tag: "manylinux_2_{glibc}_x86_64"' in shown, shown


@pytest.mark.wheels
@pytest.mark.parametrize("tag", TAGS)
def test_wheel_passed_its_debian_root_and_is_listed_in_the_docs(tag: str) -> None:
    log = DIST / f"wheels-test-{tag}.log"
    assert log.is_file(), "run tools/wheels/test.sh (make wheels-test)"
    assert log.read_text().splitlines()[-1] == "PASSED", log.read_text()[-3000:]
    (wheel,) = [w for w in platform_wheels() if f"-{tag}-{tag}-" in w.name]
    docs = (ROOT / "docs" / "installing.md").read_text()
    row = next((line for line in docs.splitlines() if f"`{wheel.name}`" in line), None)
    assert row is not None, f"docs/installing.md does not list {wheel.name}"
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert f"{wheel.stat().st_size / 1e6:.1f} MB" in cells, (row, wheel.stat().st_size)
    assert str(len(bundled(wheel))) in cells, (row, bundled(wheel))
