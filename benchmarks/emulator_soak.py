#!/usr/bin/env python3
"""Load and soak of the emulator, with hostile clients at the same time (issue 13).

Starts the emulator (default options, rate limits out of the way), logs in the premium demo
account, checks that every target of the mix answers 2xx, then runs ``wrk`` over the mix:

1. ``--duration`` seconds at 8 connections,
2. ``--duration`` seconds at 64 connections,
3. ``--duration`` seconds at 8 connections while hostile clients run: slowloris sockets dripping
   header bytes, POSTs announcing a body that never comes, and header floods (thousands of
   header fields per request),

and reports requests/s, p50/p99, errors (socket errors and non-2xx answers) per phase, what the
hostile clients were answered (408, 431), and the emulator's RSS before and after.

With ``--soak-seconds N`` (``make soak``: 300) a fourth phase follows (issue 25): wrk at 256
connections (``--soak-connections``) for N seconds on the mix, every other search made uncached
(a unique ignored parameter), beside ``--soak-slowloris`` (1,500) dripping sockets driven from
one thread from 127.0.0.2, ``--slow-readers`` (64) connections that pipeline large answers on a 4 KB receive
buffer and read 1 KB a second, and a SQL-shape flood from 127.0.0.3 (``--shape-flooders``
clients sending ``json`` in-lists of always new shapes); a probe opens a new connection every 100 ms and times
connect-to-answer (twice: a thread of this process, and the same probe in a process of its own, which
shares no GIL with the crowd's threads); RSS is sampled every second.

    .venv/bin/python benchmarks/emulator_soak.py [--duration 60] [--json] [--check]
    make soak                        # the full run (60 s per phase)

The mix: pages (makes, models, trims), filtered JSON searches (``json=`` conditions and plain
filters), VIN decoding, record detail, and data feed Range requests.  ``--check`` exits 1 if any
normal request failed or a hostile client was not refused, or (with the soak phase) a probe failed or a
SQL shape was not answered 200 (no timing is checked); the test
suite runs it for two seconds per phase.  Needs the Debian package wrk.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

# The raw-socket reads of the emulator's tests, one home for both (tests/emulator/emu_support.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "emulator"))
from emu_support import read_response, read_until_close  # noqa: E402

Target = Tuple[str, Optional[str]]  # path, Range header


def q(value: Any) -> str:
    return urllib.parse.quote(json.dumps(value), safe="")


def mix(base: str, token: str, vin: bool = True) -> List[Target]:
    """The request mix; detail ids come from the emulator's own first page."""
    def get(path: str) -> Any:
        req = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {token}"})
        return json.loads(urllib.request.urlopen(req, timeout=30).read())
    trim_ids = [r["id"] for r in get("/api/trims/v2?limit=5")["data"]]
    targets: List[Target] = [
        ("/api/makes/v2", None),
        ("/api/models/v2?page=2&limit=50", None),
        ("/api/trims/v2?page=3&limit=100", None),
        ("/api/mileages/v2?make=Toyota&json=" + q([{"field": "combined_mpg", "op": ">", "val": 40}]), None),
        ("/api/trims/v2?year=2020&make=Honda&limit=20", None),
        ("/api/vin/5YJ3E1EA7KF317000", None),
        ("/api/vin/1HGCM82633A004352", None),
        ("/api/data-feeds/download", "bytes=0-4095"),
        ("/api/data-feeds/download", "bytes=100000-131071"),
    ]
    targets += [(f"/api/trims/v2/{i}", None) for i in trim_ids]
    if not vin:
        targets = [t for t in targets if not t[0].startswith("/api/vin/")]
    return targets


def login(base: str) -> str:
    from vehicledata.testing import DEMO_ACCOUNTS

    acct = DEMO_ACCOUNTS["premium"]  # as the emulator prints them (--print-defaults)
    body = json.dumps({"api_token": acct["api_token"], "api_secret": acct["api_secret"]}).encode()
    req = urllib.request.Request(base + "/api/auth/login", data=body, headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(req, timeout=30).read().decode()


def check_targets(base: str, token: str, targets: List[Target]) -> None:
    for path, rng in targets:
        headers = {"Authorization": f"Bearer {token}"}
        if rng:
            headers["Range"] = rng
        try:
            urllib.request.urlopen(urllib.request.Request(base + path, headers=headers), timeout=30).close()
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"{path}: {e.code} {e.read()[:300]!r}") from None


def lua_script(token: str, targets: List[Target]) -> str:
    rows = ",\n".join(f"  {{{json.dumps(p)}, {json.dumps(r) if r else 'nil'}}}" for p, r in targets)
    return f"""
local targets = {{
{rows}
}}
local token = {json.dumps(token)}
local n = 0
request = function()
  n = n + 1
  local t = targets[(n % #targets) + 1]
  local h = {{["Authorization"] = "Bearer " .. token}}
  if t[2] then h["Range"] = t[2] end
  return wrk.format("GET", t[1], h)
end
"""


def parse_ms(text: str) -> float:
    m = re.match(r"([\d.]+)(us|ms|s)", text)
    assert m, text
    return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]


def run_wrk(url: str, script: Path, connections: int, duration: int) -> Dict[str, Any]:
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{duration}s", "--timeout", "5s", "--latency",
                          "-s", str(script), url], capture_output=True, text=True, timeout=duration + 60,
                         check=True).stdout
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    socket_errors = sum(int(x) for x in sock.groups()) if sock else 0
    kinds = dict(zip(("connect", "read", "write", "timeout"), (int(x) for x in sock.groups()))) if sock else {}
    lat = {p: parse_ms(v) for p, v in re.findall(r"^\s+(50|99)%\s+(\S+)", out, re.M)}
    return {"connections": connections, "duration_s": duration, "requests": total,
            "requests_per_second": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore
            "non_2xx": int(non2xx.group(1)) if non2xx else 0, "socket_errors": socket_errors,
            "socket_error_kinds": kinds,
            "p50_ms": lat.get("50"), "p99_ms": lat.get("99")}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


class Hostiles:
    """Slowloris drips, stalled POST bodies and header floods, until stop()."""

    def __init__(self, port: int, slow: int, floods: int) -> None:
        self.port, self.slow, self.floods = port, slow, floods
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.answers: Dict[str, int] = {}
        self.threads: List[threading.Thread] = []

    def count(self, key: str) -> None:
        with self.lock:
            self.answers[key] = self.answers.get(key, 0) + 1

    def status_of(self, s: socket.socket) -> str:
        data = b""
        try:
            while b"\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
        except OSError:
            pass
        return data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/1.1 ") else "closed"

    def slowloris(self, post: bool) -> None:
        while not self.stopping.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
                    if post:
                        s.sendall(b"POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
                    else:
                        s.sendall(b"GET /api/makes/v2 HTTP/1.1\r\nHost: x\r\n")
                    s.settimeout(1.0)
                    while not self.stopping.is_set():
                        try:
                            data = s.recv(4096)  # an answer (408) or the close ends this round
                            self.count(data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/1.1 ") else "closed")
                            break
                        except socket.timeout:
                            s.sendall(b"a" if post else b"X-a: b\r\n")
            except OSError:
                self.count("error")
                time.sleep(0.1)

    def flood(self) -> None:
        head = b"GET /api/makes/v2 HTTP/1.1\r\nHost: x\r\n" + b"X-Flood: yyyyyyyy\r\n" * 5000 + b"\r\n"
        while not self.stopping.is_set():
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=30) as s:
                    try:
                        s.sendall(head)
                    except OSError:
                        pass  # refused mid-flood: the answer is already waiting
                    self.count(self.status_of(s))
            except OSError:
                self.count("error")
                time.sleep(0.1)

    def start(self) -> None:
        for i in range(self.slow):
            self.threads.append(threading.Thread(target=self.slowloris, args=(i % 2 == 1,), daemon=True))
        for _ in range(self.floods):
            self.threads.append(threading.Thread(target=self.flood, daemon=True))
        for t in self.threads:
            t.start()

    def stop(self) -> Dict[str, int]:
        self.stopping.set()
        for t in self.threads:
            t.join(40)
        return dict(sorted(self.answers.items()))


class Crowd:
    """Many hostile sockets driven from one thread (selectors), until stop(): slowloris drips
    (a header line a second, reconnecting when answered or closed) and slow readers (4 KB receive
    buffer, 4 pipelined large answers, 1 KB read a second)."""

    def __init__(self, port: int, slowloris: int, slow_readers: int, big_target: str) -> None:
        self.port, self.slowloris, self.slow_readers, self.big = port, slowloris, slow_readers, big_target
        self.stopping = threading.Event()
        self.answers: Dict[str, int] = {}
        self.read_bytes = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open(self, kind: str) -> Optional[socket.socket]:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if kind == "reader":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setblocking(False)
        try:
            s.bind(("127.0.0.2", 0))  # the attackers' address: wrk and the probe come from 127.0.0.1
            s.connect(("127.0.0.1", self.port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            self.answers["connect error"] = self.answers.get("connect error", 0) + 1
            return None
        return s

    def run(self) -> None:
        import selectors

        sel = selectors.DefaultSelector()
        socks: Dict[socket.socket, Dict[str, Any]] = {}

        def add(kind: str) -> None:
            s = self.open(kind)
            if s is not None:
                socks[s] = {"kind": kind, "sent": False, "next": time.monotonic()}

        def drop(s: socket.socket, why: str) -> None:
            self.answers[why] = self.answers.get(why, 0) + 1
            socks.pop(s, None)
            s.close()

        for _ in range(self.slowloris):
            add("drip")
        for _ in range(self.slow_readers):
            add("reader")
        while not self.stopping.is_set():
            now = time.monotonic()
            for s, st in list(socks.items()):
                if st["next"] > now:
                    continue
                st["next"] = now + 1.0
                try:
                    if not st["sent"]:
                        if st["kind"] == "drip":
                            s.send(b"GET /api/makes/v2 HTTP/1.1\r\nHost: x\r\n")
                        else:
                            s.send(f"GET {self.big} HTTP/1.1\r\nHost: x\r\n\r\n".encode() * 4)
                        st["sent"] = True
                    elif st["kind"] == "drip":
                        data = b""
                        try:
                            data = s.recv(4096)
                        except BlockingIOError:
                            s.send(b"X-a: b\r\n")
                            continue
                        why = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/1.1 ") else "closed"
                        drop(s, "slowloris " + why)
                        add("drip")
                    else:
                        try:
                            data = s.recv(1024)
                        except BlockingIOError:
                            continue
                        if not data:
                            drop(s, "slow reader closed")
                            add("reader")
                        else:
                            self.read_bytes += len(data)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    kind = st["kind"]
                    drop(s, f"{kind} error")
                    add(kind)
            time.sleep(0.05)
        for s in list(socks):
            s.close()
        sel.close()

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> Dict[str, Any]:
        self.stopping.set()
        self.thread.join(60)
        return {"answers": dict(sorted(self.answers.items())), "slow_reader_bytes": self.read_bytes}


def shape_flood(base: str, stopping: threading.Event, seed: int, counts: Dict[str, int]) -> None:
    """Trims searches whose json in-lists have always new shapes (a new prepared statement each)."""
    import random

    rng = random.Random(seed)
    host, port = base.rsplit("//", 1)[1].rsplit(":", 1)
    fields = ["year", "msrp", "invoice", "make", "model", "trim"]
    while not stopping.is_set():
        try:
            with socket.create_connection((host, int(port)), timeout=30, source_address=("127.0.0.3", 0)) as s:
                for _ in range(50):
                    if stopping.is_set():
                        break
                    conds, budget = [], 1300
                    while budget > 20:
                        n = rng.randint(10, min(300, budget))
                        budget -= n
                        conds.append({"field": rng.choice(fields), "op": rng.choice(["in", "not in"]), "val": [1] * n})
                    target = "/api/trims/v2?limit=1&json=" + urllib.parse.quote(json.dumps(conds, separators=(",", ":")),
                                                                                safe=",:")
                    s.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                    status = str(read_response(s, bytearray())[0])
                    counts[status] = counts.get(status, 0) + 1
        except OSError:
            counts["error"] = counts.get("error", 0) + 1
            time.sleep(0.1)


def probe(base: str, stopping: threading.Event, out: List[float], failures: List[str]) -> None:
    """A new connection every 100 ms: seconds from connect() to the whole answer."""
    host, port = base.rsplit("//", 1)[1].rsplit(":", 1)
    while not stopping.is_set():
        started = time.monotonic()
        try:
            with socket.create_connection((host, int(port)), timeout=30) as s:
                s.sendall(b"GET /api/makes/v2?limit=5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                data = read_until_close(s)
            if not data.startswith(b"HTTP/1.1 200 "):
                failures.append(data[:80].decode("latin-1"))
            else:
                out.append(time.monotonic() - started)
        except OSError as e:
            failures.append(repr(e))
        time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))


def probe_main(url: str) -> int:
    """``--probe URL``: the probe alone in this process until stdin closes, then its results as JSON
    on stdout. The soak runs it so: in the soak's own process the probe shares the GIL with the
    crowd's and flooders' threads, and its wake-ups wait for them (docs/reliability.md)."""
    stopping = threading.Event()
    out: List[float] = []
    failures: List[str] = []
    t = threading.Thread(target=probe, args=(url, stopping, out, failures), daemon=True)
    t.start()
    sys.stdin.read()
    stopping.set()
    t.join(40)
    print(json.dumps({"latencies": out, "failures": failures}))
    return 0


def probe_summary(latencies: List[float], failures: List[str]) -> Dict[str, Any]:
    latencies = sorted(latencies)
    return {"answers": len(latencies), "failures": len(failures), "first_failures": failures[:5],
            "p50_ms": round(1000 * latencies[len(latencies) // 2], 1) if latencies else None,
            "p99_ms": round(1000 * latencies[int(len(latencies) * 0.99)], 1) if latencies else None,
            "max_ms": round(1000 * latencies[-1], 1) if latencies else None}


def uncached_lua(token: str, targets: List[Target]) -> str:
    """The mix's script with every other request of a search made unique (an ignored parameter):
    half the searches miss the response cache."""
    return lua_script(token, targets).replace(
        "  return wrk.format(\"GET\", t[1], h)",
        "  local path = t[1]\n"
        "  if n % 2 == 0 and string.find(path, \"?\", 1, true) then path = path .. \"&soak=\" .. n end\n"
        "  return wrk.format(\"GET\", path, h)")


def soak_phase(emu_url: str, pid: int, token: str, targets: List[Target], tmp: str,
               args: argparse.Namespace) -> Dict[str, Any]:
    script = Path(tmp) / "soak.lua"
    script.write_text(uncached_lua(token, targets))
    port = int(emu_url.rsplit(":", 1)[1])
    stopping = threading.Event()
    rss: List[int] = []

    def sample() -> None:
        while not stopping.is_set():
            rss.append(rss_kib(pid))
            time.sleep(1.0)

    crowd = Crowd(port, args.soak_slowloris, args.slow_readers, "/api/trims/v2?limit=1000&verbose=yes")
    shapes: Dict[str, int] = {}
    latencies: List[float] = []
    failures: List[str] = []
    helpers = [threading.Thread(target=sample, daemon=True),
               threading.Thread(target=probe, args=(emu_url, stopping, latencies, failures), daemon=True)]
    helpers += [threading.Thread(target=shape_flood, args=(emu_url, stopping, i, shapes), daemon=True)
                for i in range(args.shape_flooders)]
    crowd.start()
    for t in helpers:
        t.start()
    # the same probe in a process of its own (no GIL shared with the crowd): what a client sees
    alone = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--probe", emu_url],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    time.sleep(3.0)  # the crowd takes its places
    phase = run_wrk(emu_url, script, args.soak_connections, args.soak_seconds)
    stopping.set()
    alone_out, _ = alone.communicate(timeout=60)  # closing stdin stops it
    phase["crowd"] = crowd.stop()
    for t in helpers:
        t.join(40)
    phase["probe"] = probe_summary(latencies, failures)
    got = json.loads(alone_out) if alone_out.strip() else {"latencies": [], "failures": ["no output"]}
    phase["probe_own_process"] = probe_summary(got["latencies"], got["failures"])
    phase["shape_flood"] = dict(sorted(shapes.items()))
    phase["rss_mib"] = {"min": min(rss) // 1024, "max": max(rss) // 1024, "end": rss[-1] // 1024} if rss else {}
    phase["hostile_clients"] = {"slowloris": args.soak_slowloris, "slow_readers": args.slow_readers,
                                "shape_flooders": args.shape_flooders}
    return phase


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=int, default=60, help="seconds per phase (default 60)")
    ap.add_argument("--slowloris", type=int, default=32, help="dripping connections in phase 3 (default 32)")
    ap.add_argument("--floods", type=int, default=2, help="header-flood clients in phase 3 (default 2)")
    ap.add_argument("--no-vin", action="store_true", help="leave the VIN targets out of the mix")
    ap.add_argument("--request-timeout", type=int, default=None, help="the emulator's --request-timeout")
    ap.add_argument("--threads", type=int, default=None, help="the emulator's worker threads (default: its own, 16)")
    ap.add_argument("--compute-workers", type=int, default=None,
                    help="of them, computing at once (default: the emulator's own, twice the cores)")
    ap.add_argument("--db", default=None, help="database (default: vehicledata.dataset.ensure_database())")
    ap.add_argument("--soak-seconds", type=int, default=0, help="length of the issue-25 soak phase (0: none)")
    ap.add_argument("--soak-connections", type=int, default=256, help="wrk connections in the soak phase")
    ap.add_argument("--soak-slowloris", type=int, default=1500, help="dripping sockets in the soak phase")
    ap.add_argument("--slow-readers", type=int, default=64, help="slow-reading connections in the soak phase")
    ap.add_argument("--shape-flooders", type=int, default=2, help="SQL-shape flood clients in the soak phase")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--check", action="store_true", help="exit 1 on any error or unrefused hostile client")
    ap.add_argument("--probe", default=None, metavar="URL", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.probe:
        return probe_main(args.probe)
    if not shutil.which("wrk"):
        print("wrk is not installed (Debian package wrk)", file=sys.stderr)
        return 2

    from vehicledata.testing import Emulator

    db = args.db
    if db is None:
        from vehicledata import dataset

        db = str(dataset.ensure_database())
    extra = ["--request-timeout", str(args.request_timeout)] if args.request_timeout else []
    with tempfile.TemporaryDirectory(prefix="vd-soak-") as tmp, \
            Emulator(db=db, rate_limit=100_000_000, extra_args=extra, threads=args.threads,
                     compute_workers=args.compute_workers) as emu:
        pid = emu._proc.pid  # type: ignore[union-attr]
        load_before = Path("/proc/loadavg").read_text().split()[0]  # the machine may be shared
        token = login(emu.url)
        targets = mix(emu.url, token, vin=not args.no_vin)
        check_targets(emu.url, token, targets)
        script = Path(tmp) / "mix.lua"
        script.write_text(lua_script(token, targets))
        port = int(emu.url.rsplit(":", 1)[1])
        result: Dict[str, Any] = {"targets": [p + (f" (Range: {r})" if r else "") for p, r in targets],
                                  "rss_kib_start": rss_kib(pid)}
        phases = [run_wrk(emu.url, script, 8, args.duration), run_wrk(emu.url, script, 64, args.duration)]
        result["rss_kib_after_load"] = rss_kib(pid)
        hostiles = Hostiles(port, args.slowloris, args.floods)
        hostiles.start()
        time.sleep(min(2.0, args.duration / 4))  # let the slow sockets take their places
        attacked = run_wrk(emu.url, script, 8, args.duration)
        attacked["hostile_answers"] = hostiles.stop()
        attacked["hostile_clients"] = {"slowloris": args.slowloris, "header_floods": args.floods}
        phases.append(attacked)
        if args.soak_seconds > 0:
            phases.append(soak_phase(emu.url, pid, token, targets, tmp, args))
        result["phases"] = phases
        result["rss_kib_end"] = rss_kib(pid)
        result["loadavg"] = [load_before, Path("/proc/loadavg").read_text().split()[0]]
        alive = emu.running if hasattr(emu, "running") else True
    errors = sum(p["non_2xx"] + p["socket_errors"] for p in phases)
    answers = attacked["hostile_answers"]
    refused = answers.get("408", 0) + answers.get("431", 0)
    unexpected = {k: v for k, v in answers.items() if k not in ("408", "431")}
    soak_faults: List[str] = []  # the soak phase: every probe answered, every SQL shape a 200
    for p in phases:
        if "crowd" in p:
            soak_faults += [f"{name}: {p[name]['failures']} failures" for name in ("probe", "probe_own_process")
                            if p[name]["failures"] or not p[name]["answers"]]
            soak_faults += [f"SQL shapes answered {status}" for status in p["shape_flood"] if status != "200"]
    result["errors"] = errors
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"load average before/after: {result['loadavg'][0]} / {result['loadavg'][1]}")
        print(f"mix of {len(targets)} targets; emulator RSS {result['rss_kib_start'] // 1024} MiB at start, "
              f"{result['rss_kib_after_load'] // 1024} MiB after load, {result['rss_kib_end'] // 1024} MiB at end")
        for i, p in enumerate(phases, 1):
            print(f"phase {i}: {p['connections']:3d} conns {p['duration_s']} s: {p['requests']} requests, "
                  f"{p['requests_per_second']:.0f} req/s, p50 {p['p50_ms']:.2f} ms, p99 {p['p99_ms']:.2f} ms, "
                  f"non-2xx {p['non_2xx']}, socket errors {p['socket_errors']}"
                  + (f" {p['socket_error_kinds']}" if p['socket_errors'] else "")
                  + (f", hostile answers {p['hostile_answers']}" if "hostile_answers" in p else ""))
            if "crowd" in p:
                print(f"  beside {p['hostile_clients']}: crowd {p['crowd']}; SQL shapes {p['shape_flood']}")
                print(f"  connect-to-answer probe {p['probe']}; RSS MiB {p['rss_mib']}")
                print(f"  the same probe in its own process {p['probe_own_process']}")
    if args.check and (errors or not refused or unexpected or not alive or soak_faults):
        print(f"FAILED: {errors} errors, hostile answers {answers}, soak {soak_faults}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
