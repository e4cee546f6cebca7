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

Origin labels: a page from the emulator knows the fields its ``X-Emulator-Synthetic`` header named
(``Page.synthetic``). ``page_to_pandas`` puts them in ``df.attrs[SYNTHETIC_ATTR]`` (a list, absent
when there are none); the Arrow export carries them in the schema (``b"vehicledata.synthetic"``: the
list, comma-separated) and on each such field (``b"vehicledata.origin": b"synthetic"``; a nested
column: ``b"vehicledata.synthetic"``, its members), so ``to_arrow`` and Parquet files keep them.
polars keeps no metadata: use ``Pager.synthetic``.

Null columns: a frame of the joined vehicle rows (``api.vehicles``, records of
:data:`NULL_LABELLED_RECORDS`) also names the columns null on every one of its rows (a body's
length, width and height: the catalogue has no value for them) in ``df.attrs[ALWAYS_NULL_ATTR]``
and in the Arrow schema metadata (``b"vehicledata.always_null"``, comma-separated); a whole result
(``to_pandas``, ``to_arrow``, ``to_polars``, ``to_parquet``) of several rows says so once per process
for each such column (:class:`vehicledata.NullColumnWarning`, one line), a page of an iteration
only labels its own.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import threading
from contextlib import contextmanager
import warnings
from functools import lru_cache
from typing import (TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Literal, Optional, Sequence, Tuple, Union,
                    overload)

from . import _core
from .schema import Shape

#: Says once per process why the DataFrame fast path is not taken (the public path is, as fast as
#: pandas' public constructors: correct, slower on small pages).
logger = logging.getLogger("vehicledata.frames")

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import polars as pl
    import pyarrow as pa

#: Schema type -> pandas dtype of its column in every DataFrame of the package: pages of the API
#: (``page_to_pandas``) and the data feed (``arrow_to_pandas``).  The one map of the table above
#: (docs/client.md, "DataFrames"), with :func:`arrow_type`; ``string`` is ``object`` (``str``) without pyarrow.
PANDAS_DTYPES: Dict[str, str] = {
    "int": "Int64", "int64": "Int64", "decimal": "float64", "float": "float64", "bool": "boolean",
    "string": "string[pyarrow]", "date": "datetime64[s]", "timestamp": "datetime64[us, UTC]", "nested": "object",
}


#: The ``DataFrame.attrs`` key of the fields the emulator labels synthetic (see the module docstring).
SYNTHETIC_ATTR = "vehicledata.synthetic"


#: The ``DataFrame.attrs`` key (and Arrow schema metadata key) of the columns null on every row of a
#: frame of :data:`NULL_LABELLED_RECORDS` (see the module docstring).
ALWAYS_NULL_ATTR = "vehicledata.always_null"

#: Records whose frames name their columns null on every row: the joined vehicle rows of
#: ``api.vehicles``, where a part's field the catalogue has no value for is null throughout.
NULL_LABELLED_RECORDS = frozenset({"vehicle"})

_NULL_NOTED: set = set()  # columns a NullColumnWarning named (once per process each)
_NULL_LOCK = threading.Lock()
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _caller_level() -> int:
    """The ``stacklevel`` of ``warnings.warn`` in the caller of this function that names the first
    frame outside the package (the user's line, however deep the call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def null_columns(obj: Any) -> List[str]:
    """The columns null on every row of a core Page of a record of :data:`NULL_LABELLED_RECORDS`
    (none for other records), or of an Arrow table; none without rows."""
    record = getattr(obj, "record", None)  # (read once: each read of a Page's property makes a str)
    if isinstance(record, str):  # a core Page
        if record not in NULL_LABELLED_RECORDS or not obj.rows:
            return []
        return [c["name"] for c in obj.columns() if c["null_count"] == obj.rows]
    if not obj.num_rows:
        return []
    return [name for name, col in zip(obj.column_names, obj.columns) if col.null_count == obj.num_rows]


def note_null_columns(columns: Sequence[str], rows: int) -> None:
    """One :class:`NullColumnWarning` naming the columns of ``columns`` no earlier one named, when
    the frame has several ``rows`` (one row's nulls are that vehicle's: ``vehicles.get()`` is quiet)."""
    if not columns or rows < 2:
        return
    with _NULL_LOCK:
        new = [c for c in columns if c not in _NULL_NOTED]
        _NULL_NOTED.update(new)
    if new:
        message = (f"{', '.join(new)} {'is' if len(new) == 1 else 'are'} null in all {rows:,} rows of this "
                   f"vehicles frame: the service has no value for {'it' if len(new) == 1 else 'them'} there "
                   f"(the frame's attrs[{ALWAYS_NULL_ATTR!r}] lists its null columns; said once per column)")
        deferred = getattr(_DEFERRED, "notes", None)
        if deferred is not None:
            deferred.append(message)
        else:
            say_notes([message])


_DEFERRED = threading.local()


@contextmanager
def deferred_notes() -> Iterator[List[str]]:
    """The null-column notes of this thread's frames built inside the block, collected instead of
    warned: the asyncio face builds a frame on a worker thread, where the caller's line is not on
    the stack, and says them (:func:`say_notes`) on the loop's thread once the frame is awaited."""
    notes: List[str] = []
    _DEFERRED.notes = notes
    try:
        yield notes
    finally:
        _DEFERRED.notes = None


def say_notes(messages: Sequence[str]) -> None:
    """Each message as a :class:`NullColumnWarning` at the caller's line (the first frame outside
    the package)."""
    from .errors import NullColumnWarning

    for message in messages:
        warnings.warn(message, NullColumnWarning, stacklevel=_caller_level())


def with_null_columns(table: "pa.Table", columns: Sequence[str], note: bool = True) -> "pa.Table":
    """``table`` with ``columns`` in its schema metadata (``b"vehicledata.always_null"``), said once
    (:func:`note_null_columns`) unless ``note`` is false (a page of an iteration, not the whole result)."""
    if not columns:
        return table
    if note:
        note_null_columns(columns, table.num_rows)
    meta = dict(table.schema.metadata or {})
    meta[ALWAYS_NULL_ATTR.encode()] = ",".join(columns).encode()
    return table.replace_schema_metadata(meta)


def _labelled(df: "pd.DataFrame", page: Any, record: Optional[str] = None) -> "pd.DataFrame":
    """``df`` with the page's synthetic fields in ``df.attrs[SYNTHETIC_ATTR]`` (when it has any), and
    for a record of :data:`NULL_LABELLED_RECORDS` its columns null on every row in
    ``df.attrs[ALWAYS_NULL_ATTR]`` (said once: :func:`note_null_columns`); ``record``: the page's,
    when the caller has read it."""
    synthetic = list(getattr(page, "synthetic", ()))
    if synthetic:
        df.attrs[SYNTHETIC_ATTR] = synthetic
    if record is not None and record not in NULL_LABELLED_RECORDS:
        return df
    nulls = null_columns(page)
    if nulls:
        df.attrs[ALWAYS_NULL_ATTR] = nulls
        note_null_columns(nulls, page.rows)
    return df


def _labels_of(table: "pa.Table") -> Dict[str, List[str]]:
    """The ``df.attrs`` labels an Arrow table's schema metadata carries (synthetic and null columns)."""
    meta = table.schema.metadata or {}
    out: Dict[str, List[str]] = {}
    for key in (SYNTHETIC_ATTR, ALWAYS_NULL_ATTR):
        text = meta.get(key.encode())
        if text:
            out[key] = text.decode().split(",")
    return out


def pandas_dtype(schema_type: str) -> str:
    """The pandas dtype of a schema type's column (:data:`PANDAS_DTYPES`; unknown types are strings)."""
    return PANDAS_DTYPES.get(schema_type, PANDAS_DTYPES["string"])


_PYARROW: List[Any] = []  # pyarrow, once imported (an import statement per frame costs a small page ~1 %)


def _pyarrow() -> Any:
    if _PYARROW:
        return _PYARROW[0]
    try:
        import pyarrow
    except ImportError:  # pragma: no cover - optional
        return None
    _PYARROW.append(pyarrow)
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
    """The columns Index of a frame (built once per set of names: pages of one record share it;
    each frame gets its own view, as ``df.columns.name = ...`` sets the name in place)."""
    import pandas as pd

    return pd.Index(list(names))


def _frame(pd: Any, names: Sequence[str], arrays: Sequence[Any], n: int) -> "pd.DataFrame":
    """A DataFrame of ready column arrays of length n (pandas' checks and inference skipped: they
    are most of the cost of a small page)."""
    try:
        return pd.DataFrame._from_arrays(list(arrays), columns=_column_index(tuple(names))._view(),
                                         index=pd.RangeIndex(n), verify_integrity=False)
    except (AttributeError, TypeError):  # pragma: no cover - a pandas without the private constructor
        return pd.DataFrame(dict(zip(names, arrays)), copy=False)


def _page_to_pandas_public(page: Any) -> "pd.DataFrame":
    """``page_to_pandas`` through pandas' public array constructors (and ``_frame``): the reference
    the fast path (:class:`_FastFrames`) is tested against, and its fallback."""
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


# ---- the fast path: pandas' internal constructors ------------------------------------------
#
# A DataFrame of a small page costs almost only pandas object construction (docs/performance.md,
# section 1): the public constructors validate and infer what the page already knows. The fast
# path builds each column's array with the array class's ``_simple_new`` (or the two attributes an
# ArrowExtensionArray has), the blocks pandas would build, and the BlockManager and DataFrame
# without checks, with the per-layout metadata (dtypes, block classes, which columns pandas stacks,
# the columns Index) computed once per record layout. The blocks are read from pandas' public
# construction of the layout's first page, as pandas' block forming differs between releases. It
# uses internals that pandas 2.2 to 3.1 have (tested: the project's pin 3.0.1, pyproject.toml [dev];
# the floor 2.2.0, `make test-floor`; 3.1.1 with pyarrow 26, `make wheels-test`); with another pandas,
# if one of them is missing, or if the first frame of a layout differs from the public
# construction's (values, dtypes, blocks), the public path is used from then on, with a warning
# logged (logger "vehicledata.frames"): an upgrade can cost speed, not correctness.
# tests/client/test_client_fast_frames.py compares both paths for every record type.

class _Layout:
    """What the fast path needs to know about one page layout (column names, kinds and types)."""

    __slots__ = ("columns", "kinds", "blocks", "arrow", "text_schema", "text_struct", "ints", "bools", "stamps", "strings",
                 "other_text", "reference", "sample", "verified")

    def __init__(self, fast: "_FastFrames", page: Any, with_arrow: bool) -> None:
        np = fast.np
        cols = page.columns()
        self.columns = fast.pd.Index([c["name"] for c in cols])
        self.kinds = tuple(fast.column_kind(c) for c in cols)
        # The columns of each kind; text columns (strings, dates, nested) as (column, its number among
        # the text columns), taken from the Arrow export of the text columns alone
        # (Page._arrow_text_array, imported with this schema, kept per layout).
        self.ints = tuple(i for i, k in enumerate(self.kinds) if k == "int64")
        self.bools = tuple(i for i, k in enumerate(self.kinds) if k == "bool")
        self.stamps = tuple(i for i, k in enumerate(self.kinds) if k == "timestamp")
        text = [i for i, k in enumerate(self.kinds) if k not in _NUMPY_KINDS]
        self.strings = tuple((i, j) for j, i in enumerate(text) if self.kinds[i] == "string")
        self.other_text = tuple((i, self.kinds[i], j) for j, i in enumerate(text) if self.kinds[i] != "string")
        self.arrow = with_arrow and bool(text)
        self.text_schema = fast.pa.Schema._import_from_c_capsule(page._arrow_text_schema()) if self.arrow else None
        # The export imported as one struct array of that schema's fields (its columns: the struct's
        # children, flattened; a record batch and a table of it cost a 10-record page ~5 % more).
        self.text_struct = fast.pa.struct(list(self.text_schema or ())) if self.arrow else None
        # The blocks of pandas' own construction of this layout, read from its public construction of
        # the layout's first page (so the fast path follows pandas' block forming, which changes between
        # releases: 3.0 stacks runs of adjacent columns of one numpy dtype, then consolidates; 3.1 groups
        # all columns of one dtype, in order of first appearance). An extension array (Int64, boolean,
        # string) is one block of one column (1-D; datetime64[us, UTC] 1 x n, as Page._pandas_values
        # makes it); numpy dtypes (float64, datetime64[s], object) stack their columns.
        # Blocks: (klass, column, None, placement) for one array, (klass, columns, dtype, placement) for
        # columns stacked; a placement is never changed by pandas (operations make new ones): one per layout.
        # The check's page: the layout's first page, or rows spread over it when it is larger than
        # _CHECK_ROWS (a first frame of 63,000 rows checked whole took a quarter of a second of the
        # GIL, in stretches of C the loop of the asyncio face cannot interrupt: Arrow's conversion of
        # every string, for one; benchmarks/loop_lag.py --mode frame).
        self.sample: Any = _check_sample(fast.np, page)
        self.reference: Any = _page_to_pandas_public(self.sample)  # checked against the fast frame, then dropped
        self.blocks: List[Tuple[Any, Any, Any, Any]] = []
        for block in self.reference._mgr.blocks:
            place = block.mgr_locs
            where = tuple(int(i) for i in place.as_array)
            if isinstance(block.dtype, np.dtype):
                self.blocks.append((type(block), where, block.dtype, place))
            elif len(where) == 1:
                self.blocks.append((type(block), where[0], None, place))
            else:  # pragma: no cover - a pandas that puts extension arrays of several columns in one block
                raise TypeError(f"a {block.dtype} block of {len(where)} columns")
        self.verified = False


class _FastFrames:
    """Page -> DataFrame through pandas' internal constructors (see above); ``None`` from
    :func:`_fast_frames` when this pandas lacks one of them."""

    def __init__(self, pd: Any, pa: Any) -> None:
        import numpy as np
        from pandas.core.arrays import BooleanArray, DatetimeArray, IntegerArray
        from pandas.core.internals.managers import BlockManager

        self.np, self.pd, self.pa = np, pd, pa
        self.BlockManager = BlockManager
        self.from_mgr = pd.DataFrame._from_mgr
        self.int64 = pd.Int64Dtype()
        self.utc_us = pd.DatetimeTZDtype("us", "UTC")
        self.days = np.dtype(PANDAS_DTYPES["date"])
        self.string_array: Any = None
        self.string_dtype: Any = None
        self.string_cache = False
        if pa is not None:
            from pandas.core.arrays.string_arrow import ArrowStringArray

            self.string_array = ArrowStringArray
            empty = ArrowStringArray(pa.array([], pa.large_string()))
            self.string_dtype = empty.dtype
            # The attributes an ArrowStringArray's constructor sets: its array and dtype, and since
            # pandas 3.1 an empty `_cache` (cache_readonly results); anything else: the public path.
            attributes = set(vars(empty))
            if not {"_pa_array", "_dtype"} <= attributes <= {"_pa_array", "_dtype", "_cache"}:
                raise TypeError(f"ArrowStringArray sets {sorted(attributes)}")
            self.string_cache = "_cache" in attributes
            self.array_import = pa.Array._import_from_c
            self.chunked_array = pa.chunked_array
        self.dtypes = {"int64": self.int64, "float64": np.dtype("float64"), "bool": pd.BooleanDtype(),
                       "timestamp": self.utc_us, "json": np.dtype(object), "date": self.days,
                       "string": self.string_dtype if pa is not None else np.dtype(object)}
        self.layouts: Dict[Tuple[Any, ...], _Layout] = {}
        # The internal constructors (an AttributeError here: this pandas lacks one; the public path is used).
        self.integer_new = getattr(IntegerArray, "_simple_new")
        self.boolean_new = getattr(BooleanArray, "_simple_new")
        self.datetime_new = getattr(DatetimeArray, "_simple_new")
        self.range_new = pd.RangeIndex._simple_new
        # Int64 and UTC timestamp arrays made from the attributes their _simple_new sets (its Python
        # frames and asserts are ~4 % of a 10-record page's frame), when this pandas sets exactly those:
        # an IntegerArray its `_data` and `_mask`; a DatetimeArray NDArrayBacked's values and dtype and
        # its `_freq`. Else their _simple_new (and the first frame's check covers the rest).
        self.int_array = IntegerArray
        self.int_alloc: Any = IntegerArray.__new__
        ints, mask = np.zeros(0, np.int64), np.zeros(0, bool)
        made: Any = self.int_alloc(IntegerArray)
        made._data, made._mask = ints, mask
        self.ints_inline = vars(made) == vars(self.integer_new(ints, mask))
        self.stamp_array = DatetimeArray
        self.stamp_alloc: Any = None
        try:
            from pandas._libs.arrays import NDArrayBacked

            alloc = getattr(getattr(NDArrayBacked, "_simple_new"), "__func__")
            stamps = np.zeros((1, 0), "M8[us]")
            made, public = alloc(DatetimeArray, stamps, self.utc_us), self.datetime_new(stamps, dtype=self.utc_us)
            made._freq = None
            if (type(made) is type(public) and vars(made) == vars(public) and made._ndarray is public._ndarray
                    and made.dtype == public.dtype):
                self.stamp_alloc = alloc
        except (ImportError, AttributeError, TypeError):  # pragma: no cover - another pandas: _simple_new
            pass

    @staticmethod
    def column_kind(col: Dict[str, Any]) -> str:
        """The column's kind in the page (int64, float64, bool, timestamp, json), or date or string."""
        kind = col["kind"]
        if kind in _NUMPY_KINDS or kind == "json":
            return str(kind)
        if col["type"] == "date":
            return "date"
        return "string"

    def layout(self, page: Any, n_columns: int, record: Optional[str] = None) -> _Layout:
        # A page's columns are its record's fields (with verbose: more of them), in the schema
        # table's order: the record and the number of columns identify the layout.
        key = (page.record if record is None else record, n_columns)
        found = self.layouts.get(key)
        if found is None:
            if len(self.layouts) > 256:  # pragma: no cover - many ad hoc layouts
                self.layouts.clear()
            found = self.layouts[key] = _Layout(self, page, self.pa is not None)
        return found

    def frame(self, page: Any, record: Optional[str] = None) -> "pd.DataFrame":
        n = page.rows
        arrays: List[Any] = page._pandas_values()  # numbers as pandas takes them; None for text columns
        lay = self.layout(page, len(arrays), record)
        if lay.arrow:  # one Arrow import (its struct type kept per layout) for the text columns
            capsule, address = page._arrow_text_array()
            texts = self.chunked_array([self.array_import(address, lay.text_struct)]).flatten()
            del capsule  # the struct was moved into pyarrow: the capsule frees the empty shell
            string_array, string_dtype, cache = self.string_array, self.string_dtype, self.string_cache
            new = string_array.__new__
            for i, j in lay.strings:  # an ArrowStringArray from its two (pandas 3.1: three) attributes
                arr = new(string_array)
                arr._pa_array = texts[j]  # a ChunkedArray (one chunk: the page)
                arr._dtype = string_dtype
                if cache:
                    arr._cache = {}
                arrays[i] = arr
            for i, kind, j in lay.other_text:
                column = texts[j]
                if kind == "date":
                    arrays[i] = column.to_numpy(zero_copy_only=False).astype(self.days)  # NaT for nulls; stacked
                else:
                    arrays[i] = _json_values(column.to_pylist(), n)
        elif lay.strings or lay.other_text:  # without pyarrow: text from numpy views of the buffers
            cols = page.columns()
            for i, _ in lay.strings:
                arrays[i] = _python_strings(cols[i], n)
            for i, _, _ in lay.other_text:
                arrays[i] = _pandas_column(self.pd, None, cols[i], n)
        utc_us = self.utc_us
        if self.ints_inline:
            int_array, alloc = self.int_array, self.int_alloc
            for i in lay.ints:
                ints = alloc(int_array)
                ints._data, ints._mask = arrays[i]
                arrays[i] = ints
        else:  # pragma: no cover - a pandas whose IntegerArray has other attributes
            integer_new = self.integer_new
            for i in lay.ints:
                arrays[i] = integer_new(*arrays[i])
        stamp_alloc = self.stamp_alloc
        if stamp_alloc is not None:
            stamp_array = self.stamp_array
            for i in lay.stamps:  # 1 x n, as its block holds it
                arr = stamp_alloc(stamp_array, arrays[i], utc_us)
                arr._freq = None
                arrays[i] = arr
        else:  # pragma: no cover - a pandas whose DatetimeArray is built otherwise
            datetime_new = self.datetime_new
            for i in lay.stamps:
                arrays[i] = datetime_new(arrays[i], dtype=utc_us)
        for i in lay.bools:
            arrays[i] = self.boolean_new(*arrays[i])
        blocks = tuple([klass(arrays[where] if stack is None else self.stack(arrays, where, stack, n), place, 2, None)
                        for klass, where, stack, place in lay.blocks])
        axes = [lay.columns._view(), self.range_new(range(n))]
        mgr = self.BlockManager(blocks, axes, verify_integrity=False)
        df = self.from_mgr(mgr, axes)
        if not lay.verified:  # the first frame of a layout: the same as pandas' public construction?
            sample, lay.sample, lay.verified = lay.sample, None, True  # (the sample's own frame: verified)
            _check_same(self.pd, df if sample is page else self.frame(sample, record), lay.reference)
            lay.reference = None
        return df

    def stack(self, arrays: List[Any], where: Tuple[int, ...], dtype: Any, n: int) -> Any:
        """Columns of one numpy dtype stacked into one block's values (a copy), as pandas stacks them."""
        values = self.np.empty((len(where), n), dtype=dtype)
        for row, i in enumerate(where):
            values[row] = arrays[i]
        return self.datetime_new(values, dtype=dtype) if dtype.kind == "M" else values


#: The rows of a layout's first page its fast frame is checked on (all of a page up to this size).
_CHECK_ROWS = 1000


def _check_sample(np: Any, page: Any) -> Any:
    """``page``, or when it has more than :data:`_CHECK_ROWS` rows a page of that many rows spread
    evenly over it (first and last included), with its columns."""
    if page.rows <= _CHECK_ROWS:
        return page
    rows = np.unique(np.linspace(0, page.rows - 1, _CHECK_ROWS).astype(np.int64))
    names = list(page.column_names)
    return _core.client.gather([(page, rows, names, names)], len(rows), page.record)


def _check_same(pd: Any, fast: Any, public: Any) -> None:
    pd.testing.assert_frame_equal(fast, public, check_exact=True)
    if [b.dtype for b in fast._mgr.blocks] != [b.dtype for b in public._mgr.blocks]:
        raise AssertionError("other blocks than pandas' own construction")


_FAST: Dict[str, Any] = {}


def _fall_back(pd: Any, pa: Any, why: str) -> None:
    """Log (a warning; _FAST then keeps the decision for the process) that DataFrames are built by the public path from now on."""
    logger.warning("DataFrames of pages are built by pandas' public constructors (slower on small pages):"
                   " the fast path does not work with pandas %s%s: %s", pd.__version__,
                   f" and pyarrow {pa.__version__}" if pa is not None else " without pyarrow", why)


def _fast_frames(pd: Any, pa: Any) -> Optional[_FastFrames]:
    """The fast path for this pandas (and pyarrow or not), or None if it lacks an internal."""
    key = "arrow" if pa is not None else "numpy"
    if key not in _FAST:
        try:
            _FAST[key] = _FastFrames(pd, pa)
        except (ImportError, AttributeError, TypeError) as e:  # another pandas
            _fall_back(pd, pa, f"this pandas lacks an internal the fast path uses ({type(e).__name__}: {e})")
            _FAST[key] = None
    return _FAST[key]  # type: ignore[no-any-return]


def arrow_type(pa: Any, schema_type: str) -> Any:
    """The Arrow type of a schema type (the table in the module docstring; nested -> large_string)."""
    return {
        "int": pa.int64(), "int64": pa.int64(), "decimal": pa.float64(), "float": pa.float64(),
        "bool": pa.bool_(), "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"),
    }.get(schema_type, pa.large_string())


def arrow_to_pandas(table: "pa.Table") -> "pd.DataFrame":
    """An Arrow table typed by :func:`arrow_type` -> a DataFrame with the dtypes of ``page_to_pandas``
    (:data:`PANDAS_DTYPES`) and, in ``df.attrs``, the labels of the table's schema metadata
    (:data:`SYNTHETIC_ATTR`, :data:`ALWAYS_NULL_ATTR`)."""
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
    df.attrs.update(_labels_of(table))  # the synthetic and null columns the table's metadata names
    return df


def empty_page(record: str, verbose: bool = False) -> Any:
    """A Page with the record's columns (with verbose: the verbose-only ones too) and no rows."""
    return _core.client.decode(b"[]", record, Shape.ARRAY.value, "", verbose)


def concat_or_empty(pages: Sequence[Any], record: str, verbose: bool = False) -> Any:
    """One core page from several (an empty one with the record's columns if there are none).

    The sources are emptied by the concatenation: pass copies (``page.copy()``) of pages kept elsewhere.
    """
    if not pages:
        return empty_page(record, verbose)
    return pages[0] if len(pages) == 1 else _core.client.concat(list(pages))


def page_to_pandas(page: Any) -> "pd.DataFrame":
    """One core Page -> DataFrame (column buffers wrapped, not copied through Python objects)."""
    pa = _pyarrow()
    fast = _FAST.get("arrow" if pa is not None else "numpy", _FAST)  # (no import statement once decided)
    if fast is _FAST:
        import pandas as pd

        fast = _fast_frames(pd, pa)
    if fast is not None:
        record = page.record
        try:
            return _labelled(fast.frame(page, record), page, record)
        except (AttributeError, TypeError, ValueError, AssertionError) as e:  # another pandas
            _fall_back(fast.pd, fast.pa, f"its frame of a page of {page.record} records differs from pandas' public construction"
                       f" or failed ({type(e).__name__}: {str(e)[:200]})")
            _FAST.clear()
            _FAST["arrow"] = _FAST["numpy"] = None
    return _labelled(_page_to_pandas_public(page), page)


def pages_to_pandas(pages: Sequence[Any], record: Optional[str] = None) -> "pd.DataFrame":
    """Several pages of one record -> one DataFrame (pages are concatenated in C++ and emptied)."""
    if not pages:
        if record is None:
            raise ValueError("no pages and no record name: cannot build the columns")
        return page_to_pandas(empty_page(record))
    page = pages[0] if len(pages) == 1 else _core.client.concat(list(pages))
    return page_to_pandas(page)


def page_to_arrow(page: Any) -> "pa.Table":
    """One core Page -> Arrow table (the page's C export imported: ``pa.table(page)`` gives the same;
    a page of :data:`NULL_LABELLED_RECORDS` also names its null columns in the schema metadata)."""
    pa = _pyarrow()
    if pa is None:
        raise ImportError("to_arrow() needs pyarrow: pip install 'pyvehicledata[arrow]'")
    return with_null_columns(pa.Table.from_batches([_batch(pa, page)]), null_columns(page))


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


def _polars() -> Any:
    try:
        import polars
    except ImportError:
        raise ImportError("to_polars() needs polars: pip install 'pyvehicledata[polars]'") from None
    return polars


def page_to_polars(page: Any) -> "pl.DataFrame":
    """One core Page -> polars DataFrame, imported by polars from the page's Arrow C Data Interface
    export: the types of the Arrow column of the module docstring's table (Int64, Float64, Boolean,
    String, Date, Datetime("us", "UTC"); nested columns stay JSON text, String). Numbers, timestamps
    and validity are polars views of the page's buffers (not copied); polars converts text to its own
    string layout."""
    pl = _polars()
    note_null_columns(null_columns(page), page.rows)  # (polars keeps no metadata: the warning only)
    unnest = _polars_unnest()
    if unnest is not None:
        return unnest(page)  # type: ignore[no-any-return]
    return pl.DataFrame(page)  # type: ignore[no-any-return]


@lru_cache(maxsize=1)
def _polars_unnest() -> Any:
    """What ``pl.DataFrame(page)`` does for an object with ``__arrow_c_array__`` (polars
    ``pycapsule_to_frame``: the struct array imported as a Series, unnested), without the checks of
    the DataFrame constructor, a sizeable share of a small page's cost (docs/performance.md,
    section 1); None with a polars without these internals (then ``pl.DataFrame(page)``)."""
    try:
        from polars._plr import PySeries
        from polars._utils.wrap import wrap_df

        from_array, unnest = PySeries.from_arrow_c_array, PySeries.struct_unnest
    except (ImportError, AttributeError):  # pragma: no cover - another polars (the extra's floor: 1.22)
        return None
    return lambda page: wrap_df(unnest(from_array(page)))


@overload
def frame_from_bytes(body: bytes, record: str = ..., shape: Union[Shape, str] = ...,
                     kind: Literal["pandas"] = ...) -> "pd.DataFrame": ...


@overload
def frame_from_bytes(body: bytes, record: str = ..., shape: Union[Shape, str] = ...,
                     *, kind: Literal["polars"]) -> "pl.DataFrame": ...


def frame_from_bytes(body: bytes, record: str = "trim", shape: Union[Shape, str] = Shape.ENVELOPE,
                     kind: str = "pandas") -> Union["pd.DataFrame", "pl.DataFrame"]:
    """Decode a response body straight to a DataFrame (benchmarks, offline files): a pandas one,
    or with ``kind="polars"`` a polars one (:func:`page_to_polars`).  ``shape``: how the body is
    laid out (a :class:`vehicledata.schema.Shape`, or its name)."""
    if kind not in ("pandas", "polars"):
        raise ValueError(f"kind must be 'pandas' or 'polars', not {kind!r}")
    page = _core.client.decode(body, record, str(shape), "")
    return page_to_polars(page) if kind == "polars" else page_to_pandas(page)


__all__ = ["page_to_pandas", "pages_to_pandas", "page_to_arrow", "pages_to_arrow", "page_to_polars",
           "frame_from_bytes",
           "arrow_type", "arrow_to_pandas", "pandas_dtype", "PANDAS_DTYPES", "ArrowStream", "SYNTHETIC_ATTR",
           "ALWAYS_NULL_ATTR", "NULL_LABELLED_RECORDS", "null_columns", "note_null_columns", "with_null_columns"]
