"""Expectations over the whole built catalogue (issue 38): every realism rule of the builder as a
count over the database, zero or under its stated bound (python/vehicledata/dataset/realism.py;
`python -m vehicledata.dataset.realism DB` prints the list)."""
from __future__ import annotations

from pathlib import Path

import pytest

from vehicledata.dataset import realism


@pytest.fixture(scope="module")
def results(database: Path):
    out = realism.run(database)
    print("\n" + realism.report(out))
    return {r.name: r for r in out}


@pytest.mark.parametrize("name", [c[0] for c in realism.CHECKS])
def test_expectation(results, name: str) -> None:
    r = results[name]
    assert r.count <= r.bound, f"{r.name}: {r.count} > {r.bound} ({r.what}); e.g. {r.examples[:5]}"


def test_issue_targets_are_the_bounds() -> None:
    """The bounds are issue 38's targets: none of them may be loosened quietly."""
    bounds = {name: bound for name, bound, _, _ in realism.CHECKS}
    assert bounds["mainstream_rows_over_150k"] == 0
    assert bounds["foreign_grades_2015_2020"] == 0
    assert bounds["hybrid_named_gas_rows"] == 0
    assert bounds["package_named_trim_groups"] <= 20
    assert bounds["inverted_ladders"] <= 3


def test_reviewed_tables_are_data_with_a_source_per_row() -> None:
    """Issue 38, deliver 3: the hand-reviewed tables (base trims, make ladders, lineups, prices, make
    ranges, hybrid outputs) are CSV files of the builder, each row citing a public page."""
    import csv

    here = Path(realism.__file__).resolve().parent
    files = sorted(here.glob("*.csv"))
    assert {"base_trims.csv", "make_ladders.csv", "lineups_reviewed.csv", "msrp_lines.csv", "msrp_makes.csv",
            "msrp_trims.csv", "msrp_reference.csv", "hybrid_system_hp.csv"} <= {p.name for p in files}
    for path in files:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        assert rows and all(r["source"].startswith(("https://", "http://")) for r in rows), path.name


def test_trim_name_rules() -> None:
    """The name rules behind the expectations, on vPIC's and EPA's own spellings."""
    from vehicledata.dataset import lineup

    assert lineup.clean("Technology Package", "gas") is None
    assert lineup.clean("Touring Technology Package", "gas") == "Touring"
    assert lineup.clean("Premium w/ Nav & Low Emissions Package", "gas") == "Premium"
    assert lineup.clean("quattro Technik w/ S-Line pkg", "gas") is None
    assert lineup.clean("Leather", "gas") is None
    assert lineup.clean("SE MT", "gas") == "SE" and lineup.clean("MT", "gas") is None
    assert lineup.clean("FF LE", "gas") == "LE" and lineup.clean("Large", "gas") is None
    assert lineup.clean("Long Range", "electric") == "Long Range"
    assert lineup.clean("TOP (High)", "gas") is None and lineup.clean("HGS", "gas") is None
    assert lineup.clean("Premier HEV", "gas") == "Premier" and lineup.clean("Premier HEV", "hybrid") == "Premier HEV"
    assert lineup.clean("1SV", "gas") is None
    assert lineup.clean("SuperCab-Raptor", "gas") == "Raptor" and lineup.clean("SuperCrew-Police", "gas") is None
    assert lineup.clean("EX-L", "gas") == "EX-L" and lineup.clean("R-Design", "gas") == "R-Design"
    assert lineup.foreign("GLS", "Hyundai") and lineup.foreign("GX", "Mazda") and lineup.foreign("SV", "Buick")
    assert not lineup.foreign("SV", "Nissan") and not lineup.foreign("SV Autobiography", "Land Rover")
    assert not lineup.foreign("GS", "Buick", frozenset({"GS"}))   # the make's US sources use it
    assert lineup.hinted("Daytona R/T 245/35ZR20 Rear A/S", "electric", "Charger", "Dodge") == ["Daytona R/T"]


def test_closing_s_is_a_grade() -> None:
    """A closing "S" is a grade of vPIC's sweep ("Altitude S", "Turbo S"), no package letter like
    Toyota's "LE X"; Toyota's "S Grade" code is; a closing grade letter is not shared across a list."""
    from vehicledata.dataset import lineup, sweep

    for name in ("Altitude S", "Turbo S", "Pro S", "R-Dynamic S", "Cooper S"):
        assert lineup.clean(name, "gas") == name
    assert lineup.clean("LE X", "gas") == "LE" and lineup.clean("XLE M", "gas") == "XLE"
    assert lineup.clean("SE (S Grade)", "gas") == "SE" and lineup.clean("SE S Grade", "gas") == "SE"
    assert sweep.trim_names("Islander, Altitude, Altitude S") == ("Islander", "Altitude", "Altitude S")
    assert sweep.trim_names("SE/XLE Hybrid") == ("SE Hybrid", "XLE Hybrid")
    assert sweep.trim_names("LX Pop,S,EX") == ("LX Pop", "S", "EX")
    assert sweep.trim_names("Hybrid XLE/SE") == ("Hybrid XLE", "Hybrid SE")


def test_make_prefixed_model_is_read() -> None:
    """vPIC files Mazda's 3 as "Mazda3": the sweep is read under that name where the model's own
    finds nothing, and the word "Mazda3" in a vPIC trim is the model's name, no grade."""
    from vehicledata.dataset import lineup, sweep

    e = sweep.Entry("Sport", "Sedan", 4, "2", 2.5, 4, "", 186, 3000, 107.3, 5, 21000)
    sw = sweep.Sweep({(2019, "mazda", "mazda3"): [e], (2019, "mazda", "cx5"): []})
    assert sw.entries(2019, "Mazda", "3") == [e] and sw.entries(2019, "Mazda", "CX-5") == []
    assert lineup.clean("Mazda3 Sport", "gas", "3") == "Sport"
    assert lineup.clean("MX5 Sport", "gas", "CX-5") == "MX5 Sport"


def test_model_named_alone_is_base() -> None:
    """A vPIC trim that is only the model's name is its base grade, as the service names a model
    with no grade "Base"; the model "with" a package is that package's grade; words that are only
    body or powertrain ("Regular Cab", "Camry Hybrid" on a gas row) stay no trim."""
    from vehicledata.dataset import lineup

    assert lineup.clean("Macan", "gas", "Macan") == "Base" and lineup.clean("CX-30", "gas", "CX-30") == "Base"
    assert lineup.clean("Mazda3", "gas", "3") == "Base" and lineup.clean("CX-30 AWD", "gas", "CX-30") == "Base"
    assert lineup.clean("Mazda3 with Select Package", "gas", "3") == "Select"
    assert lineup.clean("Mazda3 with Premium Plus Package", "gas", "3") == "Premium Plus"
    assert lineup.clean("Regular Cab", "gas", "F-150") is None and lineup.clean("Crew", "gas", "Grand Caravan") is None
    assert lineup.clean("Camry Hybrid", "gas", "Camry") is None


def test_no_grade_of_another_market_and_no_unknown_grade() -> None:
    """vPIC's "not identified" is no trim; a grade marked for other markets only ("ES (Canada)",
    "North(Can)") and Canada's and Latin America's own grade words (Volkswagen's Highline, Jeep's
    North, Longitude) are no US trim; a grade marked for the US too is one."""
    from vehicledata.dataset import lineup

    for name in ("not identified", "(not-identified)", "Not  Identified", "ES (Canada)", "North(Can)", "Longitude(BUX)"):
        assert lineup.clean(name, "gas") is None, name
    assert lineup.clean("Sport (Mex/U.S.)", "gas") == "Sport"
    assert lineup.clean("Latitude (North for Canada)", "gas") == "Latitude"
    assert lineup.foreign("Highline", "Volkswagen") and lineup.foreign("North", "Jeep") and lineup.foreign("Longitude", "Jeep")
    assert not lineup.foreign("Latitude", "Jeep")
    # Honda's DX: a US grade up to the 2012 Civic, Canada's after
    assert lineup.foreign("DX", "Honda", year=2019) and not lineup.foreign("DX", "Honda", year=2012)
    assert not lineup.foreign("DX", "Honda", frozenset({"DX"}), 2019)


def test_generic_ladder_places_common_grades() -> None:
    """Audi's Premium, Premium Plus, Prestige; Toyota's SR, SR5 ... Limited, Platinum, Capstone;
    Nissan's S, SV, SR, SL; a plain "Base" first; GMC's, Cadillac's, Lincoln's, Acura's grades."""
    from vehicledata.dataset import lineup

    def order(*names: str) -> bool:
        return [lineup.rank(n) for n in names] == sorted(lineup.rank(n) for n in names)
    assert order("Premium", "Premium Plus", "Prestige")
    assert order("SR", "SR5", "TRD Sport", "Limited", "Platinum", "Capstone")
    assert order("S", "SV", "SR", "SL")
    assert order("Base", "A-Spec", "Advance") and order("Base", "Luxury", "Premium Luxury", "Platinum")
    assert order("SLE", "Elevation", "SLT", "AT4", "Denali") and order("Premiere", "Select", "Reserve", "Black Label")


def test_coded_grades_are_spelled_out() -> None:
    """vPIC's abbreviations and codes become the make's own grade words; the makers' upper-case
    grades and model designations stay as they are."""
    from vehicledata.dataset import lineup

    words = lineup.grade_words(["Select", "Reserve", "Black Label", "Preferred", "Advance", "Touring"])
    assert lineup.expand_codes("Prfrd", words) == "Preferred" and lineup.expand_codes("Rsv", words) == "Reserve"
    assert lineup.expand_codes("Blk Label", words) == "Black Label" and lineup.expand_codes("Trg", words) == "Touring"
    assert lineup.expand_codes("ADV19", words) == "Advance"
    assert lineup.expand_codes("SV42 Momentum", words) == "Momentum" and lineup.expand_codes("SVFB Black", words) == "Black"
    for kept in ("XLT", "SRT", "TRD Off Road", "AMG GLC43", "QX60", "SV32", "All Terrain", "F-Type 75"):
        assert lineup.expand_codes(kept, words) == kept


def test_upper_case_codes_beside_their_grade_are_that_grade() -> None:
    """Honda's vPIC writes a grade both coded and spelled out in one model year ("TRG" and
    "TOURING", "TOURING-7" with its seat count): the code is the grade the lineup spells; a
    ladder grade or designation in capitals stays, and so does a code no served grade spells."""
    from vehicledata.dataset import lineup

    odyssey = ["LX", "EX", "TRG", "EX-L", "Touring", "TOURING-7", "Elite"]
    assert [lineup.spell_in_lineup(t, odyssey) for t in odyssey] == \
        ["LX", "EX", "Touring", "EX-L", "Touring", "Touring", "Elite"]
    dodge = ["SXT", "SRT", "Sport", "SLT", "Select", "XLT", "GT-2"]
    assert [lineup.spell_in_lineup(t, dodge) for t in dodge] == ["SXT", "SRT", "Sport", "SLT", "Select", "XLT", "GT-2"]
    assert lineup.spell_in_lineup("TRG", ["LX", "TRG"]) == "TRG"


def test_turbo_and_non_turbo_outputs_split() -> None:
    """2016 F-150 3.5 L: vPIC rates it "282|365", the Test Car List tested the EcoBoost only."""
    from types import SimpleNamespace

    from vehicledata.dataset import rows

    entry = SimpleNamespace(hp=282, hps=(282, 365))
    na = SimpleNamespace(turbo=False, supercharged=False, displ=3.5)
    boosted = SimpleNamespace(turbo=True, supercharged=False, displ=3.5)
    assert rows._split_by_boost(na, 365.0, [365], [entry]) == 282.0          # type: ignore[arg-type]
    assert rows._split_by_boost(boosted, 365.0, [365], [entry]) == 365.0     # type: ignore[arg-type]
    # one output only: the boosted engine's above 85 hp a litre, else the other's
    assert rows._split_by_boost(na, 147.0, [147], []) == 147.0               # type: ignore[arg-type]
    assert rows._split_by_boost(boosted, 147.0, [147], []) is None           # type: ignore[arg-type]



def test_the_base_trim_is_the_lines_cheapest() -> None:
    """A grade ranked above the base trim priced below it (vPIC's prices out of the ladder's order)
    moves the base trim's cheapest row one step below it; grades ranked alike keep their prices."""
    from vehicledata.dataset import rows

    out = {(0, "L"): 19400, (0, "LE Eco"): 19335, (1, "LE"): 20780}
    real = {k: True for k in out}
    rows._base_cheapest([0, 1], ["gas", "gas"], [["L", "LE Eco"], ["LE"]], ["L", "LE Eco", "LE"], 0.05, out, real,
                        "Toyota", "Corolla", 2017)
    assert out[(0, "L")] == 18415 and not real[(0, "L")] and out[(0, "LE Eco")] == 19335
    alike = {(0, "430i"): 44650, (0, "430i Gran Coupe"): 42950}
    rows._base_cheapest([0], ["gas"], [["430i", "430i Gran Coupe"]], ["430i", "430i Gran Coupe"], 0.05, alike,
                        {k: True for k in alike}, "BMW", "430i", 2018)
    assert alike[(0, "430i")] == 44650


def test_a_list_shares_a_closing_word_only_when_it_is_no_grade() -> None:
    """vPIC's and EPA's lists: a closing powertrain word goes with each name ("SE/XLE Hybrid"), a
    closing grade does not ("SR/SR5/TRD Sport" is no "SR Sport"; "Ltd/SE Platinum" no "Ltd
    Platinum"), nor the words of a name that extends an earlier one ("XLE / XLE Premium 4WD"); a
    first name's head goes with the names after it only where that first name closes on a grade
    ("Hybrid XLE/SE"; not "Big Horn/Lonestar", "High Country / RS", EPA's "Limited AWD/SE");
    "2WD" is a drive word, not GM's option code for a grade "WD"."""
    from vehicledata.dataset import lineup, sweep

    assert sweep.trim_names("SE/XLE Hybrid") == ("SE Hybrid", "XLE Hybrid")
    assert sweep.trim_names("Hybrid XLE/SE") == ("Hybrid XLE", "Hybrid SE")
    assert sweep.trim_names("SR/SR5/TRD Sport") == ("SR", "SR5", "TRD Sport")
    assert sweep.trim_names("Ltd/SE Platinum G Grade") == ("Ltd", "SE Platinum G Grade")
    assert sweep.trim_names("XLE / XLE Premium 4WD") == ("XLE", "XLE Premium 4WD")
    assert sweep.trim_names("Limited AWD/SE") == ("Limited AWD", "SE")
    assert sweep.trim_names("Big Horn/Lonestar") == ("Big Horn", "Lonestar")
    assert sweep.trim_names("High Country / RS") == ("High Country", "RS")
    assert sweep.trim_names("SR/SR5/TRD Off Road/Pro/Sport") == ("SR", "SR5", "TRD Off Road", "TRD Pro", "TRD Sport")
    assert sweep.trim_names("SR5/TRD Off Road/TRD Sport") == ("SR5", "TRD Off Road", "TRD Sport")
    assert sweep.trim_names("TRD Off Road Premium/Ltd/Ltd Night Shade/TRD Pro") == \
        ("TRD Off Road Premium", "Ltd", "Ltd Night Shade", "TRD Pro")
    assert lineup.hinted("Limited AWD/SE", "gas", "RAV4", "Toyota") == ["Limited", "SE"]
    assert lineup.clean("XLE Premium 2WD", "gas") == "XLE Premium" and lineup.clean("2WD", "gas") is None
    assert lineup.clean("1LT", "gas") == "LT" and lineup.clean("2LT", "gas") == "LT"


def test_a_code_closed_by_a_grades_initials_is_that_grade() -> None:
    """Honda's vPIC "TRG-EL" beside "Elite" in one lineup is the Elite; without it the name stays."""
    from vehicledata.dataset import lineup

    odyssey = ["LX", "EX", "EX-L", "Touring", "TRG-EL", "Elite"]
    assert [lineup.spell_in_lineup(t, odyssey) for t in odyssey] == ["LX", "EX", "EX-L", "Touring", "Elite", "Elite"]
    assert lineup.spell_in_lineup("TRG-EL", ["LX", "Touring", "TRG-EL"]) == "Touring-EL"
    for kept in ("EX-L", "EX-TL", "SH-AWD", "A-SPEC", "GT-Line"):
        assert lineup.spell_in_lineup(kept, [kept, "Elite", "Touring", "Line"]) == kept


def test_mitsubishi_climbs_its_own_ladder() -> None:
    """Mitsubishi's grades (make_ladders.csv): ES, SE, LE, SEL, GT (2018 Outlander: ES $23,945,
    SE $24,945, LE and SEL $26,145, GT $32,245); the generic ladder put LE and SE below ES."""
    from vehicledata.dataset import rows

    assert rows.ladder_order("Mitsubishi", "Outlander", 2017, ["GT", "SEL", "LE", "SE", "ES"]) == \
        ["ES", "SE", "LE", "SEL", "GT"]


def test_a_row_without_a_grade_takes_the_grades_its_siblings_borrowed() -> None:
    """2018 Rogue: vPIC names no trim that model year; the 2.5 L rows borrow S, SV, SL from 2017,
    and the hybrid, whose engine no other year names, takes the line's base grade from them
    (it was "Hybrid", a name the real lineup has not)."""
    from types import SimpleNamespace

    from vehicledata.dataset import naming, rows

    def car(year: int, displ: float) -> SimpleNamespace:
        return SimpleNamespace(year=year, displ=displ, cylinders="4", turbo=False, supercharged=False)

    vehicles = [car(2017, 2.5), car(2018, 2.5), car(2018, 2.0)]
    idents = [("Nissan", "Rogue", "Base")] * 3
    named = [naming.Name(model="Rogue", series=None, submodel="Base", trim="Base")] * 3
    etypes = ["gas", "gas", "hybrid"]
    facts = [{"fits": lambda c: True} for _ in vehicles]
    lineups = [["S", "SV", "SL"], ["Base"], ["Hybrid"]]
    rows._borrow_grades(vehicles, idents, named, etypes, facts, lineups)  # type: ignore[arg-type]
    assert lineups == [["S", "SV", "SL"], ["S", "SV", "SL"], ["S"]]
    assert facts[2].get("borrowed") is True


def test_base_beside_a_grade_names_no_trim_and_work_truck_is_gms_base() -> None:
    """GM's vPIC "Work Truck/Fleet/Base": the "Base" says the Work Truck is the base grade, it is no
    trim of its own; a lone "Base" and a list's first "Base" (2021 Bronco "Base, Big Bend") stay. GM's Work Truck sits below its LS (2018 Silverado 1500:
    Work Truck, LS, Custom, LT), below which the generic ladder had put it."""
    from vehicledata.dataset import lineup, sweep

    def entry(trim: str) -> sweep.Entry:
        return sweep.Entry(trim, "Pickup", 2, "2", 5.3, 8, "", 355, None, None, None, None)
    assert lineup.candidates([entry("Work Truck/Fleet/Base"), entry("LS")], "gas") == ["Work Truck", "LS"]
    assert lineup.candidates([entry("Base"), entry("LS")], "gas") == ["Base", "LS"]
    assert lineup.candidates([entry("Base, Big Bend, Black Diamond")], "gas") == ["Base", "Big Bend", "Black Diamond"]
    assert [lineup.rank(t) for t in ("L", "Work Truck", "LS", "LT")] == \
        sorted(lineup.rank(t) for t in ("L", "Work Truck", "LS", "LT"))
