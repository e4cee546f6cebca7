"""Names and values checked before a request (the "did you mean" of every unknown one): enumerated filters and conditions against the schema table's value
lists (with a "did you mean"), sort keys by their short name, stray blanks trimmed.

    api.engines.search(drive_type="AWD")   # QueryError: ... did you mean 'all wheel drive'?
    api.trims.search(model="Camry ")       # sent as model=Camry
    api.trims.search(sort="msrp")          # sent as sort=MakeModelTrims.msrp
    api.trims.search(year="2020")          # QueryError: filter 'year' of /api/trims/v2 takes an int, ...

A value the schema has no list for is sent as given (blanks trimmed).  A filter typed ``int`` (or
``float``, ``bool``) in the schema table (:func:`filter_types`, the types ``_resources.py`` gives
the search keywords) takes a value of that type only, as a type checker would require.
"""
from __future__ import annotations

import difflib
import json
import numbers
import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from . import schema
from .errors import ECHO_CHARS, QueryError, excerpt, quoted

# Short names of the service's qualified sort keys that are not their last part.
_SORT_ALIASES = {"make": "Makes.name", "model": "OemMakeModels.name", "submodel": "OemMakeModelSubmodels.name",
                 "trim": "MakeModelTrims.name"}


def did_you_mean(text: str, valid: Iterable[str], *, loose: bool = False,
                 fold: Optional[Callable[[str], str]] = None, otherwise: str = "") -> str:
    """The "did you mean" of every unknown name or value of the package (its one home):
    ``"; did you mean 'x'?"`` naming the valid one nearest to ``text``, else ``otherwise`` (what
    the caller's sentence needs there: ``"."`` before a list of the valid ones, or nothing).

    Nearest by spelling (difflib, a ratio of 0.6 or more): names a program writes (filters, json
    fields, attributes, sort keys, columns, the package's and a record's attributes).  ``loose``:
    by :func:`suggest` (initials, a value containing it, then spelling with case ignored): values
    a person types (enumerated values, makes, models).  Nothing is suggested for a ``text`` longer
    than ``ECHO_CHARS`` (it is not echoed whole), nor a name equal to ``text`` once both are
    ``fold``-ed (the caller compares names that way: the name was refused for another reason)."""
    near: Optional[str] = None
    if len(text) <= ECHO_CHARS:
        names = list(valid)
        if loose:
            near = suggest(text, names)
        else:
            close = difflib.get_close_matches(text, names, n=1, cutoff=0.6)
            near = close[0] if close else None
        if near is not None and fold is not None and fold(near) == fold(text):
            near = None
    return f"; did you mean {near!r}?" if near else otherwise


def unknown_name(kind: str, name: Any, valid: Sequence[str], where: str) -> str:
    """The message for an unknown name (filter, json field, attribute, feed table, CLI column):
    the nearest valid one (:func:`did_you_mean`) and every valid one."""
    text = name if isinstance(name, str) else repr(name)
    hint = did_you_mean(text, valid, otherwise=".")
    listed = f" Valid: {', '.join(valid)}." if valid else f" {where} accepts none."
    shown = quoted(name) if isinstance(name, str) else excerpt(text)
    return f"unknown {kind} {shown} for {where}{hint}{listed}"


def _initials(text: str) -> str:
    return "".join(w[0] for w in re.findall(r"[A-Za-z0-9]+", text)).lower()


def suggest(value: str, valid: Sequence[str]) -> Optional[str]:
    """The valid value a mistyped one most likely means: its initials ("AWD" -> 'all wheel drive'),
    then a value containing it, then the closest spelling (difflib); None when nothing is near."""
    low = value.strip().lower()
    if not low:
        return None
    for v in valid:
        if _initials(v) == low and len(low) > 1:
            return v
    contains = [v for v in valid if low in v.lower()]
    if len(contains) == 1:
        return contains[0]
    near = difflib.get_close_matches(low, [v.lower() for v in valid], n=1, cutoff=0.6)
    if near:
        return next(v for v in valid if v.lower() == near[0])
    return contains[0] if contains else None


def _like(pattern: str) -> "re.Pattern[str]":
    """SQL LIKE as a regular expression (``%`` any run, ``_`` one character; ASCII case ignored)."""
    out = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.compile(f"^{out}$", re.I | re.S)


def _enum(ep: schema.Endpoint, name: str) -> Tuple[str, ...]:
    for j in ep.json_fields:
        if j.name == name and j.enum:
            return j.enum
    try:
        rec = schema.record(ep.record)
    except KeyError:
        return ()
    for f in rec.fields:
        if f.name == name and f.enum:
            return f.enum
    return ()


def _unknown_value(what: str, value: Any, valid: Sequence[str], path: str) -> QueryError:
    hint = did_you_mean(str(value), valid, loose=True, otherwise=".")
    shown = quoted(value) if isinstance(value, str) else excerpt(repr(value))
    return QueryError(f"unknown value {shown} for {what} of {path}{hint} Valid: {', '.join(valid)}.",
                      field=what.split()[-1])


# Schema type -> the Python type of a keyword filter's value (the search keywords of _resources.py).
_PY_TYPES = {"int": "int", "int64": "int", "decimal": "float", "float": "float", "string": "str", "bool": "bool"}


def filter_types(ep: schema.Endpoint) -> Dict[str, str]:
    """Keyword filter of ``ep`` -> the Python type of its value: ``int``, ``float``, ``bool`` or ``str``
    from the schema type of the field it filters (a like filter: ``str``), ``Union[int, str]`` where
    the schema table gives no type.  The one map of the typed keywords (``vehicledata._typegen``) and of
    the run-time check (:func:`check_filter`)."""
    json_types = {j.name: j.type for j in ep.json_fields}
    try:
        rec = {f.name: f.type for f in schema.record(ep.record).fields}
    except KeyError:
        rec = {}
    out: Dict[str, str] = {}
    for name, match in ep.filters:
        out[name] = "str" if match == "like" else _PY_TYPES.get(json_types.get(name) or rec.get(name) or "",
                                                                 "Union[int, str]")
    return out


def is_bool(value: Any) -> bool:
    """Whether ``value`` is a bool: Python's or numpy's (``np.True_``)."""
    return isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"))


def _is(kind: str, value: Any) -> bool:
    """Whether ``value`` is of a filter's Python type (numpy's integers are ints; a bool is no number)."""
    if kind == "bool":
        return is_bool(value)
    if is_bool(value):
        return False
    if kind == "int":
        return isinstance(value, numbers.Integral)
    if kind == "float":
        return isinstance(value, numbers.Real)
    return True  # str and untyped filters: sent as given (the service checks them)


def check_type(ep: schema.Endpoint, name: str, value: Any) -> None:
    """QueryError when a keyword filter typed ``int``, ``float`` or ``bool`` (:func:`filter_types`) is
    given a value of another type (``year="2020"``), naming the filter, its type and the value's."""
    kind = filter_types(ep).get(name, "")
    if kind not in ("int", "float", "bool") or _is(kind, value):
        return
    shown = quoted(value) if isinstance(value, str) else excerpt(repr(value))
    hint = ""
    if kind == "int" and isinstance(value, str) and value.strip().lstrip("+-").isdigit() and len(value) <= 20:
        hint = f"; pass {name}={int(value)}"
    elif kind == "int" and isinstance(value, float) and value.is_integer():
        hint = f"; pass {name}={int(value)}"
    raise QueryError(f"filter {name!r} of {ep.path} takes {'an' if kind == 'int' else 'a'} {kind}, not "
                     f"{type(value).__name__} {shown}{hint}", field=name)


def check_filter(ep: schema.Endpoint, name: str, value: Any) -> Any:
    """The value to send for a keyword filter: its type checked (:func:`check_type`); text trimmed; an
    enumerated field's value checked against the schema's list (Like filters: the pattern must match
    one value, case ignored; exact filters: the value must be one of them)."""
    check_type(ep, name, value)
    if isinstance(value, str):
        value = value.strip()
        if not value:
            raise QueryError(f"filter {name!r} of {ep.path} is blank", field=name)
    valid = _enum(ep, name)
    if not valid or not isinstance(value, str):
        return value
    match = dict(ep.filters).get(name)
    if match == "like":
        rx = _like(value)
        if any(rx.match(v) for v in valid):
            return value
    elif value in valid:
        return value
    raise _unknown_value(f"filter {name}", value, valid, ep.path)


def check_conditions(ep: schema.Endpoint, json_text: str) -> None:
    """Enumerated fields of encoded conditions: ``=``, ``!=``, ``in`` and ``not in`` values must be in the
    schema's list (case as listed), ``like`` patterns must match one of them (case ignored)."""
    enums = {j.name: j.enum for j in ep.json_fields if j.enum}
    if not enums:
        return
    for c in json.loads(json_text):
        if not isinstance(c, dict) or c.get("field") not in enums:
            continue
        name, op, val = c["field"], c.get("op"), c.get("val")
        valid = enums[name]
        values: List[Any] = list(val) if isinstance(val, list) else [val]
        for v in values:
            if not isinstance(v, str):
                continue
            if op in ("like", "not like"):
                if not any(_like(v).match(x) for x in valid):
                    raise _unknown_value(f"condition field {name}", v, valid, ep.path)
            elif op in ("=", "!=", "in", "not in") and v not in valid:
                raise _unknown_value(f"condition field {name}", v, valid, ep.path)


def resolve_sort(ep: schema.Endpoint, sort: str) -> str:
    """A sort key of ``ep``: as listed, or by its short name (``msrp`` -> ``MakeModelTrims.msrp``;
    ``make`` -> ``Makes.name``) when that names one key; else QueryError with the valid keys."""
    keys = list(ep.sort_keys)
    key = sort.strip() if isinstance(sort, str) else sort
    if key in keys:
        return str(key)
    if isinstance(key, str):
        alias = _SORT_ALIASES.get(key)
        if alias in keys:
            return str(alias)
        short = [k for k in keys if k.rpartition(".")[2] == key]
        if len(short) == 1:
            return short[0]
    hint = did_you_mean(str(sort), keys + [k.rpartition(".")[2] for k in keys], otherwise=".")
    shown = quoted(sort) if isinstance(sort, str) else excerpt(repr(sort))
    raise QueryError(f"unknown sort {shown} for {ep.path}{hint} Valid: {', '.join(keys)}.")


__all__ = ["check_filter", "check_type", "filter_types", "is_bool", "check_conditions", "resolve_sort", "suggest",
           "did_you_mean", "unknown_name"]
