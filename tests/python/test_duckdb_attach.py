"""arcadego.duckdb.attach: each type a DuckDB view that scans it again at
every query."""

from __future__ import annotations

import pytest

import arcadego

duckdb = pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")


def test_views_see_new_rows_and_group_by_device(mem_db: arcadego.Database) -> None:
    import arcadego.duckdb as ad
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
