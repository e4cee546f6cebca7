"""The Dask recipe of docs/vin.md: a Decoder shipped to a dask.distributed LocalCluster's worker
processes (by path: each opens the tables once) and applied with map_partitions."""
from __future__ import annotations

from pathlib import Path

import pytest

import vehicledata as vd

from test_vin_decoder import BAD, benchmark_vins

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("dask.distributed")
pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.slow  # two worker processes each read the vPIC tables (seconds each)


def test_map_partitions_on_a_local_cluster_equals_decode_many(database: Path) -> None:
    dec = vd.vin.Decoder(database)
    vins = benchmark_vins() + BAD
    frame = pd.DataFrame({"vin": vins})
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        ddf = dd.from_pandas(frame, npartitions=4)
        out = ddf.map_partitions(lambda part, d: d.decode_pandas(part["vin"], threads=1), dec,
                                 meta=dec.decode_pandas([]))
        got = out.compute()
        # each worker process opened the tables once (one C++ decoder per path and process)
        opened = client.run(lambda: len(vd.vin._OPEN))
    assert sorted(opened.values()) == [1, 1]
    expected = dec.decode_pandas(frame["vin"])
    pd.testing.assert_frame_equal(got.sort_index(), expected)
    assert list(got.columns) == list(vd.vin.COLUMNS)
    assert got["error_code"].eq("invalid_vin").sum() == 3  # BAD: 16 characters, position 9, position 10
