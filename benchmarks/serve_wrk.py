#!/usr/bin/env python3
"""Emulator throughput and latency with wrk: against nginx serving the same bytes and the Prism mock.

Cases: trims pages of 100 and 1000 records, a filtered `json` query (100 records) and
`/api/vin/{vin}`, each at 1, 8, 64 and 256 connections (`wrk -t1|2 --latency`; `--quick` keeps 1 and 8). nginx (2 workers,
`sendfile on`, access log off, loopback, temporary config) serves each case's exact bytes, captured
from the emulator, as static files. Prism (`@stoplight/prism-cli`, npm, pinned; `prism mock`)
serves the service's public OpenAPI document, named by $BENCH_OPENAPI (a file you downloaded; never
committed, and not read from anywhere else: without it the Prism column is skipped): it answers `/api/trims/v2` and `/api/vin/{vin}` with the document's examples (other bytes, so only
an indication). Targets: >= 0.8x nginx, >= 10x Prism; p50/p99 reported.

    python benchmarks/serve_wrk.py [--rounds 2] [--quick]     (BENCH_SERVE_CONNECTIONS=1,8 for fewer)
"""
from __future__ import annotations

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
from typing import Any, Dict, List, Optional
from urllib.parse import quote

import harness

SCENARIO = "serve"
TITLE = "5. Emulator throughput and latency (wrk) vs nginx and Prism"
ORDER = 50

VIN = "1HGCM82633A004352"
FILTER = json.dumps([{"field": "year", "op": ">=", "val": 2018}, {"field": "make", "op": "=", "val": "Toyota"}])
CASES = {  # name -> (target, Prism serves it)
    "trims page 100": ("/api/trims/v2?limit=100", True),
    "trims page 1000": ("/api/trims/v2?limit=1000", True),
    "filtered json query": ("/api/trims/v2?limit=100&json=" + quote(FILTER), False),
    "vin decode": ("/api/vin/" + VIN, True),
}
# Connection counts (BENCH_SERVE_CONNECTIONS overrides; --quick keeps the first two). 64 and 256 are
# the crowded ones: benchmarks/serve_peers.py compares them with nginx and Debian's event-driven HTTP
# libraries in one table.
CONNECTIONS = tuple(int(c) for c in os.environ.get("BENCH_SERVE_CONNECTIONS", "1,8,64,256").split(","))
OPENAPI = Path(os.environ.get("BENCH_OPENAPI") or "/nonexistent/openapi.json")
# Where the emulator's time goes per case (hand-written; valgrind --tool=callgrind on the emulator,
# --threads 1, 1 keep-alive connection, 5 warm-up requests then 200, 2026-11-23: instructions per
# request inclusive of the worker's answer, Server::serve_direct; benchmarks/notes/serve.md).  nginx
# answers each case from a file with sendfile and no parsing beyond the request line; the emulator
# answers repeated requests from its response cache (docs/emulator.md, "Response cache") after the
# per-request checks, on the gate's direct path (docs/emulator.md, "Serving path").
PROFILE = {
    "trims page 100": "profile: 37k instructions/request from the response cache on the direct path (112k "
                      "through httplib's parsing and writing before): our dispatch 21k (query, JWT, rate limit, "
                      "usage, cache lookup, coding), the response head 10k, the Request from the gate's bytes",
    "trims page 1000": "profile: 37k instructions/request from the response cache on the direct path (112k "
                       "before): the 317 KB body is sent from the shared cached entry with the head in one "
                       "sendmsg, no copy; nginx sends the file with sendfile",
    "filtered json query": "profile: 41k instructions/request from the response cache on the direct path "
                           "(145k before): 4k more than page 100 for the long query string",
    "vin decode": "profile: 40k instructions/request from the response cache on the direct path (113k before); "
                  "a VIN not yet answered takes the handler's path, 0.26M (1.20M before the VIN caches: "
                  "benchmarks/notes/vin.md)",
}


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


def wrk(url: str, connections: int, threads: int, duration: int, headers: Optional[Dict[str, str]] = None
        ) -> Dict[str, float]:
    hdr = [a for k, v in (headers or {}).items() for a in ("-H", f"{k}: {v}")]
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency", *hdr, url],
                         capture_output=True, text=True, timeout=duration + 60, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    scale = {"us": 1e-3, "ms": 1.0, "s": 1e3}

    def pct(p: str) -> float:
        m = re.search(p + r"%\s+([\d.]+)(us|ms|s)", out)
        return float(m.group(1)) * scale[m.group(2)] if m else float("nan")

    return {"requests_per_second": rps, "non_2xx": float(non2xx.group(1)) if non2xx else 0.0,
            "p50_ms": pct("50"), "p99_ms": pct("99")}


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




def get(url: str, headers: Optional[Dict[str, str]] = None) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=60) as resp:
        return resp.read()


class Server:
    """A process listening on a loopback port, stopped on exit."""

    def __init__(self, argv: List[str], port: int, timeout: float = 60.0, cwd: Optional[str] = None) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
        try:
            wait_port(port, timeout)
        except Exception:
            self.stop()
            raise

    def stop(self) -> None:
        stop_process(self.proc)


def stop_process(proc: "subprocess.Popen[Any]") -> None:
    """SIGTERM, then SIGKILL after 10 s; waits for the process either way."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run(ctx: harness.Context) -> List[harness.Result]:
    if not shutil.which("wrk"):
        raise RuntimeError("wrk is not installed (Debian package wrk; `make bench` installs it)")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        raise RuntimeError("nginx is not installed (Debian package nginx-light; `make bench` installs it)")
    duration = 1 if ctx.quick else 3
    rounds = max(1, min(ctx.rounds, 1 if ctx.quick else 2))
    auth = {"Authorization": "Bearer " + ctx.jwt}
    servers: List[Server] = []
    with tempfile.TemporaryDirectory(prefix="vd-bench-") as tmp:
        prefix = Path(tmp)
        os.chmod(prefix, 0o755)  # nginx workers may run as an unprivileged user
        root = prefix / "root"
        root.mkdir()
        bodies = {}
        for i, (name, (target, _)) in enumerate(CASES.items()):
            bodies[name] = get(ctx.url + target, auth)
            (root / f"case{i}.json").write_bytes(bodies[name])
        nport = free_port()
        conf = prefix / "nginx.conf"
        conf.write_text(nginx_config(prefix, root, nport, 2))
        prism_bin = harness.prism_binary()
        pport = free_port()
        notes = []
        try:
            servers.append(Server([nginx, "-c", str(conf), "-p", str(prefix)], nport))
            if prism_bin and OPENAPI.exists():
                servers.append(Server([str(prism_bin), "mock", "-h", "127.0.0.1", "-p", str(pport), str(OPENAPI)],
                                      pport, timeout=120))
            else:
                prism_bin = None
                notes.append("Prism not measured: build/bench-node has no prism (`make bench` installs it) "
                             "or no OpenAPI document (set BENCH_OPENAPI to its file)")
            for i, name in enumerate(CASES):
                assert get(f"http://127.0.0.1:{nport}/case{i}.json") == bodies[name], "nginx serves the same bytes"
            results = []
            for conns in (CONNECTIONS[:2] if ctx.quick else CONNECTIONS):
                for i, (name, (target, in_prism)) in enumerate(CASES.items()):
                    urls = {"emulator": (ctx.url + target, auth),
                            "nginx (same bytes)": (f"http://127.0.0.1:{nport}/case{i}.json", {})}
                    if prism_bin and in_prism:
                        urls["Prism mock"] = (f"http://127.0.0.1:{pport}{target}", auth)
                    samples: Dict[str, List[float]] = {k: [] for k in urls}
                    extra: Dict[str, Dict[str, float]] = {}
                    for r in range(rounds):
                        keys = list(urls)
                        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
                            u, h = urls[k]
                            w = wrk(u, conns, min(conns, 2), duration, h)
                            samples[k].append(w["requests_per_second"])
                            e = extra.setdefault(k, {"p50 ms": [], "p99 ms": [], "non-2xx": 0.0})  # type: ignore
                            e["p50 ms"].append(w["p50_ms"])  # type: ignore[attr-defined]
                            e["p99 ms"].append(w["p99_ms"])  # type: ignore[attr-defined]
                            e["non-2xx"] += w["non_2xx"]  # type: ignore[operator]
                    for e in extra.values():
                        for key in ("p50 ms", "p99 ms"):
                            e[key] = sorted(e[key])[len(e[key]) // 2]  # type: ignore
                    res = harness.Result(
                        name=f"serve-{name.replace(' ', '-')}-c{conns}", higher_is_better=True,
                        title=f"{name}, {conns} connection{'s' if conns > 1 else ''} ({len(bodies[name]):,} bytes)",
                        unit="req/s", ours="emulator", samples=samples, extra=extra,  # type: ignore[arg-type]
                        targets=[harness.Target(">= 0.8x nginx", "ratio_min", 0.8, peer="nginx (same bytes)")])
                    if "Prism mock" in urls:
                        res.targets.append(harness.Target(">= 10x Prism", "ratio_min", 10.0, peer="Prism mock"))
                    res.notes += notes + [f"wrk {duration} s per run, {rounds} round(s), threads = min(connections, 2)",
                                          PROFILE[name]]
                    results.append(res)
        finally:
            for s in servers:
                s.stop()
    return results


if __name__ == "__main__":
    sys.exit(harness.main(run))
