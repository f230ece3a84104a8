"""Time-series queries side by side with DuckDB (`make bench`).

N rows (default 10 M) x 10 DOUBLE over 100 devices, one row a second per
device, flushed and compacted (arcadego) and checkpointed (DuckDB, its own
file); then,
best of 5 each: count, sum and min/max of one column over everything and
over a 10 % time range; hourly buckets of one device; the last value per
device; the rows with x > 0.99; two SQL queries over a view of
arcadego.duckdb.attach and over the whole scan registered in DuckDB.
arcadego answers with db.aggregate, db.last and scan(where=...) to Arrow;
DuckDB with SQL to Arrow over its own table. Figures are printed, never
asserted.

Usage: python tests/bench/bench_queries.py [--rows N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from typing import Any, Callable

import duckdb
import numpy as np
import pyarrow as pa

import arcadego
import arcadego.duckdb

DEVICES = 100
COLS = [f"x{i}" for i in range(10)]


def best(fn: Callable[[], Any], runs: int = 5) -> tuple[float, Any]:
    out, times = None, []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times) * 1e3, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    args = parser.parse_args()
    per = args.rows // DEVICES
    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory() as d:
        db = arcadego.connect(f"{d}/a", sync="off")
        with db.transaction() as tx:
            tx.create_type("T")
            for c in COLS:
                tx.create_property("T", c, "DOUBLE")
        con = duckdb.connect(f"{d}/b.duckdb")
        con.execute("CREATE TABLE T (device VARCHAR, time BIGINT, " + ", ".join(f"{c} DOUBLE" for c in COLS) + ")")
        chunk = max(1, 1_000_000 // per)  # devices per 1 M-row batch
        for lo in range(0, DEVICES, chunk):
            n_dev = min(chunk, DEVICES - lo)
            names = pa.array([f"d{i:03d}" for i in range(lo, lo + n_dev)]).take(pa.array(np.repeat(np.arange(n_dev), per)))
            cols = {"device": names, "time": np.tile(np.arange(per, dtype=np.int64), n_dev)}
            for c in COLS:
                cols[c] = rng.random(n_dev * per)
            batch = pa.table(cols)
            db.insert("T", batch, device_column="device")
            con.register("b", batch)
            con.execute("INSERT INTO T SELECT * FROM b")
            con.unregister("b")
        db.flush()
        db.compact()  # what a background compaction would do meanwhile, done before the timings
        con.execute("CHECKPOINT")
        lo10, hi10 = int(per * 0.45), int(per * 0.55)

        cases: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
            ("count, sum, min, max of x0, all rows",
             lambda: db.aggregate("T", {"x0": ["count", "sum", "min", "max"]}).to_arrow(),
             lambda: con.sql("SELECT count(x0), sum(x0), min(x0), max(x0) FROM T").to_arrow_table()),
            ("count, min, max of x0, all rows",
             lambda: db.aggregate("T", {"x0": ["count", "min", "max"]}).to_arrow(),
             lambda: con.sql("SELECT count(x0), min(x0), max(x0) FROM T").to_arrow_table()),
            ("count, sum, min, max of x0 over 10 % of the time range",
             lambda: db.aggregate("T", {"x0": ["count", "sum", "min", "max"]}, start=lo10, end=hi10).to_arrow(),
             lambda: con.sql(f"SELECT count(x0), sum(x0), min(x0), max(x0) FROM T WHERE time >= {lo10} AND time < {hi10}")
             .to_arrow_table()),
            ("hourly mean of x0 for one device",
             lambda: db.aggregate("T", {"x0": "mean"}, device="d007", every=3600).to_arrow(),
             lambda: con.sql("SELECT time // 3600 * 3600 AS h, avg(x0) FROM T WHERE device = 'd007' GROUP BY h ORDER BY h")
             .to_arrow_table()),
            ("last x0 per device",
             lambda: db.last("T", ["x0"]).to_arrow(),
             lambda: con.sql("SELECT device, arg_max(x0, time), max(time) FROM T WHERE x0 IS NOT NULL GROUP BY device")
             .to_arrow_table()),
            ("rows with x0 > 0.99 (all columns)",
             lambda: db.scan("T", where=("x0", ">", 0.99)).to_arrow(),
             lambda: con.sql("SELECT * FROM T WHERE x0 > 0.99").to_arrow_table()),
        ]
        # SQL over the type: a view of arcadego.duckdb.attach (the scan reads
        # the query's columns and device), and the whole scan registered as
        # it is, which DuckDB reads in full before projecting and filtering.
        view = duckdb.connect()
        arcadego.duckdb.attach(view, db)
        whole = duckdb.connect()
        whole.register("T", db.scan("T"))
        for what, sql in [("SQL: avg(x0) per device", "SELECT device, avg(x0) FROM T GROUP BY device"),
                          ("SQL: x0 of one device", "SELECT time, x0 FROM T WHERE device = 'd007'")]:
            cases.append((f"{what}, attached view", lambda sql=sql: view.sql(sql).to_arrow_table(),
                          lambda sql=sql: con.sql(sql).to_arrow_table()))
            cases.append((f"{what}, whole scan registered", lambda sql=sql: whole.sql(sql).to_arrow_table(),
                          lambda sql=sql: con.sql(sql).to_arrow_table()))
        print(f"# bench_queries: {DEVICES * per:,} rows x {len(COLS)} DOUBLE over {DEVICES} devices, flushed; "
              f"duckdb {duckdb.__version__}, best of 5")
        print("| query | arcadego | DuckDB | DuckDB / arcadego |")
        print("|---|---|---|---|")
        for name, ours, theirs in cases:
            a, got = best(ours)
            b, want = best(theirs)
            assert got.num_rows == want.num_rows, (name, got.num_rows, want.num_rows)
            print(f"| {name} | {a:.1f} ms | {b:.1f} ms | {b / a:.2f}x |")
        db.close()
        con.close()


if __name__ == "__main__":
    main()
