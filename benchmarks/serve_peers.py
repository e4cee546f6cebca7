#!/usr/bin/env python3
"""The emulator against nginx and Debian's event-driven HTTP libraries at 64 and 256 connections.

wrk against, per connection count, every server in the same run (a warm-up run each, not counted,
then `--runs` runs, 3 by default, the servers alternating in rotated order), in two modes, both
run and both printed by default (`--mode`):

* pinned (equal CPU share): every server on core 0 (the emulators started there, so their compute
  workers follow one core; nginx 1 worker; the peers 1 thread), wrk `-t1` on core 1;
* unpinned: no affinity, both cores shared; nginx 2 workers, the peers 2 threads, the emulators'
  compute workers twice the cores, wrk `-t2`.

The servers:

* the emulator answering `/api/trims/v2?limit=100` with a premium JWT from its response cache
  ("cached"), and a second emulator started with `--response-cache-mb 0` answering the same target
  by running its query every time ("uncached");
* nginx (2 workers, sendfile) serving that answer's exact bytes as a static file;
* the throwaway peers in benchmarks/peers/ (libmicrohttpd, libh2o over libuv, Boost.Beast over
  Asio), each with 2 threads answering every request with the same bytes from memory. They are
  compiled here into a temporary directory when their Debian headers are installed
  (libmicrohttpd-dev, libh2o-dev + libuv1-dev, libboost-dev) and skipped otherwise; they are not
  part of the product.

Prints one Markdown table per mode (median req/s with min-max, p50/p99 medians, ours or the peer
over nginx as the median of each run pair's ratio with its range) and the 1-minute load average
before and after; docs/performance.md ("Event-driven peers") records a run and the decision drawn
from it.

    python benchmarks/serve_peers.py [--mode both|pinned|unpinned] [--runs 3] [--duration 5]
                                  [--connections 64,256] [--threads 16] [--compute-workers N] [--prebuilt DIR]
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import harness
from serve_wrk import Server, free_port, measure_cell, mode_setup, nginx_config

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


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("both", "pinned", "unpinned"), default="both",
                    help="pinned (servers on core 0, wrk on core 1), unpinned, or both (default)")
    ap.add_argument("--runs", type=int, default=3, help="counted runs per server and count (default 3, at least 3)")
    ap.add_argument("--duration", type=int, default=5, help="seconds per wrk run (default 5; warm-up 2)")
    ap.add_argument("--connections", default="64,256", help="connection counts (default 64,256)")
    ap.add_argument("--threads", type=int, default=16, help="the emulators' worker threads (default 16)")
    ap.add_argument("--compute-workers", type=int, default=None,
                    help="of them, computing at once (default: the emulator's own, twice the cores)")
    ap.add_argument("--prebuilt", type=Path, default=None, help="a directory with the peers already built")
    args = ap.parse_args(argv)
    conns = [int(c) for c in args.connections.split(",")]
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed (Debian package wrk)")
    from vehicledata import dataset

    sources = os.environ.get("VEHICLEDATA_SOURCES")
    db = str(dataset.ensure_database(sources=sources) if sources else dataset.ensure_database())
    with tempfile.TemporaryDirectory(prefix="vd-peers-") as tmp:
        prefix = Path(tmp)
        os.chmod(prefix, 0o755)
        built, notes = build_peers(prefix, args.prebuilt)
        for mode in (("pinned", "unpinned") if args.mode == "both" else (args.mode,)):
            run_mode(mode, args, db, prefix, built, conns)
    for n in notes:
        print("note:", n)
    return 0


def run_mode(mode: str, args: argparse.Namespace, db: str, prefix: Path, built: Dict[str, Path],
             conns: List[int]) -> None:
    """One mode: its servers started for it, every count measured, one table printed."""
    from vehicledata.testing import Emulator

    srv_cpus, wrk_cpus, workers, cpu_text = mode_setup(mode)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    servers: List[Server] = []
    load_start = harness.load1()
    with contextlib.ExitStack() as stack:
        with harness.affinity(srv_cpus) if srv_cpus else contextlib.nullcontext():
            cached = stack.enter_context(Emulator(db=db, rate_limit=10**8, threads=args.threads,
                                                  compute_workers=args.compute_workers))
            uncached = stack.enter_context(Emulator(db=db, rate_limit=10**8, threads=args.threads,
                                                    compute_workers=args.compute_workers, response_cache_mb=0))
        jwt, ujwt = harness.login(cached.url), harness.login(uncached.url)
        harness.settle(cached.url, jwt)
        harness.settle(uncached.url, ujwt)
        auth, uauth = {"Authorization": "Bearer " + jwt}, {"Authorization": "Bearer " + ujwt}
        body = fetch(cached.url + TARGET, auth)
        assert fetch(uncached.url + TARGET, uauth) == body
        root = prefix / "root"
        root.mkdir(exist_ok=True)
        (root / "body.json").write_bytes(body)
        try:
            nport = free_port()
            conf = prefix / f"nginx-{mode}.conf"
            conf.write_text(nginx_config(prefix, root, nport, workers))
            servers.append(Server([nginx, "-c", str(conf), "-p", str(prefix)], nport, cpus=srv_cpus))
            urls: Dict[str, Tuple[str, Dict[str, str]]] = {
                "emulator, cached": (cached.url + TARGET, auth),
                "emulator, uncached (--response-cache-mb 0)": (uncached.url + TARGET, uauth),
                "nginx (same bytes, sendfile)": (f"http://127.0.0.1:{nport}/body.json", {}),
            }
            for name, exe in built.items():
                port = free_port()
                servers.append(Server([str(exe), str(port), str(root / "body.json"), str(workers)], port,
                                      cpus=srv_cpus))
                got = fetch(f"http://127.0.0.1:{port}/body.json")
                assert got == body, f"{name} serves other bytes"
                urls[name] = (f"http://127.0.0.1:{port}/body.json", {})
            results: Dict[int, Tuple[Dict[str, List[float]], Dict[str, Dict[str, Any]]]] = {}
            for c in conns:
                results[c] = measure_cell(urls, c, 1 if wrk_cpus else 2, args.duration, 2, wrk_cpus,
                                          max(3, args.runs))
        finally:
            for s in servers:
                s.stop()
    print(f"\n{cpu_text}; peers {workers} thread(s); wrk -cN -d{args.duration}s --latency, a 2 s warm-up per server, "
          f"{max(3, args.runs)} runs, {TARGET} ({len(body):,} bytes); load average (1 min) {load_start:.1f} before, "
          f"{harness.load1():.1f} after")
    head = "| server | " + " | ".join(f"{c} conns req/s median (min - max) | p50 / p99 ms | x nginx (runs)"
                                      for c in conns) + " |"
    print(head)
    print("|" + "---|" * (1 + 3 * len(conns)))
    ref = "nginx (same bytes, sendfile)"
    for k in urls:
        cells = []
        for c in conns:
            samples, extra = results[c]
            st, e = harness.spread(samples[k]), extra[k]
            runs = harness.spread(harness.run_ratios(samples[k], samples[ref], True))
            errs = f" ({int(e['non-2xx'])} non-2xx)" if e["non-2xx"] else ""
            cells += [f"{st['median']:,.0f} ({st['min']:,.0f} - {st['max']:,.0f}){errs}",
                      f"{e['p50 ms']:.1f} / {e['p99 ms']:.1f}",
                      f"{runs['median']:.2f} ({runs['min']:.2f} - {runs['max']:.2f})"]
        print(f"| {k} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
