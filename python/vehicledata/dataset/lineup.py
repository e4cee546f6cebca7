"""Trim lineups: which trims one EPA vehicle (one tested powertrain x body) stands for.

EPA rates a powertrain once for several trims ("Camry LE/SE", or "Camry" for the rest). vPIC's
VIN patterns name the trims of a model and year with their engine and drive ("L/LE/SE/XLE" 2.5 L,
"XLE/XSE" 3.5 L, "SE/XLE Hybrid"). A vehicle's lineup is:

- EPA's own trim words where it has them ("LE/SE" -> LE, SE);
- else the vPIC trims whose patterns agree with its engine, electrification and drive, less
  those that a sibling EPA row of the same powertrain names ("Camry" 2.5 L -> L, since LE, SE,
  XLE and XSE have rows of their own);
- else the single trim of `naming` (a reviewed base trim, the model as a grade, or "Base").

Names are cleaned: drive, body and cab words out; GM's option-code prefixes ("1LT" -> LT) and
fleet codes ("1FL") out; "Hybrid", "Plug-In", "TDI", "Diesel" words only on rows whose
powertrain is one.
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from .naming import _BODY, _DRIVE, norm
from .sweep import Entry, trim_names

MAX_TRIMS = 12  # per EPA vehicle

POWERTRAIN_WORDS = {
    "hybrid": ("hybrid", "mild hybrid"),
    "plug-in": ("plug-in hybrid",),
    "phev": ("plug-in hybrid",),
    "energi": ("plug-in hybrid",),
    "e-hybrid": ("plug-in hybrid",),
    "tdi": ("diesel",),
    "diesel": ("diesel",),
    "ecodiesel": ("diesel",),
    "bluetec": ("diesel",),
    "electric": ("electric",),
    "ev": ("electric",),
    "battery": ("electric",),
    "hev": ("hybrid", "mild hybrid"),
}
_NOT_TRIM = {"SA", "FL", "FLEET", "SALES", "POLICE", "CANADA", "EXPORT", "USA", "US", "MEXICO", "STD", "STANDARD",
             "N/A", "NA", "GRADE", "BASE GRADE", "PPV", "SSV", "INTERCEPTOR", "CHASSIS", "SPECIAL", "SERVICES", "VEHICLE",
             # equipment words vPIC appends to a grade: "LT w/ ...", Honda's "EX Sensing", "EXL-N" (navigation),
             # "-R"/"RES" (rear entertainment): the grade is the trim
             "W", "W/", "HONDA", "SENSING", "NAVI", "RES",
             # transmission codes ("SE MT"), Japanese layout codes ("FF LE"), bare sizes ("Large", "Long")
             "MT", "AT", "CVT", "DCT", "FF", "FR", "MR", "LARGE", "SMALL", "MEDIUM", "LONG", "SHORT", "NC", "LM",
             "AWD-E", "1M", "2M", "3M", "4M", "5M", "6M"}
# Option packages and equipment (vPIC "Technology Package", "Premium w/ Nav", "S-Line pkg",
# "Limited+Moonroof"): no trim; a grade before them stays ("Touring Technology Package" -> Touring).
_PACKAGE = re.compile(r"(?i)\b(?:w/|with\b|package\b|pkgs?\d*\b|technology\b|tech\b|technik\b|leather\b|navigation\b|"
                      r"navi\b|nav\b|sunroof\b|moonroof\b|appearance\b|convenien(?:ce|t)\b|style\b|s[- ]line\b|"
                      r"driver assist\b|eyesight\b|keyless\b|entertainment\b|ent\b|audio\b|popular\b|"
                      r"low emissions\b|all weather\b|cold weather\b|premium sound\b|"
                      # EPA's 2025-2026 electric pickups by battery and charger ("11kW 15-mode charger",
                      # "24-mod battery") and tyres ("Mud Terrain"): configurations, no trims
                      r"\d+\s*kw\b|\d+-mod(?:e|ule)?\b|charger\b|mud terrain\b|off road mode\b|lounge console\b|"
                      # screens and audio ("12.3\" multimedia", "XSE JBL")
                      r"\d+(?:\.\d+)?\"|multimedia\b|jbl\b|harman\b|bose\b|e-supercharger\b)")
# Tyre sizes and words in EPA's model strings ("Daytona R/T 245/35ZR20 Rear A/S"): no trim.
_TIRE = re.compile(r"(?i)\b\d{3}/\d{2}Z?R\d{2}\b|\b\d{2}Z?R\d{2}\b|\bA/S\b|\b(?:front|rear)\b(?!\s*(?:wheel|drive))")
# Grades vPIC carries for Korea (GL, GLS, HGS, JSL, TAX, TOP), Canada (GX, GS, Audi's Komfort,
# Progressiv, Technik; Volkswagen's Trendline, Comfortline, Highline, Execline; Jeep's North; SV
# outside Nissan and Infiniti) and Latin America (Jeep's Longitude; vPIC: "Latitude(US,Mex),
# Longitude(BUX), North(Can)"): a name starting with one is no US trim unless the make's US
# sources use it.
FOREIGN_GRADES = {"GL", "GLS", "HGS", "JSL", "TAX", "TOP", "GX", "GS", "SV", "KOMFORT", "PROGRESSIV", "TECHNIK",
                  "TRENDLINE", "COMFORTLINE", "HIGHLINE", "EXECLINE", "NORTH", "LONGITUDE"}
# A vPIC alternative marked for other markets only ("ES (Canada)", "North(Can)", "Longitude(BUX)")
# is no US trim; one marked for the US too ("Sport (Mex/U.S.)") is.
_MARKET = r"(?:can|canada|canadian|bux|brazil|mex|mexico|korea|kor|export|europe|eu|gcc|china|puerto rico|pr)"
_OTHER_MARKET = re.compile(rf"(?i)\(\s*{_MARKET}(?:\s*[,/]\s*{_MARKET})*\s*\)")
# vPIC's own word for a pattern whose grade it does not know (Mazda: "not identified",
# "(not-identified)", "Not  Identified"): no trim
_NOT_IDENTIFIED = re.compile(r"(?i)\bnot[\s-]*identified\b")
# Honda's vPIC grade codes: "EXL" (EX-L) with "-N" (navigation), "-R"/"-NR" (rear entertainment)
_HONDA_CODE = re.compile(r"^(EXL|EX-L|EX)-(?:N|R|NR)$")
_FOUR_BY_FOUR = re.compile(r"(?i)\bactive drive(?: lock| ii| i)?\b|\bquadra-(?:trac|drive)(?: ii| i)?\b")
_OPTION_CODE = re.compile(r"^[1-3]([A-Z]{2})$")
_ABBREVIATIONS = {"BL": "Black Label", "LTD": "Limited", "PRM": "Premium", "PREM": "Premium", "PLAT": "Platinum"}
# Makes whose vPIC Trim values are drive and body words ("xDrive", "Gran Coupe", "4MATIC"): the
# service repeats the model grade as the trim ("530i"), so vPIC's trims are not used.
MODEL_IS_TRIM = {"BMW", "Mercedes-Benz"}
# Words that are drive, body, cab, certification or engine size, never part of a trim name
# ("King Ranch" keeps its King).
_NOISE = (_DRIVE | _BODY | {"FFV", "CNG", "LPG", "E85", "PZEV", "SULEV", "ULEV", "LEV", "CA", "CALIF", "CALIFORNIA",
                            "4DOOR", "2DOOR", "PICKUP"}) - {"KING", "GRAN", "TURISMO", "ACCESS"}
_ENGINE_SIZE = re.compile(r"^\d\.\d[LT]?$|^V\d{1,2}$|^GVWR")
_ONLY_POWERTRAIN = {"hybrid", "plug-in", "plug-in hybrid", "phev", "energi", "diesel", "tdi", "electric", "ev"}


def _is_noise(word: str) -> bool:
    w = word.upper().strip(",()")
    # a drive word hyphenated ("4-Motion" for 4MOTION) is that drive word
    return not w or w in _NOISE or w.replace("-", "") in _DRIVE or bool(_ENGINE_SIZE.match(w))


def _unhyphen(word: str) -> List[str]:
    """A cab, body or drive word hyphenated to a grade ("SuperCab-Raptor", "SuperCrew-Police") as two
    words; a grade's own hyphen ("EX-L", "R-Design", "SH-AWD") stays."""
    parts = word.split("-")
    if len(parts) > 1 and not _is_noise(word) and any(
            p and (_is_noise(p) or p.upper() in _NOT_TRIM) for p in parts):
        return [p for p in parts if p]
    return [word]


# Models whose GM grade codes are the trims the market sells (2019 Camaro 1LS, 1LT, 2LT, 3LT, 1SS,
# 2SS): the code is kept there, elsewhere ("1FL" Equinox) it is dropped.
GRADE_CODE_MODELS = {"Camaro"}
_GRADE_CODE = re.compile(r"\b([1-3](?:LS|LT|SS|LZ))\b")


# vPIC's "<model> with <grade> Package" (Mazda: "Mazda3 with Select Package")
_MODEL_WITH_PACKAGE = re.compile(r"(?i)^\s*(\S+)\s+with\s+(\w+(?:\s+\w+)?)\s+package\b")


def _names_model(word: str, model: str) -> bool:
    """Whether a word is the model's name, alone or with the make's before it: vPIC files
    Mazda's 3 as "Mazda3" (a model named by a number only)."""
    w, m = norm(word), norm(model)
    return w == m or (m.isdigit() and re.fullmatch(r"[a-z]{3,}" + m, w) is not None)


@lru_cache(maxsize=None)
def clean(name: str, engine_type: str, model: str = "") -> Optional[str]:
    """A trim name as the catalogue writes it, or None when it names no trim."""
    if model in GRADE_CODE_MODELS:
        code = _GRADE_CODE.search(name.upper())
        if code:
            return code.group(1)
    if ")" in name and "(" not in name.split(")")[0]:
        return None  # the tail of a note vPIC split at "/" or "," ("Sport (Mex/U.S.)" -> "U.S.)")
    if _NOT_IDENTIFIED.search(name) or _OTHER_MARKET.search(name):
        return None  # vPIC knows no grade ("not identified"), or another market's ("ES (Canada)")
    name = re.sub(r"\([^)]*\)?", " ", name.split("+")[0])
    name = _TIRE.sub(" ", name.replace(" - ", " "))
    name = re.sub(r"(?i)\b(?:hard|soft)\s+top\b", " ", name)  # the MX-5's roofs are bodies
    name = re.sub(r"(?i)\b[A-Z] grade\b", " ", name)  # Toyota's package grade codes ("SE S Grade")
    named = _MODEL_WITH_PACKAGE.match(name)
    if model and named and _names_model(named.group(1), model):
        name = named.group(2)  # "Mazda3 with Select Package": the model sold with a package is its grade
    pkg = _PACKAGE.search(name)
    if pkg:  # "Touring Technology Package" -> Touring; "Premium w/ Nav" -> Premium; "Leather" -> none
        name = name[:pkg.start()]
    name = _FOUR_BY_FOUR.sub(" ", name)  # Jeep's 4x4 systems ("Cherokee 4WD Active Drive II")
    words: List[str] = []
    split = [p for w in name.replace(",", " ").split() for p in _unhyphen(w)]
    # vPIC's "Base" with only package letters or codes beside it ("Base P", "Base+ES", Subaru's
    # "WRX base+L") is the model's base grade, which the maker sells as "Base"
    # and the model named alone ("Macan", "CX-30", "Mazda3") is its base grade
    base_named = any(w.upper() == "BASE" for w in split) or bool(
        model and any(_names_model(w, model) for w in split)
        and all(_names_model(w, model) or _is_noise(w) for w in split))
    for k, w in enumerate(split):
        up = w.upper()
        if up in ("STANDARD", "LONG", "MID") and k + 1 < len(split) and split[k + 1].upper() == "RANGE":
            words.append(w)  # Tesla's "Standard Range (Plus)", "Long Range" are grades
            continue
        if w in ("base", "mid", "high", "low") or (model and _names_model(w, model)):
            continue  # package codes ("STI high+L+KA"), the model's own name
        if up == "BASE" and len(split) > 1:
            continue  # "SR5 Premium Base", "TRD Pro Base": a package's base, the grade is the trim
        hc = _HONDA_CODE.match(up)
        if hc:
            w = up = hc.group(1)
        if up == "EXL":
            w = up = "EX-L"
        if up.isalpha() and up == w and len(w) >= 5 and up not in ("DENALI",) and not up.startswith("NISMO"):
            w = w.title()  # "TOURING" -> "Touring"
        if re.fullmatch(r"0[A-Z]{2}", up) or (words and up == words[-1].upper()):
            continue  # GM's "0RP"/"0RS" option codes; a word repeated ("RS RS")
        m = _OPTION_CODE.match(up) if not _is_noise(w) else None  # "2WD" is a drive word, no code
        if m:
            if m.group(1) == "SV":
                continue  # GM's "1SV" is the fleet-base equipment group, no grade
            w = up = m.group(1)
        if _is_noise(w) or up in _NOT_TRIM:
            continue
        fits = POWERTRAIN_WORDS.get(w.lower())
        if fits is not None and engine_type not in fits:
            continue
        words.append(w)
    words = [_ABBREVIATIONS.get(w.upper().rstrip("."), w) for w in words]
    while (len(words) > 1 and len(words[-1]) == 1 and words[-1].isupper() and words[-2].upper() != "TYPE"
           and words[-1] != "S" and not re.fullmatch(r"[XZ]\d", words[-2])):  # BMW's "X6 M" is a model
        words.pop()  # Toyota/Subaru package letters: "LE X", "XLE M", "Base P"; a closing "S" is a
        # grade ("Altitude S", "Turbo S", "Pro S", "R-Dynamic S"), not a package letter
    if len(words) == 1 and len(words[0]) == 1 and words[0] not in ("L", "S"):
        words = []  # a lone package letter ("G", "M")
    out = " ".join(words).strip(" -/")
    if not out or out.upper() == "BASE":
        return "Base" if base_named else None
    if out.upper() in _NOT_TRIM or out.isdigit():
        return None
    if words[0].upper() in ("HGS", "JSL", "TAX", "TOP"):
        return None  # Korean grades (vPIC's Hyundai/Kia patterns for the home market)
    return out


# Grades another market kept after the US dropped them, by the first model year they are foreign:
# Honda's DX, the US base grade up to the 2012 Civic, Canada's base grade after (vPIC's 2016-2020
# Civic and Fit patterns name it).
FOREIGN_FROM = {"DX": 2013}


def foreign(name: str, make: str, us_words: frozenset = frozenset(), year: int = 0) -> bool:
    """A grade vPIC carries for another market (Korea's GL/GLS, Canada's GX/GS, a bare SV; from
    their years, `FOREIGN_FROM`) that the make's US sources (EPA's model strings, the reviewed
    tables: `us_words`, upper case) never use; Nissan's and Infiniti's SV is a US grade."""
    first = name.split()[0].upper() if name.split() else ""
    if first in FOREIGN_FROM:
        return year >= FOREIGN_FROM[first] and first not in us_words
    if first not in FOREIGN_GRADES:
        return False
    if first == "SV" and (make in ("Nissan", "Infiniti") or name.upper() != "SV"):
        return False  # Land Rover's "SV Autobiography" is its own
    return first not in us_words


def candidates(entries: Sequence[Entry], engine_type: str, model: str = "") -> List[str]:
    """Trim names of the agreeing vPIC configurations, in vPIC's order, each once. A "Base" after
    the first name of a list says that name is the base grade (GM's "Work Truck/Fleet/Base"): no
    name of its own; a list's first "Base" is the grade ("Base, Big Bend, Black Diamond")."""
    seen: Dict[str, str] = {}
    if any(e.displ is not None for e in entries):
        entries = [e for e in entries if e.displ is not None]  # patterns naming the engine say more
    for e in entries:
        names = [c for c in (clean(raw, engine_type, model) for raw in trim_names(e.trim.split("+")[0])) if c]
        names = names[:1] + [c for c in names[1:] if c != "Base"]
        for c in names:
            if norm(c) not in seen:
                seen[norm(c)] = c
    return list(seen.values())


def hinted(submodel: str, engine_type: str, model: str = "", make: str = "") -> List[str]:
    """EPA's own trim words as names ("LE/SE" -> LE, SE); [] where EPA names none. Lexus grades
    carry the model letters ("RX 350", "ES 300h", "ES 350 F Sport"; EPA: "RX 350 AWD")."""
    if submodel == "Base":
        return []
    submodel = _TIRE.sub(" ", submodel).strip()  # EPA's 2025 Charger rows name their tyres ("245/35ZR20 A/S")
    out: List[str] = []
    for raw in trim_names(submodel):
        c = clean(raw, engine_type, model)
        if c and make == "Lexus" and re.fullmatch(r"[A-Z]{2,3}", model) and re.match(r"\d{3}[A-Za-z]{0,2}\b", c):
            c = f"{model} {c}"
        if c and norm(c) not in {norm(x) for x in out}:
            out.append(c)
    if all(x.lower() in _ONLY_POWERTRAIN for x in out):
        return []  # "Accord Hybrid": EPA names the powertrain, not a trim
    return out


def lineup(own: List[str], cands: List[str], claimed: set, fallback: str, engine_type: str = "gas") -> List[str]:
    """The trims one EPA vehicle stands for (first = the one keeping EPA's id)."""
    if own:
        spelled = {norm(c): c for c in cands}
        out: List[str] = []
        for x in own:
            n = len(x.split())
            # EPA's "Unlimited" (2018 Wrangler) starts vPIC's "Unlimited Sport", "Unlimited Rubicon":
            # the hint is a body line and those are its trims
            longer = [] if norm(x) in spelled else [
                c for c in cands if len(c.split()) > n and norm(" ".join(c.split()[:n])) == norm(x)]
            out.extend(t for t in (longer or [spelled.get(norm(x), x)]) if t not in out)
        return out[:MAX_TRIMS]
    rest = [c for c in cands if norm(c) not in claimed]
    if rest:
        return rest[:MAX_TRIMS]
    if fallback == "Base":
        return [fallback]
    return [clean(fallback, engine_type) or "Base"]


def price_of(entries: Sequence[Entry], trim: str, engine_type: str, model: str = "") -> Optional[int]:
    """vPIC's lowest base price of the configurations naming this trim, or None."""
    best: Optional[int] = None
    key = norm(trim)
    for e in entries:
        if e.price and 5000 <= e.price <= 5_000_000 and any(norm(clean(t, engine_type, model) or "") == key for t in trim_names(e.trim)):
            best = e.price if best is None else min(best, e.price)
    return best


# Trim words in the order manufacturers price them (a generic ladder for ordering a lineup).
LADDER = ["BASE", "L", "S", "CE", "DX", "LX", "LE", "SE", "WORK TRUCK", "WT", "LS", "1LS", "ES", "SV", "SR", "SR5", "XL", "SPORT",
          "LT", "1LT", "2LT", "3LT", "SLE", "ELEVATION", "LUXURY", "PREMIERE", "EX", "SXT", "SEL", "XLE", "XSE", "XLT", "GT", "SL", "EX-L", "TOURING", "A-SPEC", "LTZ",
          "1SS", "2SS", "1LZ", "2LZ", "3LZ", "SELECT", "PREFERRED", "ESSENCE", "XRT", "LIMITED", "PREMIUM",
          "LARIAT", "SLT", "AT4", "LARAMIE", "PREMIER", "PLATINUM", "PRESTIGE", "ADVANCE", "TRAIL BOSS", "TRD PRO", "DENALI", "HIGH COUNTRY",
          "KING RANCH", "CAPSTONE", "INSCRIPTION", "RESERVE", "AVENIR", "ABARTH", "BLACK LABEL", "RAPTOR", "SCAT PACK", "SRT", "HELLCAT", "REDEYE", "SUPER STOCK", "DEMON", "TRACKHAWK",
          "TYPE R", "NISMO", "Z06", "ZL1", "ZR1"]
LADDER = ["MOMENTUM"] + LADDER + ["EXCELLENCE"]   # Volvo: Momentum base, Excellence above Inscription
_LADDER_RANK = {w: i for i, w in enumerate(LADDER)}
_UNKNOWN_RANK = float(_LADDER_RANK["GT"])  # unknown names sit in the middle of the ladder (with GT)


# Makes whose grades climb in another order than the generic ladder's: Subaru sells Base (2.5i),
# Premium, Sport, Limited, Touring (Premium is its second grade, not a top one); Kia L, FE, LX,
# LXS, S, GT-Line, EX, SX, SXL, GT (its S sits above the LX); Tesla Standard Range, Standard Range
# Plus, Mid Range, Long Range, (Long Range) Performance; Jeep Sport, Sport S, Latitude, Altitude,
# Sahara, Limited, Trailhawk, Overland, Rubicon (Grand Cherokee: Laredo first, then Summit, SRT,
# Trackhawk; "Unlimited Sahara" ranks as Sahara); Mitsubishi ES, SE, LE, SEL, GT (the generic
# ladder put its LE and SE below its base ES).
LADDERS_FILE = Path(__file__).resolve().parent / "make_ladders.csv"


def _read_ladders(path: Path = LADDERS_FILE) -> Dict[str, List[str]]:
    """dataset/make_ladders.csv: make, grades (base to top, "|"-separated, upper case), source."""
    out: Dict[str, List[str]] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != ["make", "grades", "source"]:
            raise ValueError(f"{path.name}: columns must be make, grades, source")
        for r in reader:
            if not r["source"].startswith("https://"):
                raise ValueError(f"{path.name}: {r['make']} cites no public page")
            out[r["make"]] = [g.strip().upper() for g in r["grades"].split("|") if g.strip()]
    return out


MAKE_LADDERS = _read_ladders()


def _bmw_rank(trim: str) -> float:
    """BMW's grades of one model: rear drive (sDrive, plain "330i"), then xDrive, then the M
    Performance grades ("M40i"), Competition, and the editions ("CS", "GTS")."""
    if re.search(r"\b(CS|GTS|Edition)\b", trim):
        return 4.0
    if "Competition" in trim:
        return 3.0
    if re.match(r"M\d\d[ie]\b", trim):
        return 2.0
    return 1.0 if re.search(r"(?i)\bxdrive", trim) else 0.0


def rank(trim: str, make: str = "") -> float:
    """Position of a trim on its make's ladder (MAKE_LADDERS; BMW: `_bmw_rank`), else on the
    generic one (unknown names sit in the middle)."""
    if make == "BMW":
        return _bmw_rank(trim) - 10.0  # below every generic rank: the make's order decides
    own = MAKE_LADDERS.get(make)
    if own:
        words = trim.upper().split()
        hits = [own.index(w) for w in words if w in own]
        if hits:
            return float(max(hits)) - len(own)  # below every generic rank: the make's order decides
    up = trim.upper()
    if re.search(r"\bF SPORT\b", up):
        return float(_LADDER_RANK["PREMIUM"]) + 0.25  # Lexus's F Sport sits above the grade it dresses
    if up in _LADDER_RANK:
        return float(_LADDER_RANK[up])
    words = up.split()
    if len(words) > 1:
        words = [w for w in words if len(w) > 1]  # "AMG C63 S": the S is no base grade there
    ranks = [_LADDER_RANK[w] for w in words if w in _LADDER_RANK]
    return float(max(ranks)) + 0.5 if ranks else _UNKNOWN_RANK


# ---- reviewed lineups of makes that keep trims out of their VINs (Ford) ---------------------

REVIEWED_FILE = Path(__file__).resolve().parent / "lineups_reviewed.csv"
_ENGINE_SPEC = re.compile(r"^(\d\.\d)([TSDHP]?)$")


@dataclass(frozen=True)
class Reviewed:
    make: str
    model: str
    first: int
    last: int
    displ: Optional[float]   # None: any engine
    tag: str                 # "" gas, "T" turbo, "S" supercharged, "D" diesel, "H" hybrid, "P" plug-in hybrid
    trims: Tuple[str, ...]
    source: str


def read_reviewed(path: Path = REVIEWED_FILE) -> List[Reviewed]:
    """The reviewed lineup table: one row per make, model, model years and engine, each with the
    public page it comes from."""
    out: List[Reviewed] = []
    with open(path, newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            first, _, last = r["years"].partition("-")
            m = _ENGINE_SPEC.match(r["engines"])
            if r["engines"] != "*" and not m:
                raise ValueError(f"{path}: bad engine {r['engines']!r}")
            out.append(Reviewed(r["make"], r["model"], int(first), int(last or first),
                                float(m.group(1)) if m else None, m.group(2) if m else "",
                                tuple(t.strip() for t in r["trims"].split("|") if t.strip()), r["source"].strip()))
    return out


@lru_cache(maxsize=1)
def _reviewed_index() -> Dict[Tuple[str, str, int], List[Reviewed]]:
    idx: Dict[Tuple[str, str, int], List[Reviewed]] = {}
    for r in read_reviewed():
        for y in range(r.first, r.last + 1):
            idx.setdefault((r.make, r.model, y), []).append(r)
    return idx


def reviewed(make: str, model: str, year: int, displ: Optional[float], turbo: bool,
             engine_type: str, supercharged: bool = False) -> Optional[List[str]]:
    """The reviewed trims of this make, model, year and engine, or None where the table has none."""
    rows = _reviewed_index().get((make, model, year))
    if not rows:
        return None
    tag = {"diesel": "D", "hybrid": "H", "mild hybrid": "H", "plug-in hybrid": "P"}.get(
        engine_type, "T" if turbo else "S" if supercharged else "")
    out: List[str] = []
    for r in rows:
        if r.displ is None:
            ok = True
        elif displ is None or abs(r.displ - displ) > 0.06:
            ok = False
        elif r.tag == tag:
            ok = True
        else:  # "2.7" names the EcoBoost where the year has no other 2.7
            ok = r.tag == "" and tag == "T" and not any(
                o.displ == r.displ and o.tag == "T" for o in rows)
        if ok:
            out.extend(t for t in r.trims if t not in out)
    return out or None


def reviewed_order(make: str, model: str, year: int) -> Dict[str, float]:
    """Price order of the reviewed trims of a model and year ({} where the table has none)."""
    out: Dict[str, float] = {}
    for r in _reviewed_index().get((make, model, year), ()):
        for t in r.trims:
            out.setdefault(t, float(len(out)))
    return out


# ---- vPIC's abbreviated and coded grades -------------------------------------------------------

# A word with no vowel after its first consonant is an abbreviation of a grade ("Prfrd" Preferred,
# "Prmr" Premier(e), "Rsv" Reserve, "Blk" Black, "Trg" Touring); letters and the model year's two
# digits are a grade code ("TEC19" Technology, "ADV19" Advance); a leading four-character option
# code before a grade ("SV42 Momentum", "SVFB Black") is no part of the name. Upper-case names
# ("XLT", "SRT", "TRD") are the makers' own spellings and stay.
_ABBREVIATED = re.compile(r"^[B-DF-HJ-NP-TV-Z][b-df-hj-np-tv-xz]{2,}$")
_YEAR_CODE = re.compile(r"^([A-Za-z]{3,5})(1[5-9]|2[0-6])$")
_LEAD_CODE = re.compile(r"^[A-Z][A-Z0-9]{3}$")


def _is_lead_code(word: str) -> bool:
    return bool(_LEAD_CODE.match(word)) and (any(c.isdigit() for c in word) or not re.search(r"[AEIOU]", word))


def grade_words(names: Sequence[str]) -> Dict[str, float]:
    """The full words (four letters or more, with a vowel) a make's trim names use, counted, and
    the generic and make ladders' words: what an abbreviated grade is expanded to."""
    out: Dict[str, float] = {}
    for name in names:
        for w in name.split():
            if w.isalpha() and len(w) >= 4 and re.search(r"[aeiouAEIOU]", w[1:]):
                key = w.upper()
                out[key] = out.get(key, 0.0) + 1.0
    for ladder in [LADDER, *MAKE_LADDERS.values()]:
        for g in ladder:
            for w in g.split():
                if w.isalpha() and len(w) >= 4:
                    out[w] = out.get(w, 0.0) + 0.5
    return out


def _subsequence(short: str, long: str) -> bool:
    it = iter(long)
    return all(c in it for c in short)


def expand_codes(name: str, words: Dict[str, float]) -> Optional[str]:
    """A trim name with vPIC's abbreviations spelled out from the make's own grade words
    (`grade_words`; the most used match wins, ties alphabetically), a year-coded grade spelled
    out or kept, a leading option code dropped; None when nothing of a name is left."""
    parts = name.split()
    if len(parts) > 1 and _is_lead_code(parts[0]) and any(w.isalpha() for w in parts[1:]):
        parts = parts[1:]
    out: List[str] = []
    for w in parts:
        full: Optional[str] = None
        m = _YEAR_CODE.match(w)
        if m:
            stem = m.group(1).upper()
            hits = [k for k in words if k.startswith(stem) and len(k) > len(stem)]
            full = max(sorted(hits), key=lambda k: words[k]) if hits else None
        elif _ABBREVIATED.match(w):
            up = w.upper()
            hits = [k for k in words if k[0] == up[0] and len(k) > len(up) and _subsequence(up, k)]
            full = max(sorted(hits), key=lambda k: words[k]) if hits else None
        out.append(full.title() if full else w)
    return " ".join(out) or None


# An upper-case grade of three consonants or more ("TRG") beside the same grade spelled out in
# the model year's lineup ("Touring"; Honda's vPIC writes both) is that grade; a seat count
# hyphenated to a grade ("TOURING-7") is no part of it. A code that is a grade of the generic or
# a make's ladder ("XLT", "SLT", "SXT") or a performance designation ("SRT", "TRD") stays.
_UPPER_CODE = re.compile(r"^[B-DF-HJ-NP-TV-Z]{3,}$")
_SEAT_COUNT = re.compile(r"(?<=[A-Za-z])-[5-9]$")
DESIGNATIONS = {"SRT", "TRD", "RST", "GTS", "STI", "SVT", "SHO", "TRX"}


def spell_in_lineup(name: str, names: Sequence[str]) -> str:
    """`name` with its codes spelled as the lineup `names` (the model year's) spells the grade; a
    code closed by a hyphen and another grade's initials ("TRG-EL" beside "Elite") is that grade."""
    spelled = {w.upper(): w for n in names for w in n.split()
               if w.isalpha() and len(w) >= 4 and re.search(r"[aeiouAEIOU]", w[1:]) and not w.isupper()}
    kept = {g for ladder in [LADDER, *MAKE_LADDERS.values()] for g in ladder} | DESIGNATIONS
    out: List[str] = []
    words = name.split()
    head, _, code = words[0].rpartition("-") if len(words) == 1 else ("", "", "")
    if head and re.fullmatch(r"[A-Z]{2,3}", code):
        # a grade code closed by another grade's initials, that grade spelled in the lineup
        # (Honda's "TRG-EL" beside "Elite": the Elite, which vPIC also writes "Touring Elite")
        whole = [n for n in names if len(n.split()) == 1 and n.isalpha() and not n.isupper()
                 and n.upper().startswith(code) and len(n) > len(code)]
        if len(whole) == 1:
            return whole[0]
    for w in words:
        w = _SEAT_COUNT.sub("", w)
        pieces = []
        for p in w.split("-"):
            if _UPPER_CODE.match(p) and p not in kept:
                hits = [k for k in spelled if k[0] == p[0] and len(k) > len(p) and _subsequence(p, k)]
                if len(hits) == 1:
                    p = spelled[hits[0]]
            elif p.isupper() and p in spelled:
                p = spelled[p]  # "TOURING" as the lineup writes it
            pieces.append(p)
        out.append("-".join(pieces))
    return " ".join(out)
