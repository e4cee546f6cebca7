#!/usr/bin/env python3
"""The emulator's work per request under wrk: what a loaded machine does not change.

req/s on a shared 2-core machine moves with everyone else's load; the work the emulator process
does per answered request does not. For each build given (``--exe NAME=PATH``: two builds side by
side, e.g. an old commit's worktree and this one), each case of the serve scenario
(benchmarks/serve_wrk.py) and each connection count, in interleaved rounds:

* ``wrk -t min(c,2) -c c -d D`` against the build's emulator (response cache warm, premium JWT);
* around it, the process's CPU time (``/proc/PID/stat`` utime + stime), its threads' voluntary and
  involuntary context switches (``/proc/PID/task/*/status``: a voluntary one is a sleep, so a
  wake-up) and, with ``perf`` usable, ``perf stat -e instructions,context-switches -p PID``;
* all divided by wrk's request count.

``--strace`` adds one more run per build and case under ``strace -c -f -p PID`` (slow: its req/s
mean nothing) for the system calls per request by name.

    python benchmarks/serve_work.py --exe old=/tmp/gate-old/build/vehicledata-emulator \\
        --exe new=.venv/lib/python3.11/site-packages/vehicledata/bin/vehicledata-emulator \\
        [--db build/home/vehicledata.db] [--connections 1,8] [--duration 4] [--rounds 2] [--strace]

Prints Markdown tables (medians over the rounds; the load average at the end). Measurements only.
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
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from serve_wrk import CASES, stop_process  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


class Emu:
    """One emulator executable on a free loopback port."""

    def __init__(self, exe: str, db: str) -> None:
        self.proc = subprocess.Popen([exe, "--host", "127.0.0.1", "--port", "0", "--db", db,
                                      "--rate-limit", "100000000", "--jwt-secret", "serve-work-secret"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                     text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"{exe} did not start: {line!r}")
        self.url = line[len("listening on "):].strip()
        self.pid = self.proc.pid
        from vehicledata.testing import DEMO_ACCOUNTS

        acct = DEMO_ACCOUNTS["premium"]
        body = json.dumps({"api_token": acct["api_token"], "api_secret": acct["api_secret"]}).encode()
        req = urllib.request.Request(self.url + "/api/auth/login", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            self.auth = {"Authorization": "Bearer " + resp.read().decode().strip()}

    def get(self, target: str) -> bytes:
        req = urllib.request.Request(self.url + target, headers=self.auth)
        with urllib.request.urlopen(req, timeout=120) as resp:
            return bytes(resp.read())

    def counters(self) -> Dict[str, float]:
        """CPU seconds and context switches of the process, all threads."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14, 15)
        vol = invol = 0
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                status = (task / "status").read_text()
            except OSError:
                continue
            vol += int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))  # type: ignore
            invol += int(re.search(r"^nonvoluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))  # type: ignore
        return {"cpu": cpu, "vol": float(vol), "invol": float(invol)}

    def stop(self) -> None:
        stop_process(self.proc)


def wrk(url: str, conns: int, duration: float, headers: Dict[str, str]) -> Tuple[int, float]:
    hdr = [a for k, v in headers.items() for a in ("-H", f"{k}: {v}")]
    out = subprocess.run(["wrk", f"-t{min(conns, 2)}", f"-c{conns}", f"-d{duration:g}s", *hdr, url],
                         capture_output=True, text=True, timeout=duration + 60, check=True).stdout
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


def measure(emu: Emu, target: str, conns: int, duration: float, perf: bool) -> Dict[str, float]:
    pf = None
    out = None
    if perf:
        out = tempfile.NamedTemporaryFile(prefix="serve-work-perf-", suffix=".csv", delete=False)
        out.close()
        pf = subprocess.Popen(["perf", "stat", "-x,", "-o", out.name, "-e", "instructions,context-switches",
                               "-p", str(emu.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.2)
    before = emu.counters()
    n, rps = wrk(emu.url + target, conns, duration, emu.auth)
    after = emu.counters()
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


def strace_counts(emu: Emu, target: str, conns: int, duration: float) -> Dict[str, float]:
    out = tempfile.NamedTemporaryFile(prefix="serve-work-strace-", suffix=".txt", delete=False)
    out.close()
    st = subprocess.Popen(["strace", "-c", "-f", "-o", out.name, "-p", str(emu.pid)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    n, _ = wrk(emu.url + target, conns, duration, emu.auth)
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


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exe", action="append", required=True, help="NAME=PATH of an emulator executable (repeat)")
    ap.add_argument("--db", default=None, help="the database (default: vehicledata.dataset.ensure_database())")
    ap.add_argument("--connections", default="1,8")
    ap.add_argument("--duration", type=float, default=4.0, help="seconds per wrk run (default 4)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated serve cases (default: all)")
    ap.add_argument("--strace", action="store_true", help="also count system calls per request (strace -c -f)")
    args = ap.parse_args(argv)
    exes = dict(e.split("=", 1) for e in args.exe)
    conns = [int(c) for c in args.connections.split(",")]
    cases = [c for c in args.cases.split(",") if c]
    db = args.db
    if db is None:
        from vehicledata import dataset

        db = str(dataset.ensure_database())
    perf = perf_usable()
    emus: Dict[str, Emu] = {}
    try:
        for name, exe in exes.items():
            emus[name] = Emu(exe, db)
        bodies = {}
        for case in cases:
            target = CASES[case][0]
            got = {name: e.get(target) for name, e in emus.items()}
            for e in emus.values():
                e.get(target)  # the second ask is answered from the response cache
            bodies[case] = len(next(iter(got.values())))
        rows: Dict[Tuple[str, int, str], List[Dict[str, float]]] = {}
        names = list(emus)
        for r in range(args.rounds):
            for case in cases:
                for c in conns:
                    for name in names[r % len(names):] + names[:r % len(names)]:
                        rows.setdefault((case, c, name), []).append(
                            measure(emus[name], CASES[case][0], c, args.duration, perf))
        traced: Dict[Tuple[str, int, str], Dict[str, float]] = {}
        if args.strace and shutil.which("strace"):
            for case in cases:
                for c in conns:
                    for name in names:
                        traced[(case, c, name)] = strace_counts(emus[name], CASES[case][0], c, min(args.duration, 3))
    finally:
        for e in emus.values():
            e.stop()
    load = os.getloadavg()
    print(f"wrk -t min(c,2) -cC -d{args.duration:g}s, {args.rounds} round(s) interleaved, medians; "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end; perf {'on' if perf else 'off'}")
    keys = ["req/s", "cpu us", "vol cs", "invol cs"] + (["instr", "perf cs"] if perf else [])
    print("| case | conns | build | " + " | ".join(k + " /req" if k != "req/s" else k for k in keys) + " |")
    print("|" + "---|" * (3 + len(keys)))
    for case in cases:
        for c in conns:
            for name in names:
                samples = rows[(case, c, name)]
                cells = []
                for k in keys:
                    vals = [s[k] for s in samples if k in s]
                    v = statistics.median(vals) if vals else float("nan")
                    cells.append(f"{v:,.0f}" if k in ("req/s", "instr") else f"{v:.2f}")
                print(f"| {case} ({bodies[case]:,} B) | {c} | {name} | " + " | ".join(cells) + " |")
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
