"""Catalogue realism measured against tests/data/realism_reference.csv (well-known 2015-2024
vehicles, each value with the public page it comes from): shared by tests/test_realism.py and
the figures in docs/reports/dataset.md (`python tests/realism.py [DB]` prints them, both parts).

The reference set has two parts (its `part` column, issue 38). `tuning`: the rows the builder's
rules may be tuned on: every row written before the split (the rules were written looking at
them) and every row whose make and model appear in a reviewed table of the builder
(msrp_trims.csv, msrp_lines.csv, lineups_reviewed.csv, base_trims.csv, msrp_reference.csv, any
year). `held-out`: every other row; no rule may be changed for them, and `held_out_is_clean`
checks that no reviewed table names one of their models. Empty cells are facts the writer was not
sure of: a measure counts only the rows that have its fact."""
from __future__ import annotations

import csv
import re
import sqlite3
import statistics
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Set, Tuple

REFERENCE = Path(__file__).resolve().parent / "data" / "realism_reference.csv"
PARTS = ("tuning", "held-out")
# the builder's reviewed tables: a model named in one of them had its values patched or reviewed
REVIEWED_TABLES = ("msrp_trims.csv", "msrp_lines.csv", "lineups_reviewed.csv", "base_trims.csv",
                   "msrp_reference.csv")
# issue 38's targets for the held-out part (share of model-years, %)
TARGETS = {"base_msrp_within_5_pct": 75.0, "top_msrp_within_5_pct": 60.0, "base_trim_right_pct": 90.0,
           "lineup_right_pct": 80.0, "curb_weight_within_4_pct": 70.0}


def norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def reference(part: Optional[str] = None) -> List[Dict[str, str]]:
    with open(REFERENCE, newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if part is None or r["part"] == part]


def reviewed_models() -> Set[Tuple[str, str]]:
    """(make, model) of every row of the builder's reviewed tables."""
    from vehicledata.dataset import rows as rows_mod
    here = Path(rows_mod.__file__).resolve().parent
    out: Set[Tuple[str, str]] = set()
    for name in REVIEWED_TABLES:
        with open(here / name, newline="", encoding="utf-8") as fh:
            out.update((r["make"], r["model"]) for r in csv.DictReader(fh))
    return out


def held_out_is_clean() -> List[Tuple[str, str, str]]:
    """Held-out rows whose model a reviewed table names (must be none)."""
    reviewed = reviewed_models()
    return [(r["year"], r["make"], r["model"]) for r in reference("held-out") if (r["make"], r["model"]) in reviewed]


def _pct(a: float, b: float) -> float:
    return abs(a - b) / b * 100.0


# powertrain and drive words a served trim name may carry beside its grade ("Hybrid LE", "LE HV",
# "SE AWD"): the grade is what the lineup measure compares
_POWERTRAIN = re.compile(r"(?i)\b(hybrid|hv|hev|phev|plug-in|plugin|prime|energi|diesel|ecodiesel|tdi|electric|ev|"
                         r"awd|4wd|fwd|rwd|2wd|4x4|4x2|4matic|quattro|v6|v8)\b")


def _grade_keys(name: str) -> Set[str]:
    keys = {norm(name)}
    bare = norm(_POWERTRAIN.sub(" ", name))
    if bare:
        keys.add(bare)
    return keys


def lineup_score(served: Iterable[str], real: List[str]) -> Tuple[float, int]:
    """Share of the real names served, and how many served names are none of them (foreign)."""
    want = {norm(t) for t in real}
    have: Set[str] = set()
    foreign = 0
    for name in set(served):
        keys = _grade_keys(name)
        have |= keys & want
        foreign += not keys & want
    return len(have) / len(want), foreign


def _share(hits: List[bool]) -> float:
    return 100.0 * sum(hits) / len(hits) if hits else float("nan")


def _row(con: sqlite3.Connection, r: Dict[str, str]) -> Dict[str, object]:
    """One reference row against the catalogue: each measure's hit (True/False; absent when the row
    has no such fact), the errors behind them, and what the catalogue serves."""
    rows = con.execute(
        "SELECT t.trim, t.msrp, e.horsepower_hp, b.curb_weight FROM trims t JOIN engines e ON e.id = t.id "
        "JOIN bodies b ON b.id = t.id WHERE t.year = ? AND t.make = ? AND t.model = ? ORDER BY t.msrp, t.id",
        (int(r["year"]), r["make"], r["model"])).fetchall()
    want = [t for t in r["lineup"].split("|") if t]
    out: Dict[str, object] = {"served": rows}
    if not rows:  # a model-year the catalogue lacks misses every measure
        for key, fact in (("base_trim", r["base_trim"]), ("base_msrp", r["base_msrp"]), ("lineup", want),
                          ("top_msrp", r["top_trim"] and r["top_msrp"]), ("curb_weight", r["curb_weight"])):
            if fact:
                out[key] = False
        if want:
            out["lineup_share"] = 0.0
        return out
    base_trim, base_msrp = rows[0][0], rows[0][1]
    if r["base_trim"]:
        out["base_trim"] = norm(base_trim) == norm(r["base_trim"])
    if want:
        share, foreign = lineup_score((t for t, _, _, _ in rows), want)
        out["lineup_share"] = share
        out["lineup"] = share >= 0.8 and foreign <= 1
    if r["base_msrp"]:
        out["base_err"] = _pct(base_msrp, float(r["base_msrp"]))
        out["base_msrp"] = out["base_err"] <= 5.0
    if r["base_hp"]:
        hps = [hp for t, _, hp, _ in rows if hp and norm(t) == norm(r["base_trim"])] or \
              [hp for _, _, hp, _ in rows if hp]
        if hps:
            out["hp_err"] = _pct(min(hps), float(r["base_hp"]))
    if r["top_trim"] and r["top_msrp"]:
        tops = [m for t, m, _, _ in rows if norm(t) == norm(r["top_trim"])]
        if tops:
            out["top_err"] = _pct(min(tops), float(r["top_msrp"]))
        out["top_msrp"] = bool(tops) and float(out["top_err"]) <= 5.0  # type: ignore[arg-type]
    if r["curb_weight"]:
        weights = [w for t, _, _, w in rows if w and norm(t) == norm(r["base_trim"])] or \
                  [w for w in [rows[0][3]] if w]
        out["curb_weight"] = bool(weights) and _pct(min(weights), float(r["curb_weight"])) <= 4.0
    return out


def measure(db: Path, refs: Optional[List[Dict[str, str]]] = None) -> Dict[str, float]:
    """The reference rows `refs` (default: the whole set) against the catalogue `db`. Issue 38's
    measures are shares (%) of the rows that have the fact; a model-year the catalogue lacks is a
    miss on every one. Base: the model-year's cheapest row (its trim name and MSRP); top: the top
    trim's starting price (its cheapest row); curb weight: the lightest row of the base trim (else
    the cheapest row); lineup right: >= 80 % of the real names served and at most one served name
    that is none of them (a powertrain or drive word beside a grade, "Hybrid LE", "SE AWD", is the
    grade)."""
    refs = reference() if refs is None else refs
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        scored = [_row(con, r) for r in refs]
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

    def hits(key: str) -> List[bool]:
        return [bool(s[key]) for s in scored if key in s]

    def vals(key: str) -> List[float]:
        return [float(s[key]) for s in scored if key in s]  # type: ignore[arg-type]

    def med(xs: List[float]) -> float:
        return statistics.median(xs) if xs else float("nan")

    shares = vals("lineup_share")
    return {
        "vehicles": len(refs),
        "makes": len({r["make"] for r in refs}),
        # issue 38's measures: % of the model-years that have the fact (rows: how many have it)
        "base_msrp_within_5_pct": _share(hits("base_msrp")),
        "base_msrp_rows": len(hits("base_msrp")),
        "top_msrp_within_5_pct": _share(hits("top_msrp")),
        "top_msrp_rows": len(hits("top_msrp")),
        "base_trim_right_pct": _share(hits("base_trim")),
        "base_trim_rows": len(hits("base_trim")),
        "lineup_right_pct": _share(hits("lineup")),
        "lineup_rows": len(hits("lineup")),
        "curb_weight_within_4_pct": _share(hits("curb_weight")),
        "curb_weight_rows": len(hits("curb_weight")),
        # issue 20's measures
        "lineup_70_pct": _share([s >= 0.7 for s in shares]),
        "lineup_mean_pct": 100.0 * statistics.mean(shares) if shares else float("nan"),
        "base_msrp_median_err_pct": med(vals("base_err")),
        "upper_msrp_median_err_pct": med(vals("top_err")),
        "upper_priced": len(vals("top_err")),
        "hp_median_err_pct": med(vals("hp_err")),
        "duplicate_groups": dup,
        "gas_only_hybrid_rows": gas_hybrid,
        "one_trim_model_years_pct": 100.0 * (one_name or 0) / groups,
    }


def misses(db: Path, refs: List[Dict[str, str]]) -> List[str]:
    """One line per reference row that misses an issue-38 measure: which, and what is served."""
    out = []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        for r in refs:
            s = _row(con, r)
            bad = [k for k in ("base_msrp", "top_msrp", "base_trim", "lineup", "curb_weight") if s.get(k) is False]
            if bad:
                names: Dict[str, int] = {}
                for t, m, _, _ in s["served"]:  # type: ignore[attr-defined]
                    names.setdefault(t, m)
                served = ", ".join(f"{t} {m}" for t, m in list(names.items())[:10]) or "nothing served"
                out.append(f"{r['year']} {r['make']} {r['model']}: {'/'.join(bad)} (served: {served})")
    finally:
        con.close()
    return out


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


def parts_table(db: Path, parts: Tuple[str, ...] = PARTS) -> str:
    """The parts' scores side by side (default both), with issue 38's targets for the held-out part."""
    m = {part: measure(db, reference(part)) for part in parts}
    lines = [f"{'measure':<28} " + " ".join(f"{p:>10}" for p in parts) + "  held-out target",
             f"{'model-years / makes':<28} " + " ".join(f"{m[p]['vehicles']:>4} / {m[p]['makes']:<3}" for p in parts)]
    for key, target in TARGETS.items():
        rows = key.replace("_within_5_pct", "_rows").replace("_within_4_pct", "_rows").replace("_right_pct", "_rows")
        cells = [f"{m[p][key]:5.1f} ({m[p][rows]:>3})" for p in parts]
        lines.append(f"{key:<28} " + " ".join(f"{c:>10}" for c in cells) + f"  >= {target:.0f}")
    for key in ("base_msrp_median_err_pct", "upper_msrp_median_err_pct", "hp_median_err_pct", "lineup_70_pct"):
        lines.append(f"{key:<28} " + " ".join(f"{m[p][key]:10.1f}" for p in parts))
    return "\n".join(lines)


# the per-model reviewed tables; the make-level ones (msrp_makes.csv, make_ladders.csv, the make's
# spread from msrp_lines.csv, hybrid_system_hp.csv) stay on in the proxy build
PER_MODEL_TABLES = ("msrp_lines.csv", "msrp_trims.csv", "lineups_reviewed.csv", "base_trims.csv")


def build_proxy(out: Path, sources: Optional[Path] = None) -> Path:
    """Build the catalogue at `out` with the per-model reviewed tables (PER_MODEL_TABLES) switched
    off: what the builder's general rules alone make of the tuning part's models, the stand-in for
    the held-out part while rules are written (issue 38; the held-out part rests). Run it in a
    process of its own: the switch patches the builder's modules in place."""
    from vehicledata.dataset import builder, lineup, naming, prices
    prices.line = lambda year, make, model: None             # msrp_lines.csv (make_spread still reads it)
    prices.trim_prices = lambda: {}                           # msrp_trims.csv
    prices.trim_price = lambda year, make, model, trim: None
    lineup.read_reviewed = lambda path=lineup.REVIEWED_FILE: []  # lineups_reviewed.csv
    lineup._reviewed_index.cache_clear()
    naming.BASE_TRIMS = {}                                    # base_trims.csv
    builder.build(sources, out, progress=False)
    return out


def main(argv: Optional[List[str]] = None) -> None:
    """python tests/realism.py [DB] [--misses tuning|held-out]: both parts' scores, the issue-20
    figures over the whole set, the independent check; --misses: one part's scores and missed rows
    only (the held-out part rests while rules are written on the tuning part).
    python tests/realism.py --build-proxy OUT: build the proxy catalogue (build_proxy) at OUT."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--build-proxy"]:
        print(build_proxy(Path(args[1])))
        return
    show = None
    if "--misses" in args:
        i = args.index("--misses")
        show = args[i + 1]
        args = args[:i] + args[i + 2:]
    if args:
        db = Path(args[0])
    else:
        from vehicledata import dataset
        db = dataset.ensure_database()
    if show:  # one part only: the tuning part's misses show nothing of the held-out part
        print(f"# reference set, {show} part (% of model-years; in brackets: model-years with the fact)")
        print(parts_table(db, (show,)))
        print(f"\n# {show} rows missing a measure")
        for line in misses(db, reference(show)):
            print(f"  {line}")
        return
    print("# reference set, by part (% of model-years; in brackets: model-years with the fact)")
    print(parts_table(db))
    print("\n# whole reference set (issue 20's figures)")
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
