"""The data feed's Range answers: 416 with `bytes */SIZE` at or past the end and for a malformed
range (as text), suffix and open ranges served, error and JSON bodies never sliced."""
from __future__ import annotations

from typing import Dict

import pytest

from emu_support import Http


def feed_size(api: Http, token: str) -> int:
    r = api.get("/api/data-feeds/download", token=token, headers={"Range": "bytes=0-0"})
    assert r.status == 206, r.body[:200]
    assert r.headers["content-range"].startswith("bytes 0-0/")
    return int(r.headers["content-range"].split("/")[1])


@pytest.mark.parametrize("spec", ["{size}-", "99999999-", "{size}-{size}"])
def test_range_at_or_past_the_end_is_416(api: Http, tokens: Dict[str, str], spec: str) -> None:
    size = feed_size(api, tokens["premium"])
    rng = spec.format(size=size)
    r = api.get("/api/data-feeds/download", token=tokens["premium"], headers={"Range": f"bytes={rng}"})
    assert r.status == 416
    assert r.headers["content-type"] == "text/plain; charset=UTF-8"
    assert r.headers["content-range"] == f"bytes */{size}"
    assert r.text == f"Range Not Satisfiable: the range '{rng}' starts at or past the end of the {size}-byte archive"


def test_malformed_range_is_416_text(api: Http, tokens: Dict[str, str]) -> None:
    size = feed_size(api, tokens["premium"])
    r = api.get("/api/data-feeds/download", token=tokens["premium"], headers={"Range": "bytes=10-5"})
    assert r.status == 416
    assert r.headers["content-type"] == "text/plain; charset=UTF-8"
    assert r.headers["content-range"] == f"bytes */{size}"
    assert r.text == "Range Not Satisfiable: malformed Range header 'bytes=10-5'"


def test_suffix_and_open_ranges_are_served(api: Http, tokens: Dict[str, str]) -> None:
    size = feed_size(api, tokens["premium"])
    tail = api.get("/api/data-feeds/download", token=tokens["premium"], headers={"Range": "bytes=-10"})
    assert tail.status == 206
    assert tail.headers["content-range"] == f"bytes {size - 10}-{size - 1}/{size}"
    same = api.get("/api/data-feeds/download", token=tokens["premium"], headers={"Range": f"bytes={size - 10}-"})
    assert same.status == 206 and same.body == tail.body and len(tail.body) == 10
    clamped = api.get("/api/data-feeds/download", token=tokens["premium"],
                      headers={"Range": f"bytes={size - 4}-{size + 100}"})
    assert clamped.status == 206 and clamped.body == tail.body[-4:]
    assert clamped.headers["content-range"] == f"bytes {size - 4}-{size - 1}/{size}"


def test_range_does_not_slice_error_or_json_bodies(api: Http) -> None:
    r = api.get("/api/data-feeds/download", headers={"Range": "bytes=5-"})
    assert r.status == 401 and "content-range" not in r.headers
    assert r.text == "Unauthorized: a valid JWT is required"
    whole = api.get("/api/makes/v2?limit=2")
    ranged = api.get("/api/makes/v2?limit=2", headers={"Range": "bytes=0-10"})
    assert ranged.status == 200 and "content-range" not in ranged.headers
    assert ranged.json() == whole.json()
