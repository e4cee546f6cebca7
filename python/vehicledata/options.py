"""The settings of a client as one typed object: ``vd.ClientOptions``, which ``vd.Client`` and
``vd.AsyncClient`` both take.

    import dataclasses
    import vehicledata as vd

    opts = vd.ClientOptions(rate_limit=None, max_parallel=8, progress=False)
    api = vd.Client(options=opts)                  # the same settings on both clients
    aapi = vd.AsyncClient(options=opts)
    fast = vd.Client(options=dataclasses.replace(opts, timeout=10))

The keywords of ``vd.Client(...)`` and ``vd.AsyncClient(...)`` (``vd.Client(timeout=10)``) are a
shorthand for these fields: they make the client's ``ClientOptions``.  A setting given both ways
(``vd.Client(options=opts, timeout=10)``) is a ``TypeError``: which one wins would not be obvious.
The values are checked when a client is made, as the keywords always were (a bad value raises
``ValueError`` there, with the same message either way); ``api.options`` is the object it was made
from.  The C++ core's own ``ClientOptions`` (``vehicledata._core.client.ClientOptions``) is what the
client fills from it.  docs/client.md, "Connecting".
"""
from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any, Dict, Optional, Tuple, Union

from .retry import Retry


class _Default:
    """The default of a keyword of ``vd.Client``/``vd.AsyncClient``: not given (its ``ClientOptions`` field's default)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFAULT"


#: A client keyword left out: the value of its ``ClientOptions`` field (see that field for the default).
DEFAULT: Any = _Default()


@dataclass(frozen=True)
class ClientOptions:
    """Every setting of a client (``vd.Client(options=...)``, ``vd.AsyncClient(options=...)``); each
    field is also a keyword of both clients.  Immutable: ``dataclasses.replace(options, timeout=10)``
    makes a changed copy.  The repr shows the fields that differ from their default, the API token
    masked and never the secret."""

    api_token: Optional[str] = None
    """The API token; None: ``$VEHICLEDATA_API_TOKEN`` (none: the demo data-set, model years
    2015-2020, as the service serves it).  Giving only one of token and secret raises
    ``AuthenticationError``."""
    api_secret: Optional[str] = None
    """The API secret; None: ``$VEHICLEDATA_API_SECRET``.  Never shown in a repr, log line or error."""
    base_url: Optional[str] = None
    """The service, or the local emulator (``vehicledata.testing.Emulator().url``); None:
    ``$VEHICLEDATA_BASE_URL``, else https://carapi.app.  A ``user:password@`` part is dropped."""
    timeout: float = 60.0
    """The total time of one transfer, in seconds (positive: never infinite)."""
    connect_timeout: float = 10.0
    """The time to connect, in seconds (positive)."""
    retry: Union[Retry, int, None] = None
    """The retry policy: a ``vd.Retry``, an int (that many retries) or ``0``/``False`` (none);
    None: ``vd.Retry()`` (docs/client.md, "Retries")."""
    rate_limit: Optional[float] = 600
    """Requests per minute of the client-side token bucket; None or 0: no limit (for the emulator)."""
    login_rate_limit: Optional[float] = 20
    """Logins per minute; None or 0: no limit."""
    jwt_cache: Union[bool, str, "os.PathLike[str]"] = False
    """``True`` (under ``$VEHICLEDATA_HOME/jwt``) or a directory: keep the JWT on disk between
    processes (mode 0600)."""
    max_parallel: int = 4
    """The most transfers at once (a crawl's pages, an async client's requests together)."""
    verify: Union[bool, str] = True
    """Verify TLS against the CA store found at run time; a path: that CA bundle; ``False``: no
    verification."""
    proxy: Optional[str] = None
    """An explicit proxy URL; None: libcurl honours ``http_proxy``, ``https_proxy``, ``no_proxy``."""
    http2: bool = True
    """Offer HTTP/2 (over TLS)."""
    progress: Optional[bool] = None
    """tqdm progress bars on multi-page work and downloads; None: only in Jupyter."""
    user_agent: Optional[str] = None
    """The User-Agent header; None: ``vehicledata.client.USER_AGENT``."""
    compress: Optional[bool] = None
    """Ask for gzip/deflate bodies; None: yes, except on the loopback interface."""
    rate_limit_burst: Optional[float] = None
    """Requests sent at once before ``rate_limit`` applies; None: a tenth of ``rate_limit`` (60 at
    600/min; the refill rate is lowered by as much, so no 60-second window exceeds it)."""
    max_body: int = 256 << 20
    """Bytes on the wire of an answer kept in memory (``LimitError`` past it; 0: no limit)."""
    max_decompressed: int = 256 << 20
    """Bytes of an answer after gzip (``LimitError`` past it; 0: no limit)."""
    max_pages: int = 100_000
    """The most pages an envelope may announce (``LimitError`` past it; 0: no limit)."""
    low_speed_limit: int = 1024
    """Bytes per second under which a transfer, for ``timeout`` seconds, ends as a ``Timeout`` (0: off)."""
    max_wait: Optional[float] = None
    """Seconds a call (one request, or one crawl) may sleep in total before its retries; past it
    the request's error is raised instead of sleeping.  None: the retry policy's (120)."""
    cache: Union[bool, str, "os.PathLike[str]", None] = None
    """The on-disk response cache: ``True`` (``$VEHICLEDATA_HOME/responses``) or a directory;
    None/False: off (docs/client.md, "Response cache")."""
    cache_ttl: Optional[float] = 3600.0
    """Seconds a cached answer is served; None: until evicted."""
    cache_max_bytes: int = 256 << 20
    """The cache directory's bound (least recently used answers deleted past it; 0: no limit)."""

    def __repr__(self) -> str:
        from .auth import mask

        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value is f.default or (type(value) is type(f.default) and value == f.default):
                continue
            text = mask(value) if f.name == "api_token" and isinstance(value, str) else \
                "'***'" if f.name == "api_secret" else repr(value)
            shown.append(f"{f.name}={text}")
        return f"ClientOptions({', '.join(shown)})"


#: The names of the settings, in the order of the clients' keywords.
NAMES: Tuple[str, ...] = tuple(f.name for f in fields(ClientOptions))


def options_of(who: str, options: Optional[ClientOptions], given: Dict[str, Any]) -> ClientOptions:
    """The options a client is made from: ``options``, or the keywords ``given`` (those not
    ``DEFAULT``) as a ``ClientOptions``.  TypeError for both at once, for ``options`` of another
    type, and for a keyword that is no setting (``who``: the client's name, for the messages)."""
    given = {name: value for name, value in given.items() if value is not DEFAULT}
    unknown = [name for name in given if name not in NAMES]
    if unknown:
        from ._values import did_you_mean

        raise TypeError(f"{who}() got an unexpected keyword argument {unknown[0]!r}"
                        f"{did_you_mean(unknown[0], NAMES)}")
    if options is None:
        return ClientOptions(**given)
    if not isinstance(options, ClientOptions):
        raise TypeError(f"options must be a vd.ClientOptions, not {type(options).__name__}")
    if given:
        names = ", ".join(f"{name}=" for name in given)
        raise TypeError(f"{who}() got both options= and {names}: give each setting once, in the options "
                        f"(dataclasses.replace(options, {next(iter(given))}=...)) or as keywords without options=")
    return options


__all__ = ["ClientOptions", "DEFAULT", "NAMES", "options_of"]
