"""Parquet datasets written by ``Pager.to_parquet``, and their checkpoints.

    pager.to_parquet(path)                    # mode="refresh": bring the dataset up to date (the nightly job)
    pager.to_parquet(path, mode="resume")     # finish an interrupted run, else fetch nothing (and say so)
    pager.to_parquet(path, mode="overwrite")  # a fresh copy
    pager.to_parquet(path, mode="append")     # another run's files beside the earlier ones

A run writes the pages it fetches as part files ``part-r<run>-<first page>-<i>.parquet`` (one per
partition per ``rows_per_file`` records, row groups of at least ``MIN_ROWS_PER_GROUP`` rows).
Every ``checkpoint_pages`` pages (and at least every ``CHECKPOINT_SECONDS`` seconds, at a page's
end) the pages since the last checkpoint are staged as one Arrow file under
``_vehicledata_staging/`` and ``_vehicledata_checkpoint.json`` is replaced atomically with the
pages done; when a file's worth of records is staged (or the last page), the staged pages become
the part files.  How often a run records its progress does not depend on how large its files are:
a crash (``kill -9`` included) loses at most the pages since the last checkpoint.  The next run
deletes the files past it and the staged files it does not record, keeps the staged pages it
records and fetches the pages after them, so the dataset ends with exactly the records of an
uninterrupted run.

``mode="refresh"`` (the default) on a dataset whose last run finished, of a search that filters
on ``modified`` (trims, models, submodels, bodies, engines, mileages, colours), fetches only the
records changed since the dataset's watermark (``mark`` in the checkpoint) and upserts them: they
are written as a new run's files and their ids are removed from the older runs' files, so every id
is in the dataset once, in its latest version.  The watermark is the earlier of the largest
``modified`` a run wrote and the time it started (this machine's clock; for records served
without ``modified``, that time), never earlier than the previous one; the refresh asks the
server for ``modified >=`` it (an hour earlier when the clocks fall back within the hour after it,
``vehicledata.sync.server_bound``) and keeps the records whose ``modified`` instant is after it.
A record deleted upstream (or changed so that it no longer matches the search) has no
``modified`` to be found by: after the upsert the refresh compares the dataset's row count with
the search's total (one request), and when they differ it writes the dataset again from scratch,
as ``mode="overwrite"`` does, so a row deleted upstream is gone after the next refresh.  A search
without ``modified`` (makes, OBD codes, ``api.vehicles``' join), a dataset without a watermark
(written by an older version) or a search that starts past page 1 is written again from scratch
by every refresh.

A checkpoint is read as untrusted input: a malformed one raises ``DecodeError`` naming the file
and the field before anything is deleted; one of another query raises ``QueryError``.
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
import time
import warnings
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple
from urllib.parse import unquote_plus

from .errors import DecodeError, QueryError

logger = logging.getLogger("vehicledata")

#: The checkpoint file of ``Pager.to_parquet`` (in the dataset directory).
CHECKPOINT_NAME = "_vehicledata_checkpoint.json"

#: The directory of a run's staged pages (in the dataset directory; readers skip names starting with "_").
STAGING_NAME = "_vehicledata_staging"

#: Write modes of ``to_parquet`` (the first is the default).
MODES = ("refresh", "resume", "overwrite", "append")

#: Smallest row group written (a partition with fewer rows in a run: one row group of them all).
MIN_ROWS_PER_GROUP = 64 * 1024

#: Records after which a run closes its files (default of ``rows_per_file``).
ROWS_PER_FILE = 1_000_000

#: Pages after which a run records a checkpoint (default of ``checkpoint_pages``): two seconds of
#: pages at the client's default rate limit (600 requests a minute).
CHECKPOINT_PAGES = 20

#: Seconds after which a run records a checkpoint at the end of the page it is on, however few
#: pages that was (a slow service): with ``CHECKPOINT_PAGES``, a kill loses at most this long of pages.
CHECKPOINT_SECONDS = 30.0

# part-r0002-000001-0.parquet (run 2, first page 1); part-000001-0.parquet: an older writer's run 1.
_PART = re.compile(r"^part-(?:r(\d+)-)?(\d+)-\d+\.parquet$")

# r0002-000021.arrow: run 2's staged pages from page 21 on.
_STAGED = re.compile(r"^r(\d+)-(\d+)\.arrow$")

# Largest page or run number a checkpoint may hold (pages are int64 on the wire).
_MAX_NUMBER = (1 << 63) - 1


class CheckpointWarning(UserWarning):
    """``to_parquet(mode="resume")`` found a finished checkpoint: nothing was fetched."""


@dataclass
class Checkpoint:
    """The state of a dataset directory: the query, the run and the pages of that run done."""

    query: str
    target: str
    pages_done: int
    complete: bool
    run: int = 1
    pages: Optional[int] = None
    #: Records in the dataset (all runs) when the run finished; the last page's total before.
    total: Optional[int] = None
    #: Pages of this run in closed part files (the rest up to ``pages_done`` are staged); None: ``pages_done``.
    files_done: Optional[int] = None
    #: When this run started (UTC, ISO 8601, this machine's clock).
    started: Optional[str] = None
    #: The largest ``modified`` this run wrote so far (UTC, ISO 8601).
    latest: Optional[str] = None
    #: A refresh run: the watermark it fetches the changes after.
    since: Optional[str] = None
    #: A finished run: the watermark the next refresh fetches the changes after.
    mark: Optional[str] = None


def _shown(target: str) -> str:
    """A search's target as a person reads it: the query string percent-decoded."""
    return unquote_plus(target)


def _bad(path: Path, what: str) -> DecodeError:
    return DecodeError(f"{path} is not a to_parquet checkpoint: {what} (delete it, or write with "
                       f"mode='overwrite')")


def _number(path: Path, state: Any, key: str, low: int, required: bool) -> Optional[int]:
    value = state.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(path, f"{key!r} must be an integer, not {value!r}")
    if not low <= value <= _MAX_NUMBER:
        raise _bad(path, f"{key!r} must be from {low} to 2**63-1, not {value}")
    return value


def read_checkpoint(path: Path) -> Optional[Checkpoint]:
    """The checkpoint at ``path`` (None when there is none); DecodeError when it is malformed."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise _bad(path, f"unreadable ({exc})") from None
    try:
        state = json.loads(text)
    except ValueError as exc:
        raise _bad(path, f"not JSON ({exc})") from None
    if not isinstance(state, dict):
        raise _bad(path, f"a JSON {type(state).__name__}, not an object")
    for key in ("query", "target"):
        if not isinstance(state.get(key, ""), str) or (key == "query" and not state.get(key)):
            raise _bad(path, f"{key!r} must be a non-empty string, not {state.get(key)!r}")
    if not isinstance(state.get("complete"), bool):
        raise _bad(path, f"'complete' must be true or false, not {state.get('complete')!r}")
    done = _number(path, state, "pages_done", 0, True)
    pages = _number(path, state, "pages", 0, False)
    total = _number(path, state, "total", 0, False)
    run = _number(path, state, "run", 1, False)
    files = _number(path, state, "files_done", 0, False)
    times = {key: _time(path, state, key) for key in ("started", "latest", "since", "mark")}
    assert done is not None
    return Checkpoint(query=state["query"], target=state.get("target", ""), pages_done=done,
                      complete=state["complete"], run=run or 1, pages=pages, total=total,
                      files_done=done if files is None else min(files, done), **times)


def _time(path: Path, state: Any, key: str) -> Optional[str]:
    value = state.get(key)
    if value is None:
        return None
    try:
        if not isinstance(value, str) or datetime.fromisoformat(value).tzinfo is None:
            raise ValueError
    except ValueError:
        raise _bad(path, f"{key!r} must be ISO 8601 time text with an offset, not {value!r}") from None
    return value


def _parse(text: Optional[str]) -> Optional[datetime]:
    return None if text is None else datetime.fromisoformat(text).astimezone(timezone.utc)


def _iso(value: Optional[datetime]) -> Optional[str]:
    return None if value is None else value.astimezone(timezone.utc).isoformat()


def write_checkpoint(path: Path, state: Checkpoint) -> None:
    """Replace the checkpoint atomically (a crash leaves the old one or the new one)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(asdict(state)), encoding="utf-8")
    os.replace(tmp, path)


def part_files(root: Path) -> List[Tuple[int, int, Path]]:
    """(run, first page, path) of every part file under ``root`` (partition directories included)."""
    out = []
    for f in root.rglob("part-*.parquet"):
        m = _PART.match(f.name)
        if m:
            out.append((int(m.group(1) or 1), int(m.group(2)), f))
    return out


def _prune(root: Path, run: int, done: int) -> None:
    """Delete the files written after the checkpoint: of pages past ``done`` in ``run``, or of later runs."""
    for r, page, f in part_files(root):
        if r > run or (r == run and page > done):
            f.unlink()
    for f in root.rglob("_part-*.tmp"):  # a part file half rewritten by a refresh's upsert
        f.unlink()


def _staged(root: Path, state: Optional[Checkpoint]) -> List[Tuple[int, Path]]:
    """(first page, path) of the staged pages ``state`` records, in page order; every other staged file is deleted."""
    staging = root / STAGING_NAME
    if not staging.is_dir():
        return []
    out = []
    for f in staging.iterdir():
        m = _STAGED.match(f.name)
        if (m and state is not None and int(m.group(1)) == state.run
                and (state.files_done or 0) < int(m.group(2)) <= state.pages_done):
            out.append((int(m.group(2)), f))
        else:
            f.unlink()
    return sorted(out)


def _stage(root: Path, run: int, first: int, tables: List[Any], schema: Any) -> Path:
    """Write the tables of pages ``first``... as one Arrow file under the staging directory (renamed into place)."""
    import pyarrow as pa

    staging = root / STAGING_NAME
    staging.mkdir(exist_ok=True)
    path = staging / f"r{run:04d}-{first:06d}.arrow"
    tmp = staging / (path.name + ".tmp")
    with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
        for table in tables:
            writer.write_table(table)
    os.replace(tmp, path)
    return path


def _read_staged(path: Path) -> Any:
    import pyarrow as pa

    with pa.OSFile(str(path), "rb") as src:
        return pa.ipc.open_file(src).read_all()


class _Parts:
    """One file's worth of pages as the run's part files (one per partition, named after the
    segment's first page), written by ``pyarrow.dataset`` on a thread as the pages come, so the
    fetch and the writes overlap; :meth:`close` returns when the files are closed."""

    def __init__(self, root: Path, run: int, first: int, schema: Any, cols: Sequence[str]) -> None:
        import queue
        import threading

        self._queue: "queue.Queue[Any]" = queue.Queue(maxsize=8)
        self._error: Optional[BaseException] = None
        self._ended = False

        def batches() -> Iterator[Any]:
            while True:
                table = self._queue.get()
                if table is None:
                    self._ended = True
                    return
                yield from (table if table.schema == schema else table.cast(schema)).to_batches()

        def work() -> None:
            import pyarrow.dataset as ds

            try:
                ds.write_dataset(batches(), str(root), schema=schema, format="parquet",
                                 partitioning=list(cols) or None, partitioning_flavor="hive" if cols else None,
                                 basename_template=f"part-r{run:04d}-{first:06d}-{{i}}.parquet",
                                 existing_data_behavior="overwrite_or_ignore", min_rows_per_group=MIN_ROWS_PER_GROUP,
                                 max_rows_per_group=max(MIN_ROWS_PER_GROUP, 1 << 20))
            except BaseException as exc:  # handed to the run's thread by put/close
                self._error = exc
                while not self._ended and self._queue.get() is not None:
                    pass

        self._thread = threading.Thread(target=work, name="vehicledata-parquet", daemon=True)
        self._thread.start()

    def put(self, table: Any) -> None:
        if self._error is not None:
            raise self._error
        self._queue.put(table)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error


def _rows(root: Path) -> int:
    """Records in the dataset's part files (from their footers)."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for _, _, f in part_files(root))


def _columns(root: Path) -> List[str]:
    """The columns of the dataset's part files (none: [])."""
    import pyarrow.parquet as pq

    for _, _, f in part_files(root):
        return list(pq.read_schema(f).names)
    return []


def upsert_parts(root: Path, run: int) -> int:
    """Remove the ids of ``run``'s part files from the part files of the earlier runs (each file
    that holds one rewritten to a temporary name and renamed; a file left empty deleted); returns
    how many rows were removed.  Idempotent: a crash in the middle is finished by doing it again."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parts = part_files(root)
    new = [pq.ParquetFile(f).read(columns=["id"])["id"] for r, _, f in parts if r == run]
    if not new:
        return 0
    ids = pc.unique(pa.chunked_array([c for column in new for c in column.chunks], type=new[0].type))
    removed = 0
    for r, _, f in parts:
        if r >= run:
            continue
        source = pq.ParquetFile(f)
        hit = pc.is_in(source.read(columns=["id"])["id"], value_set=ids)
        count = pc.sum(hit).as_py() or 0
        if not count:
            continue
        table = source.read()
        source.close()
        kept = table.filter(pc.invert(hit))
        removed += count
        if len(kept) == 0:
            f.unlink()
            continue
        tmp = f.with_name("_" + f.name + ".tmp")
        pq.write_table(kept, tmp, row_group_size=max(MIN_ROWS_PER_GROUP, 1 << 20))
        os.replace(tmp, f)
    return removed


def _run(root: Path, state: Checkpoint, pages: Iterator[Any], cols: Sequence[str], rows_per_file: int,
         checkpoint_pages: int) -> Checkpoint:
    """Fetch ``pages`` (from ``state.pages_done + 1`` on) into the run ``state`` records, staging them
    every ``checkpoint_pages`` pages; a refresh run (``state.since``) then upserts.  Returns the
    finished checkpoint (written)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ckpt = root / CHECKPOINT_NAME
    staged = _staged(root, state)
    schema = _read_staged(staged[0][1]).schema if staged else None
    seg_rows = sum(len(_read_staged(f)) for _, f in staged)
    since, latest = _parse(state.since), _parse(state.latest)
    has_modified = "modified" in (schema.names if schema is not None else _columns(root))
    tables: List[Any] = []
    first = 0
    last_checkpoint = time.monotonic()
    parts: Optional[_Parts] = None

    def segment() -> _Parts:
        """The writer of the current file's worth of pages (the staged pages a crash left go first)."""
        nonlocal parts
        if parts is None:
            parts = _Parts(root, state.run, (state.files_done or 0) + 1, schema, cols)
            for _, f in staged:
                parts.put(_read_staged(f))
        return parts

    def close_files() -> None:
        nonlocal staged, seg_rows, parts
        if staged and schema is not None:
            segment()
        if parts is not None:
            writer, parts = parts, None
            writer.close()
        state.files_done = state.pages_done
        write_checkpoint(ckpt, state)
        for _, f in staged:
            f.unlink()
        staged, seg_rows = [], 0

    try:
        for page in pages:
            table = page.to_arrow()
            if schema is None:
                schema = table.schema
                has_modified = "modified" in schema.names
            elif table.schema != schema:
                table = table.cast(schema)
            if has_modified and len(table):
                if since is not None:  # the server compared text from an earlier bound: keep what is after since
                    table = table.filter(pc.greater(table["modified"],
                                                    pa.scalar(since, schema.field("modified").type)))
                most = pc.max(table["modified"]).as_py() if len(table) else None
                if most is not None and (latest is None or most > latest):
                    latest = most
            segment().put(table)
            tables.append(table)
            first = first or page.number
            seg_rows += len(table)
            state.pages_done, state.pages, state.total = page.number, page.pages, page.total
            last = page.number >= page.pages
            if (last or seg_rows >= rows_per_file or len(tables) >= checkpoint_pages
                    or time.monotonic() - last_checkpoint >= CHECKPOINT_SECONDS):
                staged.append((first, _stage(root, state.run, first, tables, schema)))
                tables, first = [], 0
                state.latest = _iso(latest)
                if last or seg_rows >= rows_per_file:
                    close_files()
                else:
                    write_checkpoint(ckpt, state)
                last_checkpoint = time.monotonic()
            if last:
                break
        if tables:  # the result ended before its last page (it shrank while it was read)
            staged.append((first, _stage(root, state.run, first, tables, schema)))
        state.latest = _iso(latest)
        if staged or state.files_done != state.pages_done:
            close_files()
    finally:
        if parts is not None:  # interrupted: the files it wrote are past the checkpoint (deleted next run)
            try:
                parts.close()
            except Exception:
                pass
    if state.since is not None:
        upsert_parts(root, state.run)
    started, previous = _parse(state.started), _parse(state.since)
    if schema is None and not _columns(root):  # nothing written, ever: no telling what the records carry
        mark = previous
    elif has_modified:  # the largest modified written, or the run's start if a record changed while it ran
        mark = min(latest, started) if latest is not None and started is not None else latest
    else:  # records served without modified: the run's start
        mark = started
    if previous is not None and (mark is None or mark < previous):
        mark = previous
    state.mark, state.complete = _iso(mark), True
    if state.since is not None:  # a refresh: the rows in the dataset (checked against the search's total)
        state.total = _rows(root)
    write_checkpoint(ckpt, state)
    shutil.rmtree(root / STAGING_NAME, ignore_errors=True)
    return state


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def write_dataset(root: Path, *, query: str, target: str, first_page: int,
                  pages_from: Callable[..., Iterator[Any]], partition_cols: Optional[Sequence[str]] = None,
                  mode: str = "refresh", rows_per_file: int = ROWS_PER_FILE,
                  checkpoint_pages: int = CHECKPOINT_PAGES, refreshable: bool = False) -> Path:
    """Write the pages of a search under ``root`` (see the module docstring); returns ``root``.

    ``query`` is the digest of the search, ``target`` its text (for messages), ``first_page`` the
    page it starts at, ``pages_from(n)`` its pages from page n on (objects with ``number``,
    ``pages``, ``total`` and ``to_arrow()``); ``refreshable``: the search filters on ``modified``,
    and ``pages_from(n, since)`` gives the pages of its records changed after ``since`` (an
    aware datetime, ``vehicledata.sync.changed_params``)."""
    if mode not in MODES:
        raise QueryError(f"mode must be one of {', '.join(map(repr, MODES))}, not {mode!r}")
    for name, value in (("rows_per_file", rows_per_file), ("checkpoint_pages", checkpoint_pages)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise QueryError(f"{name} must be an integer >= 1, not {value!r}")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    ckpt = root / CHECKPOINT_NAME
    # Validated before anything is deleted; overwrite replaces whatever is there (the way out of a bad one).
    state = None if mode == "overwrite" else read_checkpoint(ckpt)
    if state is not None and state.query != query:
        raise QueryError(f"{root} holds a dataset of another query (checkpoint {_shown(state.target)!r}); use "
                         f"another directory or mode='overwrite'")
    cols = list(partition_cols or [])

    def fresh() -> Path:
        _prune(root, 0, 0)  # every part file
        ckpt.unlink(missing_ok=True)
        _staged(root, None)
        run = Checkpoint(query=query, target=target, pages_done=first_page - 1, complete=False, run=1,
                         files_done=first_page - 1, started=_now())
        _run(root, run, pages_from(first_page), cols, rows_per_file, checkpoint_pages)
        return root

    def checked(done: Checkpoint) -> Path:
        """After a refresh run: the dataset's rows against the search's total (rows deleted upstream)."""
        pages = pages_from(first_page)
        try:
            page = next(pages, None)
        finally:
            close = getattr(pages, "close", None)
            if close is not None:
                close()
        total = 0 if page is None else page.total
        if done.total == total:
            return root
        logger.info("%s: %s rows, the service has %s for %s (rows deleted upstream, or changed out of the "
                    "search): written again", root, done.total, total, _shown(target))
        return fresh()

    if state is None or mode == "overwrite":
        return fresh()
    if not state.complete:  # an interrupted run: finish it (resume, refresh, append)
        _prune(root, state.run, state.files_done if state.files_done is not None else state.pages_done)
        pages = (pages_from(state.pages_done + 1) if state.since is None
                 else pages_from(state.pages_done + 1, _parse(state.since)))
        done = _run(root, state, pages, cols, rows_per_file, checkpoint_pages)
        return checked(done) if state.since is not None and mode == "refresh" else root
    if mode == "resume":
        warnings.warn(f"{root} holds a finished run of {_shown(state.target) or 'this query'} ({state.total} "
                      f"records); nothing fetched: mode='refresh' fetches what changed, mode='overwrite' "
                      f"writes it again, mode='append' adds a run", CheckpointWarning, stacklevel=3)
        return root
    if mode == "append":  # a new run beside the finished ones
        _prune(root, state.run, _MAX_NUMBER)
        run = Checkpoint(query=query, target=target, pages_done=first_page - 1, complete=False, run=state.run + 1,
                         files_done=first_page - 1, started=_now())
        _run(root, run, pages_from(first_page), cols, rows_per_file, checkpoint_pages)
        return root
    mark = _parse(state.mark)
    if not refreshable or mark is None or first_page != 1 or "id" not in _columns(root):
        return fresh()
    _prune(root, state.run, _MAX_NUMBER)
    run = Checkpoint(query=query, target=target, pages_done=0, complete=False, run=state.run + 1, files_done=0,
                     started=_now(), since=state.mark)
    return checked(_run(root, run, pages_from(1, mark), cols, rows_per_file, checkpoint_pages))


__all__ = ["CHECKPOINT_NAME", "STAGING_NAME", "MODES", "MIN_ROWS_PER_GROUP", "ROWS_PER_FILE", "CHECKPOINT_PAGES",
           "CHECKPOINT_SECONDS", "Checkpoint", "CheckpointWarning", "read_checkpoint", "write_checkpoint",
           "part_files", "upsert_parts", "write_dataset"]
