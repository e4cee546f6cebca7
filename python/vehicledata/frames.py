"""Columns of decoded pages -> Arrow tables and pandas DataFrames.

The C++ decoder leaves each page as typed column buffers and exports them through the Arrow C
Data Interface (``Page.__arrow_c_array__`` / ``__arrow_c_stream__``: validity bitmaps, bit-packed
booleans and date32 days built in C++, values and text not copied), so ``pa.table(page)`` and
``pa.record_batch(page)`` read a page; ``page_to_arrow`` imports it that way.  ``page_to_pandas``
gives each column its pandas dtype without Python objects per record (nested values excepted):
strings, dates and nested text come from the Arrow export, numbers and timestamps from writable
numpy views of the same buffers (pandas writes into them in place; Arrow buffers are read-only):

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

Without pyarrow, the columns come from numpy views of the page's buffers (``Page.columns()``) and
strings are ``object`` columns of ``str``.
"""
from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Dict, Iterable, Optional, Sequence, Tuple

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


def _json_values(texts: Iterable[Optional[str]], n: int) -> Any:
    """Nested columns: JSON text -> Python lists/dicts (None stays None), as an object array."""
    import numpy as np

    out = np.empty(n, dtype=object)
    loads = json.loads
    for i, t in enumerate(texts):
        out[i] = loads(t) if t is not None else None
    return out


# ---- without pyarrow: numpy views of the page's buffers ------------------------------------

def _python_strings(col: Dict[str, Any], n: int) -> Any:
    import numpy as np

    offsets, data, valid = col["offsets"], col["data"].tobytes(), col["valid"]
    out = np.empty(n, dtype=object)
    for i in range(n):
        out[i] = data[offsets[i]:offsets[i + 1]].decode("utf-8", "replace") if valid[i] else None
    return out


def _pandas_column(pd: Any, pa: Any, col: Dict[str, Any], n: int) -> Any:
    """One column of ``Page.columns()`` (numpy views of the page's buffers) -> a pandas array: numbers
    and timestamps always, strings too without pyarrow (``pa`` is unused)."""
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
        return _json_values(_python_strings(col, n), n)
    if col["type"] == "date":
        return pd.to_datetime(pd.Series(_python_strings(col, n)), format="%Y-%m-%d").astype(PANDAS_DTYPES["date"]).array
    return _python_strings(col, n)


# ---- with pyarrow: the page's Arrow C Data Interface export ---------------------------------

def _batch(pa: Any, page: Any) -> Any:
    """One core Page as a pyarrow RecordBatch (imported from the page's C export, no copy)."""
    return pa.RecordBatch._import_from_c_capsule(*page.__arrow_c_array__())


def _arrow_pandas_array(pd: Any, pa: Any, arr: Any, n: int, kind: str) -> Any:
    """A string, date or nested column of the page's Arrow export -> its pandas array."""
    if kind == "json":
        return _json_values(arr.to_pylist(), n)
    if pa.types.is_date32(arr.type):
        days = arr.to_numpy(zero_copy_only=False).astype(PANDAS_DTYPES["date"])  # NaT for nulls
        return pd.arrays.DatetimeArray._simple_new(days, dtype=days.dtype)
    return pd.arrays.ArrowStringArray(arr)


# Kinds pandas keeps as numpy arrays: taken from writable numpy views of the page's buffers (as
# pandas writes in place, `df.loc[i, "msrp"] = x`), not from the read-only Arrow buffers.
_NUMPY_KINDS = frozenset(("int64", "float64", "bool", "timestamp"))


@lru_cache(maxsize=64)
def _column_index(names: Tuple[str, ...]) -> Any:
    """The columns Index of a frame (built once per set of names: pages of one record share it)."""
    import pandas as pd

    return pd.Index(list(names))


def _frame(pd: Any, names: Sequence[str], arrays: Sequence[Any], n: int) -> "pd.DataFrame":
    """A DataFrame of ready column arrays of length n (pandas' checks and inference skipped: they
    are most of the cost of a small page)."""
    try:
        return pd.DataFrame._from_arrays(list(arrays), columns=_column_index(tuple(names)),
                                         index=pd.RangeIndex(n), verify_integrity=False)
    except (AttributeError, TypeError):  # pragma: no cover - a pandas without the private constructor
        return pd.DataFrame(dict(zip(names, arrays)), copy=False)


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
    cols = page.columns()
    if pa is None:
        arrays = [_pandas_column(pd, None, c, n) for c in cols]
    else:
        batch = _batch(pa, page)
        arrays = [_pandas_column(pd, None, c, n) if c["kind"] in _NUMPY_KINDS
                  else _arrow_pandas_array(pd, pa, batch.column(i), n, c["kind"]) for i, c in enumerate(cols)]
    return _frame(pd, [c["name"] for c in cols], arrays, n)


def pages_to_pandas(pages: Sequence[Any], record: Optional[str] = None) -> "pd.DataFrame":
    """Several pages of one record -> one DataFrame (pages are concatenated in C++ and emptied)."""
    if not pages:
        if record is None:
            raise ValueError("no pages and no record name: cannot build the columns")
        return page_to_pandas(empty_page(record))
    page = pages[0] if len(pages) == 1 else _core.client.concat(list(pages))
    return page_to_pandas(page)


def page_to_arrow(page: Any) -> "pa.Table":
    """One core Page -> Arrow table (the page's C export imported: ``pa.table(page)`` gives the same)."""
    pa = _pyarrow()
    if pa is None:
        raise ImportError("to_arrow() needs pyarrow: pip install 'vehicledata[arrow]'")
    return pa.Table.from_batches([_batch(pa, page)])


def pages_to_arrow(pages: Sequence[Any], record: Optional[str] = None) -> "pa.Table":
    if not pages:
        if record is None:
            raise ValueError("no pages and no record name: cannot build the columns")
        return page_to_arrow(empty_page(record))
    page = pages[0] if len(pages) == 1 else _core.client.concat(list(pages))
    return page_to_arrow(page)


class ArrowStream:
    """An Arrow PyCapsule stream (``__arrow_c_stream__``) of core pages, each one record batch, with
    the columns of ``schema_page``; the pages are pulled from ``pages`` as the consumer reads."""

    def __init__(self, schema_page: Any, pages: Iterable[Any]) -> None:
        self._schema_page = schema_page
        self._pages: Optional[Iterable[Any]] = pages

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        if self._pages is None:
            raise ValueError("this Arrow stream was already read")
        pages, self._pages = self._pages, None
        return _core.client.arrow_stream(self._schema_page, pages)


def frame_from_bytes(body: bytes, record: str = "trim", shape: str = "envelope") -> "pd.DataFrame":
    """Decode a response body straight to a DataFrame (benchmarks, offline files)."""
    return page_to_pandas(_core.client.decode(body, record, shape, ""))


__all__ = ["page_to_pandas", "pages_to_pandas", "page_to_arrow", "pages_to_arrow", "frame_from_bytes",
           "arrow_type", "arrow_to_pandas", "pandas_dtype", "PANDAS_DTYPES", "ArrowStream"]
