"""Values with no real public source, derived deterministically from real attributes.

Nothing here is a measurement: every value is a plausible figure computed from the EPA class,
displacement, drive, fuel, year and make, with a small variation seeded by stable ids (so the
same vehicle gets the same figures in every build, and the trims of one model share a body).
docs/dataset.md and the database's `provenance` table mark each such column as derived.
"""
from __future__ import annotations

import hashlib
from functools import lru_cache
import re
import struct
from typing import Dict, List, Optional, Tuple

from .epa import Vehicle


class Seeded:
    """Deterministic uniform numbers from a key (stable across Python versions and runs)."""

    __slots__ = ("_digest", "_pos", "_key")

    def __init__(self, *key: object) -> None:
        self._key = "|".join(str(k) for k in key).encode()
        self._digest = hashlib.blake2b(self._key, digest_size=64).digest()
        self._pos = 0

    def uniform(self, lo: float = 0.0, hi: float = 1.0) -> float:
        if self._pos + 4 > len(self._digest):
            self._digest = hashlib.blake2b(self._digest, digest_size=64).digest()
            self._pos = 0
        (n,) = struct.unpack_from("<I", self._digest, self._pos)
        self._pos += 4
        return lo + (hi - lo) * (n / 4294967296.0)

    def pick(self, n: int) -> int:
        return min(int(self.uniform() * n), n - 1)


# ---- class groups -------------------------------------------------------------------------

# group: length, width, height, wheel_base, ground_clearance (in), curb weight (lb), seats,
#        fuel tank (gal), base MSRP (2020 USD), towing (lb or None), cargo, max cargo (cu ft)
_GROUPS: Dict[str, Tuple[float, float, float, float, float, float, int, float, float, Optional[float],
                         Optional[float], Optional[float]]] = {
    "minicompact": (160, 70.0, 53.0, 97, 5.0, 2900, 4, 13.0, 30000, None, 10, 10),
    "subcompact": (170, 69.5, 57.0, 101, 5.5, 2800, 5, 12.5, 16500, None, 13, 30),
    "compact": (182, 71.5, 57.0, 106, 5.5, 3100, 5, 13.5, 20000, None, 14, 14),
    "midsize": (192, 73.0, 57.5, 111, 5.7, 3400, 5, 16.0, 25000, 1000, 15, 15),
    "large": (200, 74.5, 58.0, 116, 5.5, 3900, 5, 18.5, 33000, 1000, 16, 16),
    "twoseater": (172, 74.0, 49.0, 98, 4.5, 3200, 2, 15.0, 45000, None, 6, 6),
    "smallwagon": (178, 71.0, 58.0, 104, 6.0, 3200, 5, 13.5, 23000, 1500, 22, 55),
    "midwagon": (190, 73.0, 59.0, 110, 7.0, 3800, 5, 17.0, 33000, 2000, 30, 65),
    "smallsuv": (178, 72.5, 65.0, 105, 7.8, 3500, 5, 14.5, 25000, 1500, 30, 65),
    "midsuv": (190, 75.0, 69.0, 112, 8.3, 4300, 5, 19.5, 32000, 5000, 36, 75),
    "stdsuv": (204, 78.5, 72.0, 118, 8.5, 5000, 7, 24.0, 45000, 7000, 25, 90),
    "spv": (188, 74.0, 68.0, 112, 8.0, 4200, 5, 19.0, 30000, 3500, 30, 70),
    "smallpickup": (212, 74.0, 70.0, 128, 8.7, 4100, 5, 21.0, 27000, 6000, None, None),
    "stdpickup": (232, 80.0, 76.0, 145, 9.0, 5000, 5, 26.0, 35000, 9500, None, None),
    "minivan": (202, 78.5, 69.5, 120, 6.0, 4400, 8, 19.5, 31000, 3500, 33, 140),
    "cargovan": (236, 80.0, 90.0, 148, 6.5, 5500, 2, 25.0, 33000, 6000, 250, 400),
    "passvan": (236, 80.0, 90.0, 148, 6.5, 5800, 12, 25.0, 36000, 6000, 80, 300),
}


@lru_cache(maxsize=None)
def class_group(vclass: str) -> str:
    v = vclass.lower()
    if v.startswith("minicompact"):
        return "minicompact"
    if v.startswith("subcompact"):
        return "subcompact"
    if v.startswith("compact"):
        return "compact"
    if v.startswith("midsize cars"):
        return "midsize"
    if v.startswith("large"):
        return "large"
    if v.startswith("two seater"):
        return "twoseater"
    if v.startswith("small station"):
        return "smallwagon"
    if "station wagon" in v:
        return "midwagon"
    if v.startswith("small sport utility"):
        return "smallsuv"
    if v.startswith("standard sport utility"):
        return "stdsuv"
    if v.startswith("sport utility"):
        return "midsuv"
    if v.startswith("small pickup"):
        return "smallpickup"
    if "pickup" in v:
        return "stdpickup"
    if v.startswith("minivan"):
        return "minivan"
    if "cargo" in v:
        return "cargovan"
    if v.startswith("van"):
        return "passvan"
    if v.startswith("special purpose"):
        return "spv"
    return "midsize"


# Price tier of a make relative to a mainstream brand (1.0), calibrated against published base
# prices (dataset/msrp_reference.csv; tests/test_naming.py prints the median error).
_MAKE_PRICE = {
    "Acura": 1.45, "Alfa Romeo": 1.7, "Aston Martin": 4.5, "Audi": 1.75, "BMW": 1.85, "BMW Alpina": 3.0,
    "Bentley": 5.5, "Bugatti": 60.0, "Bugatti Rimac": 60.0, "Cadillac": 1.7, "Ferrari": 5.5, "Genesis": 1.6,
    "Infiniti": 1.55, "Jaguar": 1.8, "Lamborghini": 6.5, "Land Rover": 2.0, "Lexus": 1.65, "Lincoln": 1.6,
    "Lotus": 2.6, "Maserati": 2.7, "Maybach": 5.0, "McLaren Automotive": 4.6, "Mercedes-Benz": 1.85,
    "Porsche": 2.3, "Rolls-Royce": 9.5, "Tesla": 1.6, "Volvo": 1.55, "Koenigsegg": 60.0, "Pagani": 60.0,
    "Karma": 3.5, "Fisker": 2.5, "Lucid": 2.5, "Polestar": 1.8, "Rivian": 2.2, "Saleen": 2.5, "Spyker": 4.0,
    "Lordstown": 1.6, "INEOS Automotive": 2.2, "Hummer": 1.4, "MINI": 1.15, "Buick": 1.15, "GMC": 1.12,
}
_PERFORMANCE_MAKES = {"Ferrari", "Lamborghini", "McLaren Automotive", "Porsche", "Aston Martin", "Bugatti",
                      "Bugatti Rimac", "Koenigsegg", "Pagani", "Lotus", "Saleen", "Shelby", "Spyker"}
_PREMIUM_WORDS = ("LIMITED", "PLATINUM", "PREMIUM", "TOURING", "SPORT", "XLE", "XSE", "LTZ", "DENALI", "EX-L",
                  "SEL", "TITANIUM", "KING RANCH", "LARIAT", "SUMMIT", "RESERVE", "AMG", "GT", "SRT", " M ",
                  "RS", "TYPE R", "NISMO", "TRD", "RAPTOR", "HELLCAT")
_OHV_MAKES = {"Chevrolet", "GMC", "Cadillac", "Buick", "Pontiac", "Oldsmobile", "Hummer", "Dodge", "Ram",
              "Chrysler", "Jeep", "SRT", "Plymouth"}


_GM_MAKES = {"Chevrolet", "GMC", "Buick", "Pontiac", "Oldsmobile", "Saturn"}
_GM_OHV_V6 = (2.8, 3.1, 3.4, 3.5, 3.8, 3.9, 4.3)
_CHRYSLER_MAKES = {"Chrysler", "Dodge", "Plymouth", "Jeep", "Ram"}


def _electrified(engine_type: str) -> str:
    if engine_type in ("electric", "electric (fuel cell)"):
        return "ev"
    if engine_type == "plug-in hybrid":
        return "phev"
    if engine_type in ("hybrid", "mild hybrid"):
        return "hybrid"
    return ""


# Base price (2020 USD, mainstream make, two-wheel drive) of a body class at its typical
# horsepower, calibrated against published base prices (dataset/msrp_reference.csv).
_GROUP_PRICE: Dict[str, Tuple[float, float]] = {
    "minicompact": (17000, 140), "subcompact": (15500, 120), "compact": (20000, 150), "midsize": (25000, 200),
    "large": (30000, 280), "twoseater": (36000, 250), "smallwagon": (24000, 170), "midwagon": (30000, 220),
    "smallsuv": (24000, 180), "midsuv": (32000, 280), "stdsuv": (40000, 355), "spv": (28000, 220),
    "smallpickup": (23000, 200), "stdpickup": (30000, 290), "minivan": (31000, 280), "cargovan": (33000, 275),
    "passvan": (36000, 275),
}
# Price growth a year (US new-vehicle CPI ran about 1-3 % a year in 2000-2020).
_YEAR_PRICE = 0.025


def _year_price_factor(year: int) -> float:
    return (1.0 + _YEAR_PRICE) ** (year - 2020)


def msrp_invoice(v: Vehicle, model_id: int, engine_type: str, drive_type: Optional[str],
                 horsepower: Optional[int]) -> Tuple[int, int]:
    """MSRP and invoice (USD) by class, make tier and year: the class's base price x (horsepower
    / the class's typical horsepower)^0.6 x the make's price tier x 2.5 %/year from 2020, plus
    drive and electrification premiums and 5 % per premium trim word (up to three), with a
    +-3 % touch seeded per model. Invoice is 90.5-94.5 % of it. All trims with the same engine
    and words in a model get the same price."""
    group = class_group(v.vclass)
    base, ref_hp = _GROUP_PRICE.get(group, (25000, 200))
    hp = horsepower or ref_hp
    tier = _MAKE_PRICE.get(v.make, 1.0)
    if group in ("cargovan", "passvan", "minivan"):
        tier = tier ** 0.5  # vans: a premium badge adds less
    price = base * (hp / ref_hp) ** 0.6 * tier
    price *= Seeded("model-price", model_id).uniform(0.97, 1.03)
    extra = 0.0
    if drive_type in ("all wheel drive", "four wheel drive"):
        extra += 2000
    kind = _electrified(engine_type)
    extra += {"ev": 6000, "phev": 5000, "hybrid": 1500}.get(kind, 0)
    name = " " + v.model.upper() + " "
    premium = sum(1 for w in _PREMIUM_WORDS if w in name)
    price *= 1.0 + 0.05 * min(premium, 3)
    msrp = (price + extra) * _year_price_factor(v.year)
    msrp_i = int(round(msrp / 50.0)) * 50
    invoice = int(round(msrp_i * Seeded("trim-price", v.id).uniform(0.905, 0.945) / 5.0)) * 5
    return msrp_i, invoice


# ---- body ---------------------------------------------------------------------------------

def body_figures(v: Vehicle, body_type: str, doors: int, facts: Dict[str, object]) -> Dict[str, object]:
    """Body figures from public sources only: curb weight, wheelbase and seats from vPIC (curb
    weight else EPA's equivalent test weight less 300 lb, derived), cargo volume from EPA's
    luggage volume; length, width, height, tracks, clearance, gross weight, payload and towing
    have no public source here and are NULL (no class average is served as a fact)."""
    real_cargo = v.lv4 or v.lv2 or v.hlv
    return {
        "doors": doors, "length": None, "width": None, "seats": facts.get("seats"),
        "height": None, "wheel_base": facts.get("wheelbase"),
        "front_track": None, "rear_track": None, "ground_clearance": None,
        "cargo_capacity": round(real_cargo, 1) if real_cargo > 0 else None,
        "max_cargo_capacity": None,
        "curb_weight": facts.get("curb"), "gross_weight": None, "max_payload": None,
        "max_towing_capacity": None,
    }


# ---- engine -------------------------------------------------------------------------------

_KW_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s*(?=kw\b|kw[^-]|and\b|\(front\)|\(rear\)|/)", re.IGNORECASE)
_BATTERY_KWH = re.compile(r"(\d+(?:\.\d+)?)\s*kW[- ]?hr", re.IGNORECASE)


def motor_kw(ev_motor: str) -> Optional[float]:
    """Total motor power in kW from EPA `evMotor` ("208 and 208 kW ACPM", "193 (front) 375 (rear)")."""
    s = _BATTERY_KWH.sub("", ev_motor)
    s = re.sub(r"\([^)]*battery[^)]*\)", "", s, flags=re.IGNORECASE)
    nums = [float(x) for x in _KW_NUMBER.findall(s)]
    total = sum(nums)
    return total if 0 < total < 2000 else None


def battery_kwh(ev_motor: str) -> Optional[float]:
    m = _BATTERY_KWH.search(ev_motor)
    return float(m.group(1)) if m else None


# Brake mean effective pressure at rated power (kPa) by aspiration, as a linear function of the
# model year (value in 1984, gain per year), and rated speed (rpm) at 0.5 L per cylinder with its
# change per litre of cylinder size. Calibrated on published ratings of common engines (Toyota
# 2.5 L A25A 203 hp @ 6600; Toyota 3.5 L 2GR 301 hp @ 6600; GM 5.3 L L84 355 hp @ 5600; BMW 2.0 L
# B46 248 hp @ 5200; Ford 3.5 L EcoBoost 375 hp @ 5000; GM 3.0 L LM2 diesel 277 hp @ 3750; GM
# 5.0 L 1985 165 hp @ 4400): see docs/dataset.md.
_BMEP = {"na": (860.0, 8.5), "turbo": (1250.0, 21.0), "supercharged": (1150.0, 14.0), "diesel": (900.0, 25.0)}
_RATED_RPM = {"na": (6600.0, -4000.0), "turbo": (5500.0, -2500.0), "supercharged": (6200.0, -3000.0),
              "diesel": (4200.0, -1500.0)}
# bmep at peak torque / bmep at rated power (the torque curve peaks below rated speed)
_TORQUE_BMEP = {"na": 1.12, "turbo": 1.2, "supercharged": 1.15, "diesel": 1.35}
_TORQUE_RPM = {"na": 4400, "turbo": 1800, "supercharged": 3800, "diesel": 1750}


def engine_power(displ: float, cylinders: Optional[int], year: int, aspiration: str,
                 performance: bool = False) -> Tuple[int, int, int, int]:
    """(horsepower, rpm, torque lb-ft, rpm) of a combustion engine by the brake mean effective
    pressure relation (Heywood, *Internal Combustion Engine Fundamentals*, 1988, eq. 2.19-2.20,
    four-stroke): P = bmep x Vd x N / 2 and T = bmep x Vd / (4 pi), with bmep by aspiration and
    year and rated speed by cylinder size (`_BMEP`, `_RATED_RPM`). A function of the engine alone:
    the same engine gets the same figures in every trim."""
    y = min(max(year, 1984), 2026) - 1984
    lo, gain = _BMEP[aspiration]
    bmep = lo + gain * y                                    # kPa at rated power
    per_cyl = displ / max(cylinders or 4, 1)
    base_rpm, slope = _RATED_RPM[aspiration]
    rpm = max(3000.0, min(base_rpm, base_rpm + slope * (per_cyl - 0.5)))  # small cylinders: no faster
    if performance:
        rpm = min(9000.0, rpm * 1.15)
        bmep *= 1.05
    kw = bmep * displ * rpm / 120000.0                      # kPa x L x rev/min / (2 x 60 x 1000)
    hp = kw * 1.341
    torque_nm = bmep * _TORQUE_BMEP[aspiration] * displ / (4.0 * 3.141592653589793)
    rpm_out = int(round(rpm / 100.0)) * 100
    tq_rpm = _TORQUE_RPM[aspiration] if aspiration != "na" else int(round(min(rpm_out - 600, 4400 + 300 * (0.6 - per_cyl)) / 50.0)) * 50
    return int(round(hp)), rpm_out, int(round(torque_nm * 0.7376)), tq_rpm


def engine_figures(v: Vehicle, layout: Optional[str], engine_type: str) -> Dict[str, object]:
    """Horsepower/torque (with rpm), valves, valve timing, cam type.

    Electric: horsepower from EPA's motor kW (evMotor) where given, torque derived.
    Combustion: `engine_power` (bmep relation) from displacement, cylinders, aspiration, fuel
    and year, so every trim with the same engine in a model year has the same figures;
    hybrids add their motor (x1.15, plug-in x1.3). Cam type from EPA's engine description
    (SOHC/DOHC/OHV) where it says, else by make, layout, displacement and year.
    """
    kind = _electrified(engine_type)
    out: Dict[str, object] = {"horsepower_hp": None, "horsepower_rpm": None, "torque_ft_lbs": None,
                              "torque_rpm": None, "valves": None, "valve_timing": None, "cam_type": None}
    if kind == "ev":
        kw = motor_kw(v.ev_motor)
        s = Seeded("ev-motor", v.make, v.year, v.ev_motor)
        hp = kw * 1.341 if kw else 150 + 150 * s.uniform() * _MAKE_PRICE.get(v.make, 1.0) ** 0.3
        out["horsepower_hp"] = int(round(hp))
        out["torque_ft_lbs"] = int(round(hp * s.uniform(0.9, 1.3)))
        return out
    displ = v.displ
    if not displ:
        return out
    diesel = engine_type == "diesel"
    aspiration = "diesel" if diesel else "turbo" if v.turbo else "supercharged" if v.supercharged else "na"
    if layout == "rotary 0":
        hp_f = displ * (130.0 + 0.8 * (v.year - 1984))
        hp, rpm, torque, tq_rpm = int(round(hp_f)), 8500, int(round(hp_f * 0.7)), 5500
    else:
        hp, rpm, torque, tq_rpm = engine_power(displ, v.cylinders, v.year, aspiration,
                                               v.make in _PERFORMANCE_MAKES)
    if kind in ("hybrid", "phev"):
        hp = int(round(hp * (1.15 if kind == "hybrid" else 1.3)))
    out["horsepower_hp"] = hp
    out["horsepower_rpm"] = rpm
    out["torque_ft_lbs"] = torque
    out["torque_rpm"] = tq_rpm
    d = v.eng_dscr.upper()
    if layout == "rotary 0":
        return out
    if "DOHC" in d:
        cam = "Double overhead cam (DOHC)"
    elif "SOHC" in d:
        cam = "Single overhead cam (SOHC)"
    elif "OHV" in d:
        cam = "Overhead valves (OHV)"
    elif layout == "V8" and (v.make in _OHV_MAKES or (v.make in ("Ford", "Mercury", "Lincoln") and v.year < 1997)):
        cam = "Overhead valves (OHV)"
    elif layout == "V6" and v.make in _OHV_MAKES and v.year < 2008 and not diesel:
        cam = "Overhead valves (OHV)"
    elif layout == "V6" and (v.make in _GM_MAKES and displ in _GM_OHV_V6 or v.make in _CHRYSLER_MAKES
                             and displ in (3.3, 3.8) or v.make in ("Ford", "Mercury") and displ in (3.8, 4.2)):
        cam = "Overhead valves (OHV)"  # GM 4.3 L Vortec/EcoTec3, 3.8 L 3800; Chrysler 3.3/3.8 L; Ford Essex
    elif v.year < 1995:
        cam = "Single overhead cam (SOHC)"
    else:
        cam = "Double overhead cam (DOHC)"
    out["cam_type"] = cam
    n = v.cylinders or 0
    if cam == "Overhead valves (OHV)" or (cam.startswith("Single") and v.year < 1995):
        per_cylinder = 2
    elif cam.startswith("Single") and v.make in ("Ford", "Mercury", "Lincoln") and n in (6, 8):
        per_cylinder = 3
    else:
        per_cylinder = 4
    out["valves"] = n * per_cylinder or None
    variable = ("VTEC" in d or "VVT" in d or (cam != "Overhead valves (OHV)" and v.year >= 2000)
                or (cam == "Overhead valves (OHV)" and v.year >= 2010))
    out["valve_timing"] = "Variable" if variable else None
    return out


# ---- mileage ------------------------------------------------------------------------------

def fuel_tank(v: Vehicle, model_id: int, engine_type: str) -> Optional[float]:
    """Fuel tank (gal): class base, a little more for large engines, less for hybrids."""
    kind = _electrified(engine_type)
    if kind == "ev":
        return None
    base = _GROUPS[class_group(v.vclass)][7]
    base *= 1.0 + 0.03 * ((v.displ or 2.5) - 2.5)
    base *= {"phev": 0.8, "hybrid": 0.85}.get(kind, 1.0)
    base *= Seeded("model-tank", model_id, (v.year - 1984) // 6).uniform(0.92, 1.08)
    return round(max(7.0, base), 1)


def battery_capacity(v: Vehicle, engine_type: str) -> Optional[int]:
    """Usable battery (kWh): EPA's pack size where evMotor states it; else range x kWh/100 mi
    (1.1 margin), for electric and plug-in hybrid cars."""
    kind = _electrified(engine_type)
    if kind not in ("ev", "phev") or engine_type == "electric (fuel cell)":
        return None
    stated = battery_kwh(v.ev_motor)
    if stated:
        return int(round(stated))
    rng = v.range if kind == "ev" else v.range_a
    if rng > 0 and v.comb_e > 0:
        return max(1, int(round(rng * v.comb_e / 100.0 * 1.1)))
    return None


# ---- colours ------------------------------------------------------------------------------

EXTERIOR_COLOURS: List[Tuple[str, str]] = [
    ("Super White", "245,245,243"), ("Pearl White Tricoat", "240,239,232"), ("Glacier White", "236,238,240"),
    ("Jet Black", "12,12,14"), ("Midnight Black Metallic", "28,28,32"), ("Onyx Black", "20,20,22"),
    ("Silver Metallic", "180,184,188"), ("Celestial Silver Metallic", "166,170,176"),
    ("Lunar Silver Metallic", "192,194,196"), ("Magnetic Gray Metallic", "98,100,104"),
    ("Graphite Gray", "72,74,78"), ("Gunmetal Metallic", "84,88,92"), ("Steel Gray Metallic", "120,124,130"),
    ("Blue Streak Metallic", "0,62,155"), ("Deep Ocean Blue", "24,48,92"), ("Lightning Blue", "38,104,186"),
    ("Navy Blue Metallic", "30,40,72"), ("Sky Blue", "122,170,214"), ("Ruby Red Metallic", "136,18,30"),
    ("Race Red", "196,24,30"), ("Burgundy Pearl", "96,20,36"), ("Sunset Orange", "232,110,36"),
    ("Solar Yellow", "242,204,38"), ("Forest Green Metallic", "34,72,48"), ("Olive Green", "92,98,60"),
    ("Bronze Metallic", "140,104,66"), ("Sandstone Beige", "196,178,146"), ("Champagne Metallic", "200,184,150"),
    ("Mocha Brown", "88,64,48"), ("Copper Metallic", "168,96,60"),
]
INTERIOR_COLOURS: List[Tuple[str, str]] = [
    ("Black", "20,20,20"), ("Ebony", "34,32,30"), ("Ash Gray", "150,150,146"), ("Light Gray", "190,190,186"),
    ("Graphite", "70,70,72"), ("Beige", "206,190,160"), ("Almond", "214,198,170"), ("Parchment", "222,212,190"),
    ("Saddle Brown", "120,72,40"), ("Cognac", "150,84,44"), ("Red", "150,30,34"), ("Ivory", "232,226,210"),
]


@lru_cache(maxsize=4096)
def colours(model_id: int, year: int, which: str, lo: int, hi: int) -> Tuple[Tuple[str, str], ...]:
    """The colours offered on a model in a year (all its trims share them), lo..hi of them,
    from the "exterior" or "interior" palette."""
    palette = EXTERIOR_COLOURS if which == "exterior" else INTERIOR_COLOURS
    s = Seeded("colours", which, model_id, year)
    n = lo + s.pick(hi - lo + 1)
    chosen: List[int] = []
    while len(chosen) < n:
        i = s.pick(len(palette))
        if i not in chosen:
            chosen.append(i)
    return tuple(palette[i] for i in sorted(chosen))
