"""Reviewed price anchors: base and top trim of best-selling model lines, published range per make.

Two small tables kept in the package, each row citing the public page its figures come from
(written from the makers' published MSRPs, destination excluded; never from the raw sources):

- ``msrp_lines.csv``: ``year, make, model, base_trim, base_msrp, top_trim, top_msrp, source``:
  the base and the dearest trim of a model line in one model year.
- ``msrp_trims.csv``: ``year, make, model, trim, msrp, source``: the base MSRP of one trim where
  the maker publishes a price per trim (BMW's grades: "330i", "330i xDrive"); it is that trim's
  price, whatever the ladder would say.
- ``msrp_makes.csv``: ``make, first_year, last_year, min_msrp, max_msrp, source``: the lowest base
  and highest top price of the make's US models in those model years.

The builder (rows._prices) anchors a reviewed line at its base and top and steps the trims
between them geometrically; a line without a row steps up from its own base by the make's
ladder (the median top/base spread of the make's reviewed lines, else of all lines); every price
of a model year a make's range covers is kept inside that range.
"""
from __future__ import annotations

import csv
import statistics
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple

LINES_FILE = Path(__file__).resolve().parent / "msrp_lines.csv"
TRIMS_FILE = Path(__file__).resolve().parent / "msrp_trims.csv"
MAKES_FILE = Path(__file__).resolve().parent / "msrp_makes.csv"
LINE_COLUMNS = ["year", "make", "model", "base_trim", "base_msrp", "top_trim", "top_msrp", "source"]
TRIM_COLUMNS = ["year", "make", "model", "trim", "msrp", "source"]
MAKE_COLUMNS = ["make", "first_year", "last_year", "min_msrp", "max_msrp", "source"]


@dataclass(frozen=True)
class Line:
    year: int
    make: str
    model: str
    base_trim: str
    base_msrp: int
    top_trim: str
    top_msrp: int
    source: str


@dataclass(frozen=True)
class MakeRange:
    make: str
    first_year: int
    last_year: int
    min_msrp: int
    max_msrp: int
    source: str


def _rows(path: Path, columns: List[str]) -> List[Dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != columns:
            raise ValueError(f"{path.name}: columns must be {columns}, not {reader.fieldnames}")
        return list(reader)


@lru_cache(maxsize=1)
def lines() -> Dict[Tuple[int, str, str], Line]:
    """The reviewed lines by (year, make, model)."""
    out: Dict[Tuple[int, str, str], Line] = {}
    for r in _rows(LINES_FILE, LINE_COLUMNS):
        line = Line(int(r["year"]), r["make"], r["model"], r["base_trim"], int(r["base_msrp"]), r["top_trim"],
                    int(r["top_msrp"]), r["source"])
        out[(line.year, line.make, line.model)] = line
    return out


@lru_cache(maxsize=1)
def trim_prices() -> Dict[Tuple[int, str, str, str], int]:
    """The reviewed per-trim base prices by (year, make, model, trim)."""
    out: Dict[Tuple[int, str, str, str], int] = {}
    for r in _rows(TRIMS_FILE, TRIM_COLUMNS):
        key = (int(r["year"]), r["make"], r["model"], r["trim"])
        if key in out:
            raise ValueError(f"{TRIMS_FILE.name}: {key} appears twice")
        if not r["source"].startswith("https://"):
            raise ValueError(f"{TRIMS_FILE.name}: {key} cites no public page")
        out[key] = int(r["msrp"])
    return out


def trim_price(year: int, make: str, model: str, trim: str) -> Optional[int]:
    return trim_prices().get((year, make, model, trim))


@lru_cache(maxsize=1)
def make_ranges() -> Dict[str, MakeRange]:
    return {r["make"]: MakeRange(r["make"], int(r["first_year"]), int(r["last_year"]), int(r["min_msrp"]),
                                 int(r["max_msrp"]), r["source"]) for r in _rows(MAKES_FILE, MAKE_COLUMNS)}


def line(year: int, make: str, model: str) -> Optional[Line]:
    return lines().get((year, make, model))


def make_range(make: str, year: int) -> Optional[Tuple[int, int]]:
    """(min, max) of the make's published prices when the table covers that model year; after
    its last year, the range moved 3 % a year at the bottom and 5 % at the top (2021-2026 held to
    the same bounds); None before its first year."""
    r = make_ranges().get(make)
    if r is None or year < r.first_year:
        return None
    if year <= r.last_year:
        return r.min_msrp, r.max_msrp
    # later model years: the published range moved with prices (3 % a year at the bottom, 5 % at the top)
    later = year - r.last_year
    return int(round(r.min_msrp * 1.03 ** later, -2)), int(round(r.max_msrp * 1.05 ** later, -3))


@lru_cache(maxsize=None)
def make_spread(make: str) -> float:
    """The make's ladder: top / base price of a line (median of its reviewed lines, else of all)."""
    own = [ln.top_msrp / ln.base_msrp for ln in lines().values() if ln.make == make]
    every = [ln.top_msrp / ln.base_msrp for ln in lines().values()]
    return float(statistics.median(own or every))


def clamp(price: float, make: str, year: int) -> float:
    rng = make_range(make, year)
    if rng is None:
        return price
    return min(max(price, float(rng[0])), float(rng[1]))
