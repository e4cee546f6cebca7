"""Names as the service gives them (issue 9), checked on the full dataset built from the real
sources, plus the vPIC -> catalogue join tables the VIN decoder reads."""
from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import List

import pytest

from vehicledata.dataset import naming


def q(db: Path, sql: str, *args) -> List[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def test_f150_is_named_as_marketed(database: Path) -> None:
    models = {m for (m,) in q(database, "SELECT DISTINCT model FROM trims WHERE year = 2020 AND make = 'Ford'")}
    assert "F-150" in models
    assert not {m for m in models if naming.norm(m).startswith("f150") and m != "F-150"}, models
    assert q(database, "SELECT count(*) FROM models WHERE make = 'Ford' AND name LIKE 'F150%'") == [(0,)]
    chevy = {m for (m,) in q(database, "SELECT DISTINCT model FROM trims WHERE year = 2019 AND make = 'Chevrolet'")}
    assert "Silverado 1500" in chevy and "Silverado" not in chevy
    honda = {m for (m,) in q(database, "SELECT DISTINCT model FROM trims WHERE year = 2019 AND make = 'Honda'")}
    assert {"CR-V", "HR-V", "Accord", "Civic"} <= honda


def test_no_drive_fuel_or_weight_words_in_2015_2020_trims(database: Path) -> None:
    trims = [t for (t,) in q(database, "SELECT trim FROM trims WHERE year BETWEEN 2015 AND 2020")]
    drive_words = {"AWD", "4WD", "2WD", "FWD", "RWD", "4X4", "4X2"}
    bad = [t for t in trims if t.upper() in drive_words or re.search(r"(?i)FFV|GVWR|2WD|4WD", t)]
    assert bad == []
    base = sum(1 for t in trims if t == "Base")
    print(f"\n'Base' trims 2015-2020: {base} of {len(trims)} ({100.0 * base / len(trims):.1f} %)")
    assert base < 0.10 * len(trims)


def test_camry_trims_and_descriptions(database: Path) -> None:
    rows = q(database, "SELECT t.submodel, t.trim, t.description FROM trims t JOIN engines e ON e.id = t.id "
                       "WHERE t.year = 2019 AND t.make = 'Toyota' AND t.model = 'Camry' ORDER BY t.id")
    assert ("LE/SE", "LE", "LE 4dr Sedan (2.5L 4cyl 8A)") in rows
    assert ("XLE/XSE", "XLE", "XLE 4dr Sedan (2.5L 4cyl 8A)") in rows
    # No EPA trim word: vPIC's Trim patterns for the 2019 Camry list "L/LE/SE/XLE" first -> "L"
    assert ("Base", "L", "L 4dr Sedan (2.5L 4cyl 8A)") in rows


def test_pickup_description_names_cab_and_drive(database: Path) -> None:
    rows = q(database, "SELECT trim, description FROM trims WHERE year = 2019 AND make = 'Chevrolet' "
                       "AND model = 'Silverado 1500' AND description LIKE '%Regular Cab 4WD (5.3L 8cyl 6A)'")
    # one row per trim of vPIC's lineup for that powertrain, the base trim among them, no duplicates
    assert ("Work Truck", "Work Truck 2dr Regular Cab 4WD (5.3L 8cyl 6A)") in rows
    assert len(rows) == len(set(rows)) and len({t for t, _ in rows}) >= 2, rows
    f150 = {d for (d,) in q(database, "SELECT description FROM trims WHERE year = 2019 AND model = 'F-150'")}
    assert "XL 4dr SuperCrew 4WD (3.3L 6cyl FFV 6A)" in f150 or any(d.startswith("XL ") for d in f150), f150


def test_bmw_series_filled(database: Path) -> None:
    rows = q(database, "SELECT count(*), count(series) FROM trims WHERE make = 'BMW' AND year BETWEEN 2015 AND 2020 "
                       "AND model GLOB '[1-8][0-9][0-9]*'")
    total, with_series = rows[0]
    assert total > 50 and with_series == total
    assert q(database, "SELECT DISTINCT series FROM trims WHERE make = 'BMW' AND year = 2019 AND model = '530i'") \
        == [("5 Series",)]


def test_base_trim_description_has_no_trim_word(database: Path) -> None:
    rows = q(database, "SELECT description FROM trims WHERE trim = 'Base' AND year = 2019 LIMIT 50")
    assert rows and all(re.match(r"^\d+dr ", d) for (d,) in rows), rows[:5]


def test_vpic_join_tables(database: Path) -> None:
    vpic_db = database.parent / dict(q(database, "SELECT key, value FROM meta"))["vpic_path"]
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        con.execute(f"ATTACH DATABASE 'file:{vpic_db}?mode=ro' AS v")
        # every mapped id exists on both sides
        assert con.execute("SELECT count(*) FROM vpic_makes x LEFT JOIN makes k ON k.id = x.make_id "
                           "LEFT JOIN v.Make vm ON vm.Id = x.vpic_make_id WHERE k.id IS NULL OR vm.Id IS NULL"
                           ).fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM vpic_models x LEFT JOIN models m ON m.id = x.model_id "
                           "LEFT JOIN v.Model vm ON vm.Id = x.vpic_model_id WHERE m.id IS NULL OR vm.Id IS NULL"
                           ).fetchone() == (0,)
        # a vPIC model maps to a catalogue model of a make its vPIC make maps to
        assert con.execute("""SELECT count(*) FROM vpic_models x JOIN models m ON m.id = x.model_id
            WHERE NOT EXISTS (SELECT 1 FROM v.Make_Model mm JOIN vpic_makes k ON k.vpic_make_id = mm.MakeId
                              WHERE mm.ModelId = x.vpic_model_id AND k.make_id = m.make_id)""").fetchone() == (0,)

        def model_of(make: str, vpic_model: str) -> set:
            return {r[0] for r in con.execute(
                "SELECT m.name FROM v.Model vm JOIN v.Make_Model mm ON mm.ModelId = vm.Id "
                "JOIN v.Make k ON k.Id = mm.MakeId JOIN vpic_models x ON x.vpic_model_id = vm.Id "
                "JOIN models m ON m.id = x.model_id WHERE k.Name = ? AND vm.Name = ?", (make, vpic_model))}

        assert model_of("Ford", "F-150") == {"F-150"}
        assert model_of("Chevrolet", "Silverado") == {"Silverado 1500"}
        assert model_of("Honda", "CR-V") == {"CR-V"}
        assert model_of("BMW", "530i") == {"530i"}
        assert model_of("Toyota", "Camry") == {"Camry"}
        ford = con.execute("SELECT x.make_id FROM vpic_makes x JOIN v.Make vm ON vm.Id = x.vpic_make_id "
                           "WHERE vm.Name = 'Ford'").fetchall()
        assert ford == con.execute("SELECT id FROM makes WHERE name = 'Ford'").fetchall()
        n_models = con.execute("SELECT count(*) FROM vpic_models").fetchone()[0]
        assert n_models > 1000
    finally:
        con.close()


@pytest.mark.parametrize("make,epa_model,base,expect", [
    ("Ford", "F150 Pickup 4WD FFV", "F150", ("F-150", "Base")),
    ("Ford", "F150 5.0L 2WD FFV GVWR>7599 LBS", "F150", ("F-150", "Base")),
    ("Chevrolet", "Silverado LD C15 2WD", "Silverado", ("Silverado 1500", "Base")),
    ("Toyota", "Camry XLE/XSE", "Camry", ("Camry", "XLE/XSE")),
    ("BMW", "530i xDrive", "5 Series", ("530i", "Base")),
    ("Ford", "Shelby GT350 Mustang", "Mustang", ("Mustang", "Shelby GT350")),
    # Tesla's grades keep "Range" (EPA's battery words were cut to "Long", "Mid")
    ("Tesla", "Model 3 Long Range AWD", "Model 3", ("Model 3", "Long Range")),
    ("Tesla", "Model 3 Standard Range Plus", "Model 3", ("Model 3", "Standard Range Plus")),
    # EPA's "New" marks 2018's JL Wrangler, no trim word
    ("Jeep", "New Wrangler Unlimited 4WD", "Wrangler", ("Wrangler", "Unlimited")),
    # BMW's M SUVs are models of their own; the Ram 1500 Classic (the old DS) too
    ("BMW", "X6 M Competition", "X6", ("X6 M", "Competition")),
    ("Ram", "1500 Classic 4WD", "1500", ("1500 Classic", "Base")),
])
def test_name_vehicle_without_vpic(make: str, epa_model: str, base: str, expect) -> None:
    n = naming.name_vehicle(make, epa_model, base, 2019, None)
    assert (n.model, n.submodel) == expect
    if make == "BMW" and n.model == "530i":  # BMW USA's grade name keeps its drive word ("530i xDrive")
        assert n.exact and n.trim == epa_model
    else:
        assert not n.exact and not re.search(r"(?i)FFV|GVWR|2WD|4WD|xDrive", n.trim)


# ---- synthetic values, honest --------------------------------------------------------------

def test_horsepower_is_the_published_rating(database: Path) -> None:
    # EPA's Test Car List rated horsepower of the tested configuration (published ratings in comments)
    cases = [
        ("Toyota", "Avalon", 2019, 3.5, "gas", 301),        # 2GR-FKS V6
        ("Ford", "Mustang", 2018, 2.3, "gas", 310),         # 2.3 EcoBoost
        ("Ford", "Mustang", 2018, 5.0, "gas", 460),         # Coyote V8
        ("Toyota", "Tacoma", 2019, 2.7, "gas", 159),        # 2TR-FE
        ("Porsche", "911", 2019, 4.0, "gas", 500),          # 911 GT3
    ]
    for make, model, year, size, etype, want in cases:
        got = {hp for (hp,) in q(database, "SELECT DISTINCT horsepower_hp FROM engines WHERE make = ? AND model = ? "
                                          "AND year = ? AND size = ? AND engine_type = ?", make, model, year, size, etype)}
        assert want in got, (make, model, year, size, got)
    # torque has no public source: NULL everywhere, never a formula
    assert q(database, "SELECT count(torque_ft_lbs), count(torque_rpm), count(horsepower_rpm) FROM engines") == [(0, 0, 0)]
    # the trims of one EPA row share its engine figures
    assert q(database, """SELECT count(*) FROM (SELECT year, make, model, size, engine_type, drive_type, transmission,
        trim_description, count(DISTINCT horsepower_hp) n FROM engines WHERE year = 2019
        GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 HAVING n > 1)""") == [(0,)]


def test_engine_facts_by_rule(database: Path) -> None:
    # GM's 4.3 L V6 (Vortec / EcoTec3 LV3) is a pushrod engine: OHV, 12 valves
    rows = q(database, "SELECT DISTINCT cam_type, valves FROM engines WHERE make IN ('Chevrolet', 'GMC') "
                       "AND size = 4.3 AND cylinders = 'V6'")
    assert rows == [("Overhead valves (OHV)", 12)]


def test_no_invented_tracks_clearance_or_weights(database: Path) -> None:
    assert q(database, "SELECT count(front_track), count(rear_track), count(ground_clearance), "
                       "count(gross_weight), count(max_payload) FROM bodies") == [(0, 0, 0, 0, 0)]
    assert q(database, "SELECT count(curb_weight) > 0 FROM bodies") == [(1,)]


REFERENCE = Path(__file__).resolve().parent.parent / "python" / "vehicledata" / "dataset" / "msrp_reference.csv"


def test_msrp_against_published_base_prices(database: Path) -> None:
    import csv
    import statistics

    with open(REFERENCE, encoding="utf-8", newline="") as fh:
        ref = list(csv.DictReader(fh))
    assert len(ref) >= 60
    assert all(r["source"].startswith("http") for r in ref)
    assert len({(r["year"], r["make"], r["model"]) for r in ref}) == len(ref)
    prices = [int(r["base_msrp"]) for r in ref]
    assert min(prices) < 15000 and max(prices) > 150000     # economy to exotic
    errors = []
    for r in ref:
        (got,), = q(database, "SELECT min(msrp) FROM trims WHERE year = ? AND make = ? AND model = ?",
                    int(r["year"]), r["make"], r["model"])
        assert got is not None, f"{r['year']} {r['make']} {r['model']} is not in the catalogue"
        errors.append(abs(got - int(r["base_msrp"])) / int(r["base_msrp"]))
    mdape = statistics.median(errors)
    print(f"\nMSRP vs {len(ref)} published base prices: median absolute error {100 * mdape:.1f} %, "
          f"{sum(e <= 0.15 for e in errors)} within 15 %")
    assert mdape < 0.15
    # one trim of one model-year with the same engine and drive has one price
    assert q(database, """SELECT count(*) FROM (SELECT t.year, t.model_id, e.size, e.cylinders, e.engine_type,
        e.drive_type, t.trim, count(DISTINCT t.msrp) n FROM trims t JOIN engines e ON e.id = t.id
        WHERE t.year = 2019 AND e.trim_description NOT LIKE '%Turbo%' GROUP BY 1, 2, 3, 4, 5, 6, 7
        HAVING n > 1)""")[0][0] < 50
