"""vehicledata: vehicle reference data in Python.

A fast client for the Vehicle Data Service (C++ core: libcurl, simdjson) and a
faithful local emulator of the whole service over real public vehicle data.
"""
from __future__ import annotations

# A plain CMake build tree puts the compiled parts under BUILD/pkg/vehicledata;
# with BUILD/pkg on PYTHONPATH they join this package.
from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

from . import _core  # noqa: E402
from . import schema  # noqa: E402

__version__: str = _core.__version__

__all__ = ["__version__", "schema"]
