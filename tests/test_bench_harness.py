"""The benchmark harness's own logic (benchmarks/harness.py, benchmarks/report.py): the statistics the
report prints, the CPU pinning the serving scenario relies on, and the stale marking of results older
than the code. No timing here: the numbers are made up or the processes are idle."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

import harness  # noqa: E402
import report  # noqa: E402

ROOT = BENCH.parent


def allowed(pid: int, tid: int | None = None) -> str:
    path = f"/proc/{pid}/task/{tid}/status" if tid else f"/proc/{pid}/status"
    for line in Path(path).read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split()[1]
    raise AssertionError("no Cpus_allowed_list")


def git(*argv: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *argv], capture_output=True, text=True, check=True).stdout.strip()


# --------------------------------------------------------------------------- statistics
def test_spread_is_median_min_max() -> None:
    assert harness.spread([3.0, 1.0, 10.0, 2.0]) == {"median": 2.5, "min": 1.0, "max": 10.0, "n": 4}
    assert harness.spread([]) == {}


def test_run_ratios_pair_runs_and_orient_like_the_report() -> None:
    # throughput: ours / peer per run
    assert harness.run_ratios([100, 90, 120], [200, 90, 60], True) == [0.5, 1.0, 2.0]
    # times: peer / ours (above 1: ours faster)
    assert harness.run_ratios([1.0, 2.0], [3.0, 3.0], False) == [3.0, 1.5]
    # runs that were not side by side make no ratio
    assert harness.run_ratios([1.0, 2.0], [1.0, 2.0, 3.0], True) == []
    assert harness.run_ratios([1.0, 0.0], [1.0, 2.0], True) == []


def test_report_ratio_shows_the_per_run_range() -> None:
    res = harness.Result(name="x", title="x", unit="req/s", ours="emulator", higher_is_better=True,
                         samples={"emulator": [90.0, 100.0, 120.0], "nginx": [100.0, 100.0, 100.0]}).to_json()
    assert report._ratio(res, "nginx") == "1.00x (runs 0.90 - 1.20)"
    assert report._ratio(res, "emulator") == "ours"


def test_modes_table_pairs_each_cell_s_modes() -> None:
    def result(mode: str, ours: List[float], ref: List[float]) -> Dict[str, Any]:
        return harness.Result(name=f"serve-{mode}", title=f"page, {mode}", unit="req/s", ours="emulator",
                              higher_is_better=True, samples={"emulator": ours, "nginx": ref},
                              setup={"mode": mode, "cell": "page, 64 connections", "reference": "nginx",
                                     "cpu": f"{mode} setup"}).to_json()

    lines = report.modes_table([result("pinned", [80.0, 90.0, 100.0], [100.0, 100.0, 100.0]),
                                result("unpinned", [50.0, 60.0, 70.0], [100.0, 50.0, 100.0])])
    row = next(ln for ln in lines if ln.startswith("| page, 64 connections"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "0.90x (0.80 - 1.00)"
    assert cells[2] == "0.70x (0.50 - 1.20)"
    assert "- pinned setup" in lines and "- unpinned setup" in lines


# --------------------------------------------------------------------------- CPU share
needs_two_cores = pytest.mark.skipif(len(harness.cores()) < 2, reason="pinning apart needs 2 allowed cores")


@needs_two_cores
def test_pin_preexec_and_affinity_put_children_on_the_given_core() -> None:
    first, before = harness.cores()[0], harness.cores()
    child = subprocess.Popen(["sleep", "30"], preexec_fn=harness.pin_preexec([first]))
    try:
        assert allowed(child.pid) == str(first)
    finally:
        child.kill()
        child.wait()
    with harness.affinity([first]):
        child = subprocess.Popen(["sleep", "30"])
    try:
        assert allowed(child.pid) == str(first)
        assert harness.cores() == before  # restored
    finally:
        child.kill()
        child.wait()


@needs_two_cores
def test_pin_pid_moves_every_thread_and_child_of_a_running_process() -> None:
    core = harness.cores()[-1]
    code = ("import subprocess,threading,time,sys\n"
            "c=subprocess.Popen(['sleep','30'])\n"
            "[threading.Thread(target=time.sleep,args=(30,),daemon=True).start() for _ in range(3)]\n"
            "print(c.pid,flush=True); time.sleep(30)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        grandchild = int(proc.stdout.readline())  # type: ignore[union-attr]
        time.sleep(0.2)  # the threads started
        tids = os.listdir(f"/proc/{proc.pid}/task")
        assert len(tids) >= 4
        assert harness.pin_pid(proc.pid, [core]) >= len(tids) + 1
        assert {allowed(proc.pid, int(t)) for t in tids} == {str(core)}
        assert allowed(grandchild) == str(core)
    finally:
        proc.kill()
        proc.wait()
        with contextlib.suppress(OSError, NameError):
            os.kill(grandchild, signal.SIGKILL)


# --------------------------------------------------------------------------- stale results
def _history() -> bool:
    try:
        return git("rev-parse", "--is-shallow-repository") == "false" and git("rev-list", "--count", "HEAD") != "1"
    except (OSError, subprocess.CalledProcessError):
        return False


# The stale rules are checked against this repository's own history: a clone without it (shallow,
# an unpacked archive) cannot show a commit older than HEAD.
needs_history = pytest.mark.skipif(not _history(), reason="needs the repository's git history")


@needs_history
def test_stale_reason_from_the_recorded_commit() -> None:
    head = git("rev-parse", "HEAD")
    assert report.stale_reason({"commit": head, "dirty": False}, head) == ""
    assert "uncommitted" in report.stale_reason({"commit": head, "dirty": True}, head)
    assert "no commit" in report.stale_reason({}, head)
    assert "does not have" in report.stale_reason({"commit": "0" * 40}, head)
    # an older commit: stale when the code changed since, fresh when only other files did
    root = git("rev-list", "--max-parents=0", "HEAD").split()[0]
    reason = report.stale_reason({"commit": root}, head)
    changed = report.code_changes(root)
    assert changed and any(f.startswith("python/") for f in changed)
    assert not any(f.startswith(("benchmarks/notes/", "docs/")) for f in changed)  # not code
    assert reason.startswith(f"measured at {root[:10]}; {len(changed)} code file(s) changed since: ")
    assert report.stale_reason({"commit": root}, head, changes=lambda c: []) == ""


@needs_history
def test_report_marks_a_stale_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report, "DOC", tmp_path / "performance.md")
    monkeypatch.setattr(report, "PLOTS", tmp_path / "performance")
    monkeypatch.setattr(report, "plot", lambda scn: "")
    head = git("rev-parse", "HEAD")
    root = git("rev-list", "--max-parents=0", "HEAD").split()[0]

    def scenario(name: str, commit: str) -> Dict[str, Any]:
        res = harness.Result(name=name, title=f"{name} table", unit="s", ours="ours",
                             samples={"ours": [1.0, 1.0, 1.0], "peer": [2.0, 3.0, 4.0]}).to_json()
        return {"scenario": name, "title": f"Scenario {name}", "order": 1, "doc": "", "seconds": 1.0,
                "error": None, "results": [res], "finished": "2026-12-07T10:00:00Z", "commit": commit,
                "dirty": False, "cores": [0, 1], "cpu_share": f"{name} share", "load_avg": [1.5, 2.5]}

    data = {"started": "2026-12-07T10:00:00Z", "seconds": 2.0, "rounds": 3, "quick": False,
            "machine": {"cpu": "cpu", "cores": 2, "platform": "linux", "python": "3.11", "load_avg": [1, 1, 1]},
            "versions": {}, "scenarios": [scenario("fresh", head), scenario("old", root)]}
    text = report.write(data).read_text()
    fresh = text[text.index("## Scenario fresh"):text.index("## Scenario old")]
    old = text[text.index("## Scenario old"):]
    assert "Stale" not in fresh and f"commit {head[:10]}." in fresh
    assert f"commit {root[:10]}. **Stale:** measured at {root[:10]};" in old
    assert "CPU share: old share. Cores allowed: 0, 1; load average (1 min) 1.5 at the start, 2.5 at the end." in old
    summary = text[text.index("## Summary"):text.index("## Scenario fresh")]
    assert "- Scenario old: measured at" in summary and "Scenario fresh:" not in summary
    assert "| peer | 3.00 s | 2.00 s - 4.00 s | 3 | 3.00x (runs 2.00 - 4.00) |" in old


@needs_two_cores
def test_whole_process_on_pins_threads_started_before_and_restores_them() -> None:
    import threading

    core, before = harness.cores()[-1], harness.cores()
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, daemon=True)  # a pool thread started earlier
    worker.start()
    try:
        with harness.whole_process_on([core]):
            assert allowed(os.getpid(), worker.native_id) == str(core)
            assert harness.cores() == [core]
        assert allowed(os.getpid(), worker.native_id) == allowed(os.getpid(), threading.get_native_id())
        assert harness.cores() == before
    finally:
        stop.set()
        worker.join()


def test_serve_modes_state_their_cores_and_workers() -> None:
    import serve_wrk

    srv, cli, workers, text = serve_wrk.mode_setup("unpinned")
    assert (srv, cli, workers) == (None, None, 2) and "nginx 2 workers" in text
    with pytest.raises(ValueError):
        serve_wrk.mode_setup("half")
    if len(harness.cores()) < 2:
        with pytest.raises(RuntimeError):
            serve_wrk.mode_setup("pinned")
        return
    srv, cli, workers, text = serve_wrk.mode_setup("pinned")
    assert srv and cli and not set(srv) & set(cli) and workers == 1
    assert f"on core {srv[0]}" in text and f"wrk -t1 on core {cli[0]}" in text
