"""Request targets: the path and query string the client sends, and their checks
(length before sending; the demo data-set's empty answer after).

Paths come from the schema table (``schema.endpoint_for``); this module fills
their parameters, appends the query string and refuses what the server would
refuse.  It imports nothing of the client or the pager, which both use it.
Links the server sends back (``next``) are checked for their origin in the C++
client (cpp/client/client.cpp), which holds the base URL.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence, Tuple
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from . import schema
from .errors import DemoDataWarning, QueryError, quoted, text_problem
from .schema import Endpoint

#: Longest request target (path + query, percent-encoded) the client sends.
#: Servers refuse longer request lines (cpp-httplib: 8 KiB, others 414).
MAX_TARGET_BYTES = 8000


def _param_text(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def _not_text(name: str, text: str) -> QueryError:
    """QueryError for a parameter whose value does not encode as UTF-8 (a lone surrogate such as
    ``"\\ud800"``): named, its bad character and position shown, before anything is sent."""
    return QueryError(f"{name} {quoted(text)} is not valid text ({text_problem(text)})", field=name)


def build_target(path: str, params: Sequence[Tuple[str, Any]]) -> str:
    """``path?name=value&...``, percent-encoded (booleans as yes/no); QueryError for a value that is
    not valid text."""
    if not params:
        return path
    pairs = [(str(k), _param_text(v)) for k, v in params]
    try:
        return path + "?" + urlencode(pairs, quote_via=quote, safe="")
    except UnicodeEncodeError:
        for k, v in pairs:
            if text_problem(k):
                raise _not_text("parameter name", k) from None
            if text_problem(v):
                raise _not_text(k, v) from None
        raise


def endpoint_path(ep: Endpoint, value: Any = None) -> str:
    """The endpoint's path with its path parameter (``{id}``, ``{code}``, ``{vin}``) filled in, encoded
    (QueryError for a value that is not valid text)."""
    if not ep.parameter:
        return ep.path
    text = str(value)
    if text_problem(text):
        raise _not_text(ep.parameter, text)
    return ep.path.replace("{" + ep.parameter + "}", quote(text, safe=""))


def check_target(target: str) -> str:
    """``target`` if it fits in MAX_TARGET_BYTES, else QueryError (before anything is sent)."""
    if len(target.encode()) > MAX_TARGET_BYTES:
        raise QueryError(f"the request target is {len(target.encode())} bytes once URL-encoded, over the client's "
                         f"maximum of {MAX_TARGET_BYTES}: use fewer or shorter conditions (e.g. split an isin() list "
                         f"over several searches)")
    return target


def strip_userinfo(url: str) -> str:
    """The URL without ``user:password@`` (the service does not use it; it must not leak into reprs)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, parts.query, parts.fragment))


def warn_demo_empty(authenticated: bool, path: str, params: Sequence[Tuple[str, Any]], total: int) -> None:
    """DemoDataWarning when an anonymous client's search without any year filter or condition
    finds nothing on an endpoint restricted to the demo data-set (the rows it asked for may all
    be outside the demo years: a make sold only before 2015, say)."""
    if total != 0 or authenticated:
        return
    try:
        ep = schema.endpoint(path)
    except (KeyError, ValueError):
        return
    if not ep.demo_predicate:
        return
    for key, value in params:
        if key == "year" or (key == "json" and '"year"' in str(value)):
            return  # the client's year warning has spoken, or the years asked for are the demo's
    lo, hi = schema.DEMO_YEARS
    warnings.warn(f"{path}: no rows; without a subscription (no api_token/api_secret) the service serves only "
                  f"the demo model years {lo}-{hi}, so what you asked for may exist outside them",
                  DemoDataWarning, stacklevel=4)
