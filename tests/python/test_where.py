"""scan(where=...): value filters evaluated in the library return exactly
the rows pyarrow's filter keeps of an unfiltered scan (SQL null semantics:
a comparison with a null is false)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arcadego

pa = pytest.importorskip("pyarrow", reason="the full venv installs pyarrow")
pc = pytest.importorskip("pyarrow.compute")


@pytest.fixture
def rows_db(arcadego_db: arcadego.Database) -> arcadego.Database:
    db = arcadego_db
    with db.transaction() as tx:
        tx.create_type("W")
        tx.create_property("W", "k", "INT64")
        tx.create_property("W", "x", "DOUBLE")
        tx.create_property("W", "s", "STRING")
    rng = np.random.default_rng(8)
    for step in range(4):
        for d in range(3):
            n = 80
            db.insert("W", pa.table({
                "time": pa.array(rng.integers(0, 500, n), pa.int64()),
                "k": pa.array(rng.integers(-5, 5, n), mask=rng.random(n) < 0.2),
                "x": pa.array(np.round(rng.random(n) * 10, 1), mask=rng.random(n) < 0.2),
                "s": pa.array(rng.choice(["ok", "warn", "fail"], n), mask=rng.random(n) < 0.2),
            }), device=f"d{d}")
        if step == 1:
            arcadego_db.flush()
    return db


def _mask(t: pa.Table, where: Any) -> Any:
    """The same filter with pyarrow: nulls drop out, as in SQL."""
    if isinstance(where, list):
        m = _mask(t, where[0])
        for w in where[1:]:
            m = pc.and_kleene(m, _mask(t, w))
        return m
    if isinstance(where, dict):
        ms = [_mask(t, w) for w in where["or"]]
        m = ms[0]
        for x in ms[1:]:
            m = pc.or_kleene(m, x)
        return m
    prop, op, *value = where
    col = t[prop]
    if op == "is null":
        return pc.is_null(col)
    if op == "is not null":
        return pc.is_valid(col)
    if op == "in":
        return pc.and_(pc.is_valid(col), pc.is_in(col, value_set=pa.array(value[0])))
    fn = {"=": pc.equal, "!=": pc.not_equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}[op]
    return fn(col, pa.scalar(value[0]))


@pytest.mark.parametrize("where", [
    ("k", ">", 1),
    ("x", "<=", 4.5),
    ("s", "!=", "ok"),
    ("s", "in", ["warn", "fail"]),
    ("k", "in", [0, 3]),
    ("x", "is null"),
    [("k", ">=", 0), ("x", "<", 7)],
    {"or": [("s", "=", "fail"), [("k", "<", -2), ("x", "is not null")]]},
])
def test_where_equals_pyarrow_filter(rows_db: arcadego.Database, where: Any) -> None:
    full = rows_db.scan("W").to_arrow()
    full = full.set_column(0, "device", full["device"].cast(pa.string()))
    want = full.filter(pc.fill_null(_mask(full, where), False))
    got = rows_db.scan("W", where=where).to_arrow()
    got = got.set_column(0, "device", got["device"].cast(pa.string()))
    assert got.num_rows == want.num_rows > 0
    assert got.equals(want)
    # Filtering on a property not asked for: only the asked columns come back.
    narrow = rows_db.scan("W", columns=["s"], where=where).to_arrow()
    assert narrow.column_names == ["device", "time", "s"]
    assert narrow["time"].to_pylist() == want["time"].to_pylist()
    # Aggregates filter the same rows.
    counted = rows_db.aggregate("W", {"s": "count"}, where=where, by_device=True).to_pylist()
    want_counts = {d: sum(1 for r in want.to_pylist() if r["device"] == d and r["s"] is not None)
                   for d in {r["device"] for r in want.to_pylist()}}
    assert {r["device"]: r["s_count"] for r in counted} == want_counts


@pytest.mark.parametrize("where, match", [
    (("k", "~", 1), "op one of"),
    (("k", ">"), "op '>' needs a value"),
    (("k", "is null", 1), "takes no value"),
    (("k", "=", None), "is null"),
    (("k", "in", [1, None]), "is null"),
    (("k", "<", float("inf")), "cannot be compared"),
    ({"property": "k", "op": "=", "value": None}, "is null"),
    ({"property": "k", "op": "in", "value": {1, object()}}, "a value is a bool"),
    (("nope", "=", 1), "no property"),
    (("k", "=", "one"), "cannot be compared"),
    (("k", "=", object()), "a value is a bool"),
    ([], "empty list"),
    ({"or": []}, "non-empty list"),
    (42, "a condition tuple"),
])
def test_where_bad_filters(mem_db: arcadego.Database, where: Any, match: str) -> None:
    mem_db.insert("W", {"time": [1], "k": [1]}, device="d")
    with pytest.raises(arcadego.InvalidArgumentError, match=match):
        mem_db.scan("W", where=where)


def test_where_nan_and_infinities(mem_db: arcadego.Database) -> None:
    """JSON has no NaN nor infinities: they reach the library in a form of
    their own, and compare as IEEE 754 says (NaN equals nothing), as
    pyarrow's filter does."""
    nan, inf = float("nan"), float("inf")
    t = pa.table({"time": pa.array([1, 2, 3, 4, 5], pa.int64()),
                  "x": pa.array([1.0, nan, inf, -inf, None], pa.float64())})
    mem_db.insert("N", t, device="d")
    full = mem_db.scan("N", with_device=False, device="d").to_arrow()
    for where in [("x", "<", inf), ("x", ">", -inf), ("x", "=", inf), ("x", "=", nan), ("x", "!=", nan),
                  ("x", "<=", nan), ("x", ">=", nan), ("x", "<", nan), ("x", "in", [-inf, 1.0]),
                  ("x", ">=", np.float64(inf))]:
        want = full.filter(pc.fill_null(_mask(full, where), False))["time"].to_pylist()
        assert mem_db.scan("N", where=where).to_arrow()["time"].to_pylist() == want, where
    # The JSON form itself, as a dict, too.
    assert mem_db.scan("N", where={"property": "x", "op": "<", "value": inf}).to_arrow()["time"].to_pylist() == [1, 4]
    assert mem_db.scan("N", where={"property": "x", "op": "=", "value": np.float32(1)}).to_arrow()["time"].to_pylist() == [1]
