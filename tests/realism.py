"""Catalogue realism measured against tests/data/realism_reference.csv (well-known 2015-2020
vehicles, each value with the public page it comes from): shared by tests/test_realism.py and
the figures in docs/dataset.md (`python tests/realism.py [DB]` prints them)."""
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


def main(argv: Optional[List[str]] = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args:
        db = Path(args[0])
    else:
        from vehicledata import dataset
        db = dataset.ensure_database()
    for k, v in measure(db).items():
        print(f"{k:<28} {v:.1f}" if isinstance(v, float) else f"{k:<28} {v}")


if __name__ == "__main__":
    main()
