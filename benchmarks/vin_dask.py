"""The Dask recipe of docs/vin.md, timed: Decoder.decode_pandas by map_partitions over
dd.read_parquet on a dask.distributed LocalCluster of 2 worker processes (one thread each), with
rounds on one worker (the tasks restricted to it; the two workers take turns) and on both,
alternating.

Steady throughput, not start-up: the cluster is started, the tables opened in every worker
(`client.run`) and one untimed round run on each setting (the first decodes: the workers'
scratch and memo pools, the tables' pages) before the clock starts. The input is the recipe's:
one Parquet file per partition (in /dev/shm, so that the disk is not measured), read by the
tasks themselves, so the scheduler hands them out as workers free up. (Persisted in-memory
partitions, this script's earlier input, were not: the scheduler placed most tasks on one
worker, the other idle.) Each task decodes its partition into the recipe's frame and returns
only its row count, which the round checks (a decoded partition kept in memory would make a
one-worker round hold twice what each of two workers holds).
Prints per setting the best and median throughput, the workers' busy share (task time /
(workers x wall)), their CPU seconds per round and this process's (the scheduler's and the
client's: a LocalCluster runs them here, on the same cores); each worker's own one-worker rate (two
worker processes need not run at the same speed, so "one worker" is each in turn); the 2-vs-1 ratio of each pair of adjacent
rounds (the machine's load drifts; adjacent rounds share it) and their median; and the same
decode run by `client.run` on one worker, then on both at once, without the scheduler (`raw`:
what the two cores give right now; a ratio well under 2 there is the machine, not Dask).
Each of two configurations gets a cluster of its own and the same rounds: Dask's defaults, and
the recipe's (docs/vin.md: vehicledata.vin.DASK_CONFIG, Dask's event-loop tick monitor every second
instead of every 20 ms and its sampling profiler off: diagnostics that cost CPU whether or not
tasks run).
A script, not a `make bench` scenario and not a test (timings).

    python benchmarks/vin_dask.py [--rows 16000000] [--partitions 32] [--rounds 8] [--config both|default|lean]
"""
from __future__ import annotations

import argparse
import os
import tempfile
import statistics
import time
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


def run(rows: int, partitions: int, rounds: int, config: Dict[str, Any]) -> Dict[str, Any]:
    """One LocalCluster of 2 worker processes, started under the Dask `config` (its workers get it
    from their nanny); rounds alternate between one worker (the tasks restricted to it) and both,
    so that each 2-vs-1 ratio compares two adjacent rounds under the same machine load, and the
    cluster, scheduler and client are the same for both."""
    import dask
    import dask.dataframe as dd
    import pandas as pd
    import psutil  # a dependency of distributed
    import pyarrow as pa
    import pyarrow.parquet as pq
    from dask.distributed import Client, LocalCluster, get_task_stream

    import vehicledata as vd

    dec = vd.vin.Decoder()
    base = load_vins()
    vins = (base * (rows // len(base) + 1))[:rows]
    per = -(-rows // partitions)
    with dask.config.set(config), \
            tempfile.TemporaryDirectory(prefix="vin-dask-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None) as tmp, \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        for i in range(partitions):  # the recipe's input: one Parquet file per partition
            pq.write_table(pa.table({"vin": pa.array(vins[i * per:(i + 1) * per], pa.string())}),
                           os.path.join(tmp, f"part-{i:03d}.parquet"))
        client.wait_for_workers(2)
        client.run(lambda: vd.vin.Decoder(dec.path) and None)  # each worker process opens the tables
        source = dd.read_parquet(tmp, columns=["vin"])
        addresses = sorted(client.scheduler_info()["workers"])
        pids = client.run(os.getpid)
        procs = {addr: psutil.Process(pid) for addr, pid in pids.items()}

        def decode_round() -> Any:
            # the recipe's decode; each task keeps only its row count (a decoded partition held in
            # memory would make a one-worker round hold twice what each of two workers holds)
            return source.map_partitions(lambda part, d: pd.DataFrame({"rows": [len(d.decode_pandas(part["vin"], threads=1))]}),
                                         dec, meta=pd.DataFrame({"rows": pd.Series([], dtype="int64")}))

        def timed(workers: List[str]) -> Any:
            graph = decode_round()
            cpu0 = {a: sum(p.cpu_times()[:2]) for a, p in procs.items()}
            here0 = sum(os.times()[:2])  # this process: the client and the scheduler
            with get_task_stream(client) as stream:
                start = time.perf_counter()
                counted = client.compute(graph, workers=workers, allow_other_workers=False).result()
                wall = time.perf_counter() - start
            assert int(counted["rows"].sum()) == rows, "not every VIN was decoded"
            task_seconds = sum(s["stop"] - s["start"] for t in stream.data for s in t["startstops"]
                               if s["action"] == "compute")
            ran_on = len({t["worker"] for t in stream.data})
            cpu = sum(sum(p.cpu_times()[:2]) - cpu0[a] for a, p in procs.items())
            here = sum(os.times()[:2]) - here0
            return wall, task_seconds / (len(workers) * wall), ran_on, cpu, here

        for workers in ([addresses[0]], addresses):  # untimed: the first decodes on each worker
            timed(workers)
        one: List[float] = []
        two: List[float] = []
        alone: Dict[str, List[float]] = {a: [] for a in addresses}
        busy: Dict[int, List[float]] = {1: [], 2: []}
        cpus: Dict[int, List[float]] = {1: [], 2: []}
        heres: Dict[int, List[float]] = {1: [], 2: []}
        used: Dict[int, set] = {1: set(), 2: set()}
        for i in range(rounds):
            order = (1, 2) if i % 4 < 2 else (2, 1)  # neither setting always goes first
            single = addresses[i % 2]  # nor does one worker stand for "one worker" every time
            for n in order:
                wall, share, ran_on, cpu, here = timed([single] if n == 1 else addresses)
                heres[n].append(here)
                cpus[n].append(cpu)
                (one if n == 1 else two).append(wall)
                if n == 1:
                    alone[single].append(rows / wall)
                print(f"  {n} worker(s){' (' + single + ')' if n == 1 else ''}: {wall:.2f} s, "
                      f"workers' CPU {cpu:.2f} s, scheduler and client {here:.2f} s", flush=True)
                busy[n].append(share)
                used[n].add(ran_on)
        raw_alone = [sum(client.run(raw_decode, dec.path, rows // partitions, 3, workers=[a]).values())
                     for a in addresses]
        raw_both = client.run(raw_decode, dec.path, rows // partitions, 3)
    ratios = [a / b for a, b in zip(one, two)]
    return {"one": [rows / t for t in one], "two": [rows / t for t in two], "ratios": ratios,
            "cpu1": statistics.median(cpus[1]), "cpu2": statistics.median(cpus[2]),
            "here1": statistics.median(heres[1]), "here2": statistics.median(heres[2]), "busy1": statistics.median(busy[1]),
            "busy2": statistics.median(busy[2]), "ran_on": (sorted(used[1]), sorted(used[2])),
            "alone": {a: statistics.median(r) for a, r in alone.items() if r},
            "raw1": statistics.mean(raw_alone), "raw_alone": raw_alone, "raw2": sum(raw_both.values())}


def report(name: str, args: argparse.Namespace, r: Dict[str, Any]) -> float:
    print(f"[{name}] {args.rows:,} VINs in {args.partitions} Parquet files (dd.read_parquet, the recipe's input); "
          f"{args.rounds} pairs of rounds, one worker and both, alternating")
    for n, key in ((1, "one"), (2, "two")):
        rates = r[key]
        print(f"[{name}] {n} worker(s): best {max(rates):,.0f} VINs/s, median {statistics.median(rates):,.0f}; workers busy "
              f"{100 * r['busy%d' % n]:.0f} %; tasks ran on {r['ran_on'][n - 1]} worker(s); worker CPU per round "
              f"{r['cpu%d' % n]:.2f} s, the scheduler's and client's {r['here%d' % n]:.2f} s (medians)")
    print(f"[{name}] one worker alone, median per worker: " + ", ".join(f"{a}: {v:,.0f} VINs/s" for a, v in r["alone"].items())
          + "; raw decode alone: " + ", ".join(f"{v:,.0f}" for v in r["raw_alone"]) + " VINs/s")
    ratios = r["ratios"]
    print(f"[{name}] 2 workers / 1 worker, per pair of adjacent rounds: " + ", ".join(f"{x:.2f}" for x in ratios))
    median = statistics.median(ratios)
    print(f"[{name}] 2 workers / 1 worker: {median:.2f}x median of the pairs "
          f"({min(ratios):.2f}-{max(ratios):.2f}), {max(r['two']) / max(r['one']):.2f}x best; raw decode without the "
          f"scheduler (client.run on each worker alone, their mean, then on both at once) {r['raw2'] / r['raw1']:.2f}x; "
          f"load average {os.getloadavg()}", flush=True)
    return median


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=16_000_000)
    ap.add_argument("--partitions", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--config", choices=("both", "default", "lean"), default="both",
                    help="Dask's default configuration, the recipe's (vehicledata.vin.DASK_CONFIG), or one cluster of each in turn")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    import vehicledata as vd

    configs = {"default": {}, "lean": dict(vd.vin.DASK_CONFIG)}
    medians = {name: report(name, args, run(args.rows, args.partitions, args.rounds, cfg))
               for name, cfg in configs.items() if args.config in ("both", name)}
    print("2 workers / 1 worker, median of the pairs: " + "; ".join(f"{n} {m:.2f}x" for n, m in medians.items()))


if __name__ == "__main__":
    main()
