"""Columns of decoded pages -> pandas DataFrames and Arrow tables.

The C++ decoder leaves each page as typed column buffers; this module wraps
them without going through Python objects per record:

========================  ===============================  =======================
schema type               pandas dtype                     Arrow type
========================  ===============================  =======================
int, int64                ``Int64`` (nullable)             int64
decimal, float            ``float64`` (NaN for null)       float64
bool                      ``boolean``                      bool
string                    Arrow-backed ``string``          large_string
date                      ``datetime64[s]``                date32
timestamp                 ``datetime64[us, UTC]``          timestamp[us, UTC]
nested                    object (lists/dicts)             large_string (JSON text)
========================  ===============================  =======================

Without pyarrow, strings are ``object`` columns of ``str``.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence

from . import _core

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

#: Schema type -> pandas dtype of its column in every DataFrame of the package: pages of the API
#: (``page_to_pandas``) and the data feed (``arrow_to_pandas``).  The one map of the table above
#: (docs/client.md, "DataFrames"), with :func:`arrow_type`; ``string`` is ``object`` (``str``) without pyarrow.
PANDAS_DTYPES: Dict[str, str] = {
    "int": "Int64", "int64": "Int64", "decimal": "float64", "float": "float64", "bool": "boolean",
    "string": "string[pyarrow]", "date": "datetime64[s]", "timestamp": "datetime64[us, UTC]", "nested": "object",
}


def pandas_dtype(schema_type: str) -> str:
    """The pandas dtype of a schema type's column (:data:`PANDAS_DTYPES`; unknown types are strings)."""
    return PANDAS_DTYPES.get(schema_type, PANDAS_DTYPES["string"])


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:  # pragma: no cover - optional
        return None
    return pyarrow


def _bitmap(pa: Any, col: Dict[str, Any]) -> Any:
    if col["null_count"] == 0:
        return None
    import numpy as np

    return pa.py_buffer(np.packbits(col["valid"], bitorder="little"))


def _arrow_strings(pa: Any, col: Dict[str, Any], n: int) -> Any:
    return pa.LargeStringArray.from_buffers(n, pa.py_buffer(col["offsets"]), pa.py_buffer(col["data"]),
                                            _bitmap(pa, col), col["null_count"])


def _python_strings(col: Dict[str, Any], n: int) -> Any:
    import numpy as np

    offsets, data, valid = col["offsets"], col["data"].tobytes(), col["valid"]
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = data[offsets[i]:offsets[i + 1]].decode("utf-8", "replace") if valid[i] else None
    return out


def _json_objects(col: Dict[str, Any], n: int) -> Any:
    import numpy as np

    texts = _python_strings(col, n)
    out = np.empty(n, dtype=object)
    for i, t in enumerate(texts):
        out[i] = json.loads(t) if t is not None else None
    return out


def _pandas_column(pd: Any, pa: Any, col: Dict[str, Any], n: int) -> Any:
    kind = col["kind"]
    if kind == "int64":
        return pd.arrays.IntegerArray(col["values"], ~col["valid"])
    if kind == "float64":
        return col["values"]
    if kind == "bool":
        return pd.arrays.BooleanArray(col["values"].astype(bool), ~col["valid"])
    if kind == "timestamp":
        import numpy as np

        values = col["values"]
        if col["null_count"]:
            values = values.copy()
            values[~col["valid"]] = np.iinfo(np.int64).min  # NaT
        return pd.arrays.DatetimeArray._simple_new(values.view("M8[us]"), dtype=pd.DatetimeTZDtype("us", "UTC"))
    if kind == "json":
        return _json_objects(col, n)
    # strings (and dates)
    if col["type"] == "date":
        return pd.to_datetime(pd.Series(_python_strings(col, n)), format="%Y-%m-%d").astype(PANDAS_DTYPES["date"]).array
    if pa is not None:
        return pd.arrays.ArrowStringArray(_arrow_strings(pa, col, n))
    return _python_strings(col, n)


def arrow_type(pa: Any, schema_type: str) -> Any:
    """The Arrow type of a schema type (the table in the module docstring; nested -> large_string)."""
    return {
        "int": pa.int64(), "int64": pa.int64(), "decimal": pa.float64(), "float": pa.float64(),
        "bool": pa.bool_(), "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"),
    }.get(schema_type, pa.large_string())


def arrow_to_pandas(table: "pa.Table") -> "pd.DataFrame":
    """An Arrow table typed by :func:`arrow_type` -> a DataFrame with the dtypes of ``page_to_pandas``
    (:data:`PANDAS_DTYPES`)."""
    import pandas as pd

    pa = _pyarrow()
    # Arrow type -> schema type, the inverse of arrow_type (string as well as large_string is text).
    schema_types = {arrow_type(pa, t): t for t in PANDAS_DTYPES if t != "nested"}
    schema_types[pa.string()] = "string"
    dtypes = {t: pd.api.types.pandas_dtype(d) for t, d in PANDAS_DTYPES.items()}
    # Arrow converts straight to the extension dtypes (Int64, boolean, string); the rest are cast below.
    direct = {t: d for t, d in dtypes.items()
              if isinstance(d, pd.api.extensions.ExtensionDtype) and not isinstance(d, pd.DatetimeTZDtype)}

    def mapper(t: Any) -> Any:
        return direct.get(schema_types.get(t, ""))

    df = table.to_pandas(types_mapper=mapper, date_as_object=False)
    for name, field in zip(table.column_names, table.schema):
        wanted = dtypes[schema_types.get(field.type, "string")]
        if df[name].dtype != wanted:  # dates (datetime64[ms] from Arrow), another timestamp unit
            df[name] = df[name].astype(wanted)
    return df


def empty_page(record: str, verbose: bool = False) -> Any:
    """A Page with the record's columns (with verbose: the verbose-only ones too) and no rows."""
    return _core.client.decode(b"[]", record, "array", "", verbose)


def concat_or_empty(pages: Sequence[Any], record: str, verbose: bool = False) -> Any:
    """One core page from several (an empty one with the record's columns if there are none).

    The sources are emptied by the concatenation: pass copies (``page.copy()``) of pages kept elsewhere.
    """
    if not pages:
        return empty_page(record, verbose)
    return pages[0] if len(pages) == 1 else _core.client.concat(list(pages))


def page_to_pandas(page: Any) -> "pd.DataFrame":
    """One core Page -> DataFrame (column buffers wrapped, not copied through Python objects)."""
    import pandas as pd

    pa = _pyarrow()
    n = page.rows
    data = {col["name"]: _pandas_column(pd, pa, col, n) for col in page.columns()}
    return pd.DataFrame(data, copy=False)


def pages_to_pandas(pages: Sequence[Any], record: Optional[str] = None) -> "pd.DataFrame":
    """Several pages of one record -> one DataFrame (pages are concatenated in C++ and emptied)."""
    if not pages:
        if record is None:
            raise ValueError("no pages and no record name: cannot build the columns")
        return page_to_pandas(empty_page(record))
    page = pages[0] if len(pages) == 1 else _core.client.concat(list(pages))
    return page_to_pandas(page)


def _arrow_column(pa: Any, col: Dict[str, Any], n: int) -> Any:
    kind = col["kind"]
    bitmap = _bitmap(pa, col)
    if kind == "int64":
        return pa.Array.from_buffers(pa.int64(), n, [bitmap, pa.py_buffer(col["values"])], col["null_count"])
    if kind == "float64":
        return pa.Array.from_buffers(pa.float64(), n, [bitmap, pa.py_buffer(col["values"])], col["null_count"])
    if kind == "bool":
        return pa.array(col["values"].astype(bool), mask=~col["valid"])
    if kind == "timestamp":
        return pa.Array.from_buffers(pa.timestamp("us", tz="UTC"), n, [bitmap, pa.py_buffer(col["values"])],
                                     col["null_count"])
    strings = _arrow_strings(pa, col, n)
    if col["type"] == "date":
        return strings.cast(pa.date32())
    return strings


def page_to_arrow(page: Any) -> "pa.Table":
    pa = _pyarrow()
    if pa is None:
        raise ImportError("to_arrow() needs pyarrow: pip install 'vehicledata[arrow]'")
    n = page.rows
    cols = page.columns()
    return pa.table({c["name"]: _arrow_column(pa, c, n) for c in cols})


def pages_to_arrow(pages: Sequence[Any], record: Optional[str] = None) -> "pa.Table":
    if not pages:
        if record is None:
            raise ValueError("no pages and no record name: cannot build the columns")
        return page_to_arrow(empty_page(record))
    page = pages[0] if len(pages) == 1 else _core.client.concat(list(pages))
    return page_to_arrow(page)


def frame_from_bytes(body: bytes, record: str = "trim", shape: str = "envelope") -> "pd.DataFrame":
    """Decode a response body straight to a DataFrame (benchmarks, offline files)."""
    return page_to_pandas(_core.client.decode(body, record, shape, ""))


__all__ = ["page_to_pandas", "pages_to_pandas", "page_to_arrow", "pages_to_arrow", "frame_from_bytes",
           "arrow_type", "arrow_to_pandas", "pandas_dtype", "PANDAS_DTYPES"]
