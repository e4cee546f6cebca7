"""The short form of the load and soak run (benchmarks/emulator_soak.py): one second per phase of
the request mix under wrk, the last phase with slowloris and header-flood clients running.
Asserts no failed normal request and that the hostile clients were refused (408/431); no timing."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (Debian package wrk)")
def test_short_soak_has_no_errors(database: Path) -> None:
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "emulator_soak.py"), "--duration", "1",
                          "--slowloris", "8", "--floods", "1", "--request-timeout", "1", "--db", str(database),
                          "--check"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "non-2xx 0, socket errors 0" in out.stdout, out.stdout


@pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk is not installed (Debian package wrk)")
def test_short_soak_phase_beside_the_crowd_has_no_errors(database: Path) -> None:
    """The issue-25 soak phase of `make soak` in small: wrk at 64 connections beside 100 slowloris
    sockets, 4 slow readers and a SQL-shape flooder, with both connect-to-answer probes; --check
    fails on any failed normal request, probe or SQL shape (no timing)."""
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "emulator_soak.py"), "--duration", "1",
                          "--slowloris", "4", "--floods", "1", "--request-timeout", "1", "--db", str(database),
                          "--soak-seconds", "3", "--soak-connections", "64", "--soak-slowloris", "100",
                          "--slow-readers", "4", "--shape-flooders", "1", "--check"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    phase4 = next(line for line in out.stdout.splitlines() if line.startswith("phase 4:"))
    assert "non-2xx 0, socket errors 0" in phase4, out.stdout
    assert "slowloris 408" in out.stdout, out.stdout  # the crowd's sockets were refused at the deadline
