"""db.aggregate(): count, min, max, sum, mean, first and last computed in
the library, compared with pyarrow's group_by over the rows of a scan, on
random data with nulls, overwrites and out-of-order times, flushed and in
memory, by device or not, in time buckets or not."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import arcadego

pa = pytest.importorskip("pyarrow", reason="the full venv installs pyarrow")
pc = pytest.importorskip("pyarrow.compute")

FUNCS = ["count", "min", "max", "sum", "mean", "first", "last"]


@pytest.fixture
def data_db(arcadego_db: arcadego.Database) -> arcadego.Database:
    db = arcadego_db
    with db.transaction() as tx:
        tx.create_type("S")
        tx.create_property("S", "k", "INT64")
        tx.create_property("S", "x", "DOUBLE")
    rng = np.random.default_rng(5)
    for step in range(6):
        for d in range(4):
            n = int(rng.integers(1, 60))
            times = rng.integers(-30, 400, n)  # out of order, repeats
            k = pa.array(rng.integers(-1000, 1000, n), mask=rng.random(n) < 0.2)
            x = pa.array(rng.normal(size=n), mask=rng.random(n) < 0.25)
            db.insert("S", pa.table({"time": pa.array(times, pa.int64()), "k": k, "x": x}), device=f"d{d}")
        if step == 2:
            db.flush()
    return db


def _expected(db: arcadego.Database, by_device: bool, every: int | None, origin: int,
              start: int | None, end: int | None) -> pa.Table:
    rows = db.scan("S", start=start, end=end).to_arrow()
    rows = rows.set_column(0, "device", rows["device"].cast(pa.string()))
    if every:
        shifted = pc.subtract(rows["time"], origin)
        bucket = pc.add(pc.multiply(pc.floor(pc.divide(pc.cast(shifted, pa.float64()), float(every))).cast(pa.int64()), every),
                        origin)
        rows = rows.append_column("bucket", bucket)
    else:
        rows = rows.append_column("bucket", pa.array(np.zeros(rows.num_rows, dtype=np.int64)))
    rows = rows.sort_by([("time", "ascending")]) if not by_device else rows
    keys = ["device", "bucket"] if by_device else ["bucket"]
    aggs = [(p, f) for p in ("k", "x") for f in FUNCS]  # pyarrow's count skips nulls, as ours
    return rows.group_by(keys, use_threads=False).aggregate(aggs)


@pytest.mark.parametrize("by_device, every, origin, start, end", [
    (False, None, 0, None, None),
    (True, None, 0, None, None),
    (True, 50, 0, None, None),
    (False, 37, 5, None, None),
    (True, 20, -7, 0, 200),
])
def test_aggregates_equal_pyarrow_over_a_scan(data_db: arcadego.Database, by_device: bool, every: int | None,
                                              origin: int, start: int | None, end: int | None) -> None:
    res = data_db.aggregate("S", {"k": FUNCS, "x": FUNCS}, by_device=by_device, every=every, origin=origin,
                            start=start, end=end)
    got = res.to_arrow()
    want = _expected(data_db, by_device, every, origin, start, end)
    assert got.num_rows == want.num_rows
    names = [f"{p}_{f}" for p in ("k", "x") for f in FUNCS]
    assert got.column_names == (["device"] if by_device else []) + ["time"] + names
    key = (lambda r: (r["device"], r["bucket"])) if by_device else (lambda r: r["bucket"])
    expected = {key(r): r for r in want.to_pylist()}
    for row in got.to_pylist():
        if every:
            k = (row["device"], row["time"]) if by_device else row["time"]
        else:
            k = (row["device"], 0) if by_device else 0
        w = expected[k]
        for p in ("k", "x"):
            for f in FUNCS:
                g, e = row[f"{p}_{f}"], w[f"{p}_{f}"]
                if f == "count":
                    assert g == e, (k, p, f)
                elif e is None:
                    assert g is None, (k, p, f)
                elif isinstance(e, float):
                    assert math.isclose(g, e, rel_tol=1e-9, abs_tol=1e-9), (k, p, f, g, e)
                else:
                    assert g == e, (k, p, f)


def test_aggregate_types_and_edges(mem_db: arcadego.Database) -> None:
    mem_db.insert("T", {"time": [1, 2, 3], "i": [2**62, 2**62, None], "s": ["b", "a", None],
                        "x": [float("nan"), 1.5, -2.0]}, device="d")
    t = mem_db.aggregate("T", {"s": ["min", "max", "count", "first", "last"], "x": ["max", "min", "sum"],
                               "i": "count"}).to_arrow()
    assert t.schema.field("s_min").type == pa.string()
    assert t.schema.field("s_count").type == pa.int64()
    row = t.to_pylist()[0]
    assert (row["s_min"], row["s_max"], row["s_count"], row["s_first"], row["s_last"]) == ("a", "b", 2, "b", "a")
    assert math.isnan(row["x_max"]) and row["x_min"] == -2.0 and math.isnan(row["x_sum"])
    assert row["i_count"] == 2
    with pytest.raises(arcadego.InvalidArgumentError, match='sum of "i" overflows'):
        mem_db.aggregate("T", {"i": "sum"}).to_arrow()
    assert mem_db.aggregate("T", {"i": "mean"}).to_pylist()[0]["i_mean"] == float(2**62)
    # An empty range: no rows; an all-null group: nulls and a count of 0.
    assert mem_db.aggregate("T", {"x": "sum"}, start=100).to_arrow().num_rows == 0
    row = mem_db.aggregate("T", {"i": ["count", "min"]}, start=3).to_pylist()[0]
    assert row == {"time": 3, "i_count": 0, "i_min": None}


def test_aggregate_of_timestamp_types(mem_db: arcadego.Database) -> None:
    import datetime as dt
    ts = pa.array([dt.datetime(2026, 1, 1, h, tzinfo=dt.timezone.utc) for h in range(5)], pa.timestamp("ms", "UTC"))
    mem_db.insert("M", pa.table({"time": ts, "v": [1.0, 2.0, 3.0, 4.0, 5.0]}), device="d")
    t = mem_db.aggregate("M", {"v": ["sum", "count"]}, every=2 * 3600 * 1000).to_arrow()
    assert t.schema.field("time").type == pa.timestamp("ms", "UTC")
    assert t["v_sum"].to_pylist() == [3.0, 7.0, 5.0]
    assert t["time"].to_pylist()[1] == dt.datetime(2026, 1, 1, 2, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"aggregates": {}}, arcadego.InvalidArgumentError, "non-empty dict"),
    ({"aggregates": {"x": "median"}}, arcadego.InvalidArgumentError, 'unknown function "median"'),
    ({"aggregates": {"nope": "sum"}}, arcadego.NotFoundError, "nope"),
    ({"aggregates": {"s": "sum"}}, arcadego.InvalidArgumentError, "sum of"),
    ({"aggregates": {"x": "sum"}, "every": -5}, arcadego.InvalidArgumentError, "every -5"),
    ({"aggregates": {"x": "sum"}, "every": 1.5}, arcadego.InvalidArgumentError, "every must be an int"),
    ({"aggregates": {"x": "sum"}, "by_device": 1}, arcadego.InvalidArgumentError, "by_device must be a bool"),
])
def test_aggregate_bad_requests(mem_db: arcadego.Database, kwargs: dict, error: type, match: str) -> None:
    mem_db.insert("T", {"time": [1], "x": [1.0], "s": ["a"]}, device="d")
    with pytest.raises(error, match=match):
        mem_db.aggregate("T", **kwargs)
    with pytest.raises(arcadego.NotFoundError):
        mem_db.aggregate("Nope", {"x": "sum"})


def test_buckets_by_interval_string_with_fill(mem_db: arcadego.Database) -> None:
    import datetime as dt
    utc = dt.timezone.utc
    times = [dt.datetime(2026, 1, 1, 0, 5, tzinfo=utc), dt.datetime(2026, 1, 1, 3, 10, tzinfo=utc)]
    mem_db.insert("H", pa.table({"time": pa.array(times, pa.timestamp("ms", "UTC")), "v": [1.0, 4.0]}), device="d")
    t = mem_db.aggregate("H", {"v": ["mean", "count"]}, every="1h", fill="linear").to_arrow()
    assert t["time"].to_pylist() == [dt.datetime(2026, 1, 1, h, tzinfo=utc) for h in range(4)]
    assert t["v_mean"].to_pylist() == [1.0, 2.0, 3.0, 4.0]
    assert t["v_count"].to_pylist() == [1, 0, 0, 1]
    prev = mem_db.aggregate("H", {"v": "mean"}, every="60m", fill="previous").to_pylist()
    assert [r["v_mean"] for r in prev] == [1.0, 1.0, 1.0, 4.0]
    null = mem_db.aggregate("H", {"v": "mean"}, every="3600s", fill="null").to_pylist()
    assert [r["v_mean"] for r in null] == [1.0, None, None, 4.0]
    assert mem_db.aggregate("H", {"v": "mean"}, every="1h").to_arrow().num_rows == 2
    with pytest.raises(arcadego.InvalidArgumentError, match="unknown fill"):
        mem_db.aggregate("H", {"v": "mean"}, every="1h", fill="zero")
    with pytest.raises(arcadego.InvalidArgumentError, match="needs buckets"):
        mem_db.aggregate("H", {"v": "mean"}, fill="null")
    # Weeks, as retention takes them; buckets count from the epoch (a Thursday).
    week = mem_db.aggregate("H", {"v": "count"}, every="1w").to_pylist()
    assert [r["time"] for r in week] == [dt.datetime(2026, 1, 1, tzinfo=utc)] and week[0]["v_count"] == 2
    with pytest.raises(arcadego.InvalidArgumentError, match="a positive whole number"):
        mem_db.aggregate("H", {"v": "mean"}, every="1 hour")
    with pytest.raises(arcadego.InvalidArgumentError, match="not a whole number of ms"):
        mem_db.aggregate("H", {"v": "mean"}, every="10us")
    mem_db.insert("I", {"time": [1], "v": [1.0]}, device="d")
    with pytest.raises(arcadego.InvalidArgumentError, match="no timestamp times"):
        mem_db.aggregate("I", {"v": "mean"}, every="1h")


def test_last_equals_the_last_non_null_of_a_scan(data_db: arcadego.Database) -> None:
    rows = data_db.scan("S").to_arrow().to_pylist()
    want: dict[str, dict[str, Any]] = {}
    for r in rows:  # sorted by device, then time
        w = want.setdefault(r["device"], {"time": r["time"]})
        w["time"] = r["time"]
        for p in ("k", "x"):
            if r[p] is not None:
                w[p], w[p + "_time"] = r[p], r["time"]
    got = data_db.last("S").to_pylist()
    assert [g["device"] for g in got] == sorted(want)
    for g in got:
        w = want[g["device"]]
        assert g["time"] == w["time"]
        for p in ("k", "x"):
            assert g[p] == w.get(p) and g[p + "_time"] == w.get(p + "_time"), (g["device"], p)
    one = data_db.last("S", ["x"], device="d2").to_arrow()
    assert one.column_names == ["device", "time", "x", "x_time"] and one.num_rows == 1
    with pytest.raises(arcadego.NotFoundError):
        data_db.last("S", ["nope"])
