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

import os
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional, Union

from . import schema
from .errors import DecodeError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .client import Client

DOWNLOAD_PATH = "/api/data-feeds/download"
LAST_UPDATED_PATH = "/api/data-feeds/last-updated"


def verify_zip(path: Union[str, "os.PathLike[str]"], url: str = "") -> None:
    """Raise DecodeError unless ``path`` is a complete ZIP whose members pass their CRC check."""
    try:
        with zipfile.ZipFile(path) as zf:
            bad = zf.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise DecodeError(f"the data feed is not a valid ZIP archive: {exc}", url=url) from None
    if bad is not None:
        raise DecodeError(f"the data feed's member {bad!r} fails its CRC check", url=url)


def _csv_types(table: str) -> Dict[str, str]:
    """Schema types of a feed CSV's columns (the storage table's fields), {} if unknown."""
    try:
        rec = schema.table_record(table)
    except KeyError:
        return {}
    return {f.name: f.type for f in rec.fields}


def read_feed_csv(fh: Any, table: str) -> "pd.DataFrame":
    """One feed CSV with the schema's dtypes: Int64, float64, strings, UTC timestamps."""
    import pandas as pd

    types = _csv_types(table)
    try:
        import pyarrow  # noqa: F401

        text = "string[pyarrow]"
    except ImportError:  # pragma: no cover
        text = "string"
    dtype: Dict[str, str] = {}
    for name, t in types.items():
        if t in ("int", "int64"):
            dtype[name] = "Int64"
        elif t in ("decimal", "float"):
            dtype[name] = "float64"
        elif t == "bool":
            dtype[name] = "boolean"
        elif t in ("string", "timestamp", "date"):
            dtype[name] = text
    head = pd.read_csv(fh, nrows=0)
    fh.seek(0)
    df = pd.read_csv(fh, dtype={k: v for k, v in dtype.items() if k in head.columns}, keep_default_na=True)
    for name, t in types.items():
        if name in df.columns and t == "timestamp":
            df[name] = pd.to_datetime(df[name], utc=True, format="ISO8601").astype("datetime64[us, UTC]")
    return df


class DataFeed:
    """``api.data_feed``: last_updated(), download(path), load(path)."""

    def __init__(self, client: "Client") -> None:
        self._client = client

    def last_updated(self) -> str:
        ep = schema.endpoint(LAST_UPDATED_PATH)
        return str(self._client._one(LAST_UPDATED_PATH, ep.record)["last_updated"])

    def download(self, path: Union[str, "os.PathLike[str]"], *, resume: bool = True,
                 progress: Optional[bool] = None) -> Path:
        """Stream the feed to ``path`` (resumable, verified, renamed atomically); returns the path."""
        target = Path(path)
        if target.is_dir():
            target = target / "vehicledata-feed.zip"
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_name(target.name + ".part")
        bar = self._client._progress_bar(progress, total=None, desc=target.name, unit="B")
        state = {"last": 0}

        def on_progress(done: int, total: int) -> None:
            if bar is None:
                return
            if total > 0 and bar.total != total:
                bar.total = total
            bar.update(done - state["last"])
            state["last"] = done

        existed = part.exists()
        try:
            result = self._client._core.download(DOWNLOAD_PATH, str(part), resume,
                                                 on_progress if bar is not None else None)
        except BaseException:
            # A refused download (403, 404, ...) wrote nothing: leave no empty .part behind.
            if not existed and part.exists() and part.stat().st_size == 0:
                part.unlink(missing_ok=True)
            raise
        finally:
            if bar is not None:
                bar.close()
        url = self._client._core.url_for(DOWNLOAD_PATH)
        try:
            verify_zip(part, url)
        except DecodeError:
            part.unlink(missing_ok=True)
            if not result.get("resumed"):
                raise
            # The partial file did not belong to this archive (the feed changed): start over once.
            return self.download(target, resume=False, progress=progress)
        os.replace(part, target)
        if result.get("bytes", 0) != target.stat().st_size:  # pragma: no cover - defensive
            raise DecodeError(f"the data feed on disk has {target.stat().st_size} bytes, "
                              f"{result.get('bytes')} were received", url=url)
        return target

    def load(self, path: Union[str, "os.PathLike[str]", None] = None, *,
             progress: Optional[bool] = None) -> Dict[str, "pd.DataFrame"]:
        """Read every CSV of the feed into a DataFrame keyed by file stem (downloads first if no path)."""
        import pandas as pd

        if path is None:
            with tempfile.TemporaryDirectory() as tmp:
                return self.load(self.download(Path(tmp) / "feed.zip", progress=progress))
        verify_zip(path)
        out: Dict[str, pd.DataFrame] = {}
        with zipfile.ZipFile(path) as zf:
            for name in zf.namelist():
                if not name.lower().endswith(".csv"):
                    continue
                with zf.open(name) as fh:
                    out[Path(name).stem] = read_feed_csv(fh, Path(name).stem)
        return out


__all__ = ["DataFeed", "verify_zip"]
