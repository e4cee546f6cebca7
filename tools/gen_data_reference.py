#!/usr/bin/env python3
"""Regenerate docs/data-reference.md, the data reference of the docs site, from a built dataset:
every column of every storage table with its origin (real, derived, synthetic, none) and how its
values are made (the database's `provenance` table), the share of its rows that are NULL, and for
the columns whose origin differs from row to row the share of each origin (`value_origins`).

    python tools/gen_data_reference.py [--db PATH] [--check]

Without --db: the database `vehicledata emulator` reads ($VEHICLEDATA_HOME). --check writes
nothing and exits 1 when the page differs from what the database gives
(tests/test_docs_site.py runs it on the dataset the tests build).
"""
from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Dict, List, Tuple

from vehicledata.dataset import paths, provenance, store

PAGE = Path(__file__).resolve().parent.parent / "docs" / "data-reference.md"

INTRO = """\
# Data fields

Every column of the emulator's database, table by table: its **origin** (`real`: a public source,
possibly mapped onto the service's vocabulary; `derived`: computed by a rule from real facts;
`synthetic`: no public source gives the value, so it is an estimate or an invention; `none`: no
public source, always NULL), **how** its values are made, and its **null share** (the share of the
table's rows where it is NULL). The records and endpoints that serve these columns:
[Endpoints and records](resources.md); how the sources are read and mapped:
[How the dataset is built](dataset.md).

Generated from a built dataset (its `provenance` and `value_origins` tables and the rows
themselves) by `tools/gen_data_reference.py`; do not edit by hand. A test regenerates it from the
dataset the tests build and fails when this page is stale.
"""


def null_share(nulls: int, total: int) -> str:
    if total == 0:
        return "no rows"
    if nulls == 0:
        return "0"
    if nulls == total:
        return "100 %"
    pct = 100.0 * nulls / total
    if pct < 0.1:
        return "< 0.1 %"
    if pct > 99.9:
        return "> 99.9 %"
    return f"{pct:.1f} %"


def markdown(db: Path) -> str:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows: List[Tuple[str, str, str, str]] = con.execute(
            "SELECT table_name, column_name, origin, note FROM provenance ORDER BY rowid").fetchall()
        per_row = store.value_origin_shares(con)
        tables: Dict[str, List[Tuple[str, str, str]]] = {}
        for table, column, origin, note in rows:
            tables.setdefault(table, []).append((column, origin, note))
        out = [INTRO, "## Columns, table by table", ""]
        for table, columns in tables.items():
            total = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
            counts = con.execute("SELECT " + ", ".join(f'count("{c}")' for c, _, _ in columns)
                                 + f' FROM "{table}"').fetchone()
            out += [f"### {table}", "", f"{total:,} rows.", "",
                    "| column | origin | how | null share |", "|---|---|---|---|"]
            for (column, origin, note), filled in zip(columns, counts):
                out.append(f"| {column} | {origin} | {note} | {null_share(total - filled, total)} |")
            out.append("")
        if per_row:
            out += ["## Origins that differ from row to row", "",
                    "For these columns the origin above is the column's usual one; the database's",
                    "`value_origins` table gives the origin of each trim's value (shares of the trims):", "",
                    "| column | " + " | ".join(provenance.ORIGINS) + " |",
                    "|---|" + "---|" * len(provenance.ORIGINS)]
            for column, per in per_row.items():
                n = sum(per.values()) or 1
                out.append(f"| {column} | " + " | ".join(f"{100.0 * per[o] / n:.1f} %" for o in provenance.ORIGINS)
                           + " |")
            out.append("")
        return "\n".join(out)
    finally:
        con.close()


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=None, help="the dataset database (default: the data home's)")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/data-reference.md is stale")
    args = parser.parse_args(argv)
    db = args.db or paths.default_db_path()
    text = markdown(db)
    if args.check:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale for {db}: run tools/gen_data_reference.py --db {db}", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
