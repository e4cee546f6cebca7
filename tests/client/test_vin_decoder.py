"""The offline VIN decoder (vehicledata.vin.Decoder) against the real emulator's /api/vin answers:
the same C++ decoder, loader and trim ranking, so every benchmark VIN decodes to the API's answer
field by field, and a batch decode gives one row per VIN with the API's values or its error."""
from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import vehicledata as vd
from vehicledata.testing import Emulator
from vpic_damage import DAMAGE, damaged_pair

pa = pytest.importorskip("pyarrow")

VINS_TSV = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "vins.tsv"
GMC = "1GTG6CEN0L1139305"  # 2020 GMC Canyon SLE, 3.6L V6
BAD = [
    "1GTG6CEN0L113930",       # 16 characters: the API's 400
    " 1gtg6cen0l1139305 ",    # normalized: decodes
    "1GTG6CENAL1139305",      # position 9
    "AAA00000000000000",      # position 10 (model year) "0": the API's 400
    "AAA000000A0000000",      # unknown WMI: the API's 404
    "1GTG6CEN7L1139305",      # check digit does not compute: decodes with error code 1
]


def benchmark_vins() -> List[str]:
    out = []
    for line in VINS_TSV.read_text().splitlines():
        if line.startswith("#") or line.startswith("vin\t") or not line.strip():
            continue
        out.append(line.split("\t")[0])
    return out


@pytest.fixture(scope="module")
def decoder(database: Path) -> vd.vin.Decoder:
    return vd.vin.Decoder(database)


@pytest.fixture(scope="module")
def api_answers(database: Path, client_factory) -> Iterator[Dict[str, Tuple[str, Any]]]:
    """The emulator's answer to every benchmark VIN and each of BAD: ("ok", record) or (error class, message)."""
    answers: Dict[str, Tuple[str, Any]] = {}
    with Emulator(db=database, rate_limit=10_000_000) as emu, client_factory(emu.url) as api:
        for vin in benchmark_vins() + BAD:
            try:
                answers[vin] = ("ok", api.vin(vin).to_dict())
            except vd.APIError as e:
                answers[vin] = (type(e).__name__, e.message)
        yield answers


def test_decode_equals_the_api_for_every_benchmark_vin(decoder, api_answers) -> None:
    vins = benchmark_vins()
    assert len(vins) == 2479
    decoded = 0
    for vin in vins + BAD:
        kind, expected = api_answers[vin]
        if kind == "ok":
            got = decoder.decode(vin)
            assert isinstance(got, vd.vin.VinResult)
            data = got.to_dict()
            for field in ("year", "make", "model", "trim", "specs"):
                assert data[field] == expected[field], (vin, field)
            assert [t["id"] for t in got.trims] == [t["id"] for t in expected["trims"]], vin
            decoded += 1
        else:
            error = vd.QueryError if kind == "BadRequestError" else vd.NotFoundError
            assert kind in ("BadRequestError", "NotFoundError"), (vin, kind)
            with pytest.raises(error) as e:
                decoder.decode(vin)
            assert e.value.message == expected, vin
    assert decoded > 2000  # the others are the API's 404s (no model decoded for the year; docs/emulator.md)


def test_decode_all_trims_matches_the_api(decoder, database: Path, client_factory) -> None:
    with Emulator(db=database) as emu, client_factory(emu.url) as api:
        for vin in (GMC, "1HGCM82633A004352", "4T1BB3EK5AU118081"):
            expected = [t["id"] for t in api.vin(vin, all_trims=True).trims]
            assert [t["id"] for t in decoder.decode(vin, all_trims=True).trims] == expected
            assert len(expected) >= len(decoder.decode(vin).trims)


def test_decode_many_rows_are_the_api_answers(decoder, api_answers) -> None:
    vins = benchmark_vins() + BAD
    table = decoder.decode_many(vins, threads=2)
    assert table.column_names == list(vd.vin.COLUMNS)
    assert table.num_rows == len(vins)
    assert table.schema.field("year").type == pa.int64() and table.schema.field("trim_id").type == pa.int64()
    for vin, row in zip(vins, table.to_pylist()):
        kind, expected = api_answers[vin]
        if kind == "ok":
            specs = expected["specs"]
            assert row["vin"] == vd.vin.validate(vin)
            assert (row["year"], row["make"], row["model"], row["trim"]) == \
                (expected["year"], expected["make"], expected["model"], expected["trim"]), vin
            assert (row["series"], row["body"], row["drive"], row["fuel"]) == \
                (specs["series"], specs["body_class"], specs["drive_type"], specs["fuel_type_primary"]), vin
            assert (row["error_code"], row["error_text"]) == (specs["error_code"], specs["error_text"]), vin
            assert row["trim_id"] == (expected["trims"][0]["id"] if expected["trims"] else None), vin
            if specs["displacement_l"] is not None:
                assert row["engine"].startswith(specs["displacement_l"] + "L"), vin
        else:
            assert row["vin"] == (vin if kind == "BadRequestError" else vd.vin.validate(vin))
            assert row["error_code"] == ("invalid_vin" if kind == "BadRequestError" else "not_found"), vin
            assert row["error_text"] == expected, vin
            assert row["year"] is None and row["make"] is None and row["trim_id"] is None


def row_of_decode(decoder: vd.vin.Decoder, vin: Any) -> Dict[str, Any]:
    """The decode_many row of `vin` built from decode() (which answers without the batch memos)."""
    row: Dict[str, Any] = dict.fromkeys(vd.vin.COLUMNS)
    try:
        r = decoder.decode(vin)
    except vd.QueryError as e:
        row.update(vin=vin, error_code="invalid_vin", error_text=e.args[0])
        return row
    except vd.NotFoundError as e:
        row.update(vin=vd.vin.validate(vin), error_code="not_found", error_text=e.args[0])
        return row
    specs = r.specs
    engine = [p for p in ((specs["displacement_l"] or "") and specs["displacement_l"] + "L",
                          (specs["engine_number_of_cylinders"] or "") and specs["engine_number_of_cylinders"] + "cyl",
                          specs["engine_model"] or "") if p]
    row.update(vin=vd.vin.validate(vin), year=r.year, make=r.make, model=r.model, trim=r.trim,
               series=specs["series"], body=specs["body_class"], drive=specs["drive_type"],
               engine=" ".join(engine) or None, fuel=specs["fuel_type_primary"], error_code=specs["error_code"],
               error_text=specs["error_text"], trim_id=r.trims[0]["id"] if r.trims else None)
    return row


def test_decode_many_rows_of_repeated_vehicles_equal_their_own_decodes(decoder) -> None:
    """A batch reuses the row of a VIN whose answer key it has seen (the same vehicle with another
    serial number, a check digit that computes or not): each row still equals the row of that VIN
    decoded alone (a batch of one decodes it)."""
    import random

    rnd = random.Random(23)
    alphabet = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ"
    base = benchmark_vins()
    vins: List[str] = []
    for vin in base:
        if len(vin) != 17 or vd.vin.validate(vin) != vin:
            continue
        for _ in range(2):
            serial = "".join(rnd.choice("0123456789") for _ in range(6))
            fresh = vin[:11] + serial
            vins.append(fresh[:8] + vd.vin.check_digit(fresh) + fresh[9:])  # its check digit computes
            vins.append(fresh)  # position 9 as it was: mostly error code 1
        other = list(vin)
        other[rnd.randrange(11, 17)] = rnd.choice(alphabet)  # a letter in the serial: code 400 from 13 on
        vins.append("".join(other))
    vins = vins[:6000] + BAD + [f"AAA000000A00000{i}" for i in range(10)] * 2  # unknown WMI: 404s
    rnd.shuffle(vins)
    table = decoder.decode_many(vins, threads=1)
    # The workers' memos outlive the call (the decoder's pool): a batch of one VIN may be answered
    # from them too, so each row is checked against decode(), which never uses them.
    rows = table.to_pylist()
    for vin, row in zip(vins, rows):
        assert row == row_of_decode(decoder, vin), vin
    # A second call starts from the first one's memos: the same rows, shuffled or not.
    assert decoder.decode_many(vins, threads=1).equals(table)
    again = list(reversed(vins))
    assert decoder.decode_many(again, threads=2).to_pylist() == list(reversed(rows))
    codes = {r["error_code"] for r in rows}
    assert {"0", "1", "not_found", "invalid_vin"} <= codes and any("400" in c for c in codes if c)
    assert sum(r["error_code"] not in ("invalid_vin", "not_found") for r in rows) > 4000


MEMO_ENTRIES = 1 << 16  # a worker's row memo (answers by answer key) starts over past this many entries
YEAR_CODES = "ABCDEFGHJKLMNPRSTVWXY123456789"  # position 10


def made_vins(n: int, seed: int) -> List[str]:
    """`n` VINs of distinct answer keys made from the benchmark VINs as benchmarks/vin_batch.py's
    distinct_vins makes them (the model year moved by up to two, a plant the WMI has, half of them
    one of positions 4-8 from another VIN of that WMI and year, random serial digits), without its
    filter on what decodes; the check digit computed, or in a third of them not. No two share
    positions 1-8, 10, 11 and whether the check digit computes, which an answer key keeps."""
    import random
    from collections import defaultdict

    rnd = random.Random(seed)
    base = list(dict.fromkeys(benchmark_vins()))  # well-formed, normalized
    peers: Dict[Any, List[str]] = defaultdict(list)
    plants: Dict[str, List[str]] = defaultdict(list)
    for v in base:
        peers[v[:3], v[9]].append(v)
        plants[v[:3]].append(v[10])
    out: List[str] = []
    seen = set()
    while len(out) < n:
        t = rnd.choice(base)
        c = list(t)
        c[9] = YEAR_CODES[min(len(YEAR_CODES) - 1, max(0, YEAR_CODES.find(c[9]) + rnd.randint(-2, 2)))]
        c[10] = rnd.choice(plants[t[:3]])
        if rnd.random() < 0.5:
            i = rnd.randrange(3, 8)
            c[i] = rnd.choice(peers[t[:3], t[9]])[i]
        c[12:17] = [str(rnd.randrange(10)) if ch.isdigit() else ch for ch in c[12:17]]
        digit = vd.vin.check_digit("".join(c))
        computes = rnd.random() < 2 / 3
        c[8] = digit if computes else "0123456789X"[("0123456789X".index(digit) + rnd.randrange(1, 11)) % 11]
        key = ("".join(c[:8] + c[9:11]), computes)
        if key not in seen:
            seen.add(key)
            out.append("".join(c))
    return out


def test_decode_many_past_the_memos_start_over_equals_decode(decoder) -> None:
    """More distinct answer keys than a worker's row memo holds, on one worker and on two: every
    row is the row of decode() (which uses no memo), the trim id included, and calls that start
    from the pooled memos give the same table; VINs seen before a memo started over come back at
    the end."""
    import random

    # Rows a memo keeps: decodes without error codes 2-5 (ok rows are counted; 404 rows are kept
    # too, but their codes do not show). Made VINs of those, with others among them.
    def kept(row: Dict[str, Any]) -> bool:
        return row["year"] is not None and not {"2", "3", "4", "5"} & set(row["error_code"].split(","))

    made = made_vins(6 * MEMO_ENTRIES, seed=29)  # about 38 % kept
    first = decoder.decode_many(made, threads=1).to_pylist()  # the memos the calls below start from
    keeping = [v for v, row in zip(made, first) if kept(row)]
    others = [v for v, row in zip(made, first) if not kept(row)][:10_000]
    assert len(keeping) > 2 * MEMO_ENTRIES + 8_000 and len(others) == 10_000
    rnd = random.Random(31)
    vins = keeping[:2 * MEMO_ENTRIES + 8_000] + others
    rnd.shuffle(vins)
    vins += rnd.sample(vins, 8_000)

    one = decoder.decode_many(vins, threads=1)
    rows = one.to_pylist()
    for vin, row in zip(vins, rows):
        assert row == row_of_decode(decoder, vin), vin
    half = len(vins) // 2  # threads=2: the first worker decodes vins[:half]
    assert len({v for v, r in zip(vins[:half], rows) if kept(r)}) > MEMO_ENTRIES
    assert len({v for v, r in zip(vins[half:], rows[half:]) if kept(r)}) > MEMO_ENTRIES
    assert decoder.decode_many(vins, threads=2).equals(one)
    assert decoder.decode_many(vins, threads=1).equals(one)
    assert sum(r["trim_id"] is not None for r in rows) > MEMO_ENTRIES  # ranked trims, not only 404s


def test_decode_many_engine_and_check_digit_rows(decoder) -> None:
    rows = decoder.decode_many([GMC, "1GTG6CEN7L1139305", None, 17]).to_pylist()
    assert rows[0]["engine"].startswith("3.6L 6cyl ")
    assert rows[0]["error_code"] == "0"
    assert rows[1]["error_code"] == "1"
    assert rows[1]["error_text"] == "1 - Check Digit (9th position) does not calculate properly"
    assert rows[2]["vin"] is None and rows[2]["error_code"] == "invalid_vin" and rows[2]["error_text"] == "VIN is null"
    assert rows[3]["vin"] == "17" and rows[3]["error_text"] == "Invalid VIN '17': expected 17 characters, got 2"


def test_decode_many_values_longer_than_a_column_s_usual_room(decoder) -> None:
    # A batch's text columns are sized up front for usual values (17 bytes of VIN a row, 64 of
    # error text); longer ones grow them: the rows are still their decodes, byte for byte.
    vins = ["1HG" + "Z" * 3000, "é" * 100 + "X" * 200, "  " + GMC.lower() + "  ", GMC, "1GTG6CEN7L1139305",
            "Q" * 17]
    for batch in (vins, vins[:1], list(reversed(vins)) * 3):
        assert decoder.decode_many(batch, threads=1).to_pylist() == [row_of_decode(decoder, v) for v in batch]


def test_decode_many_takes_every_input_kind(decoder) -> None:
    np = pytest.importorskip("numpy")
    pd = pytest.importorskip("pandas")
    vins = benchmark_vins()[:300] + BAD
    expected = decoder.decode_many(vins, threads=1)

    class StreamOnly:  # only the Arrow PyCapsule stream protocol
        def __init__(self, data: Any) -> None:
            self.data = data

        def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
            return self.data.__arrow_c_stream__(requested_schema)

    class ArrayOnly:
        def __arrow_c_array__(self, requested_schema: Any = None) -> Any:
            return pa.array(vins).__arrow_c_array__(requested_schema)

    inputs: List[Any] = [
        tuple(vins), np.array(vins), np.array(vins, dtype=object), pd.Series(vins),
        pd.Series(vins, dtype="string[pyarrow]"), pa.array(vins), pa.array(vins, type=pa.large_string()),
        pa.chunked_array([vins[:100], vins[100:]]), ArrayOnly(), iter(vins),
    ]
    if hasattr(pa.ChunkedArray, "__arrow_c_stream__"):  # pyarrow >= 16
        inputs.append(StreamOnly(pa.chunked_array([vins[:7], vins[7:]])))
    else:  # the floor's pyarrow 15: a clear refusal, not a TypeError from inside pyarrow
        with pytest.raises(vd.QueryError, match="needs pyarrow >= 16"):
            decoder.decode_many(StreamOnly(pa.chunked_array([vins[:7], vins[7:]])))
    try:
        import polars as pl
        inputs.append(pl.Series(vins))
    except ImportError:
        pass
    for data in inputs:
        assert decoder.decode_many(data).equals(expected), type(data)
    with pytest.raises(vd.QueryError):
        decoder.decode_many(GMC)
    with pytest.raises(vd.QueryError):
        decoder.decode_many(vins, threads=0)
    empty = decoder.decode_many([])
    assert empty.num_rows == 0 and empty.schema.equals(expected.schema)


def test_decode_many_is_the_same_on_any_number_of_threads(decoder) -> None:
    vins = benchmark_vins() * 3
    one = decoder.decode_many(vins, threads=1)
    assert one.num_rows == len(vins)
    for threads in (2, 3, 16):
        assert decoder.decode_many(vins, threads=threads).equals(one)


def test_decode_many_reuses_a_batch_s_buffers_only_once_it_is_released(decoder) -> None:
    """Batch pages go back to a pool when the last Arrow array over them is released, and the next
    batch writes into them: a batch held meanwhile keeps its values, and a batch written into a
    reused page (larger or smaller than it, with nulls and errors or without) equals a fresh one."""
    import gc

    vins = benchmark_vins()
    small = vins[:700] + BAD + [None, "17"] * 3
    fresh_big = decoder.decode_many(vins, threads=2).to_pylist()
    fresh_small = decoder.decode_many(small, threads=1).to_pylist()
    gc.collect()  # both tables above are gone: their pages are in the pool
    held = decoder.decode_many(vins, threads=2)
    pd = pytest.importorskip("pandas")
    held_frame = decoder.decode_pandas(pd.Series(small, dtype=object), threads=1)
    for round_ in range(6):  # more batches than the pool keeps pages, while two batches are held
        assert decoder.decode_many(small, threads=2 if round_ % 2 else 1).to_pylist() == fresh_small, round_
        assert decoder.decode_many(vins[: 1500 + 300 * round_], threads=2).to_pylist() == fresh_big[: 1500 + 300 * round_]
    assert held.to_pylist() == fresh_big
    assert pa.Table.from_pandas(held_frame, preserve_index=False).to_pylist() == fresh_small


def test_decoder_pickles_by_path_and_opens_once_per_process(decoder, database: Path) -> None:
    data = pickle.dumps(decoder)
    assert len(data) < 500
    again = pickle.loads(data)
    assert again.path == decoder.path == str(database.resolve())
    assert again._core is decoder._core  # the tables were not read again
    # In another process: the path travels, the tables are opened there.
    code = ("import pickle, sys; d = pickle.loads(sys.stdin.buffer.read()); "
            f"print(d.decode({GMC!r}).model, d.decode_many([{GMC!r}]).column('trim_id')[0].as_py())")
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True, timeout=300)
    assert out.stdout.decode().split() == ["Canyon", str(decoder.decode(GMC).trims[0]["id"])]


def test_decoder_default_path_and_missing_dataset(decoder, database: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VEHICLEDATA_HOME", str(database.parent))
    assert vd.vin.Decoder().path == decoder.path
    with pytest.raises(FileNotFoundError) as e:
        vd.vin.Decoder(tmp_path / "none.db")
    assert str(tmp_path / "none.db") in str(e.value)
    with pytest.raises(vd.QueryError):
        decoder.decode(17)  # type: ignore[arg-type]


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_vpic_file_is_one_line_at_open(database: Path, tmp_path: Path, how: str) -> None:
    """A missing, damaged or incomplete vPIC file (a table dropped included) raises at open, naming
    the file, as the emulator says it at start; nothing is decoded from it."""
    expected = damaged_pair(database, tmp_path, how)
    with pytest.raises(FileNotFoundError) as e:
        vd.vin.Decoder(tmp_path / "vehicledata.db")
    assert str(e.value) == f"VIN decoder: {expected}"


def test_decode_parquet_streams_in_batches(decoder, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    vins = benchmark_vins() + BAD + [None]  # type: ignore[list-item]
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"id": list(range(len(vins))), "VIN": vins}), src, row_group_size=1000)
    assert decoder.decode_parquet(src, dst, column="VIN", batch_rows=300, progress=False) == len(vins)
    out = pq.ParquetFile(dst)
    assert out.metadata.num_row_groups >= 9  # written batch by batch
    assert out.read().equals(decoder.decode_many(vins))
    with pytest.raises(vd.QueryError) as e:
        decoder.decode_parquet(src, dst, progress=False)
    assert "no column 'vin'" in str(e.value)


def test_decode_parquet_names_a_broken_row_group_and_keeps_what_was_written(decoder, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    vins = benchmark_vins()[:1500]
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"vin": vins}), src, row_group_size=500, compression="zstd")
    chunk = pq.ParquetFile(src).metadata.row_group(1).column(0)
    data = bytearray(src.read_bytes())
    start = chunk.data_page_offset
    data[start:start + 64] = b"\xff" * 64  # the page header of group 1 is garbage
    src.write_bytes(bytes(data))
    with pytest.raises(vd.vin.ParquetSourceError) as e:
        decoder.decode_parquet(src, dst, batch_rows=200, progress=False)
    assert e.value.row_group == 1 and e.value.path == str(src)
    assert f"{src}: row group 1 cannot be read" in str(e.value)
    written = pq.read_table(dst)  # a valid file with group 0's rows
    assert written.equals(decoder.decode_many(vins[:500]))
