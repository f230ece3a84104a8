"""Sum of one column over 1 M rows from Python (`make bench`).

arcadego: db.scan(type, columns=["x"]).to_arrow() then pyarrow's sum, from
the memtable and after a flush; DuckDB: SELECT sum(x) on the same rows in
a table of its own file. Best and median of 9 runs each, printed, never
asserted.

Usage: python tests/bench/bench_sum.py [--rows N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from typing import Any, Callable

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import arcadego


def timed(fn: Callable[[], Any], runs: int = 9) -> tuple[float, float, Any]:
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[0] * 1e3, times[len(times) // 2] * 1e3, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    n = args.rows
    rng = np.random.default_rng(1)
    rows_in = pa.table({"device": pa.array([f"d{i % 100}" for i in range(n)]),
                      "time": np.arange(n, dtype=np.int64), "x": rng.random(n)})
    with tempfile.TemporaryDirectory() as d:
        db = arcadego.connect(f"{d}/a", sync="off")
        db.execute("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.x DOUBLE")
        db.insert("T", rows_in, device_column="device")
        con = duckdb.connect(f"{d}/b.duckdb")
        con.register("rows_in", rows_in)
        con.execute("CREATE TABLE T AS SELECT * FROM rows_in")
        con.execute("CHECKPOINT")
        want = float(pc.sum(rows_in["x"]).as_py())
        print(f"# bench_sum: sum of one DOUBLE column over {n:,} rows of 100 devices")
        print("| engine | how | best | median |")
        print("|---|---|---|---|")
        rows = []
        for where in ("memtable", "flushed"):
            if where == "flushed":
                db.flush()
            best, med, got = timed(lambda: pc.sum(db.scan("T", columns=["x"]).to_arrow()["x"]).as_py())
            assert abs(got - want) < 1e-6 * n, (got, want)
            rows.append(f"| arcadego | scan(columns=['x']).to_arrow() + pyarrow sum, {where} | {best:.1f} ms | {med:.1f} ms |")
        best, med, got = timed(lambda: con.execute("SELECT sum(x) FROM T").fetchone()[0])
        assert abs(got - want) < 1e-6 * n, (got, want)
        rows.append(f"| DuckDB {duckdb.__version__} | SELECT sum(x) | {best:.1f} ms | {med:.1f} ms |")
        print("\n".join(rows))
        db.close()
        con.close()


if __name__ == "__main__":
    main()
