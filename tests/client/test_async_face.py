"""The same face (issue 39, point 6): every accessor, attribute and method of ``vd.Client`` and its
resources, pagers, feed and VIN accessor has its ``vd.AsyncClient`` twin under the same name, with
the same parameters; a member the sync side calls is called on the async side (awaited where it
does I/O).  The differences are the short list below, each documented in docs/async.md ("The same
face")."""
from __future__ import annotations

import asyncio
import gc
import inspect
from typing import Any, Dict, List, Optional, Set, Tuple

import pytest

import vehicledata as vd
from vehicledata.testing import Emulator

from client_support import make_async

# (face, name): why the two differ.  docs/async.md lists the same.
DIFFERENCES: Dict[Tuple[str, str], str] = {
    ("client", "login"): "sync only: the engine logs in with the first request that needs it",
    ("client", "aclose"): "async only: the awaitable close (close() is on both)",
    ("client", "account_requests"): "async only: deprecated alias of api.account.requests()",
    ("client", "account_requests_today"): "async only: deprecated alias of api.account.requests_today()",
}


def _public(obj: Any) -> Set[str]:
    return {n for n in dir(obj) if not n.startswith("_")}


def _params(f: Any) -> Optional[List[str]]:
    try:
        return [p.name for p in inspect.signature(f).parameters.values() if p.name != "self"]
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return None


def _member(obj: Any, name: str, resolve: bool) -> Tuple[str, Optional[List[str]]]:
    """("attribute", None) or ("call", its parameters).  Properties are read only when ``resolve``
    (the clients' accessors, which send nothing: ``api.years`` gives a callable); a pager's would fetch."""
    try:
        static = inspect.getattr_static(obj, name)
    except AttributeError:  # an accessor of __getattr__ (api.trims on the async client)
        static = getattr(obj, name)
    if isinstance(static, property):
        if not resolve:
            return "attribute", None
        static = getattr(obj, name)
    if isinstance(static, (staticmethod, classmethod)):
        static = static.__func__
    if inspect.isroutine(static):
        return "call", _params(static)
    if not inspect.isclass(static) and type(static).__module__.startswith("vehicledata") and callable(static):
        return "call", _params(type(static).__call__)
    return "attribute", None


def faces(api: vd.Client, aapi: Any) -> List[Tuple[str, Any, Any, bool]]:
    """(face, sync object, async object, read properties) of every pair the test walks."""
    pairs = [("client", api, aapi, True)]
    for name in sorted(vd.client.SEARCH_NAMES):
        pairs.append((f"api.{name}", getattr(api, name), getattr(aapi, name), True))
    pairs += [("pager", api.trims.search(year=2020), aapi.trims.search(year=2020), False),
              ("api.vehicles", api.vehicles, aapi.vehicles, True),
              ("vehicles pager", api.vehicles.search(year=2020), aapi.vehicles.search(year=2020), False),
              ("api.data_feed", api.data_feed, aapi.data_feed, True),
              ("api.vin", api.vin, aapi.vin, True),
              ("api.account", api.account, aapi.account, True)]
    return pairs


def differences(pairs: List[Tuple[str, Any, Any, bool]]) -> List[str]:
    out: List[str] = []
    for face, sync, asyn, resolve in pairs:
        for name in sorted(_public(sync) | _public(asyn)):
            if (face, name) in DIFFERENCES:
                continue
            if name not in _public(asyn):
                out.append(f"{face}.{name}: sync only")
            elif name not in _public(sync):
                out.append(f"{face}.{name}: async only")
            else:
                a, b = _member(sync, name, resolve), _member(asyn, name, resolve)
                if a != b:
                    out.append(f"{face}.{name}: {a} vs {b}")
        if callable(sync) and _params(sync) != _params(asyn):
            out.append(f"{face}(): {_params(sync)} vs {_params(asyn)}")
    return out


@pytest.mark.asyncio
async def test_the_two_faces_are_the_same_but_for_the_documented_list(emulator: Emulator, api: vd.Client):
    async with make_async(emulator.url) as aapi:
        assert differences(faces(api, aapi)) == []
        for face, name in DIFFERENCES:  # the list names only real differences
            assert face == "client" and (hasattr(api, name) != hasattr(aapi, name)), (face, name)


def test_the_walk_sees_a_missing_or_different_member():
    class Sync:
        def search(self, year: int = 0) -> None: ...
        def total(self) -> None: ...
        def extra(self) -> None: ...

    class Async:
        async def search(self, make: str = "") -> None: ...
        @property
        def total(self) -> Any: ...

    assert differences([("x", Sync(), Async(), False)]) == [
        "x.extra: sync only", "x.search: ('call', ['year']) vs ('call', ['make'])",
        "x.total: ('call', []) vs ('attribute', None)"]


@pytest.mark.asyncio
async def test_what_the_sync_pager_answers_the_async_one_answers_awaited(emulator: Emulator, api: vd.Client):
    async with make_async(emulator.url) as aapi:
        sync, asyn = api.trims.search(year=2020, make="BMW"), aapi.trims.search(year=2020, make="BMW")
        assert (asyn.verbose, asyn.parallel, asyn.progress, asyn.path, asyn.params) == \
            (sync.verbose, sync.parallel, sync.progress, sync.path, sync.params)
        assert asyn.arrow_schema() == sync.arrow_schema()
        assert await asyn.total == sync.total and await asyn.page_count == sync.page_count
        assert await asyn.synthetic == sync.synthetic and "msrp" in sync.synthetic
        assert await aapi.account.requests_today() >= 1


@pytest.mark.asyncio
async def test_reading_page_count_without_await_starts_nothing(emulator: Emulator):
    """``pager.page_count`` read and dropped: no task, so a failure is no "Task exception was never
    retrieved" (the closed client below would fail it)."""
    aapi = make_async(emulator.url)
    pager = aapi.trims.search(year=2020)
    await aapi.aclose()
    loop = asyncio.get_running_loop()
    reported: List[Dict[str, Any]] = []
    loop.set_exception_handler(lambda loop, context: reported.append(context))
    try:
        before = len(asyncio.all_tasks())
        for _ in range(3):
            pager.page_count  # noqa: B018 - read, not awaited
            pager.total  # noqa: B018
            pager.synthetic  # noqa: B018
        assert len(asyncio.all_tasks()) == before
        gc.collect()
        await asyncio.sleep(0)
        assert reported == []
        with pytest.raises(vd.VehicleDataError, match="closed"):
            await pager.page_count
    finally:
        loop.set_exception_handler(None)
