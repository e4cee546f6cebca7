"""EPA values -> the service's enumerations (docs/resources.md, docs/dataset.md).

Every function returns a value of the enumeration or None; the builder checks each value
against the schema table as it writes, so a mapping that drifts fails the build loudly.
"""
from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

# ---- engine_type -------------------------------------------------------------------------

_ATV_ENGINE_TYPE: Dict[str, str] = {
    "Hybrid": "hybrid",
    "FFV": "flex-fuel (FFV)",
    "EV": "electric",
    "Diesel": "diesel",
    "Plug-in Hybrid": "plug-in hybrid",
    "CNG": "natural gas (CNG)",
    "FCV": "electric (fuel cell)",
    "Bifuel (CNG)": "natural gas (CNG)",
    "Bifuel (LPG)": "gas",
}


def engine_type(atv_type: str, fuel_type: str, eng_dscr: str) -> str:
    """From EPA `atvType` (and `fuelType`, `eng_dscr` for diesel and mild hybrids)."""
    if atv_type == "Hybrid" and "mild hybrid" in eng_dscr.lower():
        return "mild hybrid"
    mapped = _ATV_ENGINE_TYPE.get(atv_type)
    if mapped:
        return mapped
    if fuel_type == "Diesel":
        return "diesel"
    if fuel_type == "Electricity":
        return "electric"
    if fuel_type == "Hydrogen":
        return "electric (fuel cell)"
    if fuel_type == "CNG":
        return "natural gas (CNG)"
    if "E85" in fuel_type:
        return "flex-fuel (FFV)"
    return "gas"


# ---- fuel_type ----------------------------------------------------------------------------

_FUEL_TYPE: Dict[str, Optional[str]] = {
    "Regular": "regular unleaded",
    "Premium": "premium unleaded (recommended)",
    "Midgrade": "midgrade unleaded (recommended)",
    "Diesel": "diesel fuel",
    "Electricity": "electric",
    "Gasoline or E85": "flex-fuel (unleaded/E85)",
    "Premium or E85": "flex-fuel (premium unleaded recommended/E85)",
    "Premium and Electricity": "premium unleaded (recommended)",
    "Premium Gas or Electricity": "premium unleaded (recommended)",
    "Regular Gas and Electricity": "regular unleaded",
    "Regular Gas or Electricity": "regular unleaded",
    "CNG": "natural gas",
    "Gasoline or natural gas": "flex-fuel (unleaded/natural gas)",
    "Gasoline or propane": "regular unleaded",
    "Hydrogen": "hydrogen",
}
_FUEL_TYPE1: Dict[str, str] = {
    "Regular Gasoline": "regular unleaded",
    "Premium Gasoline": "premium unleaded (recommended)",
    "Midgrade Gasoline": "midgrade unleaded (recommended)",
    "Diesel": "diesel fuel",
    "Electricity": "electric",
    "Natural Gas": "natural gas",
    "Hydrogen": "hydrogen",
}


def fuel_type(fuel_type_: str, fuel_type1: str) -> Optional[str]:
    """From EPA `fuelType` (falling back to `fuelType1`). A plug-in hybrid gets its
    combustion fuel; EPA's "Premium" does not say required or recommended: "recommended"."""
    return _FUEL_TYPE.get(fuel_type_) or _FUEL_TYPE1.get(fuel_type1)


# ---- drive_type ---------------------------------------------------------------------------

def drive_type(drive: str, vclass: str, model: str) -> Optional[str]:
    """From EPA `drive`. "4-Wheel or All-Wheel Drive" is four wheel drive for pickups and for
    model names that say 4WD/4x4, else all wheel drive; "2-Wheel Drive" (old trucks and vans)
    is rear wheel drive."""
    d = drive.strip()
    if d == "Front-Wheel Drive":
        return "front wheel drive"
    if d == "Rear-Wheel Drive":
        return "rear wheel drive"
    if d == "All-Wheel Drive":
        return "all wheel drive"
    if d in ("4-Wheel Drive", "Part-time 4-Wheel Drive"):
        return "four wheel drive"
    if d == "4-Wheel or All-Wheel Drive":
        m = model.upper()
        if "Pickup" in vclass or "4WD" in m or "4X4" in m:
            return "four wheel drive"
        return "all wheel drive"
    if d == "2-Wheel Drive":
        return "rear wheel drive"
    return None


# ---- transmission -------------------------------------------------------------------------

_TRANS_PAREN = re.compile(r"^Automatic \((?P<kind>A|S|AM|AM-S|AV|AV-S|L)(?P<speeds>\d+)?\)$")
_TRANS_SPD = re.compile(r"^(?P<kind>Automatic|Manual) (?P<speeds>\d+)-spd")


def transmission(trany: str, engine_type_: str) -> Tuple[Optional[str], str]:
    """EPA `trany` -> (SPEC transmission, short code for descriptions such as "8A").

    "Automatic (S8)" -> "8-speed shiftable automatic"; "Automatic 8-spd" -> "8-speed
    automatic"; "Automatic (AM7)"/"(AM-S7)" -> "7-speed automated manual"; "(AV)"/"variable
    gear ratios" -> CVT ("electrically variable" for hybrids); "(AV-Sn)" -> shiftable CVT;
    "(A1)" -> "1-speed direct drive" for electric cars, else "1-speed automatic".
    Values with no SPEC counterpart (e.g. "Manual 3-spd") give None.
    """
    t = trany.strip()
    electrified = engine_type_ in ("hybrid", "plug-in hybrid")
    electric = engine_type_ in ("electric", "electric (fuel cell)")
    if not t:
        return (("1-speed direct drive", "DD") if electric else (None, ""))
    if t == "Automatic (variable gear ratios)":
        if electrified:
            return "electrically variable-speed automatic", "CVT"
        return "continuously variable-speed automatic", "CVT"
    m = _TRANS_SPD.match(t)
    if m:
        n = int(m.group("speeds"))
        if m.group("kind") == "Manual":
            return (f"{n}-speed manual", f"{n}M") if 4 <= n <= 7 else (None, f"{n}M")
        if n == 1 and electric:
            return "1-speed direct drive", "DD"
        if n == 2:
            return "2-speed automatic", "2A"
        return f"{n}-speed automatic", f"{n}A"
    m = _TRANS_PAREN.match(t)
    if not m:
        return None, ""
    kind = m.group("kind")
    n = int(m.group("speeds") or 0)
    if kind in ("AV", "AV-S"):
        if electrified:
            return "electrically variable-speed automatic", "CVT"
        if kind == "AV-S":
            return "continuously variable-speed shiftable automatic", "CVT"
        return "continuously variable-speed automatic", "CVT"
    if kind in ("AM", "AM-S"):
        if 5 <= n <= 9:
            return f"{n}-speed automated manual", f"{n}AM"
        return (f"{n}-speed shiftable automatic", f"{n}AM") if n == 10 else (None, f"{n}AM")
    if n == 1:
        return ("1-speed direct drive", "DD") if electric else ("1-speed automatic", "1A")
    if kind == "S":
        if 4 <= n <= 10:
            return f"{n}-speed shiftable automatic", f"{n}A"
        return (f"{n}-speed automatic", f"{n}A") if 2 <= n <= 3 else (None, f"{n}A")
    # A or L
    if 2 <= n <= 10:
        return f"{n}-speed automatic", f"{n}A"
    return None, f"{n}A"


# ---- cylinders ----------------------------------------------------------------------------

# Makes whose 6-cylinder engines are inline sixes (BMW; Mercedes-Benz and Jaguar/Land Rover
# from 2019 on; the 3.0 L Duramax diesel of Chevrolet/GMC from 2019).
_INLINE6_MAKES = {"BMW", "BMW Alpina", "Alpina"}
_FLAT_MAKES = {"Subaru", "Porsche"}


def cylinders(count: Optional[int], make: str, model: str, year: int, displ: Optional[float],
              engine_type_: str, eng_dscr: str) -> Optional[str]:
    """Cylinder count -> layout (I4, V6, flat 6, ...), by count and make rules: EPA gives the
    count only. 4, 3, 5, 2 -> inline (flat 4 for Subaru, Porsche 718/914 and Toyota 86/BRZ
    twins); 6 -> V6 (flat 6 for Porsche/Subaru, inline 6 for BMW, Mercedes-Benz and
    Jaguar/Land Rover 2019+, Chevrolet/GMC diesels 2019+, Toyota Supra 2020+,
    and Jeep/AMC before 2007); 8 -> V8; 10 -> V10; 12 -> V12 (W12 for Bentley and the W12
    Volkswagen/Audi); 16 -> W16; Mazda RX rotaries -> "rotary 0"."""
    m = model.upper()
    if make == "Mazda" and m.startswith("RX") and (count is None or count <= 2):
        return "rotary 0"
    if count is None or engine_type_ in ("electric", "electric (fuel cell)"):
        return None
    d = eng_dscr.upper()
    if count == 4:
        if make == "Subaru" or (make == "Porsche" and ("718" in m or "BOXSTER" in m or "CAYMAN" in m
                                                       or "914" in m)):
            return "flat 4"
        if make in ("Scion", "Toyota") and ("FR-S" in m or m.startswith("86") or "GR86" in m):
            return "flat 4"
        return "I4"
    if count == 6:
        if make in _FLAT_MAKES and not (make == "Porsche" and ("CAYENNE" in m or "MACAN" in m
                                                                or "PANAMERA" in m)):
            return "flat 6"
        if make in _INLINE6_MAKES:
            return "I6"
        if make in ("Mercedes-Benz", "Jaguar", "Land Rover") and year >= 2019 and (displ or 0) <= 3.0:
            return "I6"
        if make == "Toyota" and "SUPRA" in m and year >= 2020:
            return "I6"
        if engine_type_ == "diesel" and make in ("Chevrolet", "GMC") and year >= 2019:
            return "I6"
        if make in ("Jeep", "American Motors Corporation") and year < 2007 and (displ or 0) >= 3.9:
            return "I6"
        if "V-6" in d or "V6" in d:
            return "V6"
        return "V6"
    if count == 8:
        return "V8"
    if count == 10:
        return "V10"
    if count == 12:
        if make == "Bentley" or (make in ("Volkswagen", "Audi") and (displ or 0) >= 5.9):
            return "W12"
        return "V12"
    if count == 16:
        return "W16"
    if count in (2, 3, 5):
        return f"I{count}"
    return None


# ---- body type and doors ------------------------------------------------------------------

_CAB_WORDS = (
    ("CREWMAX", "Truck (CrewMax)"), ("SUPERCREW", "Truck (SuperCrew)"), ("SUPERCAB", "Truck (SuperCab)"),
    ("SUPER CAB", "Truck (SuperCab)"), ("MEGA CAB", "Truck (Mega Cab)"), ("QUAD CAB", "Truck (Quad Cab)"),
    ("CREW CAB", "Truck (Crew Cab)"), ("DOUBLE CAB", "Truck (Double Cab)"), ("KING CAB", "Truck (King Cab)"),
    ("ACCESS CAB", "Truck (Access Cab)"), ("CLUB CAB", "Truck (Club Cab)"), ("XTRACAB", "Truck (Xtracab)"),
    ("EXTENDED CAB", "Truck (Extended Cab)"), ("REGULAR CAB", "Truck (Regular Cab)"),
    ("CAB PLUS", "Truck (Cab Plus)"), ("CAB CHASSIS", "Truck (Regular Cab)"),
)
# Cab of a pickup whose EPA name does not say it: the make's best-selling cab style.
_DEFAULT_CAB = {
    "Ford": "Truck (SuperCrew)", "Toyota": "Truck (Double Cab)", "Nissan": "Truck (Crew Cab)",
    "Ram": "Truck (Quad Cab)", "Dodge": "Truck (Quad Cab)",
}


def body_type(vclass: str, model: str, make: str, pv2: float, pv4: float, hpv: float) -> Tuple[str, bool]:
    """(SPEC body type, derived?) from the EPA model name and class and the interior volumes
    EPA publishes per body (pv2: 2-door, pv4: 4-door, hpv: hatchback). The flag is True when
    the value is a default rather than read from the name or the volumes (pickup cabs)."""
    m = " " + model.upper().replace("-", " ") + " "
    v = vclass
    if "Pickup" in v or " PICKUP " in m or " CAB CHASSIS " in m:
        for word, value in _CAB_WORDS:
            if word in m:
                return value, False
        if make == "Toyota" and "TUNDRA" in m:
            return "Truck (CrewMax)", True
        return _DEFAULT_CAB.get(make, "Truck (Crew Cab)"), True
    if "Van" in v and "Minivan" not in v:
        if "Cargo" in v or " CARGO " in m:
            return "Cargo Van", False
        if "Passenger" in v or " PASSENGER " in m or " WAGON " in m:
            return "Passenger Van", False
        return "Van", False
    if "Minivan" in v:
        return "Minivan", False
    for words, value in (((" CONVERTIBLE ", " CABRIOLET ", " ROADSTER ", " SPYDER ", " SPIDER ", " VOLANTE ",
                           " CABRIO ", " DROPHEAD ", " TARGA "), "Convertible"),
                         ((" WAGON ", " SPORTWAGEN ", " ESTATE ", " AVANT ", " SPORTS WAGON ",
                           " ALLROAD ", " SHOOTING BRAKE ", " SPORTSWAGON "), "Wagon"),
                         ((" HATCHBACK ", " HATCH ", " SPORTBACK ", " 5 DOOR ", " 3 DOOR ", " 5DR ", " 3DR ",
                           " LIFTBACK "), "Hatchback"),
                         ((" GRAN COUPE ", " 4 DOOR COUPE "), "Sedan"),
                         ((" COUPE ",), "Coupe"),
                         ((" SEDAN ",), "Sedan")):
        if any(w in m for w in words):
            if value == "Wagon" and "Sport Utility" in v:
                return "SUV", False
            return value, False
    if "Sport Utility" in v or "Special Purpose" in v:
        if "Special Purpose" in v and (" VAN " in m or " CARAVAN " in m):
            return "Minivan", False
        return "SUV", False
    if "Station Wagon" in v:
        return "Wagon", False
    if hpv > 0 and pv4 <= 0 and pv2 <= 0:
        return "Hatchback", False
    if pv4 > 0:
        return "Sedan", False
    if pv2 > 0 or v == "Two Seaters":
        return "Coupe", False
    if "Cars" in v:
        return "Sedan", True
    return "Unknown", True


def doors(body: str, model: str, pv2: float, pv4: float) -> int:
    """Door count; a hatchback's hatch counts as a door (docs/dataset.md)."""
    m = " " + model.upper().replace("-", " ") + " "
    if " 3 DOOR " in m or " 3DR " in m:
        return 3
    if " 5 DOOR " in m or " 5DR " in m:
        return 5
    if " 2 DOOR " in m or " 2DR " in m:
        return 2
    if " 4 DOOR " in m or " 4DR " in m:
        return 4
    if body in ("Coupe", "Convertible"):
        return 2
    if body == "Hatchback":
        return 3 if pv2 > 0 and pv4 <= 0 else 5
    if body in ("Truck (Regular Cab)",):
        return 2
    if body in ("Truck (Extended Cab)", "Truck (SuperCab)", "Truck (Access Cab)", "Truck (King Cab)",
                "Truck (Club Cab)", "Truck (Xtracab)", "Truck (Cab Plus)"):
        return 4
    if body in ("Cargo Van", "Passenger Van", "Van", "Ext Van", "Ext Cargo Van"):
        return 4
    if body in ("SUV", "Wagon", "Minivan"):
        return 5 if body != "Minivan" else 4
    return 4


_DRIVE_WORD = {"all wheel drive": "AWD", "four wheel drive": "4WD", "rear wheel drive": "2WD",
               "front wheel drive": "2WD"}


def description_body(body: str, doors_: int, drive_type_: Optional[str] = None) -> str:
    """Body words of a trim description as the service writes them: "4dr Sedan", "2dr Coupe",
    "4dr SUV AWD", "2dr Regular Cab 4WD" (trucks always name 2WD/4WD; other bodies name AWD/4WD
    only)."""
    if body.startswith("Truck ("):
        cab = body[len("Truck ("):-1]
        drive = _DRIVE_WORD.get(drive_type_ or "", "")
        return f"{doors_}dr {cab} {drive}".strip()
    shown_doors = doors_ - 1 if body in ("Hatchback", "SUV", "Wagon") and doors_ in (3, 5) else doors_
    drive = _DRIVE_WORD.get(drive_type_ or "", "") if drive_type_ in ("all wheel drive", "four wheel drive") else ""
    return f"{shown_doors}dr {body} {drive}".strip()


# Makes whose layouts the rules above know better than vPIC's votes (boxers, BMW sixes, and Honda,
# which builds no inline six), and GM's diesel six.
_RULE_MAKES = {"Subaru", "Porsche", "BMW", "BMW Alpina", "Honda", "Acura"}


def prefer_vpic(rule_layout: Optional[str], make: str, engine_type_: str) -> bool:
    """Whether a layout read from vPIC may replace the rule's answer."""
    if rule_layout is None or rule_layout.startswith("flat") or rule_layout == "rotary 0":
        return False
    if make in _RULE_MAKES:
        return False
    if engine_type_ == "diesel" and make in ("Chevrolet", "GMC"):
        return False
    return True
