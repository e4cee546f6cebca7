"""The generator of ``vehicledata/_resources.py``: typed records, pagers and search resources from
the schema table, for mypy, pyright and IDE completion (``tools/gen_docs.py`` writes it with
docs/resources.md; ``tests/test_resources_generated.py`` fails when the checked-in file is stale).

The generated classes exist for type checkers only (``if TYPE_CHECKING``): at run time a record is a
:class:`vehicledata.pager.Record`, whose ``dir()`` lists its fields for Jupyter's completion.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from . import schema
from ._values import filter_types

_PY = {"int": "int", "int64": "int", "decimal": "float", "float": "float", "string": "str",
       "timestamp": "datetime", "date": "date", "bool": "bool", "nested": "List[Any]"}

# The search resources with a typed property on Client.
RESOURCES: Tuple[str, ...] = ("makes", "models", "submodels", "trims", "bodies", "engines", "mileages",
                              "exterior_colors", "interior_colors", "obd_codes")


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def _record_class(record: str) -> str:
    return _camel(record) + "Record"


def _field_type(f: schema.FieldSpec) -> str:
    t = _PY.get(f.type, "Any")
    if f.type == "nested" and f.nested:
        t = f"List[{_record_class(f.nested)}]" if f.nested_array else _record_class(f.nested)
    return f"Optional[{t}]" if f.nullable and t != "Any" else t


def _records_needed() -> List[str]:
    """The records the typed accessors return, nested ones included, in schema order."""
    want: List[str] = []

    def add(name: str) -> None:
        if name and name not in want:
            want.append(name)
            for f in schema.record(name).record_fields():
                if f.type == "nested" and f.nested:
                    add(f.nested)

    for res in RESOURCES:
        add(schema.endpoint_for(schema.Kind.SEARCH, res).record)
        try:
            add(schema.endpoint_for(schema.Kind.DETAIL, res).record)
        except KeyError:
            pass
    order = list(schema.records())
    return sorted(want, key=order.index)


def _vehicle_fields() -> List[Tuple[str, str]]:
    """(column, type) of a row of ``api.vehicles`` (``vehicles.columns()``): a part's columns are
    Optional (a trim without that part has nulls there)."""
    from .vehicles import columns

    out: List[Tuple[str, str]] = []
    for col, (record, name) in columns().items():
        t = _field_type(next(f for f in schema.record(record).record_fields() if f.name == name))
        if record != "trim" and t != "Any" and not t.startswith("Optional["):
            t = f"Optional[{t}]"
        out.append((col, t))
    return out


def _filter_types(ep: schema.Endpoint) -> Dict[str, str]:
    return filter_types(ep)  # the types the run-time check enforces too (vehicledata._values)


def _search_lines(keywords: List[str], ep: schema.Endpoint, pager: str) -> List[str]:
    """A typed ``search()`` (its fixed ``keywords`` lines, then one keyword per filter of ``ep``)
    returning ``pager``, and its ``__call__``: the stub lines of a search resource's class body."""
    lines = ["        def search(  # type: ignore[override]",
             "            self, *conditions: Any, where: Any = ..., sort: Optional[str] = ...,"]
    lines += [f"            {k}" for k in keywords]
    lines += [f"            {fname}: Optional[{ftype}] = ...," for fname, ftype in _filter_types(ep).items()]
    call = f"        def __call__(self, *conditions: Any, **kwargs: Any) -> {pager}: ...  # type: ignore[override]"
    return lines + [f"        ) -> {pager}: ...", "", call]


def python_source() -> str:
    """The text of ``vehicledata/_resources.py``."""
    lines = [
        '"""Typed records, pagers and search resources for type checkers and IDEs.',
        "",
        "Generated from the schema table (``cpp/core/schema.cpp``) by ``vehicledata._typegen``",
        "(``tools/gen_docs.py``); do not edit by hand.  A test fails when this file and the schema disagree.",
        "At run time every record is a ``vehicledata.pager.Record`` and these names are that class.",
        '"""',
        "from __future__ import annotations",
        "",
        "from datetime import date, datetime",
        "from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, Optional, Union",
        "",
        "from .pager import Pager, Record",
        "",
        "if TYPE_CHECKING:  # pragma: no cover",
        "    import pandas as pd",
        "",
        "    from .client import SearchResource",
        "    from .vehicles import VehiclePager",
        "    from .vehicles import VehiclesResource as _VehiclesResource",
        "",
        "    class RecordView(Mapping[str, Any]):",
        '        """What every record has besides its fields (no other attribute: a typo is an error)."""',
        "",
        "        def to_dict(self, json_safe: bool = ...) -> Dict[str, Any]: ...",
        "        def frame(self, name: str) -> pd.DataFrame: ...",
        "        @property",
        "        def synthetic_fields(self) -> List[str]: ...",
        "",
    ]
    records = _records_needed()
    for name in records:
        rec = schema.record(name)
        lines.append(f"    class {_record_class(name)}(RecordView):")
        lines.append(f'        """A ``{name}`` record."""')
        lines.append("")
        for f in rec.record_fields():
            lines.append(f"        {f.name}: {_field_type(f)}")
        lines.append("")
    lines += [
        "    class VehicleRecord(RecordView):",
        '        """A row of ``api.vehicles`` (``get()``, iteration): the trim\'s fields, then its body\'s, engine\'s',
        '        and mileage\'s (``vehicledata.vehicles.columns()``; None where the trim has no such part)."""',
        "",
    ]
    lines += [f"        {col}: {t}" for col, t in _vehicle_fields()]
    lines.append("")
    for res in RESOURCES:
        ep = schema.endpoint_for(schema.Kind.SEARCH, res)
        rc = _record_class(ep.record)
        camel = _camel(res)
        lines += [
            f"    class {camel}Pager(Pager):",
            f'        """The pager of ``api.{res}.search()``: its records are {rc}."""',
            "",
            f"        def __iter__(self) -> Iterator[{rc}]: ...  # type: ignore[override]",
            f"        def first(self, n: int) -> List[{rc}]: ...  # type: ignore[override]",
            "",
            f"    class {camel}Resource(SearchResource):",
            f'        """``api.{res}``: search {ep.path}."""',
            "",
        ]
        lines += _search_lines(["direction: Optional[str] = ..., limit: Optional[int] = ..., start_page: int = ...,",
                                "verbose: Optional[bool] = ..., legacy: bool = ..., parallel: bool = ...,",
                                "progress: Optional[bool] = ..., start_token: Optional[str] = ...,"],
                               ep, f"{camel}Pager")
        try:
            detail = schema.endpoint_for(schema.Kind.DETAIL, res)
            lines += [
                f"        def get(self, key: Union[int, str], *, verbose: Optional[bool] = ..., legacy: bool = ...) "
                f"-> {_record_class(detail.record)}: ...  # type: ignore[override]",
            ]
        except KeyError:
            pass
        lines.append("")
    trims = schema.endpoint_for(schema.Kind.SEARCH, "trims")
    lines += [
        "    class VehiclesResource(_VehiclesResource):",
        '        """``api.vehicles``: its search takes the trims search\'s keywords (``vehicledata.vehicles``)."""',
        "",
    ]
    vehicle_keywords = "direction: Optional[str] = ..., limit: Optional[int] = ..., progress: Optional[bool] = ...,"
    lines += _search_lines([vehicle_keywords], trims, "VehiclePager")
    lines.append("")
    lines.append("else:")
    for name in records:
        lines.append(f"    {_record_class(name)} = Record")
    lines.append("    VehicleRecord = Record")
    for res in RESOURCES:
        lines.append(f"    {_camel(res)}Pager = Pager")
    lines.append("")
    exported = ([_record_class(n) for n in records] + ["VehicleRecord"] + [f"{_camel(r)}Pager" for r in RESOURCES])
    lines.append("__all__ = [" + ", ".join(f'"{n}"' for n in exported) + "]")
    return "\n".join(lines) + "\n"


__all__ = ["python_source", "RESOURCES"]
