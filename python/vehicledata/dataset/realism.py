"""Expectations over the whole built catalogue (issue 38): every realism rule of the builder is
a check here, a count over the database that must stay zero or under a stated bound.

    python -m vehicledata.dataset.realism [DB]     # prints every check, its count and its bound

`tests/test_expectations.py` runs them all in `make test`. Each check counts rows or groups of
the built SQLite database (never the builder's internals), so a rule that stops holding for any
model-year, reviewed or not, shows up here. Examples of the offending rows are printed with each
failing or non-zero count.
"""
from __future__ import annotations

import re
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

# Brands sold at mainstream prices: none of their rows reaches $150,000 (the Ford GT, a
# limited-run supercar, aside).
MAINSTREAM = ("Buick", "Chevrolet", "Chrysler", "Dodge", "Fiat", "Ford", "GMC", "Honda", "Hyundai", "Jeep", "Kia",
              "Mazda", "MINI", "Mitsubishi", "Nissan", "Ram", "Scion", "Subaru", "Suzuki", "Toyota", "Volkswagen")
MAINSTREAM_CAP = 150_000
MAINSTREAM_EXEMPT = (("Ford", "GT"),)

# Grades vPIC carries for other markets (Korea: GL, GLS, HGS, JSL, TAX, TOP; Canada: GX, GS,
# Volkswagen's Trendline, Comfortline, Highline, Execline, Jeep's North, and a bare SV of a
# mainstream brand other than Nissan, where SV is a US grade; Land Rover's SV is its Special
# Vehicles line; Latin America: Jeep's Longitude; Honda's DX, Canada's base grade after the 2012
# Civic, the last US one).
FOREIGN_GRADES = ("GL", "GLS", "HGS", "JSL", "TAX", "TOP", "GX", "GS", "SV", "TRENDLINE", "COMFORTLINE", "HIGHLINE",
                  "EXECLINE", "NORTH", "LONGITUDE", "DX")
US_SV_MAKES = ("Nissan", "Infiniti")

# Words naming an option package or a piece of equipment, never a trim.
PACKAGE_WORDS = re.compile(r"(?i)\b(package|pkg\d*|pkgs|leather|navigation|navi|nav|sunroof|moonroof|"
                           r"technology|tech|appearance|convenience|convenient|cold weather|towing|tow)\b")
# Names that are no trim at all: sizes, transmission codes, a Japanese layout code before a grade,
# screen sizes and brackets, chargers, bare numbers, vPIC's "not identified".
JUNK_TRIM = re.compile(r"(?i)^(large|small|medium|long|short|mt|at|cvt|ff|fr|mr|4wd|awd|2wd|fwd|rwd)$|"
                       r"^(ff|fr|mr)\s|[\"()]|\bmultimedia\b|\d+kw\b|charger|^\d+$|\bnot[\s-]*identified\b")

# Halo grades (Hellcat, Demon, ZL1, Trackhawk, GT500, TRX...): built only with the model year's
# strongest engine, so each of their rows is rated at least 80 % of it.
HALO = re.compile(r"(?i)\b(hellcat|demon|redeye|trackhawk|zl1|zr1|z06|gt500|trx|super stock|jailbreak|"
                  r"raptor r|black series)\b")
PERFORMANCE = re.compile(r"(?i)\b(hellcat|demon|redeye|trackhawk|zl1|z06|zr1|gt500|gt350|trx|raptor|"
                         r"super stock|srt|scat pack|type r|nismo|shelby|jailbreak)\b")

# A top trim's starting price over its base trim's, bounded by segment.
SPREAD_BOUND = {"Truck": 3.0, "SUV": 3.0, "Car": 2.6}
SPREAD_PERFORMANCE = 3.4     # a line with a performance grade (Challenger SXT to Demon)
YEAR_STEP = 0.15             # a trim's starting price moves at most this much between adjacent years...
YEAR_STEP_GENERATION = 0.35  # ...or this much where the line changes (engines, body) that year


@dataclass
class Result:
    name: str
    count: int
    bound: int
    what: str
    examples: List[Any]

    @property
    def ok(self) -> bool:
        return self.count <= self.bound


def _q(con: sqlite3.Connection, sql: str, *args: object) -> List[Any]:
    return con.execute(sql, args).fetchall()


def _ph(values: Sequence[str]) -> str:
    return ",".join("?" * len(values))


def mainstream_over_cap(con: sqlite3.Connection) -> List[Any]:
    rows = _q(con, f"SELECT year, make, model, trim, msrp FROM trims WHERE make IN ({_ph(MAINSTREAM)}) "
                   f"AND msrp > ? ORDER BY msrp DESC", *MAINSTREAM, MAINSTREAM_CAP)
    return [r for r in rows if (r[1], r[2]) not in MAINSTREAM_EXEMPT]


def _starts(con: sqlite3.Connection, where: str = "1") -> Dict[Tuple[int, str, str], Dict[str, int]]:
    """Starting price (cheapest row) of each trim of each model-year, over the rows of its main
    powertrain (gas where the model-year has gas rows, else its powertrain with most trims: a
    hybrid's premium is no ladder step, a fuel-cell car no step above a plug-in)."""
    out: Dict[Tuple[int, str, str], Dict[str, int]] = {}
    gas: Dict[Tuple[int, str, str], Dict[str, int]] = {}
    other: Dict[Tuple[int, str, str, str], Dict[str, int]] = {}
    for year, make, model, etype, trim, p in _q(con, f"""SELECT t.year, t.make, t.model, e.engine_type, t.trim,
            min(t.msrp) FROM trims t JOIN engines e ON e.id = t.id WHERE {where}
            GROUP BY t.year, t.make, t.model, e.engine_type, t.trim"""):
        if etype in ("gas", "flex-fuel (FFV)"):
            d = gas.setdefault((year, make, model), {})
            d[trim] = min(p, d.get(trim, p))
        else:
            other.setdefault((year, make, model, etype), {})[trim] = p
    out.update(gas)
    # a model-year without gas rows: the ladder of its most common powertrain
    best: Dict[Tuple[int, str, str], Dict[str, int]] = {}
    for (year, make, model, _), d in sorted(other.items()):
        if (year, make, model) not in gas and len(d) > len(best.get((year, make, model), {})):
            best[(year, make, model)] = d
    out.update(best)
    return out


def inverted_ladders(con: sqlite3.Connection) -> List[Any]:
    """Model-years whose ladder (the builder's base-to-top order of its trims) is inverted by
    starting price: the top trim starts below the base trim."""
    from .rows import ladder_order
    out = []
    for (year, make, model), starts in sorted(_starts(con, "t.year >= 2015").items()):
        if len(starts) < 2:
            continue
        order = ladder_order(make, model, year, starts)
        if starts[order[-1]] < starts[order[0]]:
            out.append((year, make, model, order[0], starts[order[0]], order[-1], starts[order[-1]]))
    return out


def _segment(con: sqlite3.Connection) -> Dict[Tuple[int, str, str], str]:
    out: Dict[Tuple[int, str, str], str] = {}
    for year, make, model, body in _q(con, "SELECT year, make, model, group_concat(DISTINCT type) FROM bodies "
                                           "WHERE year >= 2015 GROUP BY year, make, model"):
        kinds = set((body or "").split(","))
        out[(year, make, model)] = ("Truck" if kinds & {"Truck", "Cargo Van", "Passenger Van"} else
                                    "SUV" if kinds & {"SUV", "Minivan"} else "Car")
    return out


def wide_ladders(con: sqlite3.Connection) -> List[Any]:
    """Model-years whose dearest trim starts more than the segment's bound above the cheapest."""
    seg = _segment(con)
    out = []
    for key, starts in sorted(_starts(con, "t.year >= 2015").items()):
        lo, hi = min(starts.values()), max(starts.values())
        bound = SPREAD_PERFORMANCE if any(PERFORMANCE.search(t) for t in starts) else SPREAD_BOUND[seg.get(key, "Car")]
        if lo and hi / lo > bound:
            out.append((*key, lo, hi, round(hi / lo, 2)))
    return out


def year_jumps(con: sqlite3.Connection) -> List[Any]:
    """A model's base (cheapest) price moving more than 15 % between adjacent model years (35 %
    where its engines change that year: a new generation or powertrain)."""
    base: Dict[Tuple[str, str], Dict[int, int]] = {}
    engines: Dict[Tuple[str, str, int], set] = {}
    for year, make, model, p in _q(con, "SELECT year, make, model, min(msrp) FROM trims WHERE year >= 2015 "
                                        "GROUP BY year, make, model"):
        base.setdefault((make, model), {})[year] = p
    for year, make, model, size, etype in _q(con, "SELECT DISTINCT year, make, model, size, engine_type FROM engines "
                                                  "WHERE year >= 2015"):
        engines.setdefault((make, model, year), set()).add((size, etype))
    out = []
    for (make, model), by_year in sorted(base.items()):
        for y in sorted(by_year):
            if y - 1 not in by_year:
                continue
            a, b = by_year[y - 1], by_year[y]
            change = abs(b - a) / a
            same = engines.get((make, model, y)) == engines.get((make, model, y - 1))
            if change > (YEAR_STEP if same else YEAR_STEP_GENERATION):
                out.append((make, model, y - 1, a, y, b))
    return out


def foreign_grades(con: sqlite3.Connection) -> List[Any]:
    """2015-2020 year/model groups with a grade vPIC carries for Korea or Canada."""
    rows = _q(con, f"""SELECT DISTINCT year, make, model, trim FROM trims WHERE year BETWEEN 2015 AND 2020""")
    groups: Dict[Tuple[int, str, str], List[str]] = {}
    for year, make, model, trim in rows:
        words = {w.upper() for w in re.split(r"[\s/]+", trim)}
        bad = words & set(FOREIGN_GRADES)
        if make in US_SV_MAKES or make not in MAINSTREAM or trim.upper() != "SV":
            bad.discard("SV")  # Nissan's SV is a US grade, Land Rover's "SV Autobiography" its own
        if bad and not re.match(r"(?i)^(GLS|GL|GS|GX)\b", model):
            groups.setdefault((year, make, model), []).append(trim)
    return [(*k, "|".join(sorted(v))) for k, v in sorted(groups.items())]


def package_trims(con: sqlite3.Connection) -> List[Any]:
    """Year/model groups with a trim named after a package or equipment ("Technology Package")."""
    groups: Dict[Tuple[int, str, str], List[str]] = {}
    for year, make, model, trim in _q(con, "SELECT DISTINCT year, make, model, trim FROM trims"):
        if PACKAGE_WORDS.search(trim):
            groups.setdefault((year, make, model), []).append(trim)
    return [(*k, "|".join(sorted(v))) for k, v in sorted(groups.items())]


def hybrid_names_on_gas(con: sqlite3.Connection, first: int = 1984) -> List[Any]:
    """Rows named Hybrid/HEV whose engine is no hybrid."""
    return _q(con, """SELECT t.year, t.make, t.model, t.trim, e.engine_type FROM trims t JOIN engines e ON e.id = t.id
        WHERE t.year >= ? AND ((' ' || lower(t.trim) || ' ') LIKE '% hybrid %' OR (' ' || lower(t.trim) || ' ')
        LIKE '% hev %' OR (' ' || lower(t.trim) || ' ') LIKE '% phev %')
        AND e.engine_type NOT IN ('hybrid', 'mild hybrid', 'plug-in hybrid')""", first)


def junk_names(con: sqlite3.Connection) -> List[Any]:
    return [r for r in _q(con, "SELECT DISTINCT year, make, model, trim FROM trims WHERE year >= 2015")
            if JUNK_TRIM.search(str(r[3]))]


def performance_engines(con: sqlite3.Connection) -> List[Any]:
    """Rows of a halo grade whose engine is rated under 80 % of the model year's strongest."""
    rows = _q(con, """SELECT t.year, t.make, t.model, t.trim, e.size, e.horsepower_hp FROM trims t
        JOIN engines e ON e.id = t.id WHERE t.year >= 2015""")
    top: Dict[Tuple[int, str, str], int] = {}
    for year, make, model, _, _, hp in rows:
        if hp:
            top[(year, make, model)] = max(top.get((year, make, model), 0), int(hp))
    out = []
    for year, make, model, trim, size, hp in rows:
        if HALO.search(trim) and hp and hp < 0.8 * top[(year, make, model)]:
            out.append((year, make, model, trim, size, hp, top[(year, make, model)]))
    return out


def turbo_twins(con: sqlite3.Connection) -> List[Any]:
    """Model-years selling one displacement with and without a turbo (or supercharger) where the
    naturally aspirated engine is rated at or above the boosted one."""
    out = []
    for year, make, model, size, na, boost in _q(con, """SELECT year, make, model, size,
            max(CASE WHEN engine NOT LIKE '%Turbo%' AND engine NOT LIKE '%S/C%' THEN horsepower_hp END),
            min(CASE WHEN engine LIKE '%Turbo%' OR engine LIKE '%S/C%' THEN horsepower_hp END)
            FROM (SELECT e.year, e.make, e.model, e.size, e.horsepower_hp,
                  substr(t.description, instr(t.description, '(')) AS engine FROM engines e
                  JOIN trims t ON t.id = e.id WHERE e.year >= 2015 AND e.engine_type IN ('gas', 'flex-fuel (FFV)')
                  AND e.horsepower_hp IS NOT NULL)
            GROUP BY year, make, model, size"""):
        if na is not None and boost is not None and na >= boost:
            out.append((year, make, model, size, na, boost))
    return out


def curb_vs_test_weight(con: sqlite3.Connection) -> List[Any]:
    """Curb weights at or above 5 % over a derived one would be: rows whose curb weight is not
    plausible for their body (under 1,500 lb or over 9,000 lb)."""
    return _q(con, "SELECT year, make, model, trim, curb_weight FROM bodies WHERE year >= 2015 "
                   "AND curb_weight IS NOT NULL AND (curb_weight < 1500 OR curb_weight > 9000)")


def one_curb_for_all_engines(con: sqlite3.Connection) -> List[Any]:
    """2015-2024 model-years selling several engine sizes whose rows all carry one curb weight
    (vPIC's heaviest configuration's figure served for every engine)."""
    return _q(con, """SELECT b.year, b.make, b.model, min(b.curb_weight), count(DISTINCT e.size) FROM bodies b
        JOIN engines e ON e.id = b.id WHERE b.year BETWEEN 2015 AND 2024 AND b.curb_weight IS NOT NULL
        AND e.size IS NOT NULL GROUP BY b.year, b.make, b.model
        HAVING count(DISTINCT e.size) > 1 AND count(DISTINCT b.curb_weight) = 1""")


CHECKS: List[Tuple[str, int, str, Callable[[sqlite3.Connection], List[Any]]]] = [
    ("mainstream_rows_over_150k", 0, "rows of a mainstream brand priced over $150,000 (Ford GT aside), all years",
     mainstream_over_cap),
    ("inverted_ladders", 3, "model-years (2015+) whose top trim starts below their base trim", inverted_ladders),
    ("wide_ladders", 5, "model-years (2015+) whose dearest trim starts over the segment's bound above the cheapest "
     f"(trucks/SUVs {SPREAD_BOUND['Truck']}x, cars {SPREAD_BOUND['Car']}x, performance lines {SPREAD_PERFORMANCE}x)",
     wide_ladders),
    ("year_to_year_jumps", 220, "model base prices moving > 15 % between adjacent years (> 35 % where the engines "
     "change)", year_jumps),
    ("foreign_grades_2015_2020", 0, "2015-2020 year/model groups with a Korean or Canadian vPIC grade", foreign_grades),
    ("package_named_trim_groups", 20, "year/model groups with a trim named after a package or equipment",
     package_trims),
    ("hybrid_named_gas_rows", 0, "rows named Hybrid/HEV on an engine that is no hybrid, all years",
     hybrid_names_on_gas),
    ("junk_trim_names", 0, "2015+ trims named as a size, a transmission or a layout code (Large, MT, FF LE)",
     junk_names),
    ("halo_grade_weak_engine", 0, "2015+ rows of a halo grade (Hellcat, Demon, ZL1, Trackhawk, GT500...) rated "
     "under 80 % of the model year's strongest engine", performance_engines),
    ("turbo_rated_as_na", 0, "2015+ model-years whose non-turbo engine of a size is rated at or above the turbo one",
     turbo_twins),
    ("one_curb_weight_for_all_engines", 150, "2015-2024 model-years with several engine sizes and one curb weight "
     "for all of them", one_curb_for_all_engines),
    ("implausible_curb_weights", 0, "2015+ curb weights under 1,500 lb or over 9,000 lb", curb_vs_test_weight),
]


def run(db: Path) -> List[Result]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out = []
        for name, bound, what, fn in CHECKS:
            found = fn(con)
            out.append(Result(name, len(found), bound, what, found[:8]))
        return out
    finally:
        con.close()


def report(results: List[Result], examples: bool = True) -> str:
    lines = []
    for r in results:
        lines.append(f"{'ok  ' if r.ok else 'FAIL'} {r.name:32s} {r.count:6d} (bound {r.bound})  {r.what}")
        if examples and r.count:
            lines.extend(f"       {e}" for e in r.examples[:5])
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        db = Path(argv[0])
    else:
        from . import default_db_path
        db = Path(default_db_path())
    results = run(db)
    print(report(results))
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
