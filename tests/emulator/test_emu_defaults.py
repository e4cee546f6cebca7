"""The emulator is the one home of its defaults: --print-defaults, and the Python helper reading it;
the helper's control token; touch moving the data feed's last-updated time."""
from __future__ import annotations

import base64
import inspect
import io
import json
import re
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, Dict

import pytest

from emu_support import Http
from vehicledata.testing import DEMO_ACCOUNTS, Emulator, EmulatorError, emulator_defaults, find_executable
from vehicledata.testing.emulator import NUMBER_OPTIONS, build_args

ROOT = Path(__file__).resolve().parents[2]

# The document pinned: a change of a default or a demo account is a deliberate edit here too.
PRINTED = {
    "options": {"host": "127.0.0.1", "port": 0, "rate_limit": 600, "login_rate_limit": 20, "window_seconds": 60,
                "token_ttl": 604800, "threads": 16, "compute_workers": 0, "max_connections": 4096, "max_headers": 100,
                "max_header_bytes": 16384, "request_timeout": 10, "idle_timeout": 5,
                "write_timeout": 30, "max_per_address": 0, "response_cache_mb": 64},
    "accounts": {
        "premium": {"api_token": "demo-premium-token", "api_secret": "demo-premium-secret",
                    "subscribed": True, "data_feed": True, "rate_limit_type": "hard"},
        "basic": {"api_token": "demo-basic-token", "api_secret": "demo-basic-secret",
                  "subscribed": True, "data_feed": False, "rate_limit_type": "soft"},
        "free": {"api_token": "demo-free-token", "api_secret": "demo-free-secret",
                 "subscribed": False, "data_feed": False, "rate_limit_type": "hard"},
    },
}


def printed() -> str:
    p = subprocess.run([find_executable(), "--print-defaults"], capture_output=True, timeout=30)
    assert p.returncode == 0 and p.stderr == b"", p.stderr
    return p.stdout.decode()


# ---- --print-defaults ------------------------------------------------------------------------
def test_print_defaults_prints_one_json_line_and_exits() -> None:
    text = printed()
    assert text.endswith("}\n") and text.count("\n") == 1
    assert json.loads(text) == PRINTED
    assert list(json.loads(text)["accounts"]) == ["premium", "basic", "free"]  # the table's order


def test_print_defaults_takes_no_value() -> None:
    p = subprocess.run([find_executable(), "--print-defaults=1"], capture_output=True, timeout=30)
    assert p.returncode == 2
    assert b"--print-defaults takes no value" in p.stderr


def test_help_shows_the_printed_defaults() -> None:
    p = subprocess.run([find_executable(), "--help"], capture_output=True, timeout=30)
    assert p.returncode == 0
    usage = p.stdout.decode()
    for name, value in PRINTED["options"].items():
        assert f"[--{name.replace('_', '-')} {value}]" in usage, name


def test_cli_prints_the_defaults() -> None:
    p = subprocess.run([sys.executable, "-m", "vehicledata", "emulator", "--print-defaults"], capture_output=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == PRINTED


def test_docs_state_the_printed_defaults() -> None:
    doc = (ROOT / "docs" / "emulator.md").read_text(encoding="utf-8")
    for name, value in PRINTED["options"].items():
        flag = "--" + name.replace("_", "-")
        if name not in ("host", "port"):  # host and port have no row of their own
            row = re.search(r"^\| `" + re.escape(flag) + r" \w+` \| (\d+)", doc, re.M)
            assert row and int(row.group(1)) == value, flag
        assert f"[{flag} {value}]" in doc, flag  # the usage block
    yes = {"yes": True, "no": False}
    for name, a in PRINTED["accounts"].items():
        row = re.search(r"^\| " + name + r" \| `([^`]+)` \| `([^`]+)` \| (\w+) \| (\w+) \| (\w+) \|$", doc, re.M)
        assert row, name
        assert {"api_token": row.group(1), "api_secret": row.group(2), "subscribed": yes[row.group(3)],
                "data_feed": yes[row.group(4)], "rate_limit_type": row.group(5)} == a


# ---- the Python helper reads the document ------------------------------------------------------
def test_helper_exposes_the_printed_document() -> None:
    assert emulator_defaults() == json.loads(printed())
    assert dict(DEMO_ACCOUNTS) == PRINTED["accounts"]
    assert list(DEMO_ACCOUNTS) == ["premium", "basic", "free"] and len(DEMO_ACCOUNTS) == 3
    # items are copies: changing one changes nothing the next reader sees
    DEMO_ACCOUNTS["premium"]["api_token"] = "changed"
    emulator_defaults()["accounts"]["free"]["api_secret"] = "changed"
    assert DEMO_ACCOUNTS["premium"]["api_token"] == "demo-premium-token"
    assert DEMO_ACCOUNTS["free"]["api_secret"] == "demo-free-secret"


def fake_emulator(tmp_path: Path, document: Dict[str, Any], status: int = 0) -> Path:
    exe = tmp_path / "vehicledata-emulator"
    exe.write_text("#!/bin/sh\n"
                   f"[ \"$1\" = --print-defaults ] || exit 9\n"
                   f"echo '{json.dumps(document)}'\n"
                   f"echo 'fake stderr' >&2\n"
                   f"exit {status}\n")
    exe.chmod(0o755)
    return exe


def test_helper_reads_whatever_the_executable_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = {"options": {"rate_limit": 7}, "accounts": {"solo": {"api_token": "t", "api_secret": "s"}}}
    monkeypatch.setenv("VEHICLEDATA_EMULATOR_BIN", str(fake_emulator(tmp_path, other)))
    assert emulator_defaults() == other
    assert dict(DEMO_ACCOUNTS) == other["accounts"]
    failing = tmp_path / "failing"
    failing.mkdir()
    monkeypatch.setenv("VEHICLEDATA_EMULATOR_BIN", str(fake_emulator(failing, other, status=3)))
    with pytest.raises(EmulatorError, match=r"--print-defaults exited with 3: fake stderr"):
        emulator_defaults()


def test_number_options_are_the_printed_numbers() -> None:
    assert list(NUMBER_OPTIONS) == [k for k, v in PRINTED["options"].items() if isinstance(v, int)]
    every = {name: i + 1 for i, name in enumerate(NUMBER_OPTIONS)}
    args = build_args(**every)
    assert args == [a for name, n in every.items() for a in ("--" + name.replace("_", "-"), str(n))]
    with pytest.raises(TypeError, match="unexpected keyword argument.*max_header$"):
        build_args(max_header=3)
    # Emulator() names each one as a keyword (and passes it on: test_emu_launcher's CLI tests)
    assert set(NUMBER_OPTIONS) <= set(inspect.signature(Emulator).parameters)


def test_unset_settings_are_left_to_the_emulator(database: Path) -> None:
    assert build_args() == []
    assert build_args(port=0, rate_limit=5) == ["--port", "0", "--rate-limit", "5"]
    with Emulator(db=database, jwt_secret="s") as emu:  # no --host, --port, --token-ttl passed
        assert emu.host == PRINTED["options"]["host"] and emu.port > 0
        assert emu.url == f"http://{emu.host}:{emu.port}"
        h = Http(emu.url)
        jwt = h.login("free")
        h.close()
    claims = json.loads(base64.urlsafe_b64decode(jwt.split(".")[1] + "=="))
    assert claims["exp"] - claims["iat"] == PRINTED["options"]["token_ttl"]


# ---- the helper's control token ----------------------------------------------------------------------
def raw_control(url: str, route: str, token: str = "") -> int:
    req = urllib.request.Request(url + "/_emulator/" + route, headers={"X-Emulator-Token": token} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.parametrize("how", ["keyword", "extra_args", "extra_args_inline"])
def test_helper_sends_the_control_token(database: Path, how: str) -> None:
    kw: Dict[str, Any] = {"keyword": {"control_token": "s3cret"},
                          "extra_args": {"extra_args": ["--control-token", "s3cret"]},
                          "extra_args_inline": {"extra_args": ["--control-token=s3cret"]}}[how]
    with Emulator(db=database, **kw) as emu:
        assert emu.control_token == "s3cret"
        assert raw_control(emu.url, "health") == 403  # the token is required, even from loopback
        assert raw_control(emu.url, "health", "s3cret") == 200
        assert emu.health() == {"status": "ok"}
        emu.fault("/api/years", status=503)
        emu.maintenance(True)
        emu.maintenance(False)
        assert emu.shift_clock(0)["offset_seconds"] == 0
        assert emu.touch("trims", [1])["touched"] == 1
        assert emu.stats()["requests"] == 0
        emu.clear_faults()
        emu.reset()


def test_helper_without_the_token_reports_the_refusal(database: Path) -> None:
    with Emulator(db=database, control_token="right") as emu:
        emu.control_token = "wrong"
        with pytest.raises(EmulatorError, match=r"GET /_emulator/health: 403 .*X-Emulator-Token"):
            emu.health()


# ---- touch moves the data feed's last-updated time -----------------------------------------------------
def built_at(database: Path) -> str:
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return con.execute("SELECT value FROM meta WHERE key = 'built_at'").fetchone()[0]
    finally:
        con.close()


def feed_times(url: str, token: str) -> set:
    """The entry times of the data feed archive (building it takes a while on a loaded machine)."""
    req = urllib.request.Request(url + "/api/data-feeds/download", headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=300) as r:
        body = r.read()
    with zipfile.ZipFile(io.BytesIO(body)) as z:
        return {i.date_time for i in z.infolist()}


def test_touch_moves_last_updated_and_reset_restores_it(database: Path) -> None:
    built = built_at(database)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", built)
    with Emulator(db=database) as emu:
        c = Http(emu.url)
        token = c.login("premium")

        def last_updated() -> str:
            r = c.get("/api/data-feeds/last-updated")
            assert r.status == 200
            return r.json()["last_updated"]

        assert last_updated() == built
        emu.touch("trims", [1], modified="2030-06-01T12:00:00+00:00")  # 08:00 Eastern (daylight time)
        assert last_updated() == "2030-06-01 08:00:00"
        assert feed_times(emu.url, token) == {(2030, 6, 1, 8, 0, 0)}  # the archive's entries: the same time
        emu.touch("models", [1], modified="2001-01-01T00:00:00-05:00")  # earlier: no move back
        assert last_updated() == "2030-06-01 08:00:00"
        emu.touch("trims", [2], modified="2030-12-01T12:00:00-05:00")
        assert last_updated() == "2030-12-01 12:00:00"
        emu.reset()
        assert last_updated() == built
        # default modified: the emulator clock's now, the same instant in both forms
        emu.shift_clock(5 * 365 * 86400)
        now = emu.touch("engines", [1])["modified"]
        assert last_updated() == now[:10] + " " + now[11:19]
        emu.reset()
        assert last_updated() == built
        c.close()
