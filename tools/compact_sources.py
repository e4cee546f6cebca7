#!/usr/bin/env python3
"""Make the repository's compact copies of the small public sources (data/, data/SOURCES.md).

    .venv/bin/python tools/compact_sources.py --from DIR [--to data]

DIR holds the sources as their publishers give them (the official downloads named in
data/SOURCES.md): `epa-vehicles.csv.zip`, `dtc-codes.sqlite`, `epa-testcar/` (EPA's yearly CSV and
XLSX files) and `vpic-full-sweep-2015-2024.csv.gz`. What the dataset builder reads of them is
written to --to in a form of our own where that is smaller, and nothing it reads is dropped:

- `epa-vehicles.csv.zip` and the vPIC sweep: copied as they are (already compressed);
- `dtc-codes.sqlite` (3.2 MB) -> `dtc-codes.csv.gz`: the English rows of `dtc_definitions`
  (code, manufacturer, description), as `dataset/obd.py` reads them;
- `epa-testcar/*.csv|*.xlsx` (17 MB, XLSX from 2017) -> `epa-testcar/epa-testcar-2015-2024.csv.gz`:
  the ten columns `dataset/testcar.py` reads, one row per tested configuration in the order the
  builder reads them, so no user needs an XLSX reader and the catalogue is byte-identical.

This is how the data is refreshed: download the official files into DIR, run this, rebuild, and
commit data/ with the new checksums it prints (data/SOURCES.md). It needs the `dataset` extra
(an XLSX reader) and the package installed (`make install`).
"""
from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import List

from vehicledata.dataset import testcar

TESTCAR_OUT = "epa-testcar-2015-2024.csv.gz"
COPIED = ("epa-vehicles.csv.zip", "vpic-full-sweep-2015-2024.csv.gz")


def _gzip_text(text: str, out: Path) -> None:
    """Reproducible gzip (no name, no timestamp in the header)."""
    with open(out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0,
                                               compresslevel=9) as gz:
        gz.write(text.encode("utf-8"))


def compact_obd(src: Path, out: Path) -> int:
    con = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT code, manufacturer, description FROM dtc_definitions "
                           "WHERE locale = 'en' OR locale IS NULL ORDER BY rowid").fetchall()
    finally:
        con.close()
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(("code", "manufacturer", "description"))
    w.writerows(("" if v is None else v for v in row) for row in rows)
    _gzip_text(buf.getvalue(), out)
    return len(rows)


def compact_testcars(folder: Path, out: Path) -> int:
    """The configurations as testcar.Reading gives them: files largest first, duplicates dropped."""
    files = sorted(testcar.files_in(folder), key=lambda p: -p.stat().st_size)
    seen = set()
    cars: List[testcar.TestCar] = []
    for path in files:
        for car in testcar.read_file(path):
            if car not in seen:
                seen.add(car)
                cars.append(car)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(testcar.COLUMNS)
    for c in cars:
        w.writerow((c.year, c.mfr_code, c.model, repr(c.displ), c.cylinders, "" if c.hp is None else c.hp,
                    c.trans, c.gears, c.drive, "" if c.etw is None else c.etw))
    _gzip_text(buf.getvalue(), out)
    return len(cars)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="src", required=True, type=Path, help="folder of the official files")
    ap.add_argument("--to", type=Path, default=Path(__file__).resolve().parents[1] / "data")
    args = ap.parse_args(argv)
    if not testcar.have_xlsx_reader():
        print("compact_sources: no XLSX reader: pip install openpyxl (the `dataset` extra)", file=sys.stderr)
        return 1
    (args.to / "epa-testcar").mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        shutil.copyfile(args.src / name, args.to / name)
    n_obd = compact_obd(args.src / "dtc-codes.sqlite", args.to / "dtc-codes.csv.gz")
    n_tc = compact_testcars(args.src / "epa-testcar", args.to / "epa-testcar" / TESTCAR_OUT)
    print(f"{n_obd:,} OBD rows, {n_tc:,} tested configurations")
    for p in sorted(q for q in args.to.rglob("*") if q.is_file() and q.suffix in (".zip", ".gz")):
        print(f"{p.relative_to(args.to)}  {p.stat().st_size:>10,} B  sha256 {_sha(p)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
