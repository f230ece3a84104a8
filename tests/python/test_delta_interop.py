"""Other engines read a flushed database in place, as Delta Lake tables.

After ``db.flush()`` each type with data is a Delta Lake table in the
directory ``db.stats()["types"][i]["path"]``. delta-rs (``deltalake``),
polars and DuckDB must return exactly the rows ``db.scan`` returns, with
the documented mapping of types:

======================================  =====================================
arcadego                                Delta Lake (reader's Arrow type)
======================================  =====================================
device (dictionary<int32, string>)      string
time: int64, timestamp "s" or "ns"      long (int64, the value in its unit)
time: timestamp "ms" or "us"            timestamp (microseconds, UTC)
BOOLEAN, INT32, INT64                   boolean, integer, long
FLOAT, DOUBLE                           float, double
STRING, BINARY                          string, binary
TIMESTAMP (nanoseconds)                 long (int64 nanoseconds)
DATE                                    date
======================================  =====================================

Filters on device and time go through the readers' file pruning, so wrong
min/max statistics in the Delta log show up as missing rows. A property
dropped and re-created under the same name must not bring its old values
back, and a flush over keys already flushed must leave one row per key.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import deltalake
import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import arcadego

# (name, DDL type, Arrow type of inserts and scans, Delta type as the readers return it)
PROPERTIES: list[tuple[str, str, pa.DataType]] = [
    ("b", "BOOLEAN", pa.bool_()),
    ("i", "INT32", pa.int32()),
    ("l", "INT64", pa.int64()),
    ("f", "FLOAT", pa.float32()),
    ("d", "DOUBLE", pa.float64()),
    ("s", "STRING", pa.string()),
    ("bin", "BINARY", pa.binary()),
    ("ts", "TIMESTAMP", pa.timestamp("ns")),
    ("dt", "DATE", pa.date32()),
]
NEVER = "never"  # a DOUBLE property no insert writes: all null, no min/max

# Time representations, one type each: the Arrow type of the time column.
TIMES: dict[str, pa.DataType] = {
    "int64": pa.int64(),
    "ms_utc": pa.timestamp("ms", tz="UTC"),
    "us": pa.timestamp("us"),
    "s": pa.timestamp("s"),
    "ns": pa.timestamp("ns"),
}
DEVICES = ["d1", "d2", "d3", "é-4"]
STEP = {"int64": 7, "s": 60, "ms_utc": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
BASE = {"int64": -20, "s": 1_700_000_000, "ms_utc": 1_700_000_000_000,
        "us": 1_700_000_000_000_000, "ns": 1_700_000_000_000_000_000}


def type_name(rep: str) -> str:
    return f"T_{rep}"


def delta_time_is_timestamp(time_type: pa.DataType) -> bool:
    """ms and us time columns are Delta timestamps; int64, s and ns are longs."""
    return pa.types.is_timestamp(time_type) and time_type.unit in ("ms", "us")


# ---------------------------------------------------------------------------
# data


def random_value(rng: random.Random, typ: pa.DataType) -> Any:
    if pa.types.is_boolean(typ):
        return rng.random() < 0.5
    if pa.types.is_int32(typ):
        return rng.randint(-(1 << 31), (1 << 31) - 1)
    if pa.types.is_int64(typ):
        return rng.randint(-(1 << 62), 1 << 62)
    if pa.types.is_float32(typ):
        return rng.randint(-4000, 4000) / 8  # exact in float32
    if pa.types.is_float64(typ):
        return rng.uniform(-1e12, 1e12)
    if pa.types.is_string(typ):
        return rng.choice(["", "a", "zz", "héllo", "naïve ☃"]) + str(rng.randint(0, 99))
    if pa.types.is_binary(typ):
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 5)))
    if pa.types.is_timestamp(typ):
        return rng.randint(-(1 << 61), 1 << 61)
    if pa.types.is_date32(typ):
        return rng.randint(-1000, 30000)
    raise AssertionError(typ)


def batch(rng: random.Random, rep: str, ticks: list[int], null_rate: float = 0.25,
          columns: list[tuple[str, pa.DataType]] | None = None) -> pa.Table:
    """Rows at BASE + tick * STEP in the given (unsorted, maybe repeated)
    order, every property null with probability null_rate."""
    time_type = TIMES[rep]
    times = pa.array([BASE[rep] + t * STEP[rep] for t in ticks], pa.int64())
    cols: dict[str, pa.Array] = {"time": times.cast(time_type)}
    for name, typ in columns if columns is not None else [(n, t) for n, _, t in PROPERTIES]:
        values = [None if rng.random() < null_rate else random_value(rng, typ) for _ in ticks]
        if pa.types.is_timestamp(typ):
            cols[name] = pa.array(values, pa.int64()).cast(typ)
        else:
            cols[name] = pa.array(values, typ)
    return pa.table(cols)


def create_types(db: arcadego.Database, reps: list[str]) -> None:
    with db.transaction() as tx:
        for rep in reps:
            tx.create_type(type_name(rep))
            for name, ddl, _ in PROPERTIES:
                tx.create_property(type_name(rep), name, ddl)
            tx.create_property(type_name(rep), NEVER, "DOUBLE")


def first_round(db: arcadego.Database, rep: str, seed: int) -> None:
    """Out-of-order times, duplicates inside a batch and across batches
    (last non-null wins per column), several devices."""
    rng = random.Random(seed)
    for dev in DEVICES[:3]:
        ticks = list(range(40))
        rng.shuffle(ticks)
        ticks += [3, 17, 17, 29]  # repeated in the same batch
        db.insert(type_name(rep), batch(rng, rep, ticks), device=dev)
        db.insert(type_name(rep), batch(rng, rep, [5, 1, 39, 20], null_rate=0.6), device=dev)


def second_round(db: arcadego.Database, rep: str, seed: int) -> None:
    """Overwrites of flushed keys (some columns null: the flushed values
    stay), new keys before, inside and after the flushed range, a new device."""
    rng = random.Random(seed)
    for dev in DEVICES:
        ticks = [0, 2, 4, 39, 11, -3, 41, 60, 25, 25]
        db.insert(type_name(rep), batch(rng, rep, ticks, null_rate=0.5), device=dev)


# ---------------------------------------------------------------------------
# reading back


def table_path(db: arcadego.Database, name: str) -> str:
    entries = [t for t in db.stats()["types"] if t["name"] == name]
    assert len(entries) == 1, f"type {name} in stats()['types']: {db.stats()['types']}"
    path = entries[0]["path"]
    assert Path(path, "_delta_log").is_dir(), path
    return str(path)


def expected_reader_type(column: str, scan_type: pa.DataType) -> Callable[[pa.DataType], bool]:
    """What a reader must return for a column of db.scan with scan_type."""
    if pa.types.is_dictionary(scan_type):  # the device column: Delta stores its values
        return expected_reader_type(column, scan_type.value_type)
    if column == "time" and delta_time_is_timestamp(scan_type):
        return lambda t: pa.types.is_timestamp(t) and t.tz in ("UTC", "+00:00", "Etc/UTC")
    if pa.types.is_timestamp(scan_type):
        return pa.types.is_int64
    if pa.types.is_string(scan_type):
        return lambda t: pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)
    if pa.types.is_binary(scan_type):
        return lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t)
    if pa.types.is_date32(scan_type):
        return lambda t: pa.types.is_date32(t) or pa.types.is_date64(t)
    return lambda t: t == scan_type


def canonical_column(col: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """One representation per Delta type, whatever the reader returned:
    timestamps as int64 microseconds, strings as string, binaries as binary,
    dates as date32, dictionaries (db.scan's device column) decoded."""
    t = col.type
    if pa.types.is_dictionary(t):
        return canonical_column(col.cast(t.value_type))
    if pa.types.is_timestamp(t):
        return col.cast(pa.timestamp("us", tz=t.tz)).cast(pa.int64())
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return col.cast(pa.string())
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return col.cast(pa.binary())
    if pa.types.is_date64(t):
        return col.cast(pa.date32())
    return col


def expected_rows(scan: pa.Table) -> pa.Table:
    """db.scan's rows as the readers must return them: time columns and
    TIMESTAMP properties that Delta stores as long keep their raw int64."""
    cols = {}
    for field, col in zip(scan.schema, scan.columns):
        if pa.types.is_timestamp(field.type) and not (field.name == "time" and delta_time_is_timestamp(field.type)):
            col = col.cast(pa.int64())
        cols[field.name] = col
    return pa.table(cols)


def canonical(table: pa.Table) -> list[dict[str, Any]]:
    table = pa.table({name: canonical_column(col) for name, col in zip(table.column_names, table.columns)})
    return table.sort_by([("device", "ascending"), ("time", "ascending")]).to_pylist()


def assert_same_rows(reader: str, got: pa.Table, scan: pa.Table) -> None:
    assert sorted(got.column_names) == sorted(scan.column_names), reader
    for field in scan.schema:
        ok = expected_reader_type(field.name, field.type)
        assert ok(got.schema.field(field.name).type), \
            f"{reader}: column {field.name} is {got.schema.field(field.name).type} (arcadego: {field.type})"
    got = got.select(scan.column_names)
    want = canonical(expected_rows(scan))
    have = canonical(got)
    assert len(have) == len(want), f"{reader}: {len(have)} rows, db.scan has {len(want)}"
    for i, (h, w) in enumerate(zip(have, want)):
        assert h == w, f"{reader}: row {i} differs"


def read_all(path: str) -> dict[str, pa.Table]:
    """The table as each reader returns it."""
    return {
        "deltalake.to_pyarrow_table": deltalake.DeltaTable(path).to_pyarrow_table(),
        "deltalake.scan": pa.table(deltalake.DeltaTable(path).scan()),
        "polars.read_delta": pl.read_delta(path).to_arrow(),
    }


def assert_readers_match(db: arcadego.Database, name: str) -> None:
    path = table_path(db, name)
    scan = db.scan(name).to_arrow()
    for reader, got in read_all(path).items():
        assert_same_rows(reader, got, scan)
    keys = pl.read_delta(path).select("device", "time")
    assert keys.n_unique() == keys.height, "duplicate (device, time) keys in the Delta table"


def duckdb_count(path: str, where: str = "") -> int:
    files = deltalake.DeltaTable(path).file_uris()
    assert files
    row = duckdb.execute(f"SELECT count(*) FROM read_parquet(?, union_by_name=true) {where}", [files]).fetchone()
    assert row is not None
    return int(row[0])


# ---------------------------------------------------------------------------
# tests


@pytest.fixture(params=["log", "direct"])
def db(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[arcadego.Database]:
    """A database whose inserts go through the log and the memtable, or
    one that writes every insert it can straight to Parquet."""
    direct = 1 if request.param == "direct" else -1
    with arcadego.connect(tmp_path / "db", direct_write_bytes=direct) as database:
        yield database


@pytest.fixture
def flushed(db: arcadego.Database) -> arcadego.Database:
    """A database with one type per time representation, flushed once."""
    create_types(db, list(TIMES))
    for seed, rep in enumerate(TIMES):
        first_round(db, rep, seed)
    db.flush()
    return db


@pytest.mark.parametrize("rep", ["int64", "ms_utc", "ns"])
def test_direct_writes_are_readable_at_once(tmp_path: Path, rep: str) -> None:
    """A large insert written straight to Parquet is in the Delta table as
    soon as the insert returns: no flush, nothing in the memtable."""
    with arcadego.connect(tmp_path / "db", direct_write_bytes=1) as db:
        create_types(db, [rep])
        rng = random.Random(3)
        for dev in DEVICES:
            db.insert(type_name(rep), batch(rng, rep, list(range(0, 3000, 3))), device=dev)
        st = db.stats()
        assert st["direct_writes"] == len(DEVICES)
        assert st["memtable_bytes"] == 0
        assert_readers_match(db, type_name(rep))
        path = table_path(db, type_name(rep))
        assert duckdb_count(path, "WHERE device = 'd2'") == 1000


def test_uncompressed_columns_are_read_by_every_reader(db: arcadego.Database) -> None:
    """A column of random doubles, which Snappy does not shrink, is written
    without compression (a column of few values stays Snappy); delta-rs,
    polars and DuckDB read both."""
    rng = random.Random(8)
    with db.transaction() as tx:
        tx.create_type("Noisy")
        tx.create_property("Noisy", "noise", "DOUBLE")
        tx.create_property("Noisy", "level", "DOUBLE")
    n = 5000
    for dev in ["a", "b"]:
        db.insert("Noisy", {"time": list(range(n)), "noise": [rng.random() if i % 7 else None for i in range(n)],
                            "level": [float(i % 3) for i in range(n)]}, device=dev)
    db.flush()
    path = table_path(db, "Noisy")
    codecs: dict[str, set[str]] = {}
    for uri in deltalake.DeltaTable(path).file_uris():
        meta = pq.ParquetFile(uri).metadata
        for g in range(meta.num_row_groups):
            for c in range(meta.num_columns):
                col = meta.row_group(g).column(c)
                codecs.setdefault(col.path_in_schema, set()).add(col.compression)
    assert codecs["noise"] == {"UNCOMPRESSED"}
    assert codecs["level"] == {"SNAPPY"}
    assert_readers_match(db, "Noisy")
    assert duckdb_count(path, "WHERE noise > 0.5") == pc.sum(pc.greater(db.scan("Noisy").to_arrow()["noise"], 0.5)).as_py()


@pytest.mark.parametrize("rep", list(TIMES))
def test_readers_return_the_scanned_rows(flushed: arcadego.Database, rep: str) -> None:
    name = type_name(rep)
    assert flushed.scan(name).to_arrow().num_rows == 3 * 40
    assert_readers_match(flushed, name)


def test_stats_of_the_flush(flushed: arcadego.Database) -> None:
    st = flushed.stats()
    assert st["flushes"] >= 1
    if flushed.direct_write_bytes == 1:  # each device's first insert met no older rows
        assert st["direct_writes"] >= 3 * len(TIMES)
    else:
        assert st["direct_writes"] == 0
    by_name = {t["name"]: t for t in st["types"]}
    for rep in TIMES:
        t = by_name[type_name(rep)]
        assert t["rows"] == 3 * 40
        assert t["files"] == len(deltalake.DeltaTable(t["path"]).file_uris())
        assert t["delta_version"] == deltalake.DeltaTable(t["path"]).version()


@pytest.mark.parametrize("rep", ["int64", "ms_utc"])
def test_duckdb_reads_the_listed_files(flushed: arcadego.Database, rep: str) -> None:
    name = type_name(rep)
    path = table_path(flushed, name)
    assert duckdb_count(path) == flushed.scan(name).to_arrow().num_rows
    assert duckdb_count(path, "WHERE device = 'd2'") == flushed.scan(name, device="d2").to_arrow().num_rows


def time_scalar(path: str, rep: str, tick: int) -> pa.Scalar:
    """The time BASE + tick * STEP as a scalar of the Delta table's time type."""
    raw = BASE[rep] + tick * STEP[rep]
    delta_type = pa.schema(deltalake.DeltaTable(path).schema().to_arrow()).field("time").type
    if pa.types.is_timestamp(delta_type):
        return pa.scalar(raw, pa.int64()).cast(TIMES[rep]).cast(delta_type)
    return pa.scalar(raw, pa.int64())


@pytest.mark.parametrize("rep", list(TIMES))
def test_filters_on_device_and_time(flushed: arcadego.Database, rep: str) -> None:
    """Readers prune files by the log's min/max statistics before they
    filter rows: a wrong min or max drops rows silently."""
    name = type_name(rep)
    path = table_path(flushed, name)
    dt = deltalake.DeltaTable(path)
    lo, hi = BASE[rep] + 10 * STEP[rep], BASE[rep] + 20 * STEP[rep]
    lo_s, hi_s = time_scalar(path, rep, 10), time_scalar(path, rep, 20)

    for dev in DEVICES[:3]:
        want = flushed.scan(name, device=dev).to_arrow()
        assert want.num_rows == 40
        assert_same_rows(f"to_pyarrow_table(device = {dev})",
                         dt.to_pyarrow_table(filters=[("device", "=", dev)]), want)
        assert_same_rows(f"scan(device = {dev})", pa.table(dt.scan(predicate=f"device = '{dev}'")), want)
        assert_same_rows(f"polars (device = {dev})",
                         pl.scan_delta(path).filter(pl.col("device") == dev).collect().to_arrow(), want)
        assert dt.to_pyarrow_table(filters=[("device", "=", dev + "x")]).num_rows == 0

    want = flushed.scan(name, start=lo, end=hi).to_arrow()
    assert want.num_rows == 3 * 10
    expr = (ds.field("time") >= lo_s) & (ds.field("time") < hi_s)
    assert_same_rows("to_pyarrow_table(time)", dt.to_pyarrow_table(filters=expr), want)
    assert_same_rows("to_pyarrow_dataset(time)", dt.to_pyarrow_dataset().to_table(filter=expr), want)
    time_col = pl.col("time")
    assert_same_rows(
        "polars (time)",
        pl.scan_delta(path).filter((time_col >= pl.lit(lo_s.as_py())) & (time_col < pl.lit(hi_s.as_py())))
        .collect().to_arrow(),
        want)

    want = flushed.scan(name, device="d2", start=lo, end=hi).to_arrow()
    expr = (ds.field("device") == "d2") & (ds.field("time") >= lo_s) & (ds.field("time") < hi_s)
    assert_same_rows("to_pyarrow_table(device and time)", dt.to_pyarrow_table(filters=expr), want)

    # A pruning predicate keeps every file that holds a matching row.
    kept = dt.file_uris(file_pruning_predicate=[("device", "=", "d3")])
    assert kept
    rows = pa.concat_tables(
        [ds.dataset(f, format="parquet").to_table().select(["device"]) for f in kept], promote_options="permissive")
    assert pc.sum(pc.equal(rows["device"], "d3")).as_py() == 40


@pytest.mark.parametrize("rep", ["int64", "ms_utc", "ns"])
def test_second_flush_merges_overwrites(flushed: arcadego.Database, rep: str) -> None:
    name = type_name(rep)
    path = table_path(flushed, name)
    version = deltalake.DeltaTable(path).version()
    flushes = flushed.stats()["flushes"]
    second_round(flushed, rep, seed=100)
    flushed.flush()
    assert flushed.stats()["flushes"] > flushes
    assert deltalake.DeltaTable(path).version() > version
    assert table_path(flushed, name) == path
    assert_readers_match(flushed, name)
    assert duckdb_count(path) == flushed.scan(name).to_arrow().num_rows
    # Overwrites of flushed rows keep the flushed values their nulls did not
    # replace (checked by db.scan, which the readers matched).
    assert flushed.scan(name).to_arrow().num_rows == 3 * 43 + 9


@pytest.mark.parametrize("new_type", ["INT64", "STRING"])
@pytest.mark.parametrize("flush_between", [False, True], ids=["one flush", "flush between"])
def test_dropped_property_stays_dropped(db: arcadego.Database, new_type: str, flush_between: bool) -> None:
    """DROP PROPERTY T.x; CREATE PROPERTY T.x ...: the new x starts empty,
    in the Delta table too, after the next flush."""
    db.execute("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.x INT64; CREATE PROPERTY T.y STRING")
    db.insert("T", {"time": [1, 2, 3], "x": [10, 20, 30], "y": ["a", "b", "c"]}, device="d1")
    db.insert("T", {"time": [1, 2], "x": [11, 21], "y": [None, "B"]}, device="d2")
    db.flush()
    assert_readers_match(db, "T")

    db.execute("DROP PROPERTY T.x")
    if flush_between:
        db.insert("T", {"time": [4], "y": ["d"]}, device="d1")
        db.flush()
        assert_readers_match(db, "T")  # without x
    db.execute(f"CREATE PROPERTY T.x {new_type}")
    new_x = [7] if new_type == "INT64" else ["seven"]
    db.insert("T", {"time": [5], "x": new_x, "y": ["e"]}, device="d1")
    db.insert("T", {"time": [2], "y": ["bb"]}, device="d1")  # an old row, x not given
    db.flush()

    scan = db.scan("T").to_arrow()
    assert [v for v in scan["x"].to_pylist() if v is not None] == new_x
    assert_readers_match(db, "T")
    for reader, got in read_all(table_path(db, "T")).items():
        assert [v for v in got["x"].to_pylist() if v is not None] == new_x, f"{reader}: old x values are back"


@pytest.mark.parametrize("rep", ["int64", "ms_utc", "ns"])
def test_compaction_is_read_as_one_commit(flushed: arcadego.Database, rep: str) -> None:
    """After more flushes and a compaction, the readers see one file per
    type, the same rows, and statistics that still prune by device and
    time; the files the compaction replaced are gone from the directory."""
    name = type_name(rep)
    path = table_path(flushed, name)
    second_round(flushed, rep, seed=7)
    flushed.flush()
    # A device of its own: a file no earlier one overlaps.
    flushed.insert(name, batch(random.Random(8), rep, [100, 101, 102]), device="later")
    flushed.flush()
    assert len(deltalake.DeltaTable(path).file_uris()) >= 2
    version = deltalake.DeltaTable(path).version()
    compactions = flushed.stats()["compactions"]
    flushed.compact(name)
    assert flushed.stats()["compactions"] == compactions + 1
    table = deltalake.DeltaTable(path)
    assert len(table.file_uris()) == 1
    assert table.version() == version + 1
    assert_readers_match(flushed, name)
    assert duckdb_count(path) == flushed.scan(name).to_arrow().num_rows
    assert duckdb_count(path, "WHERE device = 'd1'") == flushed.scan(name, device="d1").to_arrow().num_rows
    on_disk = sorted(p.name for p in Path(path).glob("*.parquet"))
    assert on_disk == sorted(Path(u).name for u in table.file_uris())


@pytest.mark.parametrize("rep", ["int64", "ms_utc", "ns"])
def test_deleted_rows_leave_the_delta_table(flushed: arcadego.Database, rep: str) -> None:
    """db.delete hides rows at once; after the flush the Delta table (every
    reader, and DuckDB over the listed files) no longer holds them."""
    name = type_name(rep)
    path = table_path(flushed, name)
    total = flushed.scan(name).to_arrow().num_rows
    d1 = flushed.scan(name, device="d1").to_arrow().num_rows
    lo, hi = BASE[rep] + 10 * STEP[rep], BASE[rep] + 20 * STEP[rep]  # ints in the type's unit
    in_range = flushed.scan(name, device="d2", start=lo, end=hi).to_arrow().num_rows
    assert d1 and in_range
    flushed.delete(name, device="d1")
    flushed.delete(name, device=["d2"], start=lo, end=hi)
    assert flushed.scan(name).to_arrow().num_rows == total - d1 - in_range
    assert "d1" not in flushed.devices(name)["device"]
    assert duckdb_count(path) == total, "the files change at the flush, not before"
    flushed.flush()
    assert_readers_match(flushed, name)
    assert duckdb_count(path) == total - d1 - in_range
    assert duckdb_count(path, "WHERE device = 'd1'") == 0
    assert "d1" not in flushed.devices(name)["device"]
