"""Which CA certificates verify TLS: decided here, once, for every client.

The wheel carries a libcurl built on Debian, whose compiled-in CA path is Debian's
(``/etc/ssl/certs/ca-certificates.crt``); on Fedora, openSUSE or Alpine that file may not exist.
So the client picks the bundle at run time, in this order:

1. ``SSL_CERT_FILE``, then ``CURL_CA_BUNDLE``, when set to an existing file (the user's choice);
2. the system store: the first existing file of :data:`SYSTEM_CA_BUNDLES`;
3. ``certifi.where()`` when certifi is installed (``pip install certifi``);
4. ``""``: libcurl's compiled-in default.

``Client(verify="/path/ca.pem")`` bypasses all of this; ``verify=False`` disables verification.
See docs/installing.md.
"""
from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence

SYSTEM_CA_BUNDLES: Sequence[str] = (
    "/etc/ssl/certs/ca-certificates.crt",                 # Debian, Ubuntu, Arch, Gentoo, Alpine
    "/etc/pki/tls/certs/ca-bundle.crt",                   # Fedora, RHEL, CentOS, Amazon Linux
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  # RHEL/Fedora (the extracted trust store)
    "/etc/ssl/ca-bundle.pem",                             # openSUSE, SLES
    "/etc/ssl/cert.pem",                                  # Alpine, Void
)
ENV_VARS: Sequence[str] = ("SSL_CERT_FILE", "CURL_CA_BUNDLE")


def ca_bundle(environ: Optional[Mapping[str, str]] = None,
              candidates: Sequence[str] = SYSTEM_CA_BUNDLES) -> str:
    """The CA bundle file TLS verification uses (``""``: libcurl's default)."""
    env = os.environ if environ is None else environ
    for name in ENV_VARS:
        value = env.get(name, "")
        if value and os.path.isfile(value):
            return value
    for path in candidates:
        if os.path.isfile(path):
            return path
    try:
        import certifi  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return ""
    return str(certifi.where())


__all__ = ["ENV_VARS", "SYSTEM_CA_BUNDLES", "ca_bundle"]
