"""Reading EPA's vehicles.csv (from the zip or a plain CSV)."""
from __future__ import annotations

import csv
import io
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional, TextIO

# Columns the builder reads; a file without them is not EPA's vehicles.csv.
REQUIRED_COLUMNS = (
    "id", "year", "make", "model", "baseModel", "VClass", "cylinders", "displ", "drive", "trany",
    "fuelType", "fuelType1", "atvType", "city08", "highway08", "comb08", "createdOn", "modifiedOn",
)


@dataclass
class Vehicle:
    """One EPA row, typed; numbers that EPA leaves empty are 0 (or None where noted)."""

    id: int
    year: int
    make: str
    model: str          # EPA `model`: the variant string ("Camry XSE")
    base_model: str     # EPA `baseModel` ("Camry")
    vclass: str
    cylinders: Optional[int]
    displ: Optional[float]
    drive: str
    trany: str
    fuel_type: str
    fuel_type1: str
    fuel_type2: str
    atv_type: str
    eng_dscr: str
    turbo: bool
    supercharged: bool
    ev_motor: str
    city08: int
    highway08: int
    comb08: int
    city_a08: int
    highway_a08: int
    comb_a08: int
    city_e: float
    highway_e: float
    comb_e: float
    range: int
    range_a: float
    range_city: float
    range_hwy: float
    charge240: float
    pv2: float
    pv4: float
    hpv: float
    lv2: float
    lv4: float
    hlv: float
    created_on: str
    modified_on: str
    mfr_code: str = ""  # EPA `mfrCode`: the manufacturer code the Test Car List is keyed by


class SourceError(ValueError):
    """A raw source file is missing, unreadable or not in the expected format."""


def _num(value: str) -> float:
    try:
        f = float(value)  # the common case: a plain number (float() ignores surrounding blanks)
    except ValueError:
        pass
    else:
        return 0.0 if f != f else f  # "nan"
    value = value.strip()
    if not value or value.lower() == "nan":
        return 0.0
    try:
        return float(value)
    except ValueError:
        # PHEV ranges are sometimes written "15/19": take the first figure.
        head = value.split("/")[0].strip()
        try:
            return float(head)
        except ValueError:
            return 0.0


# every column _row_to_vehicle reads (read_vehicles passes only these)
_COLUMNS_READ = (
    "id", "year", "cylinders", "displ", "make", "model", "baseModel", "VClass", "drive", "trany", "fuelType",
    "fuelType1", "fuelType2", "atvType", "eng_dscr", "tCharger", "sCharger", "evMotor", "city08", "highway08",
    "comb08", "cityA08", "highwayA08", "combA08", "cityE", "highwayE", "combE", "range", "rangeA", "rangeCity",
    "rangeHwy", "charge240", "pv2", "pv4", "hpv", "lv2", "lv4", "hlv", "createdOn", "modifiedOn", "mfrCode",
)


def _row_to_vehicle(r: Dict[str, str], line: int) -> Vehicle:
    try:
        vid = int(r["id"])
        year = int(r["year"])
    except (TypeError, ValueError):
        raise SourceError(f"vehicles.csv line {line}: bad id/year {r.get('id')!r}/{r.get('year')!r}") from None
    cyl = _num(r.get("cylinders", ""))
    displ = _num(r.get("displ", ""))
    g = r.get
    return Vehicle(
        id=vid, year=year, make=(g("make") or "").strip(), model=(g("model") or "").strip(),
        base_model=(g("baseModel") or "").strip(), vclass=(g("VClass") or "").strip(),
        cylinders=int(cyl) if cyl > 0 else None, displ=round(displ, 1) if displ > 0 else None,
        drive=(g("drive") or "").strip(), trany=(g("trany") or "").strip(),
        fuel_type=(g("fuelType") or "").strip(), fuel_type1=(g("fuelType1") or "").strip(),
        fuel_type2=(g("fuelType2") or "").strip(), atv_type=(g("atvType") or "").strip(),
        eng_dscr=(g("eng_dscr") or "").strip(), turbo=bool((g("tCharger") or "").strip()),
        supercharged=(g("sCharger") or "").strip() == "S", ev_motor=(g("evMotor") or "").strip(),
        city08=int(_num(g("city08") or "")), highway08=int(_num(g("highway08") or "")),
        comb08=int(_num(g("comb08") or "")), city_a08=int(_num(g("cityA08") or "")),
        highway_a08=int(_num(g("highwayA08") or "")), comb_a08=int(_num(g("combA08") or "")),
        city_e=_num(g("cityE") or ""), highway_e=_num(g("highwayE") or ""), comb_e=_num(g("combE") or ""),
        range=int(_num(g("range") or "")), range_a=_num(g("rangeA") or ""),
        range_city=_num(g("rangeCity") or ""), range_hwy=_num(g("rangeHwy") or ""),
        charge240=_num(g("charge240") or ""),
        pv2=_num(g("pv2") or ""), pv4=_num(g("pv4") or ""), hpv=_num(g("hpv") or ""),
        lv2=_num(g("lv2") or ""), lv4=_num(g("lv4") or ""), hlv=_num(g("hlv") or ""),
        created_on=(g("createdOn") or "").strip(), modified_on=(g("modifiedOn") or "").strip(),
        mfr_code=(g("mfrCode") or "").strip().upper(),
    )


@contextmanager
def _open_text(path: Path) -> Iterator[TextIO]:
    """The CSV text of a vehicles.csv, or of the first .csv inside a zip (latin-1, as EPA writes)."""
    if not path.is_file():
        raise SourceError(f"{path}: no such file")
    if path.suffix.lower() != ".zip":
        with open(path, encoding="latin-1", newline="") as fh:
            yield fh
        return
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise SourceError(f"{path}: not a zip archive ({exc})") from None
    with zf:
        names = [n for n in zf.namelist() if n.lower().endswith(".csv")]
        if not names:
            raise SourceError(f"{path}: the archive holds no .csv file (found {zf.namelist()[:5]})")
        with io.TextIOWrapper(zf.open(names[0]), encoding="latin-1", newline="") as fh:
            yield fh


def read_vehicles(path: Path, tick: Optional[Callable[[int], None]] = None) -> List[Vehicle]:
    """All rows of an EPA vehicles.csv (zip or csv), in file order.

    `tick(n)` is called every few thousand rows with the count read so far.
    Raises SourceError naming the file and the problem (missing columns, bad numbers).
    """
    out: List[Vehicle] = []
    with _open_text(path) as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader, None) or []
        except (csv.Error, zipfile.BadZipFile, EOFError, OSError) as exc:
            raise SourceError(f"{path}: unreadable at row 1 ({exc})") from None
        missing = [c for c in REQUIRED_COLUMNS if c not in header]
        if missing:
            raise SourceError(f"{path}: not EPA's vehicles.csv, missing columns {missing}")
        # Only the columns _row_to_vehicle reads, by index (a repeated name: the last one, as
        # csv.DictReader would); blank rows are skipped and short rows padded with None, as
        # DictReader does.
        where = {name: i for i, name in enumerate(header)}
        names = tuple(c for c in _COLUMNS_READ if c in where)
        idx = [where[c] for c in names]
        width = len(header)
        pick = itemgetter(*idx)
        try:
            n = 1
            for row in reader:
                if not row:
                    continue
                n += 1
                if len(row) < width:
                    row = row + [None] * (width - len(row))  # type: ignore[list-item]
                out.append(_row_to_vehicle(dict(zip(names, pick(row))), n))
                if tick and len(out) % 5000 == 0:
                    tick(len(out))
        except (csv.Error, zipfile.BadZipFile, EOFError, OSError) as exc:
            raise SourceError(f"{path}: unreadable at row {len(out) + 2} ({exc})") from None
    if tick:
        tick(len(out))
    if not out:
        raise SourceError(f"{path}: no vehicle rows")
    return out


