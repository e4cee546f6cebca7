"""vd.show_versions() (issue 21, docs/installing.md): the libraries as the running core reports them,
compared with what the same system libraries report through other doors (Python's sqlite3 and ssl
modules, the curl command line), the CA bundle the client uses, and where the data package is."""
from __future__ import annotations

import io
import os
import re
import shutil
import sqlite3
import ssl
import subprocess

import vehicledata as vd
from vehicledata import _tls
from vehicledata._versions import versions


def test_show_versions_prints_one_line_per_item() -> None:
    buf = io.StringIO()
    vd.show_versions(file=buf)
    lines = buf.getvalue().splitlines()
    names = [line.split(":", 1)[0] for line in lines]
    assert names == ["vehicledata", "Python", "platform", "libcurl", "simdjson", "SQLite", "OpenSSL", "CA bundle",
                     "pyvehicledata-data"]
    assert lines[0].split() == ["vehicledata:", vd.__version__]


def test_libraries_report_the_versions_the_system_has() -> None:
    got = versions()
    assert got["SQLite"] == sqlite3.sqlite_version  # the developer build links the system's libsqlite3
    assert got["OpenSSL"] == ssl.OPENSSL_VERSION  # Python links the same libssl
    assert re.fullmatch(r"\d+\.\d+\.\d+", got["simdjson"]), got["simdjson"]
    curl = got["libcurl"]
    version, detail = re.fullmatch(r"(\S+) \((.*)\)", curl).groups()  # type: ignore[union-attr]
    assert "features:" in detail and "protocols:" in detail and " https" in detail
    assert re.search(r"TLS OpenSSL/\d", detail), detail
    if shutil.which("curl"):  # the curl command line of the same Debian libcurl
        # Not with this process's LD_PRELOAD: under `make sanitize` the ASan runtime hangs curl.
        env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
        out = subprocess.run(["curl", "--version"], capture_output=True, text=True, timeout=30, env=env).stdout
        assert f"libcurl/{version} " in out
        theirs = set(re.search(r"^Features: (.*)$", out, re.M).group(1).split())  # type: ignore[union-attr]
        mine = set(detail.split("features: ")[1].split(";")[0].split())
        assert mine <= theirs | {"SSL", "libz"}, mine - theirs


def test_ca_bundle_and_data_package_lines() -> None:
    got = versions()
    assert got["CA bundle"] == (_tls.ca_bundle() or "libcurl's compiled-in default")
    assert got["pyvehicledata-data"] == ('not installed (run `vehicledata dataset fetch` in a clone of the repository '
                                         '(its data/ folder holds the small sources), or install the '
                                         'pyvehicledata-data wheel (make data-wheel; docs/installing.md))')
