"""X-Emulator-Synthetic: the fields of a response's record type whose provenance origin is 'synthetic'.

The expected header is computed from the database's provenance table and the schema table, never
hard-coded. When no column is synthetic the header is absent (docs/emulator.md). A second emulator on
a copy of the database with some columns marked synthetic shows the header follows the table.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import List, Optional, Set, Tuple

import pytest

from emu_support import Http
from vpic_damage import copy_dataset
from vehicledata import schema
from vehicledata.testing import Emulator

TARGETS = [("/api/trims/v2?limit=3", "/api/trims/v2"), ("/api/engines/v2?limit=3", "/api/engines/v2"),
           ("/api/mileages/v2?limit=3", "/api/mileages/v2"), ("/api/makes/v2?limit=3", "/api/makes/v2"),
           ("/api/obd-codes?limit=3", "/api/obd-codes"), ("/api/trims?limit=2", "/api/trims")]


def synthetic_columns(db_path: Path) -> Set[Tuple[str, str]]:
    con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return set(con.execute("SELECT table_name, column_name FROM provenance WHERE origin = 'synthetic'"))
    finally:
        con.close()


def expected_header(record_name: str, syn: Set[Tuple[str, str]]) -> Optional[str]:
    recs = schema.records()
    out: List[str] = []

    def walk(name: str, prefix: str, depth: int) -> None:
        r = recs[name]
        for f in r.fields:
            if not (f.in_record or f.verbose_only):
                continue
            if f.type == "nested":
                if f.nested in recs and depth < 2:
                    walk(f.nested, prefix + f.name + ".", depth + 1)
                continue
            if r.table and (r.table, f.name) in syn:
                out.append(prefix + f.name)

    walk(record_name, "", 0)
    return ",".join(out) if out else None


@pytest.mark.parametrize("target,path", TARGETS)
def test_header_follows_the_provenance_table(api: Http, database: Path, target: str, path: str) -> None:
    r = api.get(target)
    assert r.status == 200
    want = expected_header(schema.endpoints()[path].record, synthetic_columns(database))
    assert r.headers.get("x-emulator-synthetic") == want


def test_header_lists_columns_marked_synthetic(database: Path, tmp_path: Path) -> None:
    copy = copy_dataset(database, tmp_path)
    con = sqlite3.connect(copy)
    # Start from no synthetic column at all, then mark a known few.
    con.execute("UPDATE provenance SET origin = 'derived' WHERE origin = 'synthetic'")
    con.execute("UPDATE provenance SET origin = 'synthetic' WHERE table_name = 'engines' "
                "AND column_name IN ('horsepower_hp', 'torque_ft_lbs', 'valves')")
    con.execute("UPDATE provenance SET origin = 'synthetic' WHERE table_name = 'trims' AND column_name = 'msrp'")
    con.commit()
    con.close()
    syn = synthetic_columns(copy)
    assert ("engines", "horsepower_hp") in syn and ("trims", "msrp") in syn
    with Emulator(db=copy, threads=2) as emu:
        h = Http(emu.url)
        try:
            for target, path in TARGETS:
                r = h.get(target)
                assert r.status == 200, (target, r.body)
                assert r.headers.get("x-emulator-synthetic") == expected_header(schema.endpoints()[path].record, syn)
            assert h.get("/api/engines/v2?limit=1").headers["x-emulator-synthetic"] == \
                "horsepower_hp,torque_ft_lbs,valves"
            assert "msrp" in h.get("/api/trims/v2?limit=1").headers["x-emulator-synthetic"].split(",")
            # No records, no header: years and errors.
            assert "x-emulator-synthetic" not in h.get("/api/years/v2").headers
            assert "x-emulator-synthetic" not in h.get("/api/trims/v2?year=abc").headers
        finally:
            h.close()
