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

import importlib as _importlib  # noqa: E402
from typing import TYPE_CHECKING as _TYPE_CHECKING  # noqa: E402
from typing import Any as _Any  # noqa: E402

from . import _core  # noqa: E402
from . import schema  # noqa: E402
from .errors import (  # noqa: E402
    APIError,
    AuthenticationError,
    BadRequestError,
    DecodeError,
    DemoDataWarning,
    MethodNotAllowedError,
    NotFoundError,
    NullColumnWarning,
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
    "ClientOptions": "vehicledata.options",
    "Retry": "vehicledata.client",
    "Pager": "vehicledata.pager",
    "Page": "vehicledata.pager",
    "Record": "vehicledata.pager",
    "show_versions": "vehicledata._versions",
    "AsyncClient": "vehicledata.aio",
    "AsyncPager": "vehicledata.aio",
}


if _TYPE_CHECKING:  # type checkers and IDEs see the lazy names as what they are (vd.Client, its accessors...)
    from . import vin as vin
    from .client import Client as Client
    from .options import ClientOptions as ClientOptions
    from .client import Retry as Retry
    from .pager import Page as Page
    from .pager import Pager as Pager
    from .pager import Record as Record
    from .query import Condition as Condition
    from .query import F as F
    from .aio import AsyncClient as AsyncClient
    from .aio import AsyncPager as AsyncPager


def __getattr__(name: str) -> _Any:
    if name == "vin":  # the submodule vehicledata.vin (validate, check_digit, VinResult)
        value = _importlib.import_module("vehicledata.vin")
        globals()[name] = value
        return value
    module = _LAZY.get(name)
    if module is None:
        from ._values import did_you_mean

        hint = did_you_mean(name, __all__)
        raise AttributeError(f"module 'vehicledata' has no attribute {name!r}{hint}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    """The public names, lazy ones included (tab completion before first use)."""
    return sorted(set(__all__) | {"errors", "query", "pager", "frames", "feed", "client"} - {"annotations"})


__all__ = [
    "__version__", "schema", "vin", *sorted(_LAZY),
    "VehicleDataError", "APIError", "BadRequestError", "AuthenticationError", "PermissionDeniedError",
    "NotFoundError", "MethodNotAllowedError", "RateLimitError", "ServerError", "ServiceUnavailableError",
    "TransportError", "Timeout", "DecodeError", "QueryError", "PaginationError", "LimitError",
    "DemoDataWarning", "NullColumnWarning",
]
