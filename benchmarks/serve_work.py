#!/usr/bin/env python3
"""The emulator's work per request under wrk: what a loaded machine does not change.

req/s on a shared 2-core machine moves with everyone else's load; the work a server process
does per answered request does not. For each build given (``--exe NAME=PATH``: two builds side by
side, e.g. an old commit's worktree and this one), with ``--nginx`` also nginx serving each case's
exact bytes (captured from the first build) as static files with sendfile, each case (of the serve
scenario, benchmarks/serve_wrk.py, or ``--pages``: trims pages of N records) and each connection
count, in interleaved rounds:

* ``wrk -cC -dD`` against the server (response cache warm, premium JWT);
* around it, the server's CPU time (``/proc/PID/stat`` utime + stime of each of its processes:
  nginx's master and workers), its threads' voluntary and involuntary context switches
  (``/proc/PID/task/*/status``: a voluntary one is a sleep, so a wake-up) and, with ``perf``
  usable, ``perf stat -e instructions,context-switches -p PID``;
* all divided by wrk's request count.

Two modes (``--mode``), as serve_wrk.py's: ``pinned`` puts every server on core 0 (the emulator
started there, so its defaults follow one core: 2 computing at once; nginx 1 worker) and wrk
``-t1`` on core 1; ``unpinned`` (default) sets no affinity (nginx 2 workers, wrk ``-t min(C,2)``).

``--strace`` adds one more run per server and case under ``strace -c -f -p PID...`` (slow: its
req/s mean nothing) for the system calls per request by name.

    python benchmarks/serve_work.py --exe old=/tmp/gate-old/build/vehicledata-emulator \\
        --exe new=.venv/lib/python3.11/site-packages/vehicledata/bin/vehicledata-emulator \\
        [--nginx] [--mode pinned] [--pages 10,100,1000] [--db build/home/vehicledata.db]
        [--connections 1,8] [--duration 4] [--rounds 2] [--strace]

Prints Markdown tables (medians with min-max over the rounds; the load average at the start and
the end). Measurements only.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
from serve_wrk import CASES, free_port, nginx_config, stop_process, wait_port  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def tree_counters(pids: Sequence[int]) -> Dict[str, float]:
    """CPU seconds and context switches of the processes `pids`, all their threads."""
    cpu = vol = invol = 0.0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu += (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14, 15)
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                status = (task / "status").read_text()
            except OSError:
                continue
            vol += int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))  # type: ignore
            invol += int(re.search(r"^nonvoluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))  # type: ignore
    return {"cpu": cpu, "vol": vol, "invol": invol}


class Emu:
    """One emulator executable on a free loopback port (on `cpus` if given: its defaults follow them)."""

    def __init__(self, exe: str, db: str, cpus: Optional[Sequence[int]] = None) -> None:
        self.proc = subprocess.Popen([exe, "--host", "127.0.0.1", "--port", "0", "--db", db,
                                      "--rate-limit", "100000000", "--jwt-secret", "serve-work-secret"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                     text=True, preexec_fn=harness.pin_preexec(cpus) if cpus else None)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"{exe} did not start: {line!r}")
        self.url = line[len("listening on "):].strip()
        self.pids = [self.proc.pid]
        from vehicledata.testing import DEMO_ACCOUNTS

        acct = DEMO_ACCOUNTS["premium"]
        body = json.dumps({"api_token": acct["api_token"], "api_secret": acct["api_secret"]}).encode()
        req = urllib.request.Request(self.url + "/api/auth/login", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            self.auth = {"Authorization": "Bearer " + resp.read().decode().strip()}
        harness.settle(self.url, self.auth["Authorization"][len("Bearer "):])

    def target_url(self, target: str, case: int) -> str:
        return self.url + target

    def get(self, target: str) -> bytes:
        req = urllib.request.Request(self.url + target, headers=self.auth)
        with urllib.request.urlopen(req, timeout=120) as resp:
            return bytes(resp.read())

    def counters(self) -> Dict[str, float]:
        return tree_counters(self.pids)

    def stop(self) -> None:
        stop_process(self.proc)


class Nginx:
    """nginx serving `bodies` (case{i}.json) from `prefix`/root with sendfile, `workers` worker processes."""

    def __init__(self, prefix: Path, bodies: List[bytes], workers: int, cpus: Optional[Sequence[int]]) -> None:
        root = prefix / "root"
        root.mkdir(exist_ok=True)
        for i, b in enumerate(bodies):
            (root / f"case{i}.json").write_bytes(b)
        port = free_port()
        conf = prefix / "nginx.conf"
        conf.write_text(nginx_config(prefix, root, port, workers))
        exe = shutil.which("nginx") or "/usr/sbin/nginx"
        self.proc = subprocess.Popen([exe, "-c", str(conf), "-p", str(prefix)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL,
                                     preexec_fn=harness.pin_preexec(cpus) if cpus else None)
        wait_port(port)
        self.url = f"http://127.0.0.1:{port}"
        self.auth: Dict[str, str] = {}
        deadline = time.monotonic() + 10
        while len(self.pids) < 1 + workers and time.monotonic() < deadline:
            time.sleep(0.05)

    @property
    def pids(self) -> List[int]:
        kids = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        return [self.proc.pid] + [int(k) for k in kids]

    def target_url(self, target: str, case: int) -> str:
        return f"{self.url}/case{case}.json"

    def counters(self) -> Dict[str, float]:
        return tree_counters(self.pids)

    def stop(self) -> None:
        stop_process(self.proc)


def wrk(url: str, conns: int, threads: int, duration: float, headers: Dict[str, str],
        cpus: Optional[Sequence[int]]) -> Tuple[int, float]:
    hdr = [a for k, v in headers.items() for a in ("-H", f"{k}: {v}")]
    out = subprocess.run(["wrk", f"-t{threads}", f"-c{conns}", f"-d{duration:g}s", *hdr, url],
                         capture_output=True, text=True, timeout=duration + 60, check=True,
                         preexec_fn=harness.pin_preexec(cpus) if cpus else None).stdout
    n = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    if "Non-2xx" in out:
        raise RuntimeError("wrk saw non-2xx answers:\n" + out)
    return n, rps


def perf_usable() -> bool:
    if not shutil.which("perf"):
        return False
    r = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"], capture_output=True, text=True)
    return r.returncode == 0 and "<not supported>" not in r.stderr and "<not counted>" not in r.stderr


def measure(srv: "Emu | Nginx", url: str, conns: int, threads: int, duration: float, perf: bool,
            wrk_cpus: Optional[Sequence[int]]) -> Dict[str, float]:
    pf = None
    out = None
    if perf:
        out = tempfile.NamedTemporaryFile(prefix="serve-work-perf-", suffix=".csv", delete=False)
        out.close()
        pf = subprocess.Popen(["perf", "stat", "-x,", "-o", out.name, "-e", "instructions,context-switches",
                               "-p", ",".join(map(str, srv.pids))], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        time.sleep(0.2)
    before = srv.counters()
    n, rps = wrk(url, conns, threads, duration, srv.auth, wrk_cpus)
    after = srv.counters()
    row = {"requests": float(n), "req/s": rps,
           "cpu us": (after["cpu"] - before["cpu"]) * 1e6 / n,
           "vol cs": (after["vol"] - before["vol"]) / n,
           "invol cs": (after["invol"] - before["invol"]) / n}
    if pf is not None and out is not None:
        pf.send_signal(signal.SIGINT)
        pf.wait(30)
        text = Path(out.name).read_text()
        os.unlink(out.name)
        for line in text.splitlines():
            parts = line.split(",")
            if len(parts) > 3 and parts[0].replace(".", "").isdigit():
                if parts[2].startswith("instructions"):
                    row["instr"] = float(parts[0]) / n
                elif parts[2].startswith("context-switches"):
                    row["perf cs"] = float(parts[0]) / n
    return row


def strace_counts(srv: "Emu | Nginx", url: str, conns: int, threads: int, duration: float,
                  wrk_cpus: Optional[Sequence[int]]) -> Dict[str, float]:
    out = tempfile.NamedTemporaryFile(prefix="serve-work-strace-", suffix=".txt", delete=False)
    out.close()
    attach = [a for p in srv.pids for a in ("-p", str(p))]
    st = subprocess.Popen(["strace", "-c", "-f", "-o", out.name, *attach],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    n, _ = wrk(url, conns, threads, duration, srv.auth, wrk_cpus)
    st.send_signal(signal.SIGINT)
    st.wait(30)
    text = Path(out.name).read_text()
    os.unlink(out.name)
    calls: Dict[str, float] = {}
    for line in text.splitlines():
        parts = line.split()
        # % time, seconds, usecs/call, calls, [errors], syscall
        if len(parts) >= 5 and parts[0].replace(".", "").isdigit() and parts[-1] != "total":
            calls[parts[-1]] = int(parts[3]) / n
    calls["total"] = sum(calls.values())
    return calls


def cell(vals: List[float], whole: bool) -> str:
    if not vals:
        return "-"
    fmt = "{:,.0f}" if whole else "{:.2f}"
    med = fmt.format(statistics.median(vals))
    return med if len(vals) < 2 else f"{med} ({fmt.format(min(vals))}-{fmt.format(max(vals))})"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", action="append", required=True, help="NAME=PATH of an emulator executable (repeat)")
    ap.add_argument("--nginx", action="store_true", help="also nginx serving the same bytes (sendfile)")
    ap.add_argument("--mode", choices=("pinned", "unpinned"), default="unpinned",
                    help="pinned: servers on core 0, wrk -t1 on core 1 (nginx 1 worker); unpinned (default)")
    ap.add_argument("--db", default=None, help="the database (default: vehicledata.dataset.ensure_database())")
    ap.add_argument("--connections", default="1,8")
    ap.add_argument("--duration", type=float, default=4.0, help="seconds per wrk run (default 4)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cases", default=None, help="comma-separated serve cases (default: all, or none with --pages)")
    ap.add_argument("--pages", default="", help="comma-separated record counts: /api/trims/v2?limit=N each")
    ap.add_argument("--strace", action="store_true", help="also count system calls per request (strace -c -f)")
    args = ap.parse_args(argv)
    exes = dict(e.split("=", 1) for e in args.exe)
    conns = [int(c) for c in args.connections.split(",")]
    targets: Dict[str, str] = {}
    for c in (args.cases if args.cases is not None else ("" if args.pages else ",".join(CASES))).split(","):
        if c:
            targets[c] = CASES[c][0]
    for p in args.pages.split(","):
        if p:
            targets[f"trims page {int(p)}"] = f"/api/trims/v2?limit={int(p)}"
    srv_cpus, wrk_cpus, workers, cpu_text = None, None, 2, "unpinned: no affinity, nginx 2 workers"
    if args.mode == "pinned":
        have = harness.cores()
        if len(have) < 2:
            raise SystemExit(f"pinned mode needs 2 cores, this process may use {have}")
        srv_cpus, wrk_cpus, workers = have[:1], have[1:2], 1
        cpu_text = (f"pinned: every server on core {srv_cpus[0]} (the emulator started there; nginx 1 worker), "
                    f"wrk -t1 on core {wrk_cpus[0]}")
    db = args.db
    if db is None:
        from vehicledata import dataset

        db = str(dataset.ensure_database())
    perf = perf_usable()
    servers: Dict[str, "Emu | Nginx"] = {}
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="serve-work-") as tmp:
        try:
            for name, exe in exes.items():
                servers[name] = Emu(exe, db, srv_cpus)
            first = next(iter(servers.values()))
            assert isinstance(first, Emu)
            bodies = {}
            for case, target in targets.items():
                got = {name: e.get(target) for name, e in servers.items() if isinstance(e, Emu)}
                for e in list(servers.values()):
                    assert isinstance(e, Emu)
                    e.get(target)  # the second ask is answered from the response cache
                bodies[case] = got[next(iter(got))]
                if len(set(got.values())) != 1:
                    print(f"note: the builds answer {case} with other bytes", file=sys.stderr)
            if args.nginx:
                os.chmod(tmp, 0o755)  # nginx workers may run as an unprivileged user
                servers["nginx"] = Nginx(Path(tmp), list(bodies.values()), workers, srv_cpus)
                for i, (case, body) in enumerate(bodies.items()):
                    with urllib.request.urlopen(servers["nginx"].target_url("", i), timeout=60) as resp:
                        assert resp.read() == body, f"nginx serves other bytes for {case}"
            rows: Dict[Tuple[str, int, str], List[Dict[str, float]]] = {}
            names = list(servers)
            for r in range(args.rounds):
                for i, (case, target) in enumerate(targets.items()):
                    for c in conns:
                        threads = 1 if wrk_cpus else min(c, 2)
                        if r == 0:  # a warm-up per server, not counted
                            for name in names:
                                wrk(servers[name].target_url(target, i), c, threads, 1, servers[name].auth, wrk_cpus)
                        for name in names[r % len(names):] + names[:r % len(names)]:
                            srv = servers[name]
                            rows.setdefault((case, c, name), []).append(
                                measure(srv, srv.target_url(target, i), c, threads, args.duration, perf, wrk_cpus))
            traced: Dict[Tuple[str, int, str], Dict[str, float]] = {}
            if args.strace and shutil.which("strace"):
                for i, (case, target) in enumerate(targets.items()):
                    for c in conns:
                        for name in names:
                            srv = servers[name]
                            traced[(case, c, name)] = strace_counts(srv, srv.target_url(target, i), c,
                                                                    1 if wrk_cpus else min(c, 2),
                                                                    min(args.duration, 3), wrk_cpus)
        finally:
            for s in servers.values():
                s.stop()
    load = os.getloadavg()
    print(f"{cpu_text}; wrk -cC -d{args.duration:g}s, a 1 s warm-up per server, {args.rounds} round(s) "
          f"interleaved, medians (min-max); load average (1 min) {load_start:.1f} at the start, {load[0]:.1f} "
          f"at the end; perf {'on' if perf else 'off'}")
    keys = ["req/s", "cpu us", "vol cs", "invol cs"] + (["instr", "perf cs"] if perf else [])
    ref = "nginx" if "nginx" in servers else None
    print("| case | conns | server | " + " | ".join(k + " /req" if k != "req/s" else k for k in keys) +
          (" | CPU/req x nginx's |" if ref else " |"))
    print("|" + "---|" * (3 + len(keys) + (1 if ref else 0)))
    for case in targets:
        for c in conns:
            for name in names:
                samples = rows[(case, c, name)]
                cells = [cell([s[k] for s in samples if k in s], k in ("req/s", "instr")) for k in keys]
                if ref:  # nginx's CPU per request over this server's, per round: above 1 is cheaper than nginx
                    ratios = [n["cpu us"] / s["cpu us"] for s, n in zip(samples, rows[(case, c, ref)])]
                    cells.append(cell(ratios, False))
                print(f"| {case} ({len(bodies[case]):,} B) | {c} | {name} | " + " | ".join(cells) + " |")
    if traced:
        print()
        print("System calls per request (strace -c -f, one run each):")
        for (case, c, name), calls in traced.items():
            top = ", ".join(f"{k} {v:.2f}" for k, v in sorted(calls.items(), key=lambda kv: -kv[1])
                            if k != "total" and v >= 0.01)
            print(f"- {case}, {c} conn(s), {name}: {calls['total']:.2f} ({top})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
