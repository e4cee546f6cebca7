"""Quick start: search, iterate, one trim in detail, a DataFrame."""
from __future__ import annotations

import vehicledata as vd

from _service import client

with client() as api:
    pager = api.trims.search(year=2019, make="BMW")
    print(f"{pager.total} BMW trims of 2019")
    for trim in pager.first(5):
        print(f"  {trim.id:>6}  {trim.description:<55} MSRP {trim.msrp}")

    detail = api.trims.get(pager.first(1)[0].id)
    engine = detail.engines[0]
    print(f"{detail.description}: {engine.horsepower_hp} hp, {engine.fuel_type}, {len(detail.exterior_colors)} colours")

    df = api.engines.search(vd.F("horsepower_hp") >= 400, year=2020).to_pandas()
    print(df[["make", "model", "trim", "horsepower_hp", "size"]].sort_values("horsepower_hp").tail(5).to_string())
