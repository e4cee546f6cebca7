"""One frame per vehicle: ``api.vehicles.search(year=2020).to_pandas()`` against the trims crawl alone
and against four crawls merged by hand (pandas, and polars).

Contenders, each a fresh premium client of the run's emulator (rate limit off), interleaved:
  * ``vehicledata vehicles``: the four crawls concurrently (the parts decoded into the joined
    columns only), joined in C++: Arrow finds the rows, the core gathers the columns (ours);
  * ``trims crawl alone``: ``api.trims.search(year=2020).to_pandas()``, the floor;
  * ``4 crawls + pandas merge``: the four searches one after the other, ``DataFrame.merge`` on the trim id;
  * ``4 crawls + polars join``: the same with ``to_polars()`` and ``DataFrame.join``.
Target: ours <= 1.5x the trims crawl alone.

    python benchmarks/vehicles.py [--rounds 3] [--quick]
"""
from __future__ import annotations

import sys
from typing import Any, List

import harness

SCENARIO = "vehicles"
CPU_SHARE = ("ours and the peers in turn in this process, unpinned (both cores), against the same unpinned "
             "emulator; ours runs its four crawls concurrently (libcurl multi), the peers one after the other")
TITLE = "One frame per vehicle (api.vehicles, year 2020)"
ORDER = 35

YEAR = 2020
_SHARED = ["make_id", "model_id", "submodel_id", "year", "make", "model", "series", "submodel", "trim",
           "trim_description"]


def _client(ctx: harness.Context) -> Any:
    import vehicledata as vd
    from vehicledata.testing import DEMO_ACCOUNTS

    acct = DEMO_ACCOUNTS["premium"]
    api = vd.Client(base_url=ctx.url, api_token=acct["api_token"], api_secret=acct["api_secret"], rate_limit=None)
    api.login()
    return api


def pandas_merge(api: Any) -> Any:
    df = api.trims.search(year=YEAR).to_pandas()
    for res, prefix in (("bodies", "body_"), ("engines", "engine_"), ("mileages", "mileage_")):
        part = api._search(res).search(year=YEAR).to_pandas().drop(columns=_SHARED)
        part = part.rename(columns={"id": prefix + "id"})
        df = df.merge(part, left_on="id", right_on="trim_id", how="left").drop(columns=["trim_id"])
    return df


def polars_join(api: Any) -> Any:
    df = api.trims.search(year=YEAR).to_polars()
    for res, prefix in (("bodies", "body_"), ("engines", "engine_"), ("mileages", "mileage_")):
        part = api._search(res).search(year=YEAR).to_polars().drop(_SHARED).rename({"id": prefix + "id"})
        df = df.join(part, left_on="id", right_on="trim_id", how="left")
    return df


def run(ctx: harness.Context) -> List[harness.Result]:
    api = _client(ctx)
    try:
        ours = api.vehicles.search(year=YEAR).to_pandas()
        ref = pandas_merge(api)
        import pandas as pd

        assert sorted(ours.columns) == sorted(ref.columns), "the join and the pandas merge have other columns"
        pd.testing.assert_frame_equal(ours, ref[list(ours.columns)], check_dtype=False)  # every value
        fns = {
            "vehicledata vehicles": lambda: api.vehicles.search(year=YEAR).to_pandas(),
            "trims crawl alone": lambda: api.trims.search(year=YEAR).to_pandas(),
            "4 crawls + pandas merge": lambda: pandas_merge(api),
        }
        try:
            import polars  # noqa: F401

            fns["4 crawls + polars join"] = lambda: polars_join(api)
        except ImportError:  # pragma: no cover
            pass
        samples = ctx.interleave(fns, rounds=max(2, ctx.rounds))
    finally:
        api.close()
    res = harness.Result(name="vehicles-2020", title=f"{len(ours)} vehicles of {YEAR}: one frame, 60 columns",
                         unit="s", ours="vehicledata vehicles", samples=samples,
                         targets=[harness.Target("<= 1.5x the trims crawl alone", "ratio_max", 1.5,
                                                 peer="trims crawl alone")])
    return [res]


if __name__ == "__main__":
    sys.exit(harness.main(run))
