"""VINs on the client: local validation (the emulator's C++ rules, no request) and the typed
record of ``Client.vin``.

    >>> import vehicledata as vd
    >>> vd.vin.validate(" 1gtg6cen0l1139305 ")
    '1GTG6CEN0L1139305'
    >>> vd.vin.validate("1GTG6CEN0L113930")
    Traceback (most recent call last):
    ...
    vehicledata.errors.QueryError: Invalid VIN '1GTG6CEN0L113930': expected 17 characters, got 16

The rules (docs/emulator.md): 17 characters; every character in the VIN alphabet (0-9, A-Z
without I, O, Q); position 9 (check digit) 0-9 or X; position 10 (model year) a model year code.
A check digit that does not compute is not an error here: the service still decodes such a VIN
and reports vPIC's error code 1 in ``specs["error_code"]``; ``check_digit`` computes it.
"""
from __future__ import annotations

from typing import Any, List, Mapping, Optional, cast

from . import _core
from .errors import QueryError
from .pager import Record

__all__ = ["validate", "check_digit", "VinResult"]


def validate(vin: str) -> str:
    """The VIN normalized (spaces stripped, upper-cased); raises QueryError naming the broken rule."""
    if not isinstance(vin, str):
        raise QueryError(f"vin must be a string, not {type(vin).__name__}", field="vin")
    normalized = _core.vin_normalize(vin)
    problem = _core.vin_validation_error(normalized)
    if problem:
        raise QueryError(f"Invalid VIN '{vin}': {problem}", field="vin")
    return normalized


def check_digit(vin: str) -> str:
    """The check digit position 9 should hold (49 CFR 565.15), for a VIN that ``validate`` accepts."""
    return cast(str, _core.vin_check_digit(validate(vin)))


class VinResult(Record):
    """The answer of ``Client.vin``: the decoded ``year``, ``make``, ``model``, ``trim``, the vPIC
    elements as ``specs`` (snake_case name -> string or None) and the catalogue's ``trims``
    (legacy trim records, best match first)."""

    __slots__ = ()

    @property
    def year(self) -> int:
        return cast(int, self._data["year"])

    @property
    def make(self) -> str:
        return cast(str, self._data["make"])

    @property
    def model(self) -> str:
        return cast(str, self._data["model"])

    @property
    def trim(self) -> Optional[str]:
        return cast(Optional[str], self._data["trim"])

    @property
    def specs(self) -> Mapping[str, Optional[str]]:
        return cast(Mapping[str, Optional[str]], self._data["specs"])

    @property
    def trims(self) -> List[Record]:
        return cast(List[Record], self._data["trims"])

    def __repr__(self) -> str:
        return f"VinResult(year={self.year!r}, make={self.make!r}, model={self.model!r}, trim={self.trim!r}, " \
               f"specs=<{len(self.specs)} elements>, trims=<{len(self.trims)} trims>)"

    @classmethod
    def of(cls, record: Record) -> "VinResult":
        data: Any = record._data
        return cls(data)
