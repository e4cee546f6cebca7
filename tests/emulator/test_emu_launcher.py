"""The executable, the Python launcher, the CLI and the pytest plugin."""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Iterator, List, Sequence

import pytest

from emu_support import Http, read_until_close
from vehicledata.testing import DEMO_ACCOUNTS, Emulator, EmulatorError, find_executable

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def start(args: List[str]) -> subprocess.Popen:
    return subprocess.Popen([find_executable(), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_first_line_and_clean_stop(database: Path, sig: int) -> None:
    p = start(["--db", str(database), "--port", "0", "--threads", "2"])
    try:
        assert p.stdout is not None
        line = p.stdout.readline().decode()
        assert line.startswith("listening on http://127.0.0.1:") and line.endswith("\n")
        port = int(line.strip().rsplit(":", 1)[1])
        assert 0 < port < 65536
        assert Http(f"http://127.0.0.1:{port}").get("/_emulator/health").status == 200
        p.send_signal(sig)
        assert p.wait(10) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.parametrize("args,status,part", [
    (["--port", "x"], 2, "--port expects an integer"),
    (["--bogus"], 2, "unknown option '--bogus'"),
    (["--threads", "0"], 2, "--threads must be between"),
    (["--db", "/nonexistent/v.db"], 1, "database not found"),
])
def test_bad_start_arguments(args: List[str], status: int, part: str) -> None:
    p = subprocess.run([find_executable(), *args], capture_output=True, timeout=30)
    assert p.returncode == status
    assert part in p.stderr.decode()
    assert p.stdout == b""


def test_bad_accounts_file(database: Path, tmp_path: Path) -> None:
    f = tmp_path / "accounts.json"
    f.write_text('[{"api_token": "x"}]')
    p = subprocess.run([find_executable(), "--db", str(database), "--accounts", str(f)], capture_output=True, timeout=30)
    assert p.returncode == 1
    assert "api_secret" in p.stderr.decode()


def test_help() -> None:
    p = subprocess.run([find_executable(), "--help"], capture_output=True, timeout=30)
    assert p.returncode == 0 and b"--rate-limit" in p.stdout


def test_launcher_error_carries_stderr(tmp_path: Path) -> None:
    with pytest.raises(EmulatorError, match="database not found"):
        Emulator(db=tmp_path / "missing.db").start()


def test_launcher_context_and_helpers(database: Path) -> None:
    with Emulator(db=database, rate_limit=5) as emu:
        assert emu.url.startswith("http://127.0.0.1:") and emu.running
        assert emu.health() == {"status": "ok"}
        emu.fault("/api/years", status=503, count=1, retry_after=3)
        h = Http(emu.url)
        r = h.get("/api/years/v2")
        assert r.status == 503 and r.headers["retry-after"] == "3"
        assert emu.stats()["by_status"] == {"503": 1}
        emu.reset()
        assert emu.stats()["requests"] == 0
        h.close()
    assert not emu.running
    emu.stop()  # idempotent


def test_demo_accounts_constant() -> None:
    assert set(DEMO_ACCOUNTS) == {"premium", "basic", "free"}
    assert DEMO_ACCOUNTS["premium"] == {"api_token": "demo-premium-token", "api_secret": "demo-premium-secret",
                                        "subscribed": True, "data_feed": True, "rate_limit_type": "hard"}


@contextlib.contextmanager
def cli_emulator(database: Path, *flags: str) -> Iterator[str]:
    """`vehicledata emulator --db DB --port 0 FLAGS` in the foreground: its URL; it must end with
    status 0 on SIGTERM."""
    p = subprocess.Popen([sys.executable, "-m", "vehicledata", "emulator", "--db", str(database), "--port", "0",
                          *flags], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    try:
        assert p.stdout is not None
        line = p.stdout.readline().decode()
        assert line.startswith("listening on http://127.0.0.1:"), p.stderr.read() if p.poll() is not None else line
        yield line.split("listening on ")[1].strip()
        p.send_signal(signal.SIGTERM)
        assert p.wait(10) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_cli_runs_the_emulator_in_the_foreground(database: Path) -> None:
    with cli_emulator(database, "--rate-limit", "7") as url:
        h = Http(url)
        statuses = [h.get("/api/years/v2").status for _ in range(8)]
        assert statuses == [200] * 7 + [429]
        h.close()


def test_cli_takes_every_flag_of_the_executable() -> None:
    """`vehicledata emulator` passes every flag the executable's usage names (docs/emulator.md)."""
    usage = subprocess.run([find_executable(), "--help"], capture_output=True, timeout=30).stdout.decode()
    flags = set(re.findall(r"\[(--[a-z0-9-]+)", usage))
    assert {"--max-headers", "--response-cache-mb", "--parent-pid"} <= flags
    cli = subprocess.run([sys.executable, "-m", "vehicledata", "emulator", "--help"], capture_output=True,
                         timeout=60, env=ENV).stdout.decode()
    assert sorted(f for f in flags if f not in re.findall(r"(--[a-z0-9-]+)", cli)) == []


def status_lines_by_field_count(url: str, counts: Sequence[int]) -> List[bytes]:
    """The status line of GET /api/years/v2 sent with each number of header fields (Host,
    Connection and the rest X-F<i>)."""
    port = int(url.rsplit(":", 1)[1])
    answers = []
    for fields in counts:
        head = "GET /api/years/v2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        head += "".join(f"X-F{i}: v\r\n" for i in range(fields - 2)) + "\r\n"
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(head.encode())
            data = read_until_close(s)
        answers.append(data.split(b"\r\n", 1)[0])
    return answers


# 3 fields pass; a fourth is one more than max_headers 3
GATE_LIMITED = [b"HTTP/1.1 200 OK", b"HTTP/1.1 431 Request Header Fields Too Large"]


def test_cli_passes_the_gate_limits(database: Path) -> None:
    with cli_emulator(database, "--max-headers", "3", "--response-cache-mb", "0") as url:
        assert status_lines_by_field_count(url, (3, 4)) == GATE_LIMITED


def test_emulator_passes_the_gate_limits(database: Path) -> None:
    with Emulator(db=database, max_headers=3, response_cache_mb=0) as emu:
        assert status_lines_by_field_count(emu.url, (3, 4)) == GATE_LIMITED


def test_pytest_plugin_fixture(database: Path, tmp_path: Path) -> None:
    test = tmp_path / "test_user_suite.py"
    test.write_text(textwrap.dedent("""
        import json, urllib.request

        def test_uses_emulator(vehicledata_emulator):
            with urllib.request.urlopen(vehicledata_emulator.url + "/api/years/v2") as r:
                assert json.loads(r.read()) == [2020, 2019, 2018, 2017, 2016, 2015]

        def test_clean(vehicledata_emulator_clean):
            assert vehicledata_emulator_clean.stats()["requests"] == 0
    """))
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:vehicledata", "-p", "vehicledata.testing.plugin",
                        "--rootdir", str(tmp_path), "-c", os.devnull, f"--vehicledata-emulator-db={database}",
                        str(test)], capture_output=True, timeout=120, env=ENV, cwd=tmp_path)
    out = p.stdout.decode() + p.stderr.decode()
    assert p.returncode == 0, out
    assert "2 passed" in out


def test_database_that_does_not_match_the_schema(tmp_path: Path) -> None:
    import sqlite3

    bad = tmp_path / "bad.db"
    con = sqlite3.connect(bad)
    con.execute("CREATE TABLE makes (id INTEGER)")
    con.commit()
    con.close()
    p = subprocess.run([find_executable(), "--db", str(bad)], capture_output=True, timeout=30)
    assert p.returncode == 1
    assert "does not match the schema (table makes: no such column: name)" in p.stderr.decode()


def test_a_dropped_emulator_ends_its_process(database: Path) -> None:
    import gc

    emu = Emulator(db=database).start()
    proc = emu._proc
    assert proc is not None and proc.poll() is None
    del emu
    gc.collect()
    assert proc.wait(10) == 0
