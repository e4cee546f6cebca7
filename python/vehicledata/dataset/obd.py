"""OBD-II diagnostic trouble codes from the code table: the repository's compact
`dtc-codes.csv.gz` (tools/compact_sources.py) or the published `dtc-codes.sqlite`."""
from __future__ import annotations

import csv
import gzip
import sqlite3
import zlib
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .epa import SourceError

# Codes the service serves in its demo data-set: one per category (docs/emulator.md).
DEMO_CODES = ("B1200", "C1091", "P0100", "U1000")

# The code table's manufacturer labels -> make names as the EPA table spells them.
_MAKE_NAMES = {
    "CHEVY": "Chevrolet", "MERCEDES": "Mercedes-Benz", "GM": "GM", "GMC": "GMC", "BMW": "BMW", "KIA": "Kia",
}
# Labels that are not a make: kept as generic (make NULL).
_NOT_A_MAKE = {"GENERIC", "OTHER", ""}

ObdRow = Tuple[str, str, Optional[str], int]  # code, description, make, demo


def make_name(label: str) -> Optional[str]:
    label = label.strip().upper()
    if label in _NOT_A_MAKE:
        return None
    return _MAKE_NAMES.get(label, label.title())


def _finish(rows: List[Tuple[str, str, Optional[str], int]]) -> List[ObdRow]:
    """Deduplicate on (code, make): the generic definition wins over "OTHER", then the first
    description in (code, priority, description) order. Demo flag on the NULL-make row only."""
    best: Dict[Tuple[str, Optional[str]], Tuple[int, str]] = {}
    for code, description, make, priority in rows:
        key = (code, make)
        cand = (priority, description)
        if key not in best or cand < best[key]:
            best[key] = cand
    out = [
        (code, desc, make, 1 if make is None and code in DEMO_CODES else 0)
        for (code, make), (_, desc) in best.items()
    ]
    out.sort(key=lambda r: (r[0], r[2] is not None, r[2] or ""))
    return out


def _read_csv(path: Path) -> List[Tuple[str, str, str]]:
    """(code, manufacturer, description) of the compact copy: the English rows, in table order."""
    try:
        with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, [])
            if header != ["code", "manufacturer", "description"]:
                raise SourceError(f"{path}: not the OBD code table, expected columns code,manufacturer,description")
            return [(r[0], r[1], r[2]) for r in reader if len(r) == 3]
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error) as exc:
        raise SourceError(f"{path}: not a readable OBD code table ({exc})") from None


def read_code_table(path: Path) -> List[ObdRow]:
    """The code table's English rows, generic codes with make NULL: from the compact
    `dtc-codes.csv.gz` or from dtc-codes.sqlite's `dtc_definitions`."""
    rows = _read_csv(path) if path.name.lower().endswith(".csv.gz") else _read_sqlite(path)
    prepared = []
    for code, manufacturer, description in rows:
        code = (code or "").strip().upper()
        description = (description or "").strip()
        if not code or not description:
            continue
        label = (manufacturer or "").strip().upper()
        priority = 0 if label == "GENERIC" else 1
        prepared.append((code, description, make_name(label), priority))
    return _finish(prepared)


def _read_sqlite(path: Path) -> List[Tuple[str, str, str]]:
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise SourceError(f"{path}: cannot open the OBD code table ({exc})") from None
    try:
        rows = con.execute(
            "SELECT code, manufacturer, description FROM dtc_definitions WHERE locale = 'en' OR locale IS NULL"
        ).fetchall()
    except sqlite3.Error as exc:
        raise SourceError(f"{path}: not the OBD code table, expected table dtc_definitions ({exc})") from None
    finally:
        con.close()
    return rows
