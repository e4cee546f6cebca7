"""The response cache (docs/emulator.md, "Response cache"): a cached answer is byte for byte the
answer the emulator renders without the cache (body and headers, plain and compressed, GET and
HEAD), never crosses access tiers, and leaves every per-request rule in place (rate limits, usage
counters, faults, reset, touch)."""
from __future__ import annotations

import gzip
import json
import re
import socket
import subprocess
from pathlib import Path
from typing import Dict, Iterator, Optional, Tuple

import pytest

from emu_support import CONFORMANCE_SECRET, Db, Http, read_until_close
from vehicledata.testing import Emulator, find_executable

DEMO_SQL = "year BETWEEN 2015 AND 2020"

TARGETS = [
    "/api/trims/v2?limit=100",
    "/api/trims/v2?limit=3&page=2&sort=id&direction=desc",
    "/api/trims/v2?limit=5&json=" + "%5B%7B%22field%22%3A%22year%22%2C%22op%22%3A%22%3E%3D%22%2C%22val%22%3A2018%7D%5D",
    "/api/makes/v2",
    "/api/years/v2",
    "/api/models/v2?verbose=yes&limit=2",
    "/api/vehicle-attributes?attribute=engines.engine_type",
    "/api/vin/1HGCM82633A004352",
]


def _emulator(database: Path, *extra: str, rate_limit: int = 1_000_000) -> Emulator:
    return Emulator(db=database, rate_limit=rate_limit, login_rate_limit=1_000_000, jwt_secret=CONFORMANCE_SECRET,
                    threads=2, extra_args=list(extra))


@pytest.fixture(scope="module")
def pair(database: Path) -> Iterator[Tuple[Http, Http, Emulator]]:
    """(cache on, cache off, the emulator with the cache) with the same JWT secret."""
    with _emulator(database) as on, _emulator(database, "--response-cache-mb", "0") as off:
        a, b = Http(on.url), Http(off.url)
        yield a, b, on
        a.close()
        b.close()


def _raw(url: str, method: str, target: str, headers: Dict[str, str]) -> bytes:
    """The whole answer as sent (status line, headers in order, body), on a fresh connection, with
    the value of its one Date header masked (it names the second the answer was sent)."""
    host, port = url.split("//")[1].split(":")
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    with socket.create_connection((host, int(port)), timeout=60) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        raw = read_until_close(s)
    head, sep, body = raw.partition(b"\r\n\r\n")
    masked, dates = re.subn(rb"\r\nDate: [^\r]*", b"\r\nDate: (masked)", head)
    assert dates == 1, head
    return masked + sep + body


def _tokens(h: Http) -> Dict[str, Optional[str]]:
    return {"none": None, "free": h.login("free"), "premium": h.login("premium")}


def test_hits_are_byte_identical_to_uncached_answers(pair: Tuple[Http, Http, Emulator]) -> None:
    on, off, emu_on = pair
    tokens = _tokens(on)
    off_url = f"http://{off.host}:{off.port}"
    for target in TARGETS:
        for name, token in tokens.items():
            for accept in ({}, {"Accept-Encoding": "gzip"}, {"Accept-Encoding": "deflate"}):
                for method in ("GET", "HEAD"):
                    hdrs = dict(accept)
                    if token:
                        hdrs["Authorization"] = f"Bearer {token}"
                    want = _raw(off_url, method, target, hdrs)
                    if name == "premium":  # (demo callers get a 404 for this VIN's 2003: compared all the same)
                        assert want.startswith(b"HTTP/1.1 200 "), (target, name, want[:200])
                    for _ in range(2):  # a miss (stored), then a hit
                        got = _raw(emu_on.url, method, target, hdrs)
                        assert got == want, (target, name, accept, method)
    assert emu_on.stats()["response_cache"]["hits"] >= len(TARGETS) * 3 * 3 * 2


def test_a_premium_body_never_reaches_a_demo_caller(pair: Tuple[Http, Http, Emulator], db: Db) -> None:
    on, _, _ = pair
    tokens = _tokens(on)
    target = "/api/trims/v2?limit=1&sort=year&direction=desc"
    full = on.get(target, token=tokens["premium"]).json()["collection"]["total"]
    assert on.get(target, token=tokens["premium"]).json()["collection"]["total"] == full  # cached now
    assert full == db.count("trims")
    demo_total = db.count("trims", DEMO_SQL)
    assert demo_total < full
    for caller in ("none", "free"):
        body = on.get(target, token=tokens[caller]).json()
        assert body["collection"]["total"] == demo_total, caller
        assert all(2015 <= r["year"] <= 2020 for r in body["data"]), caller
    # An invalid token is a demo caller too, never the premium entry.
    bad = on.get(target, token=tokens["premium"][:-2] + "xx").json()
    assert bad["collection"]["total"] == demo_total
    # And the other way round: a demo entry does not answer a premium caller.
    target2 = "/api/trims/v2?limit=1&sort=year"
    assert on.get(target2).json()["collection"]["total"] == demo_total
    assert on.get(target2, token=tokens["premium"]).json()["collection"]["total"] == full


def test_hits_still_count_usage_and_rate_limits(database: Path) -> None:
    with _emulator(database, rate_limit=4) as emu:
        h = Http(emu.url)
        token = h.login("premium")
        target = "/api/makes/v2"
        first = h.get(target, token=token)
        for _ in range(2):
            r = h.get(target, token=token)  # hits
            assert r.status == 200 and r.body == first.body
        assert h.get("/api/account/requests-today", token=token).json() == {"count": 4}
        r = h.get(target, token=token)
        assert r.status == 429 and r.headers["retry-after"]
        assert json.loads(r.body)["exception"] == "TooManyRequestsException"
        h.close()


def test_a_small_cache_evicts_least_recently_used(database: Path) -> None:
    with _emulator(database, "--response-cache-mb", "1") as emu:
        h = Http(emu.url)
        sizes = [len(h.get(f"/api/trims/v2?limit=1000&page={p}").body) for p in (1, 2, 3, 4)]
        cache = emu.stats()["response_cache"]
        assert cache["bytes"] <= 1 << 20 and cache["entries"] < 4, (sizes, cache)
        h.get("/api/trims/v2?limit=1000&page=4")  # the newest stays
        assert emu.stats()["response_cache"]["hits"] == 1
        h.close()


def test_faults_reset_and_touch_apply_to_cached_answers(pair: Tuple[Http, Http, Emulator], db: Db) -> None:
    on, _, emu = pair
    token = on.login("premium")
    target = "/api/trims/v2?limit=1&sort=id"
    first = on.get(target, token=token)
    assert on.get(target, token=token).body == first.body
    emu.fault("/api/trims/v2", status=503, count=1)
    assert on.get(target, token=token).status == 503  # the fault comes before the cache
    assert on.get(target, token=token).body == first.body
    emu.fault("/api/trims/v2", action="truncate", count=1)
    with pytest.raises(Exception):
        on.get(target, token=token)
    trim_id = first.json()["data"][0]["id"]
    try:
        emu.touch("trims", [trim_id], "2030-01-02T03:04:05-05:00")
        touched = on.get(target, token=token).json()["data"][0]
        assert touched["modified"] == "2030-01-02T03:04:05-05:00", touched
        emu.reset()
        assert on.get(target, token=token).body == first.body
    finally:
        emu.reset()


def test_stats_count_hits_and_zero_disables(database: Path) -> None:
    for size, hits in (("1", 2), ("0", 0)):
        with _emulator(database, "--response-cache-mb", size) as emu:
            h = Http(emu.url)
            a = h.get("/api/makes/v2")
            for _ in range(2):
                assert h.get("/api/makes/v2").body == a.body
            cache = emu.stats()["response_cache"]
            assert cache["max_bytes"] == int(size) << 20
            assert cache["hits"] == hits and cache["misses"] == (1 if hits else 0)
            assert cache["entries"] == (1 if hits else 0) and (cache["bytes"] > len(a.body)) == bool(hits)
            emu.fault("/nothing", count=1)  # any control change empties the cache
            cache = emu.stats()["response_cache"]
            assert cache["entries"] == 0 and cache["bytes"] == 0 and cache["hits"] == hits
            emu.reset()
            assert emu.stats()["response_cache"]["hits"] == 0
            h.close()


def test_the_option_is_validated() -> None:
    p = subprocess.run([find_executable(), "--response-cache-mb", "-1"], capture_output=True, timeout=30)
    assert p.returncode == 2 and b"--response-cache-mb must be between 0 and" in p.stderr


def test_gzip_variant_matches_the_plain_body(pair: Tuple[Http, Http, Emulator]) -> None:
    on, _, _ = pair
    target = "/api/trims/v2?limit=50"
    plain = on.get(target)
    for _ in range(2):
        packed = on.get(target, headers={"Accept-Encoding": "gzip"})
        assert packed.headers["content-encoding"] == "gzip"
        assert gzip.decompress(packed.body) == plain.body
