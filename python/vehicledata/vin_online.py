"""``api.vin``: one VIN (``api.vin(v)``) or a batch through the service (``api.vin.decode_many``).

    table = api.vin.decode_many(vins, concurrency=4, checkpoint="vins.ckpt", progress=True)

The batch is fetched by the client's C++ crawl machinery (libcurl multi, the client's token bucket
and retries, ``concurrency`` transfers at once; ``vd.AsyncClient``'s ``await api.vin.decode_many``
runs the same steps, :class:`VinBatch`, with its requests on the client's I/O engine:
vehicledata.aio) and answers the same table as the offline
``vehicledata.vin.Decoder.decode_many`` (``vehicledata.vin.COLUMNS``, one row per input VIN in
input order).  A VIN that ``vehicledata.vin.validate`` refuses is not sent (the API's 400 message is
the one ``validate`` gives); one the service refuses (404) gets its row with the service's message.

Checkpoint (docs/vin.md): a JSON-lines file, first line ``{"vehicledata_vin_checkpoint": 1}``, then
one ``{"vin": ..., "row": {...}}`` per answered VIN, appended and flushed as each answer arrives.
A later call with the same file requests only the VINs it does not hold.  A malformed checkpoint
raises ``DecodeError`` naming the file and line (a last line cut short by a crash is dropped).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Dict, List, Optional, Union

from . import schema
from ._targets import build_target, check_target, endpoint_path
from .errors import DecodeError, QueryError

if TYPE_CHECKING:
    from .client import Client
    from .vin import VinResult

#: The first line of a checkpoint file.
CHECKPOINT_HEADER = {"vehicledata_vin_checkpoint": 1}

_INT_COLUMNS = ("year", "trim_id")


class VinAccessor:
    """``api.vin``: call it for one VIN (``api.vin(vin)``), or ``decode_many`` for a batch."""

    __slots__ = ("_client",)

    def __init__(self, client: "Client") -> None:
        self._client = client

    def __call__(self, vin: str, *, verbose: Optional[bool] = None,
                 all_trims: Optional[bool] = None) -> "VinResult":
        """Decode a VIN: year, make, model, trim, specs (a mapping of vPIC elements) and the catalogue's
        legacy trims, best match first (``all_trims=True``: every trim of the model).
        ``vehicledata.vin.validate`` checks a VIN locally without a request."""
        return self._client._vin_one(vin, verbose=verbose, all_trims=all_trims)

    def decode_many(self, vins: Any, *, concurrency: Optional[int] = None,
                    checkpoint: Union[None, str, "os.PathLike[str]"] = None,
                    progress: Optional[bool] = None) -> Any:
        """A ``pyarrow.Table`` with the columns of the offline ``Decoder.decode_many``
        (``vehicledata.vin.COLUMNS``), one row per VIN in input order, from ``/api/vin/{vin}``.

        ``vins``: what ``Decoder.decode_many`` takes (list, numpy array, pandas/polars Series,
        Arrow arrays and streams).  ``concurrency``: transfers at once (default the client's
        ``max_parallel``), all inside the client's rate limit and retries.  Each distinct VIN is
        requested once.  Bad VINs get their row (``error_code`` ``invalid_vin`` / ``not_found``
        and the API's message); nothing in the batch raises for them.  ``checkpoint``: a file
        answers are appended to; VINs it already holds are not requested again.  ``progress``: a
        tqdm bar of the requests (default: the client's setting)."""
        fetcher = self._client._fetcher
        batch = VinBatch(fetcher, vins, concurrency, checkpoint, progress)
        if batch.requests:
            try:
                fetcher.fetch_pages_settled(batch.requests, batch.concurrency, batch.on_done)
            finally:
                batch.finish()
        return batch.table()


class VinBatch:
    """The steps of one ``decode_many`` call, for both clients (``vd.Client``'s ``api.vin`` above and
    ``vd.AsyncClient``'s, which fetch ``requests`` their own way and hand each answer to ``on_done``):
    the arguments checked, each input's row or the VIN to request, the checkpoint read and appended
    to, the progress bar, the table.  Made, the bar and the checkpoint are open when there is
    something to request: ``finish()`` closes them (answers handed over after it are dropped)."""

    def __init__(self, fetcher: Any, vins: Any, concurrency: Optional[int],
                 checkpoint: Union[None, str, "os.PathLike[str]"], progress: Optional[bool]) -> None:
        from . import vin as vin_module

        if concurrency is None:
            concurrency = fetcher.max_parallel
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise QueryError(f"concurrency must be a positive int, not {concurrency!r}", field="concurrency")
        self.concurrency: int = concurrency
        values: List[Optional[str]] = []
        for chunk in vin_module._string_chunks(vins):
            values.extend(chunk.to_pylist())
        self._rows: List[Optional[Dict[str, Any]]] = [None] * len(values)
        path = Path(os.fspath(checkpoint)) if checkpoint is not None else None
        done = read_vin_checkpoint(path) if path is not None else {}
        self._wanted: Dict[str, List[int]] = {}  # normalized VIN -> input positions still to answer
        for i, raw in enumerate(values):
            if raw is None:
                self._rows[i] = _error_row(None, "invalid_vin", "VIN is null")
                continue
            try:
                vin = vin_module.validate(raw)
            except QueryError as e:
                self._rows[i] = _error_row(raw, "invalid_vin", e.message)
                continue
            if vin in done:
                self._rows[i] = done[vin]
            else:
                self._wanted.setdefault(vin, []).append(i)
        self._order = list(self._wanted)
        ep = schema.endpoint_for(schema.Kind.VIN)
        #: The requests to send, one per distinct VIN still to answer.
        self.requests: List[schema.BoundEndpoint] = [ep.bind(check_target(build_target(endpoint_path(ep, vin), [])))
                                                     for vin in self._order]
        self._out: Optional[IO[str]] = None
        self._bar: Any = None
        self._finished = False
        if self.requests:
            self._bar = fetcher.progress_bar(progress, len(self._order), "VINs", "VIN")
            try:
                if path is not None:
                    self._out = _append_to(path)
            except BaseException:
                self.finish()
                raise

    def on_done(self, index: int, page: Any, status: Optional[int], message: Optional[str]) -> None:
        """Target ``index`` answered: its core ``page``, or the ``status`` and ``message`` the server
        refused it with (the core client's ``fetch_pages_settled``)."""
        from .pager import records_of
        from .vin import VinResult

        if self._finished:  # (an answer already on its way when the batch was cancelled)
            return
        vin = self._order[index]
        if page is not None:
            row = _result_row(vin, VinResult.of(records_of(page)[0]))
        else:
            code = "not_found" if status == 404 else ("invalid_vin" if status == 400 else f"http_{status}")
            row = _error_row(vin, code, message or "")
        for i in self._wanted[vin]:
            self._rows[i] = row
        if self._out is not None:
            self._out.write(json.dumps({"vin": vin, "row": row}, ensure_ascii=False) + "\n")
            self._out.flush()
        if self._bar is not None:
            self._bar.update(1)

    def finish(self) -> None:
        """Close the checkpoint and the bar (idempotent)."""
        self._finished = True
        if self._out is not None:
            self._out.close()
            self._out = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def table(self) -> Any:
        """The ``pyarrow.Table`` of the rows (a VIN not answered: a row of nulls)."""
        return _table(self._rows)


def _append_to(path: Path) -> IO[str]:
    """The checkpoint opened for appending: a last line cut short by a crash dropped, the header
    written to a new (or empty) file."""
    if path.exists():
        with open(path, "rb+") as f:
            data = f.read()
            if data and not data.endswith(b"\n"):
                f.truncate(data.rfind(b"\n") + 1)
    fresh = not path.exists() or path.stat().st_size == 0
    out = open(path, "a", encoding="utf-8")
    if fresh:
        out.write(json.dumps(CHECKPOINT_HEADER) + "\n")
        out.flush()
    return out


def _error_row(vin: Optional[str], code: str, text: str) -> Dict[str, Any]:
    row: Dict[str, Any] = {name: None for name in _columns()}
    row["vin"] = vin
    row["error_code"] = code
    row["error_text"] = text
    return row


def _result_row(vin: str, r: "VinResult") -> Dict[str, Any]:
    """The offline row of a decoded VIN (cpp/client/vin_batch.cpp's put_row), from the API's answer."""
    specs = r.specs
    engine = []
    if specs.get("displacement_l") is not None:
        engine.append(f"{specs['displacement_l']}L")
    if specs.get("engine_number_of_cylinders") is not None:
        engine.append(f"{specs['engine_number_of_cylinders']}cyl")
    if specs.get("engine_model") is not None:
        engine.append(str(specs["engine_model"]))
    trims = r.trims
    return {
        "vin": vin, "year": r.year, "make": r.make, "model": specs.get("model"), "trim": specs.get("trim"),
        "series": specs.get("series"), "body": specs.get("body_class"), "drive": specs.get("drive_type"),
        "engine": " ".join(engine) if engine else None, "fuel": specs.get("fuel_type_primary"),
        "error_code": specs.get("error_code"), "error_text": specs.get("error_text"),
        "trim_id": int(trims[0]["id"]) if trims else None,
    }


def _columns() -> List[str]:
    from .vin import COLUMNS

    return list(COLUMNS)


def _table(rows: List[Optional[Dict[str, Any]]]) -> Any:
    import pyarrow as pa

    columns = _columns()
    return pa.table({name: pa.array([row[name] if row is not None else None for row in rows],
                                    type=pa.int64() if name in _INT_COLUMNS else pa.large_string())
                     for name in columns})


def read_vin_checkpoint(path: Path) -> Dict[str, Dict[str, Any]]:
    """The rows a checkpoint file holds, by VIN ({} when there is no file).  Raises DecodeError
    naming the file and line for anything but a checkpoint (a last line cut short is dropped)."""
    if not path.exists():
        return {}
    columns = _columns()
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise DecodeError(f"VIN checkpoint {path}: unreadable ({e})", url=str(path)) from None
    lines = text.split("\n")[:-1]  # the last: "" after a newline, or a line cut short by a crash
    if not lines:
        return {}

    def bad(number: int, what: str) -> DecodeError:
        return DecodeError(f"VIN checkpoint {path}, line {number}: {what}", url=str(path))

    try:
        header = json.loads(lines[0])
    except ValueError:
        raise bad(1, "not a vehicledata VIN checkpoint (malformed JSON)") from None
    if header != CHECKPOINT_HEADER:
        raise bad(1, f"not a vehicledata VIN checkpoint (expected {json.dumps(CHECKPOINT_HEADER)})")
    rows: Dict[str, Dict[str, Any]] = {}
    for number, line in enumerate(lines[1:], start=2):
        try:
            entry = json.loads(line)
        except ValueError:
            raise bad(number, "malformed JSON") from None
        if not isinstance(entry, dict) or not isinstance(entry.get("vin"), str) or \
                not isinstance(entry.get("row"), dict):
            raise bad(number, 'expected {"vin": string, "row": object}')
        row = entry["row"]
        if sorted(row) != sorted(columns):
            raise bad(number, f"row columns are not {', '.join(columns)}")
        for name in columns:
            value = row[name]
            ok = value is None or (isinstance(value, int) and not isinstance(value, bool)
                                   if name in _INT_COLUMNS else isinstance(value, str))
            if not ok:
                raise bad(number, f"{name} is {type(value).__name__}")
        rows[entry["vin"]] = {name: row[name] for name in columns}
    return rows
