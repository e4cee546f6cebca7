"""The Dask recipe of docs/vin.md: a Decoder handed to a dask.distributed LocalCluster's workers and
applied with map_partitions; the result equals ``Decoder.decode_pandas`` of the same VINs in one call.

The first test's cluster has threads of this process as workers (``processes=False``): two worker
processes would each read the vPIC tables (20+ s on this shared machine).  The second runs the
recipe as docs/vin.md writes it, a script with two worker processes started by their nannies (the
``__main__`` guard's case).  That a Decoder pickles as its path and opens the tables once per
process is test_vin_decoder.py's ``test_decoder_pickles_by_path_and_opens_once_per_process``."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import vehicledata as vd

from test_vin_decoder import BAD, benchmark_vins

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")
pd = pytest.importorskip("pandas")


def test_map_partitions_on_a_local_cluster_equals_decode_pandas(database: Path) -> None:
    dec = vd.vin.Decoder(database)
    vins = benchmark_vins() + BAD + [None]
    frame = pd.DataFrame({"vin": vins}, index=pd.RangeIndex(1000, 1000 + len(vins)))
    with dask.config.set(vd.vin.DASK_CONFIG), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        # the recipe's configuration reached the cluster
        assert dask.config.get("distributed.admin.tick.interval") == "1s"
        assert client.run(lambda: dask.config.get("distributed.worker.profile.enabled")) == \
            dict.fromkeys(client.scheduler_info()["workers"], False)
        ddf = dd.from_pandas(frame, npartitions=4)
        assert ddf.npartitions == 4
        out = ddf.map_partitions(lambda part, d: d.decode_pandas(part["vin"], threads=1), dec,
                                 meta=dec.decode_pandas([]))
        with distributed.get_task_stream(client) as stream:
            got = out.compute()
        # the partitions were decoded on the cluster's workers
        assert {task["worker"] for task in stream.data} <= set(client.scheduler_info()["workers"])
        assert len(stream.data) >= 4
        # one C++ decoder for the path, however many Decoders the workers received
        assert vd.vin._OPEN[dec.path] is dec._core
    expected = dec.decode_pandas(frame["vin"])
    assert len(got) == len(vins)
    pd.testing.assert_frame_equal(got.sort_index(), expected)
    assert list(got.columns) == list(vd.vin.COLUMNS)
    bad = got["error_code"].iloc[-len(BAD) - 1:-1].tolist()  # BAD's rows: 400, 200, 400, 400, 404, 200
    assert bad == ["invalid_vin", "0", "invalid_vin", "invalid_vin", "not_found", "1"]
    assert got["error_text"].iloc[-1] == "VIN is null"
    assert got["year"].notna().sum() > len(vins) // 2  # most benchmark VINs decode


ROOT = Path(__file__).resolve().parents[2]


def recipe() -> str:
    """The ```python block of docs/vin.md's "Past one process: Dask" section, as written there."""
    text = (ROOT / "docs" / "vin.md").read_text()
    section = text.split("## Past one process: Dask", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "docs/vin.md's Dask section should hold one python block"
    return blocks[0]


def test_the_recipe_runs_as_a_script(database: Path, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    code = recipe()
    assert 'if __name__ == "__main__":' in code  # the worker processes import the script
    dec = vd.vin.Decoder(database)
    vins = benchmark_vins()[:2000] + BAD + [None]
    pq.write_table(pa.table({"vin": pa.array(vins, pa.string())}), tmp_path / "vins.parquet", row_group_size=500)
    (tmp_path / "recipe.py").write_text(code)
    # Decoder() of the recipe: the database of this test run, by VEHICLEDATA_HOME as a user's would be
    env = dict(os.environ, VEHICLEDATA_HOME=str(database.parent))
    run = subprocess.run([sys.executable, "recipe.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=900)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "Nanny failed to start" not in run.stderr
    got = pq.read_table(tmp_path / "decoded")
    expected = dec.decode_pandas(vins)
    assert got.num_rows == len(vins)
    frame = got.to_pandas().sort_index()
    assert list(frame.columns)[: len(vd.vin.COLUMNS)] == list(vd.vin.COLUMNS)
    frame = frame[list(vd.vin.COLUMNS)].reset_index(drop=True)
    pd.testing.assert_frame_equal(frame, expected.reset_index(drop=True), check_dtype=False)
    assert frame["error_text"].iloc[-1] == "VIN is null"
    assert frame["year"].notna().sum() > len(vins) // 2  # most benchmark VINs decode
