"""Catalogue realism (issue 20): trims, prices and horsepower of the catalogue against a reference
set of well-known 2015-2020 vehicles (tests/data/reference_vehicles.csv, a public page per row),
and invariants over the whole catalogue. The figures are reported in docs/dataset.md
("Measured"); `python tests/realism.py` prints them."""
from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import realism

from vehicledata.dataset import lineup


def q(db: Path, sql: str, *args):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def test_reference_set_is_sourced() -> None:
    ref = realism.reference()
    assert len(ref) >= 60
    assert all(r["source"].startswith("https://") for r in ref)
    assert len({(r["year"], r["make"], r["model"]) for r in ref}) == len(ref)
    assert all(2015 <= int(r["year"]) <= 2020 and int(r["base_msrp"]) > 10000 and int(r["base_hp"]) > 50 for r in ref)
    assert all(r["base_trim"] in r["lineup"].split("|") for r in ref)


def test_measured_against_the_reference_set(database: Path) -> None:
    m = realism.measure(database)
    print("\n" + "\n".join(f"{k}: {v:.1f}" if isinstance(v, float) else f"{k}: {v}" for k, v in m.items()))
    assert m["base_trim_right_pct"] >= 75.0
    assert m["lineup_70_pct"] >= 70.0            # vehicles with >= 70 % of their real lineup present
    assert m["base_msrp_median_err_pct"] <= 5.0
    assert m["upper_priced"] >= 30 and m["upper_msrp_median_err_pct"] <= 10.0
    assert m["hp_median_err_pct"] <= 5.0
    assert m["duplicate_groups"] == 0
    assert m["gas_only_hybrid_rows"] == 0
    assert m["one_trim_model_years_pct"] <= 15.0


def test_no_powertrain_words_on_other_powertrains(database: Path) -> None:
    bad = q(database, """SELECT t.year, t.make, t.model, t.trim, e.engine_type FROM trims t JOIN engines e ON e.id = t.id
        WHERE ((' ' || lower(t.trim) || ' ') LIKE '% tdi %' OR (' ' || lower(t.trim) || ' ') LIKE '% diesel %')
        AND e.engine_type != 'diesel' AND t.year >= 2015""")
    assert bad == []
    # GM option codes (1FL, 2LT) are no trim names
    assert q(database, "SELECT count(*) FROM trims WHERE year >= 2015 AND trim GLOB '[1-3][A-Z][A-Z]'") == [(0,)]


def test_price_invariants_over_the_catalogue(database: Path) -> None:
    (lo, hi, nulls), = q(database, "SELECT min(msrp), max(msrp), sum(msrp IS NULL) FROM trims "
                                   "WHERE year BETWEEN 2015 AND 2020")
    assert nulls == 0 and 5000 <= lo and hi <= 3_500_000
    # hybrid and diesel trims cost more than the same trim name's gas version (same model-year, drive)
    rows = q(database, """
        SELECT count(*), sum(alt.p < gas.p) FROM
          (SELECT t.year, t.model_id, replace(replace(t.trim, 'Hybrid ', ''), ' Hybrid', '') AS trim, e.drive_type,
                  min(t.msrp) AS p FROM trims t JOIN engines e ON e.id = t.id
           WHERE e.engine_type IN ('hybrid', 'diesel') AND t.year BETWEEN 2015 AND 2020 GROUP BY 1, 2, 3, 4) alt
        JOIN (SELECT t.year, t.model_id, t.trim, e.drive_type, min(t.msrp) AS p FROM trims t
              JOIN engines e ON e.id = t.id WHERE e.engine_type = 'gas' AND t.year BETWEEN 2015 AND 2020
              GROUP BY 1, 2, 3, 4) gas
        ON gas.year = alt.year AND gas.model_id = alt.model_id AND gas.trim = alt.trim
        AND gas.drive_type IS alt.drive_type""")
    pairs, below = rows[0]
    print(f"\nhybrid/diesel vs gas pairs: {pairs}, priced below gas: {below}")
    assert pairs > 100 and below <= 0.05 * pairs
    # an upper trim never costs less than its line's base trim (the cheapest trim of the model-year
    # with the same engine and drive is the base of that line)
    assert q(database, """SELECT count(*) FROM trims t JOIN engines e ON e.id = t.id
        WHERE t.year BETWEEN 2015 AND 2020 AND t.msrp < 0.5 * (SELECT max(t2.msrp) FROM trims t2
        JOIN engines e2 ON e2.id = t2.id WHERE t2.year = t.year AND t2.model_id = t.model_id
        AND e2.size IS e.size AND e2.drive_type IS e.drive_type AND t2.trim = t.trim)""")[0][0] <= 5  # vPIC's own prices


def test_reviewed_lineups_cite_their_page() -> None:
    rows = lineup.read_reviewed()
    assert len(rows) >= 50 and {r.make for r in rows} >= {"Ford", "Nissan"}
    assert all(r.source.startswith("https://") and r.trims for r in rows)
    with open(lineup.REVIEWED_FILE, newline="", encoding="utf-8") as fh:
        assert next(csv.reader(fh)) == ["make", "model", "years", "engines", "trims", "source"]
    # a reviewed lineup is what the catalogue serves: 2019 F-150 3.3 L V6 is only XL and XLT
    assert lineup.reviewed("Ford", "F-150", 2019, 3.3, False, "gas") == ["XL", "XLT"]
    assert lineup.reviewed("Ford", "F-150", 2019, 3.0, True, "diesel") == ["Lariat", "King Ranch", "Platinum", "Limited"]


def test_trim_names_are_cleaned() -> None:
    assert lineup.clean("LT (1LT)", "gas") == "LT"
    assert lineup.clean("1FL", "gas") is None
    assert lineup.clean("LE Hybrid", "gas") == "LE"
    assert lineup.clean("LE Hybrid", "hybrid") == "LE Hybrid"
    assert lineup.clean("TDI SE", "gas") == "SE"
    assert lineup.clean("Ltd", "gas") == "Limited"
    assert lineup.clean("XLE M", "gas") == "XLE"
    assert lineup.clean("Type R", "gas") == "Type R"
    assert lineup.clean("Super Crew - Raptor", "gas") == "Raptor"
