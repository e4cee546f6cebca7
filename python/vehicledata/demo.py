"""`vehicledata demo`: the main job, end to end on this machine.

Builds (or reuses) the emulator database from the real public sources, starts
the emulator on a free loopback port, logs in with the client as the demo
premium account and prints a table of real vehicles.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("demo", help="build the dataset, start the emulator, query it, print real vehicles")
    p.add_argument("--sources", help="folder of the raw sources (default: $VEHICLEDATA_SOURCES, then the official downloads)")
    p.add_argument("--year", type=int, default=2019)
    p.add_argument("--make", default="Toyota")
    p.add_argument("--model", default="Camry")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import vehicledata as vd
    from vehicledata import dataset
    from vehicledata.testing import DEMO_ACCOUNTS, Emulator

    t0 = time.perf_counter()
    db = dataset.ensure_database(sources=args.sources or os.environ.get("VEHICLEDATA_SOURCES"))
    print(f"dataset: {db}")
    account = DEMO_ACCOUNTS["premium"]
    with Emulator(db=db) as emu:
        print(f"emulator: {emu.url}")
        with vd.Client(base_url=emu.url, api_token=account["api_token"], api_secret=account["api_secret"]) as api:
            pager = api.trims.search(year=args.year, make=args.make, model=args.model)
            df = pager.to_pandas()
            cols = [c for c in ("id", "year", "make", "model", "trim", "description", "msrp") if c in df.columns]
            print(f"{pager.total} trims of the {args.year} {args.make} {args.model}:")
            print(df[cols].to_string(index=False) if len(df) else "(none)")
            engines = api.engines.search(year=args.year, make=args.make, model=args.model).to_pandas()
            mileages = api.mileages.search(year=args.year, make=args.make, model=args.model).to_pandas()
            if len(engines) and len(mileages):
                merged = engines[["trim_id", "engine_type", "cylinders", "size", "transmission"]].merge(
                    mileages[["trim_id", "epa_city_mpg", "epa_highway_mpg", "combined_mpg"]], on="trim_id")
                print()
                print("engines and EPA mileage:")
                print(merged.to_string(index=False))
    print(f"\ndone in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    from .cli import main

    sys.exit(main(["demo", *sys.argv[1:]]))
