"""Data feed: ``api.data_feed.load(zip)`` against ``pyarrow.csv`` reading the same ZIP.

The ZIP is the one the emulator serves over the full dataset (downloaded once per run).  Peers:
``pyarrow.csv.read_csv`` on every member (types inferred, Arrow tables only: the floor) and the
same followed by ``to_pandas()``.  Ours reads with ``pyarrow.csv`` into the schema's types, checks
each member's CRC once while reading and converts to the dtypes of the API frames.  Target: within
1.3x of the pyarrow.csv floor.
"""
from __future__ import annotations

import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List

import harness

SCENARIO = "feed_load"
CPU_SHARE = ("ours and the pyarrow.csv peers in turn in this process, unpinned: all read with pyarrow.csv and "
             "its default thread pool (both cores), so the same threads for all")
TITLE = "Data feed ZIP -> DataFrames"
ORDER = 60


def _pyarrow_tables(path: Path) -> Dict[str, Any]:
    from pyarrow import csv

    out = {}
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            if name.endswith(".csv"):
                with zf.open(name) as fh:
                    out[name] = csv.read_csv(fh)
    return out


def run(ctx: harness.Context) -> List[harness.Result]:
    import vehicledata as vd
    from vehicledata.testing import DEMO_ACCOUNTS

    acct = DEMO_ACCOUNTS["premium"]
    tmp = Path(tempfile.mkdtemp(prefix="vd-feed-bench-"))
    with vd.Client(base_url=ctx.url, api_token=acct["api_token"], api_secret=acct["api_secret"],
                   rate_limit=None) as api:
        path = api.data_feed.download(tmp / "feed.zip")
        feed = api.data_feed
        rounds = 2 if ctx.quick else ctx.rounds
        samples = ctx.interleave({
            "vehicledata load()": lambda: feed.load(path),
            "pyarrow.csv (Arrow tables)": lambda: _pyarrow_tables(path),
            "pyarrow.csv + to_pandas()": lambda: {k: t.to_pandas() for k, t in _pyarrow_tables(path).items()},
        }, rounds=rounds)
        rows = sum(len(df) for df in feed.load(path).values())
    size = path.stat().st_size
    path.unlink()
    tmp.rmdir()
    return [harness.Result(
        name="feed-load", title=f"{TITLE} ({size / 2**20:.1f} MB ZIP, {rows:,} rows)", unit="s",
        ours="vehicledata load()", samples=samples,
        targets=[harness.Target("load() within 1.3x of pyarrow.csv on the same ZIP", "ratio_max", 1.3,
                                peer="pyarrow.csv (Arrow tables)")],
        notes=["ours: schema types, one CRC check, dtypes of the API frames (Int64, Arrow strings, UTC)"],
    )]


if __name__ == "__main__":
    sys.exit(harness.main(run))
