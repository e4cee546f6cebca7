"""The Dask recipe of docs/vin.md, timed: Decoder.decode_pandas by map_partitions on a
dask.distributed LocalCluster of 1, then 2 worker processes (one thread each), same VINs.

The VINs (benchmarks/data/vins.tsv in turn, `--rows` of them, `--partitions` partitions) are
persisted on the workers and the tables opened there (a warm-up partition) before the clock
starts; each timed round persists the decoded partitions on the workers (nothing comes back to
the client) and waits.  Best of `--rounds`.  Prints VINs/s per setting, the 2-vs-1 ratio and the
load average.  A script, not a `make bench` scenario and not a test (timings).

    python benchmarks/vin_dask.py [--rows 2000000] [--partitions 16] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import List

VINS = Path(__file__).resolve().parent / "data" / "vins.tsv"


def load_vins() -> List[str]:
    return [line.split("\t")[0] for line in VINS.read_text().splitlines()
            if line.strip() and not line.startswith("#") and not line.startswith("vin\t")]


def run(workers: int, rows: int, partitions: int, rounds: int) -> float:
    import dask.dataframe as dd
    import pandas as pd
    from dask.distributed import Client, LocalCluster, wait

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
        best = float("inf")
        for _ in range(rounds):
            out = source.map_partitions(lambda part, d: d.decode_pandas(part["vin"], threads=1), dec,
                                        meta=dec.decode_pandas([])).persist()
            start = time.perf_counter()
            wait(out)
            best = min(best, time.perf_counter() - start)
            del out
    return rows / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    rates = {}
    for workers in (1, 2):
        rates[workers] = run(workers, args.rows, args.partitions, args.rounds)
        print(f"{workers} worker(s): {rates[workers]:,.0f} VINs/s ({args.rows:,} VINs, {args.partitions} partitions, "
              f"best of {args.rounds}); load average {os.getloadavg()}", flush=True)
    print(f"2 workers / 1 worker: {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
