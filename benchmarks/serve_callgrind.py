"""User-space instructions per cached request of emulator builds (callgrind), one connection.

Usage: python benchmarks/serve_callgrind.py --exe NAME=PATH [--exe ...] [--target /api/trims/v2?limit=100]
       [--requests 2000] [--rounds 1] [--db PATH]

Each build runs under `valgrind --tool=callgrind --instr-atstart=no` with `--threads 1`; a premium
JWT is fetched, the VIN tables' background load is started (a VIN request) and the target is
answered twice on fresh connections, so the cache holds it; then one keep-alive connection sends the
target `--requests` times, one after another, with instrumentation on only around those (the
connection never met a worker, so every answer is the reactor's: `gate.quick` in GET
/_emulator/stats says how many). Prints the instructions per request of each build and round
(builds interleaved). Needs valgrind. docs/reports/emulator.md has a run.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import urllib.request
from typing import List, Tuple

VIN = "/api/vin/1HGCM82633A004352"


def _answer(s: socket.socket) -> bytes:
    data = b""
    while True:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            m = re.search(rb"\r\nContent-Length: (\d+)", data[:end])
            if m and len(data) >= end + 4 + int(m.group(1)):
                return data
        chunk = s.recv(1 << 20)
        if not chunk:
            raise ConnectionError("closed before a whole answer")
        data += chunk


def measure(exe: str, db: str, target: str, requests: int) -> Tuple[float, int]:
    """(instructions per request, quick answers of the process) for one build."""
    from vehicledata.testing import DEMO_ACCOUNTS

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="serve-callgrind-") as tmp:
        out = os.path.join(tmp, "callgrind.out")
        proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                                 exe, "--db", db, "--port", str(port), "--threads", "1"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            assert proc.stdout is not None
            proc.stdout.readline()  # "listening on ..."
            url = f"http://127.0.0.1:{port}"
            acct = DEMO_ACCOUNTS["premium"]
            login = urllib.request.Request(
                url + "/api/auth/login", method="POST", headers={"Content-Type": "application/json"},
                data=json.dumps({"api_token": acct["api_token"], "api_secret": acct["api_secret"]}).encode())
            token = urllib.request.urlopen(login, timeout=120).read().decode()
            head = f"Host: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            for t in (VIN, target, target):
                with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
                    s.sendall(f"GET {t} HTTP/1.1\r\n{head}Connection: close\r\n\r\n".encode())
                    _answer(s)
            raw = f"GET {target} HTTP/1.1\r\n{head}\r\n".encode()
            with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
                s.sendall(raw)
                first = _answer(s)
                if not first.startswith(b"HTTP/1.1 200 "):
                    raise RuntimeError(f"{target}: {first[:200]!r}")
                subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True, capture_output=True)
                for _ in range(requests):
                    s.sendall(raw)
                    _answer(s)
                subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True, capture_output=True)
            stats = json.load(urllib.request.urlopen(url + "/_emulator/stats", timeout=120))
            subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
        finally:
            proc.terminate()
            proc.wait(120)
        total = 0
        for path in glob.glob(out + "*"):
            with open(path) as fh:
                total += sum(int(line.split()[1]) for line in fh if line.startswith("totals:"))
    return total / requests, int(stats["gate"].get("quick", -1))


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--exe", action="append", required=True, help="NAME=PATH of an emulator executable (repeat)")
    ap.add_argument("--target", default="/api/trims/v2?limit=100")
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--db", help="the database (default: vehicledata.dataset.ensure_database())")
    args = ap.parse_args(argv)
    db = args.db
    if not db:
        from vehicledata import dataset

        db = str(dataset.ensure_database())
    builds = [e.split("=", 1) for e in args.exe]
    for r in range(args.rounds):
        for name, exe in builds:
            per, quick = measure(exe, db, args.target, args.requests)
            print(f"round {r + 1} {name}: {per:,.0f} instructions per request "
                  f"({args.requests} x {args.target}; quick answers {quick})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
