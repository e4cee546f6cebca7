"""The dataset builder: the emulator's SQLite database from real public vehicle data.

Inputs (docs/dataset.md): EPA's fuel economy table, NHTSA vPIC VIN tables and an OBD-II code
table, found through ``sources=``, ``$VEHICLEDATA_SOURCES``, the ``pyvehicledata-data`` package, a
checkout's ``data/`` folder or the official EPA download; with none of them a ``SourceError`` says
how to get them (the package's own wheel carries no raw data; the repository's ``data/`` and the
data wheel do, and ``fetch`` gets the vPIC tables). Output: ``default_db_path()`` unless ``out=``
is given.

    >>> from vehicledata import dataset
    >>> db = dataset.ensure_database()          # builds once, then reuses
    >>> report = dataset.build(sources="data", out="/tmp/v.db", progress=True)   # in a clone, after `make data`
"""
from __future__ import annotations

from .builder import BuildReport, Sources, build, ensure_database, find_sources, is_current
from .epa import SourceError
from .paths import data_home, default_db_path
from .store import SchemaMismatch, read_meta, schema_version
from .store import content_hash as _content_hash


def content_hash(db_path) -> str:  # type: ignore[no-untyped-def]
    """SHA-256 of every table's content (meta excluded) of a built database."""
    return _content_hash(db_path)


__all__ = [
    "BuildReport", "SchemaMismatch", "SourceError", "Sources", "build", "content_hash", "data_home",
    "default_db_path", "ensure_database", "find_sources", "is_current", "read_meta", "schema_version",
]
