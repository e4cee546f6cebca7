"""Helpers of the emulator conformance suite (imported by conftest.py and the tests).

Every test talks to a real ``vehicledata-emulator`` process over loopback, on the real database
(the session fixture ``database`` of tests/conftest.py).  Expected values come from the database
itself, read with :mod:`sqlite3` and rendered by the small independent renderer below from the
schema table (``vehicledata.schema``), never from the emulator's own code.
"""
from __future__ import annotations

import http.client
import json
import re
import socket
import sqlite3
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import urlsplit

import pytest

from vehicledata import schema
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

DEMO_SQL = "year BETWEEN 2015 AND 2020"
CONFORMANCE_SECRET = "conformance-secret"


# ---- raw sockets: the one home of the suite's (and benchmarks/emulator_soak.py's) read loops -------
def read_response(s: socket.socket, buf: bytearray) -> Tuple[int, Dict[str, str], bytes]:
    """Reads one response (Content-Length framed; a 100 Continue skipped) from `s`, leaving what
    follows in `buf`: status, header fields (names lower-cased), body."""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response head: {bytes(buf)!r}")
        buf += chunk
    head, _, rest = bytes(buf).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    if status == 100:
        buf[:] = rest
        return read_response(s, buf)
    n = int(headers.get("content-length", "0"))
    while len(rest) < n:
        chunk = s.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside a body")
        rest += chunk
    buf[:] = rest[n:]
    return status, headers, rest[:n]


def read_until_close(s: socket.socket, resets: bool = False) -> bytes:
    """Everything the server sends until it closes the connection; with `resets`, a reset ends
    it as a close does (a dropped connection). A timeout raises (the socket's own)."""
    chunks: List[bytes] = []
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            if not resets:
                raise
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def raw_request(emulator_url: str, request: bytes, timeout: float = 30) -> Tuple[int, Dict[str, str], bytes]:
    """Send bytes as they are (http.client refuses non-ASCII targets); one request, then close:
    (status, headers with lower-case names, body)."""
    u = urlsplit(emulator_url)
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as s:
        s.sendall(request)
        data = read_until_close(s)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


def strict_json(body: bytes) -> Any:
    """The body as JSON, raising on invalid UTF-8 (json.loads of bytes would guess)."""
    return json.loads(body.decode("utf-8"))


def read_answer(s: socket.socket, head: bool = False) -> bytes:
    """The bytes of one answer as sent: until its Content-Length is complete (only the head for
    the answer to a HEAD), else until the server closes."""
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            return data
        data += chunk
        end = data.find(b"\r\n\r\n")
        m = re.search(rb"\r\ncontent-length: *(\d+)", data[:end], re.I) if end >= 0 else None
        if m and len(data) >= end + 4 + (0 if head else int(m.group(1))):
            return data


DATE = re.compile(rb"\r\nDate: (?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\r\n")


def undated(data: bytes) -> bytes:
    """The answers with their Date headers (one per answer, well formed) blanked: the clock's second
    may change between two requests."""
    assert data.count(b"\r\nDate: ") == data.count(b"HTTP/1.1 ") and DATE.search(data), data[:300]
    return DATE.sub(b"\r\nDate: -\r\n", data)


@dataclass
class Response:
    status: int
    headers: Dict[str, str]
    body: bytes
    reason: str = ""
    _json: Any = field(default=None, repr=False)

    def json(self) -> Any:
        if self._json is None:
            self._json = json.loads(self.body)
        return self._json

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


class Http:
    """A tiny keep-alive HTTP client that sends the target exactly as given."""

    def __init__(self, base_url: str) -> None:
        u = urlsplit(base_url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 80
        self._conn: Optional[http.client.HTTPConnection] = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, target: str, *, token: Optional[str] = None, body: Optional[bytes] = None,
                headers: Optional[Mapping[str, str]] = None) -> Response:
        hdrs = dict(headers or {})
        if token is not None:
            hdrs["Authorization"] = f"Bearer {token}"
        if body is not None and method in ("POST", "PUT", "PATCH", "DELETE"):
            hdrs.setdefault("Content-Type", "application/json")
        for attempt in range(2):
            conn = self._connection()
            try:
                conn.request(method, target, body=body, headers=hdrs)
                r = conn.getresponse()
                data = r.read()
                resp = Response(r.status, {k.lower(): v for k, v in r.getheaders()}, data, r.reason)
                if r.will_close:
                    self.close()
                return resp
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt:
                    raise
            except BaseException:
                # A timeout or any other failure leaves the connection mid-exchange: drop it, so
                # the next request (of this test or a later one) starts on a fresh one.
                self.close()
                raise
        raise AssertionError("unreachable")

    def get(self, target: str, token: Optional[str] = None, **kw: Any) -> Response:
        return self.request("GET", target, token=token, **kw)

    def post_json(self, target: str, payload: Any, token: Optional[str] = None) -> Response:
        return self.request("POST", target, token=token, body=json.dumps(payload).encode())

    def login(self, name: str) -> str:
        acct = DEMO_ACCOUNTS[name]
        r = self.post_json("/api/auth/login", {"api_token": acct["api_token"], "api_secret": acct["api_secret"]})
        assert r.status == 200, r.body
        return r.text


# ---- the independent renderer ---------------------------------------------------------
def render_decimal(value: float, scale: int) -> str:
    q = Decimal(1).scaleb(-scale)
    return str(Decimal(repr(float(value))).quantize(q, rounding=ROUND_HALF_UP))


def render_value(f: schema.FieldSpec, value: Any) -> Any:
    if value is None:
        return None
    if f.type in ("int", "int64"):
        return int(value)
    if f.type == "decimal":
        return render_decimal(value, f.scale)
    if f.type == "float":
        return float(value)
    if f.type == "bool":
        return bool(value)
    return str(value)


def record_fields(record: str, verbose: bool = False) -> List[schema.FieldSpec]:
    r = schema.record(record)
    return [f for f in r.fields
            if f.type != "nested" and (f.in_record or (verbose and f.type != "timestamp"))]


def select_list(record: str, verbose: bool = False) -> str:
    return ", ".join(f.column or f.name for f in record_fields(record, verbose))


def render_row(record: str, row: Sequence[Any], verbose: bool = False) -> Dict[str, Any]:
    return {f.name: render_value(f, v) for f, v in zip(record_fields(record, verbose), row)}


class Db:
    """Read-only access to the real database for expected values."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)

    def all(self, sql: str, params: Sequence[Any] = ()) -> List[Tuple[Any, ...]]:
        return self.con.execute(sql, params).fetchall()

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        row = self.con.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def records(self, record: str, where: str = "", params: Sequence[Any] = (), order: str = "id",
                limit: Optional[int] = None, offset: int = 0, verbose: bool = False) -> List[Dict[str, Any]]:
        table = schema.record(record).table
        sql = f"SELECT {select_list(record, verbose)} FROM {table}"
        if where:
            sql += f" WHERE {where}"
        if order:
            sql += f" ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
        return [render_row(record, row, verbose) for row in self.all(sql, params)]

    def count(self, table: str, where: str = "", params: Sequence[Any] = ()) -> int:
        return int(self.one(f"SELECT COUNT(*) FROM {table}" + (f" WHERE {where}" if where else ""), params))


def assert_error(r: Response, status: int, exception: str, path: str, message_part: str = "") -> None:
    """A JSON error answer with exactly the members {exception, code, url, message}."""
    assert r.status == status, (r.status, r.body)
    assert r.headers.get("content-type", "").startswith("application/json"), r.headers
    body = r.json()
    assert list(body) == ["exception", "code", "url", "message"], body
    assert body["exception"] == exception, body
    assert body["code"] == status, body
    assert body["url"] == path, body
    assert isinstance(body["message"], str) and body["message"], body
    assert message_part in body["message"], body


def envelope_endpoints() -> List[schema.Endpoint]:
    return [e for e in schema.endpoints().values() if e.shape == "envelope"]


def required_query(e: schema.Endpoint) -> str:
    """The endpoint's required parameters at their first allowed value (powersports `type`), or ''."""
    return "&".join(f"{name}={allowed[0]}" for name, allowed in e.required_parameters().items())


def search_target(e: schema.Endpoint, query: str = "") -> str:
    """The endpoint's path with its required parameters first, then `query`."""
    parts = [q for q in (required_query(e), query) if q]
    return e.path + ("?" + "&".join(parts) if parts else "")
