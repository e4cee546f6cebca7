"""EPA's Test Car List ("Data on Cars Used for Testing Fuel Economy"): rated horsepower and
equivalent test weight per tested configuration, keyed by the manufacturer code of vehicles.csv.

The repository carries them as one gzipped CSV of the columns read here (`data/epa-testcar/`, made by
tools/compact_sources.py), which needs no XLSX reader. EPA publishes one file a model year (the
official refresh): CSV for 2015-2016, XLSX from 2017, read
with python-calamine where it is installed (the `dataset` extra; Rust's calamine, about 7x faster:
3 s of CPU for the eight XLSX years against 20 s) and else with openpyxl. Both give the same cells
(`_calamine_cell` makes calamine's look like openpyxl's); without either the XLSX years are skipped
with a warning.
An EPA vehicle is matched to the tested configuration of its year and manufacturer code with
the same displacement and cylinder count, the best of them by transmission kind, gears, drive
and shared model words (`TestCars.match`).
"""
from __future__ import annotations

import csv
import gzip
import re
import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .epa import SourceError, Vehicle

COLUMNS = ("Model Year", "Veh Mfr Code", "Represented Test Veh Model", "Test Veh Displacement (L)",
           "# of Cylinders and Rotors", "Rated Horsepower", "Tested Transmission Type Code", "# of Gears",
           "Drive System Code", "Equivalent Test Weight (lbs.)")


@dataclass(frozen=True)
class TestCar:
    """One tested configuration (several tests of one configuration collapse into one)."""

    __test__ = False  # not a pytest class

    year: int
    mfr_code: str
    model: str
    displ: float
    cylinders: int
    hp: Optional[int]
    trans: str        # A, SA, M, CVT, SCV, AM, AMS, OT
    gears: int
    drive: str        # F, R, A, 4, P
    etw: Optional[int]


def _num(v: object) -> Optional[float]:
    if v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip()
    try:
        return float(s) if s else None
    except ValueError:
        return None


def _record(get) -> Optional[TestCar]:
    year, displ, cyl = _num(get(0)), _num(get(3)), _num(get(4))
    if year is None:
        return None
    hp, gears, etw = _num(get(5)), _num(get(7)), _num(get(9))
    return TestCar(int(year), str(get(1) or "").strip().upper(), str(get(2) or "").strip(),
                   round(displ or 0.0, 1), int(cyl or 0), int(hp) if hp and hp > 0 else None,
                   str(get(6) or "").strip().upper(), int(gears or 0), str(get(8) or "").strip().upper(),
                   int(etw) if etw and etw > 0 else None)


def _open_csv(path: Path):
    """EPA's own CSV files are latin-1; the repository's compact copy (`*.csv.gz`,
    tools/compact_sources.py) is gzipped UTF-8."""
    if path.name.lower().endswith(".csv.gz"):
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="latin-1", newline="")


def _read_csv(path: Path) -> List[TestCar]:
    try:
        return _read_csv_rows(path)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error) as exc:  # a damaged gzip or CSV
        raise SourceError(f"{path}: not a readable Test Car List CSV ({exc})") from None


def _read_csv_rows(path: Path) -> List[TestCar]:
    with _open_csv(path) as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        idx = _indexes(path, header)
        out = []
        for row in reader:
            rec = _record(lambda i: row[idx[i]] if idx[i] < len(row) else None)
            if rec:
                out.append(rec)
        return out


def _indexes(path: Path, header: Sequence[object]) -> List[int]:
    names = [str(h or "").strip() for h in header]
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise SourceError(f"{path}: not EPA's Test Car List, missing columns {missing}")
    return [names.index(c) for c in COLUMNS]


def _calamine_cell(v: object) -> object:
    """A calamine cell as openpyxl gives it: an empty cell is None, an integral number an int."""
    if v == "":
        return None
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def _read_xlsx(path: Path) -> List[TestCar]:
    try:
        from python_calamine import CalamineWorkbook  # the fast reader (extra 'dataset')
    except ImportError:
        return _read_xlsx_openpyxl(path)
    try:
        sheet = CalamineWorkbook.from_path(str(path)).get_sheet_by_index(0).to_python()
    except Exception as exc:  # zip/XML errors of a damaged file (calamine raises its own types)
        raise SourceError(f"{path}: not a readable XLSX file ({exc})") from None
    if not sheet:
        raise SourceError(f"{path}: not EPA's Test Car List, the first sheet is empty")
    idx = _indexes(path, sheet[0])
    out = []
    for row in sheet[1:]:
        rec = _record(lambda i: _calamine_cell(row[idx[i]]) if idx[i] < len(row) else None)
        if rec:
            out.append(rec)
    return out


def _read_xlsx_openpyxl(path: Path) -> List[TestCar]:
    import openpyxl  # the maintained pure-Python XLSX reader (extra 'dataset')
    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # zipfile/XML errors of a damaged file
        raise SourceError(f"{path}: not a readable XLSX file ({exc})") from None
    try:
        rows = wb.worksheets[0].iter_rows(values_only=True)
        idx = _indexes(path, next(rows, ()))
        out = []
        for row in rows:
            rec = _record(lambda i: row[idx[i]] if idx[i] < len(row) else None)
            if rec:
                out.append(rec)
        return out
    finally:
        wb.close()


def read_file(path: Path) -> List[TestCar]:
    return _read_xlsx(path) if path.suffix.lower() == ".xlsx" else _read_csv(path)


SUFFIXES = (".csv", ".xlsx", ".csv.gz")


def files_in(directory: Path) -> List[Path]:
    """The Test Car List files of a folder: EPA's yearly CSV/XLSX files or the compact `*.csv.gz`."""
    return sorted(p for p in directory.iterdir() if p.is_file() and p.name.lower().endswith(SUFFIXES))


def have_xlsx_reader() -> bool:
    for module in ("python_calamine", "openpyxl"):
        try:
            __import__(module)
        except ImportError:
            continue
        return True
    return False


def start_reading(directory: Path, warn) -> "Reading":
    """Start reading every file of the folder in two worker processes (the XLSX files take a
    few seconds each); `Reading.result()` collects them."""
    paths = files_in(directory)
    if not have_xlsx_reader():
        skipped = [p.name for p in paths if p.suffix.lower() == ".xlsx"]
        if skipped:
            warn(f"no XLSX reader (python-calamine or openpyxl) is installed (pip install 'pyvehicledata[dataset]'): "
                 f"the Test Car List years "
                 f"{', '.join(skipped)} are skipped, their horsepower stays NULL")
        paths = [p for p in paths if p.suffix.lower() != ".xlsx"]
    return Reading(paths)


class Reading:
    def __init__(self, paths: List[Path]) -> None:
        self.paths = paths
        try:
            self._pool: Optional[ProcessPoolExecutor] = ProcessPoolExecutor(max_workers=2) if paths else None
        except OSError:  # no POSIX semaphores (no /dev/shm: AWS Lambda, a bare chroot): read in result()
            self._pool = None
        # largest first, so the two workers finish together
        order = sorted(paths, key=lambda p: -p.stat().st_size)
        self._futures = [self._pool.submit(read_file, p) for p in order] if self._pool else []

    def result(self) -> "TestCars":
        cars: List[TestCar] = []
        try:
            if self._pool is None:
                for p in self.paths:
                    cars.extend(read_file(p))
            for f in self._futures:
                cars.extend(f.result())
        finally:
            if self._pool:
                self._pool.shutdown()
        return TestCars(cars)


_TRANS_KIND = {"A": "A", "SA": "A", "M": "M", "CVT": "CVT", "SCV": "CVT", "AM": "AM", "AMS": "AM", "OT": ""}
_DRIVE = {"Front-Wheel Drive": "F", "Rear-Wheel Drive": "R", "2-Wheel Drive": "R", "All-Wheel Drive": "A",
          "4-Wheel Drive": "4", "Part-time 4-Wheel Drive": "P", "4-Wheel or All-Wheel Drive": "A"}


def _epa_trans(trany: str) -> Tuple[str, int]:
    t = trany.lower()
    m = re.search(r"(\d+)", t)
    gears = int(m.group(1)) if m else 0
    if "manual" in t:
        return "M", gears
    if "variable" in t or "(av" in t:
        return "CVT", 0
    if "(am" in t:
        return "AM", gears
    return "A", gears


def _words(s: str) -> set:
    return {w for w in re.split(r"[^a-z0-9]+", s.lower()) if w}


class TestCars:
    """The Test Car List indexed by (year, manufacturer code, displacement, cylinders)."""

    __test__ = False

    def __init__(self, cars: Iterable[TestCar]) -> None:
        self.by_key: Dict[Tuple[int, str, float, int], List[TestCar]] = {}
        seen = set()
        n = 0
        for c in cars:
            if c in seen:
                continue
            seen.add(c)
            n += 1
            self.by_key.setdefault((c.year, c.mfr_code, c.displ, c.cylinders), []).append(c)
        self.count = n

    def match(self, v: Vehicle) -> Optional[TestCar]:
        """The tested configuration standing for this EPA vehicle, or None."""
        found = self._match(v)
        return found[0] if found else None

    def lightest_etw(self, v: Vehicle) -> Optional[int]:
        """The lowest equivalent test weight among the tested vehicles of this EPA vehicle's
        configuration (those `match` ranks alike, whatever their rated horsepower): one
        configuration is tested on several vehicles, the dearer grades heavier (the 2020 Altima
        2.5 at 3,500, 3,625 and 3,750 lb), and the lightest stands for its cheapest row."""
        found = self._match(v)
        if not found:
            return None
        etws = [c.etw for c in found[1] if c.etw]
        return min(etws) if etws else None

    def _match(self, v: Vehicle) -> Optional[Tuple[TestCar, List[TestCar]]]:
        """`match`'s choice and the candidates ranked alike with it (same score and model name)."""
        electric = not v.displ
        key = (v.year, v.mfr_code, 0.0 if electric else round(v.displ or 0.0, 1), 0 if electric else (v.cylinders or 0))
        cands = self.by_key.get(key)
        if not cands:
            return None
        kind, gears = _epa_trans(v.trany)
        drive = _DRIVE.get(v.drive, "")
        words = _words(v.model)
        base = _words(v.base_model)

        def score(c: TestCar) -> Tuple[int, int, str]:
            s = 0
            s += 2 if _TRANS_KIND.get(c.trans, "") == kind else 0
            s += 2 if gears and c.gears == gears else 0
            if drive and c.drive:
                s += 2 if c.drive == drive or {c.drive, drive} <= {"A", "4", "P"} else 0
            cw = _words(c.model)
            s += 4 * len(cw & base) + 3 * len(cw & (words - base)) - len(cw - words)
            return (s, -(c.hp or 0), c.model)

        best = max(cands, key=score)
        if not (_words(best.model) & (words | base)):
            return None  # same engine code and size, but another model line
        top = score(best)[0]
        return best, [c for c in cands if score(c)[0] == top and c.model == best.model]
