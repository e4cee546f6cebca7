#!/usr/bin/env python3
"""Emulator throughput and latency with wrk: against nginx serving the same bytes and the Prism mock.

Cases: trims pages of 10, 100 and 1000 records, a filtered `json` query (100 records) and
`/api/vin/{vin}`, each at 1, 8, 64 and 256 connections (`--quick` keeps 1 and 8), in two modes,
both run and both reported (BENCH_SERVE_MODES=pinned or unpinned for one):

* pinned (equal CPU share): every server on core 0 (the emulator started there, so its defaults
  follow one core: 16 worker threads, 2 computing at once; nginx 1 worker; Prism's node), wrk
  `-t1` on core 1;
* unpinned: no affinity, both cores shared: the emulator's defaults (16 worker threads, 4
  computing at once), nginx 2 workers, wrk `-t2` (`-t1` at 1 connection).

Each case and connection count: one warm-up run per server (not counted), then 3 runs per server
(BENCH_SERVE_RUNS for more), the servers alternating within each run in rotated order, so drift hits
every server alike; median req/s with min-max, the ratio to nginx as the median of each run pair's
ratio with its range, p50/p99 (medians over the runs), the 1-minute load average before and after.
nginx (`sendfile on`, access log off, loopback, temporary config) serves each case's exact bytes,
captured from the emulator, as static files. Prism (`@stoplight/prism-cli`, npm, pinned; `prism
mock`) serves the service's public OpenAPI document, named by $BENCH_OPENAPI (a file you downloaded;
never committed, and not read from anywhere else: without it the Prism column is skipped): it answers
`/api/trims/v2` and `/api/vin/{vin}` with the document's examples (other bytes, so only an
indication). Targets: >= 0.9x nginx pinned, >= 0.8x unpinned, >= 10x Prism.

    python benchmarks/serve_wrk.py [--quick]     (BENCH_SERVE_CONNECTIONS=64,256, BENCH_SERVE_MODES=pinned)
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import quote

import harness

SCENARIO = "serve"
CPU_SHARE = ("two modes, both reported: pinned (every server on core 0, wrk -t1 on core 1) and unpinned "
             "(no affinity; nginx 2 workers, the emulator's defaults, wrk -t2); see each table's setup line")
TITLE = "5. Emulator throughput and latency (wrk) vs nginx and Prism"
ORDER = 50

VIN = "1HGCM82633A004352"
FILTER = json.dumps([{"field": "year", "op": ">=", "val": 2018}, {"field": "make", "op": "=", "val": "Toyota"}])
CASES = {  # name -> (target, Prism serves it)
    "trims page 10": ("/api/trims/v2?limit=10", True),
    "trims page 100": ("/api/trims/v2?limit=100", True),
    "trims page 1000": ("/api/trims/v2?limit=1000", True),
    "filtered json query": ("/api/trims/v2?limit=100&json=" + quote(FILTER), False),
    "vin decode": ("/api/vin/" + VIN, True),
}
# Connection counts (BENCH_SERVE_CONNECTIONS overrides; --quick keeps the first two). 64 and 256 are
# the crowded ones: benchmarks/serve_peers.py compares them with nginx and Debian's event-driven HTTP
# libraries in one table.
CONNECTIONS = tuple(int(c) for c in os.environ.get("BENCH_SERVE_CONNECTIONS", "1,8,64,256").split(","))
MODES = tuple(m for m in os.environ.get("BENCH_SERVE_MODES", "pinned,unpinned").split(",") if m)
RUNS = max(3, int(os.environ.get("BENCH_SERVE_RUNS", "3")))
TARGET_RATIO = {"pinned": 0.9, "unpinned": 0.8}  # issue 41: x nginx on equal footing, and unpinned
OPENAPI = Path(os.environ.get("BENCH_OPENAPI") or "/nonexistent/openapi.json")
# Where the emulator's time goes per case (hand-written; docs/reports/emulator.md has the profile and
# its commands). A repeated request is a response-cache hit: on one core the reactor answers it
# itself (Server::serve_quick, no hand-off to a worker thread, as nginx's event loop does); on more
# than one core it does so for bodies up to 64 KiB and hands larger ones to the workers, which spread
# over the cores. nginx answers each case from a file with sendfile and no parsing beyond the
# request line.
QUICK = ("profile (benchmarks/serve_callgrind.py: callgrind, one keep-alive connection, premium JWT, "
         "2026-12-07): 23.9k user-space instructions per cached request, JWT check included, for 10- and "
         "100-record pages alike (36.3k before the header fields left httplib's multimap); the reactor "
         "answers the cache hit itself, so a request crosses no thread (1.3-1.5 voluntary context "
         "switches per request before, 0.01 after)")
PROFILE = {
    "trims page 10": QUICK,
    "trims page 100": QUICK,
    "trims page 1000": QUICK + "; the 317 KB body is sent from the shared cached entry with the head in "
                       "one sendmsg, no copy; unpinned it goes to the workers (over 64 KiB)",
    "filtered json query": QUICK + "; about 4k more for the long query string",
    "vin decode": QUICK + "; a VIN not yet answered takes the handler's path, 0.26M instructions "
                  "(benchmarks/notes/vin.md)",
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


def wrk(url: str, connections: int, threads: int, duration: int, headers: Optional[Dict[str, str]] = None,
        cpus: Optional[Sequence[int]] = None) -> Dict[str, float]:
    """One wrk run (on `cpus` if given): req/s, non-2xx count, p50 and p99 in ms."""
    hdr = [a for k, v in (headers or {}).items() for a in ("-H", f"{k}: {v}")]
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency", *hdr, url],
                         capture_output=True, text=True, timeout=duration + 60, check=True,
                         preexec_fn=harness.pin_preexec(cpus) if cpus else None).stdout
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

    def __init__(self, argv: List[str], port: int, timeout: float = 60.0, cwd: Optional[str] = None,
                 cpus: Optional[Sequence[int]] = None) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd,
                                     preexec_fn=harness.pin_preexec(cpus) if cpus else None)
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


def mode_setup(mode: str) -> Tuple[Optional[List[int]], Optional[List[int]], int, str]:
    """(server cores, wrk cores, nginx workers, the sentence stating it) of a mode; cores None: unpinned."""
    have = harness.cores()
    if mode == "pinned":
        if len(have) < 2:
            raise RuntimeError(f"pinned mode needs 2 cores, this process may use {have}")
        srv, cli = have[:1], have[1:2]
        return srv, cli, 1, (f"pinned: every server on core {srv[0]} (the emulator started there: 16 worker threads, "
                             f"2 computing at once, its default for 1 core; nginx 1 worker; Prism's node when measured), "
                             f"wrk -t1 on core {cli[0]}")
    if mode == "unpinned":
        return None, None, 2, (f"unpinned: no affinity, {len(have)} cores shared by all: the emulator's defaults "
                               f"(16 worker threads, {2 * len(have)} computing at once), nginx 2 workers, "
                               f"wrk -t2 (-t1 at 1 connection)")
    raise ValueError(f"unknown serve mode {mode!r} (pinned, unpinned)")


def run(ctx: harness.Context) -> List[harness.Result]:
    if not shutil.which("wrk"):
        raise RuntimeError("wrk is not installed (Debian package wrk; `make bench` installs it)")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        raise RuntimeError("nginx is not installed (Debian package nginx-light; `make bench` installs it)")
    duration, warmup = (1, 1) if ctx.quick else (3, 2)
    auth = {"Authorization": "Bearer " + ctx.jwt}
    db = ctx.database()
    results: List[harness.Result] = []
    with tempfile.TemporaryDirectory(prefix="vd-bench-") as tmp:
        prefix = Path(tmp)
        os.chmod(prefix, 0o755)  # nginx workers may run as an unprivileged user
        root = prefix / "root"
        root.mkdir()
        bodies = {}
        for i, (name, (target, _)) in enumerate(CASES.items()):
            bodies[name] = get(ctx.url + target, auth)
            (root / f"case{i}.json").write_bytes(bodies[name])
        for mode in MODES:
            results += run_mode(ctx, mode, db, prefix, bodies, nginx, duration, warmup)
    return results


def run_mode(ctx: harness.Context, mode: str, db: str, prefix: Path, bodies: Dict[str, bytes], nginx: str,
             duration: int, warmup: int) -> List[harness.Result]:
    """Every case and connection count in one mode, its servers started (and stopped) for it."""
    from vehicledata.testing import Emulator

    srv_cpus, wrk_cpus, workers, cpu_text = mode_setup(mode)
    root = prefix / "root"
    servers: List[Server] = []
    notes: List[str] = []
    results = []
    with contextlib.ExitStack() as stack:
        if srv_cpus:  # its own emulator, started on the server core so its defaults follow that core
            with harness.affinity(srv_cpus):
                emu = stack.enter_context(Emulator(db=db, rate_limit=10**8))
            url, jwt = emu.url, harness.login(emu.url)
            harness.settle(url, jwt)
        else:
            url, jwt = ctx.url, ctx.jwt
        auth = {"Authorization": "Bearer " + jwt}
        for name, (target, _) in CASES.items():
            assert get(url + target, auth) == bodies[name], f"the {mode} emulator serves other bytes for {name}"
        nport = free_port()
        conf = prefix / f"nginx-{mode}.conf"
        conf.write_text(nginx_config(prefix, root, nport, workers))
        prism_bin = harness.prism_binary()
        pport = free_port()
        try:
            servers.append(Server([nginx, "-c", str(conf), "-p", str(prefix)], nport, cpus=srv_cpus))
            if prism_bin and OPENAPI.exists():
                servers.append(Server([str(prism_bin), "mock", "-h", "127.0.0.1", "-p", str(pport), str(OPENAPI)],
                                      pport, timeout=120, cpus=srv_cpus))
            else:
                prism_bin = None
                notes.append("Prism not measured: build/bench-node has no prism (`make bench` installs it) "
                             "or no OpenAPI document (set BENCH_OPENAPI to its file)")
            for i, name in enumerate(CASES):
                assert get(f"http://127.0.0.1:{nport}/case{i}.json") == bodies[name], "nginx serves the same bytes"
            for conns in (CONNECTIONS[:2] if ctx.quick else CONNECTIONS):
                threads = 1 if wrk_cpus else min(conns, 2)
                for i, (name, (target, in_prism)) in enumerate(CASES.items()):
                    urls = {"emulator": (url + target, auth),
                            "nginx (same bytes)": (f"http://127.0.0.1:{nport}/case{i}.json", {})}
                    if prism_bin and in_prism:
                        urls["Prism mock"] = (f"http://127.0.0.1:{pport}{target}", auth)
                    load_start = harness.load1()
                    samples, extra = measure_cell(urls, conns, threads, duration, warmup, wrk_cpus)
                    cell = f"{name}, {conns} connection{'s' if conns > 1 else ''} ({len(bodies[name]):,} bytes)"
                    res = harness.Result(
                        name=f"serve-{mode}-{name.replace(' ', '-')}-c{conns}", higher_is_better=True,
                        title=f"{cell}, {mode}", unit="req/s", ours="emulator", samples=samples,
                        extra=extra,  # type: ignore[arg-type]
                        targets=[harness.Target(f">= {TARGET_RATIO[mode]}x nginx", "ratio_min", TARGET_RATIO[mode],
                                                peer="nginx (same bytes)")],
                        setup={"mode": mode, "cell": cell, "reference": "nginx (same bytes)", "cpu": cpu_text,
                               "runs": f"wrk -t{threads} -c{conns} --latency: a {warmup} s warm-up per server "
                                       f"(not counted), then {RUNS} runs of {duration} s, servers alternating",
                               "load_avg": [load_start, harness.load1()]})
                    if "Prism mock" in urls:
                        res.targets.append(harness.Target(">= 10x Prism", "ratio_min", 10.0, peer="Prism mock"))
                    res.notes += notes + [PROFILE[name]]
                    results.append(res)
        finally:
            for s in servers:
                s.stop()
    return results


def measure_cell(urls: Dict[str, Tuple[str, Dict[str, str]]], conns: int, threads: int, duration: int, warmup: int,
                 cpus: Optional[Sequence[int]], runs: int = 0
                 ) -> Tuple[Dict[str, List[float]], Dict[str, Dict[str, Any]]]:
    """A warm-up run per server, then `runs` (RUNS) runs per server in rotated order: req/s per run, and
    per server the medians of p50 and p99 and the non-2xx count."""
    keys = list(urls)
    for k in keys:
        u, h = urls[k]
        wrk(u, conns, threads, warmup, h, cpus)
    samples: Dict[str, List[float]] = {k: [] for k in keys}
    lat: Dict[str, Dict[str, List[float]]] = {k: {"p50 ms": [], "p99 ms": []} for k in keys}
    non2xx = {k: 0.0 for k in keys}
    for r in range(runs or RUNS):
        for k in keys[r % len(keys):] + keys[:r % len(keys)]:
            u, h = urls[k]
            w = wrk(u, conns, threads, duration, h, cpus)
            samples[k].append(w["requests_per_second"])
            lat[k]["p50 ms"].append(w["p50_ms"])
            lat[k]["p99 ms"].append(w["p99_ms"])
            non2xx[k] += w["non_2xx"]
    extra = {k: {"p50 ms": statistics.median(lat[k]["p50 ms"]), "p99 ms": statistics.median(lat[k]["p99 ms"]),
                 "non-2xx": non2xx[k]} for k in keys}
    return samples, extra


if __name__ == "__main__":
    sys.exit(harness.main(run))
