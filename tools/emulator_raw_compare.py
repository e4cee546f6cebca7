#!/usr/bin/env python3
"""Compares the raw bytes two emulator builds answer to the same sequence of requests.

Usage: tools/emulator_raw_compare.py OLD_BINARY NEW_BINARY [--db PATH]

Starts each build in turn on the same database with the same JWT secret, sends the same requests
(data endpoints with and without tokens, the demo tier, bad tokens, codings offered, HEAD,
Connection: close, HTTP/1.0, encoded paths and values, errors, faults and maintenance through the
control plane, each target twice so that the second answer comes from the response cache) over
fresh loopback connections and compares every response byte for byte (status line, headers, body;
a well-formed Date field's value aside, since the runs are seconds apart).
Prints the count compared and every difference; exits 1 on any. Used for the emulator's serving
path changes (benchmarks/notes/serve.md).
"""
from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
import time
import urllib.parse
from typing import List, Optional, Tuple

SECRET = "raw-compare-secret-raw-compare-secret"
FILTER = json.dumps([{"field": "year", "op": ">=", "val": 2018}, {"field": "make", "op": "=", "val": "Toyota"}])
TARGETS = [
    "/api/trims/v2?limit=1", "/api/trims/v2?limit=100", "/api/trims/v2?limit=1000", "/api/trims/v2?page=3&limit=5",
    "/api/trims/v2?limit=100&json=" + urllib.parse.quote(FILTER), "/api/trims/v2?year=2020&make=Toyota&limit=3",
    "/api/trims/v2?limit=abc", "/api/trims/v2?limit=0", "/api/trims/v2?page=99999999", "/api/trims/v2?json=%5B",
    "/api/trims/v2?limit=5&limit=6", "/api/trims/v2/", "/api/trims/v2/1", "/api/trims/v2/999999999", "/api/trims/1",
    "/api/trims%2Fv2?limit=2", "/api/trims/v2?limit=2&make=Alfa+Romeo", "/api/trims/v2?limit=2&make=Alfa%20Romeo",
    "/api/vin/1HGCM82633A004352", "/api/vin/BADVIN", "/api/vin/", "/api/years", "/api/years/v2",
    "/api/makes/v2?year=2020", "/api/makes?year=2015", "/api/models/v2?make=Toyota&limit=3", "/api/engines/v2?limit=3",
    "/api/bodies/v2?limit=3", "/api/mileages/v2?limit=3", "/api/submodels/v2?limit=3",
    "/api/vehicle-attributes?attribute=bodies.type", "/api/vehicle-attributes", "/api/obd-codes?limit=3",
    "/api/obd-codes/P0100", "/api/account/requests", "/api/nope", "/", "/api/trims/v2?a=1?b=2",
    "/api/data-feeds/last-updated",
]
VARIANTS = [  # (method, version, extra header lines)
    ("GET", "HTTP/1.1", []),
    ("GET", "HTTP/1.1", ["Accept-Encoding: gzip"]),
    ("GET", "HTTP/1.1", ["Accept-Encoding: deflate"]),
    ("GET", "HTTP/1.1", ["Accept-Encoding: br, gzip;q=0"]),
    ("GET", "HTTP/1.1", ["Connection: close"]),
    ("GET", "HTTP/1.0", []),
    ("GET", "HTTP/1.0", ["Connection: Keep-Alive"]),
    ("HEAD", "HTTP/1.1", []),
    ("HEAD", "HTTP/1.1", ["Accept-Encoding: gzip"]),
    ("GET", "HTTP/1.1", ["X-Pad:", "X-Value: a%41b  "]),
    ("GET", "HTTP/1.1", ["Range: bytes=0-10"]),
    ("POST", "HTTP/1.1", ["Content-Length: 0"]),
]
AUTHS = ["premium", "free", "bad", None]


def start(binary: str, db: str) -> Tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([binary, "--db", db, "--port", "0", "--jwt-secret", SECRET, "--rate-limit", "100000000",
                             "--threads", "4"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r":(\d+)\s*$", line)
    if not m:
        proc.kill()
        raise RuntimeError(f"{binary} did not start: {line!r}")
    return proc, int(m.group(1))


def exchange(port: int, raw: bytes, head_only: bool) -> bytes:
    """Sends `raw` on a fresh connection; returns one response (read by its Content-Length) or all until EOF."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(raw)
        data = b""
        while True:
            try:
                chunk = s.recv(1 << 16)
            except socket.timeout:
                break
            if not chunk:
                break
            data += chunk
            end = data.find(b"\r\n\r\n")
            if end >= 0:
                m = re.search(rb"\r\ncontent-length: *(\d+)", data[:end], re.I)
                need = end + 4 + (0 if head_only or not m else int(m.group(1)))
                if m and len(data) >= need:
                    return data[:need]
        return data


def login(port: int, name: str) -> str:
    body = json.dumps({"api_token": f"demo-{name}-token", "api_secret": f"demo-{name}-secret"}).encode()
    raw = (b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
           b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    resp = exchange(port, raw, False)
    return resp.split(b"\r\n\r\n", 1)[1].decode().strip()


def control(port: int, path: str, body: Optional[dict]) -> None:
    data = json.dumps(body).encode() if body is not None else b""
    raw = (f"POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(data)}\r\n\r\n").encode() + data
    exchange(port, raw, False)


def run(binary: str, db: str, tokens: Optional[dict]) -> Tuple[List[Tuple[str, bytes]], dict]:
    proc, port = start(binary, db)
    try:
        if tokens is None:
            tokens = {"premium": login(port, "premium"), "free": login(port, "free"), "bad": "not.a.token"}
        out: List[Tuple[str, bytes]] = []

        def ask(label: str, target: str, method: str, version: str, extra: List[str], auth: Optional[str]) -> None:
            lines = [f"{method} {target} {version}", "Host: 127.0.0.1"]
            if auth:
                lines.append(f"Authorization: Bearer {tokens[auth]}")
            lines += extra
            raw = ("\r\n".join(lines) + "\r\n\r\n").encode()
            out.append((label, exchange(port, raw, method == "HEAD")))

        for target in TARGETS:
            for method, version, extra in VARIANTS:
                for auth in AUTHS:
                    for n in (1, 2):
                        ask(f"{method} {target} {version} {extra} {auth} #{n}", target, method, version, extra, auth)
        # lower-case names, a pipelined pair, faults and maintenance
        ask("lowercase", "/api/trims/v2?limit=2", "GET", "HTTP/1.1", ["accept-encoding: gzip", "connection: close"],
            "premium")
        pair = (b"GET /api/years HTTP/1.1\r\nHost: x\r\n\r\nGET /api/years/v2 HTTP/1.1\r\nHost: x\r\n"
                b"Connection: close\r\n\r\n")
        out.append(("pipelined", exchange(port, pair, False) + exchange(port, pair, True)))
        for fault in ({"path": "/api/trims/v2", "status": 503, "retry_after": 7},
                      {"path": "/api/trims/v2", "status": 418},
                      {"path": "/api/trims/v2", "status": 500, "body": "{\"x\":1}"},
                      {"path": "/api/trims/v2", "action": "truncate"},
                      {"path": "/api/vin/1HGCM82633A004352", "status": 429}):
            control(port, "/_emulator/faults", fault)
            target = "/api/vin/1HGCM82633A004352" if "vin" in fault["path"] else "/api/trims/v2?limit=50"
            ask(f"fault {fault}", target, "GET", "HTTP/1.1", [], "premium")
            ask(f"after fault {fault}", target, "GET", "HTTP/1.1", [], "premium")
        control(port, "/_emulator/maintenance", {"enabled": True})
        ask("maintenance", "/api/trims/v2?limit=2", "GET", "HTTP/1.1", [], "premium")
        ask("maintenance head", "/api/trims/v2?limit=2", "HEAD", "HTTP/1.1", [], None)
        control(port, "/_emulator/maintenance", {"enabled": False})
        ask("after maintenance", "/api/trims/v2?limit=2", "GET", "HTTP/1.1", [], "premium")
        return out, tokens
    finally:
        proc.terminate()
        proc.wait(10)


DATE = re.compile(rb"\r\nDate: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                  rb"\d{4} \d\d:\d\d:\d\d GMT\r\n")


def same_date(raw: bytes) -> bytes:
    """The bytes with each well-formed Date field's value replaced by one fixed value (a malformed one stays)."""
    return DATE.sub(b"\r\nDate: (the date)\r\n", raw)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--db", required=True)
    a = ap.parse_args()
    t0 = time.time()
    old, tokens = run(a.old, a.db, None)
    new, _ = run(a.new, a.db, tokens)
    diffs = 0
    for (label, x), (_, y) in zip(old, new):
        x, y = same_date(x), same_date(y)  # the two runs are seconds apart
        if x != y:
            diffs += 1
            print(f"DIFF {label}\n  old {x[:400]!r}\n  new {y[:400]!r}")
    print(f"{len(old)} responses compared ({sum(len(x) for _, x in old):,} bytes), {diffs} differ, "
          f"{time.time() - t0:.0f} s")
    return 1 if diffs or len(old) != len(new) else 0


if __name__ == "__main__":
    sys.exit(main())
