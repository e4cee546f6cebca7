"""Fixtures of the client tests: the real emulator over loopback, and clients of it.

``emulator``: one emulator for the session (default accounts, 600/min), reset before
each test.  ``api``: a premium client of it, no client-side rate limit and short
backoffs; ``demo_api``: a client without credentials; ``raw_json``: the stdlib's
reading of the same URL, the reference the decoded values are compared with.
"""
from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
import urllib.request
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, Optional

import pytest

import vehicledata as vd
from vehicledata import schema
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

# (DEMO_ACCOUNTS is read when a client is made, not on import: the tests over recorded answers,
# test_replay_*.py, need neither the emulator nor its executable)
FAST_RETRY = vd.Retry(total=3, backoff_factor=0.01, backoff_jitter=0.0)


@pytest.fixture(scope="session")
def emulator_session(database: Path) -> Iterator[Emulator]:
    with Emulator(db=database) as emu:
        yield emu


@pytest.fixture()
def emulator(emulator_session: Emulator) -> Iterator[Emulator]:
    emulator_session.reset()
    yield emulator_session
    emulator_session.reset()


def make_client(url: str, account: Any = "premium", **kw: Any) -> vd.Client:
    """A client of ``url`` as ``account`` (a DEMO_ACCOUNTS entry, "premium": that one's; None:
    anonymous), no client-side rate limit, short backoffs."""
    kw.setdefault("rate_limit", None)
    kw.setdefault("retry", FAST_RETRY)
    if account == "premium":
        account = DEMO_ACCOUNTS["premium"]
    if account is None:
        return vd.Client(base_url=url, api_token="", api_secret="", **kw)
    return vd.Client(base_url=url, api_token=account["api_token"], api_secret=account["api_secret"], **kw)


@pytest.fixture(scope="session")
def client_factory() -> Callable[..., vd.Client]:
    """``client_factory(url, account="premium", **options)``: a client with short backoffs, no rate limit."""
    return make_client


@pytest.fixture()
def api(emulator: Emulator) -> Iterator[vd.Client]:
    with make_client(emulator.url) as client:
        yield client


@pytest.fixture()
def demo_api(emulator: Emulator) -> Iterator[vd.Client]:
    with make_client(emulator.url, None) as client:
        yield client


@pytest.fixture()
def cli(emulator: Emulator, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> Callable[..., Any]:
    """``cli(*argv)`` runs the ``vehicledata`` CLI as the premium account against the emulator and
    returns ``(exit code, stdout, stderr)``."""
    from vehicledata.cli import main

    monkeypatch.setenv("VEHICLEDATA_BASE_URL", emulator.url)
    premium = DEMO_ACCOUNTS["premium"]
    monkeypatch.setenv("VEHICLEDATA_API_TOKEN", premium["api_token"])
    monkeypatch.setenv("VEHICLEDATA_API_SECRET", premium["api_secret"])

    def run(*argv: str) -> Any:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture()
def raw_json(emulator: Emulator) -> Callable[..., Any]:
    """GET a target with urllib (premium JWT unless anonymous) and json.loads it."""
    cache: Dict[str, str] = {}

    def get(target: str, anonymous: bool = False) -> Any:
        headers = {}
        if not anonymous:
            if "jwt" not in cache:
                premium = DEMO_ACCOUNTS["premium"]
                body = json.dumps({"api_token": premium["api_token"], "api_secret": premium["api_secret"]}).encode()
                req = urllib.request.Request(emulator.url + "/api/auth/login", data=body, method="POST",
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=10) as resp:
                    cache["jwt"] = resp.read().decode().strip()
            headers["Authorization"] = "Bearer " + cache["jwt"]
        req = urllib.request.Request(emulator.url + target, headers=headers)
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.loads(resp.read())

    return get


# ---- test oracle: a raw JSON record typed the way the client promises (written independently) ----


def typed_record(raw: Any, record: str, verbose: bool = False) -> Any:
    if isinstance(raw, list):
        return [typed_record(x, record, verbose) for x in raw]
    if not isinstance(raw, dict):
        return raw
    rec = schema.record(record)
    out: Dict[str, Any] = {}
    for f in rec.record_fields(verbose):
        if f.name not in raw:
            out[f.name] = None
            continue
        v = raw[f.name]
        if v is None:
            out[f.name] = None
        elif f.type == "decimal":
            out[f.name] = float(Decimal(v)) if isinstance(v, str) else float(v)
        elif f.type == "timestamp":
            out[f.name] = datetime.fromisoformat(v)
        elif f.type == "nested":
            out[f.name] = typed_record(v, f.nested, verbose) if f.nested and schema.record(f.nested).fields else v
        else:
            out[f.name] = v
    return out


@pytest.fixture()
def typed() -> Callable[[Any, str], Any]:
    return typed_record

