"""``vehicledata.show_versions()``: what this installation runs on, for bug reports.

Prints vehicledata's and Python's versions, the platform, the C/C++ libraries the core is linked
against as they report themselves at run time (libcurl with its TLS backend, features and
protocols; simdjson; SQLite; OpenSSL), the CA bundle TLS verification uses and whether the
`pyvehicledata-data` package (the full catalogue) is installed. See docs/installing.md.
"""
from __future__ import annotations

import platform
import sys
from typing import Dict, Optional, TextIO

from . import _core, _tls


def versions() -> Dict[str, str]:
    """The lines of show_versions() as a dict (name -> text)."""
    from .dataset import paths

    out = {"vehicledata": _core.__version__, "Python": f"{platform.python_version()} ({sys.executable})",
           "platform": platform.platform()}
    for name, version, detail in _core.client.library_versions():
        out[name] = f"{version} ({detail})" if detail else version
    bundle = _tls.ca_bundle()
    out["CA bundle"] = bundle or "libcurl's compiled-in default"
    data = paths.packaged_sources()
    out["pyvehicledata-data"] = str(data) if data else f"not installed ({paths.DATA_HINT})"
    return out


def show_versions(file: Optional[TextIO] = None) -> None:
    """Print versions(), one `name: value` line each."""
    stream = sys.stdout if file is None else file
    for name, value in versions().items():
        print(f"{name + ':':<18}{value}", file=stream)


__all__ = ["show_versions", "versions"]
