"""The schema table, read from the C++ core (the single source of truth).

Examples:
    >>> from vehicledata import schema
    >>> schema.record("engine").field_names()[:3]
    ['id', 'make_id', 'model_id']
    >>> schema.endpoint_for("search", "trims").json_field_names()[:2]
    ['year', 'make']
    >>> schema.endpoint_for("search", "trims").deprecates == schema.endpoint_for("search", "trims", deprecated=True).path
    True
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from typing import Dict, List, Optional, Tuple, Union

from . import _core

DEFAULT_LIMIT: int = _core.schema.DEFAULT_LIMIT
MAX_LIMIT: int = _core.schema.MAX_LIMIT
DEMO_YEARS: Tuple[int, int] = (_core.schema.DEMO_FIRST_YEAR, _core.schema.DEMO_LAST_YEAR)


class Shape(str, Enum):
    """How an endpoint's answer is laid out, which is how the C++ core decodes it.  The one home of
    the shape names: the package names a shape by this enum, never by its text
    (``tests/test_shape_literals.py``)."""

    ENVELOPE = "envelope"  #: a page of a search: ``{"collection": {...}, "data": [records]}``
    ARRAY = "array"        #: a JSON array of records (years, attribute values, account usage)
    OBJECT = "object"      #: one record (a detail, a VIN, a licence plate)

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, format_spec: str) -> str:  # (f"{shape}" is the name, on every Python version)
        return format(str(self.value), format_spec)


class Kind(str, Enum):
    """What an endpoint does, as the client's accessors name it (``endpoint_for(Kind.DETAIL, "trims")``)."""

    SEARCH = "search"
    DETAIL = "detail"
    YEARS = "years"
    ATTRIBUTES = "attributes"
    VIN = "vin"
    PLATE = "plate"
    ACCOUNT_REQUESTS = "account_requests"
    ACCOUNT_TODAY = "account_today"
    FEED_LAST_UPDATED = "feed_last_updated"
    FEED_DOWNLOAD = "feed_download"
    LOGIN = "login"

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, format_spec: str) -> str:
        return format(str(self.value), format_spec)


@dataclass(frozen=True)
class FieldSpec:
    """One field of a record."""

    name: str
    type: str  # int, int64, decimal, float, string, timestamp, date, bool, nested
    nullable: bool
    max_length: int
    enum: Tuple[str, ...]
    column: str
    scale: int
    in_record: bool
    nested: str
    nested_array: bool
    sqlite_type: str
    nested_key: str = ""
    verbose_only: bool = False  # in the record only with verbose=yes (legacy endpoints)


@dataclass(frozen=True)
class RecordSpec:
    """A record type: its storage table and ordered fields."""

    name: str
    table: str
    primary: bool
    fields: Tuple[FieldSpec, ...]

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"record {self.name!r} has no field {name!r}")

    def record_fields(self, verbose: bool = False) -> Tuple[FieldSpec, ...]:
        """Fields that appear in the JSON record, in order (with verbose=yes: the verbose ones too)."""
        return tuple(f for f in self.fields if f.in_record or (verbose and f.verbose_only))

    def field_names(self, verbose: bool = False) -> List[str]:
        return [f.name for f in self.record_fields(verbose)]


@dataclass(frozen=True)
class JsonField:
    """A field addressable in the ``json`` parameter (dotted names reach a related table)."""

    name: str
    type: str
    enum: Tuple[str, ...]
    related: str
    related_key: str = ""
    column: str = ""


@dataclass(frozen=True)
class Filter:
    """A query-string filter: exact (``value``) or SQL LIKE (``like``)."""

    name: str
    match: str
    column: str
    predicate: bool
    one_of: Tuple[str, ...] = ()  # non-empty: required, one of these values (powersports `type`)


@dataclass(frozen=True)
class Endpoint:
    """A path of the service and what it accepts."""

    path: str
    category: str
    record: str
    table: str
    shape: Shape
    deprecated: bool
    paged: bool
    verbose: bool
    filters: Tuple[Tuple[str, str], ...]  # (name, "value" | "like")
    kind: Kind
    json_fields: Tuple[JsonField, ...] = field(default_factory=tuple)
    sort_keys: Tuple[str, ...] = field(default_factory=tuple)
    filter_specs: Tuple[Filter, ...] = field(default_factory=tuple)
    sort_columns: Dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    default_sort: str = ""      # SQL ORDER BY without `sort`
    demo_predicate: str = ""    # SQL restricting rows to the demo data-set
    resource: str = ""          # what it serves, as the client's accessor: "trims", "exterior_colors", "account"
    method: str = "GET"
    deprecates: str = ""        # the deprecated endpoint this one replaces, or ""
    replaced_by: str = ""       # when deprecated: the endpoint that replaces it
    quirk: str = ""             # "" or "legacy_trim_verbose" (see legacy_trim_aliases())
    text_errors: bool = False   # errors come as text/plain (login, data feed download)
    parameter: str = ""         # the path parameter ("id" of "/api/trims/v2/{id}"), or ""

    def filter_names(self) -> List[str]:
        return [n for n, _ in self.filters]

    def required_parameters(self) -> Dict[str, Tuple[str, ...]]:
        """Query parameters the endpoint requires -> their allowed values (powersports `type`)."""
        return {f.name: f.one_of for f in self.filter_specs if f.one_of}

    def json_field_names(self) -> List[str]:
        return [j.name for j in self.json_fields]

    def bind(self, target: str = "") -> "BoundEndpoint":
        """This endpoint bound to one request: ``target`` (default: the path) is what is sent."""
        return BoundEndpoint(self, target or self.path)


@dataclass(frozen=True)
class BoundEndpoint:
    """An endpoint bound to one request: what the client's door (``vehicledata._fetcher.Fetcher``
    and its asyncio twin) takes.  ``target`` is sent (the path with its parameter filled in and its
    query string); the answer decodes as the endpoint's ``record`` laid out as its ``shape``."""

    endpoint: Endpoint
    target: str

    @property
    def path(self) -> str:
        return self.endpoint.path

    @property
    def record(self) -> str:
        return self.endpoint.record

    @property
    def shape(self) -> Shape:
        return self.endpoint.shape

    @property
    def kind(self) -> Kind:
        return self.endpoint.kind

    def at(self, target: str) -> "BoundEndpoint":
        """The same endpoint bound to another request (another page, a ``next`` link)."""
        return BoundEndpoint(self.endpoint, target)

    def __repr__(self) -> str:
        return f"<BoundEndpoint {self.endpoint.path} ({self.kind}, {self.record} as {self.shape}): {self.target}>"


@lru_cache(maxsize=None)
def records() -> Dict[str, RecordSpec]:
    out: Dict[str, RecordSpec] = {}
    for r in _core.schema.records():
        fields = tuple(
            FieldSpec(
                name=f["name"], type=f["type"], nullable=f["nullable"], max_length=f["max_length"],
                enum=tuple(f["enum"]), column=f["column"], scale=f["scale"], in_record=f["in_record"],
                nested=f["nested"], nested_array=f["nested_array"], sqlite_type=f["sqlite_type"],
                nested_key=f["nested_key"], verbose_only=f["verbose_only"],
            )
            for f in r["fields"]
        )
        out[r["name"]] = RecordSpec(name=r["name"], table=r["table"], primary=r["primary"], fields=fields)
    return out


@lru_cache(maxsize=None)
def endpoints() -> Dict[str, Endpoint]:
    out: Dict[str, Endpoint] = {}
    for e in _core.schema.endpoints():
        out[e["path"]] = Endpoint(
            path=e["path"], category=e["category"], record=e["record"], table=e["table"], shape=Shape(e["shape"]),
            deprecated=e["deprecated"], paged=e["paged"], verbose=e["verbose"],
            filters=tuple((f["name"], f["match"]) for f in e["filters"]),
            json_fields=tuple(
                JsonField(j["name"], j["type"], tuple(j["enum"]), j["related"], j["related_key"], j["column"])
                for j in e["json_fields"]
            ),
            sort_keys=tuple(e["sort_keys"]),
            filter_specs=tuple(Filter(f["name"], f["match"], f["column"], f["predicate"], tuple(f["one_of"]))
                               for f in e["filters"]),
            sort_columns=dict(e["sort_columns"]),
            default_sort=e["default_sort"],
            demo_predicate=e["demo_predicate"],
            resource=e["resource"], kind=Kind(e["kind"]), method=e["method"], deprecates=e["deprecates"],
            replaced_by=e["replaced_by"], quirk=e["quirk"], text_errors=e["text_errors"],
            parameter=e["parameter"],
        )
    return out


def record(name: str) -> RecordSpec:
    try:
        return records()[name]
    except KeyError:
        raise KeyError(f"no record named {name!r}; known: {sorted(records())}") from None


def endpoint(path: str) -> Endpoint:
    try:
        return endpoints()[path]
    except KeyError:
        raise KeyError(f"no endpoint {path!r}") from None


@lru_cache(maxsize=None)
def endpoint_for(kind: Union[Kind, str], resource: str = "", deprecated: bool = False) -> Endpoint:
    """The endpoint of a kind (and resource: ``endpoint_for("detail", "trims")``); with
    ``deprecated``, the deprecated one its current endpoint replaced.  KeyError if none."""
    for e in endpoints().values():
        if e.kind == kind and e.deprecated == deprecated and (not resource or e.resource == resource):
            return e
    raise KeyError(f"no {'deprecated ' if deprecated else ''}{kind} endpoint{' of ' + resource if resource else ''}")


def resources(kind: Union[Kind, str]) -> List[str]:
    """The resources with a current (not deprecated) endpoint of a kind, in schema order."""
    return [e.resource for e in endpoints().values() if e.kind == kind and not e.deprecated]


@lru_cache(maxsize=None)
def record_quirk(name: str) -> str:
    """The quirk of the endpoints serving record ``name`` ("" when none has one)."""
    for e in endpoints().values():
        if e.quirk and e.record == name:
            return e.quirk
    return ""


def legacy_trim_aliases() -> List[Tuple[str, str, bool]]:
    """Quirk ``legacy_trim_verbose``: (older key, documented member, first element only)."""
    return [(str(old), str(member), bool(first)) for old, member, first in _core.schema.legacy_trim_aliases()]


def table_record(table: str) -> RecordSpec:
    """The primary record of a storage table: its fields are the table's columns."""
    for r in records().values():
        if r.primary and r.table == table:
            return r
    raise KeyError(f"no storage table {table!r}")


def tables() -> List[str]:
    """Storage tables of the emulator's database, in schema order."""
    return [r.table for r in records().values() if r.primary]


def create_table_sql(table: str) -> str:
    """CREATE TABLE statement of a storage table, from the schema."""
    r = table_record(table)
    cols = ", ".join(
        f"{f.name} {f.sqlite_type}{'' if f.nullable else ' NOT NULL'}" for f in r.fields if f.type != "nested"
    )
    return f"CREATE TABLE {table} ({cols})"


def attributes() -> List[str]:
    return list(_core.schema.attributes())


def find_endpoint_for_record(name: str) -> Optional[Endpoint]:
    for e in endpoints().values():
        if e.record == name and e.shape is Shape.ENVELOPE:
            return e
    return None


# ---- documentation -------------------------------------------------------------

def _field_row(f: FieldSpec) -> str:
    notes = []
    if f.type == "decimal":
        notes.append(f"decimal rendered as a string, {f.scale} digit{'s' if f.scale != 1 else ''} after the point")
    if f.type == "nested":
        notes.append(f"{'array of' if f.nested_array else 'object'} `{f.nested}` (by `{f.nested_key}`)")
    if f.verbose_only:
        notes.append("only with `verbose=yes`")
    elif not f.in_record:
        notes.append("stored and searchable, not in the record")
    if f.column != f.name:
        notes.append(f"column `{f.column}`")
    if f.enum:
        notes.append("one of: " + ", ".join(f"`{v}`" for v in f.enum))
    length = str(f.max_length) if f.max_length else ""
    return f"| `{f.name}` | {f.type} | {'yes' if f.nullable else 'no'} | {length} | {'; '.join(notes)} |"


def markdown() -> str:
    """docs/resources.md, generated from the schema table (see tools/gen_docs.py)."""
    lines = [
        "# Resources",
        "",
        "Generated from the schema table (`cpp/core/schema.cpp`) by `tools/gen_docs.py`; do not edit by hand.",
        "A test fails when this file and the schema disagree.",
        "",
        "## Paging and limits",
        "",
        f"- `page` is 1-based; `limit` defaults to {DEFAULT_LIMIT} and may be at most {MAX_LIMIT}.",
        "- `sort` takes one of the endpoint's sort keys below; `direction` is `asc` or `desc`.",
        "- `Value` filters match exactly; `Like` filters use SQL LIKE (case-insensitive; pass `%` yourself).",
        f"- Without a subscription (or without a valid JWT) every data endpoint serves model years "
        f"{DEMO_YEARS[0]} to {DEMO_YEARS[1]} only.",
        "",
        "## Endpoints",
        "",
        "| path | resource | kind | category | record | shape | deprecated |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in endpoints().values():
        rec = f"`{e.record}`" if e.record else ""
        old = f"yes: use `{e.replaced_by}`" if e.deprecated else ""
        path = f"`{e.path}`" + (f" ({e.method})" if e.method != "GET" else "")
        lines.append(f"| {path} | {e.resource} | {e.kind} | {e.category} | {rec} | {e.shape} | {old} |")
    lines.append("")
    for e in endpoints().values():
        if not (e.filters or e.json_fields or e.sort_keys):
            continue
        lines += [f"### `{e.path}`", ""]
        for name, allowed in e.required_parameters().items():
            lines.append(f"- Required: `{name}`, one of " + ", ".join(f"`{v}`" for v in allowed))
        values = [n for n, m in e.filters if m == "value" and n not in e.required_parameters()]
        likes = [n for n, m in e.filters if m == "like"]
        if values:
            lines.append("- Value filters: " + ", ".join(f"`{n}`" for n in values))
        if likes:
            lines.append("- Like filters: " + ", ".join(f"`{n}`" for n in likes))
        if e.verbose:
            lines.append("- `verbose`: `yes` or `no`")
        if e.json_fields:
            lines.append("- json fields: " + ", ".join(f"`{j.name}` ({j.type})" for j in e.json_fields))
        if e.sort_keys:
            lines.append("- sort keys: " + ", ".join(f"`{s}`" for s in e.sort_keys))
        lines.append("")
    lines += ["## Records", ""]
    for r in records().values():
        where = f" (table `{r.table}`{', defines it' if r.primary else ''})" if r.table else ""
        lines += [f"### `{r.name}`{where}", ""]
        if not r.fields:
            lines += ["Open-ended object (keys not fixed by the schema).", ""]
            continue
        lines += ["| field | type | nullable | max length | notes |", "|---|---|---|---|---|"]
        lines += [_field_row(f) for f in r.fields]
        lines.append("")
    return "\n".join(lines)
