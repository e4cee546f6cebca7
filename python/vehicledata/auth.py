"""Credentials and the optional on-disk JWT cache.

Credentials come from arguments, else ``VEHICLEDATA_API_TOKEN`` and
``VEHICLEDATA_API_SECRET``.  The secret and the JWT never appear in a repr, a
log line or an exception.  The disk cache (``jwt_cache=True`` or a directory)
keeps one file per (API token, secret, base URL) -- the file name is a hash
that includes a hash of the secret, never the secret -- mode 0600, under
``$VEHICLEDATA_HOME/jwt`` (else ``$XDG_DATA_HOME/vehicledata/jwt``, else
``~/.local/share/vehicledata/jwt``).  A token read from that file is checked
once per process with ``GET /api/account/requests-today`` before it is used
(a server whose signing key changed would otherwise answer search endpoints
with demo data, not 401); if the server rejects it, the client logs in again.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Optional, Tuple, Union


def data_home() -> Path:
    home = os.environ.get("VEHICLEDATA_HOME")
    if home:
        return Path(home)
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg) / "vehicledata"
    return Path.home() / ".local" / "share" / "vehicledata"


def credentials(api_token: Optional[str], api_secret: Optional[str]) -> Tuple[str, str]:
    token = api_token if api_token is not None else os.environ.get("VEHICLEDATA_API_TOKEN", "")
    secret = api_secret if api_secret is not None else os.environ.get("VEHICLEDATA_API_SECRET", "")
    if bool(token) != bool(secret):
        from .errors import AuthenticationError

        missing = "api_secret" if token else "api_token"
        raise AuthenticationError(f"{missing} is missing: pass both api_token and api_secret, or neither for demo data")
    return token, secret


def jwt_cache_path(jwt_cache: Union[bool, str, os.PathLike, None], api_token: str, base_url: str,
                   api_secret: str = "") -> str:
    """The cache file for this token, secret and URL ("" when the disk cache is off).

    The name hashes the token, the URL and a hash of the secret: a wrong secret
    never finds the token cached by the right one.
    """
    if not jwt_cache or not api_token:
        return ""
    directory = data_home() / "jwt" if jwt_cache is True else Path(jwt_cache)
    secret_hash = hashlib.sha256(b"vehicledata-secret\n" + api_secret.encode()).hexdigest()
    key = hashlib.sha256(f"{api_token}\n{base_url.rstrip('/')}\n{secret_hash}".encode()).hexdigest()[:32]
    return str(directory / f"{key}.jwt")


def mask(token: str) -> str:
    """A printable hint of an API token (never of a secret)."""
    if not token:
        return "None"
    return f"'...{token[-4:]}'" if len(token) > 8 else "'***'"


__all__ = ["credentials", "jwt_cache_path", "data_home", "mask"]
