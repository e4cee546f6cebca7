"""Hybrid system horsepower: a reviewed table (``hybrid_system_hp.csv``).

EPA's Test Car List and vPIC rate a hybrid's combustion engine alone (2019 Prius: 96 hp; the
system gives 121). ``hybrid_system_hp.csv`` holds the combined system output of well-known
hybrid and plug-in hybrid lines, one row per make, model, model years and engine
(``1.8H`` hybrid, ``1.8P`` plug-in hybrid, as in ``lineups_reviewed.csv``), each row citing the
public page its figure comes from. Written from those pages, never from the raw sources.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from .lineup import _ENGINE_SPEC

FILE = Path(__file__).resolve().parent / "hybrid_system_hp.csv"
COLUMNS = ["make", "model", "years", "engines", "system_hp", "source"]
_TAG = {"hybrid": "H", "mild hybrid": "H", "plug-in hybrid": "P"}


@dataclass(frozen=True)
class SystemHp:
    make: str
    model: str
    first: int
    last: int
    displ: float
    tag: str        # "H" hybrid, "P" plug-in hybrid
    hp: int
    source: str


def read(path: Path = FILE) -> List[SystemHp]:
    out: List[SystemHp] = []
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != COLUMNS:
            raise ValueError(f"{path.name}: columns must be {COLUMNS}, not {reader.fieldnames}")
        for r in reader:
            m = _ENGINE_SPEC.match(r["engines"])
            if not m or m.group(2) not in ("H", "P"):
                raise ValueError(f"{path.name}: bad engine {r['engines']!r} (want e.g. 1.8H or 1.8P)")
            first, _, last = r["years"].partition("-")
            out.append(SystemHp(r["make"], r["model"], int(first), int(last or first), float(m.group(1)),
                                m.group(2), int(r["system_hp"]), r["source"].strip()))
    return out


@lru_cache(maxsize=1)
def _index() -> Dict[Tuple[str, str, int, str], List[SystemHp]]:
    idx: Dict[Tuple[str, str, int, str], List[SystemHp]] = {}
    for r in read():
        for y in range(r.first, r.last + 1):
            idx.setdefault((r.make, r.model, y, r.tag), []).append(r)
    return idx


def system_hp(make: str, model: str, year: int, displ: Optional[float], engine_type: str) -> Optional[int]:
    """The reviewed system horsepower of this hybrid or plug-in hybrid, or None."""
    tag = _TAG.get(engine_type)
    if tag is None or displ is None:
        return None
    for r in _index().get((make, model, year, tag), ()):
        if abs(r.displ - displ) <= 0.06:
            return r.hp
    return None
