"""What vehicledata.testing.ReplayServer refuses and how it says so, the order it serves the answers
of one request in, and the Recorder's round trip; no dataset, no emulator (the Recorder records
from a ReplayServer here)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List

import pytest

import vehicledata as vd
from vehicledata.testing import Answer, Recorder, ReplayServer, UnexpectedRequestError, load_answers, save_answers

from client_support import REPLAY_LIMIT, REPLAY_MAKES, REPLAY_SEARCH, recorded_pages, replay_options

EXPECTED = [r["id"] for n in sorted(recorded_pages()) for r in recorded_pages()[n]["data"]]


def walk(url: str, **kw) -> List[int]:
    with vd.Client(base_url=url, **replay_options(**kw)) as api:
        return [r.id for r in api.makes.search(limit=REPLAY_LIMIT)]


# ---- an unexpected request fails loudly ----------------------------------------------------------
def test_an_unexpected_request_fails_the_test_listing_what_was_recorded():
    with pytest.raises(UnexpectedRequestError) as info:
        with ReplayServer(REPLAY_MAKES) as server:
            with vd.Client(base_url=server.url, **replay_options()) as api:
                api.makes.search(limit=7).first(1)  # raises the 501 it got; leaving the block says why
    message = str(info.value)
    assert "1 unexpected request(s):\n  GET /api/makes/v2?limit=7\n" in message, message
    assert f"recorded for {REPLAY_SEARCH} (uses left):" in message, message
    for n in sorted(recorded_pages()):
        assert f"GET {REPLAY_SEARCH}?limit={REPLAY_LIMIT}{'' if n == 1 else f'&page={n}'}  (any number left)" \
            in message, message
    cause = info.value.__context__  # the client's own error, chained
    assert isinstance(cause, vd.APIError) and cause.status == 501
    assert "no recorded answer for GET /api/makes/v2?limit=7" in str(cause)


def test_an_unexpected_request_fails_even_when_the_code_under_test_swallows_the_error():
    with pytest.raises(UnexpectedRequestError, match=r"GET /api/trims/v2/123"):
        with ReplayServer(REPLAY_MAKES) as server:
            with vd.Client(base_url=server.url, **replay_options()) as api:
                try:
                    api.trims.get(123)
                except vd.VehicleDataError:
                    pass  # code under test that hides failures
            assert [s.answer for s in server.requests] == ["login", "unexpected"]


def test_not_strict_leaves_the_verdict_to_the_test():
    with ReplayServer(REPLAY_MAKES, strict=False) as server:
        with vd.Client(base_url=server.url, **replay_options(retry=0)) as api:
            with pytest.raises(vd.ServerError, match="no recorded answer"):
                api.makes.search(limit=3).first(1)
    assert [str(s) for s in server.unexpected] == ["GET /api/makes/v2?limit=3"]
    with pytest.raises(UnexpectedRequestError):
        server.check()


def test_all_used_fails_on_the_answers_never_asked_for():
    with pytest.raises(UnexpectedRequestError, match="never asked for") as info:
        with ReplayServer(REPLAY_MAKES, all_used=True) as server:
            with vd.Client(base_url=server.url, **replay_options()) as api:
                assert [r.id for r in api.makes.search(limit=REPLAY_LIMIT).first(3)] == EXPECTED[:3]
    listed = [line.strip() for line in str(info.value).splitlines()[1:]]
    assert listed == [f"GET {REPLAY_SEARCH}?limit={REPLAY_LIMIT}&page={n}" for n in range(2, len(recorded_pages()) + 1)]


# ---- the answers of one request ------------------------------------------------------------------
def test_the_answers_of_one_request_are_served_in_order_whatever_the_query_order():
    answers = load_answers(REPLAY_MAKES)
    page2 = next(a for a in answers if a.target.endswith("&page=2"))
    # a fault written into the answers: a 503 once, then the page; the target's parameters reversed
    first = Answer.of_json(f"{REPLAY_SEARCH}?page=2&limit={REPLAY_LIMIT}",
                           {"exception": "ServiceUnavailableException", "code": 503, "message": "busy"},
                           status=503, times=1)
    with ReplayServer([first] + answers) as server:
        assert walk(server.url) == EXPECTED
        assert [s.answer for s in server.requests if s.target.endswith("page=2")] == ["recorded", "recorded"]
        assert server.unused() == []
    assert page2.times is None


def test_an_answer_used_up_makes_the_next_request_unexpected():
    answers = [a if a.target != f"{REPLAY_SEARCH}?limit={REPLAY_LIMIT}" else Answer(a.method, a.target, a.status,
                                                                                    a.headers, a.body, times=1)
               for a in load_answers(REPLAY_MAKES)]
    with pytest.raises(UnexpectedRequestError, match=r"\(0 left\)"):
        with ReplayServer(answers) as server:
            with vd.Client(base_url=server.url, **replay_options(retry=0)) as api:
                assert api.makes.search(limit=REPLAY_LIMIT).first(1)[0].id == EXPECTED[0]
                api.makes.search(limit=REPLAY_LIMIT).first(1)


def test_a_fault_needs_a_known_action_and_count():
    server = ReplayServer()
    with pytest.raises(ValueError, match="action must be one of 'status', 'drop', 'truncate', 'delay'"):
        server.fault("/api", action="explode")
    with pytest.raises(ValueError, match="count must be >= 1"):
        server.fault("/api", count=0)


# ---- recording ---------------------------------------------------------------------------------
def test_the_recorder_keeps_what_the_client_was_answered_and_no_login(tmp_path: Path):
    with ReplayServer(REPLAY_MAKES) as upstream:
        upstream.fault(f"{REPLAY_SEARCH}?page=3", status=503, retry_after=0)
        with Recorder(upstream.url) as recorder:
            assert walk(recorder.url) == EXPECTED
        path = recorder.save(tmp_path / "again.jsonl", note="a note")
        assert upstream.logins == 1
    head = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert head == {"format": "vehicledata-replay", "version": 1, "note": "a note"}
    again = load_answers(path)
    assert "login" not in path.read_text() and "replay-secret" not in path.read_text()
    original = {a.target: a for a in load_answers(REPLAY_MAKES)}
    # the 503 is kept before the page, once; every other answer as the upstream sent it
    page3 = [a for a in again if a.target.endswith("page=3")]
    assert [(a.status, a.times) for a in page3] == [(503, 1), (200, None)]
    assert page3[0].headers.get("Retry-After") == "0"
    assert {a.target: a for a in again if a.status == 200} == original
    with ReplayServer(again) as replay:  # the recording replays: the 503 once, then the pages
        assert walk(replay.url) == EXPECTED
        assert replay.count(f"{REPLAY_SEARCH}?page=3") == 2


def test_a_recording_round_trips_binary_bodies_and_names_a_bad_line(tmp_path: Path):
    answers = [Answer("GET", "/api/data-feeds/download", 200, {"Content-Type": "application/zip"}, b"PK\x03\x04\xff"),
               Answer.of_json("/api/makes/v2?limit=1", {"data": []}, times=2)]
    path = save_answers(tmp_path / "a.jsonl", answers)
    assert load_answers(path) == answers
    lines = path.read_text(encoding="utf-8").splitlines()
    (tmp_path / "bad.jsonl").write_text("\n".join(lines[:2] + ['{"method": "GET", "status": 200}']) + "\n")
    with pytest.raises(ValueError, match=r"bad.jsonl:3: 'target' must be a str"):
        load_answers(tmp_path / "bad.jsonl")
    (tmp_path / "none.jsonl").write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(ValueError, match="none.jsonl:1: not a recording"):
        load_answers(tmp_path / "none.jsonl")


def test_a_stopped_server_answers_nothing_more_on_a_kept_alive_connection():
    with ReplayServer(REPLAY_MAKES) as server:
        api = vd.Client(base_url=server.url, **replay_options(retry=0))
        assert api.makes.search(limit=REPLAY_LIMIT).first(1)[0].id == EXPECTED[0]  # the connection stays open
    try:
        with pytest.raises(vd.TransportError):
            api.makes.search(limit=REPLAY_LIMIT).first(1)
        assert len(server.requests) == 2  # the login and the first page only
    finally:
        api.close()
