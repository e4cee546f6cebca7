"""The bulk data feed: ``api.data_feed``.

    api.data_feed.last_updated()            # "2023-01-01 12:00:00" (US Eastern, as served)
    path = api.data_feed.download("feed.zip", progress=True)
    frames = api.data_feed.load("feed.zip") # {"trims": DataFrame, ...}

``download`` streams to ``<path>.part`` (resuming a partial file with a Range
request, also after a dropped connection), verifies the ZIP (central directory
and every member's CRC) and renames it into place atomically.  The feed needs
an account with the data-feed product (``PermissionDeniedError`` otherwise).
"""
from __future__ import annotations

import io
import os
import re
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import frames, schema
from .errors import DecodeError, QueryError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pyarrow as pa

    from ._fetcher import Fetcher

#: The feed's two endpoints (schema table), and their paths.
DOWNLOAD_ENDPOINT = schema.endpoint_for(schema.Kind.FEED_DOWNLOAD)
LAST_UPDATED_ENDPOINT = schema.endpoint_for(schema.Kind.FEED_LAST_UPDATED)
DOWNLOAD_PATH = DOWNLOAD_ENDPOINT.path
LAST_UPDATED_PATH = LAST_UPDATED_ENDPOINT.path


#: Largest uncompressed feed member ``load()`` reads (bytes); the real feed's largest is ~100 MB.
#: A member that declares more is refused with DecodeError before anything is inflated.
MAX_MEMBER_BYTES = 512 * 1024 * 1024

#: Largest total of the uncompressed members ``load()`` reads (and ``verify_zip`` inflates) at
#: once (the real feed: ~109 MB in all; the frames of one call hold a few times this much).  More
#: is refused with LimitError (``limit="max_total_bytes"``) before anything is inflated.
MAX_TOTAL_BYTES = 512 * 1024 * 1024

#: Largest download ``download()`` writes (bytes; curl's ``--max-filesize``): LimitError past it.
MAX_DOWNLOAD_BYTES = 2 * 1024 * 1024 * 1024

#: Total seconds ``download()`` may take, retries and waits included: Timeout past it.
DOWNLOAD_TIMEOUT = 3600.0


def check_layout(zf: zipfile.ZipFile, url: str = "") -> None:
    """Raise DecodeError unless the members of ``zf`` lie one after the other without overlapping,
    before the central directory (CPython's check against quoted-overlap ZIP bombs, CVE-2024-0450:
    one compressed member listed many times would be inflated once per listing)."""
    fp = zf.fp
    assert fp is not None
    infos = sorted(zf.infolist(), key=lambda i: i.header_offset)
    end_of_data = zf.start_dir  # type: ignore[attr-defined]
    for n, info in enumerate(infos):
        fp.seek(info.header_offset)
        head = fp.read(30)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            raise DecodeError(f"the data feed's member {info.filename!r} has no local header at offset "
                              f"{info.header_offset}", url=url, member=info.filename)
        data_start = info.header_offset + 30 + int.from_bytes(head[26:28], "little") + \
            int.from_bytes(head[28:30], "little")
        limit = infos[n + 1].header_offset if n + 1 < len(infos) else end_of_data
        if data_start + info.compress_size > limit:
            raise DecodeError(f"the data feed's member {info.filename!r} overlaps the next entry (a ZIP whose "
                              f"members share their data is refused)", url=url, member=info.filename)


def _check_total(infos: Sequence[zipfile.ZipInfo], max_total_bytes: int, url: str = "") -> None:
    from .errors import LimitError

    total = sum(i.file_size for i in infos)
    if max_total_bytes > 0 and total > max_total_bytes:
        raise LimitError(f"the data feed's members are {total:,} bytes uncompressed in total, over "
                         f"max_total_bytes={max_total_bytes:,}", url=url, limit="max_total_bytes")


def verify_zip(path: Union[str, "os.PathLike[str]"], url: str = "", *,
               max_total_bytes: int = MAX_TOTAL_BYTES) -> None:
    """Raise DecodeError unless ``path`` is a complete ZIP whose members lie apart (``check_layout``)
    and pass their CRC check; LimitError when they declare more than ``max_total_bytes``
    uncompressed in total (so the check inflates a bounded amount)."""
    try:
        with zipfile.ZipFile(path) as zf:
            check_layout(zf, url)
            _check_total(zf.infolist(), max_total_bytes, url)
            bad = zf.testzip()
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
        raise DecodeError(f"the data feed is not a valid ZIP archive: {exc}", url=url) from None
    if bad is not None:
        raise DecodeError(f"the data feed's member {bad!r} fails its CRC check", url=url)


_ARROW_ERROR = re.compile(r"In CSV column #(\d+): (?:Row #(\d+): )?(.*)", re.S)
_INVALID_VALUE = re.compile(r"invalid value '(.*)'$", re.S)


def feed_tables() -> List[str]:
    """Tables of the data feed, one ``<table>.csv`` member each (the primary records of the schema)."""
    return [r.table for r in schema.records().values() if r.primary and r.table]


def _arrow_schema(pa: Any, table: str, columns: Sequence[str]) -> Dict[str, Any]:
    """Arrow types of a feed CSV's columns, from the schema table through frames.arrow_type."""
    try:
        rec = schema.table_record(table)
    except KeyError:
        return {}
    types = {f.name: f.type for f in rec.fields}
    return {c: frames.arrow_type(pa, types[c]) for c in columns if c in types}


class _Counted(io.RawIOBase):
    """A read-only stream that reports the bytes read (progress bar)."""

    def __init__(self, raw: Any, on_read: Any) -> None:
        self._raw, self._on_read = raw, on_read

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self._raw.read(len(b))
        b[:len(data)] = data
        if data and self._on_read is not None:
            self._on_read(len(data))
        return len(data)


def _header(head: bytes) -> List[str]:
    first_line = head.split(b"\n", 1)[0].decode("utf-8", "replace").strip("\r")
    return [c.strip('"') for c in first_line.split(",")] if first_line else []


def _line_of(reopen: Any, column: str, value: str) -> Optional[int]:
    """The CSV line (1 = header) where ``column`` first holds ``value`` (the error path only)."""
    import pyarrow as pa
    from pyarrow import compute, csv

    try:
        with reopen() as fh:
            col = csv.read_csv(fh, convert_options=csv.ConvertOptions(
                include_columns=[column], column_types={column: pa.large_string()}))[column]
    except Exception:  # pragma: no cover - the member was readable a moment ago
        return None
    index = compute.index(col, pa.scalar(value, pa.large_string())).as_py()
    return index + 2 if index is not None and index >= 0 else None


def read_feed_csv(fh: Any, table: str, member: str = "", reopen: Any = None,
                  columns: Optional[List[str]] = None) -> "pa.Table":
    """One feed CSV as an Arrow table with the schema's types (those of the API frames).

    A value that does not fit its column's type raises DecodeError naming the member, the CSV
    line (1 = header; found by reading the column again through ``reopen()``, a callable giving a
    fresh stream of the member) and the column."""
    import pyarrow as pa
    from pyarrow import csv

    member = member or f"{table}.csv"
    reader = fh
    if columns is None:  # the header, for the column types
        reader = io.BufferedReader(fh if isinstance(fh, io.RawIOBase) else _Counted(fh, None), buffer_size=1 << 20)
        columns = _header(bytes(reader.peek(1 << 16)))
    types = _arrow_schema(pa, table, columns)
    convert = csv.ConvertOptions(column_types=types, strings_can_be_null=True, null_values=[""],
                                 quoted_strings_can_be_null=False)
    try:
        # pyarrow's default 1 MiB blocks: parsing (threads) overlaps inflating; 8 MiB blocks cost ~15% (feed_load).
        return csv.read_csv(reader, convert_options=convert)
    except pa.ArrowInvalid as exc:
        text = str(exc)
        m = _ARROW_ERROR.search(text)
        if m is None:
            raise DecodeError(f"data feed member {member!r}: {text}", member=member) from None
        col = int(m.group(1))
        name = columns[col] if col < len(columns) else f"#{col}"
        detail = m.group(3).strip()
        row: Optional[int] = int(m.group(2)) if m.group(2) else None
        bad = _INVALID_VALUE.search(detail)
        if row is None and bad is not None and reopen is not None:
            row = _line_of(reopen, name, bad.group(1))
        where = f", line {row}" if row is not None else ""
        wanted = types.get(name)
        raise DecodeError(f"data feed member {member!r}{where}, column {name!r}: {detail}"
                          + (f" (expected {wanted})" if wanted is not None else ""),
                          member=member, row=row, column=name) from None


class FeedDownload:
    """The steps of ``DataFeed.download`` around its transfer (``begin``, then ``failed`` or
    ``finish``, again while ``finish`` answers None): the arguments' checks, the ``.part`` file,
    the bar, the ZIP check, the rename and the one fresh start when a resumed file does not belong
    to the archive.  vd.Client's and vd.AsyncClient's ``data_feed`` both run them."""

    def __init__(self, fetcher: Any, path: Union[str, "os.PathLike[str]"], resume: bool, progress: Optional[bool],
                 timeout: float, max_bytes: int) -> None:
        import time

        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_bytes must be a positive integer, not {max_bytes!r}")
        self._fetcher = fetcher
        self.started = time.monotonic()
        self.resume, self.progress, self.timeout, self.max_bytes = resume, progress, float(timeout), max_bytes
        target = Path(path)
        if target.is_dir():
            target = target / "vehicledata-feed.zip"
        target.parent.mkdir(parents=True, exist_ok=True)
        self.target = target
        self.part = target.with_name(target.name + ".part")
        self._bar: Any = None
        self._existed = False

    def begin(self) -> Optional[Callable[[int, int], None]]:
        """Before the transfer: the progress callback to give it (None: no bar)."""
        bar = self._bar = self._fetcher.progress_bar(self.progress, total=None, desc=self.target.name, unit="B")
        self._existed = self.part.exists()
        if bar is None:
            return None
        state = {"last": 0}

        def on_progress(done: int, total: int) -> None:
            if total > 0 and bar.total != total:
                bar.total = total
            bar.update(done - state["last"])
            state["last"] = done

        return on_progress

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def failed(self, exc: BaseException) -> None:
        """The transfer raised ``exc`` (raised again by the caller)."""
        from .errors import LimitError

        self._close_bar()
        if isinstance(exc, LimitError):
            self.part.unlink(missing_ok=True)  # over max_bytes: resuming it would only grow it further
        elif not self._existed and self.part.exists() and self.part.stat().st_size == 0:
            # A refused download (403, 404, ...) wrote nothing: leave no empty .part behind.
            self.part.unlink(missing_ok=True)

    def finish(self, result: Dict[str, Any]) -> Optional[Path]:
        """The transfer ended with ``result``: the verified file renamed into place (its path), or
        None when the resumed ``.part`` did not belong to the archive: transfer again from the start
        (``resume`` off, ``timeout`` what is left).  Reads the whole file (the ZIP check)."""
        import time

        self._close_bar()
        url = self._fetcher.url_for(DOWNLOAD_PATH)
        try:
            verify_zip(self.part, url)
        except DecodeError:
            self.part.unlink(missing_ok=True)
            if not result.get("resumed"):
                raise
            # The partial file did not belong to this archive (the feed changed): start over once.
            left = self.timeout - (time.monotonic() - self.started)
            if left <= 0:
                from .errors import Timeout

                raise Timeout(f"download timed out: not complete within its total timeout of {self.timeout:g} s",
                              url=url) from None
            self.started, self.timeout, self.resume = time.monotonic(), left, False
            return None
        os.replace(self.part, self.target)
        if result.get("bytes", 0) != self.target.stat().st_size:  # pragma: no cover - defensive
            raise DecodeError(f"the data feed on disk has {self.target.stat().st_size} bytes, "
                              f"{result.get('bytes')} were received", url=url)
        return self.target


class DataFeed:
    """``api.data_feed``: last_updated(), download(path), load(path), to_parquet(directory)."""

    def __init__(self, fetcher: "Fetcher") -> None:
        self._fetcher = fetcher

    def __repr__(self) -> str:
        return f"<DataFeed {self._fetcher.url_for(DOWNLOAD_PATH)} tables={','.join(feed_tables())}>"

    def _repr_html_(self) -> str:
        from html import escape

        return (f"<div><b>DataFeed</b> <code>{escape(self._fetcher.base_url + DOWNLOAD_PATH)}</code><br>"
                f"tables: {escape(', '.join(feed_tables()))}<br>last_updated(), download(path), load(path), "
                f"to_parquet(directory)</div>")

    def last_updated(self) -> str:
        return str(self._fetcher.one(LAST_UPDATED_ENDPOINT.bind())["last_updated"])

    def download(self, path: Union[str, "os.PathLike[str]"], *, resume: bool = True,
                 progress: Optional[bool] = None, timeout: float = DOWNLOAD_TIMEOUT,
                 max_bytes: int = MAX_DOWNLOAD_BYTES) -> Path:
        """Stream the feed to ``path`` (resumable, verified, renamed atomically); returns the path.

        ``timeout``: total seconds for the whole download, retries and waits included (default
        DOWNLOAD_TIMEOUT, an hour): ``Timeout`` past it, the ``.part`` file kept for a resume.
        ``max_bytes``: the largest file accepted (default MAX_DOWNLOAD_BYTES, 2 GiB; curl's
        ``--max-filesize``): ``LimitError`` (``limit="max_bytes"``) past it, the ``.part`` deleted.
        A server that answers the resume's Range request with the whole file (200) starts it over.
        The ZIP check inflates at most MAX_TOTAL_BYTES and refuses overlapping members."""
        dl = FeedDownload(self._fetcher, path, resume, progress, timeout, max_bytes)
        while True:
            on_progress = dl.begin()
            try:
                result = self._fetcher.download(DOWNLOAD_ENDPOINT.bind(), str(dl.part), dl.resume, on_progress,
                                                dl.timeout, dl.max_bytes)
            except BaseException as exc:
                dl.failed(exc)
                raise
            target = dl.finish(result)
            if target is not None:
                return target

    def load(self, path: Union[str, "os.PathLike[str]", None] = None, *, tables: Optional[Iterable[str]] = None,
             engine: str = "pyarrow", progress: Optional[bool] = None,
             max_member_bytes: int = MAX_MEMBER_BYTES,
             max_total_bytes: int = MAX_TOTAL_BYTES) -> Dict[str, "pd.DataFrame"]:
        """Read the feed's CSVs into DataFrames with the dtypes of the API frames (``to_pandas()``),
        keyed by table: ``{"trims": DataFrame, ...}`` (downloads first if no ``path``).

        ``tables``: the tables to read (default: every one of :func:`feed_tables` the archive holds).
        Only members named exactly ``<table>.csv`` are read; an archive holding one twice is
        refused.  Each member's CRC is checked once, while it is read.  A member declaring more
        than ``max_member_bytes`` (default MAX_MEMBER_BYTES, 512 MiB) uncompressed is refused
        before it is inflated, and so are tables declaring more than ``max_total_bytes`` (default
        MAX_TOTAL_BYTES, 512 MiB) uncompressed together (LimitError), and an archive whose members
        overlap (DecodeError); a malformed value raises DecodeError naming member, line and column.
        """
        return {name: frames.arrow_to_pandas(t)
                for name, t in self._tables(path, tables, engine, progress, max_member_bytes,
                                            max_total_bytes).items()}

    def to_parquet(self, directory: Union[str, "os.PathLike[str]"], path: Union[str, "os.PathLike[str]", None] = None,
                   *, tables: Optional[Iterable[str]] = None, progress: Optional[bool] = None,
                   max_member_bytes: int = MAX_MEMBER_BYTES,
                   max_total_bytes: int = MAX_TOTAL_BYTES) -> Dict[str, Path]:
        """Write each feed table to ``directory/<table>.parquet`` (the types of ``load()``); returns the paths."""
        import pyarrow.parquet as pq

        out_dir = Path(directory)
        out_dir.mkdir(parents=True, exist_ok=True)
        written: Dict[str, Path] = {}
        for name, t in self._tables(path, tables, "pyarrow", progress, max_member_bytes, max_total_bytes).items():
            target = out_dir / f"{name}.parquet"
            tmp = target.with_name(target.name + ".part")
            pq.write_table(t, tmp)
            os.replace(tmp, target)
            written[name] = target
        return written

    def _tables(self, path: Union[str, "os.PathLike[str]", None], tables: Optional[Iterable[str]], engine: str,
                progress: Optional[bool], max_member_bytes: int, max_total_bytes: int) -> Dict[str, "pa.Table"]:
        if engine != "pyarrow":
            raise ValueError(f"engine must be 'pyarrow' (the only reader), not {engine!r}")
        if path is None:
            with tempfile.TemporaryDirectory() as tmp:
                return self._tables(self.download(Path(tmp) / "feed.zip", progress=progress), tables, engine,
                                    progress, max_member_bytes, max_total_bytes)
        known = feed_tables()
        wanted = known if tables is None else list(tables)
        unknown = [t for t in wanted if t not in known]
        if unknown:
            from ._values import unknown_name as _unknown

            raise QueryError(_unknown("feed table", unknown[0], known, "the data feed"))
        try:
            zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise DecodeError(f"the data feed is not a valid ZIP archive: {exc}") from None
        with zf:
            members: Dict[str, zipfile.ZipInfo] = {}
            for info in zf.infolist():
                if info.filename in members:
                    raise DecodeError(f"the data feed holds {info.filename!r} twice", member=info.filename)
                members[info.filename] = info
            chosen = [(t, members[f"{t}.csv"]) for t in wanted if f"{t}.csv" in members]
            if tables is not None and len(chosen) != len(wanted):
                missing = [t for t in wanted if f"{t}.csv" not in members]
                raise DecodeError(f"the data feed has no {missing[0]}.csv", member=f"{missing[0]}.csv")
            for _, info in chosen:
                if info.file_size > max_member_bytes:
                    raise DecodeError(f"data feed member {info.filename!r} is {info.file_size:,} bytes uncompressed, "
                                      f"over max_member_bytes={max_member_bytes:,}", member=info.filename)
            _check_total([i for _, i in chosen], max_total_bytes)
            try:
                check_layout(zf)
            except (OSError, EOFError) as exc:
                raise DecodeError(f"the data feed is not a valid ZIP archive: {exc}") from None
            bar = self._fetcher.progress_bar(progress, total=sum(i.file_size for _, i in chosen), desc="feed", unit="B")
            out: Dict[str, "pa.Table"] = {}
            try:
                for table, info in chosen:
                    try:
                        with zf.open(info) as fh:
                            columns = _header(fh.readline(1 << 20))
                        with zf.open(info) as fh:
                            stream = _Counted(fh, bar.update) if bar is not None else fh
                            out[table] = read_feed_csv(stream, table, info.filename,
                                                       reopen=lambda info=info: zf.open(info), columns=columns)
                    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
                        raise DecodeError(f"data feed member {info.filename!r} is damaged: {exc}",
                                          member=info.filename) from None
            finally:
                if bar is not None:
                    bar.close()
        return out


__all__ = ["DataFeed", "verify_zip", "check_layout", "feed_tables", "read_feed_csv", "MAX_MEMBER_BYTES",
           "MAX_TOTAL_BYTES", "MAX_DOWNLOAD_BYTES", "DOWNLOAD_TIMEOUT"]
