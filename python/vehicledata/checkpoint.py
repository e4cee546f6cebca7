"""Parquet datasets written by ``Pager.to_parquet``, and their checkpoints.

    pager.to_parquet(path)                    # mode="resume": finish an interrupted run, else nothing
    pager.to_parquet(path, mode="overwrite")  # a fresh copy (the nightly refresh)
    pager.to_parquet(path, mode="append")     # another run's files beside the earlier ones

A run writes the pages it fetches through one ``pyarrow.dataset`` writer: one file per partition
(per ``rows_per_file`` records) named ``part-r<run>-<first page>-<i>.parquet``, row groups of at
least ``MIN_ROWS_PER_GROUP`` rows.  When those files are closed, ``_vehicledata_checkpoint.json``
is replaced atomically with the pages done.  A crash (``kill -9`` included) leaves files of pages
past the checkpoint: the next run deletes them and fetches those pages again, so the dataset ends
with exactly the records of an uninterrupted run.

A checkpoint is read as untrusted input: a malformed one raises ``DecodeError`` naming the file
and the field before anything is deleted; one of another query raises ``QueryError``.
"""
from __future__ import annotations

import json
import logging
import os
import re
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

from .errors import DecodeError, QueryError

logger = logging.getLogger("vehicledata")

#: The checkpoint file of ``Pager.to_parquet`` (in the dataset directory).
CHECKPOINT_NAME = "_vehicledata_checkpoint.json"

#: Write modes of ``to_parquet``.
MODES = ("resume", "overwrite", "append")

#: Smallest row group written (a partition with fewer rows in a run: one row group of them all).
MIN_ROWS_PER_GROUP = 64 * 1024

#: Records after which a run closes its files and records a checkpoint (default of ``rows_per_file``).
ROWS_PER_FILE = 1_000_000

# part-r0002-000001-0.parquet (run 2, first page 1); part-000001-0.parquet: an older writer's run 1.
_PART = re.compile(r"^part-(?:r(\d+)-)?(\d+)-\d+\.parquet$")

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
    total: Optional[int] = None


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
    assert done is not None
    return Checkpoint(query=state["query"], target=state.get("target", ""), pages_done=done,
                      complete=state["complete"], run=run or 1, pages=pages, total=total)


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


def write_dataset(root: Path, *, query: str, target: str, first_page: int,
                  pages_from: Callable[[int], Iterator[Any]], partition_cols: Optional[Sequence[str]] = None,
                  mode: str = "resume", rows_per_file: int = ROWS_PER_FILE) -> Path:
    """Write the pages of a search under ``root`` (see the module docstring); returns ``root``.

    ``query`` is the digest of the search, ``target`` its text (for messages), ``first_page`` the
    page it starts at, ``pages_from(n)`` its pages from page n on (objects with ``number``,
    ``pages``, ``total`` and ``to_arrow()``)."""
    if mode not in MODES:
        raise QueryError(f"mode must be one of {', '.join(map(repr, MODES))}, not {mode!r}")
    if isinstance(rows_per_file, bool) or not isinstance(rows_per_file, int) or rows_per_file < 1:
        raise QueryError(f"rows_per_file must be an integer >= 1, not {rows_per_file!r}")
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    ckpt = root / CHECKPOINT_NAME
    # Validated before anything is deleted; overwrite replaces whatever is there (the way out of a bad one).
    state = None if mode == "overwrite" else read_checkpoint(ckpt)
    if state is not None and state.query != query:
        raise QueryError(f"{root} holds a dataset of another query (checkpoint {state.target!r}); use another "
                         f"directory or mode='overwrite'")
    run, done = 1, first_page - 1
    if mode == "overwrite" or state is None:
        for _, _, f in part_files(root):
            f.unlink()
        ckpt.unlink(missing_ok=True)
    elif state.complete and mode == "resume":
        message = (f"{root} holds a finished run of {state.target or 'this query'} ({state.total} records); "
                   f"nothing fetched: mode='overwrite' refreshes it, mode='append' adds a run")
        logger.warning(message)
        warnings.warn(message, CheckpointWarning, stacklevel=3)
        return root
    elif state.complete:  # append: a new run beside the finished ones
        run = state.run + 1
        _prune(root, state.run, _MAX_NUMBER)
    else:  # an interrupted run (resume or append): finish it
        run, done = state.run, state.pages_done
        _prune(root, run, done)

    cols = list(partition_cols or [])
    pages = pages_from(done + 1)
    page = next(pages, None)
    if page is None:  # an empty result, or a start past the end
        write_checkpoint(ckpt, Checkpoint(query=query, target=target, pages_done=done, complete=True, run=run,
                                          pages=0, total=0))
        return root
    import pyarrow.dataset as ds

    schema = page.to_arrow().schema
    while page is not None:
        seg_start = page.number
        seg = {"rows": 0, "last": page}

        def batches(first: Any = page, seg: Any = seg) -> Iterator[Any]:
            p = first
            while True:
                table = p.to_arrow()
                if table.schema != schema:
                    table = table.cast(schema)
                seg["rows"] += len(table)
                seg["last"] = p
                yield from table.to_batches()
                if seg["rows"] >= rows_per_file or p.number >= p.pages:
                    return
                p = next(pages, None)
                if p is None:
                    return

        ds.write_dataset(batches(), str(root), schema=schema, format="parquet",
                         partitioning=cols or None, partitioning_flavor="hive" if cols else None,
                         basename_template=f"part-r{run:04d}-{seg_start:06d}-{{i}}.parquet",
                         existing_data_behavior="overwrite_or_ignore", min_rows_per_group=MIN_ROWS_PER_GROUP,
                         max_rows_per_group=max(MIN_ROWS_PER_GROUP, 1 << 20))
        last = seg["last"]
        write_checkpoint(ckpt, Checkpoint(query=query, target=target, pages_done=last.number,
                                          complete=last.number >= last.pages, run=run, pages=last.pages,
                                          total=last.total))
        page = None if last.number >= last.pages else next(pages, None)
    return root


__all__ = ["CHECKPOINT_NAME", "MODES", "MIN_ROWS_PER_GROUP", "ROWS_PER_FILE", "Checkpoint", "CheckpointWarning",
           "read_checkpoint", "write_checkpoint", "part_files", "write_dataset"]
