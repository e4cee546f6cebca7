"""The emulator's secrets off its command line (issue 25, item 4): `--jwt-secret` and
`--control-token` are visible to every local user in /proc/PID/cmdline; the launcher passes them
in the environment, and the executable reads them from a file or the environment as well."""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

from emu_support import Http
from test_emu_defaults import raw_control
from vehicledata.testing import Emulator
from vehicledata.testing.emulator import CONTROL_TOKEN_ENV, JWT_SECRET_ENV, find_executable, secret_env

JWT = "jwt-secret-under-test"
TOKEN = "control-token-under-test"


def signed_with(jwt: str, secret: str) -> bool:
    head, payload, sig = jwt.split(".")
    expected = hmac.new(secret.encode(), f"{head}.{payload}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4)) == expected


def cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def check_secrets(url: str, jwt_secret: str, token: str) -> None:
    assert raw_control(url, "health") == 403
    assert raw_control(url, "health", token) == 200
    h = Http(url)
    try:
        assert signed_with(h.login("free"), jwt_secret)
    finally:
        h.close()


def test_the_launcher_keeps_secrets_off_the_command_line(database: Path) -> None:
    with Emulator(db=database, jwt_secret=JWT, control_token=TOKEN) as emu:
        pid = emu._proc.pid  # type: ignore[union-attr]
        assert JWT.encode() not in cmdline(pid) and TOKEN.encode() not in cmdline(pid)
        check_secrets(emu.url, JWT, TOKEN)
        assert emu.health() == {"status": "ok"}  # the helper still sends its token


def start(args: List[str], env: Dict[str, str]) -> "subprocess.Popen[bytes]":
    return subprocess.Popen([find_executable(), "--port", "0", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


@pytest.fixture()
def clean_env() -> Iterator[Dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if k not in (JWT_SECRET_ENV, CONTROL_TOKEN_ENV)}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    yield env


@pytest.mark.parametrize("how", ["files", "environment"])
def test_the_executable_reads_secrets_from_files_or_the_environment(
        database: Path, tmp_path: Path, clean_env: Dict[str, str], how: str) -> None:
    if how == "files":
        (tmp_path / "jwt").write_text(JWT + "\n")
        (tmp_path / "token").write_text(TOKEN + "\n")
        args = ["--jwt-secret-file", str(tmp_path / "jwt"), "--control-token-file", str(tmp_path / "token")]
        env = clean_env
    else:
        args = []
        env = secret_env(jwt_secret=JWT, control_token=TOKEN, base=clean_env)
    p = start(["--db", str(database), *args], env)
    try:
        line = p.stdout.readline().decode()  # type: ignore[union-attr]
        assert line.startswith("listening on "), p.stderr.read() if p.poll() is not None else line  # type: ignore
        url = line.split()[-1]
        assert JWT.encode() not in cmdline(p.pid) and TOKEN.encode() not in cmdline(p.pid)
        check_secrets(url, JWT, TOKEN)
    finally:
        p.terminate()
        p.wait(timeout=30)


def test_an_unreadable_or_empty_secret_file_is_an_error(database: Path, tmp_path: Path,
                                                        clean_env: Dict[str, str]) -> None:
    (tmp_path / "empty").write_text("\n")
    for args, message in ((["--jwt-secret-file", str(tmp_path / "empty")], "is empty"),
                          (["--control-token-file", str(tmp_path / "missing")], "cannot read")):
        p = subprocess.run([find_executable(), "--db", str(database), *args], capture_output=True, timeout=30,
                           env=clean_env)
        assert p.returncode != 0 and message in p.stderr.decode(), p.stderr


def test_secret_env_sets_only_what_is_given() -> None:
    env = secret_env(jwt_secret="j", base={"PATH": "/bin"})
    assert env == {"PATH": "/bin", JWT_SECRET_ENV: "j"}
    with pytest.raises(ValueError):
        secret_env(control_token="")


def test_the_cli_passes_secrets_in_the_environment(database: Path, clean_env: Dict[str, str]) -> None:
    p = subprocess.Popen([sys.executable, "-m", "vehicledata", "emulator", "--db", str(database), "--port", "0",
                          "--jwt-secret", JWT, "--control-token", TOKEN], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=clean_env)
    try:
        line = p.stdout.readline().decode()  # type: ignore[union-attr]
        assert line.startswith("listening on "), line
        assert JWT.encode() not in cmdline(p.pid)  # execve: the same process, now the emulator
        check_secrets(line.split()[-1], JWT, TOKEN)
    finally:
        p.terminate()
        p.wait(timeout=30)
