#!/usr/bin/env python3
"""The emulator against nginx and Debian's event-driven HTTP libraries at 64 and 256 connections.

wrk (`-t2 -cN --latency`) against, in one run and interleaved per connection count:

* the emulator answering `/api/trims/v2?limit=100` with a premium JWT from its response cache
  ("cached"), and a second emulator started with `--response-cache-mb 0` answering the same target
  by running its query every time ("uncached");
* nginx (2 workers, sendfile) serving that answer's exact bytes as a static file;
* the throwaway peers in benchmarks/peers/ (libmicrohttpd, libh2o over libuv, Boost.Beast over
  Asio), each with 2 threads answering every request with the same bytes from memory. They are
  compiled here into a temporary directory when their Debian headers are installed
  (libmicrohttpd-dev, libh2o-dev + libuv1-dev, libboost-dev) and skipped otherwise; they are not
  part of the product.

Prints one Markdown table (req/s, p50/p99, ratio to nginx per connection count); docs/performance.md
("Event-driven peers") records a run and the decision drawn from it.

    python benchmarks/serve_peers.py [--duration 5] [--connections 64,256] [--threads 16] [--compute-workers N]
                                  [--prebuilt DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from serve_wrk import Server, free_port, nginx_config, wrk

HERE = Path(__file__).resolve().parent
PEERS = HERE / "peers"
TARGET = "/api/trims/v2?limit=100"
# name -> (source, compiler command after the output and source paths, header that must exist)
PEER_BUILDS = {
    "libmicrohttpd": ("mhd_serve.c", ["gcc", "-O2"], ["-lmicrohttpd"], "/usr/include/microhttpd.h"),
    "libh2o (libuv)": ("h2o_serve.c", ["gcc", "-O2"], ["-lh2o", "-luv", "-lssl", "-lcrypto", "-lpthread"],
                       "/usr/include/uv.h"),
    "Boost.Beast": ("beast_serve.cpp", ["g++", "-O2", "-std=c++17"], ["-pthread"],
                    "/usr/include/boost/beast.hpp"),
}


def build_peers(out: Path, prebuilt: Optional[Path]) -> Tuple[Dict[str, Path], List[str]]:
    built: Dict[str, Path] = {}
    notes: List[str] = []
    for name, (source, cc, libs, header) in PEER_BUILDS.items():
        if prebuilt and (prebuilt / Path(source).stem).exists():
            built[name] = prebuilt / Path(source).stem
            continue
        if not Path(header).exists() or (name.startswith("libh2o") and not Path("/usr/include/h2o.h").exists()):
            notes.append(f"{name}: not measured ({header} missing)")
            continue
        exe = out / Path(source).stem
        r = subprocess.run(["nice", "-n", "10", *cc, "-o", str(exe), str(PEERS / source), *libs],
                           capture_output=True, text=True)
        if r.returncode != 0:
            notes.append(f"{name}: build failed: {r.stderr.strip()[:300]}")
            continue
        built[name] = exe
    return built, notes


def fetch(url: str, headers: Optional[Dict[str, str]] = None) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=60) as resp:
        return bytes(resp.read())


def login(url: str) -> str:
    from vehicledata.testing import DEMO_ACCOUNTS

    acct = DEMO_ACCOUNTS["premium"]
    body = json.dumps({"api_token": acct["api_token"], "api_secret": acct["api_secret"]}).encode()
    req = urllib.request.Request(url + "/api/auth/login", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.read().decode().strip()


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=int, default=5, help="seconds per wrk run (default 5)")
    ap.add_argument("--connections", default="64,256", help="connection counts (default 64,256)")
    ap.add_argument("--threads", type=int, default=16, help="the emulators' worker threads (default 16)")
    ap.add_argument("--compute-workers", type=int, default=None,
                    help="of them, computing at once (default: the emulator's own, twice the cores)")
    ap.add_argument("--prebuilt", type=Path, default=None, help="a directory with the peers already built")
    args = ap.parse_args(argv)
    conns = [int(c) for c in args.connections.split(",")]
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed (Debian package wrk)")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    from vehicledata import dataset
    from vehicledata.testing import Emulator

    sources = os.environ.get("VEHICLEDATA_SOURCES")
    db = dataset.ensure_database(sources=sources) if sources else dataset.ensure_database()
    servers: List[Server] = []
    with tempfile.TemporaryDirectory(prefix="vd-peers-") as tmp, \
            Emulator(db=db, rate_limit=10**8, threads=args.threads, compute_workers=args.compute_workers) as cached, \
            Emulator(db=db, rate_limit=10**8, threads=args.threads, compute_workers=args.compute_workers,
                     response_cache_mb=0) as uncached:
        prefix = Path(tmp)
        os.chmod(prefix, 0o755)
        auth = {"Authorization": "Bearer " + login(cached.url)}
        body = fetch(cached.url + TARGET, auth)
        assert fetch(uncached.url + TARGET, {"Authorization": "Bearer " + login(uncached.url)}) == body
        uauth = {"Authorization": "Bearer " + login(uncached.url)}
        root = prefix / "root"
        root.mkdir()
        (root / "body.json").write_bytes(body)
        built, notes = build_peers(prefix, args.prebuilt)
        try:
            nport = free_port()
            conf = prefix / "nginx.conf"
            conf.write_text(nginx_config(prefix, root, nport, 2))
            servers.append(Server([nginx, "-c", str(conf), "-p", str(prefix)], nport))
            urls: Dict[str, Tuple[str, Dict[str, str]]] = {
                "emulator, cached": (cached.url + TARGET, auth),
                "emulator, uncached (--response-cache-mb 0)": (uncached.url + TARGET, uauth),
                "nginx (same bytes, sendfile)": (f"http://127.0.0.1:{nport}/body.json", {}),
            }
            for name, exe in built.items():
                port = free_port()
                servers.append(Server([str(exe), str(port), str(root / "body.json"), "2"], port))
                got = fetch(f"http://127.0.0.1:{port}/body.json")
                assert got == body, f"{name} serves other bytes"
                urls[name] = (f"http://127.0.0.1:{port}/body.json", {})
            results: Dict[Tuple[str, int], Dict[str, float]] = {}
            for i, c in enumerate(conns):
                keys = list(urls)
                for k in keys[i % len(keys):] + keys[:i % len(keys)]:  # rotated order per count
                    u, h = urls[k]
                    results[(k, c)] = wrk(u, c, 2, args.duration, h)
        finally:
            for s in servers:
                s.stop()
    load = os.getloadavg()
    print(f"wrk -t2 -cN -d{args.duration}s --latency, {TARGET} ({len(body):,} bytes), "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end")
    head = "| server | " + " | ".join(f"{c} conns req/s | p50 / p99 ms | x nginx" for c in conns) + " |"
    print(head)
    print("|" + "---|" * (1 + 3 * len(conns)))
    ref = "nginx (same bytes, sendfile)"
    for k in urls:
        cells = []
        for c in conns:
            r = results[(k, c)]
            ratio = r["requests_per_second"] / results[(ref, c)]["requests_per_second"]
            errs = f" ({int(r['non_2xx'])} non-2xx)" if r["non_2xx"] else ""
            cells += [f"{r['requests_per_second']:,.0f}{errs}", f"{r['p50_ms']:.1f} / {r['p99_ms']:.1f}",
                      f"{ratio:.2f}"]
        print(f"| {k} | " + " | ".join(cells) + " |")
    for n in notes:
        print("note:", n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
