"""Data feed: download (streamed, verified, atomic), resume, load into DataFrames."""
from __future__ import annotations

import hashlib
import zipfile

import pytest

import vehicledata as vd

from vehicledata.testing import DEMO_ACCOUNTS

BASIC = DEMO_ACCOUNTS["basic"]


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def reference_feed(tmp_path_factory, emulator_session, client_factory):
    with client_factory(emulator_session.url) as api:
        return api.data_feed.download(tmp_path_factory.mktemp("feed") / "feed.zip")


def test_download_round_trip(api, tmp_path, reference_feed):
    path = api.data_feed.download(tmp_path / "feed.zip")
    assert path == tmp_path / "feed.zip"
    assert not (tmp_path / "feed.zip.part").exists()
    with zipfile.ZipFile(path) as zf:
        assert zf.testzip() is None
        names = zf.namelist()
    assert "trims.csv" in names
    assert sha(path) == sha(reference_feed)


def test_download_resumes_a_partial_file(api, emulator, tmp_path, reference_feed):
    data = reference_feed.read_bytes()
    part = tmp_path / "feed.zip.part"
    part.write_bytes(data[: len(data) // 3])
    path = api.data_feed.download(tmp_path / "feed.zip")
    assert sha(path) == sha(reference_feed)
    assert api.stats()["bytes"] < len(data)  # only the rest was transferred


def test_download_survives_a_dropped_connection(api, emulator, tmp_path, reference_feed):
    emulator.fault("/api/data-feeds/download", action="truncate", count=1)
    path = api.data_feed.download(tmp_path / "feed.zip")
    assert sha(path) == sha(reference_feed)


def test_corrupt_archive_is_refused_and_not_renamed(api, emulator, tmp_path):
    emulator.fault("/api/data-feeds/download", status=200, body="PK\x03\x04 not really a zip")
    with pytest.raises(vd.DecodeError, match="not a valid ZIP"):
        api.data_feed.download(tmp_path / "feed.zip", resume=False)
    assert not (tmp_path / "feed.zip").exists()
    assert not (tmp_path / "feed.zip.part").exists()


def test_feed_needs_the_product(emulator, tmp_path, client_factory):
    with client_factory(emulator.url, BASIC, retry=0) as api:
        with pytest.raises(vd.PermissionDeniedError):
            api.data_feed.download(tmp_path / "feed.zip")


def test_load_reads_every_csv_with_schema_dtypes(api, reference_feed):
    frames = api.data_feed.load(reference_feed)
    with zipfile.ZipFile(reference_feed) as zf:
        assert sorted(frames) == sorted(n[:-4] for n in zf.namelist() if n.endswith(".csv"))
        with zf.open("makes.csv") as fh:
            lines = fh.read().decode().splitlines()
    trims = frames["trims"]
    assert str(trims["id"].dtype) == "Int64"
    assert str(trims["created"].dtype) == "datetime64[us, UTC]"
    assert len(frames["makes"]) == len(lines) - 1
    first = lines[1].split(",")
    assert int(frames["makes"]["id"].iloc[0]) == int(first[0])
    assert api.trims.search(year=2019, make="BMW").total == int(((trims.year == 2019) & (trims.make == "BMW")).sum())


def test_download_progress_bar(api, tmp_path, capsys, reference_feed):
    path = api.data_feed.download(tmp_path / "feed.zip", progress=True)
    err = capsys.readouterr().err
    assert "feed.zip" in err
    assert sha(path) == sha(reference_feed)


def test_stale_partial_file_is_replaced(api, tmp_path, reference_feed):
    part = tmp_path / "feed.zip.part"
    part.write_bytes(b"PK\x03\x04" + b"\x00" * 5000)  # a partial download of some other archive
    path = api.data_feed.download(tmp_path / "feed.zip")
    assert sha(path) == sha(reference_feed)
    assert not part.exists()


def test_refused_download_leaves_no_empty_part_file(emulator, tmp_path, client_factory):
    with client_factory(emulator.url, BASIC) as basic:
        with pytest.raises(vd.PermissionDeniedError):
            basic.data_feed.download(tmp_path / "feed.zip")
    assert list(tmp_path.iterdir()) == []


def test_the_download_bar_ends_at_the_file_size(api, tmp_path, monkeypatch):
    import io
    import shutil

    from tqdm import tqdm

    from vehicledata import _fetcher

    first = api.data_feed.download(tmp_path / "a.zip")
    size = first.stat().st_size
    bars = []

    def bar(self, progress, total, desc, unit, probe=False):
        b = tqdm(total=total, desc=desc, unit=unit, unit_scale=True, file=io.StringIO())
        bars.append(b)
        return b

    monkeypatch.setattr(_fetcher.Fetcher, "progress_bar", bar)
    shutil.copy(first, tmp_path / "b.zip.part")  # complete already: the server answers 416, nothing arrives
    api.data_feed.download(tmp_path / "b.zip", progress=True)
    assert bars and bars[-1].n == size and bars[-1].total == size
    assert "0.00B" not in str(bars[-1])
