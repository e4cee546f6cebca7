"""EPA vehicles -> rows of the storage tables (as dicts keyed by column name)."""
from __future__ import annotations

import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple

from .. import schema
from . import derive, mapping, naming
from .epa import SourceError, Vehicle
from .vpic import EngineLayouts
from .timefmt import epa_timestamp

# Id ranges of the name-derived ids (all fit the schema's 32-bit int columns).
MAKE_IDS = (1, 100_000)
MODEL_IDS = (100_000, 10_000_000)
SUBMODEL_IDS = (10_000_000, 2_000_000_000)
EXTERIOR_COLOURS = (6, 10)
INTERIOR_COLOURS = (2, 4)
INTERIOR_ID_OFFSET = 50  # colour ids: trim_id*100 + k (exterior), trim_id*100 + 50 + k (interior)


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


def build_rows(vehicles: List[Vehicle], tick=None, layouts: Optional[EngineLayouts] = None,
               names: Optional[naming.VpicNames] = None) -> Tables:
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
    for v in vehicles:
        make = makes[v.make]
        name = naming.name_vehicle(make, v.model, v.base_model, v.year, names)
        named.append(name)
        idents.append((make, name.model, name.submodel))
    make_ids = stable_ids(((m,) for m, _, _ in idents), *MAKE_IDS)
    model_ids = stable_ids(((m, b) for m, b, _ in idents), *MODEL_IDS)
    submodel_ids = stable_ids(((str(v.year), m, b, s) for v, (m, b, s) in zip(vehicles, idents)), *SUBMODEL_IDS)

    t = Tables(rows={k: [] for k in ("makes", "models", "submodels", "trims", "bodies", "engines", "mileages")})
    models: Dict[int, dict] = {}
    submodels: Dict[int, dict] = {}
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

        etype = mapping.engine_type(v.atv_type, v.fuel_type, v.eng_dscr)
        ftype = mapping.fuel_type(v.fuel_type, v.fuel_type1)
        dtype = mapping.drive_type(v.drive, v.vclass, v.model)
        trans, trans_code = mapping.transmission(v.trany, etype)
        layout = mapping.cylinders(v.cylinders, make, v.model, v.year, v.displ, etype, v.eng_dscr)
        if layouts is not None and v.cylinders and mapping.prefer_vpic(layout, make, etype):
            found = layouts.layout(make, v.model, v.base_model, v.year, v.cylinders)
            if found in allowed_layouts:
                if found != layout:
                    t.layouts_from_vpic += 1
                layout = found
        body, _ = mapping.body_type(v.vclass, v.model, make, v.pv2, v.pv4, v.hpv)
        ndoors = mapping.doors(body, v.model, v.pv2, v.pv4)
        if v.trany and trans is None:
            t.unmapped[("transmission", v.trany)] += 1
        if v.drive and dtype is None:
            t.unmapped[("drive_type", v.drive)] += 1
        if ftype is None:
            t.unmapped[("fuel_type", v.fuel_type)] += 1

        trim, series = name.trim, name.series
        description = naming.description(trim, mapping.description_body(body, ndoors, dtype),
                                         _engine_words(v, etype, layout, trans_code))
        figures = derive.engine_figures(v, layout, etype)
        msrp, invoice = derive.msrp_invoice(v, model_id, etype, dtype, figures["horsepower_hp"])  # type: ignore[arg-type]
        ident = {
            "make_id": make_id, "model_id": model_id, "submodel_id": submodel_id, "trim_id": v.id,
            "year": v.year, "make": make, "model": model, "series": series, "submodel": submodel, "trim": trim,
            "trim_description": description, "created": created, "modified": modified,
        }
        t.rows["trims"].append({
            "id": v.id, "make_id": make_id, "model_id": model_id, "submodel_id": submodel_id, "year": v.year,
            "make": make, "model": model, "series": series, "submodel": submodel, "trim": trim,
            "description": description, "msrp": msrp, "invoice": invoice, "created": created, "modified": modified,
        })
        t.rows["bodies"].append({"id": v.id, **ident, "type": body,
                                 **derive.body_figures(v, model_id, body, ndoors, etype, dtype)})
        t.rows["engines"].append({
            "id": v.id, **ident, "engine_type": etype, "fuel_type": ftype, "cylinders": layout,
            "size": v.displ if etype not in ("electric", "electric (fuel cell)") else None,
            **figures, "drive_type": dtype, "transmission": trans,
        })
        t.rows["mileages"].append({"id": v.id, **ident, **_mileage(v, model_id, etype)})
        # colours are many (about 11 a trim): kept compact, expanded into dicts while inserting
        t.colours["exterior_colors"].append(
            (v.id * 100, ident, derive.colours(model_id, v.year, "exterior", *EXTERIOR_COLOURS)))
        t.colours["interior_colors"].append(
            (v.id * 100 + INTERIOR_ID_OFFSET, ident, derive.colours(model_id, v.year, "interior", *INTERIOR_COLOURS)))

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
    elif etype == "electric (fuel cell)" and v.range > 0:
        out["range_city"] = out["range_highway"] = v.range
    return out
