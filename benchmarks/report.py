"""docs/performance.md and its plots (docs/performance/*.png) from benchmarks/results/latest.json.

    python benchmarks/report.py [benchmarks/results/latest.json]

Every scenario's section states when it ran, the commit it measured, the CPU share (the scenario's
``CPU_SHARE`` sentence, the cores the run was allowed, the 1-minute load average at its start and
end). A scenario measured at another commit than the one the report is written at, with a change to
the code since (python/, cpp/, benchmarks/ but its notes, README and this file, CMakeLists.txt,
pyproject.toml:
``harness.CODE_PATHS``), or with uncommitted code changes, or with no commit recorded, is marked
**stale** in its section and listed in the summary: the report says so rather than refusing, so a
partial run (``--only``) still regenerates the rest. Ratios are the ratio of the medians, with the
range of the per-run ratios (round r of ours against round r of the peer) when the runs pair up.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import CODE_PATHS, ROOT, RESULTS, fmt, git_state, run_ratios, spread  # noqa: E402

DOC = ROOT / "docs" / "performance.md"
PLOTS = ROOT / "docs" / "performance"
# Hand-written analysis of a scenario (why a target is missed, what a profile shows):
# benchmarks/notes/<scenario>.md, copied under the scenario's heading on every regeneration.
NOTES = HERE / "notes"


def _ratio(res: Dict[str, Any], name: str) -> str:
    med = res["medians"]
    ours = med.get(res["ours"])
    if not ours or name == res["ours"] or not med.get(name):
        return "ours" if name == res["ours"] else ""
    r = med[name] / ours if not res["higher_is_better"] else ours / med[name]
    runs = spread(run_ratios(res["samples"][res["ours"]], res["samples"][name], res["higher_is_better"]))
    return f"{r:.2f}x" + (f" (runs {runs['min']:.2f} - {runs['max']:.2f})" if runs and runs["n"] > 1 else "")


# --------------------------------------------------------------------------- freshness
def code_changes(commit: str, root: Path = ROOT) -> Optional[List[str]]:
    """The code files (harness.CODE_PATHS) that differ between `commit` and the working tree's HEAD;
    None if git does not know the commit."""
    p = subprocess.run(["git", "-C", str(root), "diff", "--name-only", commit, "HEAD", "--", *CODE_PATHS],
                       capture_output=True, text=True, timeout=60)
    return p.stdout.split() if p.returncode == 0 else None


def stale_reason(scn: Dict[str, Any], head: str,
                 changes: Callable[[str], Optional[List[str]]] = code_changes) -> str:
    """Why a scenario's numbers may not describe the code at `head` ("" if they do)."""
    commit = scn.get("commit") or ""
    if not commit:
        return "no commit recorded with this result"
    if scn.get("dirty"):
        return f"measured with uncommitted code changes on top of {commit[:10]}"
    if commit == head:
        return ""
    changed = changes(commit)
    if changed is None:
        return f"measured at {commit[:10]}, a commit this repository does not have"
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        return f"measured at {commit[:10]}; {len(changed)} code file(s) changed since: {shown}"
    return ""


def provenance(scn: Dict[str, Any], stale: str) -> List[str]:
    """The lines under a scenario's heading: when, which commit, on what CPU share."""
    when = scn.get("finished") or "date not recorded"
    commit = (scn.get("commit") or "")[:10] or "unknown"
    out = [f"Scenario `{scn['scenario']}`, {scn['seconds']:.0f} s, finished {when}, commit {commit}"
           + (f". **Stale:** {stale}." if stale else ".")]
    share = scn.get("cpu_share") or "not stated by the scenario: ours and its peers in turn, same process conditions"
    load = scn.get("load_avg")
    out.append(f"CPU share: {share}. Cores allowed: {', '.join(map(str, scn.get('cores', []))) or 'not recorded'}"
               + (f"; load average (1 min) {load[0]:.1f} at the start, {load[1]:.1f} at the end." if load else "."))
    return out + [""]


def setup_line(res: Dict[str, Any]) -> List[str]:
    st = res.get("setup") or {}
    parts = [str(st[k]) for k in ("cpu", "runs") if st.get(k)]
    if st.get("load_avg"):
        a, b = st["load_avg"]
        parts.append(f"load average (1 min) {a:.1f} before, {b:.1f} after")
    return [f"Setup: {'; '.join(parts)}.", ""] if parts else []


def modes_table(results: List[Dict[str, Any]]) -> List[str]:
    """Results measured in several modes (setup "mode", "cell", "reference"): one row per cell, per mode
    ours / reference as the median of the per-run ratios with their range, and the load averages."""
    with_mode = [r for r in results if (r.get("setup") or {}).get("mode") and r["setup"].get("reference")]
    modes = list(dict.fromkeys(r["setup"]["mode"] for r in with_mode))
    if not with_mode:
        return []
    ref = with_mode[0]["setup"]["reference"]
    cells: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for r in with_mode:
        cells.setdefault(r["setup"]["cell"], {})[r["setup"]["mode"]] = r
    head = ["case"] + [f"{m}: ours / {ref}, median (runs min - max)" for m in modes] + \
           [f"{m}: ours req/s median (min - max)" for m in modes]
    lines = [f"Ours over {ref}, per mode (each run pair's ratio; the tables below have every server):", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for cell, by_mode in cells.items():
        ratios, ours = [], []
        for m in modes:
            got = by_mode.get(m)
            if not got or not got["samples"].get(got["ours"]) or not got["samples"].get(ref):
                ratios.append("")
                ours.append("")
                continue
            runs = spread(run_ratios(got["samples"][got["ours"]], got["samples"][ref], got["higher_is_better"]))
            ratios.append(f"{runs['median']:.2f}x ({runs['min']:.2f} - {runs['max']:.2f})" if runs else "")
            o = spread(got["samples"][got["ours"]])
            ours.append(f"{fmt(o['median'], got['unit'])} ({fmt(o['min'], got['unit'])} - {fmt(o['max'], got['unit'])})")
        lines.append("| " + " | ".join([cell] + ratios + ours) + " |")
    cpu = {r["setup"]["mode"]: r["setup"].get("cpu") for r in with_mode}
    return lines + [""] + [f"- {cpu[m]}" if cpu[m].startswith(m) else f"- {m}: {cpu[m]}" for m in modes if cpu[m]] + [""]


def table(res: Dict[str, Any]) -> List[str]:
    extra_keys: List[str] = []
    for d in res["extra"].values():
        for k in d:
            if k not in extra_keys:
                extra_keys.append(k)
    head = ["contender", "median", "min - max", "n", "peer / ours" if not res["higher_is_better"] else "ours / peer"]
    head += extra_keys
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, xs in res["samples"].items():
        if not xs:
            continue
        row = [f"**{name}**" if name == res["ours"] else name, fmt(statistics.median(xs), res["unit"]),
               f"{fmt(min(xs), res['unit'])} - {fmt(max(xs), res['unit'])}", str(len(xs)), _ratio(res, name)]
        for k in extra_keys:
            v = res["extra"].get(name, {}).get(k, "")
            row.append(_cell(k, v))
        lines.append("| " + " | ".join(row) + " |")
    if res.get("checks"):
        lines += ["", "| target | measured | met |", "|---|---|---|"]
        for c in res["checks"]:
            lines.append(f"| {c['description']} | {c['measured']:.2f} | {'yes' if c['met'] else '**NO**'} |")
    return lines


def instructions_table(res: Dict[str, Any]) -> List[str]:
    """Instructions per call (callgrind) and each peer's count over ours: stable where times are noisy."""
    ins = res.get("instructions") or {}
    if not ins:
        return []
    base = ins.get(res["ours"])
    lines = ["Instructions per call (valgrind callgrind, one fresh process; stable on a shared machine):", "",
             "| contender | instructions / call | peer / ours |", "|---|---|---|"]
    for name, v in ins.items():
        mine = name == res["ours"]
        lines.append(f"| {f'**{name}**' if mine else name} | {v / 1e6:,.2f} M | "
                     f"{'ours' if mine else (f'{v / base:.2f}x' if base else '')} |")
    return lines + [""]


def _cell(key: str, v: Any) -> str:
    if v in ("", None):
        return ""
    k = key.lower()
    if isinstance(v, (int, float)) and ("rss" in k or "bytes" in k or k == "dataframe"):
        return fmt(float(v), "bytes")
    if isinstance(v, int) and "instr" in key:
        return f"{v / 1e6:,.1f} M"
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def plot(scn: Dict[str, Any]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = [r for r in scn["results"] if r["medians"]]
    if not results:
        return ""
    PLOTS.mkdir(parents=True, exist_ok=True)
    scaled = [r for r in results if r.get("x") is not None]
    groups: Dict[str, List[Dict[str, Any]]] = {}
    for r in scaled:
        groups.setdefault(r["title"].split(":")[0], []).append(r)
    bars = [r for r in results if r.get("x") is None]
    mem_groups = {t: rs for t, rs in groups.items()
                  if sum(1 for r in rs if any("peak RSS growth" in e for e in r["extra"].values())) >= 2}
    n = len(bars) + len(groups) + len(mem_groups)
    fig, axes = plt.subplots(n, 1, figsize=(8, 2.2 + 0.9 * n + 0.25 * sum(len(r["medians"]) for r in bars)),
                             squeeze=False)
    i = 0
    for r in bars:
        ax = axes[i][0]
        i += 1
        names = [k for k in r["samples"] if r["samples"][k]]
        scale, unit = _scale(r)
        meds = [statistics.median(r["samples"][k]) * scale for k in names]
        lo = [m - min(r["samples"][k]) * scale for m, k in zip(meds, names)]
        hi = [max(r["samples"][k]) * scale - m for m, k in zip(meds, names)]
        colors = ["tab:orange" if k == r["ours"] else "tab:blue" for k in names]
        ax.barh(names, meds, xerr=[lo, hi], color=colors)
        ax.invert_yaxis()
        ax.set_xlabel(unit + (" (higher is better)" if r["higher_is_better"] else " (lower is better)"))
        ax.set_title(r["title"], fontsize=9)
        ax.tick_params(axis="y", labelsize=8)
    for title, rs in groups.items():
        ax = axes[i][0]
        i += 1
        rs = sorted(rs, key=lambda r: r["x"])
        scale, unit = _scale(rs[0])
        names = list(dict.fromkeys(k for r in rs for k in r["medians"]))
        for k in names:
            pts = [(r["x"], r["medians"][k] * scale) for r in rs if k in r["medians"]]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=k,
                    linewidth=2.5 if k == rs[0]["ours"] else 1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("records")
        ax.set_ylabel(unit)
        ax.set_title(title + " (log-log: linear scaling is a slope-1 line)", fontsize=9)
        ax.legend(fontsize=7)
    for title, rs in mem_groups.items():
        ax = axes[i][0]
        i += 1
        rs = sorted(rs, key=lambda r: r["x"])
        names = list(dict.fromkeys(k for r in rs for k in r["extra"]))
        for k in names:
            pts = [(r["x"], r["extra"][k]["peak RSS growth"] / 2**20) for r in rs
                   if "peak RSS growth" in r["extra"].get(k, {})]
            ax.plot([p[0] for p in pts], [max(p[1], 0.01) for p in pts], marker="o", label=k,
                    linewidth=2.5 if k == rs[0]["ours"] else 1.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("records")
        ax.set_ylabel("peak RSS growth, MiB")
        ax.set_title(title + ": memory", fontsize=9)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = PLOTS / f"{scn['scenario']}.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return str(path.relative_to(DOC.parent))


def _scale(r: Dict[str, Any]) -> Any:
    if r["unit"] == "s":
        top = max(r["medians"].values())
        return (1e3, "ms") if top < 1 else (1.0, "s")
    if r["unit"] == "bytes":
        return (1 / 2**20, "MiB")
    return (1.0, r["unit"])


def write(data: Dict[str, Any]) -> Path:
    m, v = data["machine"], data["versions"]
    head = git_state()["commit"]
    stale = {s["scenario"]: stale_reason(s, head) for s in data["scenarios"]}
    out = ["# Performance", "",
           "Generated by `make bench` (`benchmarks/run_all.py`) from `benchmarks/results/latest.json`; do not edit by",
           "hand (analysis under a scenario comes from `benchmarks/notes/<scenario>.md`). Each scenario runs",
           "alone with `python benchmarks/run_all.py --only NAME`. Times are medians of",
           "interleaved rounds (every contender once per round, order rotated); ratios are a peer's median over ours",
           "(how many times faster we are), or ours over the peer for throughputs, with the range of the per-run",
           "ratios (round r of ours against round r of the peer) in brackets. Each scenario states when it ran,",
           "the commit it measured and the CPU share of ours and its peers; one measured before a later change to",
           f"the code is marked **stale**. Report written at commit {head[:10] or 'unknown'}.", "",
           f"Run: {data['started']}, {data['seconds']:.0f} s, {data['rounds']} rounds"
           + (" (**quick smoke run: small sizes, few rounds; not representative**)" if data.get("quick") else "")
           + (f"; scenarios updated alone: {', '.join(data['partial_update'])}" if data.get("partial_update") else ""),
           f"Machine: {m['cpu']}, {m['cores']} cores, {m['platform']}, Python {m['python']}, "
           f"load average at the end {', '.join(f'{x:.1f}' for x in m['load_avg'])} (a shared machine: expect noise).",
           "", "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()), ""]
    if v.get("valgrind") == "not installed":
        out += ["Instruction counts: valgrind not installed (Debian `valgrind`, installed by `make bench`).", ""]
    missed: List[str] = []
    for s in data["scenarios"]:
        for r in s["results"]:
            for c in r.get("checks", []):
                if not c["met"]:
                    missed.append(f"{s['title']} / {r['title']}: {c['description']} (measured {c['measured']:.2f})")
            # targets a scenario checks in a note (crawl memory, 429s): "...: NOT met"
            missed += [f"{s['title']} / {r['title']}: {n}" for n in r.get("notes", []) if n.endswith(": NOT met")]
    out += ["## Summary", ""]
    out += ["Targets missed in this run:", ""] + [f"- {x}" for x in missed] if missed else ["Every target was met."]
    out.append("")
    stale_list = [f"- {s['title']}: {stale[s['scenario']]}" for s in data["scenarios"] if stale[s["scenario"]]]
    out += (["**Stale results** (older than the code they describe; run them again):", ""] + stale_list
            if stale_list else ["Every scenario was measured at the code the report describes."]) + [""]
    for s in data["scenarios"]:
        out += [f"## {s['title']}", ""] + provenance(s, stale[s["scenario"]])
        if s["doc"]:
            out += [s["doc"].split("\n\n")[0].strip(), ""]
        note = NOTES / f"{s['scenario']}.md"
        if note.exists():
            out += [note.read_text().strip(), ""]
        if s["error"]:
            out += [f"**Did not complete:** `{s['error']}`", ""]
        png = plot(s) if s["results"] else ""
        if png:
            out += [f"![{s['title']}]({png})", ""]
        out += modes_table(s["results"])
        for r in s["results"]:
            out += [f"### {r['title']}", ""] + setup_line(r) + [f"Unit: {r['unit']}.", ""] + table(r) + [""]
            out += [f"- {n}" for n in r["notes"]] + ([""] if r["notes"] else [])
            out += instructions_table(r)
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text("\n".join(out).rstrip() + "\n")
    return DOC


if __name__ == "__main__":
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS / "latest.json"
    print(write(json.loads(src.read_text())))
