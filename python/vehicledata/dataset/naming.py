"""Names as the service gives them: EPA model strings -> marketed model, series, trim.

EPA's `model` is one string per tested configuration ("F150 Pickup 4WD FFV", "Camry LE/SE",
"530i xDrive", "Silverado LD C15 2WD"). The service names the marketed model ("F-150",
"Silverado 1500", "530i"), its series ("5 Series") and a trim ("XLT", "LE", "530i"). This
module is the one place that splits EPA's string:

- the **marketed model** is a model name of vPIC's `Model` table for that make (made in that
  year where vPIC's VIN patterns say so), matched on the EPA string's leading words with
  punctuation and case ignored ("F150" = "F-150"), else a reviewed exception (`EXCEPTIONS`),
  else EPA's `baseModel`;
- **drive, body, cab and weight words** ("4WD", "AWD", "xDrive", "Pickup", "Cab Chassis",
  "GVWR>7599 LBS", "FFV", "Hatchback") are taken out of the trim: they are in the engine,
  body and description fields already;
- the **trim** is what EPA's string says beyond that ("LE/SE" -> "LE", "XL/XLT" -> "XL"), else
  the first trim of vPIC's `Trim` patterns for that model and year, else the model itself where
  the model is a grade ("530i"), else "Base";
- the **series** is vPIC's `Series` pattern for that model and year ("5-Series" -> "5 Series"),
  else EPA's `baseModel` when it names a series ("5 Series").

`VpicNames` also records which vPIC Make/Model ids became which catalogue make and model: the
builder writes that as the `vpic_makes`/`vpic_models` tables, the only join from a decoded VIN
to the catalogue.

Thread safety: `VpicNames` is read-only after construction.
"""
from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from .epa import SourceError

# vPIC Element ids (table Element): Model, Series, Trim.
_MODEL, _SERIES, _TRIM = 28, 34, 38


@lru_cache(maxsize=65536)
def norm(name: str) -> str:
    """A name compared without case, spaces or punctuation ("F-150" == "F150")."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


@lru_cache(maxsize=4096)
def norm_make(name: str) -> str:
    return norm(re.sub(r"(?i)\b(automotive|motors?|cars|automobiles?)\b", "", name))


# ---- words that are not a trim -------------------------------------------------------------

# Drive words (they are in engines.drive_type and, for trucks, in the description).
_DRIVE = {"2WD", "4WD", "AWD", "FWD", "RWD", "4X4", "4X2", "XDRIVE", "SDRIVE", "4MATIC", "4MATIC+",
          "QUATTRO", "SH-AWD", "4MOTION", "2-WHEEL", "4-WHEEL", "ALL-WHEEL", "2WD/4WD", "AWD/4WD"}
# Body and cab words (in bodies.type and the description).
_BODY = {"PICKUP", "CAB", "CHASSIS", "VAN", "WAGON", "COUPE", "CONVERTIBLE", "SEDAN", "HATCHBACK",
         "ROADSTER", "CABRIOLET", "SPYDER", "SPIDER", "HATCH", "LIFTBACK", "SPORTBACK", "SPORTWAGEN",
         "2DR", "4DR", "5DR", "3DR", "CREW", "CREWMAX", "SUPERCREW", "SUPERCAB", "DOUBLE", "QUAD",
         "REGULAR", "EXTENDED", "KING", "ACCESS", "MEGA", "LWB", "SWB", "CARGO", "PASSENGER",
         "INCOMPLETE", "TAXI", "USPS", "GRAN", "TURISMO", "SUPER", "2-DOOR", "3-DOOR", "4-DOOR",
         "5-DOOR", "3-SEAT", "GC", "VOLANTE", "TARGA", "ESTATE", "AVANT"}
# Fuel and certification words (in engines.engine_type / fuel_type).
_FUEL = {"FFV", "CNG", "LPG", "E85", "PHEV", "EV", "FCV", "BEV", "HEV", "DIESEL", "TURBO", "GAS",
         "BIFUEL", "PZEV", "SULEV", "ULEV", "LEV", "CA", "CALIF", "CALIFORNIA", "LD"}
_WEIGHT = re.compile(r"(?i)^(GVWR.*|LBS|\d+(\.\d+)?L|[<>]=?\d+|\d{4,5}|PAYLOAD|BASE|LT|TIRE|TIRES|"
                     r"HD|HEAVY|DUTY|W/.*|WITH|RANGE|EXTENDER|PACKAGE|PKG|&|AND|-)$")
_GM_WEIGHT_CODE = re.compile(r"^[CK]?(10|15|1500|25|2500|35|3500)(HD)?$")


def _is_noise(word: str) -> bool:
    w = word.upper().strip(",()")
    return (not w or w in _DRIVE or w in _BODY or w in _FUEL or bool(_WEIGHT.match(w))
            or bool(_GM_WEIGHT_CODE.match(w)))


# Reviewed exceptions: (make, regex on EPA model) -> (marketed model, vPIC model it stands for);
# the first match wins. EPA rates light-duty pickups only: a Silverado/Sierra is the 1500 the
# service names (vPIC: model "Silverado", series "1500") unless its C/K code says 25/2500;
# EPA's "LD" is the carried-over body, sold as a 1500.
EXCEPTIONS: List[Tuple[str, "re.Pattern[str]", str, str]] = [
    ("Chevrolet", re.compile(r"(?i)^Silverado\b.*\b[CK]?(25|2500)(HD)?\b"), "Silverado 2500HD", "Silverado HD"),
    ("Chevrolet", re.compile(r"(?i)^Silverado\b"), "Silverado 1500", "Silverado"),
    ("GMC", re.compile(r"(?i)^Sierra\b.*\b[CK]?(25|2500)(HD)?\b"), "Sierra 2500HD", "Sierra HD"),
    ("GMC", re.compile(r"(?i)^Sierra\b"), "Sierra 1500", "Sierra"),
    ("Ford", re.compile(r"(?i)^F150\b"), "F-150", "F-150"),
    ("Ford", re.compile(r"(?i)^Shelby GT\d+ Mustang"), "Mustang", "Mustang"),
    # the carried-over DS Ram sold beside the new DT from 2019 is a model of its own (Ram's price
    # lists: "Ram 1500 Classic"), with its own trims (Tradesman, Express, Big Horn, SLT, Warlock)
    ("Ram", re.compile(r"(?i)^1500 Classic\b"), "1500 Classic", "1500"),
]
# Reviewed base trims of models whose EPA rows and vPIC patterns name no trim (the entry trim
# of the manufacturer's US price list for those years).
BASE_TRIMS_FILE = Path(__file__).resolve().parent / "base_trims.csv"


def _read_base_trims(path: Path = BASE_TRIMS_FILE) -> Dict[Tuple[str, str], str]:
    """dataset/base_trims.csv: make, model, base_trim, source (a public page per row)."""
    import csv
    out: Dict[Tuple[str, str], str] = {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != ["make", "model", "base_trim", "source"]:
            raise ValueError(f"{path.name}: columns must be make, model, base_trim, source")
        for r in reader:
            if not r["source"].startswith("https://"):
                raise ValueError(f"{path.name}: {r['make']} {r['model']} cites no public page")
            out[(r["make"], r["model"])] = r["base_trim"]
    return out


BASE_TRIMS: Dict[Tuple[str, str], str] = _read_base_trims()
# Words after which EPA's model string is a trim of an earlier-named model ("Prius c" stays).
# vPIC Series values that are a marketed series ("5-Series", "C-Class"), not a chassis code.
_VPIC_SERIES = re.compile(r"^[A-Z0-9]{1,3}[- ](Series|Class)$")
_SERIES_RE = re.compile(r"(?i)^(\d|[A-Z]+)[ -]?Series$|^[A-Z]+-Class$")


@dataclass(frozen=True)
class Name:
    """One EPA vehicle, named as the service names it."""

    model: str
    series: Optional[str]
    submodel: str
    trim: str
    vpic_model_ids: Tuple[int, ...] = ()
    exact: bool = False   # the trim is the maker's full grade name (BMW "330i xDrive"): used as is


# BMW names a car by its grade plus drive and body-line words: "330i xDrive", "430i Gran Coupe",
# "X3 xDrive30i", "i3s" (bmwusa.com). Coupe, Convertible and Sedan are bodies (in the description),
# "M Performance" and "with Range Extender" are EPA's notes on a configuration, not grades.
_BMW_GRADE = re.compile(r"^M?\d{3}[ied]$")
_BMW_LETTER_MODEL = re.compile(r"^[XZ]\d$")
_BMW_KEEP = (("Gran", "Coupe"), ("Gran", "Turismo"), ("Sports", "Wagon"))
_BMW_DROP = {"coupe", "convertible", "sedan", "roadster"}


def bmw_trim(model: str, epa_model: str) -> Optional[str]:
    """BMW USA's name of the car EPA tested ("330i xDrive Gran Turismo" -> "330i xDrive Gran
    Turismo", "430i Coupe" -> "430i", "X3 xDrive30i" -> "xDrive30i", "i3s with Range Extender"
    -> "i3s"), or None where the model is not a BMW grade, letter line or i3 (M2/M4/M5, i8, Alpina
    keep the general rule)."""
    words = _words(re.sub(r"\([^)]*\)?", " ", epa_model))
    if not words:
        return None
    if model == "i3" and words[0].lower() in ("i3", "i3s"):
        return words[0].lower()
    if _BMW_LETTER_MODEL.match(model) and norm(words[0]) == norm(model):
        rest = [w for w in words[1:] if w.lower() not in _BMW_DROP]
        return " ".join(rest) if rest and re.match(r"^(?:[xs]Drive\d\d[ie]|M\d\d[ie])$", rest[0]) else None
    if not (_BMW_GRADE.match(model) and words[0] == model):
        return None
    out = [model]
    if any(w.lower() == "xdrive" for w in words[1:]):
        out.append("xDrive")
    pairs = list(zip(words[1:], words[2:]))
    for keep in _BMW_KEEP:
        if keep in pairs:
            out.extend(keep)
    return " ".join(out)


# ---- vPIC pattern overlap ------------------------------------------------------------------

@lru_cache(maxsize=None)
def _classes(keys: str) -> Tuple[Optional[FrozenSet[str]], ...]:
    """A vPIC pattern key ("5R1C|*E", "[A-C]4*") as per-position character sets (None = any)."""
    out: List[Optional[FrozenSet[str]]] = []
    i = 0
    keys = keys.split("|")[0]  # positions 4-8; the check digit part after "|" rarely names a model
    while i < len(keys):
        c = keys[i]
        if c == "[":
            j = keys.find("]", i)
            if j < 0:
                break
            body, chars = keys[i + 1:j], ""
            k = 0
            while k < len(body):
                if k + 2 < len(body) and body[k + 1] == "-":
                    chars += "".join(chr(x) for x in range(ord(body[k]), ord(body[k + 2]) + 1))
                    k += 3
                else:
                    chars += body[k]
                    k += 1
            out.append(frozenset(chars))
            i = j + 1
        else:
            out.append(None if c in "*_" else frozenset(c))
            i += 1
    return tuple(out)


def _overlap(a: str, b: str) -> bool:
    """Whether two pattern keys of one VIN schema can match the same VIN."""
    for x, y in zip(_classes(a), _classes(b)):
        if x is None or y is None:
            continue
        if not x & y:
            return False
    return True


# `_overlap` with each key packed into one integer: position i is the 64-bit field i, one bit per
# character (bit 63 of every field stays 0), a wildcard all 63 bits. Two keys overlap when no field
# of their AND is zero, tested for all fields at once ("has a zero field": (x - LO) & ~x & HI).
_FIELDS, _WIDTH = 8, 64
_DATA = (1 << (_WIDTH - 1)) - 1
_LO = sum(1 << (_WIDTH * i) for i in range(_FIELDS))
_HI = _LO << (_WIDTH - 1)
_ANY = _DATA * _LO
_CHAR_BIT: Dict[str, int] = {}


@lru_cache(maxsize=None)
def _packed(keys: str) -> Optional[int]:
    """A pattern key packed as above; None where it does not fit (then `_overlap` decides)."""
    classes = _classes(keys)
    if len(classes) > _FIELDS:
        return None
    v = _ANY
    for i, cls in enumerate(classes):
        if cls is None:
            continue
        if not cls:
            return None
        m = 0
        for ch in cls:
            b = _CHAR_BIT.get(ch)
            if b is None:
                if len(_CHAR_BIT) >= _WIDTH - 1:
                    return None
                b = _CHAR_BIT[ch] = len(_CHAR_BIT)
            m |= 1 << b
        v = (v & ~(_DATA << (_WIDTH * i))) | (m << (_WIDTH * i))
    return v


class _ModelKeys:
    """One VIN schema's model patterns grouped by model, for `owners`."""

    def __init__(self, model_pats: List[Tuple[str, str]]) -> None:
        self.groups: Dict[str, Tuple[int, List[Tuple[str, Optional[int]]]]] = {}
        for k, m in model_pats:
            pk = _packed(k)
            union, keys = self.groups.get(m, (0, []))
            keys.append((k, pk))
            self.groups[m] = (union | (_ANY if pk is None else pk), keys)

    def owners(self, keys: str) -> Set[str]:
        """The models with a pattern key that overlaps `keys` (exactly as `_overlap`)."""
        a = _packed(keys)
        found: Set[str] = set()
        for m, (union, pats) in self.groups.items():
            if a is not None:
                c = a & union
                if (c - _LO) & ~c & _HI:
                    continue  # not even the union of the model's keys overlaps
            for k, pk in pats:
                if a is None or pk is None:
                    hit = _overlap(k, keys)
                else:
                    c = a & pk
                    hit = not ((c - _LO) & ~c & _HI)
                if hit:
                    found.add(m)
                    break
        return found


class VpicNames:
    """Model, trim and series names of vPIC per make and year, and the vPIC-id -> catalogue map."""

    def __init__(self, makes: Dict[str, List[int]], models: Dict[str, Dict[str, Tuple[str, Set[int]]]],
                 by_year: Dict[Tuple[str, int], Set[str]], trims: Dict[Tuple[str, str], List[Tuple[int, int, str]]],
                 series: Dict[Tuple[str, str], List[Tuple[int, int, str]]]) -> None:
        self.makes = makes              # norm make -> vPIC make ids
        self.models = models            # norm make -> norm model -> (vPIC spelling, vPIC model ids)
        self.by_year = by_year          # (norm make, year) -> norm models in VIN patterns that year
        self._trims = trims             # (norm make, norm model) -> (year from, year to, trim)
        self._series = series           # (norm make, norm model) -> (year from, year to, series)
        self._ranked: Dict[Tuple[int, str, str, int], List[str]] = {}

    def _values(self, which: Dict[Tuple[str, str], List[Tuple[int, int, str]]], tag: int,
                make: str, model: str, year: int) -> List[str]:
        key = (tag, norm_make(make), norm(model), year)
        out = self._ranked.get(key)
        if out is None:
            counts: Dict[str, int] = {}
            for lo, hi, value in which.get(key[1:3], ()):
                if lo <= year <= hi:
                    counts[value] = counts.get(value, 0) + 1
            out = [v for v, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
            self._ranked[key] = out
        return out

    def trims(self, make: str, model: str, year: int) -> List[str]:
        """vPIC Trim values of the model's VIN patterns in that year, most used first."""
        return self._values(self._trims, 0, make, model, year)

    def series(self, make: str, model: str, year: int) -> List[str]:
        """vPIC Series values of the model's VIN patterns in that year, most used first."""
        return self._values(self._series, 1, make, model, year)

    def model_names(self, make: str, year: int) -> Tuple[Dict[str, Tuple[str, Set[int]]], Set[str]]:
        mk = norm_make(make)
        return self.models.get(mk, {}), self.by_year.get((mk, year), set())


def load(path: Path) -> VpicNames:
    """Read vPIC's makes, models, and model/trim/series patterns by year (about 1 s)."""
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise SourceError(f"{path}: cannot open the vPIC database ({exc})") from None
    try:
        makes: Dict[str, List[int]] = {}
        make_name: Dict[int, str] = {}
        for mid, name in con.execute("SELECT Id, Name FROM Make ORDER BY Id"):
            makes.setdefault(norm_make(name), []).append(mid)
            make_name[mid] = norm_make(name)
        models: Dict[str, Dict[str, Tuple[str, Set[int]]]] = {}
        model_name: Dict[int, str] = {}
        for make_id, model_id, name in con.execute(
                "SELECT mm.MakeId, m.Id, m.Name FROM Make_Model mm JOIN Model m ON m.Id = mm.ModelId "
                "ORDER BY m.Id"):
            mk = make_name.get(make_id)
            if mk is None:
                continue
            n = norm(name)
            model_name[model_id] = n
            entry = models.setdefault(mk, {}).get(n)
            if entry is None:
                models[mk][n] = (name.strip(), {model_id})
            else:
                entry[1].add(model_id)
        schema_years: Dict[int, List[Tuple[str, int, int]]] = {}
        for sid, y_from, y_to, make_id in con.execute(
                "SELECT wv.VinSchemaId, wv.YearFrom, wv.YearTo, wm.MakeId FROM Wmi_VinSchema wv "
                "JOIN Wmi_Make wm ON wm.WmiId = wv.WmiId"):
            mk = make_name.get(make_id)
            if mk is not None:
                schema_years.setdefault(sid, []).append((mk, int(y_from or 0), int(y_to or 2026)))
        patterns: Dict[int, Dict[int, List[Tuple[str, str]]]] = {}
        for sid, keys, element, attr in con.execute(
                "SELECT VinSchemaId, Keys, ElementId, AttributeId FROM Pattern WHERE ElementId IN (?, ?, ?) "
                "ORDER BY Id", (_MODEL, _SERIES, _TRIM)):
            if sid in schema_years:
                patterns.setdefault(sid, {}).setdefault(element, []).append((keys, str(attr).strip()))
    except sqlite3.Error as exc:
        raise SourceError(f"{path}: cannot read vPIC's makes and models ({exc})") from None
    finally:
        con.close()

    by_year: Dict[Tuple[str, int], Set[str]] = {}
    spans: Dict[Tuple[str, int, int], Set[str]] = {}
    found: Dict[int, Dict[Tuple[str, str], List[Tuple[int, int, str]]]] = {_TRIM: {}, _SERIES: {}}
    for sid in sorted(patterns):
        per = patterns[sid]
        model_pats = [(k, model_name[int(a)]) for k, a in per.get(_MODEL, ())
                      if a.isdigit() and int(a) in model_name]
        if not model_pats:
            continue
        only = {m for _, m in model_pats}
        years = [(mk, max(lo, 1981), min(hi, 2027)) for mk, lo, hi in schema_years[sid]]
        owned: Dict[str, Set[str]] = {}
        grouped = _ModelKeys(model_pats) if len(only) > 1 else None
        for element, out in found.items():
            for keys, value in per.get(element, ()):
                if not value:
                    continue
                if len(only) == 1:
                    owners = only
                else:
                    got = owned.get(keys)
                    if got is None:
                        got = owned[keys] = grouped.owners(keys)  # type: ignore[union-attr]
                    owners = got
                for mk, lo, hi in years:
                    for m in owners:
                        out.setdefault((mk, m), []).append((lo, hi, value))
        for span in years:
            spans.setdefault(span, set()).update(only)
    for (mk, lo, hi), names in spans.items():
        for year in range(lo, hi + 1):
            by_year.setdefault((mk, year), set()).update(names)
    return VpicNames(makes, models, by_year, found[_TRIM], found[_SERIES])


# ---- naming one vehicle --------------------------------------------------------------------

def _words(model: str) -> List[str]:
    return [w for w in re.split(r"\s+", model.strip()) if w]


def _first_alternative(hint: str) -> str:
    """"LE/SE" -> "LE"; "XL/XLT" -> "XL"; "LE/XLE/SE/LTD" -> "LE" (EPA lists trims sharing a test)."""
    if "/" in hint and not re.search(r"\d/\d", hint):
        return hint.split("/")[0].strip() or hint
    return hint


# vPIC Trim values that name a market, a buyer or a build, not a trim.
_VPIC_NOT_TRIM = {"SA", "FL", "FLEET", "SALES", "POLICE", "CANADA", "EXPORT", "USA", "US", "MEXICO"}


def _clean_vpic_trim(value: str) -> Optional[str]:
    """A vPIC Trim value as a trim name: its first alternative, without drive/body words
    ("L/LE/SE/XLE" -> "L"; "Super Cab - Raptor" -> "Raptor"; "Std" -> None)."""
    for part in value.split(" - "):
        first = re.split(r"\s*(?:/|,|;|\+)\s*", part)[0]
        words = [w for w in _words(first) if not _is_noise(w) and "(" not in w and ")" not in w
                 and w.upper() not in _VPIC_NOT_TRIM and not re.fullmatch(r"\d", w)]
        out = " ".join(words).strip()
        if out and out.upper() not in ("STD", "STANDARD", "BASE", "N/A", "NA", "GRADE", "BASE GRADE"):
            return out
    return None


# BMW's M SUVs ("X6 M", "X5 M Competition"; not the "X3 M40i" grade): models of their own
_BMW_M_SUV = re.compile(r"^(X\d) M(?=\s|$)")


def generation_model(model: str, vpic_ids: Tuple[int, ...], make: str, year: int,
                     vpic: Optional[VpicNames]) -> Tuple[str, Tuple[int, ...]]:
    """The carried-over generation of a model whose new generation EPA marks "New" in the same
    year (2018: "New Wrangler" is the JL, "Wrangler" the JK): vPIC's model of that year named
    "<model> <chassis code>" ("Wrangler JK"), else the model unchanged."""
    all_models, this_year = vpic.model_names(make, year) if vpic else ({}, set())
    for key in sorted(this_year):
        entry = all_models.get(key)
        if entry is None:
            continue
        words = _words(entry[0])
        if (len(words) == len(_words(model)) + 1 and norm(" ".join(words[:-1])) == norm(model)
                and re.fullmatch(r"[A-Z]{2}", words[-1])):
            return entry[0], tuple(sorted(entry[1]))
    return model, vpic_ids


def marketed_model(make: str, epa_model: str, base_model: str, year: int,
                   vpic: Optional[VpicNames]) -> Tuple[str, int, Tuple[int, ...]]:
    """(model name, number of EPA words it took, vPIC model ids it stands for)."""
    words = _words(epa_model)
    all_models, this_year = vpic.model_names(make, year) if vpic else ({}, set())
    for emake, rx, name, vpic_name in EXCEPTIONS:
        if emake == make and rx.search(epa_model):
            ids = all_models.get(norm(vpic_name), ("", set()))[1]
            n = len(_words(name))
            taken = n if norm(" ".join(words[:n])) == norm(name) else (0 if name == "Mustang" else 1)
            return name, taken, tuple(sorted(ids))
    m = _BMW_M_SUV.match(epa_model) if make == "BMW" else None
    if m:  # "X6 M", "X5 M Competition": BMW sells the M SUVs as models of their own
        name = f"{m.group(1).upper()} M"
        return name, 2, tuple(sorted(all_models.get(norm(name), ("", set()))[1]))
    best: Optional[Tuple[int, int, str, Set[int]]] = None
    for n in range(min(len(words), 4), 0, -1):
        key = norm(" ".join(words[:n]))
        entry = all_models.get(key)
        if entry is None:
            continue
        rank = 0 if key in this_year else 1
        if best is None or (rank, -n) < (best[0], -best[1]):
            best = (rank, n, entry[0], entry[1])
    base = base_model.strip() or epa_model.strip()
    if best is not None and (best[0] == 0 or norm(best[2]) == norm(base) or norm(base) not in all_models):
        name = best[2]
        # keep EPA's spelling where it differs only in case ("Prius c" / "PRIUS C")
        epa_words = " ".join(words[:best[1]])
        if name.lower() == epa_words.lower() and not epa_words.isupper():
            name = epa_words  # case only: EPA's marketing spelling ("EcoSport", "Prius c")
        return name, best[1], tuple(sorted(best[3]))
    # EPA's base model names a series and the string starts with the grade ("530i" of "5 Series")
    if _SERIES_RE.match(base) and words and re.match(r"(?i)^[A-Z]{0,3}\d", words[0]) and norm(words[0]) != norm(base):
        return words[0], 1, ()
    # EPA's base model, where vPIC has no leading-word match
    entry = all_models.get(norm(base))
    taken = len(_words(base)) if norm(" ".join(words[:len(_words(base))])) == norm(base) else 0
    if entry is not None and not (entry[0].isupper() and not base.isupper()):
        return entry[0], taken, tuple(sorted(entry[1]))
    return base, taken, tuple(sorted(entry[1])) if entry else ()


def name_vehicle(make: str, epa_model: str, base_model: str, year: int, vpic: Optional[VpicNames],
                 old_generation: bool = False) -> Name:
    """The service's names for one EPA vehicle (see the module docstring). `old_generation`: EPA
    marks another row of this model and year "New" (see `generation_model`)."""
    model, taken, ids = marketed_model(make, epa_model, base_model, year, vpic)
    if old_generation:
        model, ids = generation_model(model, ids, make, year, vpic)
    words = _words(epa_model)
    if taken:  # parenthesised notes ("(Flex Fuel)", "(11 kW Charger)") are no trim words
        words = words[:taken] + _words(re.sub(r"\([^)]*\)?", " ", " ".join(words[taken:])))
    rest = words[taken:] if taken else [w for w in words if norm(w) != norm(model)]
    if not taken and len(rest) > 1 and rest[0].upper() == "NEW":
        rest = rest[1:]  # EPA's generation marker ("New Wrangler Unlimited 4WD", 2018's JL): no trim
    if rest and re.fullmatch(r"\d", rest[0]):
        rest = rest[1:]  # a door count right after the model ("Sonic 5", "Forte 5")
    # "Range" names a Tesla grade after Standard/Mid/Long ("Model 3 Long Range"), noise elsewhere
    hint_words = [w for k, w in enumerate(rest) if not _is_noise(w) or
                  (w.upper() == "RANGE" and k > 0 and rest[k - 1].upper() in ("STANDARD", "MID", "LONG"))]
    hint = _first_alternative(" ".join(hint_words).strip(" -/,"))
    base = base_model.strip()
    series = base if _SERIES_RE.match(base) and norm(base) != norm(model) else None
    trim = hint
    if make == "Lexus" and re.fullmatch(r"[A-Z]{2,3}", model) and re.fullmatch(r"\d{3}[A-Za-z]{0,2}", hint.split(" ")[0]):
        trim = f"{model} {hint}"  # Lexus grades: "RX 350", "RX 450h", "ES 300h" (EPA "RX 350 AWD")
    if vpic is not None:
        if series is None:
            for value in vpic.series(make, model, year):
                if _VPIC_SERIES.match(value):
                    series = re.sub(r"[- ]Series$", " Series", value)
                    break
        if not trim:
            trim = BASE_TRIMS.get((make, model), "")
        if not trim and make != "BMW":  # BMW's vPIC trims are editions ("GTS", "CS"): the grade is the trim
            for value in vpic.trims(make, model, year):
                cleaned = _clean_vpic_trim(value)
                if cleaned:
                    trim = cleaned
                    break
    if not trim:
        trim = BASE_TRIMS.get((make, model), "")
    if not trim and re.search(r"\d", model) and re.search(r"[A-Za-z]", model) and len(model) <= 8:
        trim = model  # the model is a grade ("530i", "C300", "Q50"): the service repeats it as the trim
    if not trim:
        trim = "Base"
    submodel = " ".join(hint_words).strip(" -/,") or "Base"
    exact = make == "BMW" and bmw_trim(model, epa_model) is not None
    if exact:
        trim = bmw_trim(model, epa_model) or trim
    return Name(model=model, series=series, submodel=submodel, trim=trim, vpic_model_ids=ids, exact=exact)


def description(trim: str, body_words: str, engine_words: str) -> str:
    """The service's description: "530i 4dr Sedan (2.0L 4cyl Turbo 8A)", "XLT 2dr Regular Cab
    4WD (3.5L 6cyl 6A)", and without a trim word for a "Base" trim: "4dr Sedan (2.4L 4cyl 8AM)"."""
    head = body_words if trim == "Base" else f"{trim} {body_words}"
    return f"{head} ({engine_words})"


def make_ids(vpic: Optional[VpicNames], make: str) -> List[int]:
    """vPIC Make ids that are this catalogue make (names equal without case, punctuation and
    words such as "Motors")."""
    return list(vpic.makes.get(norm_make(make), ())) if vpic else []


def model_ids(vpic: Optional[VpicNames], make: str, model: str) -> Iterable[int]:
    """vPIC Model ids of this make whose name is this catalogue model's (compared as `norm`)."""
    if vpic is None:
        return ()
    entry = vpic.models.get(norm_make(make), {}).get(norm(model))
    return sorted(entry[1]) if entry else ()
