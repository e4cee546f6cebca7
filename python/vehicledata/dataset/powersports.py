"""Powersports tables (street motorcycles) from vPIC's motorcycle makes and models.

A model is one named by a VIN schema (Pattern element 28, Model) of a WMI whose vehicle type is
Motorcycle; its make comes from vPIC's Make_Model; its model years are the schema's WMI year
ranges, an open range ending at the newest year any WMI range starts in. Ids are vPIC's Make.Id and
Model.Id; a model year's id is its rank by (model id, year). vPIC's Off Road Vehicle type (ATVs,
dirt bikes) is left out: the service's `type` names street motorcycles only.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Dict, List

MOTORCYCLE = 1    # vPIC VehicleType.Id
MODEL_ELEMENT = 28  # vPIC Element.Id of Model
TABLES = ("powersports_makes", "powersports_models", "powersports_model_years")

_MODEL_YEARS_SQL = """
WITH schemas AS (
    SELECT DISTINCT ws.VinSchemaId AS sid, ws.YearFrom AS y0, ws.YearTo AS y1
    FROM Wmi w JOIN Wmi_VinSchema ws ON ws.WmiId = w.Id
    WHERE w.VehicleTypeId = ?),
models AS (
    SELECT DISTINCT CAST(p.AttributeId AS INTEGER) AS model_id, s.y0, s.y1
    FROM schemas s JOIN Pattern p ON p.VinSchemaId = s.sid
    WHERE p.ElementId = ?)
SELECT mk.Id, TRIM(mk.Name), md.Id, TRIM(md.Name), m.y0, m.y1
FROM models m
JOIN Model md ON md.Id = m.model_id
JOIN Make_Model mm ON mm.ModelId = m.model_id
JOIN Make mk ON mk.Id = mm.MakeId
"""


def build_rows(vpic_db: Path) -> Dict[str, List[dict]]:
    """Rows of powersports_makes, powersports_models and powersports_model_years."""
    con = sqlite3.connect(f"file:{vpic_db}?mode=ro", uri=True)
    try:
        newest = con.execute("SELECT MAX(YearFrom) FROM Wmi_VinSchema").fetchone()[0]
        found = con.execute(_MODEL_YEARS_SQL, (MOTORCYCLE, MODEL_ELEMENT)).fetchall()
    finally:
        con.close()
    makes: Dict[int, str] = {}
    models: Dict[int, dict] = {}
    years: Dict[int, set] = {}
    for make_id, make, model_id, model, y0, y1 in found:
        if not make or not model:
            continue
        makes[make_id] = make
        # Make_Model gives one make per model; the lowest make id settles a model listed twice.
        if model_id not in models or make_id < models[model_id]["make_id"]:
            models[model_id] = {"id": model_id, "make_id": make_id, "name": model, "make": make}
        last = newest if y1 is None else min(y1, newest)
        years.setdefault(model_id, set()).update(range(y0, last + 1))
    model_years: List[dict] = []
    for model_id in sorted(models):
        m = models[model_id]
        for year in sorted(years[model_id]):
            model_years.append({"id": len(model_years) + 1, "year": year, "make_id": m["make_id"],
                                "make": m["make"], "model_id": model_id, "model": m["name"]})
    return {
        "powersports_makes": [{"id": i, "name": n} for i, n in sorted(makes.items())],
        "powersports_models": [models[i] for i in sorted(models)],
        "powersports_model_years": model_years,
    }
