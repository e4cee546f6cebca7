"""No silent waits: a wait over 2 s is a WARNING and shows on the open progress bars; max_wait caps
the total a request sleeps; a signal handler's exception propagates as raised (real emulator faults)."""
from __future__ import annotations

import io
import logging
import signal
import time
from typing import Any, Iterator

import pytest

import vehicledata as vd


@pytest.fixture()
def alarm() -> Iterator[Any]:
    """``alarm(exc, after)``: SIGALRM raises ``exc`` from a Python handler ``after`` seconds from now."""
    old = signal.getsignal(signal.SIGALRM)

    def arm(exc: BaseException, after: float) -> None:
        def handler(signum: int, frame: Any) -> None:
            raise exc

        signal.signal(signal.SIGALRM, handler)
        signal.setitimer(signal.ITIMER_REAL, after)

    yield arm
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, old)


def test_a_wait_over_two_seconds_is_a_warning_and_shows_on_the_bar(api, emulator, caplog):
    from tqdm import tqdm

    caplog.set_level(logging.INFO, logger="vehicledata")
    emulator.fault("/api/trims/v2", status=503, retry_after=3, count=1)
    bar = tqdm(total=2, file=io.StringIO(), desc="crawl")
    try:
        assert api.trims.search(year=2019, make="BMW").total > 0
        assert bar.postfix == "waiting 3 s: HTTP 503 (Retry-After 3)"
    finally:
        bar.close()
    warned = [r.getMessage() for r in caplog.records if r.name == "vehicledata" and r.levelno == logging.WARNING]
    assert len(warned) == 1 and warned[0].startswith("retrying GET ") and "in 3.00 s (retry 1 of 3)" in warned[0]


def test_a_short_wait_stays_at_info(api, emulator, caplog):
    caplog.set_level(logging.INFO, logger="vehicledata")
    emulator.fault("/api/trims/v2", status=429, retry_after=1, count=1)
    assert api.trims.search(year=2019, make="BMW").total > 0
    levels = [r.levelno for r in caplog.records if r.name == "vehicledata" and "retrying" in r.getMessage()]
    assert levels == [logging.INFO]


def test_max_wait_caps_the_total_of_the_sleeps(emulator, client_factory, caplog):
    caplog.set_level(logging.INFO, logger="vehicledata")
    emulator.fault("/api/trims/v2", status=503, retry_after=2, count=3)
    with client_factory(emulator.url, max_wait=3.0) as api:
        assert api.retry.max_wait == 3.0 and api.retry.total == 3  # the rest of the policy kept
        started = time.monotonic()
        with pytest.raises(vd.ServiceUnavailableError) as info:
            api.trims.search(year=2019).total
        elapsed = time.monotonic() - started
    # slept 2 s once; a second 2 s sleep would make 4 s > 3 s: raised instead.  Counted, not timed:
    # one sleep announced; the elapsed time only as a lower bound (the sleep was taken), which a
    # slow machine cannot break
    sleeps = [r.getMessage() for r in caplog.records if r.name == "vehicledata" and "retrying" in r.getMessage()]
    assert len(sleeps) == 1 and "in 2.00 s (retry 1 of 3)" in sleeps[0], sleeps
    assert elapsed >= 1.9
    assert info.value.retry_after == 2.0
    assert emulator.stats()["by_status"]["503"] == 2
    with pytest.raises(ValueError, match="max_wait must be a number of seconds >= 0"):
        client_factory(emulator.url, max_wait=-1)


def test_the_default_max_wait_gives_up_at_the_third_minute_long_retry_after():
    policy = vd.Retry()
    assert policy.max_wait == 120.0  # three Retry-After: 60 answers: 60 + 60 = 120, a third would pass it


@pytest.mark.parametrize("exc", [TimeoutError("alarm went off"), SystemExit(3)])
def test_a_signal_handler_exception_propagates_as_raised(api, emulator, alarm, exc):
    emulator.fault("/api/trims/v2", status=503, retry_after=30, count=1)  # a 30 s sleep to interrupt
    alarm(exc, 0.5)
    started = time.monotonic()
    with pytest.raises(type(exc)) as info:
        api.trims.search(year=2019, make="Audi").total
    assert info.value is exc
    # the sleep was cut short: the retry it waited for was never sent (an uninterrupted sleep would
    # send it, at 30 s); the clock only guards against a hang, 20x above the 0.5 s alarm
    assert emulator.stats()["by_path"].get("/api/trims/v2") == 1
    assert time.monotonic() - started < 20
    # and the client still works after it
    emulator.clear_faults()
    assert api.trims.search(year=2019, make="Audi").total > 0


def test_a_signal_handler_exception_during_a_transfer(api, emulator, alarm):
    emulator.fault("/api/trims/v2", action="delay", delay_ms=3000, count=1)
    alarm(TimeoutError("slow transfer"), 0.4)
    with pytest.raises(TimeoutError, match="slow transfer"):
        api.trims.search(year=2019, make="Audi").total


def test_logs_and_errors_show_the_json_condition_decoded(api, emulator, caplog):
    caplog.set_level(logging.DEBUG, logger="vehicledata")
    assert api.trims.search(vd.F("year") >= 2019, make="BMW", limit=1).total > 0
    lines = [r.getMessage() for r in caplog.records if "/api/trims/v2" in r.getMessage()]
    assert any('json=[{"field":"year","op":">=","val":2019}]' in line for line in lines), lines
    assert not any("%5B" in line for line in lines)
    emulator.fault("/api/trims/v2", status=400, count=1)
    with pytest.raises(vd.BadRequestError) as info:
        api.trims.search(vd.F("year") >= 2019, make="BMW", limit=1).total
    assert '&json=[{"field":"year","op":">=","val":2019}]' in str(info.value)
    assert "%5B%7B" in info.value.url  # the URL as sent is kept
    assert 'json=[{"field":"year"' in info.value._repr_html_().replace("&quot;", '"')
