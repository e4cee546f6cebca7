"""Recorded answers served over loopback HTTP: test the client's paging, checkpoints, retries and
error mapping in process, without the dataset or the emulator.

    >>> from vehicledata.testing import ReplayServer, load_answers
    >>> with ReplayServer(load_answers("tests/data/replay_makes.jsonl")) as server:   # doctest: +SKIP
    ...     server.fault("/api/makes/v2?page=3", status=429, retry_after=0)
    ...     with vd.Client(base_url=server.url, api_token="t", api_secret="s") as api:
    ...         names = [m.name for m in api.makes.search(limit=20)]
    ...     server.count("/api/makes/v2?page=3")                                     # 2: the 429, then the page

The client's transfers run in its C++ core (libcurl), so a stand-in for the core would test a
fake: :class:`ReplayServer` is a real HTTP/1.1 server on ``127.0.0.1`` (a thread of this process),
and the real ``vd.Client`` and ``vd.AsyncClient`` talk to it as to the service.

* Answers are matched by method, path and query parameters (their order and percent-encoding
  aside). The answers of one request are served in the order given; an answer with ``times=n``
  is served n times and then passes to the next; one without ``times`` is served for every later
  request. A request with no answer left is *unexpected*: it gets a 501 (exception
  ``UnexpectedRequest``, message naming it) and :meth:`ReplayServer.check` (run on leaving the
  ``with`` block when ``strict``) raises :class:`UnexpectedRequestError` listing it and the answers
  recorded for its path.
* The login route (``POST /api/auth/login``) is answered by the server itself (``login=True``):
  any credentials get a fresh HS256 JWT that lives ``token_ttl`` seconds, so a recording never
  holds a token and never expires. Requests carrying one of these tokens are marked
  ``authorized`` in :attr:`ReplayServer.requests`.
* :meth:`ReplayServer.fault` schedules faults, checked before the answers, with the emulator's
  vocabulary (``Emulator.fault``): a status (429 with ``Retry-After``, 5xx, any error), a dropped
  connection, a truncated body, a delay.

:class:`Recorder` makes the answers: a loopback proxy in front of a live server (the emulator, or
the service) that forwards every request and keeps its answer. Run the code under test against
``recorder.url`` once, then :meth:`Recorder.save` writes a JSON lines file that
:func:`load_answers` reads. Logins and ``/_emulator/`` requests are forwarded, never recorded; no
request header (``Authorization`` included) is recorded.
"""
from __future__ import annotations

import base64
import http.client
import json
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Union
from urllib.parse import parse_qsl, urlsplit

__all__ = ["Answer", "Recorder", "ReplayServer", "SeenRequest", "UnexpectedRequestError", "load_answers",
           "save_answers"]

#: The first line of a file of recorded answers names this format and version.
FORMAT = "vehicledata-replay"
VERSION = 1

#: The response headers a recording keeps (the ones the client reads, and the content's own).
KEPT_HEADERS = ("Content-Type", "Retry-After", "Content-Range", "Content-Disposition", "Accept-Ranges",
                "Last-Modified", "ETag", "X-Emulator-Synthetic")

#: The fault actions of :meth:`ReplayServer.fault` (the emulator's).
FAULT_ACTIONS = ("status", "drop", "truncate", "delay")

_Key = Tuple[str, str, Tuple[Tuple[str, str], ...]]
PathLike = Union[str, "os.PathLike[str]"]


def _split(target: str) -> Tuple[str, Tuple[Tuple[str, str], ...]]:
    """(path, sorted query pairs) of a request target: the parameters' order and encoding aside."""
    parts = urlsplit(target)
    return parts.path or "/", tuple(sorted(parse_qsl(parts.query, keep_blank_values=True)))


def _natural(key: _Key) -> Tuple[Any, ...]:
    """A sort key of a request key with its numbers compared as numbers."""
    method, path, query = key
    return method, path, tuple((k, (0, int(v), "") if v.isdigit() else (1, 0, v)) for k, v in query)


def _key(method: str, target: str) -> _Key:
    path, query = _split(target)
    return method.upper(), path, query


class UnexpectedRequestError(AssertionError):
    """The replay server was asked what it has no answer for (or, with ``all_used``, an answer was
    never asked for). The message lists those requests and the answers recorded for their paths."""


@dataclass
class Answer:
    """One recorded answer: the request it answers (``method``, ``target`` = path and query) and
    what it sends (``status``, ``headers``, ``body``). ``times``: how many requests it answers
    before the next answer of the same request takes over (None: every later one)."""

    method: str
    target: str
    status: int = 200
    headers: Dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    times: Optional[int] = None

    @classmethod
    def of_json(cls, target: str, value: Any, status: int = 200, method: str = "GET",
                times: Optional[int] = None) -> "Answer":
        """An answer whose body is ``value`` as JSON (``Content-Type: application/json``)."""
        return cls(method, target, status, {"Content-Type": "application/json"},
                   json.dumps(value, separators=(",", ":")).encode(), times)

    def to_json(self) -> Dict[str, Any]:
        """The answer as one line of a recording (the body as text when it is UTF-8, else base64)."""
        out: Dict[str, Any] = {"method": self.method, "target": self.target, "status": self.status,
                               "headers": dict(self.headers)}
        try:
            out["body"] = self.body.decode("utf-8")
        except UnicodeDecodeError:
            out["body_base64"] = base64.b64encode(self.body).decode("ascii")
        if self.times is not None:
            out["times"] = self.times
        return out

    @classmethod
    def from_json(cls, item: Any, where: str = "answer") -> "Answer":
        """An answer from :meth:`to_json`'s form; ValueError naming ``where`` and the field otherwise."""
        if not isinstance(item, dict):
            raise ValueError(f"{where}: an answer is a JSON object, not {type(item).__name__}")
        for name, kind in (("method", str), ("target", str), ("status", int)):
            if not isinstance(item.get(name), kind) or isinstance(item.get(name), bool):
                raise ValueError(f"{where}: {name!r} must be a {kind.__name__}, not {item.get(name)!r}")
        headers = item.get("headers", {})
        if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
            raise ValueError(f"{where}: 'headers' must be an object of strings")
        if "body_base64" in item:
            body = base64.b64decode(item["body_base64"], validate=True)
        elif isinstance(item.get("body", ""), str):
            body = item.get("body", "").encode("utf-8")
        else:
            raise ValueError(f"{where}: 'body' must be a string")
        times = item.get("times")
        if times is not None and (not isinstance(times, int) or isinstance(times, bool) or times < 1):
            raise ValueError(f"{where}: 'times' must be an integer >= 1, not {times!r}")
        return cls(item["method"].upper(), item["target"], item["status"], dict(headers), body, times)


def load_answers(path: PathLike) -> List[Answer]:
    """The answers of a recording (:meth:`Recorder.save`, :func:`save_answers`): JSON lines, the
    first naming the format (``{"format": "vehicledata-replay", "version": 1, ...}``), then one
    answer a line. ValueError naming the file and line for anything else."""
    answers: List[Answer] = []
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{os.fspath(path)}:{number}"
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{where}: not JSON ({exc})") from None
            if number == 1:
                if not isinstance(item, dict) or item.get("format") != FORMAT:
                    raise ValueError(f"{where}: not a recording (its first line names no format {FORMAT!r})")
                if item.get("version") != VERSION:
                    raise ValueError(f"{where}: version {item.get('version')!r} of {FORMAT}; this reads {VERSION}")
                continue
            answers.append(Answer.from_json(item, where))
    return answers


def save_answers(path: PathLike, answers: Iterable[Answer], note: str = "") -> Path:
    """Write ``answers`` as a recording (:func:`load_answers` reads it); ``note`` goes in its first
    line (how to record it again, say). Returns the path."""
    out = Path(path)
    head: Dict[str, Any] = {"format": FORMAT, "version": VERSION}
    if note:
        head["note"] = note
    lines = [json.dumps(head)] + [json.dumps(a.to_json(), ensure_ascii=False, separators=(",", ":"))
                                  for a in answers]
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    return out


@dataclass(frozen=True)
class SeenRequest:
    """A request the replay server received. ``answer`` says what it got: ``"recorded"``,
    ``"fault"`` (with the fault's ``action``), ``"login"`` or ``"unexpected"``. ``authorized``: it
    carried a token this server's login issued. Headers are kept but ``Authorization``; a login's
    body (the secret) is never kept."""

    method: str
    target: str
    headers: Dict[str, str]
    answer: str
    action: str = ""
    authorized: bool = False

    def __str__(self) -> str:
        return f"{self.method} {self.target}"


class _Match:
    """A fault's or a count's request pattern: the path starts with the pattern's path and every
    query parameter of the pattern is in the request's ("" matches every request)."""

    def __init__(self, pattern: str, method: Optional[str] = None) -> None:
        parts = urlsplit(pattern)
        self.path = parts.path
        self.params = parse_qsl(parts.query, keep_blank_values=True)
        self.method = method.upper() if method else None

    def __call__(self, method: str, target: str) -> bool:
        if self.method and method.upper() != self.method:
            return False
        path, query = _split(target)
        if not path.startswith(self.path):
            return False
        have = list(query)
        for pair in self.params:
            if pair not in have:
                return False
            have.remove(pair)
        return True


@dataclass
class _Fault:
    match: _Match
    pattern: str
    action: str
    status: int
    left: int
    retry_after: Optional[int]
    delay_ms: Optional[int]
    body: Optional[str]


@dataclass
class _Queue:
    """The answers of one request, in order, with the uses each has left (None: for ever) and
    the number of times each was served."""

    answers: List[Answer] = field(default_factory=list)
    left: List[Optional[int]] = field(default_factory=list)
    served: List[int] = field(default_factory=list)

    def add(self, answer: Answer) -> None:
        self.answers.append(answer)
        self.left.append(answer.times)
        self.served.append(0)

    def take(self) -> Optional[Answer]:
        for i, answer in enumerate(self.answers):
            left = self.left[i]
            if left is None or left > 0:
                if left is not None:
                    self.left[i] = left - 1
                self.served[i] += 1
                return answer
        return None


_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "date",
               "server", "vary", "proxy-connection", "te", "trailer", "upgrade"}


class _Handler(BaseHTTPRequestHandler):
    """One connection of a :class:`_LoopbackServer`; the owner decides every answer."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the service: libcurl reuses connections
    disable_nagle_algorithm = True  # the body is a second write: not held back for the headers' ACK
    server: "_LoopbackServer"

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        self.server.owner._answer(self, self.command, self.path, body)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = _serve  # noqa: N815

    def send(self, status: int, headers: Dict[str, str], body: bytes, truncate: bool = False) -> None:
        """An answer with its full Content-Length; ``truncate``: only half the body, then the
        connection is closed (the client sees a short read)."""
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in _HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        if truncate:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body[:len(body) // 2] if truncate else body)
        self.wfile.flush()

    def drop(self) -> None:
        """Closes the connection without an answer."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


class _LoopbackServer(ThreadingHTTPServer):
    """Answers each connection on a thread; :meth:`close_connections` ends the open ones (a
    stopped server answers nothing more, on a kept-alive connection either)."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, owner: "_Served", host: str) -> None:
        self.owner = owner
        self._open: Set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__((host, 0), _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._open_lock:
            connections = list(self._open)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _Served:
    """A loopback server on a thread of this process, as a context manager."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._host = host
        self._server: Optional[_LoopbackServer] = None
        self._thread: Optional[threading.Thread] = None
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self.url = ""

    def start(self) -> "_Served":
        if self._server is None:
            self._closing.clear()
            self._server = _LoopbackServer(self, self._host)
            port = self._server.server_address[1]
            self.url = f"http://{self._host}:{port}"
            self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                            name=f"{type(self).__name__}:{port}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stops serving (a delayed answer still waiting ends now, unanswered)."""
        server, self._server = self._server, None
        if server is not None:
            self._closing.set()
            server.shutdown()
            server.server_close()
            server.close_connections()
            if self._thread is not None:
                self._thread.join()

    def _answer(self, handler: _Handler, method: str, target: str, body: bytes) -> None:
        raise NotImplementedError


class ReplayServer(_Served):
    """Serves recorded answers over loopback HTTP, as the service would (see the module docs).

    ``answers``: :class:`Answer` objects or the path of a recording (:func:`load_answers`).
    ``strict`` (default): leaving the ``with`` block runs :meth:`check`, so an unexpected request
    fails the test even when the code under test caught the 501 it got; ``all_used``: the check
    also fails on an answer never asked for (a test of "fetches only the pages needed").
    ``login``: answer ``POST /api/auth/login`` with a fresh JWT living ``token_ttl`` seconds
    (``0``: already expired when issued, so the client logs in again before every request).

    Attributes: ``url`` (``http://127.0.0.1:PORT``, once started), :attr:`requests`.
    """

    def __init__(self, answers: Union[PathLike, Iterable[Answer]] = (), *, strict: bool = True,
                 all_used: bool = False, login: bool = True, token_ttl: int = 7 * 86400,
                 host: str = "127.0.0.1") -> None:
        super().__init__(host)
        from vehicledata import schema

        self.strict = strict
        self.all_used = all_used
        self.login = login
        self.token_ttl = int(token_ttl)
        self.login_path = schema.endpoint_for("login").path
        self._text_errors = {e.path for e in schema.endpoints().values() if e.text_errors}
        self._queues: Dict[_Key, _Queue] = {}
        self._faults: List[_Fault] = []
        self._seen: List[SeenRequest] = []
        self._in_flight = self._max_in_flight = 0
        self._tokens: Set[str] = set()
        self._secret = uuid.uuid4().hex
        self._account = str(uuid.uuid4())
        if isinstance(answers, (str, os.PathLike)):
            answers = load_answers(answers)
        self.add(*answers)

    # ---- set up ------------------------------------------------------------------------------
    def add(self, *answers: Answer) -> None:
        """Adds answers (after those of the same request already held)."""
        with self._lock:
            for answer in answers:
                self._queues.setdefault(_key(answer.method, answer.target), _Queue()).add(answer)

    def fault(self, target: str = "", status: int = 503, count: int = 1, retry_after: Optional[int] = None,
              action: str = "status", delay_ms: Optional[int] = None, body: Optional[str] = None,
              method: Optional[str] = None) -> None:
        """Schedules a fault for the next ``count`` requests matching ``target``: their path starts
        with ``target``'s path and they carry every query parameter ``target`` names
        (``"/api/makes/v2?page=3"``: page 3 of any makes search; ``""``: every request, the login
        included). Faults are checked before the answers, the earliest scheduled first.

        ``action``: ``"status"`` answers ``status`` with the service's error body (``body``
        verbatim instead when given) and ``Retry-After: retry_after`` when given; ``"drop"`` closes
        the connection without an answer; ``"truncate"`` sends the recorded answer's headers and
        half its body, then closes; ``"delay"`` sends the recorded answer after ``delay_ms``.
        ``delay_ms`` delays the other actions too. A request a fault drops, truncates or delays
        still needs a recorded answer (else it is unexpected).
        """
        if action not in FAULT_ACTIONS:
            raise ValueError(f"action must be one of {', '.join(map(repr, FAULT_ACTIONS))}, not {action!r}")
        if count < 1:
            raise ValueError(f"count must be >= 1, not {count}")
        with self._lock:
            self._faults.append(_Fault(_Match(target, method), target, action, int(status), int(count),
                                       retry_after, delay_ms, body))

    # ---- what was asked ----------------------------------------------------------------------
    @property
    def requests(self) -> List[SeenRequest]:
        """Every request received so far, in arrival order (logins included)."""
        with self._lock:
            return list(self._seen)

    def count(self, target: str = "", method: Optional[str] = None) -> int:
        """How many requests matched ``target`` (as :meth:`fault` matches), logins included only
        when ``target`` names the login path (``""`` counts every other request)."""
        match = _Match(target, method)
        with self._lock:
            return sum(1 for s in self._seen if match(s.method, s.target)
                       and (s.answer != "login" or (target and _split(target)[0] == self.login_path)))

    @property
    def logins(self) -> int:
        """Logins this server answered."""
        with self._lock:
            return sum(1 for s in self._seen if s.answer == "login")

    @property
    def max_in_flight(self) -> int:
        """The most requests this server was answering at once (from a request's headers read to
        its answer sent): a crawl's parallelism as the server saw it."""
        with self._lock:
            return self._max_in_flight

    @property
    def unexpected(self) -> List[SeenRequest]:
        """The requests that found no answer."""
        with self._lock:
            return [s for s in self._seen if s.answer == "unexpected"]

    def unused(self) -> List[Answer]:
        """The answers never served."""
        with self._lock:
            return [a for q in self._queues.values() for a, n in zip(q.answers, q.served) if n == 0]

    def check(self, all_used: Optional[bool] = None) -> None:
        """Raises :class:`UnexpectedRequestError` when a request found no answer (and, with
        ``all_used`` (default: the server's), when an answer was never asked for)."""
        lines: List[str] = []
        unexpected = self.unexpected
        if unexpected:
            lines.append(f"ReplayServer got {len(unexpected)} unexpected request(s):")
            lines += [f"  {s}" for s in unexpected]
            lines.append(self._expected(unexpected))
        if self.all_used if all_used is None else all_used:
            unused = self.unused()
            if unused:
                lines.append(f"ReplayServer was never asked for {len(unused)} recorded answer(s):")
                lines += [f"  {a.method} {a.target}" for a in unused]
        if lines:
            raise UnexpectedRequestError("\n".join(lines))

    def _expected(self, requests: Sequence[SeenRequest], limit: int = 30) -> str:
        """The recorded answers of the requests' paths (else every one), with their uses left."""
        paths = {_split(s.target)[0] for s in requests}
        with self._lock:
            items = [(q.answers[i], q.left[i]) for q in self._queues.values() for i in range(len(q.answers))]
        near = [(a, left) for a, left in items if _split(a.target)[0] in paths] or items
        if not near:
            return "it holds no answers"
        head = "recorded for " + ", ".join(sorted(paths)) if near is not items else "recorded"
        shown = [f"  {a.method} {a.target}  ({'any number' if left is None else left} left)"
                 for a, left in near[:limit]]
        more = [f"  ... and {len(near) - limit} more"] if len(near) > limit else []
        return "\n".join([f"{head} (uses left):"] + shown + more)

    # ---- serving -----------------------------------------------------------------------------
    def _answer(self, handler: _Handler, method: str, target: str, body: bytes) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            self._reply(handler, method, target)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _reply(self, handler: _Handler, method: str, target: str) -> None:
        headers = {k: v for k, v in handler.headers.items() if k.lower() != "authorization"}
        bearer = handler.headers.get("Authorization", "")
        with self._lock:
            authorized = bearer.startswith("Bearer ") and bearer[7:] in self._tokens
            fault = next((f for f in self._faults if f.left > 0 and f.match(method, target)), None)
            if fault is not None:
                fault.left -= 1
            action = fault.action if fault is not None else ""
            is_login = self.login and method == "POST" and _split(target)[0] == self.login_path
            # a status fault or a drop answers in the recorded answer's stead; a truncation or a
            # delay sends it (and needs one, as an unfaulted request does)
            answer = None if is_login or action in ("status", "drop") else self._take(method, target)
            kind = ("fault" if action in ("status", "drop") or (fault and answer) else "login" if is_login
                    else "recorded" if answer else "unexpected")
            self._seen.append(SeenRequest(method, target, headers, kind, action, authorized))
        if fault is not None and fault.delay_ms and self._closing.wait(fault.delay_ms / 1000.0):
            return handler.drop()  # the server stops
        if action == "status":
            assert fault is not None
            return handler.send(*self._error(target, fault))
        if action == "drop":
            return handler.drop()
        if is_login:
            return handler.send(200, {"Content-Type": "text/plain; charset=UTF-8"}, self._issue().encode())
        if answer is None:
            return handler.send(*self._unexpected(method, target))
        handler.send(answer.status, answer.headers, answer.body, truncate=action == "truncate")

    def _take(self, method: str, target: str) -> Optional[Answer]:
        queue = self._queues.get(_key(method, target))
        return queue.take() if queue is not None else None

    def _issue(self) -> str:
        """A fresh JWT of the service's form (HS256; ``iat`` now, ``exp`` ``token_ttl`` later)."""
        from vehicledata import _core

        now = int(time.time())
        payload = {"iss": "vehicledata-replay", "sub": self._account, "aud": self._account, "iat": now,
                   "exp": now + self.token_ttl, "jti": str(uuid.uuid4()),
                   "user": {"subscriptions": ["premium"], "rate_limit_type": "hard",
                            "addons": {"antique_vehicles": False, "data_feed": True}}}
        token = _core.jwt.sign_hs256(json.dumps(payload, separators=(",", ":")), self._secret)
        with self._lock:
            self._tokens.add(token)
        return token

    def _error(self, target: str, fault: _Fault) -> Tuple[int, Dict[str, str], bytes]:
        from vehicledata import _core

        headers: Dict[str, str] = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = str(int(fault.retry_after))
        if fault.body is not None:
            json_body = fault.body[:1] in ("{", "[")
            headers["Content-Type"] = "application/json" if json_body else "text/plain; charset=UTF-8"
            return fault.status, headers, fault.body.encode()
        message = f"Fault injected by vehicledata.testing.ReplayServer ({fault.action} {fault.pattern or '*'})"
        if _split(target)[0] in self._text_errors:
            headers["Content-Type"] = "text/plain; charset=UTF-8"
            return fault.status, headers, message.encode()
        headers["Content-Type"] = "application/json"
        exception = _core.envelope.exception_for(fault.status)
        body = _core.envelope.error_json(exception, fault.status, _split(target)[0], message)
        return fault.status, headers, body.encode()

    def _unexpected(self, method: str, target: str) -> Tuple[int, Dict[str, str], bytes]:
        from vehicledata import _core

        message = f"ReplayServer has no recorded answer for {method} {target}"
        body = _core.envelope.error_json("UnexpectedRequest", 501, _split(target)[0], message)
        return 501, {"Content-Type": "application/json"}, body.encode()

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self) -> "ReplayServer":
        super().start()
        return self

    def __enter__(self) -> "ReplayServer":
        return self.start()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.stop()
        if not self.strict:
            return
        if exc_type is None:
            self.check()
        elif self.unexpected:
            self.check(all_used=False)  # the unexpected request explains the test's error: say so

    def __repr__(self) -> str:
        return f"ReplayServer(url={self.url!r}, answers={sum(len(q.answers) for q in self._queues.values())})"


class Recorder(_Served):
    """A loopback proxy in front of ``upstream`` (a base URL: the emulator's ``emu.url``) that keeps
    every answer it forwards; point the code under test at :attr:`url`, then :meth:`save`.

    Every request is forwarded as sent (``Accept-Encoding`` aside, so bodies are recorded
    uncompressed); the login route and ``/_emulator/`` are forwarded and not recorded, and no
    request header is recorded. Only the :data:`KEPT_HEADERS` of an answer are kept. A request
    repeated with the same answer is recorded once; with another answer (a retry after an error),
    the earlier answers are recorded with ``times=1`` and the last one answers every later request.
    An upstream that cannot be reached is a 502 to the client, not recorded.
    """

    def __init__(self, upstream: str, *, timeout: float = 120.0, host: str = "127.0.0.1") -> None:
        super().__init__(host)
        from vehicledata import schema

        parts = urlsplit(upstream.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"upstream must be an http:// or https:// URL, not {upstream!r}")
        self.upstream = upstream.rstrip("/")
        self._parts = parts
        self._timeout = timeout
        self._skip = (schema.endpoint_for("login").path, "/_emulator/")
        self._log: List[Answer] = []

    @property
    def answers(self) -> List[Answer]:
        """The answers recorded so far (see the class docs), by method, path and query (numbers in
        their order: ``page=2`` before ``page=10``), so a recording does not depend on the order in
        which concurrent requests came."""
        with self._lock:
            log = list(self._log)
        by_key: Dict[_Key, List[Answer]] = {}
        for answer in log:
            same = by_key.setdefault(_key(answer.method, answer.target), [])
            if not same or (same[-1].status, same[-1].headers, same[-1].body) != \
                    (answer.status, answer.headers, answer.body):
                same.append(answer)
        out: List[Answer] = []
        for _, same in sorted(by_key.items(), key=lambda item: _natural(item[0])):
            out += [replace(a, times=1) for a in same[:-1]] + [replace(same[-1], times=None)]
        return out

    def save(self, path: PathLike, note: str = "") -> Path:
        """Writes :attr:`answers` as a recording (:func:`save_answers`); returns the path."""
        return save_answers(path, self.answers, note)

    def start(self) -> "Recorder":
        super().start()
        return self

    def __enter__(self) -> "Recorder":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Recorder(url={self.url!r}, upstream={self.upstream!r}, answers={len(self._log)})"

    def _answer(self, handler: _Handler, method: str, target: str, body: bytes) -> None:
        forward = {k: v for k, v in handler.headers.items()
                   if k.lower() not in _HOP_BY_HOP and k.lower() not in ("host", "accept-encoding", "expect")}
        cls = http.client.HTTPSConnection if self._parts.scheme == "https" else http.client.HTTPConnection
        prefix = self._parts.path.rstrip("/")
        conn = cls(self._parts.netloc, timeout=self._timeout)
        try:
            conn.request(method, prefix + target, body=body or None, headers=forward)
            response = conn.getresponse()
            data = response.read()
            status = response.status
            headers = {k: v for k, v in response.getheaders()}
        except (OSError, http.client.HTTPException) as exc:
            message = f"Recorder could not reach {self.upstream}: {exc}"
            return handler.send(502, {"Content-Type": "text/plain; charset=UTF-8"}, message.encode())
        finally:
            conn.close()
        if not _split(target)[0].startswith(self._skip):
            kept = {k: headers[k] for k in headers if k.lower() in {h.lower() for h in KEPT_HEADERS}}
            with self._lock:
                self._log.append(Answer(method.upper(), target, status, kept, data))
        handler.send(status, headers, data)
