"""The vPIC full sweep (`vpic-full-sweep-2015-2024.csv.gz`): vPIC as decoded for one VIN per
real VIN pattern, model years 2015-2024. Per (year, make, model) it gives the trims a buyer
could order with their engine, drive and body, and where vPIC has them: horsepower, curb
weight, wheelbase, seats, doors and base price.

`Sweep.entries(year, make, model)` returns the decoded configurations; `Sweep.figures` the
facts of the configurations that agree with an EPA vehicle's engine (and drive, where vPIC
names it); `Sweep.lineup` the trim names of those configurations.
"""
from __future__ import annotations

import csv
import gzip
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from statistics import median
from typing import Dict, List, Optional, Tuple

from .epa import SourceError
from .naming import norm, norm_make

FILE = "vpic-full-sweep-2015-2024.csv.gz"


@dataclass(frozen=True)
class Entry:
    trim: str
    body: str
    doors: Optional[int]
    drive: str          # "2", "A", "4" or "" (vPIC does not say)
    displ: Optional[float]
    cylinders: Optional[int]
    electric: str       # "", "hybrid", "mild", "phev", "ev", "fcev"
    hp: Optional[int]
    curb: Optional[int]
    wheelbase: Optional[float]
    seats: Optional[int]
    price: Optional[int]
    hps: Tuple[int, ...] = ()   # every rated output vPIC gives the pattern ("282|365": the 3.5 with and without turbo)


def _all(v: str) -> Tuple[int, ...]:
    out = []
    for part in v.split("|"):
        try:
            f = float(part.strip())
        except ValueError:
            continue
        if f > 0:
            out.append(int(round(f)))
    return tuple(sorted(set(out)))


def _first(v: str) -> Optional[float]:
    v = v.split("|")[0].strip()
    try:
        return float(v) if v else None
    except ValueError:
        return None


def _int(v: str) -> Optional[int]:
    f = _first(v)
    return int(round(f)) if f is not None and f > 0 else None


def _drive(v: str) -> str:
    v = v.split("|")[0]
    if v.startswith(("4x2", "FWD", "RWD")):
        return "2"
    if v.startswith("AWD"):
        return "A"
    if v.startswith("4WD"):
        return "4"
    return ""


def _electric(level: str, fuel: str) -> str:
    level = level.split("|")[0]
    if level.startswith("BEV") or fuel.startswith("Electric"):
        return "ev"
    if level.startswith("FCEV") or fuel.startswith("Fuel Cell"):
        return "fcev"
    if level.startswith("PHEV"):
        return "phev"
    if level.startswith("Mild"):
        return "mild"
    if "HEV" in level:
        return "hybrid"
    return ""


class Sweep:
    def __init__(self, groups: Dict[Tuple[int, str, str], List[Entry]]) -> None:
        self.groups = groups

    def entries(self, year: int, make: str, model: str) -> List[Entry]:
        """The configurations of one model-year; where vPIC has none under the model's name, those
        it files under the name with the make's before it (Mazda's "Mazda3" for the 3)."""
        mk = norm_make(make)
        return self.groups.get((year, mk, norm(model))) or self.groups.get((year, mk, mk + norm(model)), [])

    @staticmethod
    def agrees(e: Entry, displ: Optional[float], cylinders: Optional[int], electric: str, drive: str) -> bool:
        """Whether a decoded configuration has the EPA vehicle's engine (and drive where vPIC says)."""
        if electric in ("ev", "fcev"):
            if e.electric != electric:
                return False
        else:
            if e.electric in ("ev", "fcev"):
                return False
            if e.displ is not None and displ is not None and abs(e.displ - displ) > 0.06:
                return False
            if e.cylinders is not None and cylinders is not None and e.cylinders != cylinders:
                return False
            hybrid = electric in ("hybrid", "phev")
            if hybrid != (e.electric in ("hybrid", "phev")) and e.electric != "mild" and electric != "mild":
                return False
            if electric == "phev" and e.electric == "hybrid" or electric == "hybrid" and e.electric == "phev":
                return False
        if drive and e.drive and drive != e.drive and {drive, e.drive} != {"A", "4"}:
            return False
        return True

    def matching(self, year: int, make: str, model: str, displ: Optional[float], cylinders: Optional[int],
                 electric: str, drive: str) -> List[Entry]:
        return [e for e in self.entries(year, make, model) if self.agrees(e, displ, cylinders, electric, drive)]


def figures(entries: List[Entry]) -> Dict[str, Optional[float]]:
    """Median of each fact over the agreeing configurations that have it (None where none has)."""
    out: Dict[str, Optional[float]] = {}
    for key in ("hp", "curb", "wheelbase", "seats"):
        vals = [getattr(e, key) for e in entries if getattr(e, key) is not None]
        out[key] = median(vals) if vals else None
    prices = [e.price for e in entries if e.price and 5000 <= e.price <= 5_000_000]  # vPIC has a few typos
    out["price"] = median(prices) if prices else None
    doors = {e.doors for e in entries if e.doors is not None}
    out["doors"] = doors.pop() if len(doors) == 1 else None  # only where vPIC is unanimous
    return out


def read(path: Path) -> Sweep:
    """Read the sweep (light vehicles only: trucks, buses and incomplete chassis are skipped)."""
    groups: Dict[Tuple[int, str, str], List[Entry]] = {}
    seen = set()
    norms: Dict[Tuple[str, str], Tuple[str, str]] = {}
    skip = ("Truck", "Incomplete", "Bus", "Motor", "Fire", "Street", "Low Speed", "Trailer", "Step Van", "Off-Road")
    try:
        with gzip.open(path, "rt", encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            header = next(reader, [])
            need = ("year", "Make", "Model", "Trim", "Trim2", "Body Class", "Doors", "Drive Type", "Displacement (L)",
                    "Engine Number of Cylinders", "Electrification Level", "Fuel Type - Primary",
                    "Engine Brake (hp) From", "Curb Weight (pounds)", "Wheelbase (inches) From", "Number of Seats",
                    "Base Price ($)")
            missing = [c for c in need if c not in header]
            if missing:
                raise SourceError(f"{path}: not the vPIC sweep, missing columns {missing}")
            (c_year, c_make, c_model, c_trim, c_trim2, c_body, c_doors, c_drive, c_displ, c_cyl, c_elec, c_fuel,
             c_hp, c_curb, c_wb, c_seats, c_price) = (header.index(c) for c in need)
            for r in reader:
                body = r[c_body]
                if body.startswith(skip):
                    continue
                try:
                    year = int(r[c_year])
                except ValueError:
                    continue
                trim = " ".join(x for x in (r[c_trim].strip(), r[c_trim2].strip()) if x)
                e = Entry(
                    trim=trim, body=body, doors=_int(r[c_doors]), drive=_drive(r[c_drive]),
                    displ=_first(r[c_displ]), cylinders=_int(r[c_cyl]), electric=_electric(r[c_elec], r[c_fuel]),
                    hp=_int(r[c_hp]), curb=_int(r[c_curb]), wheelbase=_first(r[c_wb]), seats=_int(r[c_seats]),
                    price=_int(r[c_price]), hps=_all(r[c_hp]))
                names = (r[c_make], r[c_model])
                normed = norms.get(names)
                if normed is None:
                    normed = norms[names] = (norm_make(names[0]), norm(names[1]))
                key = (year, *normed)
                if (key, e) in seen:
                    continue
                seen.add((key, e))
                groups.setdefault(key, []).append(e)
    except (OSError, EOFError, csv.Error, UnicodeDecodeError) as exc:
        raise SourceError(f"{path}: unreadable vPIC sweep ({exc})") from None
    return Sweep(groups)


# alternatives are separated by "/", ",", ";", "&" or "and", but "R/T" and "H/K" are one name
_SPLIT = re.compile(r"\s*[/,;&]\s*|\s+and\s+")
_ONE_NAME = re.compile(r"\b([A-Za-z])/([A-Za-z])\b")


# a special edition closing a list is one name, its words none of the others'
# ("L/LE/SE/XLE/XSE/50th Anniv. Special Edition": not "L Anniv. Edition")
_EDITION = re.compile(r"(?i)\b(edition|ed\.|anniv\.?|anniversary|special)(?=\W|$)|^\d+(st|nd|rd|th)\b")


@lru_cache(maxsize=None)
def trim_names(value: str) -> Tuple[str, ...]:
    """One vPIC Trim value as the trim names it stands for: "L/LE/SE/XLE" -> L, LE, SE, XLE;
    "SE/XLE Hybrid" -> SE Hybrid, XLE Hybrid (a shared last word goes with each, unless the last
    name is a special edition: `_EDITION`, extends an earlier name, "XLE / XLE Premium", or closes
    on a grade of the generic ladder, "SR/SR5/TRD Sport"); the single words closing a list after a
    name led by a performance designation are its grades ("TRD Off Road/Pro/Sport" -> TRD Pro,
    TRD Sport)."""
    value = value.strip()
    if not value:
        return ()
    protected = _ONE_NAME.sub(lambda m: m.group(1) + "\x00" + m.group(2), value)
    parts = [p.replace("\x00", "/") for p in _SPLIT.split(protected) if p]
    if len(parts) > 1:
        last_words = parts[-1].split()
        first_words = parts[0].split()
        from .lineup import LADDER  # lineup reads this module: imported at the first call
        if (len(last_words) > 1 and all(len(p.split()) == 1 for p in parts[:-1]) and not _EDITION.search(parts[-1])
                and len(" ".join(last_words[1:])) > 1  # a closing grade letter is its own ("Altitude S")
                # a closing name that extends an earlier one or closes on a grade of its own is one
                # name ("XLE / XLE Premium", "SR/SR5/TRD Sport", "Ltd/SE Platinum": not "SR Sport")
                and norm(last_words[0]) not in {norm(p) for p in parts[:-1]}
                and last_words[1].upper() not in LADDER):
            tail = " ".join(last_words[1:])       # "SE/XLE Hybrid" -> SE Hybrid, XLE Hybrid
            parts = [f"{p} {tail}" for p in parts[:-1]] + [parts[-1]]
        elif (len(first_words) > 1 and all(len(p.split()) == 1 for p in parts[1:]) and "," not in value
              and first_words[-1].upper() in LADDER):
            # a comma list names each grade whole ("LX Pop, S, EX": not "LX S"), and so does a list
            # whose first name does not close on a grade of the generic ladder ("Big Horn/Lonestar",
            # "High Country / RS", "Work Truck/Fleet", EPA's "Limited AWD/SE": not "Big Lonestar")
            head = " ".join(first_words[:-1])     # "Hybrid XLE/SE" -> Hybrid XLE, Hybrid SE
            parts = [parts[0]] + [f"{head} {p}" for p in parts[1:]]
    # the single words closing a list after a name led by a performance designation are that
    # designation's grades ("SR/SR5/TRD Off Road/Pro/Sport" -> ..., TRD Off Road, TRD Pro, TRD
    # Sport; not "TRD Off Road Premium/Ltd/Ltd Night Shade")
    from .lineup import DESIGNATIONS
    for k, p in enumerate(parts[:-1]):
        words = p.split()
        if len(words) > 1 and words[0].upper() in DESIGNATIONS and all(len(q.split()) == 1 for q in parts[k + 1:]):
            parts[k + 1:] = [q if q.upper() == words[0].upper() else f"{words[0]} {q}" for q in parts[k + 1:]]
            break
    return tuple(parts)
