"""The Dask recipe of docs/vin.md, timed: Decoder.decode_pandas by map_partitions on a
dask.distributed LocalCluster of 1, then 2 worker processes (one thread each), same VINs.

Steady throughput, not start-up: the cluster is started, the tables opened in every worker
(`client.run`), the VINs persisted on the workers and spread evenly over them
(`client.replicate`: every worker holds every partition; without it one worker may hold 14 of
16, and map_partitions runs a partition where it lies), and one untimed round run (first decodes: the workers' scratch and memo
pools, the tables' pages) before the clock starts; each timed round persists the decoded
partitions on the workers (nothing comes back to the client) and waits.  Prints per setting the
best and median of `--rounds`, where the partitions lay, and the workers' busy share (task time /
(workers x wall)); then the 2-vs-1 ratio, beside the same decode run by `client.run` on every
worker at once without the scheduler (`raw`: what the two cores give right now; a ratio well
under 2 there is the machine, not Dask), and the load average.
A script, not a `make bench` scenario and not a test (timings).

    python benchmarks/vin_dask.py [--rows 2000000] [--partitions 16] [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List

VINS = Path(__file__).resolve().parent / "data" / "vins.tsv"


def load_vins() -> List[str]:
    return [line.split("\t")[0] for line in VINS.read_text().splitlines()
            if line.strip() and not line.startswith("#") and not line.startswith("vin\t")]


def raw_decode(path: str, rows: int, reps: int) -> float:
    """On a worker: VINs/s of decode_pandas over `rows` VINs, best of `reps` (after one untimed call)."""
    import pandas as pd

    import vehicledata as vd

    base = load_vins()
    vins = pd.Series(pd.array((base * (rows // len(base) + 1))[:rows], dtype="string[pyarrow]"))
    dec = vd.vin.Decoder(path)
    dec.decode_pandas(vins, threads=1)
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        dec.decode_pandas(vins, threads=1)
        best = min(best, time.perf_counter() - t)
    return rows / best


def placement(client: Any, collection: Any) -> List[int]:
    """Partitions per worker, most first."""
    counts = Counter(w for ws in client.who_has(collection).values() for w in ws)
    return sorted(counts.values(), reverse=True)


def run(workers: int, rows: int, partitions: int, rounds: int) -> Dict[str, Any]:
    import dask.dataframe as dd
    import pandas as pd
    from dask.distributed import Client, LocalCluster, get_task_stream, wait

    import vehicledata as vd

    dec = vd.vin.Decoder()
    base = load_vins()
    vins = (base * (rows // len(base) + 1))[:rows]
    frame = pd.DataFrame({"vin": pd.array(vins, dtype="string[pyarrow]")})
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.run(lambda: vd.vin.Decoder(dec.path) and None)  # each worker process opens the tables
        source = dd.from_pandas(frame, npartitions=partitions).persist()
        wait(source)
        before = placement(client, source)
        client.replicate(source)  # every worker holds every partition: any worker can take any task
        after = placement(client, source)

        def decode_round() -> Any:
            return source.map_partitions(lambda part, d: d.decode_pandas(part["vin"], threads=1), dec,
                                         meta=dec.decode_pandas([]))

        out = decode_round().persist()  # untimed: the first decodes on each worker
        wait(out)
        del out
        times, busy = [], []
        for _ in range(rounds):
            graph = decode_round()
            with get_task_stream(client) as stream:
                start = time.perf_counter()
                out = graph.persist()
                wait(out)
                wall = time.perf_counter() - start
            times.append(wall)
            task_seconds = sum(s["stop"] - s["start"] for t in stream.data for s in t["startstops"]
                               if s["action"] == "compute")
            busy.append(task_seconds / (workers * wall))
            del out
        raw = client.run(raw_decode, dec.path, rows // partitions, 3)
    return {"best": rows / min(times), "median": rows / statistics.median(times), "placed": before,
            "rebalanced": after, "busy": statistics.median(busy), "raw": sum(raw.values())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    got = {}
    for workers in (1, 2):
        r = got[workers] = run(workers, args.rows, args.partitions, args.rounds)
        print(f"{workers} worker(s): best {r['best']:,.0f} VINs/s, median {r['median']:,.0f} ({args.rows:,} VINs, "
              f"{args.partitions} partitions, {args.rounds} rounds); partitions per worker {r['placed']} -> "
              f"replicated {r['rebalanced']}; workers busy {100 * r['busy']:.0f} %; raw decode on every worker at "
              f"once {r['raw']:,.0f} VINs/s; load average {os.getloadavg()}", flush=True)
    print(f"2 workers / 1 worker: {got[2]['best'] / got[1]['best']:.2f}x best, "
          f"{got[2]['median'] / got[1]['median']:.2f}x median; raw (client.run, no scheduler) "
          f"{got[2]['raw'] / got[1]['raw']:.2f}x")


if __name__ == "__main__":
    main()
