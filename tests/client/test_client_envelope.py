"""The wire envelope lives once, in C++ (cpp/core/envelope.cpp): the emulator's bytes, the
client's reading and vehicledata.errors all come from it and from the schema's records."""
from __future__ import annotations

import ast
import json
import re
import types
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import vehicledata as vd
from vehicledata import errors, schema
from vehicledata._core import envelope
from vehicledata.testing import Emulator

PACKAGE = Path(vd.__file__).resolve().parent
STUB = Path(__file__).resolve().parents[2] / "python" / "vehicledata" / "_core.pyi"


def raw(url: str) -> tuple[int, str, bytes]:
    """Status, content type and body bytes of a GET (stdlib, no client)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()


def test_exception_constants_are_the_names_once() -> None:
    names = envelope.EXCEPTIONS
    assert len(set(names)) == len(names) and all(n.endswith("Exception") for n in names)
    constants = {k: v for k, v in vars(envelope).items() if k.isupper() and isinstance(v, str)}
    assert sorted(constants.values()) == sorted(names)
    assert constants["UNAUTHENTICATED"] == "UnauthenticatedException"
    assert constants["URI_TOO_LONG"] == "UriTooLongException"
    # The type stub declares exactly these constants.
    stub = ast.parse(STUB.read_text())
    cls = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "_Envelope")
    declared = {a.target.id for a in cls.body if isinstance(a, ast.AnnAssign) and isinstance(a.target, ast.Name)}
    assert declared - {"EXCEPTIONS", "COLLECTION_MEMBERS"} == set(constants)
    assert envelope.exception_for(404) == envelope.NOT_FOUND
    assert envelope.exception_for(418) == envelope.HTTP


def test_errors_maps_exceptions_through_the_exported_constants(monkeypatch: pytest.MonkeyPatch) -> None:
    assert errors.error_for_status(500, envelope.UNAUTHENTICATED) is errors.AuthenticationError
    assert errors.error_for_status(500, envelope.SERVICE_UNAVAILABLE) is errors.ServiceUnavailableError
    assert errors.error_for_status(500, envelope.INTERNAL_ERROR) is errors.ServerError
    # The mapping reads the constants, not copies of their text.
    renamed = types.SimpleNamespace(UNAUTHENTICATED="RenamedAuth", SERVICE_UNAVAILABLE="RenamedUnavailable")
    monkeypatch.setattr(errors, "_envelope", renamed)
    assert errors.error_for_status(500, "RenamedAuth") is errors.AuthenticationError
    assert errors.error_for_status(500, "RenamedUnavailable") is errors.ServiceUnavailableError
    assert errors.error_for_status(500, "UnauthenticatedException") is errors.ServerError


def test_python_compares_no_exception_name_literal() -> None:
    """No module of the package compares against a literal "...Exception" (docstrings may name them)."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                for c in [node.left, *node.comparators]:
                    if isinstance(c, ast.Constant) and isinstance(c.value, str) and re.fullmatch(r"\w+Exception", c.value):
                        offenders.append(f"{path.name}:{node.lineno}: {c.value}")
    assert offenders == []


def test_error_body_bytes_are_the_writers(emulator: Emulator) -> None:
    status, ctype, body = raw(emulator.url + "/api/makes/v2?page=999")
    assert status == 404 and ctype.startswith("application/json")
    read = envelope.read_error(body, ctype)
    assert read == json.loads(body)
    assert list(read) == [f.name for f in schema.records()["error"].fields]
    assert read["exception"] == envelope.NOT_FOUND and read["code"] == 404 and read["url"] == "/api/makes/v2"
    assert envelope.error_json(**read).encode() == body


def test_malformed_error_bodies_are_read_as_text() -> None:
    assert envelope.read_error(b'{"exception":', "application/json") == {
        "exception": "", "code": 0, "url": "", "message": '{"exception":'}
    assert envelope.read_error(b'{"code":"4"}', "application/json")["message"] == '{"code":"4"}'
    text = envelope.read_error(b"TooManyRequestsException - Max Per Minute: 5\n", "text/plain")
    assert (text["exception"], text["message"]) == (envelope.TOO_MANY_REQUESTS, "TooManyRequestsException - Max Per Minute: 5")
    assert envelope.read_error(b'{"message":"bad \xff"}', "application/json")["message"] == "bad \ufffd"


def test_collection_members_are_the_wire_and_the_clients(emulator: Emulator, demo_api: vd.Client) -> None:
    target = "/api/makes/v2?limit=2&page=2"
    status, _, body = raw(emulator.url + target)
    assert status == 200
    wire = json.loads(body)["collection"]
    assert list(wire) == list(envelope.COLLECTION_MEMBERS) == [f.name for f in schema.records()["collection"].fields]
    page = demo_api._core.get_page(target, "make", "envelope", False)
    assert page.collection == wire
    assert list(page.collection) == list(envelope.COLLECTION_MEMBERS)
