"""arcadego.duckdb: each type a DuckDB view that scans it again at every
query, reading only the columns the query uses and the rows its pushed
filter allows; the same answers as DuckDB over the whole scanned table."""

from __future__ import annotations

import random
from typing import Any

import pytest

import arcadego

duckdb = pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")
pc = pytest.importorskip("pyarrow.compute")

import arcadego.duckdb as ad  # noqa: E402  (needs duckdb and pyarrow)


def test_views_see_new_rows_and_group_by_device(mem_db: arcadego.Database) -> None:
    mem_db.insert("Sensor", {"time": [1, 2], "temperature": [20.0, 22.0]}, device="a")
    mem_db.insert("Other", {"time": [1], "k": [1]}, device="z")
    con = duckdb.connect()
    assert sorted(ad.attach(con, mem_db)) == ["Other", "Sensor"]
    assert con.sql("select count(*) from Sensor").fetchall() == [(2,)]
    mem_db.insert("Sensor", {"time": [3], "temperature": [30.0]}, device="b")
    rows = con.sql("select device, avg(temperature) from Sensor group by all order by 1").fetchall()
    assert rows == [("a", 21.0), ("b", 30.0)]
    assert ad.attach(con, mem_db, ["Sensor"], prefix="ag_") == ["ag_Sensor"]
    assert con.sql("select max(temperature) from ag_Sensor").fetchall() == [(30.0,)]
    with pytest.raises(arcadego.NotFoundError):
        ad.attach(con, mem_db, ["Nope"])


DEVICES = ["a", "b", 'q"x', "c\\d", "plant-7/m1"]


@pytest.fixture
def sensors(arcadego_db: arcadego.Database) -> arcadego.Database:
    """Five devices of type S with nulls, strings and a timestamp property;
    half of the rows flushed to files, half in the memtable."""
    rnd = random.Random(7)
    with arcadego_db.transaction() as tx:
        tx.create_type("S")
        for name, kind in [("x", "DOUBLE"), ("k", "INT64"), ("s", "STRING"), ("seen", "TIMESTAMP")]:
            tx.create_property("S", name, kind)

    def rows(first: int) -> Any:
        n = 40
        return pa.table({"time": list(range(first, first + n)),
                "x": [rnd.random() if rnd.random() > 0.2 else None for _ in range(n)],
                "k": [rnd.randint(-3, 3) for _ in range(n)],
                "s": [rnd.choice(["x", "y", 'q"', None]) for _ in range(n)],
                "seen": pa.array([rnd.randint(0, 10**6) for _ in range(n)], pa.timestamp("us"))})

    for d in DEVICES:
        arcadego_db.insert("S", rows(0), device=d)
    arcadego_db.flush()
    for d in DEVICES[1:]:
        arcadego_db.insert("S", rows(30), device=d)  # overwrites 30..39, then new times
    return arcadego_db


QUERIES = [
    "select count(*) from S",
    "select device, avg(x), min(k), max(s) from S group by all order by all",
    "select * from S where device = 'a' and time >= 10 and time < 20 order by all",
    "select time, k from S where device = 'q\"x' and k > 0 order by all",
    "select time from S where device = 'c\\d' order by all",
    "select count(*) from S where x > 0.5",
    "select count(*), sum(k) from S where s = 'x' and k <= 1",
    "select count(*) from S where s = 'q\"'",
    "select device, count(*) from S where device in ('a', 'b', 'nope') group by all order by all",
    "select count(*) from S where time = 7",
    "select count(*) from S where time > 9223372036854775806",
    "select count(*) from S where time < -9223372036854775807",
    "select count(*) from S where x is not null and time between 5 and 35",
    "select count(*) from S where k = 1 or k = 2",
    "select count(*) from S where k in (1, 2) and x < 0.3",
    "select count(*) from S where seen >= TIMESTAMP '1970-01-01 00:00:00.5'",
    "select count(*) from S where device = 'a' and device = 'b'",
    "select count(*) from S where device like 'plant-7/%'",
    "select k from S where time > 20 and time < 10",
]


@pytest.mark.parametrize("query", QUERIES)
def test_a_view_answers_as_duckdb_over_the_whole_scan(sensors: arcadego.Database, query: str) -> None:
    con = duckdb.connect()
    ad.attach(con, sensors)
    reference = duckdb.connect()
    reference.register("S", sensors.scan("S").to_arrow())
    assert con.sql(query).fetchall() == reference.sql(query).fetchall()


def scans_of(db: arcadego.Database, con: Any, query: str) -> list[dict[str, Any]]:
    """The keyword arguments of each db.scan a query made."""
    calls: list[dict[str, Any]] = []
    scan = db.scan

    def recording(*args: Any, **kwargs: Any) -> arcadego.Result:
        calls.append(kwargs)
        return scan(*args, **kwargs)

    db.scan = recording  # type: ignore[method-assign]
    try:
        con.sql(query).fetchall()
    finally:
        del db.scan
    return calls


def test_a_view_reads_only_what_the_query_needs(sensors: arcadego.Database) -> None:
    con = duckdb.connect()
    ad.attach(con, sensors)
    [scan] = scans_of(sensors, con, "select avg(x) from S")
    assert scan == {"columns": ["x"]}
    [scan] = scans_of(sensors, con, "select time, k from S where device = 'q\"x' and time >= 3 and time < 9")
    assert scan["device"] == ['q"x'] and (scan["start"], scan["end"]) == (3, 9)
    assert set(scan["columns"]) == {"time", "k", "device"}
    [scan] = scans_of(sensors, con, "select count(*) from S where device in ('a', 'b') and s = 'x'")
    assert scan["device"] == ["a", "b"] and scan["where"] == [("s", "=", "x")]
    # An "or" is not taken apart: every column is read and pyarrow filters.
    [scan] = scans_of(sensors, con, "select count(*) from S where k = 1 or s = 'y'")
    assert "where" not in scan and set(scan["columns"]) >= {"k", "s"}


def test_a_filter_is_pushed_only_when_rebuilt_exactly(sensors: arcadego.Database) -> None:
    schema = ad.dataset(sensors, "S").schema
    f = pc.field
    pushed = ad._pushdown((f("device") == 'q"x') & ((f("time") >= 3) & (f("time") < 9)), schema, "time")
    assert pushed is not None
    assert pushed.request == {"device": ['q"x'], "start": 3, "end": 9}
    pushed = ad._pushdown(f("x").is_valid() & (f("s") == "a) and (k == 1"), schema, "time")
    assert pushed is not None and pushed.request == {"where": [("x", "is not null"), ("s", "=", "a) and (k == 1")]}
    # DuckDB's form of "device in ('a', 'b')", and-ed with one of them.
    listed = pc.if_else(f("device").is_valid(), pc.is_in(f("device"), value_set=pa.array(["a", "b"])),
                        pa.scalar(None, pa.bool_()))
    both = ad._pushdown(listed & (f("device") == "b"), schema, "time")
    assert both is not None and both.request == {"device": ["b"]}
    seen = ad._pushdown(f("seen") >= pa.scalar(500_000, schema.field("seen").type), schema, "time")
    assert seen is not None and seen.request == {"where": [("seen", ">=", 500_000)]}
    # A name no device may have (too long, a control character) matches
    # nothing: it leaves the scan's devices, which a bad name would fail.
    for name in ["x" * 300, "b\x01"]:
        odd = ad._pushdown(f("device") == name, schema, "time")
        assert odd is not None and odd.request == {"device": []}, name
    for refused in [(f("k") == 1) | (f("k") == 2),
                    f("x") < float("inf"),  # JSON has no infinities: left to pyarrow
                    f("x") > pa.scalar(0.5, pa.float32()),  # prints as 0.5, but is not the double 0.5
                    f("x") > float("nan"),
                    f("k") != 1,
                    f("k").isin([1, 2]),  # not DuckDB's null-preserving form
                    f("x").is_null()]:
        assert ad._pushdown(refused, schema, "time") is None, str(refused)


@pytest.mark.parametrize("zone", [None, "UTC"])
def test_a_timestamp_time_range_is_pushed(mem_db: arcadego.Database, zone: str | None) -> None:
    second = 10**6
    mem_db.insert("T", pa.table({"time": pa.array([0, second, 2 * second, 3 * second], pa.timestamp("us", tz=zone)),
                                 "x": [1.0, 2.0, 3.0, 4.0]}), device="d")
    con = duckdb.connect()
    ad.attach(con, mem_db)
    literal = "TIMESTAMPTZ '1970-01-01 00:00:0{}+00'" if zone else "TIMESTAMP '1970-01-01 00:00:0{}'"
    query = f"select x from T where time >= {literal.format(1)} and time < {literal.format(3)} order by x"
    assert con.sql(query).fetchall() == [(2.0,), (3.0,)]
    [scan] = scans_of(mem_db, con, query)
    assert (scan["start"], scan["end"]) == (second, 3 * second)


def test_filters_the_scan_cannot_take_still_answer(sensors: arcadego.Database) -> None:
    con = duckdb.connect()
    ad.attach(con, sensors)
    for name in ["x" * 300, "a\x01"]:
        assert con.execute("select count(*) from S where device = ?", [name]).fetchall() == [(0,)]
    whole = sensors.scan("S").to_arrow()
    data = ad.dataset(sensors, "S")
    assert data.count_rows(filter=pc.field("x") < float("inf")) == pc.sum(pc.is_valid(whole["x"])).as_py()
    assert data.count_rows(filter=pc.field("x") > float("-inf")) == pc.sum(pc.is_valid(whole["x"])).as_py()


def test_a_dataset_reads_through_its_scanner(sensors: arcadego.Database) -> None:
    data = ad.dataset(sensors, "S")
    whole = sensors.scan("S").to_arrow()
    assert data.count_rows() == whole.num_rows
    assert data.count_rows(filter=pc.field("device") == "a") == 40
    table = data.to_table(columns=["time", "k"], filter=pc.field("k") > 2)
    assert table.column_names == ["time", "k"]
    assert table.num_rows == pc.sum(pc.greater(whole["k"], 2)).as_py()
    assert data.head(3).num_rows == 3
    with pytest.raises(NotImplementedError):
        data.get_fragments()
    with pytest.raises(arcadego.NotFoundError):
        ad.dataset(sensors, "Nope")


def test_polars_pushes_into_a_dataset(sensors: arcadego.Database) -> None:
    pl = pytest.importorskip("polars")
    frame = pl.scan_pyarrow_dataset(ad.dataset(sensors, "S")).filter(pl.col("k") > 1).select("k").collect()
    expected = sensors.scan("S", columns=["k"], where=("k", ">", 1)).to_arrow()
    assert sorted(frame["k"].to_list()) == sorted(expected["k"].to_pylist())


def test_a_view_after_a_dropped_property_names_it(sensors: arcadego.Database) -> None:
    con = duckdb.connect()
    ad.attach(con, sensors)
    sensors.drop_property("S", "s")
    with pytest.raises(duckdb.Error, match="property S.s"):
        con.sql("select * from S").fetchall()
    assert con.sql("select count(k) from S").fetchall() == [(sensors.scan("S").to_arrow().num_rows,)]
    ad.attach(con, sensors)  # attached again, the view has the type's columns of now
    assert "s" not in con.sql("select * from S limit 1").columns
