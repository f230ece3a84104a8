"""The device column of results is dictionary-encoded: dictionary<int32,
string>, each batch a dictionary of its devices (one entry and indices all
0 for a batch of one device; the names of several small devices joined up
to batch_rows), so it costs 4 bytes a row, not a copy of the name per row.
Every consumer of results reads it: pyarrow, pandas, polars, DuckDB, and
the pure-Python reader (test_no_pyarrow.py covers it without pyarrow)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import arcadego

pa = pytest.importorskip("pyarrow", reason="the full venv installs pyarrow; test_no_pyarrow.py covers its absence")

DEVICE_TYPE = pa.dictionary(pa.int32(), pa.string())
DEVICES = ["b", "a", "dev-ü", "a much longer device name than the others"]


@pytest.fixture
def three_devices(mem_db: arcadego.Database) -> arcadego.Database:
    for i, dev in enumerate(DEVICES):
        mem_db.insert("A", {"time": [1, 2, 3], "k": [i, i + 10, i + 20]}, device=dev)
    return mem_db


def _expected_devices() -> list[str]:
    return [d for d in sorted(DEVICES) for _ in range(3)]


def test_arrow_type_and_one_entry_dictionaries(three_devices: arcadego.Database) -> None:
    """The stream: batches of batch_rows rows that hold one device have a
    device column of indices into a dictionary of one entry."""
    res = three_devices.scan("A", batch_rows=2)
    table = pa.RecordBatchReader.from_stream(res).read_all()
    field = table.schema.field("device")
    assert field.type == DEVICE_TYPE
    assert not field.type.ordered
    assert not field.nullable
    assert table.schema.names == ["device", "time", "k"]
    col = table["device"]
    assert col.num_chunks == 2 * len(DEVICES)  # batches of 2 rows, then 1
    for chunk in col.chunks:
        assert isinstance(chunk, pa.DictionaryArray)
        assert len(chunk.dictionary) == 1
        assert chunk.indices.type == pa.int32()
        assert chunk.indices.to_pylist() == [0] * len(chunk)
        assert chunk.null_count == 0
    assert col.to_pylist() == _expected_devices()
    assert pa.table(res).schema == table.schema

    combined = table.combine_chunks()
    assert combined["device"].num_chunks == 1
    assert combined["device"].type == DEVICE_TYPE
    assert combined["device"].chunk(0).dictionary.to_pylist() == sorted(DEVICES)
    assert combined["device"].to_pylist() == _expected_devices()
    assert combined.column("k").to_pylist() == table.column("k").to_pylist()


def test_pyarrow_kernels(three_devices: arcadego.Database) -> None:
    """to_arrow() gives every chunk one shared dictionary, so pyarrow's
    kernels, group_by and join included, take the device column as is."""
    table = three_devices.scan("A", batch_rows=2).to_arrow()
    assert table["device"].num_chunks > 1
    dicts = {tuple(c.dictionary.to_pylist()) for c in table["device"].chunks}
    assert dicts == {tuple(table["device"].chunk(0).dictionary.to_pylist())}, "one dictionary for every chunk"
    pc = pa.compute
    assert table.filter(pc.equal(table["device"], "a"))["k"].to_pylist() == [1, 11, 21]
    assert table.filter(pc.field("device") == "dev-ü").num_rows == 3
    assert table["device"].cast(pa.string()).to_pylist() == _expected_devices()
    assert sorted(pc.unique(table["device"]).to_pylist()) == sorted(DEVICES)
    sums = table.group_by("device").aggregate([("k", "sum")]).to_pydict()
    assert dict(zip(sums["device"], sums["k_sum"])) == {d: 3 * i + 30 for i, d in enumerate(DEVICES)}
    other = pa.table({"device": pa.array(DEVICES).dictionary_encode(), "n": list(range(len(DEVICES)))})
    assert table.join(other, "device").num_rows == table.num_rows
    # The raw stream keeps one single-entry dictionary per batch.
    raw = pa.RecordBatchReader.from_stream(three_devices.scan("A", batch_rows=2)).read_all()
    assert {len(c.dictionary) for c in raw["device"].chunks} == {1}


def test_to_pandas_device_is_categorical(three_devices: arcadego.Database) -> None:
    pd = pytest.importorskip("pandas")
    df = three_devices.scan("A").to_pandas()
    assert isinstance(df["device"].dtype, pd.CategoricalDtype)
    assert sorted(df["device"].cat.categories.tolist()) == sorted(DEVICES)
    assert df["device"].tolist() == _expected_devices()
    assert df[df["device"] == "a"]["k"].tolist() == [1, 11, 21]
    assert df["device"].astype(str).tolist() == _expected_devices()
    assert df.groupby("device", observed=True)["k"].sum().to_dict() == {d: 3 * i + 30 for i, d in enumerate(DEVICES)}
    # The same through combine_chunks (one unified dictionary).
    again = three_devices.scan("A").to_arrow().combine_chunks().to_pandas()
    assert again["device"].tolist() == _expected_devices()


def test_to_pylist_and_to_pydict_give_str(three_devices: arcadego.Database) -> None:
    rows = three_devices.scan("A", batch_rows=2).to_pylist()
    assert [r["device"] for r in rows] == _expected_devices()
    assert all(type(r["device"]) is str for r in rows)
    assert three_devices.scan("A", device="dev-ü").to_pydict()["device"] == ["dev-ü"] * 3


def test_polars_reads_the_dictionaries(three_devices: arcadego.Database) -> None:
    pl = pytest.importorskip("polars")
    res = three_devices.scan("A", batch_rows=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. a categorical remapping warning
        df = pl.DataFrame(res)
        assert df.schema["device"] == pl.Categorical
        assert df["device"].to_list() == _expected_devices()
        assert df.filter(pl.col("device") == "a")["k"].to_list() == [1, 11, 21]
        sums = df.group_by("device").agg(pl.col("k").sum()).sort("device")
        assert sums["device"].cast(pl.String).to_list() == sorted(DEVICES)
        assert df.sort("device", "time")["device"].to_list() == _expected_devices()
        assert df["device"].cast(pl.String).dtype == pl.String
        frame = pl.from_arrow(res.to_arrow())
        assert isinstance(frame, pl.DataFrame)
        assert frame["device"].to_list() == _expected_devices()


def test_duckdb_reads_and_filters_the_device(three_devices: arcadego.Database) -> None:
    duckdb = pytest.importorskip("duckdb")
    res = three_devices.scan("A", batch_rows=2)  # noqa: F841 - DuckDB finds it by name
    con = duckdb.connect()  # not the default connection, which other tests may leave busy
    try:
        rel = con.sql("select * from res")
        assert rel.columns == ["device", "time", "k"]
        assert rel.types[0] == "VARCHAR"
        assert rel.fetchall()[0] == ("a", 1, 1)
        assert con.sql("select k from res where device = 'dev-ü' order by time").fetchall() == [(2,), (12,), (22,)]
        assert con.sql("select count(*) from res where device like 'a%'").fetchall() == [(6,)]
        got = con.sql("select device, sum(k) from res group by device order by device").fetchall()
        assert got == [(d, 3 * DEVICES.index(d) + 30) for d in sorted(DEVICES)]
        joined = con.sql("select count(*) from res join (select unnest(['a', 'b']) as device) using (device)")
        assert joined.fetchall() == [(6,)]
    finally:
        con.close()


def test_empty_result_keeps_the_type(three_devices: arcadego.Database) -> None:
    res = three_devices.scan("A", start=100)
    table = res.to_arrow()
    assert table.num_rows == 0
    assert table.schema.field("device").type == DEVICE_TYPE
    assert res.to_pydict() == {"device": [], "time": [], "k": []}


def test_large_batch_costs_four_bytes_a_row(mem_db: arcadego.Database) -> None:
    """The device column of a 1M-row batch: 4 MB of indices and the name
    once, not 1M copies of the name (24 MB for a 20-byte name)."""
    n = 1 << 20
    name = "device-0123456789abc"  # 20 bytes
    mem_db.insert("L", {"time": np.arange(n, dtype=np.int64)}, device=name)
    table = mem_db.scan("L", batch_rows=n).to_arrow()
    col = table["device"]
    assert col.num_chunks == 1
    chunk = col.chunk(0)
    validity, indices = chunk.buffers()
    assert validity is None
    assert indices.size == 4 * n
    offsets_validity, offsets, data = chunk.dictionary.buffers()
    assert offsets_validity is None
    assert data.size == len(name)
    assert chunk.dictionary.to_pylist() == [name]
    assert col.nbytes <= 4 * n + 64
    assert chunk.indices.to_numpy().max() == 0


def test_pure_python_reader_decodes_dictionaries(mem_db: arcadego.Database) -> None:
    """read_stream (the reader without pyarrow) on a dictionary column with
    nulls and int8 indices, as another producer may send."""
    from arcadego import _cdata
    from arcadego._import import read_stream

    table = pa.table({
        "s": pa.array(["x", None, "y", "x", None]).dictionary_encode().slice(1),
        "n": pa.DictionaryArray.from_arrays(pa.array([1, 0, None, 1, 1], pa.int8()), pa.array([10, 20])).slice(1),
    })
    capsule = table.__arrow_c_stream__()
    fields, columns = read_stream(_cdata.capsule_pointer(capsule, b"arrow_array_stream"))
    assert [(f.name, f.format, f.dictionary.format if f.dictionary else None) for f in fields] == [
        ("s", "i", "u"), ("n", "c", "l")]
    assert columns == [[None, "y", "x", None], [10, None, 20, 20]]


@pytest.mark.parametrize("flushed", [False, True])
def test_small_devices_share_batches(arcadego_db: arcadego.Database, flushed: bool) -> None:
    """A scan of many devices of a few rows each joins them into batches of
    up to batch_rows rows, each with a dictionary of its devices in order,
    from the memtable and from Parquet files alike."""
    names = [f"d{i:03d}" for i in range(300)]
    arcadego_db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
    with arcadego_db.transaction() as tx:
        for i, dev in enumerate(names):
            tx.insert("A", {"time": [1, 2, 3], "k": [i, i + 1000, None if i % 7 == 0 else i]}, device=dev)
    if flushed:
        arcadego_db.flush()
        assert arcadego_db.stats()["memtable_bytes"] == 0
    expected_k: list[int | None] = []
    for i in range(300):
        expected_k += [i, i + 1000, None if i % 7 == 0 else i]

    raw = pa.RecordBatchReader.from_stream(arcadego_db.scan("A")).read_all()
    assert raw["device"].num_chunks == 1
    chunk = raw["device"].chunk(0)
    assert chunk.dictionary.to_pylist() == names
    assert chunk.indices.to_pylist() == [i for i in range(300) for _ in range(3)]
    assert raw["k"].to_pylist() == expected_k
    assert raw["time"].to_pylist() == [1, 2, 3] * 300

    raw = pa.RecordBatchReader.from_stream(arcadego_db.scan("A", batch_rows=100)).read_all()
    assert raw.num_rows == 900
    assert raw["device"].num_chunks > 1
    for c in raw["device"].chunks:
        assert len(c) <= 100
        seen = list(dict.fromkeys(c.to_pylist()))
        assert c.dictionary.to_pylist() == seen, "each name once, in row order"
    assert raw["device"].to_pylist() == [d for d in names for _ in range(3)]
    assert raw["k"].to_pylist() == expected_k

    table = arcadego_db.scan("A", start=2, end=3).to_arrow()
    assert table["device"].cast(pa.string()).to_pylist() == names
    assert table["k"].to_pylist() == [i + 1000 for i in range(300)]


def test_with_device_false_leaves_the_column_out(three_devices: arcadego.Database) -> None:
    """A scan of one device may leave the device column out: the time
    column comes first, the rows are that device's, for every consumer."""
    full = three_devices.scan("A", device="a", start=2).to_arrow()
    res = three_devices.scan("A", device="a", start=2, with_device=False)
    table = res.to_arrow()
    assert table.column_names == ["time", "k"]
    assert table.equals(full.drop_columns(["device"]))
    assert res.to_pydict() == {"time": [2, 3], "k": [11, 21]}
    assert list(res.to_pandas().columns) == ["time", "k"]
    assert three_devices.scan("A", device=["nope"], with_device=False).to_arrow().num_rows == 0


@pytest.mark.parametrize("kwargs, match", [
    ({}, "naming one device"),
    ({"device": ["a", "b"]}, "naming one device"),
    ({"device_prefix": "a"}, "naming one device"),
    ({"device": "a", "with_device": 0}, "must be a bool"),
])
def test_with_device_false_needs_one_device(mem_db: arcadego.Database, kwargs: dict, match: str) -> None:
    mem_db.insert("A", {"time": [1], "k": [1]}, device="a")
    kwargs.setdefault("with_device", False)
    with pytest.raises(arcadego.InvalidArgumentError, match=match):
        mem_db.scan("A", **kwargs)


@pytest.mark.parametrize("request_args", [
    {"device": "a"},                   # one batch: read by the call that starts the scan
    {"batch_rows": 2},                 # its first batch, then a stream of the others
    {"batch_rows": 12},                # a first batch that is exactly every row
    {"device": "zz"},                  # no rows: a schema alone
    {"start": 2, "end": 3, "columns": ["k"]},
])
def test_to_arrow_and_iteration_match_the_stream(three_devices: arcadego.Database, request_args: dict) -> None:
    """to_arrow() and iteration start the scan with its first batch in one
    call (arcadego_scan_first); they return what the stream returns, batch
    for batch."""
    res = three_devices.scan("A", **request_args)
    streamed = list(pa.RecordBatchReader.from_stream(res))
    schema = pa.RecordBatchReader.from_stream(res).schema
    table = res.to_arrow()
    assert table.schema == schema
    assert table.num_rows == sum(b.num_rows for b in streamed)
    assert table.to_pydict() == pa.Table.from_batches(streamed, schema=schema).unify_dictionaries().to_pydict()
    iterated = list(res)
    assert [b.num_rows for b in iterated] == [b.num_rows for b in streamed]
    assert all(a.equals(b) for a, b in zip(iterated, streamed))


def test_to_arrow_schema_follows_the_type(mem_db: arcadego.Database) -> None:
    """to_arrow() reuses the schema it imported for a layout the library
    has seen; a change of the type (a property added, the time column's
    unit set by the first timestamp insert) is a new layout, never the
    old schema."""
    mem_db.execute("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.v INT64")
    assert mem_db.scan("T").to_arrow().schema.names == ["device", "time", "v"]
    assert mem_db.scan("T").to_arrow().schema.field("time").type == pa.int64()
    ts = pa.array([1_000, 2_000], pa.timestamp("ms", tz="UTC"))
    mem_db.insert("T", pa.table({"time": ts, "v": [1, 2]}), device="d")
    first = mem_db.scan("T", device="d").to_arrow()
    assert first.schema.field("time").type == pa.timestamp("ms", tz="UTC")
    assert first["time"].to_pylist() == ts.to_pylist()
    mem_db.execute("CREATE PROPERTY T.w DOUBLE")
    again = mem_db.scan("T", device="d").to_arrow()
    assert again.schema.names == ["device", "time", "v", "w"]
    assert again.to_pydict()["w"] == [None, None]
    assert mem_db.scan("T", device="d", columns=["v"]).to_arrow().schema.names == ["device", "time", "v"]
    assert mem_db.scan("T", device="d").to_arrow().equals(again)
