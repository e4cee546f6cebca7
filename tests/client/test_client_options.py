"""Client options as one typed object (issue 39, point 3): ``vd.ClientOptions`` is taken by both
clients, which then hold the same settings; the keywords are a shorthand for its fields; a setting
given both ways is a TypeError.  Against the real emulator."""
from __future__ import annotations

import asyncio
import dataclasses
import inspect
from pathlib import Path

import pytest

import vehicledata as vd
from vehicledata.options import DEFAULT, NAMES
from vehicledata.testing import DEMO_ACCOUNTS, Emulator

SETTINGS = ("base_url", "timeout", "rate_limit", "max_parallel", "progress", "cache_dir", "authenticated")


def test_every_field_is_a_keyword_of_both_clients_and_documented() -> None:
    sync = [p for p in inspect.signature(vd.Client).parameters if p != "options"]
    assert tuple(sync) == NAMES and len(NAMES) == 25
    assert all(p.default is DEFAULT for p in inspect.signature(vd.Client).parameters.values()
               if p.name != "options")
    assert {"api_token", "api_secret", "base_url", "options"} <= set(inspect.signature(vd.AsyncClient).parameters)
    source = inspect.getsource(vd.ClientOptions)
    for name in NAMES:  # a docstring under each field
        assert f'    {name}: ' in source and source.split(f'    {name}: ', 1)[1].split("\n", 1)[1].lstrip() \
            .startswith('"""'), name
    assert vd.ClientOptions() == vd.Client(base_url="http://127.0.0.1:9").options.__class__()
    assert "ClientOptions" in vd.__all__ and vd.ClientOptions is vd.options.ClientOptions


def test_both_clients_take_one_options_object_and_reach_the_same_settings(emulator: Emulator,
                                                                          tmp_path: Path) -> None:
    premium = DEMO_ACCOUNTS["premium"]
    opts = vd.ClientOptions(api_token=premium["api_token"], api_secret=premium["api_secret"], base_url=emulator.url,
                            rate_limit=None, timeout=17.0, max_parallel=3, retry=2, progress=False,
                            cache=tmp_path / "cache")
    api = vd.Client(options=opts)

    async def run() -> None:
        async with vd.AsyncClient(options=opts) as aapi:
            assert aapi.options is opts is api.options
            for name in SETTINGS:
                assert getattr(aapi, name) == getattr(api, name), name
            assert aapi.retry.total == api.retry.total == 2
            assert (api.timeout, api.max_parallel, api.rate_limit, api.cache_dir) == (17.0, 3, 0, tmp_path / "cache")
            assert api.authenticated
            # ... and the same answers (the premium account: years outside the demo set)
            assert await aapi.trims.search(year=2012).total == api.trims.search(year=2012).total > 0

    with api:
        asyncio.run(run())


def test_the_keywords_are_a_shorthand_for_the_fields(emulator: Emulator) -> None:
    keywords = dict(base_url=emulator.url, rate_limit=None, max_parallel=2, timeout=9.0)
    with vd.Client(**keywords) as api:  # type: ignore[arg-type]
        assert api.options == vd.ClientOptions(**keywords)  # type: ignore[arg-type]
        fields = {f.name: getattr(api.options, f.name) for f in dataclasses.fields(api.options)}
        with vd.Client(**fields) as again:
            assert again.options == api.options and again.timeout == api.timeout == 9.0

    async def run() -> None:
        async with vd.AsyncClient(None, None, emulator.url, rate_limit=None) as aapi:
            assert aapi.options == vd.ClientOptions(base_url=emulator.url, rate_limit=None, api_token=None,
                                                    api_secret=None)

    asyncio.run(run())


def test_a_setting_given_both_ways_is_a_type_error() -> None:
    opts = vd.ClientOptions(base_url="http://127.0.0.1:9", timeout=5.0)
    with pytest.raises(TypeError, match=r"^Client\(\) got both options= and timeout=: give each setting once"):
        vd.Client(options=opts, timeout=5.0)
    with pytest.raises(TypeError, match=r"^Client\(\) got both options= and api_token=:"):
        vd.Client("token", options=opts)
    with pytest.raises(TypeError, match=r"^AsyncClient\(\) got both options= and rate_limit=, max_parallel=:"):
        vd.AsyncClient(options=opts, rate_limit=None, max_parallel=2)
    with pytest.raises(TypeError, match="options must be a vd.ClientOptions, not dict"):
        vd.Client(options={"timeout": 5.0})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unexpected keyword argument 'timeot'"):
        vd.AsyncClient(timeot=5.0)


def test_values_are_checked_when_a_client_is_made_with_the_same_messages() -> None:
    bad = vd.ClientOptions(base_url="http://127.0.0.1:9", max_parallel=0)
    with pytest.raises(ValueError, match="max_parallel must be >= 1, not 0") as by_options:
        vd.Client(options=bad)
    with pytest.raises(ValueError) as by_keyword:
        vd.Client(base_url="http://127.0.0.1:9", max_parallel=0)
    with pytest.raises(ValueError) as by_async:
        vd.AsyncClient(options=bad)
    assert str(by_options.value) == str(by_keyword.value) == str(by_async.value)


def test_the_repr_hides_the_secret_and_shows_what_differs() -> None:
    opts = vd.ClientOptions(api_token="abcdefghijkl", api_secret="hunter2-secret", rate_limit=None)
    assert repr(opts) == "ClientOptions(api_token='...ijkl', api_secret='***', rate_limit=None)"
    assert "hunter2" not in repr(opts) and repr(vd.ClientOptions()) == "ClientOptions()"
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.timeout = 1.0  # type: ignore[misc]
    assert dataclasses.replace(opts, timeout=1.0).timeout == 1.0 and opts.timeout == 60.0
