"""Text for people: a request target's ``json`` parameter shown decoded in logs and error messages.

    >>> readable("GET /api/trims/v2?year=2020&json=%5B%7B%22field%22%3A%22year%22%7D%5D (200)")
    'GET /api/trims/v2?year=2020&json=[{"field":"year"}] (200)'

The request itself is unchanged (``VehicleDataError.url`` keeps the URL as sent); only the text a
person reads is decoded.  Imports nothing of the package (errors and client both use it).
"""
from __future__ import annotations

import re
from urllib.parse import unquote_plus

_JSON_PARAM = re.compile(r"([?&]json=)([^&\s#]*)")


def readable(text: str) -> str:
    """``text`` with the value of every ``json=`` query parameter percent-decoded."""
    if "json=" not in text:
        return text
    return _JSON_PARAM.sub(lambda m: m.group(1) + unquote_plus(m.group(2)), text)


__all__ = ["readable"]
