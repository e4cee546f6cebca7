"""Page bytes -> DataFrame: ours against json, orjson, msgspec + pandas, orjson + polars and pyarrow.json.

The payloads are trims pages of 10, 100 and 1000 records served by the emulator from the full
dataset (captured once per run). Every contender decodes the same bytes, in the same process,
interleaved; peak memory comes from one fresh process per contender, instructions per call (ours,
json/orjson + pandas, orjson + polars; valgrind callgrind, since `perf stat` has no hardware counters
here) from one fresh process for every size. `pyarrow.json` reads the page's
`data` array re-serialised as NDJSON outside the timing (its input format), then `.to_pandas()`.
Targets: >= 6x json + pandas and >= 2x the best peer (orjson + polars included). Ours to polars
(`frame_from_bytes(..., kind="polars")`: the page's Arrow export imported by polars) runs alongside
as "vehicledata -> polars", measured against orjson + polars like for like (same >= 2x goal); it is
not a peer of the pandas targets. The 10/100/1000 series is the scaling plot of scenario 6.

    python benchmarks/decode_frame.py [--rounds 7] [--quick]

The breakdown of a page's cost (decode, the fast path's pieces, the floor of any pandas frame of the
page: its blocks, manager and frame from ready arrays) against orjson + polars, as CPU time
(`time.thread_time`, interleaved) and instructions per call (callgrind), on a saved payload:

    python benchmarks/decode_frame.py --breakdown benchmarks/results/payloads/api_trims_v2_limit_10.json
"""
from __future__ import annotations

import io
import json
import sys
from typing import Any, Callable, Dict, List

import harness

SCENARIO = "frame"
CPU_SHARE = ("ours and every peer in turn in one process, every thread of it (polars' and Arrow's pools "
             "included) pinned to one core while timed: the same single core for all, whether a library uses "
             "threads or not")
TITLE = "1. Page bytes -> DataFrame (and 6. scaling by page size)"
ORDER = 10

OURS = "vehicledata"
OURS_POLARS = "vehicledata -> polars"


def contenders(body: bytes) -> Dict[str, Callable[[], Any]]:
    import msgspec
    import orjson
    import pandas as pd
    import polars as pl
    import pyarrow.json as paj

    from vehicledata import frames

    dec = msgspec.json.Decoder()
    ndjson = b"\n".join(orjson.dumps(r) for r in orjson.loads(body)["data"]) + b"\n"
    return {
        OURS: lambda: frames.frame_from_bytes(body, "trim"),
        OURS_POLARS: lambda: frames.frame_from_bytes(body, "trim", kind="polars"),
        "json + pandas": lambda: pd.DataFrame(json.loads(body)["data"]),
        "orjson + pandas": lambda: pd.DataFrame(orjson.loads(body)["data"]),
        "msgspec + pandas": lambda: pd.DataFrame(dec.decode(body)["data"]),
        "orjson + polars": lambda: pl.DataFrame(orjson.loads(body)["data"]),
        "pyarrow.json (NDJSON) -> pandas": lambda: paj.read_json(io.BytesIO(ndjson)).to_pandas(),
    }


def child(name: str, payload_file: str, iters: int) -> Dict[str, Any]:
    """In a fresh process: run contender `name` `iters` times (0: imports only); peak RSS growth of one run."""
    from pathlib import Path

    body = Path(payload_file).read_bytes()
    fns = contenders(body)
    base = harness.rss_bytes()
    harness.reset_peak()
    rows = 0
    for _ in range(iters):
        rows = len(fns[name]())
    return {"rows": rows, "growth": harness.peak_rss_bytes() - base}


_BODIES: Dict[str, bytes] = {}


def ours_file(payload_file: str) -> int:
    """Ours on a saved payload (for the profile)."""
    from pathlib import Path

    from vehicledata import frames

    body = _BODIES.get(payload_file) or _BODIES.setdefault(payload_file, Path(payload_file).read_bytes())
    return len(frames.frame_from_bytes(body, "trim"))


# Instruction counts (one interpreter under callgrind, harness.instructions_per_call): ours and the
# strongest peers, calls per page size so that each case costs a few seconds under callgrind.
INSTR_PEERS = (OURS, "json + pandas", "orjson + pandas", "orjson + polars", OURS_POLARS)
INSTR_CALLS = {10: 100, 100: 30, 1000: 10}


def instr_cases(files: Dict[str, str]) -> List[Any]:
    """The callgrind cases: (f"{size} {contender}", fn, calls) for each page size's payload file."""
    from pathlib import Path

    cases = []
    for size, f in files.items():
        fns = contenders(Path(f).read_bytes())
        cases += [(f"{size} {name}", fns[name], INSTR_CALLS[int(size)]) for name in INSTR_PEERS]
    return cases


def breakdown_cases(payload_file: str, calls: int = 100) -> List[Any]:
    """(label, fn, calls) for the pieces of ours on a saved trims payload and the floor of a pandas
    frame of it (docs/performance.md, section 1; benchmarks/notes/frame.md)."""
    from pathlib import Path

    import orjson
    import pandas as pd
    import polars as pl

    from vehicledata import _core, frames

    body = Path(payload_file).read_bytes()
    page = _core.client.decode(body, "trim", "envelope", "")
    df = frames.page_to_pandas(page)
    fast = frames._FAST["arrow"]
    lay = fast.layout(page, len(df.columns))
    n = page.rows
    # The frame's own arrays, as its blocks hold them (timestamps 1 x n): the floor starts from them.
    ready = [a.reshape(1, n) if isinstance(a.dtype, pd.DatetimeTZDtype) else a
             for a in (df._mgr.iget_values(i) for i in range(df.shape[1]))]
    assert all(stack is None for _, _, stack, _ in lay.blocks), "one array per block (trims)"
    blocks = tuple(df._mgr.blocks)

    def manager_frame() -> Any:
        axes = [lay.columns._view(), fast.range_new(range(n))]
        return fast.from_mgr(fast.BlockManager(blocks, axes, verify_integrity=False), axes)

    def blocks_manager_frame() -> Any:
        made = tuple([klass(ready[i], place, 2, None) for klass, i, _, place in lay.blocks])
        axes = [lay.columns._view(), fast.range_new(range(n))]
        return fast.from_mgr(fast.BlockManager(made, axes, verify_integrity=False), axes)

    def text_import() -> Any:
        capsule, address = page._arrow_text_array()
        return fast.chunked_array([fast.array_import(address, lay.text_struct)]).flatten()

    values, texts = page._pandas_values(), text_import()

    def arrays() -> Any:  # the 15 pandas arrays of ready buffers, nothing else (made as the fast path makes them)
        out = []
        for i in lay.ints:
            if fast.ints_inline:
                made = fast.int_alloc(fast.int_array)
                made._data, made._mask = values[i]
            else:
                made = fast.integer_new(*values[i])
            out.append(made)
        for i in lay.stamps:
            if fast.stamp_alloc is not None:
                made = fast.stamp_alloc(fast.stamp_array, values[i], fast.utc_us)
                made._freq = None
            else:
                made = fast.datetime_new(values[i], dtype=fast.utc_us)
            out.append(made)
        for _, j in lay.strings:
            arr = fast.string_array.__new__(fast.string_array)
            arr._pa_array = texts[j]
            arr._dtype = fast.string_dtype
            out.append(arr)
        return out

    pd.testing.assert_frame_equal(blocks_manager_frame(), df, check_exact=True)
    pd.testing.assert_frame_equal(manager_frame(), df, check_exact=True)
    cases = {
        OURS: lambda: frames.frame_from_bytes(body, "trim"),
        "  decode": lambda: _core.client.decode(body, "trim", "envelope", ""),
        "  frame of a decoded page": lambda: fast.frame(page),
        "    Page._pandas_values": page._pandas_values,
        "    text columns: Arrow export + import": text_import,
        "floor: the 15 arrays of ready buffers": arrays,
        "floor: blocks + manager + frame of ready arrays": blocks_manager_frame,
        "floor: manager + frame of ready blocks": manager_frame,
        OURS_POLARS: lambda: frames.frame_from_bytes(body, "trim", kind="polars"),
        "  polars import of a decoded page": lambda: frames.page_to_polars(page),
        "orjson + polars": lambda: pl.DataFrame(orjson.loads(body)["data"]),
        "  orjson alone": lambda: orjson.loads(body)["data"],
    }
    return [(label, fn, calls) for label, fn in cases.items()]


def breakdown(payload_file: str, rounds: int = 9) -> None:
    """Print CPU time (interleaved medians and minima) and instructions per call of breakdown_cases."""
    import statistics
    import time

    cases = breakdown_cases(payload_file)
    cpu: Dict[str, List[float]] = {label: [] for label, _, _ in cases}
    for r in range(rounds):
        for label, fn, calls in cases[r % len(cases):] + cases[:r % len(cases)]:
            t = time.thread_time()
            for _ in range(calls):
                fn()
            cpu[label].append((time.thread_time() - t) / calls)
    ins = harness.instructions_per_call("decode_frame", "breakdown_cases", payload_file, 30)
    print(f"{'':50s} {'CPU us (median, min)':>22s} {'instructions':>12s}")
    for label, _, _ in cases:
        print(f"{label:50s} {statistics.median(cpu[label]) * 1e6:10.1f} {min(cpu[label]) * 1e6:10.1f} "
              f"{ins.get(label, 0):12,d}")


def run(ctx: harness.Context) -> List[harness.Result]:
    sizes = [10, 100, 1000]
    out: List[harness.Result] = []
    for size in sizes:
        path = f"/api/trims/v2?limit={size}"
        body = ctx.payload(path)
        fns = contenders(body)
        ref = fns["json + pandas"]()
        ours = fns[OURS]()
        assert len(ours) == len(ref) == size and list(ours["id"]) == list(ref["id"]), "same records"
        assert fns[OURS_POLARS]()["id"].to_list() == list(ref["id"]), "same records (polars)"
        number = max(1, 2000 // size) if not ctx.quick else 1
        with harness.whole_process_on(harness.cores()[:1]):  # polars' and Arrow's pools too: one core for all
            samples = ctx.interleave(fns, number=number)
        res = harness.Result(
            name=f"frame-{size}", title=f"Page -> DataFrame: {size} records ({len(body) / 1024:.0f} KiB)",
            unit="s", ours=OURS, samples=samples, x=size,
            targets=[harness.Target(">= 6x json + pandas", "faster", 6.0, peer="json + pandas")])
        best = min((k for k in samples if k not in (OURS, OURS_POLARS)), key=lambda k: res.median(k))
        res.targets.append(harness.Target(f">= 2x the best peer ({best})", "faster", 2.0, peer=best))
        res.targets.append(harness.Target(f"{OURS_POLARS}: >= 2x orjson + polars", "faster", 2.0,
                                          peer="orjson + polars", contender=OURS_POLARS))
        pfile = str(ctx.payload_file(path))
        if not ctx.quick or size == 100:
            for name in fns:
                r = ctx.subprocess("decode_frame", "child", name, pfile, 1)
                res.extra.setdefault(name, {})["peak RSS growth"] = r["growth"]
        if res.extra:
            res.notes.append(f"{number} calls per sample; peak RSS growth: one call in a fresh process after imports")
        if not all(c["met"] for c in res.to_json()["checks"]):
            res.notes.append("target missed; py-spy profile of ours (leaf functions, share of samples): "
                             + "".join("\n  - " + ln for ln in ctx.profile("decode_frame", "ours_file", pfile,
                                                     seconds=2 if ctx.quick else 4)))
        out.append(res)
    ins = ctx.instructions("decode_frame", "instr_cases", {str(s): str(ctx.payload_file(f"/api/trims/v2?limit={s}"))
                                                          for s in sizes})
    for res in out:
        res.instructions = {k.split(" ", 1)[1]: v for k, v in (ins or {}).items() if k.split(" ", 1)[0] == str(res.x)}
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--breakdown"]:
        breakdown(sys.argv[2])
        sys.exit(0)
    sys.exit(harness.main(run))
