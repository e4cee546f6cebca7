"""Catalogue realism measured against tests/data/realism_reference.csv (well-known 2015-2020
vehicles, each value with the public page it comes from): shared by tests/test_realism.py and
the figures in docs/reports/dataset.md (`python tests/realism.py [DB]` prints them)."""
from __future__ import annotations

import csv
import re
import sqlite3
import statistics
import sys
from pathlib import Path
from typing import Dict, List, Optional

REFERENCE = Path(__file__).resolve().parent / "data" / "realism_reference.csv"


def norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def reference() -> List[Dict[str, str]]:
    with open(REFERENCE, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _pct(a: float, b: float) -> float:
    return abs(a - b) / b * 100.0


def measure(db: Path) -> Dict[str, float]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        base_ok = 0
        lineup_shares: List[float] = []
        base_err: List[float] = []
        top_err: List[float] = []
        hp_err: List[float] = []
        refs = reference()
        for r in refs:
            rows = con.execute(
                "SELECT t.trim, t.msrp, e.horsepower_hp FROM trims t JOIN engines e ON e.id = t.id "
                "WHERE t.year = ? AND t.make = ? AND t.model = ? ORDER BY t.msrp, t.id",
                (int(r["year"]), r["make"], r["model"])).fetchall()
            if not rows:
                lineup_shares.append(0.0)
                continue
            names = {norm(t) for t, _, _ in rows}
            base_trim, base_msrp, _ = rows[0]
            if norm(base_trim) == norm(r["base_trim"]):
                base_ok += 1
            want = [t for t in r["lineup"].split("|") if t]
            lineup_shares.append(sum(norm(t) in names for t in want) / len(want))
            base_err.append(_pct(base_msrp, float(r["base_msrp"])))
            hps = [hp for t, _, hp in rows if hp and norm(t) == norm(r["base_trim"])] or \
                  [hp for _, _, hp in rows if hp]
            if hps:
                hp_err.append(_pct(min(hps), float(r["base_hp"])))
            if r["top_trim"]:
                tops = [m for t, m, _ in rows if norm(t) == norm(r["top_trim"])]
                if tops:
                    top_err.append(_pct(max(tops), float(r["top_msrp"])))
        dup, = con.execute(
            "SELECT count(*) FROM (SELECT 1 FROM trims GROUP BY year, lower(make), lower(model), lower(trim), "
            "lower(description) HAVING count(*) > 1)").fetchone()
        gas_hybrid, = con.execute(
            "SELECT count(*) FROM trims t JOIN engines e ON e.id = t.id WHERE (' ' || lower(t.trim) || ' ') "
            "LIKE '% hybrid %' AND e.engine_type NOT IN ('hybrid', 'mild hybrid', 'plug-in hybrid')").fetchone()
        one_name, groups = con.execute(
            "SELECT sum(n = 1), count(*) FROM (SELECT count(DISTINCT trim) AS n FROM trims WHERE year BETWEEN 2015 "
            "AND 2020 GROUP BY year, make, model HAVING count(*) >= 3)").fetchone()
    finally:
        con.close()
    n = len(refs)
    return {
        "vehicles": n,
        "base_trim_right_pct": 100.0 * base_ok / n,
        "lineup_70_pct": 100.0 * sum(s >= 0.7 for s in lineup_shares) / n,
        "lineup_mean_pct": 100.0 * statistics.mean(lineup_shares),
        "base_msrp_median_err_pct": statistics.median(base_err),
        "upper_msrp_median_err_pct": statistics.median(top_err) if top_err else float("nan"),
        "upper_priced": len(top_err),
        "hp_median_err_pct": statistics.median(hp_err),
        "duplicate_groups": dup,
        "gas_only_hybrid_rows": gas_hybrid,
        "one_trim_model_years_pct": 100.0 * (one_name or 0) / groups,
    }


# Makes by US sales (largest first, 2015-2020): the order in which the worst groups are listed.
# Ford Motor Co. VINs carry no trim (SOURCES.md): vPIC's "trims" there are body, cab and drive words.
NO_TRIM_IN_VIN = ("Ford", "Lincoln")
# words vPIC adds to a trim name that the catalogue keeps in the description, and GM's "1LT"-style codes
_NOISE = re.compile(r"^(fwd|awd|rwd|4wd|2wd|4x4|4x2|coupe|convertible|sedan|hatchback|wagon|hev|phev|fhev|"
                    r"[0-9][a-z]{2}|[a-z]{2}[0-9])$")

# vPIC names that are plant or equipment codes, not trims a buyer orders ("G Grade", "Fleet")
_CODES = frozenset(("grade", "package", "emissions", "fleet", "equipment", "group", "std", "police", "services"))
# equipment words vPIC adds to a grade ("LT w/ ...", Honda's "EX Sensing", "EXL-N" navigation, "-R"/"RES"
# rear entertainment): set aside as the catalogue's trim rule (dataset/lineup.py) sets them aside
_EQUIPMENT = frozenset(("w", "honda", "sensing", "navi", "res", "n", "r", "nr"))
# vPIC names that are no US trim (issue 38): another market's grades (Korea: GL, GLS, HGS, JSL, TAX,
# TOP; Canada: GX, GS, Audi's Komfort/Progressiv/Technik), option packages and equipment ("Technology Package", "Leather", "Moonroof"),
# transmission and layout codes ("MT", "FF"): set aside as the trim rule sets them aside
_NOT_US = frozenset(("gl", "gls", "hgs", "jsl", "tax", "top", "gx", "gs", "komfort", "progressiv", "technik"))
_PACKAGE = re.compile(r"(?i)\b(package|pkg|technology|tech|leather|moonroof|sunroof|nav|navigation|convenience|"
                      r"appearance|style|eyesight|keyless)\b|^(mt|at|cvt|ff|large|long)$")


def _trim_words(name: str, served: bool = False) -> frozenset:
    words = [w for w in re.split(r"[^a-z0-9]+", re.sub(r"(?i)\bEXL\b", "EX-L", name).lower()) if w]
    if not served and len(words) > 1:
        words = [w for w in words if w not in _EQUIPMENT] or words
    kept = frozenset(w for w in words if not _NOISE.match(w))
    return kept or frozenset(words) if served else kept  # a served "1LT" (Camaro's grades) stays a name


POPULAR = ("Ford", "Chevrolet", "Toyota", "Honda", "Nissan", "Jeep", "Ram", "Hyundai", "Kia", "Subaru", "GMC",
           "Dodge", "Volkswagen", "Mazda", "Tesla", "BMW", "Mercedes-Benz", "Lexus", "Audi", "Buick", "Chrysler")


def independent(db: Path, sources: Path) -> Dict[str, object]:
    """Second check, from the raw sources and not from hand-written reference rows: every 2015-2020
    (year, make, model) group whose vPIC full sweep names trims, the share of vPIC's trim names the
    catalogue serves; and of every served row whose engine the EPA Test Car List tested (same model
    year, displacement, cylinders, model word), the share whose hp is within 5 % of a tested one."""
    from vehicledata.dataset import sweep as sweep_mod, testcar
    sw = sweep_mod.read(sources / sweep_mod.FILE)
    tested: Dict[tuple, List[tuple]] = {}
    for path in testcar.files_in(sources / "epa-testcar"):
        for c in testcar.read_file(path):
            if 2015 <= c.year <= 2020 and c.hp:
                tested.setdefault((c.year, round(c.displ, 1), c.cylinders), []).append(
                    (set(re.split(r"[^a-z0-9]+", c.model.lower())), c.hp))
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT t.year, t.make, t.model, t.trim, e.size, e.cylinders, e.horsepower_hp FROM trims t "
            "JOIN engines e ON e.id = t.id WHERE t.year BETWEEN 2015 AND 2020").fetchall()
    finally:
        con.close()
    served: Dict[tuple, List[frozenset]] = {}
    hp_ok = hp_checked = 0
    for year, make, model, trim, size, cyl, hp in rows:
        served.setdefault((year, make, model), []).append(_trim_words(trim, served=True))
        if not hp:
            continue
        try:
            key = (year, round(float(size or 0.0), 1), int(re.sub(r"[^0-9]", "", cyl or "") or 0))
        except ValueError:
            continue
        word = norm(model.split()[0]) if model.split() else ""
        cands = [h for words, h in tested.get(key, ()) if word in {norm(w) for w in words}]
        if cands:
            hp_checked += 1
            hp_ok += any(_pct(hp, h) <= 5.0 for h in cands)
    groups = []
    for (year, make, model), names in served.items():
        if make in NO_TRIM_IN_VIN:
            continue
        # a vPIC name is served when a served trim has all its words (noise words aside: vPIC "Hybrid"
        # in "Hybrid XLE") or all of the served trim's words are in it ("LT" for vPIC "LT 1LT")
        want = {_trim_words(n) for e in sw.entries(year, make, model) for n in sweep_mod.trim_names(e.trim)
                if not _PACKAGE.search(n.strip()) and not (n.split() and n.split()[0].lower() in _NOT_US)
}
        want = {w for w in want if w and not w & _CODES}
        if want:
            have = {w for w in want if any(t and (t <= w or w <= t) for t in names)}
            missing = sorted(" ".join(sorted(w)) for w in want - have)
            share = len(have) / len(want)
            rank = POPULAR.index(make) if make in POPULAR else len(POPULAR)
            groups.append((rank, share, year, make, model, missing))
    worst = sorted((g for g in groups if g[0] < len(POPULAR) and g[1] < 0.7), key=lambda g: (g[0], g[1]))[:30]
    return {
        "vpic_groups": len(groups),
        "vpic_trims_present_mean_pct": 100.0 * statistics.mean(g[1] for g in groups),
        "vpic_groups_70_pct": 100.0 * sum(g[1] >= 0.7 for g in groups) / len(groups),
        "hp_rows_checked": hp_checked,
        "hp_within_5pct_of_tested_pct": 100.0 * hp_ok / hp_checked if hp_checked else float("nan"),
        "worst": [f"{y} {mk} {md}: {100 * s:.0f} % (missing {', '.join(miss[:6])})"
                  for _, s, y, mk, md, miss in worst],
    }


def main(argv: Optional[List[str]] = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args:
        db = Path(args[0])
    else:
        from vehicledata import dataset
        db = dataset.ensure_database()
    for k, v in measure(db).items():
        print(f"{k:<28} {v:.1f}" if isinstance(v, float) else f"{k:<28} {v}")
    import os
    sources = Path(os.environ.get("VEHICLEDATA_SOURCES") or Path(__file__).resolve().parents[1] / "data")
    if (sources / "vpic-full-sweep-2015-2024.csv.gz").exists():
        print("\n# independent check: vPIC full sweep trims, EPA Test Car List hp (2015-2020)")
        for k, v in independent(db, sources).items():
            if isinstance(v, list):
                print(f"{k}:")
                for line in v:
                    print(f"  {line}")
            else:
                print(f"{k:<32} {v:.1f}" if isinstance(v, float) else f"{k:<32} {v}")


if __name__ == "__main__":
    main()
