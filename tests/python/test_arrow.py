"""Round trips through the Arrow PyCapsule interface: pyarrow, polars and
DuckDB as inputs, and as readers of our results."""

from __future__ import annotations

import datetime as dt

import pytest

import arcadego

pa = pytest.importorskip("pyarrow", reason="the full venv installs pyarrow; test_no_pyarrow.py covers its absence")


def _all_types_table() -> pa.Table:
    return pa.table({
        "time": pa.array([1, 2, 3], pa.int64()),
        "i64": pa.array([1, None, 3], pa.int64()),
        "i32": pa.array([None, 2, 3], pa.int32()),
        "f32": pa.array([0.5, None, 1.5], pa.float32()),
        "f64": pa.array([0.25, 2.0, None], pa.float64()),
        "b": pa.array([True, False, None]),
        "s": pa.array(["a", None, ""]),
        "ls": pa.array(["x", "yy", None], pa.large_string()),
        "y": pa.array([b"\x00", None, b"abc"], pa.binary()),
        "ts": pa.array([0, 10**18, None], pa.timestamp("ns")),
        "d": pa.array([0, None, 19000], pa.date32()),
        "dict": pa.array(["p", "q", "p"]).dictionary_encode(),
    })


def test_pyarrow_table_round_trip(mem_db: arcadego.Database) -> None:
    table = _all_types_table()
    mem_db.insert("T", table, device="d")
    out = mem_db.scan("T").to_arrow()
    assert out.column_names == ["device", "time"] + table.column_names[1:]
    for name in table.column_names:
        want = table[name]
        if name == "dict":
            want = want.cast(pa.string())
        if name == "ls":
            want = want.cast(pa.string())
        assert out[name].cast(want.type).to_pylist() == want.to_pylist(), name
    assert out["device"].to_pylist() == ["d"] * 3


def test_record_batch_and_slices(mem_db: arcadego.Database) -> None:
    batch = pa.record_batch({"time": list(range(10)), "k": list(range(100, 110))})
    mem_db.insert("S", batch.slice(3, 4))  # __arrow_c_array__ with an offset
    mem_db.insert("S", pa.Table.from_batches([batch.slice(8, 2)]))  # stream
    assert mem_db.scan("S").to_pydict()["k"] == [103, 104, 105, 106, 108, 109]


def test_timestamp_time_column_keeps_its_type(mem_db: arcadego.Database) -> None:
    times = pa.array([dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 2)], pa.timestamp("ms", tz="UTC"))
    mem_db.insert("TS", pa.table({"time": times, "v": [1, 2]}))
    out = mem_db.scan("TS").to_arrow()
    assert out.schema.field("time").type == pa.timestamp("ms", tz="UTC")
    assert out["time"].to_pylist() == times.to_pylist()


def test_result_is_lazy_and_rescans(mem_db: arcadego.Database) -> None:
    mem_db.insert("L", {"time": [1], "k": [1]})
    res = mem_db.scan("L")
    assert pa.table(res).num_rows == 1
    mem_db.insert("L", {"time": [2], "k": [2]})
    assert pa.table(res).num_rows == 2  # each conversion re-runs the scan
    assert res.to_arrow().num_rows == 2


def test_capsules_are_released_and_freed_once_dropped(mem_db: arcadego.Database) -> None:
    from arcadego import _cdata

    mem_db.insert("U", {"time": [1], "k": [1]})
    _cdata.sweep_stream_capsules()
    before = _cdata.exported_streams()
    capsules = [mem_db.scan("U").__arrow_c_stream__() for _ in range(20)]
    _cdata.sweep_stream_capsules()
    assert _cdata.exported_streams() == before + 20  # held: kept
    consumed = pa.RecordBatchReader._import_from_c_capsule(capsules[0]).read_all()
    assert consumed.num_rows == 1
    del capsules  # 19 never consumed, 1 moved out by pyarrow
    _cdata.sweep_stream_capsules()
    assert _cdata.exported_streams() == before
    assert mem_db.scan("U").to_pylist() == [{"device": "", "time": 1, "k": 1}]


def test_unsupported_arrow_type(mem_db: arcadego.Database) -> None:
    table = pa.table({"time": [1], "l": pa.array([[1, 2]], pa.list_(pa.int64()))})
    with pytest.raises(arcadego.InvalidArgumentError, match="l"):
        mem_db.insert("X", table)
    assert mem_db.types() == []


def test_polars_round_trip_with_zero_length_buffers(mem_db: arcadego.Database) -> None:
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({
        "time": [1, 2, 3],
        "s": ["", "", ""],  # a zero-length data buffer
        "n": pl.Series([None, None, None], dtype=pl.Utf8),
        "k": [1, None, 3],
        "f": [0.5, 1.5, None],
    })
    mem_db.insert("P", df, device="pl")
    empty = pl.DataFrame({"time": pl.Series([], dtype=pl.Int64), "s": pl.Series([], dtype=pl.Utf8),
                          "k": pl.Series([], dtype=pl.Int64)})
    mem_db.insert("P", empty, device="pl")  # zero rows: every buffer empty
    back = pl.DataFrame(mem_db.scan("P", columns=["s", "n", "k", "f"]))
    assert back.columns == ["device", "time", "s", "n", "k", "f"]
    assert back["s"].to_list() == ["", "", ""]
    assert back["n"].to_list() == [None, None, None]
    assert back["k"].to_list() == [1, None, 3]
    assert back["f"].to_list() == [0.5, 1.5, None]
    series = pl.from_arrow(mem_db.scan("P"))  # polars reads a generic stream as a struct Series
    assert series.struct.unnest()["time"].to_list() == [1, 2, 3]


def test_duckdb_results_as_input(mem_db: arcadego.Database) -> None:
    duckdb = pytest.importorskip("duckdb")
    rel = duckdb.sql("select range as time, range * 2 as k, 'v' || range as s from range(100)")
    mem_db.insert("D", rel, device="relation")  # the relation itself (__arrow_c_stream__)
    arrow = rel.arrow()
    mem_db.insert("D", arrow, device="arrow")  # .arrow(): a reader or a table
    out = mem_db.scan("D").to_arrow()
    assert out.num_rows == 200
    assert out.filter(pa.compute.equal(out["device"], "relation"))["k"].to_pylist() == [2 * i for i in range(100)]


def test_duckdb_reads_our_results(mem_db: arcadego.Database) -> None:
    duckdb = pytest.importorskip("duckdb")
    mem_db.insert("Q", {"time": list(range(10)), "k": list(range(10))}, device="a")
    mem_db.insert("Q", {"time": list(range(5)), "k": [100] * 5}, device="b")
    res = mem_db.scan("Q")
    direct = duckdb.sql("select device, count(*), sum(k) from res group by device order by device").fetchall()
    assert direct == [("a", 10, 45), ("b", 5, 500)]
    arrow_table = res.to_arrow()  # noqa: F841 - DuckDB finds it by name
    via_table = duckdb.sql("select sum(k) from arrow_table").fetchall()
    assert via_table == [(545,)]
