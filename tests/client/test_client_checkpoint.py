"""to_parquet (issue 22 item 4, issue 25 item 8): write modes, one file per partition per run with
large row groups, checkpoints and resume tokens read as untrusted input."""
from __future__ import annotations

import json
import logging
import warnings

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import vehicledata as vd
from vehicledata import checkpoint
from vehicledata.pager import token_page


def _ids(root):
    return sorted(ds.dataset(root, partitioning="hive").to_table()["id"].to_pylist())


def _parts(root):
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.parquet"))


def test_one_file_per_partition_per_run_in_one_row_group(api, tmp_path):
    pager = api.trims.search(year=2019)
    expected = sorted(pager.to_pandas()["id"].tolist())
    makes = set(pager.to_pandas()["make"])
    root = api.trims.search(year=2019).to_parquet(tmp_path / "by_make", partition_cols=["make"], page_size=200)
    assert _ids(root) == expected
    assert len(expected) > 1000  # more than five pages of 200
    files = _parts(root)
    assert len(files) == len(makes)  # not one per page per make
    assert all(f.endswith("/part-r0001-000001-0.parquet") for f in files)
    flat = api.trims.search(year=2019).to_parquet(tmp_path / "flat", page_size=200)
    [only] = _parts(flat)
    meta = pq.ParquetFile(flat / only).metadata
    assert meta.num_rows == len(expected) and meta.num_row_groups == 1  # < 64k rows: one row group
    assert checkpoint.MIN_ROWS_PER_GROUP == 65536


def test_rows_per_file_closes_files_and_checkpoints(api, tmp_path):
    root = api.trims.search(year=2019, make="BMW").to_parquet(tmp_path / "d", page_size=50, rows_per_file=100)
    state = json.loads((root / checkpoint.CHECKPOINT_NAME).read_text())
    assert state["complete"] and state["pages_done"] == state["pages"] and state["run"] == 1
    files = _parts(root)
    assert len(files) == -(-state["pages"] // 2)  # two pages of 50 make a file of 100
    assert _ids(root) == sorted(api.trims.search(year=2019, make="BMW").to_pandas()["id"].tolist())


def test_resume_says_once_with_the_query_decoded_and_overwrite_and_append_refresh(api, tmp_path, caplog):
    target = tmp_path / "nightly"

    def search():
        return api.trims.search(vd.F("make").isin(["BMW", "Land Rover"]), year=2019)

    expected = sorted(search().to_pandas()["id"].tolist())
    search().to_parquet(target, mode="resume")
    before = api.stats()["requests"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search().to_parquet(target, mode="resume")
    assert api.stats()["requests"] == before
    assert [w.category for w in caught] == [checkpoint.CheckpointWarning]  # one warning, no log line beside it
    message = str(caught[0].message)
    assert "finished run" in message and "nothing fetched" in message and "mode='refresh'" in message
    assert '"val":["BMW","Land Rover"]' in message.replace(" ", "").replace("LandRover", "Land Rover"), message
    assert "%22" not in message and "%5B" not in message, message
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.records

    old = {p: (target / p).stat().st_mtime_ns for p in _parts(target)}
    with warnings.catch_warnings():
        warnings.simplefilter("error", checkpoint.CheckpointWarning)
        search().to_parquet(target, mode="overwrite")
    assert api.stats()["requests"] > before
    assert _ids(target) == expected
    assert all((target / p).stat().st_mtime_ns != t for p, t in old.items() if (target / p).exists())

    search().to_parquet(target, mode="append")
    assert _ids(target) == sorted(expected * 2)
    assert {p.split("-")[1] for p in _parts(target)} == {"r0001", "r0002"}
    assert json.loads((target / checkpoint.CHECKPOINT_NAME).read_text())["run"] == 2

    # overwrite takes a directory of another query; resume, refresh and append refuse it
    for mode in ("append", "refresh", "resume"):
        with pytest.raises(vd.QueryError, match="another query"):
            api.trims.search(year=2020, make="BMW").to_parquet(target, mode=mode)
    api.trims.search(year=2020, make="BMW").to_parquet(target, mode="overwrite")
    assert _ids(target) == sorted(api.trims.search(year=2020, make="BMW").to_pandas()["id"].tolist())
    with pytest.raises(vd.QueryError, match="mode must be one of 'refresh', 'resume', 'overwrite', 'append'"):
        api.trims.search(year=2020, make="BMW").to_parquet(target, mode="update")
    with pytest.raises(vd.QueryError, match="checkpoint_pages must be an integer >= 1"):
        api.trims.search(year=2020, make="BMW").to_parquet(target, checkpoint_pages=0)


@pytest.mark.parametrize("state, message", [
    ({"pages_done": -5}, "'pages_done' must be from 0"),
    ({"pages_done": "3"}, "'pages_done' must be an integer"),
    ({"pages_done": 1 << 64}, "'pages_done' must be from 0 to 2\\*\\*63-1"),
    ({"pages_done": True}, "'pages_done' must be an integer"),
    ({"pages_done": None}, "'pages_done' must be an integer"),
    ({"complete": "no"}, "'complete' must be true or false"),
    ({"query": 7}, "'query' must be a non-empty string"),
    ({"run": 0}, "'run' must be from 1"),
    ({"pages": -1}, "'pages' must be from 0"),
    ({"mark": "yesterday"}, "'mark' must be ISO 8601 time text with an offset"),
    ({"since": "2024-01-01T00:00:00"}, "'since' must be ISO 8601 time text with an offset"),
    ({"files_done": -1}, "'files_done' must be from 0"),
    ([1, 2], "a JSON list, not an object"),
    ("{not json", "not JSON"),
])
def test_a_malformed_checkpoint_raises_before_anything_is_deleted(api, tmp_path, state, message):
    root = api.trims.search(year=2019, make="BMW").to_parquet(tmp_path / "d", page_size=20, rows_per_file=20)
    files = _parts(root)
    assert len(files) > 2
    path = root / checkpoint.CHECKPOINT_NAME
    good = json.loads(path.read_text())
    if isinstance(state, dict):
        good.update(state)
        good["complete"] = state.get("complete", False)
        path.write_text(json.dumps(good))
    else:
        path.write_text(state if isinstance(state, str) else json.dumps(state))
    for mode in ("refresh", "resume", "append"):
        with pytest.raises(vd.DecodeError, match=f"is not a to_parquet checkpoint: {message}"):
            api.trims.search(year=2019, make="BMW").to_parquet(root, page_size=20, mode=mode)
        assert _parts(root) == files
    api.trims.search(year=2019, make="BMW").to_parquet(root, page_size=20, mode="overwrite")  # the way out
    assert _ids(root) == sorted(api.trims.search(year=2019, make="BMW").to_pandas()["id"].tolist())


def test_resume_tokens_and_start_pages_past_int64_are_query_errors(api):
    params = [("year", 2019)]
    path = "/api/trims/v2"
    good = vd.pager.make_token(path, params, (1 << 63) - 1)
    assert token_page(good, path, params) == (1 << 63) - 1
    digest = good.rsplit(".", 1)[1]
    for page in (1 << 63, 1 << 64, 10 ** 40, 0):
        with pytest.raises(vd.QueryError, match="not a resume token"):
            token_page(f"vd1.{page}.{digest}", path, params)
    with pytest.raises(vd.QueryError, match="not a resume token"):
        token_page(f"vd1.\u0663.{digest}", path, params)  # a non-ASCII digit
    with pytest.raises(vd.QueryError, match="start_page must be an integer from 1 to 2\\*\\*63-1"):
        api.trims.search(year=2019, start_page=1 << 63)
    with pytest.raises(vd.QueryError, match="not a resume token"):
        api.trims.search(year=2019, start_token=f"vd1.{1 << 63}.{digest}")
