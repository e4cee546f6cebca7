"""EPA vehicles -> rows of the storage tables (as dicts keyed by column name)."""
from __future__ import annotations

import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple

from .. import schema
from . import derive, lineup, mapping, naming, prices, provenance, system_hp
from .epa import SourceError, Vehicle
from .sweep import Sweep, figures as sweep_figures
from .testcar import TestCars
from .vpic import EngineLayouts
from .timefmt import epa_timestamp

# Id ranges of the name-derived ids (all fit the schema's 32-bit int columns).
MAKE_IDS = (1, 100_000)
MODEL_IDS = (100_000, 10_000_000)
SUBMODEL_IDS = (10_000_000, 2_000_000_000)
EXTERIOR_COLOURS = (6, 10)
INTERIOR_COLOURS = (2, 4)
INTERIOR_ID_OFFSET = 50  # colour ids: trim_id*100 + k (exterior), trim_id*100 + 50 + k (interior)
# Trims beyond the first of an EPA vehicle's lineup: EXTRA_TRIM_IDS + EPA id * 16 + k (k = 1..15);
# the first keeps EPA's id. (The largest colour id, about 100 x 2.0 million, fits 32 bits.)
EXTRA_TRIM_IDS = 1_000_000


def stable_ids(keys: Iterable[Tuple[str, ...]], lo: int, hi: int) -> Dict[Tuple[str, ...], int]:
    """Ids derived from names (CRC-32 of the key), collisions resolved by probing in sorted
    key order: a name keeps its id when other names come or go (unless it collided)."""
    span = hi - lo
    taken: Dict[int, Tuple[str, ...]] = {}
    out: Dict[Tuple[str, ...], int] = {}
    for key in sorted(set(keys)):
        h = lo + zlib.crc32("\x1f".join(key).encode("utf-8")) % span
        while h in taken:
            h = lo + (h - lo + 1) % span
        taken[h] = key
        out[key] = h
    return out


def canonical_makes(vehicles: List[Vehicle]) -> Dict[str, str]:
    """EPA spells a few makes two ways ("MINI"/"Mini"): one spelling per make, the most used."""
    by_fold: Dict[str, Counter] = {}
    for v in vehicles:
        by_fold.setdefault(v.make.casefold(), Counter())[v.make] += 1
    out: Dict[str, str] = {}
    for counts in by_fold.values():
        best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        for spelling in counts:
            out[spelling] = best
    return out


@dataclass
class Tables:
    """Rows per storage table (dicts keyed by column name), plus build statistics."""

    rows: Dict[str, List[dict]] = field(default_factory=dict)
    # colour tables: (first id, identity of the trim, ((name, rgb), ...)) per trim
    colours: Dict[str, List[Tuple[int, dict, Tuple[Tuple[str, str], ...]]]] = field(
        default_factory=lambda: {"exterior_colors": [], "interior_colors": []})

    def table_rows(self, table: str) -> Optional[Iterable[dict]]:
        """Rows of a storage table (a generator for the colour tables), None if not built here."""
        if table in self.colours:
            return ({"id": first + k, **ident, "color": name, "rgb": rgb}
                    for first, ident, offered in self.colours[table] for k, (name, rgb) in enumerate(offered))
        return self.rows.get(table)

    def count(self, table: str) -> int:
        if table in self.colours:
            return sum(len(offered) for _, _, offered in self.colours[table])
        return len(self.rows.get(table, ()))
    unmapped: Counter = field(default_factory=Counter)
    layouts_from_vpic: int = 0   # engine layouts where vPIC overrode the make rules
    vpic_makes: Dict[int, int] = field(default_factory=dict)    # vPIC Make.Id -> makes.id
    vpic_models: Dict[int, int] = field(default_factory=dict)   # vPIC Model.Id -> models.id
    # the origin of each per-row-varying value of a trim: (id, *provenance.ROW_ORIGIN_COLUMNS)
    origins: List[Tuple[object, ...]] = field(default_factory=list)


def _engine_words(v: Vehicle, engine_type: str, layout: Optional[str], trans_code: str) -> str:
    if engine_type == "electric":
        return f"electric {trans_code or 'DD'}"
    if engine_type == "electric (fuel cell)":
        return f"fuel cell {trans_code or 'DD'}"
    words: List[str] = []
    if v.displ:
        words.append(f"{v.displ:.1f}L")
    if layout == "rotary 0":
        words.append("rotary")
    elif v.cylinders:
        words.append(f"{v.cylinders}cyl")
    if engine_type == "diesel":
        words.append("Turbodiesel" if v.turbo or v.year >= 2000 else "diesel")
    else:
        if v.turbo:
            words.append("Turbo")
        if v.supercharged:
            words.append("S/C")
    if engine_type == "hybrid":
        words.append("gas/electric hybrid")
    elif engine_type == "mild hybrid":
        words.append("mild hybrid")
    elif engine_type == "plug-in hybrid":
        words.append("gas/electric plug-in hybrid")
    elif engine_type == "flex-fuel (FFV)":
        words.append("FFV")
    elif engine_type == "natural gas (CNG)":
        words.append("CNG")
    if trans_code:
        words.append(trans_code)
    return " ".join(words)


def _pos(x: float) -> Optional[int]:
    return int(round(x)) if x and x > 0 else None


_MIN_HP = 40  # below it a source's figure is a typo or another unit (a few Test Car List rows)
_KIND = {"electric": "ev", "electric (fuel cell)": "fcev", "plug-in hybrid": "phev", "hybrid": "hybrid",
         "mild hybrid": "mild"}
_DRIVE = {"front wheel drive": "2", "rear wheel drive": "2", "all wheel drive": "A", "four wheel drive": "4"}


def _boosted(v: Vehicle) -> bool:
    return bool(v.turbo or v.supercharged)


def _engine_key(v: Vehicle) -> Tuple[int, str, float, int]:
    return (v.year, v.mfr_code, round(v.displ or 0.0, 1), v.cylinders or 0)


_GENERIC_WORDS = {"2wd", "4wd", "awd", "fwd", "rwd", "4x2", "4x4", "ffv", "cab", "pickup", "chassis", "van",
                  "wagon", "coupe", "sedan", "convertible", "hatchback", "super", "crew", "regular", "turbo", "hybrid"}


def _model_words_of(s: str) -> set:
    return {w for w in re.split(r"[^a-z0-9]+", s.lower()) if w and w not in _GENERIC_WORDS}


def _split_by_boost(v: Vehicle, hp: Optional[float], tc_key_hps: List[int], agree: List) -> Optional[float]:
    """One displacement sold with and without a turbo or supercharger in a model year (the 2016
    F-150's 3.5 L: 282 hp, EcoBoost 365 hp): the Test Car List keys both alike and vPIC often rates
    them together ("282|365"). The outputs the sources give for that size split in two at 10 %
    above the lowest: a naturally aspirated engine matched to an upper output takes the lowest,
    a boosted one matched to the lowest takes the least of the upper ones (a Cooper S, not the
    John Cooper Works). Where the sources give one output only, it goes to the boosted engine
    when it is above 85 hp a litre (few engines without a turbo or supercharger make that much;
    the Veloster's 2.0 L 147 hp is 74), else to the other, and the other has none."""
    pool = sorted(set(tc_key_hps) | {h for e in agree for h in (getattr(e, "hps", ()) or ((e.hp,) if e.hp else ()))
                                      if h >= _MIN_HP})
    if not pool:
        return hp
    upper = [h for h in pool if h >= 1.1 * pool[0]]
    if upper:
        if _boosted(v):
            return hp if hp is not None and hp >= 1.1 * pool[0] else float(upper[0])
        return hp if hp is not None and hp < 1.1 * pool[0] else float(pool[0])
    boosted_output = pool[0] > 85.0 * float(v.displ or 1.0)
    return float(pool[0]) if boosted_output == _boosted(v) else None


def _facts(v: Vehicle, etype: str, dtype: Optional[str], model: str, make: str,
           sweep: Optional[Sweep], testcars: Optional[TestCars], mixed: bool = False) -> Dict[str, object]:
    """Horsepower, curb weight, wheelbase, seats, doors and vPIC base price of one EPA vehicle
    from the public sources, with the origin of each ('real', 'derived' or None = no value).
    `mixed`: the model year sells this engine size with and without forced induction
    (`_split_by_boost`)."""
    kind = _KIND.get(etype, "")
    tc = testcars.match(v) if testcars is not None else None
    agree = []
    model_entries: List = []
    if sweep is not None:
        for vpic_model in [model] + [vn for mk, _, name, vn in naming.EXCEPTIONS if mk == make and name == model]:
            agree = sweep.matching(v.year, make, vpic_model, v.displ, v.cylinders, kind, _DRIVE.get(dtype or "", ""))
            if agree:
                model_entries = sweep.entries(v.year, make, vpic_model)
                break
    fig = sweep_figures(agree)
    out: Dict[str, object] = {"entries": agree}
    hp: Optional[float] = None
    hp_origin: Optional[str] = None
    if kind == "ev":
        kw = derive.motor_kw(v.ev_motor)
        hp, hp_origin = (kw * 1.341, "EPA evMotor") if kw else (None, None)
    if hp is None and kind in ("hybrid", "mild", "phev"):
        # the Test Car List and vPIC rate a hybrid's engine alone: the reviewed system output first
        sys_hp = system_hp.system_hp(make, model, v.year, v.displ, etype)
        if sys_hp is not None:
            hp, hp_origin = sys_hp, "reviewed hybrid system table"
    if hp is None and tc is not None and tc.hp and tc.hp >= _MIN_HP:
        hp, hp_origin = tc.hp, "EPA Test Car List"
    if hp is None and fig["hp"] and fig["hp"] >= _MIN_HP:
        hp, hp_origin = fig["hp"], "vPIC"
    if (not mixed and kind == "" and hp_origin == "EPA Test Car List" and testcars is not None
            and (HALO_GRADE.search(v.model) or SPORT_GRADE.search(v.model))):
        # EPA names a performance grade ("F150 RAPTOR 4WD"): the strongest tested configuration of
        # the model with that engine (the Test Car List calls the 450 hp Raptor just "F-150")
        line = naming.norm(v.base_model or v.model)
        top = [c.hp for c in getattr(testcars, "by_key", {}).get(_engine_key(v), ())
               if c.hp and line and (line in naming.norm(c.model) or naming.norm(c.model) in naming.norm(v.model))]
        if top and max(top) > (hp or 0):
            hp = float(max(top))
    if mixed and kind == "" and hp_origin in ("EPA Test Car List", "vPIC"):
        by_key = getattr(testcars, "by_key", {}) if testcars is not None else {}
        mine = _model_words_of(v.model) | _model_words_of(v.base_model)
        tc_hps = [c.hp for c in by_key.get(_engine_key(v), ()) if c.hp and c.hp >= _MIN_HP
                  and _model_words_of(c.model) & mine]
        hp = _split_by_boost(v, hp, tc_hps, agree)
    out["hp"] = int(round(hp)) if hp else None
    out["mixed"] = mixed
    out["hp_origin"] = hp_origin if hp else None
    # the Test Car List's equivalent test weight is the curb weight plus a 300 lb load, rounded
    # to an inertia class; of the vehicles tested in this configuration, the lightest
    etw = (getattr(testcars, "lightest_etw", lambda _: tc.etw)(v) or tc.etw) if tc is not None else None
    if fig["curb"] and etw and _one_curb_for_all(model_entries, agree):
        # vPIC gives several engines or drives of the model year one curb weight, the heaviest's
        # (2019 Camry: 3,572 lb for the 2.5 L and the 3.5 L; the 2.5 L LE weighs 3,296; 2019
        # RAV4: 3,620 lb front-drive, all-wheel drive and hybrid; the LE weighs 3,370): the
        # tested configuration's weight says more
        out["curb"], out["curb_origin"] = etw - 300, "derived"
    elif fig["curb"]:
        out["curb"], out["curb_origin"] = int(round(fig["curb"])), "real"
    elif etw:
        out["curb"], out["curb_origin"] = etw - 300, "derived"
    else:
        out["curb"], out["curb_origin"] = None, None
    out["wheelbase"] = round(fig["wheelbase"], 1) if fig["wheelbase"] else None
    out["seats"] = int(fig["seats"]) if fig["seats"] else None
    out["doors"] = int(fig["doors"]) if fig["doors"] else None
    out["price"] = int(fig["price"]) if fig["price"] else None
    return out


def _one_curb_for_all(entries: List, agree: List) -> bool:
    """Whether vPIC's curb weight of these agreeing configurations is one figure it gives several
    engines, drives or powertrains of the model year alike (not specific to the configuration)."""
    curbs = {e.curb for e in agree if e.curb}
    if len(curbs) != 1:
        return False
    same = [e for e in entries if e.curb in curbs]
    return (len({(e.displ, e.cylinders) for e in same if e.displ}) > 1 or len({e.drive for e in same if e.drive}) > 1
            or len({e.electric for e in same}) > 1)


_CARRIED_HP = "the same engine's rating in the model's nearest year"
_CARRY_HP_YEARS = 3


def _carry_horsepower(vehicles: List[Vehicle], idents: List[Tuple[str, str, str]], etypes: List[str],
                      facts_of: List[Dict[str, object]]) -> None:
    """A model year no source rates (the Test Car List and the vPIC sweep end with 2024) takes the
    rating of the same engine of the same model (displacement, cylinders, turbo/supercharger,
    powertrain) in its nearest rated year up to three years away, earlier first (derived)."""
    rated: Dict[Tuple[object, ...], Dict[int, int]] = {}
    def key(i: int) -> Tuple[object, ...]:
        v = vehicles[i]
        return (idents[i][0], idents[i][1], v.displ, v.cylinders, v.turbo, v.supercharged, etypes[i])
    for i, f in enumerate(facts_of):
        if f["hp"]:
            rated.setdefault(key(i), {}).setdefault(vehicles[i].year, f["hp"])  # type: ignore[arg-type]
    for i, f in enumerate(facts_of):
        if f["hp"] or not vehicles[i].displ or f.get("mixed"):
            continue  # (a size sold with and without a turbo that year: its outputs are not told apart)
        years = rated.get(key(i))
        if not years:
            continue
        y = vehicles[i].year
        near = sorted((abs(z - y), -z) for z in years if 0 < abs(z - y) <= _CARRY_HP_YEARS)
        if near:
            f["hp"], f["hp_origin"] = years[-near[0][1]], _CARRIED_HP


def _powertrain(v: Vehicle, etype: str, dtype: Optional[str]) -> Tuple[object, ...]:
    return (v.displ, v.cylinders, etype, _DRIVE.get(dtype or "", ""))


def _lineups(vehicles: List[Vehicle], idents: List[Tuple[str, str, str]], named: List[naming.Name],
             etypes: List[str], dtypes: List[Optional[str]], facts_of: List[Dict[str, object]]) -> List[List[str]]:
    """The trims each EPA vehicle stands for (see dataset/lineup.py), first the one keeping its id."""
    own = [lineup.hinted(sub, et, mdl, mk) for (mk, mdl, sub), et in zip(idents, etypes)]
    us_words = _us_words(vehicles, idents)
    cands_of: List[List[str]] = []
    for i, v in enumerate(vehicles):
        make, model, _ = idents[i]
        entries = facts_of[i]["entries"]
        found = lineup.reviewed(make, model, v.year, v.displ, v.turbo, etypes[i], v.supercharged)
        if found is None:
            found = [] if make in lineup.MODEL_IS_TRIM else [
                c for c in lineup.candidates(entries, etypes[i], model)  # type: ignore[arg-type]
                if not lineup.foreign(c, make, us_words.get(make, frozenset()), v.year)]
        cands_of.append(found)
    _bind_performance_grades(vehicles, idents, facts_of, cands_of,
                             [lineup.reviewed(mk, mdl, v.year, v.displ, v.turbo, et, v.supercharged) is not None
                              for v, (mk, mdl, _), et in zip(vehicles, idents, etypes)])
    claimed: Dict[Tuple[object, ...], set] = {}
    for i, v in enumerate(vehicles):
        if own[i]:
            key = (v.year, idents[i][0], idents[i][1], _powertrain(v, etypes[i], dtypes[i]))
            # a hint that starts vPIC's names ("Unlimited": "Unlimited Sport", "Unlimited Rubicon")
            # claims those names too
            claimed.setdefault(key, set()).update(
                naming.norm(x) for x in lineup.lineup(own[i], cands_of[i], set(), named[i].trim, etypes[i]))
    out: List[List[str]] = []
    for i, v in enumerate(vehicles):
        make, model, _ = idents[i]
        if named[i].exact:  # the maker's full grade name (BMW "330i xDrive"): one trim, as named
            out.append([named[i].trim])
            continue
        key = (v.year, make, model, _powertrain(v, etypes[i], dtypes[i]))
        fallback = named[i].trim
        cleaned = lineup.clean(fallback, etypes[i]) or fallback
        if (lineup.foreign(cleaned, make, us_words.get(make, frozenset()), v.year)
                or not facts_of[i]["fits"](fallback)):  # type: ignore[operator]
            fallback = "Base"
        out.append(lineup.lineup(own[i], cands_of[i], claimed.get(key, set()), fallback, etypes[i]))
    out = _spell_out(out, idents, named)
    _borrow_grades(vehicles, idents, named, etypes, facts_of, out)
    return out


_BORROW_YEARS = 4


def _no_grade(names: List[str], model: str) -> bool:
    """A lineup that names no grade: "Base" or powertrain words alone ("Hybrid", "Energi Plug-in";
    the model's own name is a grade where the model is one: "M4", "530i")."""
    return len(names) == 1 and (names[0] == "Base" or (
        bool(names[0].split()) and all(w.lower() in lineup.POWERTRAIN_WORDS for w in names[0].split())))


def _borrow_grades(vehicles: List[Vehicle], idents: List[Tuple[str, str, str]], named: List[naming.Name],
                   etypes: List[str], facts_of: List[Dict[str, object]], lineups: List[List[str]]) -> None:
    """A row whose lineup names no grade ("Base": neither EPA nor vPIC names its trims) takes the
    grades (at least two) the same engine (size, cylinders, boost, powertrain) carries in another
    row of the same model year, else in the model's nearest model year up to four years away
    (earlier first; the same engine standing for the same generation), else the model year's base
    grade where its other rows name at least two (counting, for a row whose model year named no
    grade before its rows borrowed, the grades they borrowed); a performance grade only where it fits the row's
    engine, a powertrain word only on its powertrain. Its vPIC configurations priced no such grade:
    its prices come from the line's ladder. A model year with one grade for all its rows takes,
    beside it, the grades the same engine carries in the nearest year up to four years away that
    sells that grade among at least three."""
    def engine(i: int) -> Tuple[object, ...]:
        v = vehicles[i]
        return (idents[i][0], idents[i][1], v.displ, v.cylinders, bool(v.turbo), bool(v.supercharged), etypes[i])
    grades: Dict[Tuple[object, ...], Dict[int, List[str]]] = {}
    year_grades: Dict[Tuple[int, str, str], List[str]] = {}
    for i, names in enumerate(lineups):
        if named[i].exact or _no_grade(names, idents[i][1]):
            continue
        got = grades.setdefault(engine(i), {}).setdefault(vehicles[i].year, [])
        got.extend(t for t in names if t not in got and t != "Base")
        mine = year_grades.setdefault((vehicles[i].year, idents[i][0], idents[i][1]), [])
        mine.extend(t for t in names if t not in mine and t != "Base")

    def _take(i: int, borrowed: List[str]) -> None:
        spelled: List[str] = []
        for t in borrowed:  # a powertrain word only on its powertrain ("Hybrid LE" -> LE on a gas row)
            c = lineup.clean(t, etypes[i]) or ""
            if c and c not in spelled:
                spelled.append(c)
        if spelled:
            lineups[i] = spelled[:lineup.MAX_TRIMS]
            facts_of[i]["borrowed"] = True  # its vPIC configurations priced no such grade

    pending: List[int] = []
    for i, names in enumerate(lineups):
        if named[i].exact or not _no_grade(names, idents[i][1]):
            continue
        fits = facts_of[i]["fits"]
        years = grades.get(engine(i), {})
        y = vehicles[i].year
        borrowed: List[str] = []
        for z in sorted(years, key=lambda z: (abs(z - y), z)):
            if abs(z - y) > _BORROW_YEARS:
                break
            if len(years[z]) >= 2:
                borrowed = [t for t in years[z] if fits(t)]  # type: ignore[operator]
                if borrowed:
                    break
        if not borrowed:
            make, model, _ = idents[i]
            same_year = [t for t in year_grades.get((y, make, model), []) if fits(t)]  # type: ignore[operator]
            if len(same_year) >= 2:
                borrowed = ladder_order(make, model, y, same_year)[:1]
            else:
                pending.append(i)
        _take(i, borrowed)
    # a row left without a grade because its model year's other rows had none either before they
    # borrowed theirs (2018 Rogue: vPIC names no trim that year; the gas rows take S, SV, SL from
    # their engine's nearest years, the hybrid's engine has none): the model year's base grade
    # among the grades its rows now carry
    now: Dict[Tuple[int, str, str], List[str]] = {}
    for i, names in enumerate(lineups):
        if not (named[i].exact or _no_grade(names, idents[i][1])):
            mine = now.setdefault((vehicles[i].year, idents[i][0], idents[i][1]), [])
            mine.extend(t for t in names if t not in mine and t != "Base")
    for i in pending:
        make, model, _ = idents[i]
        y = vehicles[i].year
        same_year = [t for t in now.get((y, make, model), []) if facts_of[i]["fits"](t)]  # type: ignore[operator]
        if len(same_year) >= 2:
            _take(i, ladder_order(make, model, y, same_year)[:1])
    # one grade for a whole model year (2015 Sorento "L") where an adjacent year of the same
    # engine sells it among at least three: that year's grades
    single: Dict[Tuple[int, str, str], set] = {}
    for i, names in enumerate(lineups):
        if not named[i].exact:
            single.setdefault((vehicles[i].year, idents[i][0], idents[i][1]), set()).update(names)
    for i, names in enumerate(lineups):
        y = vehicles[i].year
        if named[i].exact or len(single[(y, idents[i][0], idents[i][1])]) != 1 or len(names) != 1:
            continue
        years = grades.get(engine(i), {})
        for z in sorted(years, key=lambda z: (abs(z - y), z)):
            if 0 < abs(z - y) <= _BORROW_YEARS and len(years[z]) >= 3 and names[0] in years[z]:
                fits = facts_of[i]["fits"]
                got = [c for c in (lineup.clean(t, etypes[i]) for t in years[z] if fits(t))  # type: ignore[operator]
                       if c]
                if len(got) >= 2:
                    lineups[i] = [names[0]] + [t for t in dict.fromkeys(got) if t != names[0]][:lineup.MAX_TRIMS - 1]
                break


def _spell_out(lineups: List[List[str]], idents: List[Tuple[str, str, str]],
               named: List[naming.Name]) -> List[List[str]]:
    """vPIC's abbreviated and coded grades spelled out from the make's own grade words
    (lineup.expand_codes: "Prfrd" -> Preferred, "ADV19" -> Advance, "SV42 Momentum" -> Momentum),
    then a code spelled as its lineup spells the grade (lineup.spell_in_lineup: "TRG" -> Touring
    beside "Touring", "TOURING-7" -> Touring); a name met twice in one lineup is kept once."""
    by_make: Dict[str, List[str]] = {}
    for (make, _, _), names in zip(idents, lineups):
        by_make.setdefault(make, []).extend(names)
    words = {make: lineup.grade_words(names) for make, names in by_make.items()}
    out: List[List[str]] = []
    for i, names in enumerate(lineups):
        if named[i].exact:
            out.append(names)
            continue
        spelled: List[str] = []
        for t in names:
            s = lineup.expand_codes(t, words[idents[i][0]]) or t
            if naming.norm(s) not in {naming.norm(x) for x in spelled}:
                spelled.append(s)
        # then a code beside its grade spelled out in the same lineup ("TRG" Touring, "TOURING-7")
        merged: List[str] = []
        for t in spelled:
            s = lineup.spell_in_lineup(t, spelled)
            if naming.norm(s) not in {naming.norm(x) for x in merged}:
                merged.append(s)
        out.append(merged)
    return out


# Halo grades built only with the model year's strongest engine (a supercharged V8 mostly), and
# performance grades built with its largest engine. vPIC's VIN patterns name the trim and the
# engine at separate positions, so its decoded configurations pair every trim with every engine
# (a 2018 Challenger "SRT Demon" with the 3.6 V6): the engine decides.
HALO_GRADE = re.compile(r"(?i)\b(hellcat|demon|redeye|trackhawk|zl1|zr1|z06|gt500|trx|super stock|jailbreak|"
                        r"raptor r|black series)\b")
SPORT_GRADE = re.compile(r"(?i)\b(srt|srt8|392|scat pack|ss|1ss|2ss|gt350|shelby|type r|nismo|raptor|trd pro)\b")


def _bind_performance_grades(vehicles: List[Vehicle], idents: List[Tuple[str, str, str]],
                             facts_of: List[Dict[str, object]], cands_of: List[List[str]],
                             reviewed: List[bool]) -> None:
    """vPIC's performance grades only on the engines they are built with: a halo grade (Hellcat,
    Demon, ZL1, Trackhawk...) on rows rated at least 80 % of the model year's strongest engine, a
    performance grade (SRT 392, Scat Pack, SS, Type R, Raptor...) there or on its largest
    displacement. A reviewed lineup is left as reviewed."""
    top_hp: Dict[Tuple[int, str, str], int] = {}
    top_displ: Dict[Tuple[int, str, str], float] = {}
    for v, (mk, mdl, _), f in zip(vehicles, idents, facts_of):
        key = (v.year, mk, mdl)
        if f["hp"]:
            top_hp[key] = max(top_hp.get(key, 0), int(f["hp"]))  # type: ignore[call-overload]
        if v.displ:
            top_displ[key] = max(top_displ.get(key, 0.0), float(v.displ))
    homeless: Dict[Tuple[int, str, str], List[str]] = {}
    for i, v in enumerate(vehicles):
        key = (v.year, idents[i][0], idents[i][1])
        hp = facts_of[i]["hp"]
        strong = bool(hp) and hp >= 0.8 * top_hp.get(key, 0)  # type: ignore[operator]
        large = bool(v.displ) and float(v.displ or 0.0) >= 0.95 * top_displ.get(key, 0.0)
        facts_of[i]["fits"] = lambda c, strong=strong, large=large: not (
            (HALO_GRADE.search(c) and not strong) or (SPORT_GRADE.search(c) and not (strong or large)))
        if not reviewed[i]:
            dropped = [c for c in cands_of[i] if not facts_of[i]["fits"](c)]  # type: ignore[operator]
            cands_of[i] = [c for c in cands_of[i] if c not in dropped]
            for c in dropped:
                if c not in homeless.setdefault(key, []):
                    homeless[key].append(c)
    # a grade vPIC names for the model year but on none of its engines' rows (its patterns list
    # the weaker engines only) goes to the rows it fits: the strongest engine's, for a halo grade
    members: Dict[Tuple[int, str, str], List[int]] = {}
    for i, v in enumerate(vehicles):
        members.setdefault((v.year, idents[i][0], idents[i][1]), []).append(i)
    for key, names in homeless.items():
        for c in names:
            if any(c in cands_of[i] for i in members[key]):
                continue
            for i in members[key]:
                if not reviewed[i] and facts_of[i]["fits"](c):  # type: ignore[operator]
                    cands_of[i].append(c)


def _us_words(vehicles: List[Vehicle], idents: List[Tuple[str, str, str]]) -> Dict[str, frozenset]:
    """Per make, the words its US sources use in names: EPA's model strings and the reviewed
    lineups and prices (upper case). A vPIC grade of another market is a US trim only with them."""
    words: Dict[str, set] = {}
    for v, (make, _, _) in zip(vehicles, idents):
        words.setdefault(make, set()).update(w.upper() for w in re.split(r"[\s/,()]+", v.model) if w)
    for r in lineup.read_reviewed():
        words.setdefault(r.make, set()).update(w.upper() for t in r.trims for w in t.split())
    for (_, make, _, trim) in prices.trim_prices():
        words.setdefault(make, set()).update(w.upper() for w in trim.split())
    return {k: frozenset(v) for k, v in words.items()}


_MAX_MSRP = 3_500_000.0      # the dearest published 2015-2020 list prices (Bugatti Chiron: $2.99M) stay below it
_LADDER_STEP_PICKUP = 0.18   # pickups: XL to Limited is about 2.3 x over six trims
_PREMIUM = {"hybrid": 2500, "mild hybrid": 1500, "plug-in hybrid": 8000, "diesel": 3500}


def ladder_order(make: str, model: str, year: int, names: Iterable[str]) -> List[str]:
    """A line's trims from base to top: the reviewed lineup's order where lineups_reviewed.csv has
    one, else the generic ladder (lineup.rank); a reviewed price line (msrp_lines.csv) puts its
    base trim first and its top trim last."""
    order = lineup.reviewed_order(make, model, year)
    out = sorted(set(names), key=lambda t: (order.get(t, lineup.rank(t, make)) if order else lineup.rank(t, make), t))
    anchor = prices.line(year, make, model)
    if anchor is not None:
        base, top = lineup.norm(anchor.base_trim), lineup.norm(anchor.top_trim)
        out.sort(key=lambda t: -1 if lineup.norm(t) == base else 1 if lineup.norm(t) == top else 0)
    return out


def _step_rate(make: str, pickup: bool) -> float:
    """The make's price step between neighbouring trims of a line without a reviewed anchor: its
    reviewed lines' top/base spread over five steps, kept within 4-9 % (pickups: 18 %)."""
    if pickup:
        return _LADDER_STEP_PICKUP
    return min(0.09, max(0.04, prices.make_spread(make) ** 0.2 - 1.0))


# The widest a line's ladder runs from its base trim to its top trim (before drive, engine and
# powertrain premiums), by segment: F-150 XL to Limited is 2.4x, a Camry L to XSE 1.4x, a
# Challenger SXT to SRT Demon 3.1x (a line with a performance grade).
_SPREAD = {"pickup": 2.4, "suv": 2.1, "van": 1.8, "car": 1.9}
_SPREAD_PERFORMANCE = 3.1
PERFORMANCE_GRADE = re.compile(r"(?i)\b(hellcat|demon|redeye|trackhawk|zl1|z06|zr1|gt500|gt350|trx|raptor|"
                               r"super stock|srt|scat pack|type r|nismo|shelby|jailbreak)\b")
_CARRY_YEARS = 4      # a model-year without a real base price takes its nearest real one up to 4 years away,
_CARRY_RATE = 0.03    # moved 3 % a year (US new-vehicle prices, 2015-2024)


def _segment(vehicles: List[Vehicle], members: List[int]) -> str:
    groups = {derive.class_group(vehicles[i].vclass) for i in members}
    if groups & {"smallpickup", "stdpickup"}:
        return "pickup"
    if groups & {"smallsuv", "midsuv", "stdsuv", "spv"}:
        return "suv"
    if groups & {"minivan", "cargovan", "passvan"}:
        return "van"
    return "car"


_PERFORMANCE_TOP = 100_000.0   # 2020 USD: a performance grade's 3.1x climbs to about here (Challenger Demon $85k)


def _max_spread(vehicles: List[Vehicle], members: List[int], names: List[str], make: str,
                base: Optional[float] = None, year: int = 2020) -> float:
    """The segment's spread; a line with a performance grade climbs up to 3.1x from a mainstream
    base, but not past about $100,000 (2020 dollars) beyond its segment's spread (a Corvette
    Stingray at $66,000 is no base for a 3.1x ladder)."""
    seg = _SPREAD[_segment(vehicles, members)]
    if any(PERFORMANCE_GRADE.search(t) for t in names):
        if not base:
            return _SPREAD_PERFORMANCE
        return min(_SPREAD_PERFORMANCE, max(seg, _PERFORMANCE_TOP * (1.0 + _CARRY_RATE) ** (year - 2020) / base))
    return seg


def _carry_bases(plans: Dict[Tuple[int, str, str], Tuple]) -> None:
    """A line whose base price would come from the class formula takes instead the real base
    (reviewed or vPIC) of the same model's nearest model year, moved 3 % a year: the price stays
    continuous across years (2025-2026 have no vPIC sweep; a year's missing vPIC price is no new
    generation)."""
    real_years: Dict[Tuple[str, str], List[Tuple[int, float]]] = {}
    rated_years: Dict[Tuple[str, str], List[Tuple[int, float]]] = {}
    for (year, make, model), plan in plans.items():
        if plan[8] not in ("formula", "unrated"):
            real_years.setdefault((make, model), []).append((year, plan[6]))
        if plan[8] != "unrated":
            rated_years.setdefault((make, model), []).append((year, plan[6]))
    for key, plan in list(plans.items()):
        year, make, model = key
        if plan[8] not in ("formula", "unrated"):
            continue
        # a formula without any rated engine takes the nearest rated year's base, whatever its origin
        pool = real_years.get((make, model), []) or (rated_years.get((make, model), []) if plan[8] == "unrated" else [])
        near = sorted(((abs(y - year), -y, y, b) for y, b in pool
                       if abs(y - year) <= _CARRY_YEARS))
        if near:
            _, _, y, b = near[0]
            plans[key] = plan[:6] + (b * (1.0 + _CARRY_RATE) ** (year - y), plan[7], "carried")


# A vPIC base price under 60 % of its row's class formula price (derive.msrp_invoice: the body
# class's calibrated base price at its horsepower, the make's tier, the year) or over 2.5 times it
# is no price of that trim (a 2014 F-150 XL at $16,700: another market's or a decade-old figure).
_PLAUSIBLE = (0.6, 2.5)


def _plausible(price: float, v: Vehicle, model_id: int, hp: Optional[int]) -> bool:
    formula = derive.msrp_invoice(v, model_id, "gas", None, hp)[0]
    return _PLAUSIBLE[0] * formula <= price <= _PLAUSIBLE[1] * formula


def _prices(vehicles: List[Vehicle], idents: List[Tuple[str, str, str]], etypes: List[str],
            dtypes: List[Optional[str]], facts_of: List[Dict[str, object]], lineups: List[List[str]],
            model_ids: Dict[Tuple[str, ...], int],
            real_prices: Optional[Dict[Tuple[int, str], bool]] = None) -> Dict[Tuple[int, str], int]:
    """MSRP of every (vehicle, trim). A line with a reviewed anchor (dataset/msrp_lines.csv) runs
    from its base to its top price, the trims between stepped geometrically; any other line runs
    up from its base (vPIC's lowest gas price of the model and year, else the calibrated class
    formula of derive.msrp_invoice) by the make's step (_step_rate). vPIC's base price of a trim
    replaces the ladder's where it has one and agrees with the line (not below the line's base,
    a hybrid or diesel not below its gas twin). Powertrain, drive and engine-size premiums come on
    top; every price stays inside its make's published range (dataset/msrp_makes.csv)."""
    groups: Dict[Tuple[int, str, str], List[int]] = {}
    for i, v in enumerate(vehicles):
        groups.setdefault((v.year, idents[i][0], idents[i][1]), []).append(i)
    out: Dict[Tuple[int, str], int] = {}
    plans: Dict[Tuple[int, str, str], Tuple] = {}
    for (year, make, model), members in groups.items():
        anchor = prices.line(year, make, model)
        real: Dict[Tuple[int, str], int] = {}
        for i in members:
            for trim in lineups[i]:
                p = prices.trim_price(year, make, model, trim)
                if p is not None:  # a reviewed price of this very trim (msrp_trims.csv)
                    real[(i, trim)] = p
                    continue
                if facts_of[i].get("borrowed"):
                    continue  # a grade borrowed from another row (_borrow_grades) has no vPIC price here
                p = lineup.price_of(facts_of[i]["entries"], trim, etypes[i], model)  # type: ignore[arg-type]
                if (p and (anchor is None or p >= anchor.base_msrp) and prices.clamp(p, make, year) == p
                        and _plausible(p, vehicles[i], model_ids[(make, model)], facts_of[i]["hp"])):  # type: ignore[arg-type]
                    real[(i, trim)] = p
        gas = [i for i in members if etypes[i] in ("gas", "flex-fuel (FFV)")] or members
        names = ladder_order(make, model, year, (t for i in members for t in lineups[i]))
        step = {t: k for k, t in enumerate(names)}
        # one vPIC price on every grade of the line is the model's base price (2017 Golf: S to
        # SEL), not each grade's: it stays on the base grade only
        from_vpic = {(i, t): p for (i, t), p in real.items() if prices.trim_price(year, make, model, t) is None}
        if len({step[t] for (_, t) in from_vpic}) > 1 and len(set(from_vpic.values())) == 1:
            for (i, t) in from_vpic:
                if step[t] > 0:
                    del real[(i, t)]
        # the same within the model year: grades sharing one vPIC price (2018 Sonata 2.4 L: SEL, Sport,
        # Limited all $23,700; 2019: the 2.0 T Limited at the 2.4 L SEL's $24,150, one vPIC list
        # "SEL, Sport, Limited, Limited Turbo") carry the price of the lowest of them only
        shared: Dict[int, List[Tuple[int, str]]] = {}
        for (i, t), p in from_vpic.items():
            if (i, t) in real:
                shared.setdefault(p, []).append((i, t))
        for p, its in shared.items():
            low = min(step[t] for _, t in its)
            for i, t in its:
                if step[t] > low:
                    del real[(i, t)]
        pickup = any("pickup" in vehicles[i].vclass.lower() for i in members)
        origin = "reviewed"
        if anchor is not None:
            base = float(anchor.base_msrp)
            rate = (anchor.top_msrp / base) ** (1.0 / max(1, len(names) - 1)) - 1.0
        else:
            # the make's step, but the whole ladder inside its segment's spread (a line with
            # twenty vPIC grades does not climb twenty steps: 2022 Ram 1500 Laramie was $332,795)
            rate = _step_rate(make, pickup)
            origin = "vpic"
            lowest = [p for (i, t), p in real.items() if i in gas and step[t] == 0]
            # without a price of the base trim, the cheapest priced trim stepped down the ladder
            # (2020 Model 3: Standard Range from Standard Range Plus), else the class formula
            # (a performance grade is priced off the ladder: 2017 F-150 Raptor stepped down six trims
            # would make an $18,249 XL)
            priced = [p / (1.0 + rate) ** step[t] for (i, t), p in real.items()
                      if i in gas and not PERFORMANCE_GRADE.search(t)]
            formula = float(min(derive.msrp_invoice(vehicles[i], model_ids[(make, model)], "gas", None,
                                                    facts_of[i]["hp"])[0] for i in gas))  # type: ignore[arg-type]
            if lowest:
                base = float(min(lowest))
            elif priced:
                base = float(min(priced))
            if not (lowest or priced) or not _PLAUSIBLE[0] * formula <= base <= _PLAUSIBLE[1] * formula:
                # no vPIC price, or a base stepped down (or up) out of the class formula's band
                origin = "formula" if any(facts_of[i]["hp"] for i in gas) else "unrated"
                base = formula
        if anchor is None:
            spread = _max_spread(vehicles, members, names, make, base, year)
            rate = min(rate, spread ** (1.0 / max(1, len(names) - 1)) - 1.0)
        plans[(year, make, model)] = (members, anchor, real, gas, names, step, base, rate, origin)
    _carry_bases(plans)
    for (year, make, model), (members, anchor, real, gas, names, step, base, rate, origin) in plans.items():
        # the engine-size premium counts from the base trim's engine (2019 Sonata SE: 2.4 L; its
        # 1.6 T Eco is no cheaper base), else from the line's smallest engine
        # (gas rows first: a diesel carrying the base trim does not make the gas engine a premium one)
        carrying = ([i for i in members if i in gas and names and names[0] in lineups[i]]
                    or [i for i in members if names and names[0] in lineups[i]] or members)
        small = min((vehicles[i].displ or 0.0) for i in carrying)
        # the drive premium only where the line is also sold with two-wheel drive (a Subaru is AWD at its base price)
        awd = ("all wheel drive", "four wheel drive")
        drive_premium = 2000 if any(dtypes[i] not in awd for i in members) else 0
        is_real: Dict[Tuple[int, str], bool] = {}
        ceiling = (anchor.top_msrp * 1.3 if anchor is not None else
                   base * _max_spread(vehicles, members, names, make, base, year) * 1.25)
        for i in members:
            v = vehicles[i]
            extra = float(_PREMIUM.get(etypes[i], 0) + (drive_premium if dtypes[i] in awd else 0))
            extra += 2500 * max(0.0, (v.displ or 0.0) - small)
            # The line's prices only go up from its base trim: vPIC's prices kept where they rise
            # (one below an earlier one is not used), each ladder price held between the vPIC
            # prices around it.
            ordered = sorted(lineups[i], key=lambda t: step[t])
            kept: Dict[str, float] = {}
            for trim in ordered:
                found = real.get((i, trim))
                if found is not None and prices.trim_price(year, make, model, trim) is None and found > ceiling + extra:
                    found = None  # a vPIC price beyond the line's whole ladder is a typo or another market's
                if found is not None and all(found >= p for p in kept.values()):
                    kept[trim] = float(found)
            for k, trim in enumerate(ordered):
                price = kept.get(trim)
                if price is None:
                    price = base * (1.0 + rate) ** step[trim] + extra
                    before = [kept[t] for t in ordered[:k] if t in kept]
                    after = [kept[t] for t in ordered[k + 1:] if t in kept]
                    if before:
                        price = max(price, max(before))
                    if after:
                        price = min(price, min(after))
                price = prices.clamp(min(price, _MAX_MSRP), make, year)
                out[(i, trim)] = int(round(price / 5.0)) * 5
                is_real[(i, trim)] = trim in kept
        _top_above_base(members, etypes, lineups, names, rate, out, is_real, make, year)
        _hybrid_above_gas(members, etypes, dtypes, lineups, out, is_real, make, year, step)
        if anchor is None:  # a reviewed line (msrp_lines.csv) is priced as reviewed
            _base_cheapest(members, etypes, lineups, names, rate, out, is_real, make, model, year)
        if real_prices is not None:
            real_prices.update(is_real)
    return out


def _top_above_base(members: List[int], etypes: List[str], lineups: List[List[str]], names: List[str], rate: float,
                    out: Dict[Tuple[int, str], int], is_real: Dict[Tuple[int, str], bool], make: str,
                    year: int) -> None:
    """The line's top trim starts at or above its base trim (over its gas rows): a ladder price of
    the top trim below the base trim's starting price (the base carried on a dearer engine, the top
    on a cheaper one) goes up to that start stepped up the ladder. Real prices never move."""
    if len(names) < 2:
        return
    gas = [i for i in members if etypes[i] in ("gas", "flex-fuel (FFV)")]
    base_start = min((out[(i, names[0])] for i in gas if names[0] in lineups[i]), default=None)
    if base_start is None:
        return
    want = prices.clamp(base_start * (1.0 + rate) ** (len(names) - 1), make, year)
    for i in gas:
        key = (i, names[-1])
        if names[-1] in lineups[i] and out[key] < base_start and not is_real.get(key):
            out[key] = int(round(want / 5.0)) * 5


def _base_cheapest(members: List[int], etypes: List[str], lineups: List[List[str]], names: List[str], rate: float,
                   out: Dict[Tuple[int, str], int], is_real: Dict[Tuple[int, str], bool], make: str, model: str,
                   year: int) -> None:
    """The line's base grade (the first of its ladder) is its cheapest: where a grade ranked above
    it on the ladder starts below it (vPIC's prices out of the ladder's order: 2017 Corolla LE Eco
    $19,335, L $19,400), the base grade's cheapest row starts one ladder step below that grade's
    price. A reviewed price (msrp_trims.csv) does not move, and grades the ladder ranks alike (BMW's
    "430i" and "430i Gran Coupe") keep their prices."""
    if len(names) < 2 or prices.trim_price(year, make, model, names[0]) is not None:
        return
    base_rank = lineup.rank(names[0], make)
    gas = [i for i in members if etypes[i] in ("gas", "flex-fuel (FFV)")] or members
    carrying = [i for i in gas if names[0] in lineups[i]]
    others = [out[(i, t)] for i in members for t in lineups[i]
              if t != names[0] and lineup.rank(t, make) > base_rank]
    if not carrying or not others:
        return
    j = min(carrying, key=lambda i: out[(i, names[0])])
    low = min(others)
    if low < out[(j, names[0])]:
        want = prices.clamp(low / (1.0 + rate), make, year)
        if want < out[(j, names[0])]:
            out[(j, names[0])] = int(round(want / 5.0)) * 5
            is_real[(j, names[0])] = False


def _bare(trim: str) -> str:
    return re.sub(r"(?i)\s*\b(hybrid|plug-in|energi|diesel|tdi)\b\s*", " ", trim).strip()


def _hybrid_above_gas(members: List[int], etypes: List[str], dtypes: List[Optional[str]],
                      lineups: List[List[str]], out: Dict[Tuple[int, str], int],
                      is_real: Dict[Tuple[int, str], bool], make: str, year: int,
                      step: Dict[str, int]) -> None:
    """A hybrid or diesel trim costs more than the same trim's gas version (same drive): where it
    does not, it goes up to the gas price plus the powertrain premium (a vPIC price of it is then
    not used); its dearer trims follow so that none is below a cheaper one. Gas prices never move."""
    gas: Dict[Tuple[str, Optional[str]], List[Tuple[int, str]]] = {}
    for i in members:
        if etypes[i] == "gas":
            for t in lineups[i]:
                gas.setdefault((t, dtypes[i]), []).append((i, t))
    rng = prices.make_range(make, year)
    for i in members:
        if etypes[i] not in ("hybrid", "diesel"):
            continue
        floor = 0
        for t in sorted(lineups[i], key=lambda x: step[x]):
            twins = gas.get((_bare(t), dtypes[i]))
            want = max(out[k] for k in twins) + _PREMIUM[etypes[i]] if twins else 0
            want = max(want, floor)
            if rng is not None:
                want = min(want, rng[1])
            if out[(i, t)] < want or (twins and out[(i, t)] <= max(out[k] for k in twins) and out[(i, t)] < want):
                out[(i, t)] = int(want)
                is_real[(i, t)] = False
            floor = max(floor, out[(i, t)])


def build_rows(vehicles: List[Vehicle], tick=None, layouts: Optional[EngineLayouts] = None,
               names: Optional[naming.VpicNames] = None, sweep: Optional[Sweep] = None,
               testcars: Optional[TestCars] = None) -> Tables:
    """All table rows from the EPA vehicles (any order in, sorted by id out). `layouts` (from
    the vPIC tables) settles engine layouts where vPIC's VIN patterns say it clearly; `names`
    (vPIC's models, trims and series) names models and trims as the service does."""
    allowed_layouts = set(schema.record("engine").field("cylinders").enum)
    vehicles = sorted(vehicles, key=lambda v: v.id)
    seen = set()
    for v in vehicles:
        if v.id in seen:
            raise SourceError(f"vehicles.csv: EPA id {v.id} appears twice")
        seen.add(v.id)
    makes = canonical_makes(vehicles)
    idents = []
    named: List[naming.Name] = []
    # EPA's "New" marks a new generation sold beside the old one (2018 "New Wrangler" = JL)
    new_generation = {(makes[v.make], v.year, naming.norm(v.base_model)) for v in vehicles
                      if v.model.upper().startswith("NEW ")}
    for v in vehicles:
        make = makes[v.make]
        old_generation = ((make, v.year, naming.norm(v.base_model)) in new_generation
                          and not v.model.upper().startswith("NEW "))
        name = naming.name_vehicle(make, v.model, v.base_model, v.year, names, old_generation)
        named.append(name)
        idents.append((make, name.model, name.submodel))
    make_ids = stable_ids(((m,) for m, _, _ in idents), *MAKE_IDS)
    model_ids = stable_ids(((m, b) for m, b, _ in idents), *MODEL_IDS)
    submodel_ids = stable_ids(((str(v.year), m, b, s) for v, (m, b, s) in zip(vehicles, idents)), *SUBMODEL_IDS)

    t = Tables(rows={k: [] for k in ("makes", "models", "submodels", "trims", "bodies", "engines", "mileages")})
    models: Dict[int, dict] = {}
    submodels: Dict[int, dict] = {}
    # first pass: powertrain and public facts of every vehicle, then the trim lineups
    etypes = [mapping.engine_type(v.atv_type, v.fuel_type, v.eng_dscr) for v in vehicles]
    dtypes = [mapping.drive_type(v.drive, v.vclass, v.model) for v in vehicles]
    # engine sizes a model year sells with and without forced induction (see _split_by_boost)
    aspirations: Dict[Tuple[object, ...], set] = {}
    for v, et, (mk, mdl, _) in zip(vehicles, etypes, idents):
        if v.displ and _KIND.get(et, "") == "":
            aspirations.setdefault((mk, mdl, *_engine_key(v)), set()).add(_boosted(v))
    facts_of = [_facts(v, et, dt, mdl, mk, sweep, testcars, len(aspirations.get((mk, mdl, *_engine_key(v)), ())) > 1)
                for v, et, dt, (mk, mdl, _) in zip(vehicles, etypes, dtypes, idents)]
    _carry_horsepower(vehicles, idents, etypes, facts_of)
    lineups = _lineups(vehicles, idents, named, etypes, dtypes, facts_of)
    real_prices: Dict[Tuple[int, str], bool] = {}
    prices = _prices(vehicles, idents, etypes, dtypes, facts_of, lineups, model_ids, real_prices)
    described: set = set()
    for n, (v, (make, model, submodel), name) in enumerate(zip(vehicles, idents, named), start=1):
        make_id = make_ids[(make,)]
        model_id = model_ids[(make, model)]
        submodel_id = submodel_ids[(str(v.year), make, model, submodel)]
        try:
            created = epa_timestamp(v.created_on)
            modified = epa_timestamp(v.modified_on)
        except ValueError as exc:
            raise SourceError(f"vehicles.csv id {v.id}: {exc}") from None
        if modified < created:
            modified = created

        etype, dtype, facts = etypes[n - 1], dtypes[n - 1], facts_of[n - 1]
        ftype = mapping.fuel_type(v.fuel_type, v.fuel_type1)
        trans, trans_code = mapping.transmission(v.trany, etype)
        layout = mapping.cylinders(v.cylinders, make, v.model, v.year, v.displ, etype, v.eng_dscr)
        if layouts is not None and v.cylinders and mapping.prefer_vpic(layout, make, etype):
            found = layouts.layout(make, v.model, v.base_model, v.year, v.cylinders)
            if found in allowed_layouts:
                if found != layout:
                    t.layouts_from_vpic += 1
                layout = found
        body, _ = mapping.body_type(v.vclass, v.model, make, v.pv2, v.pv4, v.hpv)
        vpic_doors = facts["doors"]
        ndoors = vpic_doors if isinstance(vpic_doors, int) else mapping.doors(body, v.model, v.pv2, v.pv4)
        doors_origin = provenance.REAL if isinstance(vpic_doors, int) else provenance.DERIVED
        if v.trany and trans is None:
            t.unmapped[("transmission", v.trany)] += 1
        if v.drive and dtype is None:
            t.unmapped[("drive_type", v.drive)] += 1
        if ftype is None:
            t.unmapped[("fuel_type", v.fuel_type)] += 1

        series = name.series
        engine_words = _engine_words(v, etype, layout, trans_code)
        body_words = mapping.description_body(body, ndoors, dtype)
        figures = derive.engine_figures(v, layout, etype)
        figures.update({"horsepower_hp": facts["hp"], "horsepower_rpm": None, "torque_ft_lbs": None,
                        "torque_rpm": None})
        body_row = derive.body_figures(v, body, ndoors, facts)
        mileage = _mileage(v, model_id, etype)
        k = 0
        for trim in lineups[n - 1]:
            description = naming.description(trim, body_words, engine_words)
            key = (v.year, make.casefold(), model.casefold(), trim.casefold(), description.casefold())
            if key in described:
                continue  # the same trim and description from another EPA row: one row only
            described.add(key)
            tid = v.id if k == 0 else EXTRA_TRIM_IDS + v.id * 16 + k
            k += 1
            msrp = prices[(n - 1, trim)]
            invoice = int(round(msrp * derive.Seeded("trim-price", tid).uniform(0.905, 0.945) / 5.0)) * 5
            ident = {
                "make_id": make_id, "model_id": model_id, "submodel_id": submodel_id, "trim_id": tid,
                "year": v.year, "make": make, "model": model, "series": series, "submodel": submodel, "trim": trim,
                "trim_description": description, "created": created, "modified": modified,
            }
            t.rows["trims"].append({
                "id": tid, "make_id": make_id, "model_id": model_id, "submodel_id": submodel_id, "year": v.year,
                "make": make, "model": model, "series": series, "submodel": submodel, "trim": trim,
                "description": description, "msrp": msrp, "invoice": invoice, "created": created,
                "modified": modified,
            })
            t.rows["bodies"].append({"id": tid, **ident, "type": body, **body_row})
            t.rows["engines"].append({
                "id": tid, **ident, "engine_type": etype, "fuel_type": ftype, "cylinders": layout,
                "size": v.displ if etype not in ("electric", "electric (fuel cell)") else None,
                **figures, "drive_type": dtype, "transmission": trans,
            })
            t.rows["mileages"].append({"id": tid, **ident, **mileage})
            t.origins.append((tid, provenance.REAL if real_prices.get((n - 1, trim)) else provenance.SYNTHETIC,
                              facts["curb_origin"] or provenance.NONE, doors_origin,
                              (provenance.NONE if not facts["hp"] else provenance.DERIVED
                               if facts["hp_origin"] == _CARRIED_HP else provenance.REAL),
                              provenance.REAL if facts["seats"] else provenance.NONE,
                              provenance.REAL if facts["wheelbase"] else provenance.NONE))
            # colours are many (about 11 a trim): kept compact, expanded into dicts while inserting
            t.colours["exterior_colors"].append(
                (tid * 100, ident, derive.colours(model_id, v.year, "exterior", *EXTERIOR_COLOURS)))
            t.colours["interior_colors"].append(
                (tid * 100 + INTERIOR_ID_OFFSET, ident,
                 derive.colours(model_id, v.year, "interior", *INTERIOR_COLOURS)))
        if k == 0:
            continue  # every trim of this EPA row already has a row
        m = models.get(model_id)
        if m is None:
            models[model_id] = {"id": model_id, "make_id": make_id, "name": model, "make": make,
                                "created": created, "modified": modified}
        else:
            m["created"] = min(m["created"], created)
            m["modified"] = max(m["modified"], modified)
        s = submodels.get(submodel_id)
        if s is None:
            submodels[submodel_id] = {"id": submodel_id, "oem_make_model_id": model_id, "year": v.year,
                                      "make": make, "model": model, "submodel": submodel, "make_id": make_id,
                                      "created": created, "modified": modified}
        else:
            s["created"] = min(s["created"], created)
            s["modified"] = max(s["modified"], modified)
        if tick and n % 2000 == 0:
            tick(n)
    if tick:
        tick(len(vehicles))
    t.vpic_makes, t.vpic_models = _vpic_maps(names, make_ids, model_ids, idents, named)
    for table in ("trims", "bodies", "engines", "mileages"):
        t.rows[table].sort(key=lambda r: r["id"])
    t.origins.sort(key=lambda r: r[0])  # type: ignore[arg-type,return-value]
    for table in t.colours:
        t.colours[table].sort(key=lambda c: c[0])
    t.rows["makes"] = [{"id": i, "name": k[0]} for k, i in sorted(make_ids.items(), key=lambda kv: kv[1])]
    t.rows["models"] = [models[i] for i in sorted(models)]
    t.rows["submodels"] = [submodels[i] for i in sorted(submodels)]
    return t


def _vpic_maps(names: Optional[naming.VpicNames], make_ids: Dict[Tuple[str, ...], int],
               model_ids: Dict[Tuple[str, ...], int], idents: List[Tuple[str, str, str]],
               named: List[naming.Name]) -> Tuple[Dict[int, int], Dict[int, int]]:
    """vPIC Make.Id -> makes.id (names equal as naming.norm_make) and vPIC Model.Id -> models.id:
    the vPIC models the naming matched (a vPIC model matched by several catalogue models goes to
    the one with the most EPA rows), then every other vPIC model of the make whose name equals a
    catalogue model's (naming.norm)."""
    if names is None:
        return {}, {}
    vmakes: Dict[int, int] = {}
    for (make,), make_id in sorted(make_ids.items()):
        for vid in naming.make_ids(names, make):
            vmakes.setdefault(vid, make_id)
    votes: Dict[int, Counter] = {}
    for (make, model, _), name in zip(idents, named):
        for vid in name.vpic_model_ids:
            votes.setdefault(vid, Counter())[model_ids[(make, model)]] += 1
    vmodels = {vid: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for vid, c in votes.items()}
    for (make, model), model_id in sorted(model_ids.items()):
        for vid in naming.model_ids(names, make, model):
            vmodels.setdefault(vid, model_id)
    return vmakes, vmodels


def _mileage(v: Vehicle, model_id: int, etype: str) -> dict:
    tank = derive.fuel_tank(v, model_id, etype)
    out = {
        "fuel_tank_capacity": tank, "combined_mpg": _pos(v.comb08), "epa_city_mpg": _pos(v.city08),
        "epa_highway_mpg": _pos(v.highway08), "range_city": None, "range_highway": None,
        "battery_capacity_electric": derive.battery_capacity(v, etype),
        "epa_time_to_charge_hr_240v_electric": round(v.charge240, 2) if v.charge240 > 0 else None,
        "epa_kwh_100_mi_electric": None, "range_electric": None, "epa_highway_mpg_electric": None,
        "epa_city_mpg_electric": None, "epa_combined_mpg_electric": None,
    }
    if etype == "electric":
        out.update({
            "combined_mpg": None, "epa_city_mpg": None, "epa_highway_mpg": None,
            "epa_combined_mpg_electric": _pos(v.comb08), "epa_city_mpg_electric": _pos(v.city08),
            "epa_highway_mpg_electric": _pos(v.highway08), "epa_kwh_100_mi_electric": _pos(v.comb_e),
            "range_electric": _pos(v.range), "range_city": _pos(v.range_city) or _pos(v.range),
            "range_highway": _pos(v.range_hwy) or _pos(v.range),
        })
        return out
    if etype == "plug-in hybrid":
        out.update({
            "epa_combined_mpg_electric": _pos(v.comb_a08), "epa_city_mpg_electric": _pos(v.city_a08),
            "epa_highway_mpg_electric": _pos(v.highway_a08), "epa_kwh_100_mi_electric": _pos(v.comb_e),
            "range_electric": _pos(v.range_a),
        })
    if tank:
        extra = v.range_a if etype == "plug-in hybrid" else 0.0
        out["range_city"] = _pos(tank * v.city08 + extra) if v.city08 > 0 else None
        out["range_highway"] = _pos(tank * v.highway08 + extra) if v.highway08 > 0 else None
    if etype == "electric (fuel cell)":
        # EPA's figures of a fuel-cell car are miles per kilogram of hydrogen, not mpg
        out.update({"combined_mpg": None, "epa_city_mpg": None, "epa_highway_mpg": None, "fuel_tank_capacity": None,
                    "range_city": v.range or None, "range_highway": v.range or None})
    return out
