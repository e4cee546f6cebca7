"""The Spark recipe of docs/vin.md, run as written: pyspark in local mode (Java from Debian's
``openjdk-17-jre-headless``, which ``make test`` installs), ``DataFrame.mapInArrow`` over a Parquet
file with ``Decoder.decode_many`` in the Python workers, written back to Parquet; the rows equal
``decode_many`` of the same VINs in one call, bad and null VINs included.

One session for the module. Starting the JVM (10-30 s on this shared machine) and the Python worker
opening the vPIC tables (about 9 s) are most of the cost: the small file is one partition, one worker.
The workers are real Python processes started by Spark (``PYSPARK_PYTHON`` is this interpreter):
the Decoder reaches them pickled as its path."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

import vehicledata as vd

from test_vin_decoder import BAD, benchmark_vins

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pyspark_sql = pytest.importorskip("pyspark.sql")


@pytest.fixture(scope="module")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.fail("pyspark is installed but no Java runtime is: `make test` installs openjdk-17-jre-headless")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the recipe's workers: this interpreter
    scratch = tmp_path_factory.mktemp("spark-local")
    session = (pyspark_sql.SparkSession.builder.master("local[2]").appName("vehicledata-vin-recipe")
               .config("spark.ui.enabled", "false").config("spark.local.dir", str(scratch))
               .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


def test_map_in_arrow_recipe_writes_what_decode_many_returns(spark: Any, database: Path, tmp_path: Path) -> None:
    dec = vd.vin.Decoder(database)
    vins = benchmark_vins()[:400] + BAD + [None]
    src = tmp_path / "vins.parquet"
    pq.write_table(pa.table({"vin": pa.array(vins, pa.string())}), src, row_group_size=128)

    # docs/vin.md's recipe, as written there (the DDL, the generator, mapInArrow, write.parquet)
    ddl = ", ".join(f"{name} {'bigint' if name in ('year', 'trim_id') else 'string'}" for name in vd.vin.COLUMNS)

    def decode(batches: Iterator[Any], d: Any = dec) -> Iterator[Any]:
        for batch in batches:
            yield from d.decode_many(batch.column("vin"), threads=1).to_batches()

    out = tmp_path / "decoded"
    decoded = spark.read.parquet(str(src)).select("vin").mapInArrow(decode, ddl)
    decoded.write.parquet(str(out))

    got = pq.read_table(out)
    expected = dec.decode_many(vins, threads=1)
    assert got.column_names == list(vd.vin.COLUMNS)
    assert got.num_rows == len(vins)  # every VIN has its row: bad ones with their error, the null one too

    def rows(table: Any) -> list:
        cols = table.column_names
        out = [tuple(table.column(c)[i].as_py() for c in cols) for i in range(table.num_rows)]
        return sorted(out, key=lambda r: tuple((v is None, "" if v is None else str(v)) for v in r))

    assert rows(got) == rows(expected.cast(got.schema))
    by_vin = {r["vin"]: r for r in got.to_pylist()}
    assert by_vin["1GTG6CEN0L113930"]["error_code"] == "invalid_vin"
    assert by_vin["AAA000000A0000000"]["error_code"] == "not_found"
    assert by_vin["1GTG6CEN7L1139305"]["error_code"] == "1"
    nulls = [r for r in got.to_pylist() if r["vin"] is None]
    assert len(nulls) == 1 and nulls[0]["error_text"] == "VIN is null"
    assert sum(r["year"] is not None for r in got.to_pylist()) > len(vins) // 2  # most benchmark VINs decode
