"""Catalogue realism (issues 20 and 38): trims, prices, horsepower and curb weights of the catalogue
against a reference set of well-known 2015-2024 vehicles (tests/data/realism_reference.csv, a
public page per row, in a tuning part and a held-out part), and invariants over the whole
catalogue. The figures are reported in docs/reports/dataset.md ("Measured"); `python tests/realism.py`
prints them."""
from __future__ import annotations

import csv
import re
import sqlite3
from pathlib import Path

import realism

from vehicledata.dataset import lineup, prices, rows


def q(db: Path, sql: str, *args):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def test_reference_set_is_sourced() -> None:
    ref = realism.reference()
    assert len(ref) >= 150 and len({r["make"] for r in ref}) >= 30
    assert all(r["source"].startswith("https://") for r in ref)
    assert len({(r["year"], r["make"], r["model"]) for r in ref}) == len(ref)
    assert {int(r["year"]) for r in ref} == set(range(2015, 2025))
    # an empty cell is a fact its writer was not sure of; a filled one is plausible
    assert all(not r["base_msrp"] or int(r["base_msrp"]) > 10000 for r in ref)
    assert all(not r["base_hp"] or int(r["base_hp"]) > 50 for r in ref)
    assert all(not r["curb_weight"] or 1500 < int(r["curb_weight"]) < 9000 for r in ref)
    assert all(not r["top_msrp"] or (r["top_trim"] and int(r["top_msrp"]) > int(r["base_msrp"] or 0)) for r in ref)
    assert all(r["base_trim"] in r["lineup"].split("|") for r in ref if r["base_trim"] and r["lineup"])


def test_reference_set_is_split_by_its_rule() -> None:
    """Issue 38: a tuning part and a held-out part. Held-out rows are vehicles no rule was patched
    for: no reviewed table of the builder names their make and model (any year), so a reviewed row
    added for one of them fails here (move the model to the tuning part and say so in the docs)."""
    parts = {p: realism.reference(p) for p in realism.PARTS}
    assert sum(map(len, parts.values())) == len(realism.reference())
    assert realism.held_out_is_clean() == []
    held = {(r["make"], r["model"]) for r in parts["held-out"]}
    assert not held & {(r["make"], r["model"]) for r in parts["tuning"]}   # a model is in one part only
    assert 0.4 <= len(parts["held-out"]) / len(realism.reference()) <= 0.6
    assert len({r["make"] for r in parts["held-out"]}) >= 30
    assert {int(r["year"]) for r in parts["held-out"]} == set(range(2015, 2025))


def test_lineup_measure() -> None:
    """80 % of the real names and at most one foreign name; a powertrain word beside a grade is the grade."""
    assert realism.lineup_score(["L", "LE", "Hybrid LE", "SE AWD", "XSE"], ["L", "LE", "SE", "XSE"]) == (1.0, 0)
    assert realism.lineup_score(["Base", "Hybrid"], ["LE", "XLE"]) == (0.0, 2)
    assert realism.lineup_score(["LE", "XLE", "Large"], ["LE", "XLE", "Limited"]) == (2 / 3, 1)


def test_measured_against_the_reference_set(database: Path) -> None:
    """The tuning part, with the thresholds it was tuned to (issue 20)."""
    m = realism.measure(database, realism.reference("tuning"))
    print("\n" + "\n".join(f"{k}: {v:.1f}" if isinstance(v, float) else f"{k}: {v}" for k, v in m.items()))
    assert m["base_trim_right_pct"] >= 75.0
    assert m["lineup_70_pct"] >= 70.0            # vehicles with >= 70 % of their real lineup present
    assert m["base_msrp_median_err_pct"] <= 5.0
    assert m["upper_priced"] >= 30 and m["upper_msrp_median_err_pct"] <= 10.0
    assert m["hp_median_err_pct"] <= 5.0
    assert m["duplicate_groups"] == 0
    assert m["gas_only_hybrid_rows"] == 0
    assert m["one_trim_model_years_pct"] <= 15.0


# Held-out part (issue 38): the issue's targets are realism.TARGETS; the catalogue misses most of
# them (docs/reports/dataset.md, "Reference set: a tuning part and a held-out part"). These are NOT the targets: they are
# the scores measured on 2026-12-07, asserted as a floor so that a change that makes the held-out
# vehicles worse shows. Raise a floor when a general rule (judged on the tuning part only) raises
# the score; never tune a rule on held-out rows.
# The top-trim floor was lowered once, knowingly, from 26.1 to 23.8 (one model-year of 42) when the
# general rules of branch `rules` raised the three others (docs/reports/dataset.md, "General rules").
# Raised on 2026-12-07 after branch `rules2` (vPIC's "Base" kept, grades borrowed up to four years):
# held-out 28.5 / 23.8 / 50.0 / 38.6 / 72.5 %, scored once after the last rule; no floor lowered.
# Curb weight raised after branch `rules3` (the lightest tested vehicle of a configuration): held-out
# 28.5 / 23.8 / 50.0 / 38.6 / 80.0 %, scored once by the lead after the merge.
# Lineup raised after branch `names4` (no other market's grade, the base trim the line's cheapest):
# held-out 28.5 / 23.8 / 50.0 / 40.0 / 80.0 %, scored once by the lead after the merge.
# Base MSRP and base trim raised after branch `names5` (a closing "S" kept, Mazda's 3 and 6 read
# under "Mazda3"/"Mazda6", the model named alone is "Base"): 29.2 / 23.8 / 51.4 / 40.0 / 80.0 %.
# After branch `names6` (siblings' base grade, list words shared only when no grade, Mitsubishi's
# ladder, a shared vPIC price on the lowest grade, Honda's DX foreign from 2013; judged on the proxy
# and tuning parts only), scored once by the lead after the merge: 31.4 / 21.4 / 54.1 / 41.4 / 80.0 %.
# Three floors rise; the top-trim floor was lowered a second time, knowingly, from 23.8 to 21.4 (one
# model-year of 42), as the first time: choosing which rule to keep by its held-out effect would be
# tuning on the held-out part.
HELD_OUT_FLOOR = {"base_msrp_within_5_pct": 31.3, "top_msrp_within_5_pct": 21.3, "base_trim_right_pct": 54.0,
                  "lineup_right_pct": 41.3, "curb_weight_within_4_pct": 79.9}


def test_held_out_part_does_not_regress(database: Path) -> None:
    m = realism.measure(database, realism.reference("held-out"))
    print("\n" + realism.parts_table(database))
    assert set(HELD_OUT_FLOOR) == set(realism.TARGETS)
    missed = {k: (m[k], t) for k, t in realism.TARGETS.items() if m[k] < t}
    print(f"issue 38 targets missed on the held-out part (measured, target): {missed}")
    for key, floor in HELD_OUT_FLOOR.items():
        assert m[key] >= floor, f"held-out {key} fell to {m[key]:.1f} % (floor {floor} %, target {realism.TARGETS[key]} %)"


def test_issue_38_held_out_targets() -> None:
    assert realism.TARGETS == {"base_msrp_within_5_pct": 75.0, "top_msrp_within_5_pct": 60.0,
                               "base_trim_right_pct": 90.0, "lineup_right_pct": 80.0,
                               "curb_weight_within_4_pct": 70.0}


def test_independent_check_against_vpic_and_the_test_car_list(database: Path, sources_dir: Path) -> None:
    """Not from hand-written rows: vPIC's trim names per 2015-2020 group and the Test Car List's hp."""
    m = realism.independent(database, sources_dir)
    print("\n" + "\n".join(f"{k}: {v}" for k, v in m.items()))
    assert m["vpic_groups"] > 1000
    assert m["vpic_trims_present_mean_pct"] >= 75.0
    assert m["hp_rows_checked"] > 10000 and m["hp_within_5pct_of_tested_pct"] >= 90.0


def test_no_powertrain_words_on_other_powertrains(database: Path) -> None:
    bad = q(database, """SELECT t.year, t.make, t.model, t.trim, e.engine_type FROM trims t JOIN engines e ON e.id = t.id
        WHERE ((' ' || lower(t.trim) || ' ') LIKE '% tdi %' OR (' ' || lower(t.trim) || ' ') LIKE '% diesel %')
        AND e.engine_type != 'diesel' AND t.year >= 2015""")
    assert bad == []
    # GM option codes (1FL, 2LT) are no trim names, except where the market sells them as trims
    assert q(database, "SELECT count(*) FROM trims WHERE year >= 2015 AND trim GLOB '[1-3][A-Z][A-Z]' "
                       "AND model != 'Camaro'") == [(0,)]


def test_price_invariants_over_the_catalogue(database: Path) -> None:
    (lo, hi, nulls), = q(database, "SELECT min(msrp), max(msrp), sum(msrp IS NULL) FROM trims "
                                   "WHERE year BETWEEN 2015 AND 2020")
    assert nulls == 0 and 5000 <= lo and hi <= 3_500_000
    # hybrid and diesel trims cost more than the same trim name's gas version (same model-year, drive)
    rows = q(database, """
        SELECT count(*), coalesce(sum(alt.p < gas.p), 0) FROM
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
    assert pairs > 100 and below == 0
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
    # vPIC's "Base" with package letters or codes is the base grade "Base" (2019 Forester "Base P",
    # 2019 WRX "WRX base+L"); a grade before a package's "Base" stays the grade
    assert lineup.clean("Base P", "gas") == "Base" and lineup.clean("Base", "gas") == "Base"
    assert lineup.clean("WRX base", "gas", "WRX") == "Base" and lineup.clean("STI base", "gas", "WRX") == "STI"
    assert lineup.clean("Ltd Base", "gas") == "Limited" and lineup.clean("G", "gas") is None
    # the Camaro's grades are its trims (1LS, 1LT, 2LT, 3LT, 1SS, 2SS), in price order
    assert lineup.clean("LT (1LT)", "gas", "Camaro") == "1LT" and lineup.clean("1LT", "gas", "Equinox") == "LT"
    assert sorted(["ZL1", "2SS", "1SS", "3LT", "2LT", "1LT", "1LS"], key=lineup.rank) == \
        ["1LS", "1LT", "2LT", "3LT", "1SS", "2SS", "ZL1"]
    # Subaru's grades: Premium is the second, Touring the top
    assert sorted(["Touring", "Limited", "Premium", "Base", "Sport"], key=lambda t: lineup.rank(t, "Subaru")) == \
        ["Base", "Premium", "Sport", "Limited", "Touring"]
    assert rows.ladder_order("Subaru", "Outback", 2018, ["3.6R Touring", "2.5i Limited", "2.5i Premium", "2.5i"]) == \
        ["2.5i", "2.5i Premium", "2.5i Limited", "3.6R Touring"]
    assert rows.ladder_order("Kia", "Telluride", 2020, ["SX", "EX", "S", "LX"]) == ["LX", "S", "EX", "SX"]


def test_a_special_edition_closing_a_vpic_list_is_one_name() -> None:
    """vPIC's "L/LE/SE/XLE/XSE/50th Anniv. Special Edition" (2017 Corolla) is five grades and the
    edition, not "L Anniv. Special Edition"; a shared powertrain word still goes with each."""
    from vehicledata.dataset.sweep import trim_names

    assert trim_names("L/LE/SE/XLE/XSE/50th Anniv. Special Edition") == \
        ("L", "LE", "SE", "XLE", "XSE", "50th Anniv. Special Edition")
    assert trim_names("SE/Value Edition") == ("SE", "Value Edition")
    assert trim_names("SE/XLE Hybrid") == ("SE Hybrid", "XLE Hybrid")
    assert trim_names("Hybrid XLE/SE") == ("Hybrid XLE", "Hybrid SE")


def test_price_tables_cite_their_pages() -> None:
    lines = prices.lines()
    assert len(lines) >= 40
    for ln in lines.values():
        assert ln.source.startswith("https://") and 2015 <= ln.year <= 2020, ln
        assert 10000 < ln.base_msrp < ln.top_msrp < 250000 and ln.base_trim != ln.top_trim, ln
    ranges = prices.make_ranges()
    assert len(ranges) >= 40 and {"Toyota", "Ford", "Chevrolet", "Honda", "BMW", "Porsche"} <= set(ranges)
    for r in ranges.values():
        assert r.source.startswith("https://") and 5000 <= r.min_msrp < r.max_msrp and r.first_year <= r.last_year, r
    for ln in lines.values():  # a reviewed line lies inside its make's range
        lo, hi = prices.make_range(ln.make, ln.year) or (0, 10**9)
        assert lo <= ln.base_msrp and ln.top_msrp <= hi, ln


def test_every_price_inside_its_make_range(database: Path) -> None:
    outside = []
    checked = 0
    for make, year, lo, hi, n in q(database, "SELECT make, year, min(msrp), max(msrp), count(*) FROM trims "
                                             "GROUP BY make, year"):
        rng = prices.make_range(make, year)
        if rng is None:
            continue
        checked += n
        if lo < rng[0] or hi > rng[1]:
            outside.append((make, year, lo, hi, rng))
    print(f"\nrows checked against their make's published range: {checked}")
    assert checked > 10000 and outside == []


def test_reviewed_lines_are_anchored(database: Path) -> None:
    """A reviewed line costs no less than its base price, its base trim starts near it, and its top
    trim (where the catalogue has it) sits near the reviewed top (premiums for drive and engine on top)."""
    found = 0
    for ln in prices.lines().values():
        got = q(database, "SELECT trim, msrp FROM trims WHERE year = ? AND make = ? AND model = ?",
                ln.year, ln.make, ln.model)
        if not got:
            continue
        found += 1
        assert min(m for _, m in got) >= ln.base_msrp, (ln, min(got, key=lambda r: r[1]))
        base = [m for t, m in got if lineup.norm(t) == lineup.norm(ln.base_trim)]
        if base:  # the base configuration (2WD, smallest engine) may have no EPA row: the premiums for
            # drive and engine size come on top (2019 Ram 1500 Tradesman: only 4x4 5.7 L rows, +28 %)
            assert ln.base_msrp <= min(base) <= ln.base_msrp * 1.35, (ln, min(base))
        top = [m for t, m in got if lineup.norm(t) == lineup.norm(ln.top_trim)]
        if top:
            assert 0.8 * ln.top_msrp <= min(top) <= ln.top_msrp * 1.3, (ln, min(top))
    assert found >= 30


def test_no_upper_trim_below_its_line_base(database: Path) -> None:
    """Over the whole catalogue: the trims of one EPA configuration (same engine, drive, body; the
    rows its EPA id gives), ordered base to top as the builder orders the line, never get cheaper."""
    lines: dict = {}
    for tid, year, make, model, trim, msrp in q(database, "SELECT id, year, make, model, trim, msrp FROM trims"):
        epa = tid if tid < rows.EXTRA_TRIM_IDS else (tid - rows.EXTRA_TRIM_IDS) // 16
        lines.setdefault((epa, year, make, model), {})[trim] = msrp
    bad = []
    checked = 0
    for (epa, year, make, model), by_trim in lines.items():
        if len(by_trim) < 2:
            continue
        checked += 1
        order = rows.ladder_order(make, model, year, by_trim)
        got = [by_trim[t] for t in order]
        if any(b < a for a, b in zip(got, got[1:])):
            bad.append((year, make, model, list(zip(order, got))))
    print(f"\nconfigurations with 2+ trims: {checked}, an upper trim below a lower one: {len(bad)}")
    assert checked > 3000 and bad == [], bad[:5]


def test_hybrid_system_table_cites_its_pages() -> None:
    from vehicledata.dataset import system_hp
    rows_ = system_hp.read()
    assert len(rows_) >= 10
    assert all(r.source.startswith("https://") and r.tag in ("H", "P") and 60 <= r.hp <= 800 for r in rows_)
    assert len({(r.make, r.model, y, r.tag) for r in rows_ for y in range(r.first, r.last + 1)}) == \
        sum(r.last - r.first + 1 for r in rows_)   # no year of a line twice


def test_hybrids_carry_their_system_horsepower(database: Path) -> None:
    """Every hybrid row of a line in the reviewed table has the table's system output, which is
    above the engine-only rating the Test Car List gives the same model's hybrid (2019 Prius:
    121 hp, not the engine's 96)."""
    from vehicledata.dataset import system_hp
    checked = 0
    for r in system_hp.read():
        tag = {"H": ("hybrid", "mild hybrid"), "P": ("plug-in hybrid",)}[r.tag]
        got = q(database, f"""SELECT DISTINCT e.horsepower_hp FROM trims t JOIN engines e ON e.id = t.id
            WHERE t.make = ? AND t.model = ? AND t.year BETWEEN ? AND ? AND abs(e.size - ?) < 0.06
            AND e.engine_type IN ({','.join('?' * len(tag))})""", r.make, r.model, r.first, r.last, r.displ, *tag)
        assert got, f"no {r.make} {r.model} {r.first}-{r.last} {r.displ} {r.tag} rows"
        assert got == [(r.hp,)], (r, got)
        checked += 1
    assert checked >= 10
    prius = [r for r in realism.reference() if (r["year"], r["make"], r["model"]) == ("2019", "Toyota", "Prius")]
    assert prius and q(database, """SELECT DISTINCT e.horsepower_hp FROM trims t JOIN engines e ON e.id = t.id
        WHERE t.year = 2019 AND t.make = 'Toyota' AND t.model = 'Prius' AND e.engine_type = 'hybrid'""") == \
        [(int(prius[0]["base_hp"]),)]


def test_value_origins_per_row(database: Path) -> None:
    """Columns whose origin differs from row to row carry it per trim in `value_origins`: one row
    per trim, 'none' exactly where the value is NULL, and `dataset info` prints the shares."""
    from vehicledata.dataset import provenance, store
    assert q(database, "SELECT count(*) FROM trims") == q(database, "SELECT count(*) FROM value_origins")
    assert q(database, "SELECT count(*) FROM trims t LEFT JOIN value_origins v ON v.id = t.id WHERE v.id IS NULL") \
        == [(0,)]
    allowed = set(provenance.ORIGINS)
    for table, column in provenance.ROW_ORIGIN_COLUMNS:
        col = f"{table}_{column}"
        assert {o for o, in q(database, f"SELECT DISTINCT {col} FROM value_origins")} <= allowed
        assert q(database, f"""SELECT count(*) FROM value_origins v JOIN {table} x ON x.id = v.id
            WHERE (x.{column} IS NULL) != (v.{col} = 'none')""") == [(0,)], col
    # a vPIC price is real, a ladder price synthetic; a vPIC curb weight real, test weight - 300 lb derived
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        shares = store.value_origin_shares(con)
    finally:
        con.close()
    assert shares["trims.msrp"]["real"] > 0 and shares["trims.msrp"]["synthetic"] > 0
    assert shares["bodies.curb_weight"]["real"] > 0 and shares["bodies.curb_weight"]["derived"] > 0
    assert shares["bodies.doors"]["real"] > 0 and shares["bodies.doors"]["derived"] > 0


def test_dataset_info_shows_per_row_shares(database: Path, capsys) -> None:
    from vehicledata.cli import main
    assert main(["dataset", "info", "--db", str(database)]) == 0
    out = capsys.readouterr().out
    assert "origin of each value, where it differs from row to row" in out
    assert re.search(r"\n  trims\.msrp\s+[\d.]+%\s+0\.0%\s+[\d.]+%\s+0\.0%\n", out)


def test_bmw_grade_names() -> None:
    """BMW trims are BMW USA's grade names: drive and body-line words kept, bodies and EPA's
    configuration notes dropped."""
    from vehicledata.dataset.naming import bmw_trim
    assert bmw_trim("330i", "330i xDrive") == "330i xDrive"
    assert bmw_trim("330i", "330i") == "330i"
    assert bmw_trim("430i", "430i Coupe") == "430i"
    assert bmw_trim("430i", "430i xDrive Gran Coupe") == "430i xDrive Gran Coupe"
    assert bmw_trim("M240i", "M240i Coupe M Performance") == "M240i"
    assert bmw_trim("X3", "X3 xDrive30i") == "xDrive30i"
    assert bmw_trim("X3", "X3 M40i") == "M40i"
    assert bmw_trim("i3", "i3s with Range Extender") == "i3s"
    assert bmw_trim("M4", "M4 Coupe Competition") is None   # M cars keep the general rule


def test_reviewed_trim_prices_are_served(database: Path) -> None:
    """Every trim of msrp_trims.csv the catalogue has costs its reviewed base price on its cheapest
    row (the loader refuses a row without a public page)."""
    table = prices.trim_prices()
    assert len(table) >= 40
    found = 0
    for (year, make, model, trim), msrp in table.items():
        got = q(database, "SELECT min(msrp) FROM trims WHERE year = ? AND make = ? AND model = ? AND trim = ?",
                year, make, model, trim)[0][0]
        if got is not None:
            found += 1
            assert got == msrp, (year, make, model, trim, got, msrp)
    assert found >= 0.8 * len(table)


def test_bmw_2019_lineup_uses_bmw_names(database: Path) -> None:
    """2019 BMW rows carry BMW USA's grades: no bare body or configuration words as trims,
    and the all-wheel-drive rows of a grade say xDrive."""
    got = q(database, "SELECT t.model, t.trim, e.drive_type FROM trims t JOIN engines e ON e.id = t.id "
                      "WHERE t.year = 2019 AND t.make = 'BMW'")
    pairs = {(m, t) for m, t, _ in got}
    assert {("330i", "330i"), ("330i", "330i xDrive"), ("X3", "xDrive30i"), ("530i", "530i xDrive")} <= pairs
    assert not {t for _, t, _ in got} & {"GT", "Sports", "S", "M Performance"}
    for model, trim, drive in got:
        if re.fullmatch(r"M?\d{3}[ie]", model) and drive == "all wheel drive":
            assert "xDrive" in trim, (model, trim)


def test_lineup_rules_for_body_lines_equipment_words_and_bmw_order() -> None:
    """EPA's "Unlimited" (2018 Wrangler) starts vPIC's trim names: those are its lineup; vPIC's
    equipment words ("w/", Honda's "Sensing", "-N") and a package's "Base" are no part of a trim;
    BMW's grades climb sDrive, xDrive, M Performance, Competition."""
    cands = ["Sport", "Sahara", "Rubicon", "Unlimited Sport", "Unlimited Sahara", "Unlimited Rubicon"]
    assert lineup.lineup(["Unlimited"], cands, set(), "Base") == ["Unlimited Sport", "Unlimited Sahara",
                                                                  "Unlimited Rubicon"]
    assert lineup.lineup([], cands, {"unlimitedsport", "unlimitedsahara", "unlimitedrubicon"}, "Base") == \
        ["Sport", "Sahara", "Rubicon"]
    assert lineup.lineup(["LE"], ["LE", "LE Eco"], set(), "Base") == ["LE"]   # a trim of its own stays one
    assert lineup.clean("Stingray LT w", "gas") == "Stingray LT"
    assert lineup.clean("EX Honda Sensing", "gas") == "EX"
    assert lineup.clean("EXL-N", "gas") == "EX-L" and lineup.clean("EXL", "gas") == "EX-L"
    assert lineup.clean("SR5 Premium Base", "gas") == "SR5 Premium"
    assert lineup.clean("Special Services Vehicle", "gas") is None
    assert sorted(["M50i", "xDrive40i", "sDrive40i", "Competition"], key=lambda t: lineup.rank(t, "BMW")) == \
        ["sDrive40i", "xDrive40i", "M50i", "Competition"]
    assert lineup.reviewed("Chevrolet", "Corvette", 2017, 6.2, False, "gas", supercharged=True) == ["Z06"]
    assert "Grand Sport" in (lineup.reviewed("Chevrolet", "Corvette", 2017, 6.2, False, "gas") or [])


def test_known_misses_of_the_first_vehicles_an_analyst_opens(database: Path) -> None:
    """2018 Wrangler: the JK is "Wrangler JK" and "Unlimited" is a body line, not a trim; BMW's M
    SUVs are models ("X6 M"), the M4 has its base grade; Corvette grades, not vPIC equipment
    groups; Lexus grades carry the model letters ("RX 350")."""
    def trims(year: int, make: str, model: str) -> set:
        return {t for (t,) in q(database, "SELECT DISTINCT trim FROM trims WHERE year = ? AND make = ? AND model = ?",
                                year, make, model)}
    jeep = {m for (m,) in q(database, "SELECT DISTINCT model FROM trims WHERE year = 2018 AND make = 'Jeep'")}
    assert {"Wrangler", "Wrangler JK"} <= jeep
    for model in ("Wrangler", "Wrangler JK"):
        got = trims(2018, "Jeep", model)
        assert {"Sport", "Rubicon", "Unlimited Sport", "Unlimited Rubicon"} <= got and "Unlimited" not in got, got
    assert q(database, "SELECT count(*) FROM trims WHERE year = 2018 AND make = 'Jeep' AND model = 'Wrangler' "
                       "AND description LIKE '%5A)'") == [(0,)]   # the JK's 5-speed automatic is not a JL
    for year in (2015, 2016, 2019):
        assert trims(year, "BMW", "X6 M") and "Base" not in trims(year, "BMW", "X6"), year
    assert "M4" in trims(2016, "BMW", "M4") and "M4" in trims(2019, "BMW", "M4")
    vette = set().union(*(trims(y, "Chevrolet", "Corvette") for y in range(2015, 2020)))
    assert not {t for t in vette if re.search(r"\bw$|Preferred|Premium", t)}, vette
    assert {"Stingray 1LT", "Grand Sport", "Z06", "ZR1"} <= trims(2019, "Chevrolet", "Corvette")
    assert {"RX 350", "RX 450h"} <= trims(2019, "Lexus", "RX")
    assert "SLT" in trims(2019, "Ram", "1500 Classic") and "Classic" not in trims(2019, "Ram", "1500")
