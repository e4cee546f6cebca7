"""Bad input to the offline decoder is a typed error of vehicledata's tree with a clear message (issue
40, points 4, 6 and 7): text that is not text, huge VINs (echoed cut, their length named), thread
counts past any machine's, and decode_parquet's source protected from its own output."""
from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import pytest

import vehicledata as vd
from vehicledata.errors import ECHO_CHARS, MAX_MESSAGE, excerpt, quoted

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

VINS_TSV = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "vins.tsv"
GMC = "1GTG6CEN0L1139305"  # 2020 GMC Canyon SLE


@pytest.fixture(scope="module")
def decoder(database: Path) -> vd.vin.Decoder:
    return vd.vin.Decoder(database)


def _vins(n: int) -> list:
    out = [line.split("\t")[0] for line in VINS_TSV.read_text().splitlines()
           if line.strip() and not line.startswith(("#", "vin\t"))]
    return out[:n]


# ---- text that is not text ----------------------------------------------------------------------------
def test_a_lone_surrogate_is_a_query_error(decoder) -> None:
    for call in (decoder.decode, vd.vin.validate, vd.vin.check_digit):
        with pytest.raises(vd.QueryError) as e:
            call(GMC[:16] + "\ud800")
        assert e.value.field == "vin"
        assert str(e.value) == ("Invalid VIN '1GTG6CEN0L113930\\ud800': not valid text (surrogates not allowed: "
                                "'\\ud800' at position 16)")
        str(e.value).encode("utf-8")  # the message itself prints anywhere
    for vins in (["AB\ud800"], ("AB\ud800",), [GMC, None, "x\udfff"]):
        with pytest.raises(vd.QueryError) as e:
            decoder.decode_many(vins)
        assert e.value.field == "vins"
        i = len(vins) - 1
        bad = vins[i]
        assert str(e.value) == f"vins[{i}] {bad!r} is not valid text (surrogates not allowed: {bad[-1]!r} at position " \
                               f"{len(bad) - 1})"
    np = pytest.importorskip("numpy")
    with pytest.raises(vd.QueryError, match=r"vins\[1\] 'AB\\ud800' is not valid text"):
        decoder.decode_many(np.array([GMC, "AB\ud800"], dtype=object))
    assert decoder.decode("1gtg6cen0l1139305 ").year == 2020  # valid text still decodes


def test_invalid_utf8_in_an_arrow_string_array_is_a_query_error(decoder) -> None:
    good = pa.array([GMC, "ab"], pa.string())
    data = GMC.encode() + b"\xff\xfe"
    for kind, offset_type in ((pa.string(), "int32"), (pa.large_string(), "int64")):
        offsets = pa.array([0, 17, 19], offset_type).buffers()[1]
        broken = pa.Array.from_buffers(kind, 2, [None, offsets, pa.py_buffer(data)])
        for given in (broken, pa.chunked_array([good.cast(kind), broken])):
            with pytest.raises(vd.QueryError) as e:
                decoder.decode_many(given)
            assert e.value.field == "vins"
            first = 2 if isinstance(given, pa.ChunkedArray) else 0
            assert str(e.value).startswith(f"vins: the Arrow string array (rows {first} to {first + 1} of the input) "
                                           "is not valid: ")
            assert "UTF8" in str(e.value) or "UTF-8" in str(e.value)
    polars = pytest.importorskip("polars")
    assert decoder.decode_many(polars.Series([GMC])).column("year").to_pylist() == [2020]


def test_threads_outside_one_to_max_threads_is_a_query_error(decoder) -> None:
    for threads, shown in ((2**40, "1099511627776"), (0, "0"), (-3, "-3"), (10**30, "an int of 100 bits"),
                           (True, "bool"), (2.0, "float"), ("4", "str")):
        with pytest.raises(vd.QueryError) as e:
            decoder.decode_many([GMC], threads=threads)
        assert str(e.value) == f"threads must be an int from 1 to {vd.vin.MAX_THREADS}, not {shown}"
        assert e.value.field == "threads"
    assert vd.vin.MAX_THREADS == 1024
    assert decoder.decode_many([GMC], threads=vd.vin.MAX_THREADS).num_rows == 1
    with pytest.raises(vd.QueryError, match="threads must be an int from 1 to 1024, not 1099511627776"):
        decoder.decode_parquet("in.parquet", "out.parquet", threads=2**40)


# ---- huge input echoed cut ----------------------------------------------------------------------------
def test_a_huge_vin_is_echoed_cut_with_its_length(decoder) -> None:
    huge = "A" * 10**8
    for call in (decoder.decode, vd.vin.validate):
        with pytest.raises(vd.QueryError) as e:
            call(huge)
        assert e.value.message == ("Invalid VIN '" + "A" * 200 + "...' (100000000 bytes): expected 17 characters, "
                                   "got 100000000")
        assert len(pickle.dumps(e.value)) < 10_000  # (with its traceback when tblib pickles one: Dask imports it)
    table = decoder.decode_many([huge, GMC])
    assert table.column("error_text")[0].as_py() == e.value.message  # the batch row says the same
    assert table.column("vin")[0].as_py() == huge  # the row keeps the VIN as given
    # a cut never splits a character: "A" and 99 two-byte characters, then the length in bytes
    accents = "A" + "é" * 150
    with pytest.raises(vd.QueryError) as e:
        decoder.decode(accents)
    assert e.value.message == f"Invalid VIN '{accents[:100]}...' (301 bytes): expected 17 characters, got 301"
    with pytest.raises(vd.QueryError) as e:  # a surrogate in a huge string: cut too
        decoder.decode("B" * 10**6 + "\ud800")
    assert str(e.value) == ("Invalid VIN " + repr("B" * ECHO_CHARS) + "... (1,000,001 characters): not valid text "
                            "(surrogates not allowed: '\\ud800' at position 1000000)")


def test_every_error_message_is_bounded() -> None:
    assert excerpt("x" * 10) == "x" * 10
    assert excerpt("x" * 1000) == "x" * ECHO_CHARS + "... (1,000 characters)"
    assert quoted("a\ud800") == "'a\\ud800'"
    assert quoted("y" * 201) == repr("y" * 200) + "... (201 characters)"
    e = vd.QueryError("z" * 10**7, field="f")
    assert e.message == "z" * MAX_MESSAGE + "... (10,000,000 characters)" and str(e) == e.message
    assert pickle.loads(pickle.dumps(e)).message == e.message
    assert str(vd.DecodeError("q" * 5000)) == "q" * MAX_MESSAGE + "... (5,000 characters)"
    assert str(vd.DecodeError("q" * (MAX_MESSAGE + 64))) == "q" * (MAX_MESSAGE + 64)  # at the bound: whole


# ---- decode_parquet -----------------------------------------------------------------------------------
def _write(path: Path, vins: list, **kw: Any) -> None:
    pq.write_table(pa.table({"vin": vins}), path, row_group_size=500, **kw)


def test_decode_parquet_refuses_to_write_over_its_source(decoder, tmp_path: Path) -> None:
    vins = _vins(1200)
    src = tmp_path / "in.parquet"
    _write(src, vins)
    before = src.read_bytes()
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.parquet").symlink_to(src)
    os.link(src, tmp_path / "hard.parquet")
    for dst in (src, str(src), tmp_path / "sub" / ".." / "in.parquet", tmp_path / "link.parquet",
                tmp_path / "hard.parquet"):
        with pytest.raises(vd.QueryError) as e:
            decoder.decode_parquet(src, dst, progress=False)
        assert e.value.field == "dst"
        assert str(e.value).startswith(f"dst {str(dst)!r} is the source file {str(src)!r}")
        assert "never writes over what it reads" in str(e.value)
    with pytest.raises(vd.QueryError):  # the link as the source, the file as dst
        decoder.decode_parquet(tmp_path / "link.parquet", src, progress=False)
    assert src.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.parquet", "in.parquet", "link.parquet", "sub"]


def test_decode_parquet_writes_a_temporary_file_and_renames_it(decoder, tmp_path: Path, monkeypatch) -> None:
    vins = _vins(1200)
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    _write(src, vins)
    dst.write_bytes(b"the previous run's output")
    seen = []
    real = pq.ParquetWriter

    def writer(where: Any, schema: Any, **kw: Any) -> Any:
        seen.append(Path(where))
        return real(where, schema, **kw)

    monkeypatch.setattr(pq, "ParquetWriter", writer)
    assert decoder.decode_parquet(src, dst, batch_rows=400, progress=False) == 1200
    assert len(seen) == 1 and seen[0].parent == tmp_path and seen[0].name.startswith(".out.parquet.")
    assert seen[0].name.endswith(".tmp") and not seen[0].exists()
    assert pq.read_table(dst).equals(decoder.decode_many(vins))
    # a dst that is a symlink (to another file): the file it points to is replaced, the link kept
    target, link = tmp_path / "target.parquet", tmp_path / "via-link.parquet"
    link.symlink_to(target)
    assert decoder.decode_parquet(src, link, progress=False) == 1200
    assert link.is_symlink() and pq.read_table(target).equals(decoder.decode_many(vins))
    link.unlink()
    target.unlink()
    seen.clear()
    # interrupted (any exception but an unreadable row group): dst as it was, no temporary file left
    dst.write_bytes(b"the previous run's output")
    calls = []
    original = vd.vin.Decoder.decode_many

    def failing(self: Any, vins: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original(self, vins, **kw)

    monkeypatch.setattr(vd.vin.Decoder, "decode_many", failing)
    with pytest.raises(KeyboardInterrupt):
        decoder.decode_parquet(src, dst, batch_rows=400, progress=False)
    assert dst.read_bytes() == b"the previous run's output"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet", "out.parquet"]


@pytest.mark.parametrize("content", [b"", b"not parquet at all\n", b"PAR1", "truncated"])
def test_decode_parquet_of_an_unreadable_source_is_a_parquet_source_error(decoder, tmp_path: Path,
                                                                         content: Any) -> None:
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    if content == "truncated":
        _write(src, _vins(1200))
        data = src.read_bytes()
        src.write_bytes(data[: len(data) // 2])
    else:
        src.write_bytes(content)
    with pytest.raises(vd.vin.ParquetSourceError) as e:
        decoder.decode_parquet(src, dst, progress=False)
    assert isinstance(e.value, vd.VehicleDataError)
    assert e.value.path == str(src) and e.value.row_group is None
    assert str(e.value).startswith(f"{src}: cannot be read as Parquet: ")
    assert not dst.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["in.parquet"]
    with pytest.raises(FileNotFoundError, match="no such Parquet file"):
        decoder.decode_parquet(tmp_path / "none.parquet", dst, progress=False)


def test_decode_parquet_refuses_a_column_that_is_not_strings(decoder, tmp_path: Path) -> None:
    src, dst = tmp_path / "in.parquet", tmp_path / "out.parquet"
    pq.write_table(pa.table({"vin": pa.array([1, 2, 3], pa.int64()), "f": [1.5, 2.5, None],
                             "b": pa.array([b"x", b"y", b"z"], pa.binary())}), src)
    for column, kind in (("vin", "int64"), ("f", "double"), ("b", "binary")):
        with pytest.raises(vd.QueryError) as e:
            decoder.decode_parquet(src, dst, column=column, progress=False)
        assert str(e.value).startswith(f"{src}: column {column!r} holds {kind}, not strings: VINs are text")
        assert e.value.field == "column"
    assert not dst.exists()
    # strings, large strings and dictionary-encoded strings are text
    pq.write_table(pa.table({"vin": pa.array([GMC, None], pa.large_string()).dictionary_encode()}), src)
    assert decoder.decode_parquet(src, dst, progress=False) == 2
    assert pq.read_table(dst).column("year").to_pylist() == [2020, None]


def test_all_trims_that_is_not_a_bool_is_a_query_error(decoder) -> None:
    for value, shown in (("yes", "str 'yes'"), (1, "int 1"), (None, "NoneType None")):
        with pytest.raises(vd.QueryError) as e:
            decoder.decode(GMC, all_trims=value)
        assert str(e.value) == f"all_trims must be True or False, not {shown}"
        assert e.value.field == "all_trims"
    np = pytest.importorskip("numpy")
    assert decoder.decode(GMC, all_trims=np.bool_(True)).to_dict() == decoder.decode(GMC, all_trims=True).to_dict()
