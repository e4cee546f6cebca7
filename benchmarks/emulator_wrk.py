#!/usr/bin/env python3
"""Emulator throughput against nginx serving the same bytes (a measurement, not a test).

Starts the emulator and, in the same run, nginx (non-daemon, temporary config, loopback port)
serving the emulator's own response for ``/api/trims/v2?limit=100`` as a static file, then
measures both with ``wrk`` at the same connection count and prints requests per second.

    PYTHONPATH=python:build-emu/pkg .venv/bin/python benchmarks/emulator_wrk.py [--duration 10]

Needs the Debian packages wrk and nginx.  Target: the emulator at >= 0.3x nginx's rate.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Dict, Optional

TARGET = "/api/trims/v2?limit=100"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def wrk(url: str, connections: int, threads: int, duration: int) -> Dict[str, float]:
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency", url],
                         capture_output=True, text=True, timeout=duration + 60, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}
    return {"requests_per_second": rps, "non_2xx": float(non2xx.group(1)) if non2xx else 0.0,
            "p50_ms": float(p50.group(1)) * scale[p50.group(2)] if p50 else float("nan")}


def nginx_config(prefix: Path, root: Path, port: int, workers: int) -> str:
    return f"""
worker_processes {workers};
daemon off;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    sendfile on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port};
        root {root};
        location / {{ default_type application/json; }}
    }}
}}
"""


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=int, default=10, help="seconds per wrk run (default 10)")
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--wrk-threads", type=int, default=2)
    ap.add_argument("--emulator-threads", type=int, default=8)
    ap.add_argument("--nginx-workers", type=int, default=2)
    ap.add_argument("--db", default=None, help="database (default: vehicledata.dataset.ensure_database())")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    args = ap.parse_args(argv)

    for tool in ("wrk",):
        if not shutil.which(tool):
            print(f"{tool} is not installed (Debian package {tool})", file=sys.stderr)
            return 2
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        print("nginx is not installed (Debian package nginx)", file=sys.stderr)
        return 2

    from vehicledata.testing import Emulator

    db = args.db
    if db is None:
        from vehicledata import dataset

        db = str(dataset.ensure_database())

    with tempfile.TemporaryDirectory(prefix="vd-bench-") as tmp, \
            Emulator(db=db, rate_limit=100_000_000, threads=args.emulator_threads) as emu:
        body = urllib.request.urlopen(emu.url + TARGET, timeout=30).read()
        data = json.loads(body)
        assert data["collection"]["count"] == 100, "the page must hold 100 records"
        prefix = Path(tmp)
        os.chmod(prefix, 0o755)  # nginx workers may run as an unprivileged user
        root = prefix / "root" / "api" / "trims"
        root.mkdir(parents=True)
        (root / "v2").write_bytes(body)  # served for /api/trims/v2 (the query string is ignored)
        port = free_port()
        conf = prefix / "nginx.conf"
        conf.write_text(nginx_config(prefix, prefix / "root", port, args.nginx_workers))
        proc = subprocess.Popen([nginx, "-c", str(conf), "-p", str(prefix)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        try:
            wait_port(port)
            same = urllib.request.urlopen(f"http://127.0.0.1:{port}{TARGET}", timeout=10).read()
            assert same == body, "nginx must serve the identical bytes"
            emu_result = wrk(emu.url + TARGET, args.connections, args.wrk_threads, args.duration)
            nginx_result = wrk(f"http://127.0.0.1:{port}{TARGET}", args.connections, args.wrk_threads, args.duration)
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    ratio = emu_result["requests_per_second"] / nginx_result["requests_per_second"]
    result = {"target": TARGET, "body_bytes": len(body), "connections": args.connections,
              "duration_s": args.duration, "emulator": emu_result, "nginx": nginx_result,
              "ratio": round(ratio, 3), "goal_ratio": 0.3}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"page: {TARGET} ({len(body)} bytes, 100 records), {args.connections} connections, "
              f"{args.duration}s each")
        print(f"emulator: {emu_result['requests_per_second']:10.0f} req/s  (p50 {emu_result['p50_ms']:.2f} ms, "
              f"non-2xx {emu_result['non_2xx']:.0f})")
        print(f"nginx:    {nginx_result['requests_per_second']:10.0f} req/s  (p50 {nginx_result['p50_ms']:.2f} ms)")
        print(f"ratio:    {ratio:.2f}x nginx (goal >= 0.30x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
