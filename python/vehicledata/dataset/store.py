"""Writing the emulator database: schema tables, meta, provenance, indexes, content hash."""
from __future__ import annotations

import hashlib
import operator
import sqlite3
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from .. import schema
from . import provenance

META_SQL = "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)"
PROVENANCE_SQL = "CREATE TABLE provenance (table_name TEXT, column_name TEXT, origin TEXT, note TEXT)"
# vPIC Make.Id / Model.Id -> catalogue makes.id / models.id: the VIN decoder's only join
# (dataset/naming.py decides the names; several vPIC ids may map to one catalogue id).
VPIC_MAKES_SQL = "CREATE TABLE vpic_makes (vpic_make_id INTEGER PRIMARY KEY, make_id INTEGER NOT NULL)"
VPIC_MODELS_SQL = "CREATE TABLE vpic_models (vpic_model_id INTEGER PRIMARY KEY, model_id INTEGER NOT NULL)"

# Indexes the emulator's searches use (created after the rows are in).
_PER_TRIM_INDEXES = ("year", "make", "model", "make_id", "model_id", "submodel_id", "trim_id")
_INDEXES: Dict[str, Sequence[str]] = {
    "makes": ("name",),
    "models": ("make_id", "name", "make"),
    "submodels": ("oem_make_model_id", "make_id", "year", "make", "model"),
    "trims": ("year", "make", "model", "make_id", "model_id", "submodel_id"),
    "bodies": _PER_TRIM_INDEXES,
    "engines": _PER_TRIM_INDEXES,
    "mileages": _PER_TRIM_INDEXES,
    "exterior_colors": _PER_TRIM_INDEXES,
    "interior_colors": _PER_TRIM_INDEXES,
    "obd_codes": ("code",),
    "powersports_makes": ("name",),
    "powersports_models": ("make_id", "name", "make"),
    "powersports_model_years": ("year", "make_id", "model_id", "make", "model"),
}


class SchemaMismatch(ValueError):
    """A row does not fit the schema table (missing column, NULL in NOT NULL, value outside an
    enumeration): a builder bug, reported with the table, column and value."""


def columns(table: str) -> List[schema.FieldSpec]:
    return [f for f in schema.table_record(table).fields if f.type != "nested"]


def schema_version() -> str:
    """Hash of the storage tables' CREATE statements: changes whenever the schema table does."""
    text = "\n".join(schema.create_table_sql(t) for t in schema.tables())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _checked_tuples(table: str, rows: Iterable[dict], warn: Callable[[str], None]) -> Iterable[tuple]:
    cols = columns(table)
    names = [c.name for c in cols]
    # the checks run on the row's tuple (positions of `names`), not on the dict: one C call for
    # the NOT NULL columns, one index per enumerated value
    enums = [(i, frozenset(c.enum)) for i, c in enumerate(cols) if c.enum]
    not_null = [c.name for c in cols if not c.nullable]
    at = [names.index(n) for n in not_null]
    def required(t: tuple) -> tuple:
        return tuple(t[i] for i in at)

    if len(at) > 1:
        required = operator.itemgetter(*at)  # type: ignore[assignment]  # one C call per row
    nullable = {c.name for c in cols if c.nullable}
    known: Optional[frozenset] = None
    values: Callable[[dict], tuple] = lambda row: tuple(row.get(n) for n in names)
    for row in rows:
        if known is None or row.keys() != known:
            keys = frozenset(row)
            # The schema table may gain or lose a field before the builder learns about it: a new
            # nullable column is filled with NULL (said once), a new NOT NULL column is an error.
            missing = [n for n in names if n not in keys]
            hard = [n for n in missing if n not in nullable]
            if hard:
                raise SchemaMismatch(f"{table}: the builder has no value for NOT NULL column(s) {hard} "
                                     f"of the schema table")
            extra = sorted(keys - set(names))
            if known is None and (missing or extra):
                warn(f"{table}: schema column(s) {missing} not filled by the builder (NULL); "
                     f"builder value(s) {extra} not in the schema (dropped)")
            known = keys
            if missing:
                values = lambda row: tuple(row.get(n) for n in names)  # noqa: E731
            elif len(names) == 1:
                one = names[0]
                values = lambda row: (row[one],)  # noqa: E731
            else:
                values = operator.itemgetter(*names)
        t = values(row)
        if None in required(t):
            name = next(n for n in not_null if t[names.index(n)] is None)
            raise SchemaMismatch(f"{table}.{name} is NULL for row {row.get('id', row.get('code'))}")
        for i, allowed in enums:
            value = t[i]
            if value is not None and value not in allowed:
                raise SchemaMismatch(f"{table}.{names[i]}: {value!r} is not an allowed value")
        yield t


def create(con: sqlite3.Connection) -> None:
    for table in schema.tables():
        con.execute(schema.create_table_sql(table))
    con.execute(META_SQL)
    con.execute(PROVENANCE_SQL)


def insert(con: sqlite3.Connection, table: str, rows: Iterable[dict],
           warn: Callable[[str], None] = lambda msg: None) -> int:
    """Insert rows (dicts by column name), checked against the schema table as they go.
    Returns how many were inserted."""
    names = [c.name for c in columns(table)]
    sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})"
    before = con.total_changes
    con.executemany(sql, _checked_tuples(table, rows, warn))
    return con.total_changes - before


def create_indexes(con: sqlite3.Connection, tick: Optional[Callable[[str], None]] = None) -> None:
    for table in schema.tables():
        names = {c.name for c in columns(table)}
        if "id" in names:
            con.execute(f"CREATE UNIQUE INDEX ux_{table}_id ON {table}(id)")
        if table == "obd_codes":
            con.execute("CREATE UNIQUE INDEX ux_obd_codes_code_make ON obd_codes(code, ifnull(make, ''))")
        text = {c.name for c in columns(table) if c.sqlite_type == "TEXT"}
        for col in _INDEXES.get(table, ()):
            if col in names:
                # Text filters compare COLLATE NOCASE (as the service's MySQL does): index them so.
                key = f"{col} COLLATE NOCASE" if col in text else col
                con.execute(f"CREATE INDEX ix_{table}_{col} ON {table}({key})")
        if tick:
            tick(table)


def write_meta(con: sqlite3.Connection, meta: Dict[str, str]) -> None:
    con.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", sorted(meta.items()))


def write_provenance(con: sqlite3.Connection, rows: List[Tuple[str, str, str, str]]) -> None:
    con.executemany("INSERT INTO provenance (table_name, column_name, origin, note) VALUES (?, ?, ?, ?)", rows)


def write_vpic_maps(con: sqlite3.Connection, makes: Dict[int, int], models: Dict[int, int]) -> None:
    """The vpic_makes and vpic_models tables (created here, empty for a build without vPIC)."""
    con.execute(VPIC_MAKES_SQL)
    con.execute(VPIC_MODELS_SQL)
    con.executemany("INSERT INTO vpic_makes (vpic_make_id, make_id) VALUES (?, ?)", sorted(makes.items()))
    con.executemany("INSERT INTO vpic_models (vpic_model_id, model_id) VALUES (?, ?)", sorted(models.items()))


def write_value_origins(con: sqlite3.Connection, rows: List[Tuple[object, ...]]) -> None:
    """The `value_origins` table: per trim id, the origin of each column of
    provenance.ROW_ORIGIN_COLUMNS (real, derived, synthetic or none)."""
    cols = [f"{table}_{column}" for table, column in provenance.ROW_ORIGIN_COLUMNS]
    con.execute(f"CREATE TABLE value_origins (id INTEGER PRIMARY KEY, {', '.join(c + ' TEXT' for c in cols)})")
    con.executemany(f"INSERT INTO value_origins (id, {', '.join(cols)}) VALUES ({', '.join('?' * (len(cols) + 1))})",
                    rows)


def value_origin_shares(con: sqlite3.Connection) -> Dict[str, Dict[str, int]]:
    """{"table.column": {origin: number of trims}} from `value_origins` ({} if the table is missing)."""
    if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'value_origins'").fetchone():
        return {}
    out: Dict[str, Dict[str, int]] = {}
    for table, column in provenance.ROW_ORIGIN_COLUMNS:
        per = out.setdefault(f"{table}.{column}", {o: 0 for o in provenance.ORIGINS})
        for origin, n in con.execute(f"SELECT {table}_{column}, count(*) FROM value_origins GROUP BY 1"):
            per[origin] = n
    return out


def _order_by(table: str) -> str:
    names = [c.name for c in columns(table)]
    if "id" in names:
        return "id"
    return ", ".join(names)


def _hash_parts(con: sqlite3.Connection) -> List[Tuple[str, str]]:
    """(name, SELECT) of every part the content hash covers, rows in key order: the schema tables,
    the VIN decoder's id maps and value origins where present, and the provenance table."""
    parts = []
    for table in sorted(schema.tables()):
        names = [c.name for c in columns(table)]
        parts.append((f"{table}\x00{','.join(names)}",
                      f"SELECT {', '.join(names)} FROM {table} ORDER BY {_order_by(table)}"))
    for table, key in (("vpic_makes", "vpic_make_id"), ("vpic_models", "vpic_model_id"), ("value_origins", "id")):
        if con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
            parts.append((table, f"SELECT * FROM {table} ORDER BY {key}"))
    parts.append(("provenance", "SELECT table_name, column_name, origin, note FROM provenance "
                                "ORDER BY table_name, column_name"))
    return parts


def _part_digest(con: sqlite3.Connection, sql: str) -> str:
    h = hashlib.sha256()
    cur = con.execute(sql)
    while True:
        chunk = cur.fetchmany(20000)
        if not chunk:
            break
        h.update(repr(chunk).encode())
    return h.hexdigest()


def _part_digest_of_file(path: str, sql: str) -> str:
    """_part_digest in a worker process, on the database file opened read-only."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return _part_digest(con, sql)
    finally:
        con.close()


def _combine(parts: List[Tuple[str, str]], digests: List[str]) -> str:
    h = hashlib.sha256()
    for (name, _), digest in zip(parts, digests):
        h.update(f"\x00{name}\x00{digest}".encode())
    return h.hexdigest()


def content_hash_con(con: sqlite3.Connection) -> str:
    """SHA-256 over every schema table and the provenance table, rows in key order (meta,
    which holds the build time, is left out): one SHA-256 per table (its rows' repr), then one
    over the tables' names and digests."""
    parts = _hash_parts(con)
    return _combine(parts, [_part_digest(con, sql) for _, sql in parts])


def content_hash(db_path: Path, workers: int = 2) -> str:
    """Content hash of a built database (see content_hash_con), its tables hashed by `workers`
    processes at once (the largest first; one process where there are no POSIX semaphores)."""
    path = Path(db_path)
    if not path.is_file():
        raise FileNotFoundError(f"no database at {path}")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        parts = _hash_parts(con)
        if workers < 2:
            return _combine(parts, [_part_digest(con, sql) for _, sql in parts])
        sizes = [_part_rows(con, sql) for _, sql in parts]
    finally:
        con.close()
    try:
        pool = ProcessPoolExecutor(max_workers=workers)
    except OSError:  # no /dev/shm (a bare chroot, AWS Lambda)
        return content_hash(path, workers=1)
    with pool:
        order = sorted(range(len(parts)), key=lambda i: -sizes[i])
        futures = {i: pool.submit(_part_digest_of_file, str(path), parts[i][1]) for i in order}
        return _combine(parts, [futures[i].result() for i in range(len(parts))])


def _part_rows(con: sqlite3.Connection, sql: str) -> int:
    table = sql.split(" FROM ", 1)[1].split(" ", 1)[0]
    return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def read_meta(db_path: Path) -> Dict[str, str]:
    """meta(key, value) of a database; {} if it is missing or not ours."""
    path = Path(db_path)
    if not path.is_file():
        return {}
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return dict(con.execute("SELECT key, value FROM meta").fetchall())
        finally:
            con.close()
    except sqlite3.Error:
        return {}
