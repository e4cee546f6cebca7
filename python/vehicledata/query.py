"""Conditions of the ``json`` query parameter, written as Python expressions.

    >>> from vehicledata import F
    >>> F("year") >= 2018
    Condition(field='year', op='>=', val=2018)
    >>> encode([F("year") >= 2018, F("make").isin(["BMW", "Audi"])])
    '[{"field":"year","op":">=","val":2018},{"field":"make","op":"in","val":["BMW","Audi"]}]'
    >>> encode((F("year") >= 2018) & F("series").is_null())
    '[{"field":"year","op":">=","val":2018},{"field":"series","op":"is null"}]'

Plain dicts ``{"field": ..., "op": ..., "val": ...}`` and JSON text are accepted
wherever conditions are.  Several conditions AND together.  Parsing, checking
and encoding are done by the C++ core (the same code the emulator runs), so an
invalid condition raises :class:`vehicledata.QueryError` (a ``ValueError``)
naming the field, the operator and the reason, before any request is sent::

    >>> encode([F("year") >= "soon"], endpoint="/api/trims/v2")
    Traceback (most recent call last):
    ...
    vehicledata.errors.QueryError: condition 1 (field "year", op ">="): val must be a number for integer field year

Grammar, operators, limits and leniency rules: ``docs/conditions.md``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from .errors import QueryError, quoted, text_problem

__all__ = [
    "F", "Condition", "Conditions", "normalize", "encode", "parse", "validate", "to_sql",
    "OPERATORS", "MAX_JSON_LENGTH", "MAX_CONDITIONS", "MAX_ARRAY_VALUES", "service_time",
]

_q = _core.query

#: The twelve operators, as spelled on the wire.
OPERATORS: Tuple[str, ...] = tuple(_q.OPERATORS)
#: Longest accepted ``json`` text in bytes (UTF-8, before URL encoding).
MAX_JSON_LENGTH: int = _q.MAX_JSON_LENGTH
#: Most conditions in one ``json`` parameter.
MAX_CONDITIONS: int = _q.MAX_CONDITIONS
#: Most values in one ``in`` / ``not in`` list.
MAX_ARRAY_VALUES: int = _q.MAX_ARRAY_VALUES

Scalar = Union[None, bool, int, float, str]


def _error(message: str, field: Optional[str] = None, op: Optional[str] = None) -> QueryError:
    """A QueryError with the same attributes as those raised by the C++ core."""
    return QueryError(message, field=field, op=op, position=None)


@dataclass(frozen=True)
class Condition:
    """One condition ``{field, op, val}``; build it with :class:`F`.

    ``val`` is a scalar, a tuple of scalars for ``in`` / ``not in``, and None
    for ``is null`` / ``not null``.  Combine conditions with ``&``::

        >>> (F("year") >= 2018) & (F("year") <= 2020)
        [Condition(field='year', op='>=', val=2018), Condition(field='year', op='<=', val=2020)]

    A condition has no truth value: ``F("a") == 1 and F("b") == 2`` raises
    TypeError instead of silently dropping the first condition.
    """

    field: str
    op: str
    val: Any = None

    def to_dict(self) -> Dict[str, Any]:
        """The wire shape: ``{"field": ..., "op": ..., "val": ...}`` (lists for in / not in).

            >>> F("make").isin(("BMW",)).to_dict()
            {'field': 'make', 'op': 'in', 'val': ['BMW']}
        """
        val = list(self.val) if isinstance(self.val, tuple) else self.val
        return {"field": self.field, "op": self.op, "val": val}

    def __and__(self, other: Any) -> List["Condition"]:
        if isinstance(other, Condition):
            return [self, other]
        if isinstance(other, list):
            return [self, *other]
        return NotImplemented

    def __rand__(self, other: Any) -> List["Condition"]:
        if isinstance(other, list):
            return [*other, self]
        return NotImplemented

    def __bool__(self) -> bool:
        raise TypeError(
            "a Condition has no truth value: combine conditions with & or a list, not 'and'/'or'"
        )


class F:
    """A json-searchable field; comparisons build :class:`Condition` objects.

        >>> F("year") == 2019
        Condition(field='year', op='=', val=2019)
        >>> F("make").isin(["BMW", "Audi"])
        Condition(field='make', op='in', val=('BMW', 'Audi'))
        >>> F("trim").like("%Sport%")
        Condition(field='trim', op='like', val='%Sport%')
        >>> F("series").is_null()
        Condition(field='series', op='is null', val=None)
        >>> F("series") == None   # same as is_null()
        Condition(field='series', op='is null', val=None)

    Dotted names address related records where the endpoint allows them
    (``F("engines.fuel_type") == "electric"`` on the trims search).  ``%`` and
    ``_`` in a LIKE pattern are wildcards, as on the service.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise _error(f"F() takes a non-empty field name, got {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"F({self.name!r})"

    def __bool__(self) -> bool:
        raise TypeError(f"F({self.name!r}) has no truth value: compare it (F(...) >= 1) to build a condition")

    __hash__ = None  # type: ignore[assignment]  # == builds a Condition, so F is not hashable

    def _label(self, op: str) -> str:
        return f"condition (field {json.dumps(self.name, ensure_ascii=False)}, op {json.dumps(op)})"

    def _cmp(self, op: str, value: Any) -> Condition:
        if isinstance(value, (list, tuple, set, frozenset, dict)):
            raise _error(
                f"{self._label(op)}: val must be a single value, got {type(value).__name__} (use .isin() for a list)",
                self.name, op,
            )
        return Condition(self.name, op, value)

    def __eq__(self, value: Any) -> Condition:  # type: ignore[override]
        if value is None:
            return Condition(self.name, "is null")
        return self._cmp("=", value)

    def __ne__(self, value: Any) -> Condition:  # type: ignore[override]
        if value is None:
            return Condition(self.name, "not null")
        return self._cmp("!=", value)

    def __gt__(self, value: Any) -> Condition:
        return self._cmp(">", value)

    def __lt__(self, value: Any) -> Condition:
        return self._cmp("<", value)

    def __ge__(self, value: Any) -> Condition:
        return self._cmp(">=", value)

    def __le__(self, value: Any) -> Condition:
        return self._cmp("<=", value)

    def _many(self, op: str, values: Iterable[Scalar]) -> Condition:
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise _error(f"{self._label(op)}: val must be a list of values, got {type(values).__name__}", self.name, op)
        return Condition(self.name, op, tuple(values))

    def isin(self, values: Iterable[Scalar]) -> Condition:
        """``in``: the field equals one of ``values`` (any iterable but a string)."""
        return self._many("in", values)

    def notin(self, values: Iterable[Scalar]) -> Condition:
        """``not in``: the field equals none of ``values`` (NULLs do not match)."""
        return self._many("not in", values)

    def like(self, pattern: str) -> Condition:
        """``like``: SQL LIKE, case-insensitive for ASCII; ``%`` and ``_`` are wildcards."""
        return self._cmp("like", pattern)

    def not_like(self, pattern: str) -> Condition:
        """``not like``: the negation of :meth:`like` (NULLs do not match)."""
        return self._cmp("not like", pattern)

    def is_null(self) -> Condition:
        """``is null``: the field has no value."""
        return Condition(self.name, "is null")

    def not_null(self) -> Condition:
        """``not null``: the field has a value."""
        return Condition(self.name, "not null")


Conditions = Union[None, str, Condition, Mapping[str, Any], Sequence[Union[Condition, Mapping[str, Any]]]]


def _endpoint_path(endpoint: Any) -> str:
    path = getattr(endpoint, "path", endpoint)
    if not isinstance(path, str):
        from .schema import Kind, endpoint_for

        raise _error(f"endpoint must be a path such as {endpoint_for(Kind.SEARCH, 'trims').path!r}, "
                     f"got {type(endpoint).__name__}")
    return path


def service_time(value: Any) -> Any:
    """``datetime``/``pd.Timestamp``/``date`` -> the service's timestamp text (US Eastern, ISO 8601
    with offset, as served: ``2023-06-29T21:01:06-04:00``); dates -> ``YYYY-MM-DD``; other values unchanged.

    Naive datetimes are taken as UTC (as the DataFrames' timestamps are); fractions of a second are
    dropped.  The service compares timestamps as text, so the conversion is what makes
    ``F("modified") >= datetime(...)`` right.  Conditions convert their values the same way, in the
    C++ core's bindings, with the core's US Eastern rules (``docs/conditions.md``).

        >>> from datetime import datetime, timezone
        >>> service_time(datetime(2023, 6, 30, 1, 1, 6, tzinfo=timezone.utc))
        '2023-06-29T21:01:06-04:00'
    """
    return _q.service_time(value)


def _texts(value: Any) -> Iterable[str]:
    """The strings of a condition's dict (keys and values, lists' members) or of JSON text."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _texts(k)
            yield from _texts(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _texts(v)


def _check_text(value: Any, where: str) -> None:
    """QueryError when a string of ``value`` does not encode as UTF-8 (a lone surrogate such as
    ``"\\ud800"``): the C++ core takes text only, and its bindings would raise an untyped error."""
    for text in _texts(value):
        problem = text_problem(text)
        if problem:
            field = value.get("field") if isinstance(value, Mapping) else None
            if not isinstance(field, str) or text_problem(field):
                field = None  # (the field's name is the bad text, or none is given)
            named = f" (field {quoted(field)})" if field is not None else ""
            raise _error(f"{where}{named}: {quoted(text)} is not valid text ({problem})", field)


def _dicts(conditions: Conditions) -> Union[str, List[Any]]:
    """Conditions as the C++ core takes them: JSON text, or a list of dicts (and JSON texts); a string
    that is not valid text (a lone surrogate) is a QueryError naming its condition."""
    out = _unchecked_dicts(conditions)
    if isinstance(out, str):
        _check_text(out, "conditions (JSON text)")
    else:
        for i, item in enumerate(out, 1):
            _check_text(item, f"condition {i}")
    return out


def _unchecked_dicts(conditions: Conditions) -> Union[str, List[Any]]:
    if conditions is None:
        return []
    if isinstance(conditions, str):
        return conditions
    if isinstance(conditions, (Condition, Mapping)):
        conditions = [conditions]
    if not isinstance(conditions, (list, tuple)):
        raise _error(
            f"conditions must be a Condition, a dict, a list of them or JSON text, got {type(conditions).__name__}"
        )
    out: List[Any] = []
    for item in conditions:
        if isinstance(item, Condition):
            out.append(item.to_dict())
        elif isinstance(item, Mapping) and not isinstance(item, dict):
            out.append(dict(item))
        else:
            out.append(item)  # dicts and JSON text as they are; the core names a wrong type and its position
    return out


def normalize(conditions: Conditions) -> List[Dict[str, Any]]:
    """Conditions (Condition objects, dicts, a list of them or JSON text) as
    canonical dicts ``{"field", "op", "val"}``; raises QueryError on bad shapes.

        >>> normalize([F("year") >= 2018, {"field": "make", "op": "IN", "val": ("BMW",)}])
        [{'field': 'year', 'op': '>=', 'val': 2018}, {'field': 'make', 'op': 'in', 'val': ['BMW']}]
    """
    return list(_q.parse(_q.encode(_dicts(conditions))))


def encode(conditions: Conditions, endpoint: Any = None) -> str:
    """The exact ``json`` parameter text (before URL encoding).

    With ``endpoint`` (a path such as ``"/api/trims/v2"`` or a schema Endpoint)
    the conditions are first checked against that endpoint's json fields and
    values converted to the field's type (``"2018"`` -> ``2018`` for a number
    field, as the service does).  A list of conditions may also hold JSON text,
    whose conditions join in its place.  One call into the C++ core.

        >>> encode(F("year") >= "2018", endpoint="/api/trims/v2")
        '[{"field":"year","op":">=","val":2018}]'
    """
    path = None if endpoint is None else _endpoint_path(endpoint)
    return str(_q.encode(_dicts(conditions), path))


def parse(text: str) -> List[Condition]:
    """Parse ``json`` parameter text into :class:`Condition` objects.

        >>> parse('[{"field":"year","op":"in","val":[2019,2020]}]')
        [Condition(field='year', op='in', val=(2019, 2020))]
    """
    if not isinstance(text, str):
        raise _error(f"parse() takes JSON text, got {type(text).__name__}")
    _check_text(text, "parse() text")
    out = []
    for d in _q.parse(text):
        val = tuple(d["val"]) if isinstance(d["val"], list) else d["val"]
        out.append(Condition(d["field"], d["op"], val))
    return out


def validate(conditions: Conditions, endpoint: Any) -> None:
    """Raise QueryError unless every condition names a json field of
    ``endpoint`` with a value of the field's type."""
    _q.validate(_dicts(conditions), _endpoint_path(endpoint))


def to_sql(conditions: Conditions, endpoint: Any) -> Tuple[str, List[Scalar]]:
    """The SQL WHERE fragment (``?`` placeholders) and its parameters, as the
    emulator runs them; for tests and debugging.

        >>> to_sql(F("make").isin(["BMW", "Audi"]), "/api/trims/v2")
        ('make COLLATE NOCASE IN (?, ?)', ['BMW', 'Audi'])
    """
    sql, params = _q.to_sql(_dicts(conditions), _endpoint_path(endpoint))
    return str(sql), list(params)
