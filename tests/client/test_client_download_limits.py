"""Downloads and feed archives against a careless or hostile server (issue 25 items 6 and 7):
a 200 answer to a resume, a total deadline, a largest size, overlapping ZIP members, totals
across members, negative limits."""
from __future__ import annotations

import contextlib
import struct
import time
import zipfile
import zlib
from typing import Any, Iterator, List

import pytest

import vehicledata as vd
from vehicledata.feed import MAX_TOTAL_BYTES, verify_zip

from hostile_server import hostile_server, small_zip


@contextlib.contextmanager
def _members_opened() -> Iterator[List[str]]:
    """The ZIP members opened (to read or inflate) meanwhile, by any code: ``zipfile.ZipFile.open`` recorded."""
    opened: List[str] = []
    real = zipfile.ZipFile.open

    def recorded(self: zipfile.ZipFile, name: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(getattr(name, "filename", name))
        return real(self, name, *args, **kwargs)

    zipfile.ZipFile.open = recorded  # type: ignore[method-assign]
    try:
        yield opened
    finally:
        zipfile.ZipFile.open = real  # type: ignore[method-assign]


def _anonymous(url: str, **kw) -> vd.Client:
    kw.setdefault("retry", vd.Retry(total=2, backoff_factor=0.01, backoff_jitter=0.0))
    return vd.Client(base_url=url, api_token="", api_secret="", rate_limit=None, **kw)


def test_a_server_ignoring_range_starts_the_file_over(tmp_path):
    with hostile_server() as server, _anonymous(server.url + "/norange") as api:
        target = tmp_path / "feed.zip"
        part = tmp_path / "feed.zip.part"
        part.write_bytes(b"PK\x03\x04" + b"\x00" * 3000)  # left over from an earlier attempt
        path = api.data_feed.download(target)
        assert path == target and path.read_bytes() == small_zip()
        assert not part.exists()
        assert server.requests["norange"] == 1  # the 200 was taken as the whole file, not retried


def test_a_trickle_ends_at_the_download_timeout(tmp_path):
    with hostile_server() as server, _anonymous(server.url + "/trickle") as api:
        started = time.monotonic()
        with pytest.raises(vd.Timeout, match="total timeout of 3.00 s"):  # what ended it: the total timeout
            api.data_feed.download(tmp_path / "feed.zip", timeout=3)
        assert time.monotonic() - started >= 2.5  # not before it (a lower bound: no slow machine breaks it)
        assert 0 < server.sent["trickle"] < 10_000_000  # the 10 MB body (2 KB a second) was not waited out
        assert not (tmp_path / "feed.zip").exists()


@pytest.mark.parametrize("attack", ["long", "endless"])  # announced (Content-Length) and chunked
def test_a_download_past_max_bytes_is_a_limit_error(tmp_path, attack):
    with hostile_server() as server, _anonymous(server.url + f"/{attack}") as api:
        with pytest.raises(vd.LimitError, match="larger than max_bytes \\(1048576 bytes") as info:
            api.data_feed.download(tmp_path / "feed.zip", max_bytes=1 << 20)
        assert info.value.limit == "max_bytes"
        assert server.sent[attack] < 64 << 20  # cut off by the client (the server would send for 120 s)
        assert not (tmp_path / "feed.zip.part").exists() and not (tmp_path / "feed.zip").exists()


def test_download_arguments_are_checked(tmp_path):
    with _anonymous("http://127.0.0.1:9") as api:
        for kw, name in (({"timeout": 0}, "timeout"), ({"timeout": -1}, "timeout"), ({"max_bytes": -5}, "max_bytes"),
                         ({"max_bytes": 0}, "max_bytes")):
            with pytest.raises(ValueError, match=name):
                api.data_feed.download(tmp_path / "feed.zip", **kw)


def _zip(members, shared: bool = False) -> bytes:
    """A ZIP written by hand: ``members`` is [(name, data, declared size)]; ``shared``: every
    central directory entry points at the first member's data (a quoted-overlap bomb)."""
    local, cd, offsets = b"", b"", []
    for name, data, size in members:
        n = name.encode()
        offsets.append(len(local))
        crc = zlib.crc32(bytes(size)) if size <= 64 << 20 else 0
        local += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(data), size, len(n), 0) + n + data
    for i, (name, data, size) in enumerate(members):
        n = name.encode()
        crc = zlib.crc32(bytes(size)) if size <= 64 << 20 else 0
        cd += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, len(data), size, len(n), 0, 0, 0, 0,
                          0, 0 if shared else offsets[i]) + n
    eocd = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(cd), len(local), 0)
    return local + cd + eocd


def _deflated_zeros(size: int) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    return b"".join(z.compress(bytes(1 << 20)) for _ in range(size >> 20)) + z.flush()


def _one_data_many_entries(data: bytes, size: int, names) -> bytes:
    """One compressed member whose data every central directory entry (one per name) points at:
    the quoted-overlap ZIP bomb of CVE-2024-0450."""
    crc = zlib.crc32(bytes(size))
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, len(data), size, 5, 0) + b"m.csv" + data
    cd = b""
    for name in names:
        n = name.encode()
        cd += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, len(data), size, len(n), 0, 0, 0, 0,
                          0, 0) + n
    return local + cd + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(names), len(names), len(cd), len(local), 0)


def test_verify_zip_refuses_overlapping_members_at_once(tmp_path):
    path = tmp_path / "bomb.zip"
    # 64 entries named as the local header: zipfile's testzip() inflates 2 GiB (9 s of CPU) and passes it
    path.write_bytes(_one_data_many_entries(_deflated_zeros(32 << 20), 32 << 20, ["m.csv"] * 64))
    with _members_opened() as opened, pytest.raises(vd.DecodeError, match="overlaps the next entry"):
        verify_zip(path)
    assert opened == []  # refused from the directory alone: nothing inflated (no clock)


def test_verify_zip_bounds_the_total_it_inflates(tmp_path):
    members = [(f"t{i}.csv", b"\x03\x00", 400 << 20) for i in range(3)]  # 1.2 GB declared, 6 bytes stored
    path = tmp_path / "big.zip"
    path.write_bytes(_zip(members))
    with pytest.raises(vd.LimitError, match="over max_total_bytes") as info:
        verify_zip(path)
    assert info.value.limit == "max_total_bytes"
    assert MAX_TOTAL_BYTES == 512 << 20


def test_load_caps_the_total_of_the_members_not_each(api, tmp_path):
    members = [(f"{t}.csv", b"\x03\x00", 400 << 20) for t in ("makes", "models", "trims")]
    path = tmp_path / "feed.zip"
    path.write_bytes(_zip(members))
    with _members_opened() as opened, \
            pytest.raises(vd.LimitError, match="1,258,291,200 bytes uncompressed in total, over max_total_bytes"):
        api.data_feed.load(path)
    assert opened == []  # refused from the directory alone: nothing inflated (no clock)
    issue = tmp_path / "issue.zip"  # the issue's case: two 500 MB members, each under max_member_bytes
    issue.write_bytes(_zip([(f"{t}.csv", b"\x03\x00", 500_000_000) for t in ("makes", "trims")]))
    with pytest.raises(vd.LimitError, match="1,000,000,000 bytes uncompressed in total"):
        api.data_feed.load(issue)
    with pytest.raises(vd.LimitError, match="over max_total_bytes=1,000"):
        api.data_feed.load(path, tables=["makes"], max_total_bytes=1000)
    shared = tmp_path / "shared.zip"
    shared.write_bytes(_one_data_many_entries(_deflated_zeros(8 << 20), 8 << 20, ["makes.csv", "trims.csv"]))
    with pytest.raises(vd.DecodeError, match="overlaps the next entry"):
        api.data_feed.load(shared)


@pytest.mark.parametrize("name", ["max_body", "max_decompressed", "max_pages", "low_speed_limit"])
def test_negative_client_limits_are_refused_naming_the_argument(name):
    with pytest.raises(ValueError, match=f"{name} must be an integer >= 0"):
        vd.Client(base_url="http://127.0.0.1:9", **{name: -5})


def test_a_parallel_crawl_bounds_the_bodies_in_flight_in_total():
    with hostile_server() as server, _anonymous(server.url + "/fat", max_body=8 << 20, max_parallel=4) as api:
        with pytest.raises(vd.LimitError, match="max_body") as info:
            api.models.search().to_pandas()  # three 6 MiB answers at once: 18 MiB in flight
        assert info.value.limit == "max_body"
        assert server.sent["fat"] < 18 << 20  # not every byte of the three answers


@pytest.mark.parametrize("pages, total", [(-5, -1), (-5, 3), (1, -1)])
def test_an_envelope_announcing_negative_pages_or_total_is_refused(pages, total):
    import json

    from client_support import stub_server

    body = json.dumps({"collection": {"url": "/api/models", "count": 1, "pages": pages, "total": total, "next": "",
                                      "prev": ""}, "data": [{"id": 1, "make_id": 1, "name": "A"}]}).encode()
    with stub_server(lambda path, headers: (200, {"Content-Type": "application/json"}, body)) as url:
        with _anonymous(url, retry=0) as api:
            with pytest.raises(vd.PaginationError, match=f"page 1 announces a negative size: pages={pages}, "
                                                         f"total={total}, count=1"):
                api.models.search().total
            with pytest.raises(vd.PaginationError, match="negative size"):
                api.models.search().to_pandas()
