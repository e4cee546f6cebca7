"""vehicledata: vehicle reference data in Python.

A fast client for the Vehicle Data Service (C++ core: libcurl, simdjson) and a
faithful local emulator of the whole service over real public vehicle data.

    import vehicledata as vd
    with vd.Client() as api:                      # env VEHICLEDATA_* or arguments
        df = api.trims.search(year=2019, make="BMW").to_pandas()
"""
from __future__ import annotations

# A plain CMake build tree puts the compiled parts under BUILD/pkg/vehicledata;
# with BUILD/pkg on PYTHONPATH they join this package.
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

import importlib  # noqa: E402
from typing import Any  # noqa: E402

from . import _core  # noqa: E402
from . import schema  # noqa: E402
from .errors import (  # noqa: E402
    APIError,
    AuthenticationError,
    BadRequestError,
    DecodeError,
    MethodNotAllowedError,
    NotFoundError,
    PaginationError,
    LimitError,
    PermissionDeniedError,
    QueryError,
    RateLimitError,
    ServerError,
    ServiceUnavailableError,
    Timeout,
    TransportError,
    VehicleDataError,
)

__version__: str = _core.__version__

# Public names that live in modules imported on first use (keeps `import vehicledata` fast).
_LAZY = {
    "F": "vehicledata.query",
    "Condition": "vehicledata.query",
    "Client": "vehicledata.client",
    "Retry": "vehicledata.client",
    "Pager": "vehicledata.pager",
    "Page": "vehicledata.pager",
    "Record": "vehicledata.pager",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'vehicledata' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "__version__", "schema", *sorted(_LAZY),
    "VehicleDataError", "APIError", "BadRequestError", "AuthenticationError", "PermissionDeniedError",
    "NotFoundError", "MethodNotAllowedError", "RateLimitError", "ServerError", "ServiceUnavailableError",
    "TransportError", "Timeout", "DecodeError", "QueryError", "PaginationError", "LimitError",
]
