"""VINs on the client: local validation (the emulator's C++ rules, no request), the typed
record of ``Client.vin``, and the offline ``Decoder`` (the emulator's decoder over a built
dataset's vPIC tables, in process: ``decode``, ``decode_many``; docs/vin.md).

    >>> import vehicledata as vd
    >>> vd.vin.validate(" 1gtg6cen0l1139305 ")
    '1GTG6CEN0L1139305'
    >>> vd.vin.validate("1GTG6CEN0L113930")
    Traceback (most recent call last):
    ...
    vehicledata.errors.QueryError: Invalid VIN '1GTG6CEN0L113930': expected 17 characters, got 16

The rules (docs/emulator.md): 17 characters; every character in the VIN alphabet (0-9, A-Z
without I, O, Q); position 9 (check digit) 0-9 or X; position 10 (model year) a model year code.
A check digit that does not compute is not an error here: the service still decodes such a VIN
and reports vPIC's error code 1 in ``specs["error_code"]``; ``check_digit`` computes it.
"""
from __future__ import annotations

import concurrent.futures
import os
import threading
from pathlib import Path
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union, cast

from . import _core
from .errors import NotFoundError, QueryError, VehicleDataError, excerpt, quoted, text_problem
from .pager import Record

__all__ = ["validate", "check_digit", "VinResult", "Decoder", "COLUMNS", "DASK_CONFIG", "MAX_THREADS",
           "ParquetSourceError"]


#: The most worker threads ``decode_many`` and ``decode_parquet`` take.
MAX_THREADS = 1024


def _text(vin: Any) -> str:
    """``vin`` checked as text the C++ core can take: a str that encodes as UTF-8 (QueryError otherwise:
    another type, or a lone surrogate such as ``"\\ud800"``)."""
    if not isinstance(vin, str):
        raise QueryError(f"vin must be a string, not {type(vin).__name__}", field="vin")
    problem = text_problem(vin)
    if problem:
        raise QueryError(f"Invalid VIN {quoted(vin)}: not valid text ({problem})", field="vin")
    return vin


def validate(vin: str) -> str:
    """The VIN normalized (spaces stripped, upper-cased); raises QueryError naming the broken rule (a
    VIN of more than 200 bytes echoed cut, its length named)."""
    problem = _core.vin_invalid_message(_text(vin))
    if problem:
        raise QueryError(problem, field="vin")
    return cast(str, _core.vin_normalize(vin))


def check_digit(vin: str) -> str:
    """The check digit position 9 should hold (49 CFR 565.15), for a VIN that ``validate`` accepts."""
    return cast(str, _core.vin_check_digit(validate(vin)))


class VinResult(Record):
    """The answer of ``Client.vin``: the decoded ``year``, ``make``, ``model``, ``trim``, the vPIC
    elements as ``specs`` (snake_case name -> string or None) and the catalogue's ``trims``
    (legacy trim records, best match first)."""

    __slots__ = ()

    @property
    def year(self) -> int:
        return cast(int, self._data["year"])

    @property
    def make(self) -> str:
        return cast(str, self._data["make"])

    @property
    def model(self) -> str:
        return cast(str, self._data["model"])

    @property
    def trim(self) -> Optional[str]:
        return cast(Optional[str], self._data["trim"])

    @property
    def specs(self) -> Mapping[str, Optional[str]]:
        return cast(Mapping[str, Optional[str]], self._data["specs"])

    @property
    def trims(self) -> List[Record]:
        return cast(List[Record], self._data["trims"])

    def __repr__(self) -> str:
        return f"VinResult(year={self.year!r}, make={self.make!r}, model={self.model!r}, trim={self.trim!r}, " \
               f"specs=<{len(self.specs)} elements>, trims=<{len(self.trims)} trims>)"

    @classmethod
    def of(cls, record: Record) -> "VinResult":
        data: Any = record._data
        return cls(data)


#: The columns of ``Decoder.decode_many``'s table, in order (docs/vin.md).
COLUMNS: Tuple[str, ...] = tuple(_core.VinDecoder.columns())

#: The Dask configuration of docs/vin.md's recipe, for ``dask.config.set`` around the cluster's
#: start (its worker processes get it from their nanny): the event loops' tick monitor every second
#: instead of every 20 ms, and the workers' sampling profiler off. Both are diagnostics (warnings of
#: a blocked event loop, the dashboard's profile page) that take CPU whether or not tasks run: an
#: idle two-worker LocalCluster here spends about 110 ms of CPU a second with Dask's defaults, about
#: 35 with these, and decoding that keeps every core busy loses that share.
DASK_CONFIG: Mapping[str, Any] = MappingProxyType({"distributed.admin.tick.interval": "1s",
                                                  "distributed.worker.profile.enabled": False})

# One C++ decoder per dataset file and process: a Decoder unpickled in a worker opens the
# tables once, however many Decoders of the same path it receives.  The tables load on a thread of
# their own (about 2 s, in C++ with the GIL released) that the caller waits for in 0.1 s steps, so
# that Ctrl-C (any exception a signal handler raises) stops Decoder() at once: the load goes on, and
# the next Decoder of the path takes it (not a daemon thread: an exit waits for the load to end).
_OPEN: Dict[str, "_core.VinDecoder"] = {}
_LOADING: Dict[str, "concurrent.futures.Future[_core.VinDecoder]"] = {}
_OPEN_LOCK = threading.Lock()


def _load(path: str, future: "concurrent.futures.Future[_core.VinDecoder]") -> None:
    try:
        core = _core.VinDecoder(path)
    except BaseException as e:  # handed to the callers waiting
        with _OPEN_LOCK:
            _LOADING.pop(path, None)
        future.set_exception(e)
        return
    with _OPEN_LOCK:
        _OPEN[path] = core
        _LOADING.pop(path, None)
    future.set_result(core)


def _open(path: str) -> "_core.VinDecoder":
    with _OPEN_LOCK:
        core = _OPEN.get(path)
        if core is not None:
            return core
        future = _LOADING.get(path)
        if future is None:
            future = _LOADING[path] = concurrent.futures.Future()
            threading.Thread(target=_load, args=(path, future), name="vehicledata-vin-load").start()
    while True:
        try:
            return future.result(timeout=0.1)  # between the steps Python runs its signal handlers
        except concurrent.futures.TimeoutError:
            continue
        except ValueError as e:
            raise FileNotFoundError(str(e)) from None


class Decoder:
    """VINs decoded offline, as ``Client.vin`` decodes them (the same C++ decoder, vPIC tables and
    trim ranking as the emulator's ``/api/vin/{vin}``), over a built dataset.

    ``path``: the dataset database (``vehicledata.db``, beside the vPIC file its meta names,
    ``vpic-<id>.db``); default the one the emulator reads (``$VEHICLEDATA_HOME``, see
    ``vehicledata.dataset.paths``).  A missing or foreign database, and a vPIC file that is missing,
    damaged or incomplete (another size than the build wrote, not SQLite, a table missing), raise
    ``FileNotFoundError`` with one line naming the file, before anything is decoded.  The tables are
    read once per process (about 2 s, on a thread of their own: Ctrl-C stops the call at once, the
    load goes on for the next Decoder of the path); a Decoder pickles as its path.
    """

    __slots__ = ("_path", "_core")

    def __init__(self, path: Union[str, "os.PathLike[str]", None] = None) -> None:
        if path is None:
            from .dataset.paths import default_db_path

            path = default_db_path()
        self._path = str(Path(path).expanduser().resolve())
        self._core = _open(self._path)

    @property
    def path(self) -> str:
        return self._path

    def __reduce__(self) -> Tuple[Any, ...]:
        return (Decoder, (self._path,))

    def __repr__(self) -> str:
        return f"Decoder({self._path!r})"

    def decode(self, vin: str, *, all_trims: bool = False) -> VinResult:
        """The ``VinResult`` of ``Client.vin(vin)``: year, make, model, trim and specs equal to the
        API's; ``trims`` the API's trims by id (records of ``id`` only; ``Client.trims.get`` has the
        rest).  Raises QueryError where the API answers 400 (a VIN of more than 200 bytes echoed cut, its
        length named; also for text that is not valid, a lone surrogate), NotFoundError where it answers 404;
        QueryError for an ``all_trims`` that is not a bool."""
        from ._values import is_bool

        if not is_bool(all_trims):
            raise QueryError(f"all_trims must be True or False, not {type(all_trims).__name__} "
                             f"{excerpt(repr(all_trims))}", field="all_trims")
        kind, message, record = self._core.decode(_text(vin), bool(all_trims))
        if kind == "invalid":
            raise QueryError(message, field="vin")
        if kind == "not_found":
            raise NotFoundError(message, status=404, exception="NotFoundException")
        data = dict(record or {})
        data["trims"] = [Record({"id": i}) for i in data.pop("trim_ids")]
        return VinResult(data)

    def decode_many(self, vins: Any, *, threads: Optional[int] = None) -> Any:
        """A ``pyarrow.Table`` with one row per VIN, in order (columns: ``COLUMNS``; docs/vin.md).

        ``vins``: a list or tuple of strings, a numpy array, a pandas or polars Series, or anything
        with ``__arrow_c_array__`` / ``__arrow_c_stream__``.  Decoded in C++ on ``threads`` workers
        (default: one per CPU, at most ``MAX_THREADS``) with the GIL released.  A VIN the API would
        refuse gets its row with ``error_code`` ``invalid_vin`` or ``not_found`` and the API's message
        in ``error_text``; nothing in the batch raises.  Input that is not text raises QueryError before
        any decoding: a string that does not encode as UTF-8 (a lone surrogate), an Arrow string array
        holding bytes that are not UTF-8, values Arrow cannot cast to strings.  Ctrl-C (any exception
        a signal handler raises) stops the workers within about 50 ms and is raised as raised."""
        import pyarrow as pa

        threads = _threads(threads)
        batches = []
        for chunk in _string_chunks(vins):
            schema_capsule, array_capsule = chunk.__arrow_c_array__()
            for page in self._core.decode_arrow(schema_capsule, array_capsule, threads):
                batches.append(pa.record_batch(page))
        if not batches:
            return _empty_table()
        return pa.Table.from_batches(batches)

    def decode_pandas(self, vins: Any, *, threads: Optional[int] = None) -> Any:
        """``decode_many`` as a pandas DataFrame with Arrow-backed columns (``pd.ArrowDtype``), on the
        index of ``vins`` when it has one: the shape of a Dask ``map_partitions`` step (docs/vin.md);
        ``decode_pandas([])`` is its ``meta``."""
        import pandas as pd

        table = self.decode_many(vins, threads=threads) if len(vins) else _empty_table()
        frame = table.to_pandas(types_mapper=pd.ArrowDtype)
        if isinstance(vins, pd.Series):
            frame.index = vins.index
        return frame

    def decode_parquet(self, src: Union[str, "os.PathLike[str]"], dst: Union[str, "os.PathLike[str]"], *,
                       column: str = "vin", batch_rows: int = 65_536, threads: Optional[int] = None,
                       progress: Optional[bool] = True) -> int:
        """Decodes the ``column`` of the Parquet file ``src`` into the Parquet file ``dst`` (the
        ``decode_many`` columns, one row per input row, in order), ``batch_rows`` at a time: memory
        stays bounded whatever the file's size.  ``progress``: a tqdm bar of the rows (when tqdm is
        installed).  Returns the number of rows written.

        Refused before anything is written: a ``dst`` that is ``src`` (the same path, or any path to
        the same file: a symlink, ``../``, a hard link), a ``column`` that is missing or does not hold
        strings (its Arrow type named): ``QueryError``.  A ``src`` that cannot be read as Parquet (not
        Parquet, truncated, unreadable) raises ``ParquetSourceError``; a missing one ``FileNotFoundError``.

        The rows go to a temporary file beside ``dst`` (``.<dst name>.<random>.tmp``), renamed to
        ``dst`` at the end (``os.replace``): a reader never sees a half-written ``dst``, and a failed
        or interrupted call leaves ``dst`` as it was, except that a row group that cannot be read
        raises ``ParquetSourceError`` naming the file and the group after its valid file of the rows of
        the groups before it has been renamed to ``dst``."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not isinstance(batch_rows, int) or isinstance(batch_rows, bool) or batch_rows < 1:
            raise QueryError(f"batch_rows must be a positive int, not {batch_rows!r}", field="batch_rows")
        threads = _threads(threads)
        src_path, dst_path = Path(os.fspath(src)), Path(os.fspath(dst))
        if not src_path.exists():
            raise FileNotFoundError(f"{src}: no such Parquet file")
        if _same_file(src_path, dst_path):
            raise QueryError(f"dst {str(dst)!r} is the source file {str(src)!r} (resolved: {src_path.resolve()}): "
                             "decode_parquet never writes over what it reads; choose another dst", field="dst")
        try:
            source = pq.ParquetFile(src_path)
            arrow_schema = source.schema_arrow
        except Exception as e:  # ArrowInvalid (not Parquet), OSError (truncated, unreadable)...
            raise ParquetSourceError(f"{src}: cannot be read as Parquet: {excerpt(str(e))}", path=str(src),
                                     row_group=None) from e
        if column not in arrow_schema.names:
            raise QueryError(f"{src}: no column {column!r} (columns: {', '.join(arrow_schema.names)})",
                             field="column")
        kind = arrow_schema.field(column).type
        value_kind = kind.value_type if pa.types.is_dictionary(kind) else kind
        if not (pa.types.is_string(value_kind) or pa.types.is_large_string(value_kind)
                or getattr(pa.types, "is_string_view", lambda t: False)(value_kind)):
            raise QueryError(f"{src}: column {column!r} holds {kind}, not strings: VINs are text (write the column "
                             "as strings, e.g. pyarrow.compute.cast(column, pyarrow.string()), then decode it)",
                             field="column")
        if dst_path.is_symlink():  # written where the link points, as a write through it would be
            dst_path = dst_path.resolve()
        bar = _progress_bar(progress, source.metadata.num_rows, "VINs")
        tmp = _temporary_beside(dst_path)
        writer = None
        rows = 0
        keep = False  # rename the temporary file to dst (success, or the rows before a broken row group)
        try:
            for group in range(source.num_row_groups):
                batches = source.iter_batches(batch_size=batch_rows, row_groups=[group], columns=[column])
                while True:
                    try:
                        batch = next(batches)
                    except StopIteration:
                        break
                    except Exception as e:  # pyarrow raises OSError, ArrowInvalid... for a corrupt group
                        keep = True
                        raise ParquetSourceError(f"{src}: row group {group} cannot be read: {excerpt(str(e))}",
                                                 path=str(src), row_group=group) from e
                    table = self.decode_many(batch.column(0), threads=threads)
                    if writer is None:
                        writer = pq.ParquetWriter(tmp, table.schema)
                    writer.write_table(table)
                    rows += table.num_rows
                    if bar is not None:
                        bar.update(table.num_rows)
            if writer is None:
                writer = pq.ParquetWriter(tmp, _empty_table().schema)
            keep = True
        finally:
            try:
                if writer is not None:
                    writer.close()
                if keep:
                    if writer is None:  # a broken first row group: dst holds no rows
                        pq.ParquetWriter(tmp, _empty_table().schema).close()
                    os.replace(tmp, dst_path)
            finally:
                if tmp.exists():
                    tmp.unlink()
                if bar is not None:
                    bar.close()
        return rows


def _threads(threads: Any) -> int:
    """The worker count of a batch: ``threads``, or one per CPU for None; QueryError outside 1..MAX_THREADS."""
    if threads is None:
        return min(MAX_THREADS, max(1, _core.VinDecoder.hardware_threads() or os.cpu_count() or 1))
    if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= MAX_THREADS:
        if isinstance(threads, bool) or not isinstance(threads, int):
            shown = type(threads).__name__
        else:
            shown = str(threads) if abs(threads) < 10**18 else f"an int of {threads.bit_length()} bits"
        raise QueryError(f"threads must be an int from 1 to {MAX_THREADS}, not {shown}", field="threads")
    return threads


def _same_file(src: Path, dst: Path) -> bool:
    """Whether ``dst`` names the file ``src`` is (the same path resolved, or the same inode)."""
    if src.resolve() == dst.resolve():
        return True
    try:
        return os.path.samefile(src, dst)
    except OSError:  # dst does not exist (yet)
        return False


def _temporary_beside(dst: Path) -> Path:
    """A new file name in ``dst``'s directory (the rename to ``dst`` stays on one file system)."""
    import secrets

    return dst.parent / f".{dst.name}.{secrets.token_hex(6)}.tmp"


class ParquetSourceError(VehicleDataError):
    """A Parquet source that cannot be read: ``path`` names the file, ``row_group`` the group that
    cannot be read (None when the file itself cannot be opened as Parquet: not Parquet, truncated)."""

    path: str
    row_group: Optional[int]


def _progress_bar(progress: Optional[bool], total: int, unit: str) -> Any:
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        import warnings

        warnings.warn("progress bars need tqdm: pip install 'pyvehicledata[progress]'", stacklevel=3)
        return None
    return tqdm(total=total, unit=unit, unit_scale=True)


def _empty_table() -> Any:
    import pyarrow as pa

    types = {"year": pa.int64(), "trim_id": pa.int64()}
    return pa.table({name: pa.array([], type=types.get(name, pa.large_string())) for name in COLUMNS})


def _string_chunks(vins: Any) -> List[Any]:
    """``vins`` as pyarrow large_string arrays (the chunks of a chunked input)."""
    import pyarrow as pa

    if isinstance(vins, str):
        raise QueryError("vins must be a sequence of VINs, not one string (use Decoder.decode)", field="vins")
    module = type(vins).__module__.split(".")[0]
    data: Any
    foreign = True  # Arrow buffers made elsewhere (False: by pa.array from Python or numpy values here)
    if isinstance(vins, (pa.Array, pa.ChunkedArray)):
        data = vins
    elif module == "polars":
        data = vins.to_arrow()
    elif module == "pandas" or module == "numpy":
        data = _from_values(vins)
        foreign = module == "pandas" and isinstance(data, (pa.Array, pa.ChunkedArray)) and _arrow_backed(vins)
    elif hasattr(vins, "__arrow_c_array__"):
        data = pa.array(vins)
    elif hasattr(vins, "__arrow_c_stream__"):
        if not hasattr(pa.ChunkedArray, "__arrow_c_stream__"):  # pyarrow < 16 reads no Arrow C streams of arrays
            raise QueryError(f"vins: an Arrow C stream needs pyarrow >= 16 (this is pyarrow {pa.__version__}); "
                             "pass an array, a list or a Series", field="vins")
        data = pa.chunked_array(vins)
    else:
        data = _from_values(list(vins))
        foreign = False
    chunks = data.chunks if isinstance(data, pa.ChunkedArray) else [data]
    out = []
    at = 0  # the row of the input where the chunk starts
    for chunk in chunks:
        if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
            try:
                chunk = chunk.cast(pa.large_string())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise QueryError(f"vins must be strings, not Arrow {chunk.type}: {excerpt(str(e))}",
                                 field="vins") from None
        elif foreign:
            # Buffers this function did not make: their text is checked as Arrow requires it (UTF-8).
            try:
                chunk.validate(full=True)
            except pa.ArrowInvalid as e:
                raise QueryError(f"vins: the Arrow string array (rows {at} to {at + len(chunk) - 1} of the input) is "
                                 f"not valid: {excerpt(str(e))}", field="vins") from None
        at += len(chunk)
        out.append(chunk)
    return out


def _from_values(values: Any) -> Any:
    """Python or numpy values -> an Arrow string array (None/NaN -> null, other objects -> str)."""
    import pyarrow as pa

    try:
        return pa.array(values, type=pa.large_string(), from_pandas=True)
    except UnicodeEncodeError:
        _refuse_unencodable(values)
        raise
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError):
        pass  # e.g. a numpy unicode array on pyarrow < 16 (no large_string conversion): element by element
    items = values.tolist() if hasattr(values, "tolist") else list(values)
    try:
        return pa.array([None if v is None or v != v else str(v) for v in items], type=pa.large_string())
    except UnicodeEncodeError:
        _refuse_unencodable(items)
        raise


def _arrow_backed(series: Any) -> bool:
    """Whether a pandas Series holds Arrow arrays (``pd.ArrowDtype``, ``string[pyarrow]``): their buffers
    were made elsewhere."""
    return "arrow" in str(getattr(series, "dtype", "")).lower() or "pyarrow" in repr(getattr(series, "dtype", ""))


def _refuse_unencodable(values: Any) -> None:
    """QueryError naming the first value of ``values`` that does not encode as UTF-8 (a lone surrogate)."""
    items = values.tolist() if hasattr(values, "tolist") else values
    for i, v in enumerate(items):
        problem = text_problem(v) if isinstance(v, str) else None
        if problem:
            raise QueryError(f"vins[{i}] {quoted(v)} is not valid text ({problem})", field="vins")
