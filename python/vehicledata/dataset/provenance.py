"""Where each column's values come from: 'real' (a public source, possibly mapped onto the
service's vocabulary), 'derived' (computed by a rule from real facts: ids, descriptions, body
type, layout), 'synthetic' (no public source gives the value: an estimate or an invention,
e.g. colours, fuel tank) or 'none' (no public source, always NULL: length, torque). The emulator lists a record
type's synthetic columns in its `X-Emulator-Synthetic` header.

The same table is written into the database (`provenance`) and documented in docs/data-reference.md (tools/gen_data_reference.py).
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from .. import schema

REAL = "real"
DERIVED = "derived"
SYNTHETIC = "synthetic"
NONE = "none"   # no public source: the column is NULL in every row
ORIGINS = (REAL, DERIVED, SYNTHETIC, NONE)

_IDENTITY: Dict[str, Tuple[str, str]] = {
    "make_id": (DERIVED, "identifier computed from the make name (CRC-32, collision-probed); stable across builds"),
    "model_id": (DERIVED, "identifier computed from make + marketed model; stable across builds"),
    "submodel_id": (DERIVED, "identifier computed from year + make + model + submodel; stable across builds"),
    "trim_id": (REAL, "EPA vehicle id"),
    "year": (REAL, "EPA year"),
    "make": (REAL, "EPA make (one spelling per make)"),
    "model": (REAL, "marketed model: vPIC Model name of the make matching EPA's leading model words (F150 -> F-150), else a reviewed exception, else EPA baseModel"),
    "series": (REAL, "vPIC Series pattern of the model and year when it names a series (5-Series -> 5 Series), else EPA baseModel when it is one; else NULL"),
    "submodel": (REAL, "EPA model words beyond the marketed model, without drive/body/fuel/weight words, else 'Base'"),
    "trim": (DERIVED, "EPA trim words (first of 'LE/SE'), else a reviewed base trim, else vPIC Trim pattern of the model and year, else the model when it is a grade (530i), else 'Base'"),
    "trim_description": (DERIVED, "composed: trim (none for 'Base'), doors, body or cab, drive, engine size/cylinders/aspiration, transmission code"),
    "description": (DERIVED, "composed: trim (none for 'Base'), doors, body or cab, drive, engine size/cylinders/aspiration, transmission code"),
    "created": (REAL, "EPA createdOn, ISO 8601 with its US Eastern offset (models/submodels: earliest)"),
    "modified": (REAL, "EPA modifiedOn, ISO 8601 with its US Eastern offset (models/submodels: latest)"),
}

_TABLE: Dict[str, Dict[str, Tuple[str, str]]] = {
    "makes": {"id": (DERIVED, "identifier computed from the make name; stable"), "name": (REAL, "EPA make")},
    "models": {"id": (DERIVED, "identifier computed from make + marketed model; stable"),
               "name": (REAL, "marketed model (see trims.model)")},
    "submodels": {"id": (DERIVED, "identifier computed from year + make + model + submodel; stable"),
                  "oem_make_model_id": (DERIVED, "the model's id")},
    "trims": {"id": (REAL, "EPA vehicle id"),
              "msrp": (SYNTHETIC, "a reviewed base price of the trim where dataset/msrp_trims.csv has one (2019 BMW grades, a public page per row; real), else vPIC Base Price of the trim where vPIC has one and it agrees with the line (within 0.6-2.5x the class formula; real, about a quarter of 2015-2020 trims; none on a grade borrowed from another row); else reviewed lines (dataset/msrp_lines.csv) run from their published base to top price, other lines from their base (vPIC's base-trim price, else the class formula calibrated on dataset/msrp_reference.csv) up the make's ladder (4-9%/trim, pickups 18%; the whole ladder within its segment's spread, a formula base carried from the model's nearest real year), plus hybrid/diesel/AWD/engine-size premiums, inside the make's published range (dataset/msrp_makes.csv; moved 3-5 %/year after its last year)"),
              "invoice": (SYNTHETIC, "90.5-94.5% of the MSRP, seeded")},
    "bodies": {
        "id": (REAL, "EPA vehicle id (one body per trim)"),
        "type": (DERIVED, "from EPA model name words, VClass and per-body interior volumes (pv2/pv4/hpv); pickup cab from the name or the make's usual cab"),
        "doors": (REAL, "vPIC Doors of the VIN patterns agreeing with the EPA row's engine and drive; else derived from body type, name and EPA 2-door/4-door/hatchback volumes (a hatch counts as a door)"),
        "length": (NONE, "always NULL: no public source"),
        "width": (NONE, "always NULL: no public source"),
        "height": (NONE, "always NULL: no public source"),
        "seats": (REAL, "vPIC Number of Seats of the agreeing VIN patterns (median); else NULL"),
        "wheel_base": (REAL, "vPIC Wheelbase of the agreeing VIN patterns (median); else NULL"),
        "front_track": (NONE, "always NULL: no public source (the live service often has none)"),
        "rear_track": (NONE, "always NULL: no public source (the live service often has none)"),
        "ground_clearance": (NONE, "always NULL: no public source (the live service often has none)"),
        "cargo_capacity": (REAL, "EPA luggage volume (lv4/lv2/hlv) where EPA has one (cars); else NULL"),
        "max_cargo_capacity": (NONE, "always NULL: no public source"),
        "curb_weight": (REAL, "vPIC Curb Weight of the agreeing VIN patterns (median) where vPIC gives it per configuration; else derived: EPA Test Car List equivalent test weight - 300 lb, the lightest tested vehicle of the configuration (also where vPIC gives several engines, drives or powertrains one figure); else NULL"),
        "gross_weight": (NONE, "always NULL: no public source (the live service often has none)"),
        "max_payload": (NONE, "always NULL: no public source (the live service often has none)"),
        "max_towing_capacity": (NONE, "always NULL: no public source"),
    },
    "engines": {
        "id": (REAL, "EPA vehicle id (one engine per trim)"),
        "engine_type": (REAL, "EPA atvType (mild hybrid from eng_dscr; diesel/electric from fuelType)"),
        "fuel_type": (REAL, "EPA fuelType mapped onto the service's values (Premium -> recommended)"),
        "cylinders": (DERIVED, "EPA cylinder count; layout (I/V/flat/W) from vPIC VIN patterns where they agree, else make rules"),
        "size": (REAL, "EPA displ (litres); NULL for electric"),
        "horsepower_hp": (REAL, "electric: EPA evMotor kW x 1.341; hybrid and plug-in hybrid lines of the reviewed table (dataset/hybrid_system_hp.csv, a cited page per row): the system output; else EPA Test Car List rated horsepower of the matching tested configuration (year, manufacturer code, displacement, cylinders, transmission, drive, model words; for other hybrids the engine alone); else vPIC Engine Brake (hp); one size sold with and without a turbo: the lower output the sources give for it to the engine without, the higher to the boosted one; else derived: the same engine's rating in the model's nearest rated year (up to 3 years: 2025-2026); else NULL"),
        "horsepower_rpm": (NONE, "always NULL: no public source"),
        "torque_ft_lbs": (NONE, "always NULL: no public source"),
        "torque_rpm": (NONE, "always NULL: no public source"),
        "valves": (DERIVED, "cylinders x valves per cylinder of the cam type"),
        "valve_timing": (DERIVED, "'Variable' for DOHC/SOHC engines from 2000 and OHV from 2010, or VTEC/VVT in eng_dscr"),
        "cam_type": (DERIVED, "EPA eng_dscr SOHC/DOHC/OHV where stated, else make/layout/displacement/year rules (GM 4.3 L V6: OHV)"),
        "drive_type": (REAL, "EPA drive ('4-Wheel or All-Wheel Drive': 4WD for pickups/4WD names, else AWD)"),
        "transmission": (REAL, "EPA trany mapped onto the service's values"),
    },
    "mileages": {
        "id": (REAL, "EPA vehicle id (one mileage row per trim)"),
        "fuel_tank_capacity": (SYNTHETIC, "class base x engine size, less for hybrids; NULL for electric"),
        "combined_mpg": (REAL, "EPA comb08 (NULL for electric: see epa_combined_mpg_electric)"),
        "epa_city_mpg": (REAL, "EPA city08 (NULL for electric)"),
        "epa_highway_mpg": (REAL, "EPA highway08 (NULL for electric)"),
        "range_city": (SYNTHETIC, "electric: EPA rangeCity; else derived tank x city mpg (+ electric range for PHEVs)"),
        "range_highway": (SYNTHETIC, "electric: EPA rangeHwy; else derived tank x highway mpg (+ electric range)"),
        "battery_capacity_electric": (SYNTHETIC, "EPA evMotor pack size where stated, else range x kWh/100 mi x 1.1"),
        "epa_time_to_charge_hr_240v_electric": (REAL, "EPA charge240"),
        "epa_kwh_100_mi_electric": (REAL, "EPA combE"),
        "range_electric": (REAL, "EPA range (electric) or rangeA (plug-in hybrid)"),
        "epa_highway_mpg_electric": (REAL, "EPA highway08 (electric) or highwayA08 (plug-in hybrid), MPGe"),
        "epa_city_mpg_electric": (REAL, "EPA city08 (electric) or cityA08 (plug-in hybrid), MPGe"),
        "epa_combined_mpg_electric": (REAL, "EPA comb08 (electric) or combA08 (plug-in hybrid), MPGe"),
    },
    "exterior_colors": {
        "id": (DERIVED, "trim id x 100 + k"),
        "color": (SYNTHETIC, "6-10 names from a fixed palette, seeded per model and year"),
        "rgb": (SYNTHETIC, "the palette's RGB for the name"),
    },
    "interior_colors": {
        "id": (DERIVED, "trim id x 100 + 50 + k"),
        "color": (SYNTHETIC, "2-4 names from a fixed palette, seeded per model and year"),
        "rgb": (SYNTHETIC, "the palette's RGB for the name"),
    },
    "obd_codes": {
        "code": (REAL, "OBD code table (dtc_definitions.code)"),
        "description": (REAL, "OBD code table description (English)"),
        "make": (REAL, "code table manufacturer as a make name; NULL for generic and unattributed ('OTHER') codes"),
        "demo": (DERIVED, "1 for the service's demo codes B1200, C1091, P0100, U1000 (generic row)"),
    },
    "powersports_makes": {"id": (REAL, "vPIC Make.Id"), "name": (REAL, "vPIC Make.Name")},
    "powersports_models": {
        "id": (REAL, "vPIC Model.Id of a model named by a motorcycle WMI's VIN schema"),
        "make_id": (REAL, "vPIC Make.Id of the model (Make_Model)"),
        "name": (REAL, "vPIC Model.Name"),
        "make": (REAL, "vPIC Make.Name"),
    },
    "powersports_model_years": {
        "id": (DERIVED, "rank by (model id, year)"),
        "year": (REAL, "the model's VIN schema year ranges (Wmi_VinSchema; an open range ends at the newest start year)"),
        "make_id": (REAL, "vPIC Make.Id"),
        "make": (REAL, "vPIC Make.Name"),
        "model_id": (REAL, "vPIC Model.Id"),
        "model": (REAL, "vPIC Model.Name"),
    },
}


# Columns whose origin differs from row to row (a vPIC price or a ladder price; a vPIC curb
# weight or one derived from the test weight; ...): the database's `value_origins` table gives
# the origin of each of them per trim id, `vehicledata dataset info` their shares.
ROW_ORIGIN_COLUMNS: Tuple[Tuple[str, str], ...] = (
    ("trims", "msrp"), ("bodies", "curb_weight"), ("bodies", "doors"), ("engines", "horsepower_hp"),
    ("bodies", "seats"), ("bodies", "wheel_base"))


def rows() -> List[Tuple[str, str, str, str]]:
    """(table_name, column_name, origin, note) for every column of every storage table."""
    out: List[Tuple[str, str, str, str]] = []
    for table in schema.tables():
        overrides = _TABLE.get(table, {})
        for f in schema.table_record(table).fields:
            if f.type == "nested":
                continue
            origin, note = overrides.get(f.name) or _IDENTITY.get(f.name) or (DERIVED, "not documented")
            out.append((table, f.name, origin, note))
    return out


def counts_per_field(rows_: List[Tuple[str, str, str, str]]) -> Dict[str, Dict[str, int]]:
    """{column name: {origin: number of storage tables where that column has that origin}},
    from provenance rows (e.g. the database's `provenance` table)."""
    out: Dict[str, Dict[str, int]] = {}
    for _table, column, origin, _note in rows_:
        per = out.setdefault(column, {o: 0 for o in ORIGINS})
        per[origin] = per.get(origin, 0) + 1
    return out
