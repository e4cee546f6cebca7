"""A dataset beside a missing, damaged or incomplete vPIC file, and the one line the emulator (at
start) and the offline Decoder (at open) say about it (tests/emulator/test_emu_vin.py,
tests/client/test_vin_decoder.py)."""
from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

DAMAGE = ["missing", "truncated", "overwritten", "table dropped"]


def damaged_pair(database: Path, where: Path, how: str) -> str:
    """The dataset linked into `where` with its vPIC file (named by meta vpic_path) `how` damaged;
    the one line the emulator and the Decoder say about it."""
    # Linked (a copy across file systems), not symlinked: the Decoder resolves a symlink to the
    # dataset's own folder, beside its whole vPIC file.
    try:
        os.link(database, where / "vehicledata.db")
    except OSError:
        shutil.copyfile(database, where / "vehicledata.db")
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    name = con.execute("SELECT value FROM meta WHERE key = 'vpic_path'").fetchone()[0]
    con.close()
    vpic, size = where / name, (Path(database).parent / name).stat().st_size
    rebuild = ": rebuild the dataset (`vehicledata dataset build`)"
    if how == "missing":
        return (f"the vPIC tables file {vpic} is missing: it belongs beside {where}/vehicledata.db (copy it with the "
                "database, or rebuild the dataset with `vehicledata dataset build`)")
    if how == "truncated":
        with open(Path(database).parent / name, "rb") as src, open(vpic, "wb") as dst:
            dst.write(src.read(size // 2))
        return f"{vpic} is damaged or incomplete ({size // 2} bytes, the build wrote {size}){rebuild}"
    if how == "overwritten":  # the right size, no database
        vpic.write_bytes(b"SQLite format 3\x00" + b"\x00" * (size - 16))
        return f"{vpic} is damaged or incomplete (file is not a database){rebuild}"
    assert how == "table dropped"  # the file keeps its size (the pages go to the free list)
    shutil.copyfile(Path(database).parent / name, vpic)
    con = sqlite3.connect(vpic)
    con.execute("DROP TABLE Make_Model")
    con.commit()
    con.close()
    assert vpic.stat().st_size == size
    return f"{vpic} is damaged or incomplete (no table Make_Model){rebuild}"


def copy_dataset(database: Path, where: Path) -> Path:
    """A copy of the dataset in `where` that a test may change, with its vPIC file linked beside it
    (the pair belongs together: the emulator refuses a dataset whose vPIC file is missing)."""
    copy = where / "vehicledata.db"
    shutil.copyfile(database, copy)
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    row = con.execute("SELECT value FROM meta WHERE key = 'vpic_path'").fetchone()
    con.close()
    if row and row[0]:
        (where / row[0]).symlink_to((Path(database).parent / row[0]).resolve())
    return copy
