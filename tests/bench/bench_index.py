"""Indexes (`make bench`): point lookups, insert overhead and CREATE INDEX
backfill, side by side with SQLite (B-tree index) and DuckDB (ART index)
on the same rows, in the same run. Figures are printed, never asserted.

N rows (default 10 M) over 1,000 devices: time, k INT64 (a permutation of
0..N-1, so unique), v DOUBLE, written as long-format batches of 1 M rows.

 1. insert rows/s into a type with 0, 1 (UNIQUE k) and 3 indexes (k, v,
    (k, v)): arcadego with sync="normal"; SQLite in one transaction with
    the index declared first (WAL, synchronous=NORMAL); DuckDB with ART
    indexes declared first;
 2. CREATE INDEX over the N rows, flushed (arcadego), committed (SQLite,
    DuckDB);
 3. point lookups of 200 random keys, p50 / p99: arcadego from files
    (the N rows, flushed) and from the memtable (keys of 100,000 rows
    written after them, unflushed); SQLite and DuckDB `SELECT * WHERE
    k = ?` over the N rows.

Usage: python tests/bench/bench_index.py [--rows N]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import tempfile
import time

import numpy as np
import pyarrow as pa

import arcadego

BATCH = 1_000_000
DEVICES = 1000


def batches(rows: int):
    rng = np.random.default_rng(1)
    keys = rng.permutation(rows).astype(np.int64)
    names = pa.array([f"dev-{d:04d}" for d in range(DEVICES)])
    for lo in range(0, rows, BATCH):
        n = min(BATCH, rows - lo)
        idx = np.arange(lo, lo + n)
        yield pa.table({"device": names.take(pa.array(idx % DEVICES)), "time": (idx // DEVICES).astype(np.int64),
                        "k": keys[lo:lo + n], "v": rng.random(n)})


def pct(times: list[float]) -> str:
    times = sorted(times)
    return f"{times[len(times) // 2] * 1e6:.0f} / {times[int(len(times) * 0.99)] * 1e6:.0f} µs"


def lookups(fn, rows: int) -> str:
    rng = random.Random(7)
    out = []
    for _ in range(200):
        k = rng.randrange(rows)
        t0 = time.perf_counter()
        got = fn(k)
        out.append(time.perf_counter() - t0)
        assert got == 1, (k, got)
    return pct(out)


def arcadego_run(base: str, rows: int) -> dict[str, str]:
    res: dict[str, str] = {}
    for nidx, ddl in ((0, []), (1, ["CREATE INDEX ON A (k) UNIQUE"]),
                      (3, ["CREATE INDEX ON A (k) UNIQUE", "CREATE INDEX ON A (v) NOTUNIQUE", "CREATE INDEX ON A (k, v) NOTUNIQUE"])):
        path = os.path.join(base, f"a{nidx}")
        db = arcadego.connect(path, sync="normal")
        db.execute("; ".join(["CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE PROPERTY A.v DOUBLE"] + ddl))
        t0 = time.perf_counter()
        for tbl in batches(rows):
            db.insert("A", tbl, device_column="device")
        db.flush()
        res[f"insert, {nidx} indexes"] = f"{rows / (time.perf_counter() - t0) / 1e6:.2f} M rows/s"
        if nidx == 1:
            res["lookup, files"] = lookups(lambda k: db.lookup("A", k=k).to_arrow().num_rows, rows)
            res["explain"] = db.explain("A", where=("k", "=", 5))
            # From the memtable: 100,000 more rows (keys rows.. rows+99,999)
            # in batches small enough not to go straight to Parquet.
            extra = pa.table({"device": pa.array([f"dev-{d % DEVICES:04d}" for d in range(100_000)]),
                              "time": np.arange(100_000, dtype=np.int64) // DEVICES + rows,
                              "k": np.arange(rows, rows + 100_000, dtype=np.int64), "v": np.zeros(100_000)})
            for part in range(0, extra.num_rows, 10_000):
                db.insert("A", extra.slice(part, 10_000), device_column="device")
            plan = db.explain("A", where=("k", "=", rows))
            assert "1 candidate rows" in plan and "1 memtables" in plan, plan
            rng = random.Random(8)
            times = []
            for _ in range(200):
                k = rows + rng.randrange(100_000)
                t0 = time.perf_counter()
                got = db.lookup("A", k=k).to_arrow().num_rows
                times.append(time.perf_counter() - t0)
                assert got == 1, (k, got)
            res["lookup, memtable"] = pct(times)
        if nidx == 0:
            t0 = time.perf_counter()
            db.execute("CREATE INDEX ON A (k) UNIQUE")
            res["CREATE INDEX (backfill)"] = f"{time.perf_counter() - t0:.2f} s"
        db.close()
    return res


def sqlite_run(base: str, rows: int) -> dict[str, str]:
    res: dict[str, str] = {}
    for nidx, ddl in ((0, []), (1, ["CREATE UNIQUE INDEX ik ON a (k)"]),
                      (3, ["CREATE UNIQUE INDEX ik ON a (k)", "CREATE INDEX iv ON a (v)", "CREATE INDEX ikv ON a (k, v)"])):
        con = sqlite3.connect(os.path.join(base, f"s{nidx}.db"))
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        con.execute("CREATE TABLE a (device TEXT, time INTEGER, k INTEGER, v REAL)")
        for d in ddl:
            con.execute(d)
        t0 = time.perf_counter()
        for tbl in batches(rows):
            con.executemany("INSERT INTO a VALUES (?, ?, ?, ?)",
                            zip(tbl["device"].to_pylist(), tbl["time"].to_pylist(), tbl["k"].to_pylist(), tbl["v"].to_pylist()))
            con.commit()
        res[f"insert, {nidx} indexes"] = f"{rows / (time.perf_counter() - t0) / 1e6:.2f} M rows/s"
        if nidx == 1:
            res["lookup, files"] = lookups(lambda k: len(con.execute("SELECT * FROM a WHERE k = ?", (k,)).fetchall()), rows)
        if nidx == 0:
            t0 = time.perf_counter()
            con.execute("CREATE UNIQUE INDEX ik ON a (k)")
            con.commit()
            res["CREATE INDEX (backfill)"] = f"{time.perf_counter() - t0:.2f} s"
        con.close()
    return res


def duckdb_run(base: str, rows: int) -> dict[str, str]:
    import duckdb
    res: dict[str, str] = {}
    for nidx, ddl in ((0, []), (1, ["CREATE UNIQUE INDEX ik ON a (k)"]),
                      (3, ["CREATE UNIQUE INDEX ik ON a (k)", "CREATE INDEX iv ON a (v)", "CREATE INDEX ikv ON a (k, v)"])):
        con = duckdb.connect(os.path.join(base, f"d{nidx}.duckdb"))
        con.execute("CREATE TABLE a (device VARCHAR, time BIGINT, k BIGINT, v DOUBLE)")
        for d in ddl:
            con.execute(d)
        t0 = time.perf_counter()
        for tbl in batches(rows):
            con.register("b", tbl)
            con.execute("INSERT INTO a SELECT * FROM b")
            con.unregister("b")
        con.execute("CHECKPOINT")
        res[f"insert, {nidx} indexes"] = f"{rows / (time.perf_counter() - t0) / 1e6:.2f} M rows/s"
        if nidx == 1:
            res["lookup, files"] = lookups(lambda k: len(con.execute("SELECT * FROM a WHERE k = ?", [k]).fetchall()), rows)
        if nidx == 0:
            t0 = time.perf_counter()
            con.execute("CREATE UNIQUE INDEX ik ON a (k)")
            con.execute("CHECKPOINT")
            res["CREATE INDEX (backfill)"] = f"{time.perf_counter() - t0:.2f} s"
        con.close()
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    args = ap.parse_args()
    base = tempfile.mkdtemp(prefix="bench-index-")
    try:
        a = arcadego_run(base, args.rows)
        s = sqlite_run(base, args.rows)
        d = duckdb_run(base, args.rows)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"# bench_index: {args.rows:,} rows over {DEVICES} devices (time, k INT64 unique, v DOUBLE)")
    print("| figure | arcadego | SQLite | DuckDB |")
    print("|---|---|---|---|")
    for key in ("insert, 0 indexes", "insert, 1 indexes", "insert, 3 indexes", "CREATE INDEX (backfill)",
                "lookup, memtable", "lookup, files"):
        print(f"| {key} | {a.get(key, '')} | {s.get(key, '')} | {d.get(key, '')} |")
    print(f"\narcadego plan: {a['explain']}")


if __name__ == "__main__":
    main()
