"""One exception tree for the whole package.

    VehicleDataError
    ├── APIError                      the server answered with an error status
    │   ├── BadRequestError           400
    │   ├── AuthenticationError       401, and 500 UnauthenticatedException
    │   ├── PermissionDeniedError     403
    │   ├── NotFoundError             404
    │   ├── MethodNotAllowedError     405
    │   ├── RateLimitError            429 (retry_after)
    │   ├── ServerError               other 5xx
    │   └── ServiceUnavailableError   503
    ├── TransportError                no usable answer (connection, TLS, reset)
    │   └── Timeout
    ├── DecodeError                   a body that is not what the service sends
    ├── QueryError (also ValueError)  an invalid filter or condition, found before sending
    ├── PaginationError               a repeated, inconsistent or foreign-origin `next` link
    └── LimitError                    an answer past a client limit (``limit``: max_body,
                                      max_decompressed, max_pages, memory)

Every error carries ``status``, ``url``, the server's ``exception`` name and
``message``; all are picklable.  Secrets never appear in them.  Input echoed in a message is cut to
``ECHO_CHARS`` characters with its length named (:func:`excerpt`, :func:`quoted`); a message longer
than ``MAX_MESSAGE`` characters (with 64 of slack, so that a message cut once, then unpickled, stays
as it is) is cut the same way, so no exception holds a huge string.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Type

from ._core import envelope as _envelope
from ._readable import readable


#: Characters of an input echoed in an error message (the rest cut, its length named).
ECHO_CHARS = 200
#: Characters of an error message past which it is cut (its length named).
MAX_MESSAGE = 2000


def excerpt(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` for an error message: whole when it has at most ``limit`` characters, else its first
    ``limit`` followed by ``... (<n> characters)``.

        >>> excerpt("A" * 10**8)[-30:]
        'AAAAA... (100,000,000 characters)'
    """
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def quoted(text: str, limit: int = ECHO_CHARS) -> str:
    """``repr(text)`` cut as :func:`excerpt` cuts (escapes shown: a lone surrogate prints as ``\\ud800``)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


def text_problem(text: str) -> Optional[str]:
    """None when ``text`` encodes as UTF-8 (all the C++ core and a URL take), else why not, for an
    error message: ``surrogates not allowed: '\\ud800' at position 2`` (a lone surrogate)."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"{e.reason}: {text[e.start]!r} at position {e.start}"
    return None


class VehicleDataError(Exception):
    """Base of every error raised by vehicledata."""

    def __init__(
        self,
        message: str = "",
        *,
        status: Optional[int] = None,
        url: Optional[str] = None,
        exception: Optional[str] = None,
        **extra: Any,
    ) -> None:
        if isinstance(message, str) and len(message) > MAX_MESSAGE + 64:  # (a message cut once stays as it is)
            message = excerpt(message, MAX_MESSAGE)
        super().__init__(message)
        self.message = message
        self.status = status
        self.url = url
        self.exception = exception
        for key, value in extra.items():
            setattr(self, key, value)
        self._extra = extra

    def __reduce__(self) -> Tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.status, self.url, self.exception, self._extra))

    def __str__(self) -> str:
        parts = []
        if self.status is not None:
            parts.append(str(self.status))
        if self.exception:
            parts.append(self.exception)
        head = " ".join(parts)
        text = f"{head}: {self.message}" if head else self.message
        if self.url:
            text += f" (url: {readable(self.url)})"
        return readable(text)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r}, url={self.url!r}, exception={self.exception!r})"

    def _repr_html_(self) -> str:
        """Jupyter: the class, status and server exception, the message and the URL (escaped)."""
        from html import escape

        head = " ".join(str(p) for p in (self.status, self.exception) if p)
        url = f"<br><code>{escape(readable(self.url))}</code>" if self.url else ""
        return (f"<div><b>{escape(type(self).__name__)}</b> {escape(head)}<br>"
                f"{escape(readable(self.message))}{url}</div>")


def _rebuild(cls: Type[VehicleDataError], message: str, status: Optional[int], url: Optional[str],
             exception: Optional[str], extra: Dict[str, Any]) -> VehicleDataError:
    return cls(message, status=status, url=url, exception=exception, **extra)


class APIError(VehicleDataError):
    """The server answered with an error status."""


class BadRequestError(APIError):
    """400: the request contains invalid data; the message states the issue."""


class AuthenticationError(APIError):
    """401, or 500 UnauthenticatedException: credentials or token rejected."""


class PermissionDeniedError(APIError):
    """403: the account lacks the product (e.g. the data feed)."""


class NotFoundError(APIError):
    """404: unknown id, code, plate or path."""


class MethodNotAllowedError(APIError):
    """405: wrong HTTP method for the path."""


class RateLimitError(APIError):
    """429: the per-minute limit was exceeded.  ``retry_after`` is in seconds (or None)."""

    retry_after: Optional[float] = None


class ServerError(APIError):
    """5xx other than 503."""


class ServiceUnavailableError(ServerError):
    """503 (and 500 ServiceUnavailableException): maintenance or overload."""


class TransportError(VehicleDataError):
    """No usable answer: connection refused or reset, TLS failure, truncated transfer."""


class Timeout(TransportError):
    """A connect or total timeout expired."""


class DecodeError(VehicleDataError):
    """A body that is not what the service sends.  ``position`` is the byte offset, if known."""

    position: Optional[int] = None


class DemoDataWarning(UserWarning):
    """An anonymous (demo) client asked for data the demo data-set does not hold (model years
    outside 2015-2020): the service answers with fewer or no rows instead of an error."""


class NullColumnWarning(UserWarning):
    """Columns of an ``api.vehicles`` frame that are null on every row (the catalogue has no value for
    them there: a body's length, width and height, for one): said once per process for each column;
    the frame names them all (``df.attrs["vehicledata.always_null"]``, ``vehicledata.frames``)."""


class QueryError(VehicleDataError, ValueError):
    """An invalid filter, condition, sort key or page, found before sending.

    ``field`` and ``op`` name the offending condition where there is one.
    """

    field: Optional[str] = None
    op: Optional[str] = None
    position: Optional[int] = None


class PaginationError(VehicleDataError):
    """The server's paging links repeat or contradict each other."""


_BY_STATUS: Dict[int, Type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


class LimitError(VehicleDataError):
    """An answer larger than a client limit (``limit`` names the option: ``max_body``,
    ``max_decompressed``, ``max_pages``; ``memory`` when an allocation failed)."""

    limit: str


def error_for_status(status: int, exception: Optional[str] = None) -> Type[APIError]:
    """The exception class for an HTTP status (and the server's exception name, one of
    ``vehicledata._core.envelope.EXCEPTIONS``)."""
    if exception == _envelope.UNAUTHENTICATED:
        return AuthenticationError
    if exception == _envelope.SERVICE_UNAVAILABLE:
        return ServiceUnavailableError
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status >= 500:
        return ServerError
    return APIError


__all__ = [
    "VehicleDataError", "APIError", "BadRequestError", "AuthenticationError", "PermissionDeniedError",
    "NotFoundError", "MethodNotAllowedError", "RateLimitError", "ServerError", "ServiceUnavailableError",
    "TransportError", "Timeout", "DecodeError", "QueryError", "PaginationError", "LimitError", "error_for_status",
    "DemoDataWarning", "NullColumnWarning", "text_problem",
]
