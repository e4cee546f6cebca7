"""The benchmark harness: the scenario interface and the shared measuring tools.

A *scenario* is a module in ``benchmarks/`` that defines::

    SCENARIO = "decode"                 # short name: `run_all.py --only decode`
    TITLE = "Page bytes -> DataFrame"   # heading in docs/performance.md
    ORDER = 10                          # optional: position in the report (default 100)

    def run(ctx: harness.Context) -> List[harness.Result]: ...

and, to run alone, ends with ``if __name__ == "__main__": sys.exit(harness.main(run))``.
``run_all.py`` imports every ``benchmarks/*.py`` whose source contains a ``SCENARIO =`` line,
so a new scenario joins without touching any other file.

A :class:`Result` is one table (and one plot) of the report: named sample lists per contender
(``samples["orjson + pandas"] = [seconds, ...]``), the unit, which contender is ours, and the
targets checked against the medians.  Instruction counts per call go in ``instructions[contender]``;
other extra measurements (peak RSS, p99, 429 counts) go in ``extra[contender][key]``; free text in ``notes``.

The :class:`Context` gives a scenario what every scenario needs:

* ``ctx.emulator()`` / ``ctx.url`` / ``ctx.jwt``: one emulator over the full dataset per run
  (rate limit off, its start-up VIN decoder build finished before any timing) and a premium JWT;
* ``ctx.payload(path)``: the bytes the emulator serves for ``path``, captured once per run and
  saved under ``benchmarks/results/payloads/`` so every parser (and every peer subprocess)
  decodes the same bytes;
* ``ctx.interleave({name: fn}, rounds, number)``: per round, each contender in rotated order,
  ``number`` calls timed together, seconds per call -> samples (take the median);
* ``ctx.subprocess(module, func, *args)``: runs ``module.func(*args)`` in a fresh interpreter and
  returns its JSON result with the child's peak RSS (VmHWM) added as ``peak_rss``;
* ``ctx.instructions(module, func, *args)``: instructions per call of the cases ``(label, fn, n)``
  that ``module.func(*args)`` returns, all in one interpreter under valgrind ``--tool=callgrind``
  (stable on a shared machine, unlike times); None if valgrind is missing or the run said
  ``--no-instructions`` (``BENCH_INSTRUCTIONS=0``). Stored in ``Result.instructions``;
* ``ctx.profile(module, func, *args)``: a py-spy profile (native frames) of a slow path, summarised
  as its top leaf functions: what docs/performance.md shows where a target is missed;
* ``ctx.rounds`` (``--rounds``, small while developing) and ``ctx.quick`` (``--quick``: smallest
  sizes, for smoke runs).

CPU share (docs/performance.md states it per scenario): :func:`affinity` runs a block (and every
process or thread it starts) on given cores, :func:`pin_preexec` pins a child from ``Popen``,
:func:`pin_pid` moves a running process (every thread, every descendant); a scenario module may set
``CPU_SHARE = "..."``, a sentence saying which cores and threads ours and each peer get, and
:func:`run_scenario` records it with the cores the run was allowed, the load average at the start
and the end, and the git commit measured (:func:`git_state`). :func:`spread` and :func:`run_ratios`
are the statistics the report prints: median with min-max, and the ratio of each run pair.

Measurements only: nothing here passes or fails a build.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
PAYLOADS = RESULTS / "payloads"


# --------------------------------------------------------------------------- results
@dataclass
class Target:
    """A goal on the medians.

    kind "faster": median(peer) / median(ours) >= value (ours at least `value` times faster);
    kind "ratio_max": median(ours) / median(peer) <= value (e.g. wall time vs an ideal, memory vs size);
    kind "ratio_min": median(ours) / median(peer) >= value (throughput: ours at least value x peer);
    kind "max" / "min": the median of `contender` (ours if empty) against an absolute value.
    """

    description: str
    kind: str
    value: float
    peer: str = ""
    contender: str = ""

    def check(self, result: "Result") -> Dict[str, Any]:
        ours = result.median(self.contender or result.ours)
        if self.kind in ("max", "min"):
            got = ours
        else:
            peer = result.median(self.peer)
            if self.kind == "faster":
                got = peer / ours if ours else float("inf")
            else:
                got = ours / peer if peer else float("inf")
        met = got <= self.value if self.kind in ("max", "ratio_max") else got >= self.value
        return {"description": self.description, "measured": got, "met": bool(met)}


@dataclass
class Result:
    name: str                      # unique key, e.g. "decode-1000"
    title: str                     # table heading
    unit: str                      # unit of the samples: "s", "req/s", "bytes", ...
    ours: str                      # the contender that is ours
    samples: Dict[str, List[float]] = field(default_factory=dict)
    targets: List[Target] = field(default_factory=list)
    extra: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    notes: List[str] = field(default_factory=list)
    instructions: Dict[str, int] = field(default_factory=dict)  # callgrind instructions per call, by contender
    higher_is_better: bool = False  # True for throughputs
    x: Optional[float] = None       # for scaling plots: the size this result was measured at
    # How it was measured, printed above its table: "mode" (e.g. "pinned"), "cell" (the title without
    # the mode, to pair a cell's modes in one summary table), "reference" (the peer of the summary's
    # ratio), "cpu" (a sentence: cores, workers, threads), "load_avg" ([1-min at start, at end])...
    setup: Dict[str, Any] = field(default_factory=dict)

    def median(self, name: str) -> float:
        return float(statistics.median(self.samples[name]))

    def to_json(self) -> Dict[str, Any]:
        d = asdict(self)
        d["medians"] = {k: self.median(k) for k in self.samples if self.samples[k]}
        d["checks"] = [t.check(self) for t in self.targets if self._checkable(t)]
        return d

    def _checkable(self, t: Target) -> bool:
        need = [t.contender or self.ours] + ([t.peer] if t.peer else [])
        return all(self.samples.get(n) for n in need)


# --------------------------------------------------------------------------- machine
def peak_rss_bytes() -> int:
    """VmHWM: this process's peak RSS (unlike ru_maxrss, not inherited across exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * resource.getpagesize()


def reset_peak() -> None:
    """Reset VmHWM to the current RSS (Linux >= 4.0), so a later peak is the measured work's own."""
    with contextlib.suppress(OSError):
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")


def cores() -> List[int]:
    """The cores this thread may run on (its affinity), not every core of the machine."""
    return sorted(os.sched_getaffinity(0))


def pin_preexec(cpus: Sequence[int]) -> Callable[[], None]:
    """A ``Popen(preexec_fn=...)`` that puts the child (and whatever it starts) on `cpus`."""
    want = set(cpus)
    return lambda: os.sched_setaffinity(0, want)


@contextlib.contextmanager
def affinity(cpus: Sequence[int]) -> Iterator[None]:
    """Run the block on `cpus`: the calling thread, and every process and thread it starts meanwhile
    (they inherit the mask), e.g. a server whose defaults follow its cores, as the emulator's compute
    workers do (twice the cores it may use). The thread's previous mask is restored on exit."""
    old = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(cpus))
    try:
        yield
    finally:
        os.sched_setaffinity(0, old)


def pin_pid(pid: int, cpus: Sequence[int], children: bool = True) -> int:
    """Move a running process to `cpus`: every thread (``sched_setaffinity`` of a pid moves one thread
    only) and, with `children`, every descendant, like ``taskset -a``. Returns the number of threads moved."""
    want, moved, todo, seen = set(cpus), 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        with contextlib.suppress(OSError):
            for tid in os.listdir(f"/proc/{p}/task"):
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(int(tid), want)
                    moved += 1
                if children:
                    with contextlib.suppress(OSError):
                        todo += [int(c) for c in Path(f"/proc/{p}/task/{tid}/children").read_text().split()]
    return moved


@contextlib.contextmanager
def whole_process_on(cpus: Sequence[int]) -> Iterator[None]:
    """Every thread of this process (library pools started earlier included: polars', Arrow's), not its
    children (the run's emulator), on `cpus` for the block; each thread's mask restored after. In-process
    contenders timed in turn then get the same CPU whether or not they use threads."""
    me, mine = os.getpid(), os.sched_getaffinity(0)
    old = {}
    for tid in os.listdir(f"/proc/{me}/task"):
        with contextlib.suppress(OSError):
            old[int(tid)] = os.sched_getaffinity(int(tid))
    pin_pid(me, cpus, children=False)
    try:
        yield
    finally:
        for tid in os.listdir(f"/proc/{me}/task"):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(int(tid), old.get(int(tid), mine))  # new threads: the caller's mask


def load1() -> float:
    """The 1-minute load average."""
    return float(os.getloadavg()[0])


def spread(xs: Sequence[float]) -> Dict[str, float]:
    """Median, min, max and count of `xs` (empty dict for no samples)."""
    if not xs:
        return {}
    return {"median": float(statistics.median(xs)), "min": float(min(xs)), "max": float(max(xs)), "n": len(xs)}


def run_ratios(ours: Sequence[float], peer: Sequence[float], higher_is_better: bool) -> List[float]:
    """The ratio of each run pair, oriented like the report's ratios (above 1: ours ahead): ours / peer
    for throughputs, peer / ours for times. Runs pair up by position (round r of each contender, as
    :meth:`Context.interleave` and the serving scenarios record them); [] when the counts differ or a
    sample is zero, so a ratio is never made of runs that were not side by side."""
    if not ours or len(ours) != len(peer) or any(v == 0 for v in (*ours, *peer)):
        return []
    return [(o / p if higher_is_better else p / o) for o, p in zip(ours, peer)]


def git_state(root: Path = ROOT) -> Dict[str, Any]:
    """The commit the working tree is at and whether the code differs from it (uncommitted changes
    under python/, cpp/ or benchmarks/): what a scenario's numbers describe."""
    def git(*argv: str) -> str:
        p = subprocess.run(["git", "-C", str(root), *argv], capture_output=True, text=True, timeout=30)
        return p.stdout.strip() if p.returncode == 0 else ""

    return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain", "--", *CODE_PATHS))}


# What the numbers describe: a change here makes an older result stale (report.py). The hand-written
# notes, the README and the report's own formatting under benchmarks/ do not.
CODE_PATHS = ("python", "cpp", "benchmarks", "CMakeLists.txt", "pyproject.toml", ":(exclude)benchmarks/notes",
              ":(exclude)benchmarks/README.md", ":(exclude)benchmarks/report.py")


def machine() -> Dict[str, Any]:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
            "python": sys.version.split()[0], "load_avg": os.getloadavg()}


def versions(names: Sequence[str] = ("vehicledata", "pandas", "pyarrow", "numpy", "orjson", "msgspec", "polars",
                                     "requests", "httpx", "aiohttp", "pycurl", "matplotlib")) -> Dict[str, str]:
    from importlib import metadata

    out: Dict[str, str] = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = "not installed"
    for tool, argv in (("wrk", ["wrk", "-v"]), ("nginx", ["nginx", "-v"]), ("valgrind", ["valgrind", "--version"]),
                       ("prism", [str(prism_binary() or "prism"), "--version"])):
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
            out[tool] = (p.stdout + p.stderr).strip().splitlines()[0] if (p.stdout + p.stderr).strip() else "?"
        except (OSError, subprocess.TimeoutExpired):
            out[tool] = "not installed"
    return out


def prism_binary() -> Optional[Path]:
    p = ROOT / "build" / "bench-node" / "node_modules" / ".bin" / "prism"
    return p if p.exists() else None


# --------------------------------------------------------------------------- instructions
# Instruction counts (valgrind callgrind; `perf stat` has no hardware counters on this VM): stable on a
# shared machine, unlike times. One interpreter under callgrind runs every case of a scenario: each
# case once (warm-up), then `n` calls between two calls of the marker `os.getppid`; callgrind dumps its
# counters on entry to libc's getppid (--dump-before), so dump 2i holds case i's n calls (the imports,
# the set-up and the warm-ups fall in the odd dumps). A fresh interpreter importing pandas takes
# ~45 s under callgrind, hence one process for all cases rather than one (or two) per case.
_CG_CHILD = ("import json,os,sys,importlib; m=importlib.import_module(sys.argv[1]); "
             "cases=getattr(m,sys.argv[2])(*json.loads(sys.argv[3]))\n"
             "for label,fn,n in cases:\n"
             "    fn(); os.getppid()\n"
             "    for _ in range(n): fn()\n"
             "    os.getppid()\n"
             "print('@@CASES@@'+json.dumps([[c[0],c[2]] for c in cases]))")


def instructions_per_call(module: str, func: str, *args: Any, timeout: float = 900) -> Dict[str, int]:
    """Instructions per call of each case `(label, fn, n)` that `module.func(*args)` returns, in one
    interpreter under callgrind (see above); {} if valgrind is not installed, raises if the run fails."""
    if not shutil.which("valgrind"):
        return {}
    env = child_env()
    env["PYTHONHASHSEED"] = "0"  # the same dict/set layouts in every run
    with tempfile.TemporaryDirectory(prefix="vd-cg-") as tmp:
        out = Path(tmp) / "cg.out"
        p = subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
                            sys.executable, "-c", _CG_CHILD, module, func, json.dumps(list(args))],
                           capture_output=True, text=True, env=env, timeout=timeout)
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("@@CASES@@")]
        if p.returncode != 0 or not lines:
            raise RuntimeError(f"callgrind {module}.{func} failed ({p.returncode}):\n{p.stderr[-3000:]}")
        cases = json.loads(lines[-1][len("@@CASES@@"):])
        totals: List[int] = []
        for i in range(1, 2 * len(cases) + 1):
            m = re.search(r"^totals:\s*(\d+)", (Path(tmp) / f"cg.out.{i}").read_text(), re.M)
            totals.append(int(m.group(1)) if m else -1)
        if (Path(tmp) / f"cg.out.{2 * len(cases) + 1}").exists() or min(totals) < 0:
            raise RuntimeError(f"callgrind {module}.{func}: unexpected dumps (getppid called elsewhere?)")
    return {label: round(totals[2 * i + 1] / n) for i, (label, n) in enumerate(cases)}


# --------------------------------------------------------------------------- context
def child_env() -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    return env


def login(url: str) -> str:
    """A premium JWT from the emulator at `url` (the demo account; each emulator signs its own)."""
    from vehicledata.testing import DEMO_ACCOUNTS

    acct = DEMO_ACCOUNTS["premium"]
    body = json.dumps({"api_token": acct["api_token"], "api_secret": acct["api_secret"]}).encode()
    req = urllib.request.Request(url + "/api/auth/login", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return str(resp.read().decode().strip())


def settle(url: str, jwt: str) -> None:
    """Wait for an emulator's start-up work: it builds its VIN decoder on a background thread
    (about 4 CPU-seconds over 10 s here), and a scenario timed meanwhile shares a core with it
    (the emulator's CPU per api.vehicles call measured 22-24 ms during the build, 4-5 ms after).
    A VIN request answers only once the decoder is built; its status does not matter."""
    try:
        req = urllib.request.Request(url + "/api/vin/1HGCM82633A004352", headers={"Authorization": "Bearer " + jwt})
        urllib.request.urlopen(req, timeout=300).read()
    except urllib.error.HTTPError:
        pass  # 404/501: the decoder is settled (or absent) either way


class Context:
    def __init__(self, rounds: int = 7, quick: bool = False, count_instructions: bool = False) -> None:
        self.rounds = rounds
        self.quick = quick
        self.count_instructions = count_instructions
        self._stack = contextlib.ExitStack()
        self._emu: Any = None
        self._jwt: Optional[str] = None
        self._payloads: Dict[str, bytes] = {}
        PAYLOADS.mkdir(parents=True, exist_ok=True)
        self.started = time.time()

    # emulator ---------------------------------------------------------------
    def database(self) -> str:
        from vehicledata import dataset

        sources = os.environ.get("VEHICLEDATA_SOURCES")
        return str(dataset.ensure_database(sources=sources) if sources else dataset.ensure_database())

    def emulator(self) -> Any:
        """The run's emulator over the full dataset, rate limit off (started on first use)."""
        if self._emu is None:
            from vehicledata.testing import Emulator

            self._emu = self._stack.enter_context(Emulator(db=self.database(), rate_limit=10**8))
            self._settle()
        return self._emu

    def _settle(self) -> None:
        settle(self.url, self.jwt)

    @property
    def url(self) -> str:
        return str(self.emulator().url)

    @property
    def jwt(self) -> str:
        if self._jwt is None:
            self._jwt = login(self.url)
        return self._jwt

    def payload(self, path: str) -> bytes:
        """The bytes the emulator serves for `path`, fetched once per run and saved to disk."""
        if path not in self._payloads:
            req = urllib.request.Request(self.url + path, headers={"Authorization": "Bearer " + self.jwt})
            with urllib.request.urlopen(req, timeout=120) as resp:
                body = resp.read()
            self._payloads[path] = body
            self.payload_file(path).write_bytes(body)
        return self._payloads[path]

    @staticmethod
    def payload_file(path: str) -> Path:
        return PAYLOADS / (re.sub(r"[^A-Za-z0-9._-]+", "_", path.strip("/")) + ".json")

    # timing -----------------------------------------------------------------
    def interleave(self, fns: Dict[str, Callable[[], Any]], rounds: Optional[int] = None,
                   number: int = 1) -> Dict[str, List[float]]:
        """Seconds per call: each round runs every contender (rotated order) `number` times."""
        rounds = rounds or self.rounds
        names = list(fns)
        for n in names:  # warm-up, outside the samples
            fns[n]()
        out: Dict[str, List[float]] = {n: [] for n in names}
        for r in range(rounds):
            for n in names[r % len(names):] + names[:r % len(names)]:
                fn = fns[n]
                t = time.perf_counter()
                for _ in range(number):
                    fn()
                out[n].append((time.perf_counter() - t) / number)
        return out

    def subprocess(self, module: str, func: str, *args: Any, timeout: float = 900) -> Dict[str, Any]:
        """`module.func(*args)` in a fresh interpreter; returns its JSON-able result plus `peak_rss`."""
        code = ("import json,sys,harness,importlib; m=importlib.import_module(sys.argv[1]); "
                "r=getattr(m,sys.argv[2])(*json.loads(sys.argv[3])); r=dict(r or {}); "
                "r['peak_rss']=harness.peak_rss_bytes(); print('@@RESULT@@'+json.dumps(r))")
        p = subprocess.run([sys.executable, "-c", code, module, func, json.dumps(list(args))], capture_output=True,
                           text=True, env=child_env(), timeout=timeout)
        lines = [ln for ln in p.stdout.splitlines() if ln.startswith("@@RESULT@@")]
        if p.returncode != 0 or not lines:
            raise RuntimeError(f"{module}.{func} failed ({p.returncode}):\n{p.stderr[-3000:]}")
        return json.loads(lines[-1][len("@@RESULT@@"):])

    def profile(self, module: str, func: str, *args: Any, seconds: float = 3.0, top: int = 8) -> List[str]:
        """Where `module.func(*args)`, called in a loop in a fresh process, spends its time: py-spy
        (native frames included) samples, summarised as the `top` leaf functions by share of samples."""
        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        if not os.access(spy, os.X_OK):
            return ["py-spy is not installed (pyproject's bench extras)"]
        code = ("import sys,time,json,importlib; m=importlib.import_module(sys.argv[1]); f=getattr(m,sys.argv[2]); "
                "a=json.loads(sys.argv[3]); f(*a); t=time.perf_counter()\n"
                "while time.perf_counter()-t < float(sys.argv[4]): f(*a)")
        with tempfile.TemporaryDirectory(prefix="vd-spy-") as tmp:
            out = Path(tmp) / "raw.txt"
            p = subprocess.run([spy, "record", "--native", "--format", "raw", "-r", "400", "-o", str(out), "--",
                                sys.executable, "-c", code, module, func, json.dumps(list(args)), str(seconds)],
                               capture_output=True, text=True, env=child_env(), timeout=seconds * 10 + 120)
            if not out.exists():
                return [f"py-spy failed: {(p.stderr or p.stdout).strip()[-300:]}"]
            leaves: Dict[str, int] = {}
            total = 0
            for line in out.read_text().splitlines():
                stack, _, count = line.rpartition(" ")
                if not count.isdigit():
                    continue
                frames = stack.split(";")
                # the measured call only: skip samples spent importing or in the timing loop itself
                if not any(f"{func} (" in fr for fr in frames) or any("importlib._bootstrap" in fr for fr in frames):
                    continue
                leaf = re.sub(r" \(.*?\)$", "", frames[-1]) + " (" + frames[-1].rsplit("(", 1)[-1]
                leaves[leaf] = leaves.get(leaf, 0) + int(count)
                total += int(count)
        if not total:
            return ["py-spy: no samples"]
        best = sorted(leaves.items(), key=lambda kv: -kv[1])[:top]
        return [f"{100 * n / total:4.1f}%  {name}" for name, n in best]

    def instructions(self, module: str, func: str, *args: Any) -> Optional[Dict[str, int]]:
        """Instructions per call of `module.func(*args)`'s cases (:func:`instructions_per_call`); None if
        counts are off (--no-instructions) or valgrind is not installed."""
        if not self.count_instructions:
            return None
        if not shutil.which("valgrind"):
            print("  note: instruction counts: valgrind not installed (Debian `valgrind`)", flush=True)
            return None
        return instructions_per_call(module, func, *args) or None

    def close(self) -> None:
        self._stack.close()
        self._emu = None


# --------------------------------------------------------------------------- running
def as_list(r: Any) -> List[Result]:
    if r is None:
        return []
    return list(r) if isinstance(r, (list, tuple)) else [r]


def print_result(res: Result) -> None:
    print(f"\n{res.title}  [{res.unit}, median of {max(len(v) for v in res.samples.values()) if res.samples else 0}]")
    if res.setup.get("cpu"):
        print(f"  cpu: {res.setup['cpu']}")
    if res.setup.get("load_avg"):
        print("  load average (1 min) before, after: " + ", ".join(f"{x:.1f}" for x in res.setup["load_avg"]))
    base = res.median(res.ours) if res.samples.get(res.ours) else None
    for name, xs in res.samples.items():
        if not xs:
            continue
        med = statistics.median(xs)
        rel = ""
        if base and name != res.ours:
            rel = (f"  peer/ours {med / base:6.2f}x" if not res.higher_is_better
                   else f"  ours/peer {base / med:6.2f}x")
            per_run = spread(run_ratios(res.samples[res.ours], xs, res.higher_is_better))
            if per_run:
                rel += f" (runs {per_run['min']:.2f}-{per_run['max']:.2f})"
        print(f"  {name:<40} {fmt(med, res.unit):>12}  ({fmt(min(xs), res.unit)} - {fmt(max(xs), res.unit)}){rel}"
              + ("  (ours)" if name == res.ours else ""))
    for t in res.targets:
        if res._checkable(t):
            c = t.check(res)
            print(f"  target: {t.description}: {c['measured']:.2f} -> {'met' if c['met'] else 'NOT met'}")
    for n in res.notes:
        print(f"  note: {n}")
    if res.instructions:
        print("  note: " + instructions_line(res.instructions, res.ours))


def instructions_line(ins: Dict[str, int], ours: str) -> str:
    base = ins.get(ours)
    return "instructions per call (callgrind): " + "; ".join(
        f"{k} {v / 1e6:,.2f} M" + (f" ({v / base:.2f}x ours)" if base and k != ours else "") for k, v in ins.items())


def fmt(v: float, unit: str) -> str:
    if unit == "s":
        if v < 1e-3:
            return f"{v * 1e6:.1f} us"
        if v < 1:
            return f"{v * 1e3:.2f} ms"
        return f"{v:.2f} s"
    if unit == "bytes":
        return f"{v / 2**20:.1f} MiB"
    if abs(v) >= 100:
        return f"{v:,.0f} {unit}"
    return f"{v:.3g} {unit}"


def run_scenario(module: Any, ctx: Context) -> Dict[str, Any]:
    t = time.perf_counter()
    load_start, state = load1(), git_state()
    try:
        results = as_list(module.run(ctx))
        error = None
    except Exception as exc:  # a failed scenario is reported, the others still run
        import traceback

        traceback.print_exc()
        results, error = [], f"{type(exc).__name__}: {exc}"
    for r in results:
        print_result(r)
    return {"scenario": module.SCENARIO, "title": getattr(module, "TITLE", module.SCENARIO),
            "order": getattr(module, "ORDER", 100), "doc": (module.__doc__ or "").strip(),
            "seconds": time.perf_counter() - t, "error": error, "results": [r.to_json() for r in results],
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": state["commit"],
            "dirty": state["dirty"], "cores": cores(), "cpu_share": getattr(module, "CPU_SHARE", ""),
            "load_avg": [load_start, load1()]}


def arg_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("BENCH_ROUNDS", "7")),
                    help="interleaved rounds per measurement (default 7; 2 for a smoke run)")
    ap.add_argument("--quick", action="store_true", help="smallest sizes: a smoke run of the harness")
    ap.add_argument("--no-instructions", dest="instructions", action="store_false",
                    default=os.environ.get("BENCH_INSTRUCTIONS", "1") not in ("", "0"),
                    help="skip the instruction counts of the decode scenarios (callgrind, ~1 min each; "
                         "also BENCH_INSTRUCTIONS=0)")
    ap.add_argument("--json", default=None, help="also write this scenario's results to this file")
    return ap


def main(run: Callable[[Context], Any], argv: Optional[List[str]] = None) -> int:
    """Run one scenario module alone (its `if __name__ == "__main__"` hook)."""
    args = arg_parser().parse_args(argv)
    mod = sys.modules[run.__module__]
    ctx = Context(rounds=args.rounds, quick=args.quick, count_instructions=args.instructions)
    try:
        out = run_scenario(mod, ctx)
    finally:
        ctx.close()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 1 if out["error"] else 0
