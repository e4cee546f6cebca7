"""VINs in bulk, offline: vehicledata.vin.Decoder.decode_many / decode_parquet against `ultravin`
3.0.2 (PyPI: Rust, the full vPIC embedded; pinned in pyproject's bench extra) on the same VINs.

Per core: ours with threads=1, ultravin with RAYON_NUM_THREADS=1, each in a fresh interpreter
(its peak RSS recorded); then a large Parquet file (10 M VINs; `--quick`: 200 k; VIN_BATCH_ROWS
overrides) generated here from benchmarks/data/vins.tsv, repeated with the serial digits
(positions 13-17) changed, decoded Parquet -> Parquet on every core: wall time and peak RSS.
Agreement with ultravin on year, make and model over the benchmark VINs, every disagreement listed.
Targets (issue 23): >= 400k VINs/s per core, >= 10x ultravin.decode_batch, >= 3x
ultravin.decode_stream(...).to_parquet, 10 M VINs in < 60 s with RSS < 1 GiB.

    python benchmarks/vin_batch.py [--rounds 3] [--quick]
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

import harness

SCENARIO = "vin_batch"
CPU_SHARE = ("per core: ours with threads=1 and ultravin with RAYON_NUM_THREADS=1, each in its own fresh "
             "process in turn, unpinned; the 10 M VIN Parquet run is ours alone on every core")
TITLE = "VINs in bulk, offline: decode_many and Parquet vs ultravin"
ORDER = 71

VINS = Path(__file__).resolve().parent / "data" / "vins.tsv"
OURS_MANY, OURS_PARQUET = "vehicledata decode_many", "vehicledata decode_parquet"
OURS_DISTINCT = "vehicledata decode_many, distinct VINs"
DISTINCT_RUNS = 5  # fresh processes: the decoder keeps its answer-key memos between calls (docs/vin.md)
DISTINCT_ROWS, DISTINCT_SEED = 50_000, 23
YEAR_CODES = "ABCDEFGHJKLMNPRSTVWXY123456789"  # position 10, 1980 (A) to 2009 (9), then again from 2010
UV_BATCH, UV_STREAM = "ultravin 3.0.2 decode_batch", "ultravin 3.0.2 decode_stream.to_parquet"


def load_vins() -> List[str]:
    return [line.split("\t")[0] for line in VINS.read_text().splitlines()
            if line.strip() and not line.startswith("#") and not line.startswith("vin\t")]


def write_vins(path: str, n: int, mutate: bool) -> Dict[str, Any]:
    """`n` VINs (vins.tsv in turn; `mutate`: positions 13-17 replaced by a running number) -> Parquet."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = np.array(load_vins(), dtype="S17")
    writer = None
    step = 1_000_000
    for start in range(0, n, step):
        idx = np.arange(start, min(n, start + step))
        chunk = base[idx % len(base)].copy()
        if mutate:
            raw = chunk.view(np.uint8).reshape(-1, 17)
            serial = (idx // len(base)) % 100_000
            for k in range(5):  # positions 17, 16, ... 13
                raw[:, 16 - k] = ord("0") + (serial // 10 ** k) % 10
        table = pa.table({"vin": pa.array(chunk.astype(str), type=pa.string())})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=256 * 1024)
    if writer is not None:
        writer.close()
    return {"rows": n}


def distinct_vins(db: str, n: int, seed: int = DISTINCT_SEED) -> List[str]:
    """`n` VINs of distinct answer keys (docs/vin.md: positions 1-8, 10 and 11 differ, so no row memo
    serves one from another): vins.tsv once, then VINs made from its VINs (seeded, so the same list
    every run): the model year moved by up to two, the plant one the WMI has in vins.tsv, one of
    positions 4-8 (half of them) another VIN's of that WMI and year, the serial digits random, the
    check digit computed. Of the made ones, those that decode a model are kept, and those that do not
    in vins.tsv's share, so both parts have the same mix of decodes and 404s."""
    import random
    from collections import defaultdict

    import pyarrow as pa
    import vehicledata as vd

    base = list(dict.fromkeys(load_vins()))
    rng = random.Random(seed)
    peers: Dict[Any, List[str]] = defaultdict(list)
    plants: Dict[str, List[str]] = defaultdict(list)
    for v in base:
        peers[v[:3], v[9]].append(v)
        plants[v[:3]].append(v[10])
    dec = vd.vin.Decoder(db)
    decoded = [m is not None for m in dec.decode_many(pa.array(base)).column("model").to_pylist()]
    misses = 1 - sum(decoded) / len(base)
    out, seen = list(base), {v[:8] + v[9:11] for v in base}
    while len(out) < n:
        made: List[str] = []
        for _ in range(10_000):
            t = rng.choice(base)
            c = list(t)
            y = YEAR_CODES.find(c[9])
            if y >= 0:
                c[9] = YEAR_CODES[min(len(YEAR_CODES) - 1, max(0, y + rng.randint(-2, 2)))]
            c[10] = rng.choice(plants[t[:3]])
            if rng.random() < 0.5:
                i = rng.randrange(3, 8)
                c[i] = rng.choice(peers[t[:3], t[9]])[i]
            c[12:17] = [str(rng.randrange(10)) if ch.isdigit() else ch for ch in c[12:17]]
            key = "".join(c[:8] + c[9:11])
            if key in seen:
                continue
            seen.add(key)
            c[8] = vd.vin.check_digit("".join(c))
            made.append("".join(c))
        models = dec.decode_many(pa.array(made)).column("model").to_pylist()
        out += [v for v, m in zip(made, models) if m is not None or rng.random() < misses / (1 - misses)]
    return out[:n]


def write_distinct(path: str, db: str, n: int) -> Dict[str, Any]:
    """distinct_vins(db, n) -> Parquet (a process of its own: the decoding here warms nothing the
    measured process uses)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"vin": pa.array(distinct_vins(db, n), type=pa.string())}), path)
    return {"rows": n}


def measure(kind: str, db: str, src: str, n: int, threads: int, reps: int) -> Dict[str, Any]:
    """Seconds of each of `reps` runs of one contender, in this (fresh) interpreter."""
    os.environ["RAYON_NUM_THREADS"] = str(threads)  # before ultravin's pool starts
    import pyarrow.parquet as pq

    # The Parquet contenders read the file themselves: loading the column here would count its
    # memory in their peak RSS.
    vins = None if kind in ("ours_parquet", "uv_stream") else pq.read_table(src).column("vin").combine_chunks()
    assert vins is None or len(vins) == n
    seconds, cpu = [], []
    if kind.startswith("ours"):
        import vehicledata as vd

        dec = vd.vin.Decoder(db)
    else:
        import ultravin
    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, "out.parquet")
        for _ in range(reps):
            c, t = time.process_time(), time.perf_counter()
            if kind == "ours_many":
                dec.decode_many(vins, threads=threads)
            elif kind == "ours_distinct":  # distinct VINs, the process's first call: no memo holds any of them
                dec.decode_many(vins, threads=threads)
            elif kind == "ours_parquet":
                dec.decode_parquet(src, dst, threads=threads, progress=False)
            elif kind == "uv_batch":
                ultravin.decode_batch(vins.to_pylist())
            else:
                ultravin.decode_stream(src, vin_column="vin").to_parquet(dst)
            seconds.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
    return {"seconds": seconds, "cpu": cpu, "load": os.getloadavg()[0]}


def agreement(db: str) -> Dict[str, Any]:
    """Year, make, model (case-insensitive) of ours vs ultravin over vins.tsv; the disagreements."""
    import ultravin
    import vehicledata as vd

    vins = load_vins()
    ours = vd.vin.Decoder(db).decode_many(vins).to_pylist()
    theirs = ultravin.decode_batch(vins)
    same, no_model, diffs = 0, 0, []
    for vin, o, u in zip(vins, ours, theirs):
        a = u.get("attributes") or {}
        ov = (o["year"], (o["make"] or "").upper(), (o["model"] or "").upper())
        uv = (u.get("model_year"), (a.get("Make") or "").upper(), (a.get("Model") or "").upper())
        if ov == uv:
            same += 1
        elif o["error_code"] == "not_found" and not uv[2] and "no model decodes" in o["error_text"]:
            no_model += 1  # neither decodes a model (ours: the API's 404 for that)
        else:
            diffs.append({"vin": vin, "ours": list(ov) if o["error_code"] not in ("not_found", "invalid_vin")
                          else o["error_text"], "ultravin": list(uv)})
    return {"vins": len(vins), "same": same, "no_model": no_model, "diffs": diffs}


def trim_fit(db: str) -> Dict[str, Any]:
    """Issue 23 item 4: over the benchmark VINs whose decode names a trim (vPIC's Trim) and has a
    catalogue trim, the share whose best catalogue trim (trim_id) is that trim (its `trim` equal,
    case-insensitive, or naming it as a word)."""
    import re
    import sqlite3

    import vehicledata as vd

    rows = vd.vin.Decoder(db).decode_many(load_vins()).to_pylist()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    named = right = 0
    wrong: List[str] = []
    for r in rows:
        if not r["trim"] or r["trim_id"] is None:
            continue
        named += 1
        got = (con.execute("SELECT trim FROM trims WHERE id = ?", (r["trim_id"],)).fetchone() or [""])[0] or ""
        a, b = r["trim"].lower(), got.lower()
        if a == b or re.search(rf"\b{re.escape(b)}\b", a) or re.search(rf"\b{re.escape(a)}\b", b):
            right += 1
        else:
            wrong.append(f"{r['vin']} vPIC {r['trim']!r} -> {got!r}")
    con.close()
    return {"named": named, "right": right, "wrong": wrong}


def run(ctx: harness.Context) -> List[harness.Result]:
    db = ctx.database()
    n = len(load_vins()) * (4 if ctx.quick else 20)
    big = int(os.environ.get("VIN_BATCH_ROWS") or (200_000 if ctx.quick else 10_000_000))
    reps = 1 if ctx.quick else max(1, min(ctx.rounds, 3))
    cores = os.cpu_count() or 1
    samples: Dict[str, List[float]] = {OURS_MANY: [], OURS_DISTINCT: [], UV_BATCH: [], OURS_PARQUET: [],
                                       UV_STREAM: []}
    extra: Dict[str, Dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "vins.parquet")
        write_vins(src, n, mutate=False)
        # Real fleet files rarely repeat a vehicle 20 times: VINs of distinct answer keys, so the
        # answer-key memo (docs/vin.md) serves none of them from another. 50,000 of them (about
        # 0.2-0.3 s): the first pass over the tables from cold caches is a small part of it.
        distinct = os.path.join(tmp, "distinct.parquet")
        m = DISTINCT_ROWS
        ctx.subprocess("vin_batch", "write_distinct", distinct, db, m)
        cpu_ms, loads = [], []
        try:
            for _ in range(DISTINCT_RUNS):
                got = ctx.subprocess("vin_batch", "measure", "ours_distinct", db, distinct, m, 1, 1)
                samples[OURS_DISTINCT] += [m / s for s in got["seconds"]]
                cpu_ms += [1e3 * c for c in got["cpu"]]
                loads.append(got["load"])
            extra[OURS_DISTINCT] = {"VINs/s of CPU time (median)": round(m / (sorted(cpu_ms)[len(cpu_ms) // 2] / 1e3)),
                                    "CPU ms per run": ", ".join(f"{c:.0f}" for c in cpu_ms),
                                    "load average": ", ".join(f"{x:.1f}" for x in loads)}
        except Exception as e:
            print(f"vin_batch: {OURS_DISTINCT} not measured: {e}", file=sys.stderr)
        for name, kind in ((OURS_MANY, "ours_many"), (UV_BATCH, "uv_batch"), (OURS_PARQUET, "ours_parquet"),
                           (UV_STREAM, "uv_stream")):
            try:
                got = ctx.subprocess("vin_batch", "measure", kind, db, src, n, 1, reps)
            except Exception as e:  # ultravin missing: ours alone
                print(f"vin_batch: {name} not measured: {e}", file=sys.stderr)
                continue
            samples[name] = [n / s for s in got["seconds"]]
            extra[name] = {"peak RSS MiB": round(got["peak_rss"] / 2**20, 1)}
        bigfile = os.path.join(tmp, "big.parquet")
        ctx.subprocess("vin_batch", "write_vins", bigfile, big, True)
        got = ctx.subprocess("vin_batch", "measure", "ours_parquet", db, bigfile, big, cores, 1)
        wall, rss = got["seconds"][0], got["peak_rss"]
    agree = ctx.subprocess("vin_batch", "agreement", db)
    fit = ctx.subprocess("vin_batch", "trim_fit", db)
    samples = {k: v for k, v in samples.items() if v}
    notes = [f"{n} VINs (benchmarks/data/vins.tsv x {n // len(load_vins())}: the answer-key memo reuses most "
             f"rows), one core each (threads=1, "
             f"RAYON_NUM_THREADS=1), {reps} run(s) in a fresh interpreter; decode_many starts from a pyarrow array, "
             "decode_batch from a list of str; the Parquet contenders read and write files",
             f"agreement with ultravin on year + make + model (case-insensitive): {agree['same']} / {agree['vins']}; "
             f"{agree['no_model']} more where neither decodes a model (ours: the API's 404); "
             f"{len(agree['diffs'])} disagreements, listed below",
             f"best trim = vPIC's trim, over the VINs whose decode names one and has catalogue trims: "
             f"{fit['right']} / {fit['named']} ({100 * fit['right'] / max(1, fit['named']):.1f} %)",
             f"{OURS_DISTINCT}: {DISTINCT_ROWS:,} VINs of distinct answer keys (vins.tsv once and VINs made from "
             f"its VINs, seed {DISTINCT_SEED}: distinct_vins), the first decode_many of each of {DISTINCT_RUNS} fresh "
             "processes (the decoder's memos start empty): the case of a fleet file whose vehicles rarely repeat; "
             "beside the wall rate, the process CPU time of the call and the load average (extra)",
             "peak RSS (MiB): " + ", ".join(f"{k} {v['peak RSS MiB']}" for k, v in extra.items()
                                            if "peak RSS MiB" in v)]
    notes += [f"disagrees: {d['vin']} ours {d['ours']} ultravin {d['ultravin']}" for d in agree["diffs"]]
    targets = [harness.Target(">= 400k VINs/s per core", "min", 400_000.0)]
    if OURS_DISTINCT in samples:
        targets.append(harness.Target(">= 400k VINs/s per core on distinct VINs", "min", 400_000.0,
                                      contender=OURS_DISTINCT))
    if UV_BATCH in samples:
        targets.append(harness.Target(">= 10x ultravin.decode_batch per core", "ratio_min", 10.0, peer=UV_BATCH))
    if UV_STREAM in samples and OURS_PARQUET in samples:
        targets.append(harness.Target(">= 3x ultravin decode_stream.to_parquet per core", "ratio_min", 3.0,
                                      peer=UV_STREAM, contender=OURS_PARQUET))
    return [
        harness.Result(name="vin-batch-per-core", title=f"VINs per second on one core ({n} VINs)", unit="VINs/s",
                       ours=OURS_MANY, samples=samples, extra=extra, notes=notes, targets=targets,
                       higher_is_better=True),
        harness.Result(name="vin-batch-big", title=f"{big:,} VINs Parquet -> Parquet on {cores} cores", unit="s",
                       ours=OURS_PARQUET, samples={OURS_PARQUET: [wall]},
                       extra={OURS_PARQUET: {"peak RSS MiB": round(rss / 2**20, 1), "VINs/s": round(big / wall)}},
                       targets=[harness.Target("10 M VINs < 60 s (scaled to the rows run)", "max", 60.0 * big / 1e7)],
                       notes=[f"peak RSS {rss / 2**20:.0f} MiB; {big / wall:,.0f} VINs/s",
                              "generated: vins.tsv in turn, positions 13-17 a running number (check digits then "
                              "mostly fail: vPIC's error code 1, still decoded)"]),
    ]


if __name__ == "__main__":
    sys.exit(harness.main(run))
