"""The NHTSA vPIC VIN tables: decompressed beside the database for the VIN decoder."""
from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import sqlite3
import zlib
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Tuple

from . import naming
from .epa import SourceError

# Tables the VIN decoder cannot do without (checked after decompression; the emulator and the
# offline Decoder check them, and every table the build recorded, when they open the pair:
# vin::vpic_problem in cpp/vin/vin_tables_load.cpp).
REQUIRED_TABLES = ("Wmi", "Wmi_Make", "Wmi_VinSchema", "VinSchema", "Pattern", "Element", "Make_Model", "Make",
                   "Model")
# How install() makes the file from its source: part of the content id, so that a changed
# install never reuses a file an older one wrote.
INSTALL_FORMAT = "vpic install 1: gzip or plain copy, rollback journal"
_CHUNK = 1 << 20


def content_id(source_digest: str) -> str:
    """The content id of the vPIC file install() makes from a source whose sha256 is
    `source_digest`: 16 hex digits, the `<id>` of its name vpic-<id>.db (paths.vpic_name)."""
    return hashlib.sha256(f"{INSTALL_FORMAT}\n{source_digest}".encode()).hexdigest()[:16]


def expected_size(source: Path) -> int:
    """The size install() writes from `source`, modulo 2**32: a gzip file's trailer (ISIZE), a
    plain file's own size."""
    if source.suffix == ".gz":
        with open(source, "rb") as fh:
            fh.seek(-4, os.SEEK_END)
            return int.from_bytes(fh.read(4), "little")
    return source.stat().st_size % (1 << 32)


def reusable(target: Path, source: Path) -> bool:
    """Whether `target`, a file install() made earlier from `source` (the same content id), is
    whole: the size install() writes and readable tables, the required ones among them."""
    try:
        if target.stat().st_size % (1 << 32) != expected_size(source):
            return False
        check(target)
    except (OSError, SourceError):
        return False
    return True


def tables(path: Path) -> List[str]:
    """The names of the tables (and views) of an SQLite file, sorted; SourceError if unreadable."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')"))
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise SourceError(f"{path}: not an SQLite database ({exc})") from None


def problem(db_path: Path, meta: Mapping[str, str]) -> Optional[str]:
    """What is wrong with the vPIC file a database's `meta` names (vpic_path, relative to the
    database's folder), as the emulator and the Decoder find it when they open the pair: missing,
    another size than the build wrote (meta vpic_bytes), unreadable, or a table missing (of
    REQUIRED_TABLES and those the build recorded in meta vpic_tables). None when it is whole, or
    when the database has no vPIC tables."""
    rel = meta.get("vpic_path", "")
    if not rel:
        return None
    path = Path(db_path).parent / rel
    if not path.is_file():
        return f"the vPIC tables file {path} is missing"
    size = path.stat().st_size
    if meta.get("vpic_bytes") and str(size) != meta["vpic_bytes"]:
        return f"{path} is damaged or incomplete ({size} bytes, the build wrote {meta['vpic_bytes']})"
    try:
        present = set(tables(path))
    except SourceError as exc:
        return str(exc)
    wanted = list(REQUIRED_TABLES) + [t for t in meta.get("vpic_tables", "").split(",") if t]
    missing = sorted({t for t in wanted if t not in present})
    if missing:
        return f"{path} is damaged or incomplete (no table {', '.join(missing)})"
    return None


def install(source: Path, target: Path, progress: Optional[Callable[[int, int], None]] = None) -> int:
    """Stream-decompress `source` (.gz, or copy a plain .db) to `target` atomically.

    `progress(done_bytes, total_compressed_bytes)` is called per MiB. Returns the size written.
    Raises SourceError if the file is not gzip or not the vPIC database.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    total = source.stat().st_size
    written = 0
    try:
        if source.suffix == ".gz":
            with open(source, "rb") as raw, gzip.GzipFile(fileobj=raw) as src, open(tmp, "wb") as dst:
                while True:
                    chunk = src.read(_CHUNK)
                    if not chunk:
                        break
                    dst.write(chunk)
                    written += len(chunk)
                    if progress:
                        progress(raw.tell(), total)
        else:
            shutil.copyfile(source, tmp)
            written = tmp.stat().st_size
        _rollback_journal(tmp)
        check(tmp)
        os.replace(tmp, target)
    except (OSError, EOFError, zlib.error) as exc:
        raise SourceError(f"{source}: cannot decompress the vPIC database ({exc})") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return written


def _rollback_journal(path: Path) -> None:
    """The packaged vPIC file is in WAL mode: readers would leave -wal/-shm files beside it.

    Switch it to a rollback journal once, so read-only opens leave nothing behind.
    """
    try:
        con = sqlite3.connect(str(path))
        try:
            con.execute("PRAGMA journal_mode=DELETE")
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise SourceError(f"{path}: not an SQLite database ({exc})") from None
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.unlink()


def check(path: Path) -> None:
    """SourceError unless `path` is an SQLite file with the REQUIRED_TABLES."""
    names = set(tables(path))
    missing = [t for t in REQUIRED_TABLES if t not in names]
    if missing:
        raise SourceError(f"{path}: not the vPIC database, missing tables {missing}")


# ---- engine layouts -----------------------------------------------------------------------

# vPIC EngineConfiguration ids -> layout prefix
_CONFIG = {"1": "I", "2": "V", "3": "rotary", "4": "W", "5": "flat"}
_MODEL_NOISE = re.compile(r"\b(pickup|cab chassis|chassis|2wd|4wd|awd|fwd|rwd|4x4|4x2|wagon|van|hybrid|"
                          r"plug-in|convertible|coupe|sedan|hatchback|cargo|passenger)\b")


_norm, _norm_make = naming.norm, naming.norm_make


class EngineLayouts:
    """Engine layout (I/V/flat/W/rotary) by make, model, year and cylinder count, from the
    vPIC VIN patterns: in every VIN schema, the cylinder-count and engine-configuration patterns
    that share a key are an engine; each model of the schema's makes and years gets its votes.

    Thread safety: read-only after construction.
    """

    def __init__(self, votes: Dict[Tuple[str, str, int], List[Tuple[int, int, str]]]) -> None:
        self._votes = votes
        self._models_by_make: Dict[str, set] = {}
        for make, model, _ in votes:
            self._models_by_make.setdefault(make, set()).add(model)

    def __len__(self) -> int:
        return len(self._votes)

    def _candidates(self, model: str, base_model: str) -> List[str]:
        out = []
        for name in (base_model, _MODEL_NOISE.sub(" ", base_model.lower()), model,
                     base_model.split(" ")[0] if base_model else "", model.split(" ")[0] if model else ""):
            n = _norm(name)
            if n and n not in out:
                out.append(n)
        return out

    def layout(self, make: str, model: str, base_model: str, year: int, cylinders: int) -> Optional[str]:
        """"I6", "V6", "flat 4", "W12", "rotary 0", or None when vPIC does not say clearly
        (no pattern, or less than three quarters of the votes for one layout)."""
        mk = _norm_make(make)
        if mk not in self._models_by_make:
            return None
        for cand in self._candidates(model, base_model):
            entries = self._votes.get((mk, cand, cylinders))
            if not entries:
                continue
            counts: Dict[str, int] = {}
            for lo, hi, cfg in entries:
                if lo <= year <= hi:
                    counts[cfg] = counts.get(cfg, 0) + 1
            if not counts:
                continue
            best, n = max(sorted(counts.items()), key=lambda kv: kv[1])
            if n * 4 < sum(counts.values()) * 3:
                return None
            if best == "rotary":
                return "rotary 0"
            return f"flat {cylinders}" if best == "flat" else f"{best}{cylinders}"
        return None


def engine_layouts(path: Path) -> EngineLayouts:
    """Read the layout votes from a decompressed vPIC database (about 0.5 s)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        makes: Dict[int, List[Tuple[int, int, str]]] = {}
        for schema_id, y_from, y_to, make in con.execute(
                "SELECT wv.VinSchemaId, wv.YearFrom, wv.YearTo, mk.Name FROM Wmi_VinSchema wv "
                "JOIN Wmi_Make wm ON wm.WmiId = wv.WmiId JOIN Make mk ON mk.Id = wm.MakeId"):
            makes.setdefault(schema_id, []).append((int(y_from or 0), int(y_to or 9999), _norm_make(make)))
        models: Dict[int, List[str]] = {}
        for schema_id, name in con.execute(
                "SELECT DISTINCT p.VinSchemaId, m.Name FROM Pattern p JOIN Model m "
                "ON m.Id = CAST(p.AttributeId AS INTEGER) WHERE p.ElementId = 28"):
            models.setdefault(schema_id, []).append(_norm(name))
        engines: Dict[int, List[Tuple[int, str]]] = {}
        for schema_id, cyl, cfg in con.execute(
                "SELECT DISTINCT c.VinSchemaId, c.AttributeId, e.AttributeId FROM Pattern c JOIN Pattern e "
                "ON e.Keys = c.Keys AND e.ElementId = 64 AND e.VinSchemaId = c.VinSchemaId WHERE c.ElementId = 9"):
            if str(cyl).isdigit() and str(cfg) in _CONFIG:
                engines.setdefault(schema_id, []).append((int(cyl), _CONFIG[str(cfg)]))
    except sqlite3.Error as exc:
        raise SourceError(f"{path}: cannot read the vPIC VIN patterns ({exc})") from None
    finally:
        con.close()
    votes: Dict[Tuple[str, str, int], List[Tuple[int, int, str]]] = {}
    for schema_id in sorted(engines):
        for lo, hi, make in makes.get(schema_id, ()):
            for model in models.get(schema_id, ()):
                for cyl, cfg in engines[schema_id]:
                    votes.setdefault((make, model, cyl), []).append((lo, hi, cfg))
    return EngineLayouts(votes)
