"""The client against a hostile server (issue 13): every attack ends in bounded time and memory
with a typed error.  Streaming attacks run the client in a subprocess whose peak RSS (VmHWM) is
asserted; fixed-body attacks use the shared stub server.  `hostile_report.py` prints the table of
docs/reliability.md from the same cases."""
from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Tuple

import pytest

import vehicledata as vd
from client_support import stub_server
from hostile_server import hostile_server

HERE = Path(__file__).parent
MiB = 1 << 20


def _b64(data: Dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


# A JWT-shaped login answer valid for an hour (the client reads exp without verifying)
JWT = f"{_b64({'alg': 'HS256', 'typ': 'JWT'})}.{_b64({'sub': 'x', 'iat': int(time.time()), 'exp': int(time.time()) + 3600})}" \
      ".c2lnbmF0dXJlLXNpZ25hdHVyZQ"
SECRET = "s3cret-hostile-0123456789"

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[4])
import vehicledata as vd
from hostile_server import peak_rss_kb
base, action, opts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
download = {k[len("download_"):]: opts.pop(k) for k in list(opts) if k.startswith("download_")}
c = vd.Client(base_url=base, retry=0, rate_limit=None, **opts)
before = peak_rss_kb()
t = time.monotonic()
out = {"error": None}
try:
    if action == "download":
        c.data_feed.download(sys.argv[5], **download)
    else:
        c.get_json("/api/makes")
except BaseException as e:
    out = {"error": type(e).__name__, "limit": getattr(e, "limit", None), "message": str(e)}
out.update(seconds=time.monotonic() - t, base_kb=before, peak_kb=peak_rss_kb())
print(json.dumps(out))
"""


def child_env() -> Dict[str, str]:
    """The child's environment. Under AddressSanitizer (`make sanitize`) freed blocks stay resident in
    ASan's quarantine (256 MiB by default), which would count in the peak RSS measured here; a 1 MiB
    quarantine leaves the RSS bound about our own allocations."""
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":quarantine_size_mb=1"
    return env


def run_child(base: str, action: str, opts: Dict[str, Any], tmp: Path) -> Dict[str, Any]:
    """The client in a fresh process: its error, seconds and peak RSS growth."""
    proc = subprocess.run([sys.executable, "-c", CHILD, base, action, json.dumps(opts), str(HERE), str(tmp / "feed.zip")],
                          capture_output=True, text=True, timeout=120, env=child_env())
    assert proc.returncode == 0, proc.stderr
    out: Dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["grew_mib"] = (out["peak_kb"] - out["base_kb"]) / 1024
    return out


# (attack, action, client options, expected error, expected limit, max seconds, max RSS growth MiB)
STREAMING: List[Tuple[str, str, Dict[str, Any], str, Any, float, float]] = [
    ("long", "get", {"max_body": 8 * MiB}, "LimitError", "max_body", 20, 40),
    ("long", "get", {}, "LimitError", "max_body", 5, 40),  # 2 GiB announced: refused before the body
    ("endless", "get", {}, None, None, 60, 600),  # the default limit, 256 MiB, streamed (peak: the buffer doubling)
    ("endless", "get", {"max_body": 8 * MiB}, "LimitError", "max_body", 20, 40),
    ("error", "get", {"max_body": 8 * MiB}, "LimitError", "max_body", 20, 40),
    ("claim", "get", {}, "LimitError", "max_body", 5, 40),
    ("bomb", "get", {"compress": True, "max_decompressed": 16 * MiB}, "LimitError", "max_decompressed", 20, 60),
    ("drip", "download", {"timeout": 2}, "Timeout", None, 10, 40),
    # download_* options go to download(): its total deadline (2 KB/s passes the low-speed limit) and size cap
    ("trickle", "download", {"download_timeout": 3}, "Timeout", None, 8, 40),
    ("long", "download", {"download_max_bytes": 8 * MiB}, "LimitError", "max_bytes", 10, 40),
    ("endless", "download", {"download_max_bytes": 8 * MiB}, "LimitError", "max_bytes", 10, 40),
    ("truncated", "get", {}, "TransportError", None, 5, 40),
    ("redirect", "get", {}, "APIError", None, 5, 40),  # 302 is not followed: an error status, typed
]


@pytest.mark.parametrize("attack,action,opts,error,limit,seconds,mib", STREAMING,
                         ids=[f"{c[0]}-{c[1]}-{'default' if not c[2] else 'limited'}" for c in STREAMING])
def test_streaming_attack_ends_bounded(attack: str, action: str, opts: Dict[str, Any], error: str, limit: Any,
                                       seconds: float, mib: float, tmp_path: Path) -> None:
    with hostile_server() as server:
        out = run_child(f"{server.url}/{attack}", action, opts, tmp_path)
    if error is None:  # a body past both default limits (equal): either may stop it first
        assert out["error"] == "LimitError" and out["limit"] in ("max_body", "max_decompressed"), out
    else:
        assert out["error"] == error, out
        assert out["limit"] == limit, out
    assert out["seconds"] < seconds, out
    assert out["grew_mib"] < mib, out


def envelope(pages: int, nxt: str, data: List[Dict[str, Any]]) -> bytes:
    return json.dumps({"collection": {"url": "/api/models", "count": len(data), "pages": pages, "total": pages,
                                      "next": nxt, "prev": ""}, "data": data}).encode()


def test_next_link_to_another_origin_is_refused_and_gets_no_jwt() -> None:
    seen: List[Tuple[str, str, str]] = []

    def answer(path: str, headers: Mapping[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        seen.append((headers.get("Host", ""), path, headers.get("Authorization", "")))
        if path.endswith("/auth/login"):
            return 200, {"Content-Type": "text/plain"}, JWT.encode()
        port = headers.get("Host", "").rpartition(":")[2]
        return 200, {"Content-Type": "application/json"}, envelope(
            2, f"http://localhost:{port}/api/models?page=2", [{"id": 1, "make_id": 1, "name": "A"}])

    with stub_server(answer) as url:
        c = vd.Client("tok", SECRET, base_url=url, retry=0, rate_limit=None)
        with pytest.raises(vd.PaginationError, match="another origin"):
            list(c.models.search(parallel=False).pages)
    assert [s for s in seen if s[0].startswith("localhost")] == []


@pytest.mark.parametrize("pages", [2 * 10**7, 10**9])
def test_announced_pages_past_max_pages_is_a_limit_error(pages: int) -> None:
    def answer(path: str, headers: Mapping[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        return 200, {"Content-Type": "application/json"}, envelope(pages, url + "/api/models?page=2", [{"id": 1}])

    with stub_server(answer) as url:
        c = vd.Client(base_url=url, retry=0, rate_limit=None)
        with pytest.raises(vd.LimitError, match="max_pages") as e:
            c.models.search().to_pandas()
        assert e.value.limit == "max_pages"


@pytest.mark.parametrize("raw", ["99999999999999999999999999", "1e300", "-1e300", "9223372036854775808.0"])
def test_out_of_range_id_is_a_decode_error(raw: str) -> None:
    body = b'{"collection":{"url":"/api/models","count":1,"pages":1,"total":1,"next":"","prev":""},"data":[{"id":' + \
        raw.encode() + b"}]}"
    with stub_server(lambda p, h: (200, {"Content-Type": "application/json"}, body)) as url:
        c = vd.Client(base_url=url, retry=0, rate_limit=None)
        with pytest.raises(vd.DecodeError, match="out of range"):
            c.models.search().to_pandas()


def test_login_answer_with_a_header_injection_is_refused() -> None:
    injected: List[str] = []

    def answer(path: str, headers: Mapping[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        if "X-Injected" in headers:
            injected.append(path)
        if path.endswith("/auth/login"):
            return 200, {"Content-Type": "text/plain"}, (JWT + "\r\nX-Injected: yes").encode()
        return 200, {"Content-Type": "application/json"}, b"5"

    with stub_server(answer) as url:
        c = vd.Client("tok", SECRET, base_url=url, retry=0, rate_limit=None)
        with pytest.raises(vd.DecodeError, match="not a JWT"):
            c.get_json("/api/account/requests-today")
    assert injected == []


def test_deep_nesting_is_a_decode_error_not_recursion() -> None:
    body = b"[" * 100_000 + b"]" * 100_000
    with stub_server(lambda p, h: (200, {"Content-Type": "application/json"}, body)) as url:
        c = vd.Client(base_url=url, retry=0, rate_limit=None)
        with pytest.raises(vd.DecodeError):
            c.get_json("/api/trims/1")
        with pytest.raises(vd.DecodeError):
            c.trims.get(1)


def echo(path: str, headers: Mapping[str, str]) -> Tuple[int, Dict[str, str], bytes]:
    """Echoes the Authorization header and the login body into a 400 error body."""
    if path.endswith("/auth/login"):
        return 200, {"Content-Type": "text/plain"}, JWT.encode()
    text = f"you sent {headers.get('Authorization')} after logging in with {SECRET}"
    return 400, {"Content-Type": "application/json"}, json.dumps(
        {"exception": "BadRequestException", "code": 400, "url": path + "?jwt=" + JWT, "message": text}).encode()


def test_echoed_jwt_and_secret_are_scrubbed_from_exceptions() -> None:
    with stub_server(echo) as url:
        c = vd.Client("tok", SECRET, base_url=url, retry=0, rate_limit=None)
        with pytest.raises(vd.BadRequestError) as e:
            c.get_json("/api/makes")
    text = str(e.value) + repr(e.value) + str(e.value.url)
    assert "you sent Bearer ***" in text
    assert JWT not in text and SECRET not in text


def test_echoed_jwt_and_secret_are_scrubbed_from_cli_stderr() -> None:
    with stub_server(echo) as url:
        env = dict(os.environ, VEHICLEDATA_API_TOKEN="tok", VEHICLEDATA_API_SECRET=SECRET, VEHICLEDATA_BASE_URL=url)
        proc = subprocess.run([sys.executable, "-m", "vehicledata", "account", "today"], env=env,
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "***" in proc.stderr, proc.stderr
    assert JWT not in proc.stderr + proc.stdout and SECRET not in proc.stderr + proc.stdout


def login_counter() -> Tuple[List[str], Any]:
    logins: List[str] = []

    def answer(path: str, headers: Mapping[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        if path.endswith("/auth/login"):
            logins.append(path)
            time.sleep(0.2)  # a slow login: concurrent cold starts overlap
            return 200, {"Content-Type": "text/plain"}, JWT.encode()
        return 200, {"Content-Type": "application/json"}, b"5"
    return logins, answer


def test_jwt_cache_never_writes_through_a_planted_symlink(tmp_path: Path) -> None:
    cache = tmp_path / "jwt"
    cache.mkdir(mode=0o700)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    victim.chmod(0o644)
    logins, answer = login_counter()
    with stub_server(answer) as url:
        path = Path(vd.auth.jwt_cache_path(str(cache), "tok", url, SECRET))
        # the old predictable temp name, and the cache file itself, planted as links to the victim
        os.symlink(victim, f"{path}.tmp{os.getpid()}")
        os.symlink(victim, path)
        c = vd.Client("tok", SECRET, base_url=url, retry=0, rate_limit=None, jwt_cache=str(cache))
        assert c.get_json("/api/account/requests-today") == 5
    assert victim.read_text() == "precious\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert not path.is_symlink() and path.read_text() == JWT + "\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_jwt_cache_refuses_a_shared_directory(tmp_path: Path) -> None:
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    logins, answer = login_counter()
    with stub_server(answer) as url:
        c = vd.Client("tok", SECRET, base_url=url, retry=0, rate_limit=None, jwt_cache=str(cache))
        assert c.get_json("/api/account/requests-today") == 5
    assert list(cache.iterdir()) == []  # nothing written where others can plant files


COLD = r"""
import sys
import vehicledata as vd
c = vd.Client("tok", sys.argv[3], base_url=sys.argv[1], retry=0, rate_limit=None, login_rate_limit=None, jwt_cache=sys.argv[2])
print(c.get_json("/api/account/requests-today"))
"""


def test_concurrent_cold_processes_log_in_once(tmp_path: Path) -> None:
    cache = tmp_path / "jwt"
    logins, answer = login_counter()
    with stub_server(answer) as url:
        procs = [subprocess.Popen([sys.executable, "-c", COLD, url, str(cache), SECRET], stdout=subprocess.PIPE,
                                  text=True) for _ in range(8)]
        outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert outs == ["5"] * 8
    assert len(logins) == 1
