"""The Spark recipe of docs/vin.md, timed: Decoder.decode_many by DataFrame.mapInArrow in pyspark's
local mode (Java 17 from Debian: openjdk-17-jre-headless), `--rows` VINs of
benchmarks/data/vins.tsv in turn, on local[1] then local[2].  Prints the session start-up, the
first action (Python workers open the tables) and the best of `--rounds` later actions.
A script, not a test (timings).

    python benchmarks/vin_spark.py [--rows 500000] [--rounds 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator, List

VINS = Path(__file__).resolve().parent / "data" / "vins.tsv"


def load_vins() -> List[str]:
    return [line.split("\t")[0] for line in VINS.read_text().splitlines()
            if line.strip() and not line.startswith("#") and not line.startswith("vin\t")]


def run(cores: int, rows: int, rounds: int) -> None:
    import pyarrow as pa
    from pyspark.sql import SparkSession

    import vehicledata as vd

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers: this interpreter (vehicledata installed)
    dec = vd.vin.Decoder()
    schema = vd.vin.Decoder.decode_many(dec, ["1GTG6CEN0L1139305"]).schema  # the output's Arrow schema

    def decode(batches: Iterator[Any], d: Any = dec) -> Iterator[Any]:
        for batch in batches:
            yield from d.decode_many(batch.column("vin"), threads=1).to_batches()

    start = time.perf_counter()
    spark = (SparkSession.builder.master(f"local[{cores}]").appName("vin")
             .config("spark.sql.execution.arrow.maxRecordsPerBatch", "65536")
             .config("spark.ui.enabled", "false").getOrCreate())
    print(f"local[{cores}]: session in {time.perf_counter() - start:.1f} s", flush=True)
    base = load_vins()
    vins = pa.table({"vin": pa.array((base * (rows // len(base) + 1))[:rows])})
    df = spark.createDataFrame(vins.to_pandas()).repartition(cores * 4).cache()
    df.count()
    ddl = ", ".join(f"{f.name} {'bigint' if pa.types.is_integer(f.type) else 'string'}" for f in schema)
    out = df.mapInArrow(decode, ddl)
    times = []
    for _ in range(rounds + 1):
        t = time.perf_counter()
        n = out.selectExpr("count(*)", "count(year)", "count(trim_id)").collect()[0]
        times.append(time.perf_counter() - t)
    assert n[0] == rows
    print(f"local[{cores}]: first action {times[0]:.1f} s (workers open the tables), then best "
          f"{min(times[1:]):.2f} s = {rows / min(times[1:]):,.0f} VINs/s; decoded {n[1]:,} years, {n[2]:,} trim ids; "
          f"load average {os.getloadavg()}", flush=True)
    spark.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cores", type=int, nargs="*", default=[1, 2])
    args = ap.parse_args()
    for cores in args.cores:
        run(cores, args.rows, args.rounds)


if __name__ == "__main__":
    main()
