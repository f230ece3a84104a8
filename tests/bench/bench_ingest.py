"""Python ingest benchmark (`make bench`): arcadego vs DuckDB vs sqlite3.

Inserts a 1M-row x 10-column table (time + 3 INT64 + 6 DOUBLE) into
  - arcadego, as a pyarrow Table, as a pandas DataFrame, and as a dict of
    numpy arrays (the path without pyarrow);
  - DuckDB (`INSERT INTO t SELECT * FROM arrow_table`, and from the DataFrame);
  - sqlite3 (`executemany`, one transaction);
each into a fresh on-disk database with durable commits (arcadego
sync="full"), and measures the per-call overhead with tiny inserts and
the ingest of many devices written one at a time (D devices x 10 rows x 5
DOUBLE, a pyarrow Table per device, transactions of 1,000 of them,
sync="normal"). Figures are printed, never asserted. Usage:

    python tests/bench/bench_ingest.py [--rows N] [--repeat R] [--devices D]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import threading
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa

import arcadego

try:
    import duckdb
except ImportError:  # pragma: no cover - the bench venv installs it
    duckdb = None
try:
    import pandas as pd
except ImportError:  # pragma: no cover
    pd = None

INT_COLS = ["i1", "i2", "i3"]
FLOAT_COLS = ["f1", "f2", "f3", "f4", "f5", "f6"]


def make_table(rows: int) -> pa.Table:
    rng = np.random.default_rng(42)
    cols: dict[str, np.ndarray] = {"time": np.arange(rows, dtype=np.int64)}
    for c in INT_COLS:
        cols[c] = rng.integers(0, 1_000_000, rows, dtype=np.int64)
    for c in FLOAT_COLS:
        cols[c] = rng.random(rows)
    return pa.table(cols)


def best_of(repeat: int, setup: Callable[[int], object], run: Callable[[object], None]) -> list[float]:
    """Times of `run(setup(i))` for i in range(repeat), after one untimed
    warm-up run (heap growth, page faults); setup is not timed."""
    run(setup(-1))
    times = []
    for i in range(repeat):
        state = setup(i)
        t0 = time.perf_counter()
        run(state)
        times.append(time.perf_counter() - t0)
    return times


def bench_arcadego(tmp: str, table: pa.Table, repeat: int) -> list[tuple[str, str, list[float]]]:
    out = []
    db = arcadego.connect(os.path.join(tmp, "arcadego"), sync="full")
    with db.transaction() as tx:
        tx.create_type("T")
        for c in INT_COLS:
            tx.create_property("T", c, "INT64")
        for c in FLOAT_COLS:
            tx.create_property("T", c, "DOUBLE")
    n = [0]

    def device(_: int) -> str:  # a fresh device per run: no merging with earlier rows
        n[0] += 1
        return f"d{n[0]}"

    out.append(("arcadego", "pyarrow Table",
                best_of(repeat, device, lambda d: db.insert("T", table, device=d))))
    if pd is not None:
        frame = table.to_pandas()
        out.append(("arcadego", "pandas DataFrame",
                    best_of(repeat, device, lambda d: db.insert("T", frame, device=d))))
    arrays = {name: table[name].to_numpy() for name in table.column_names}
    out.append(("arcadego", "dict of numpy arrays",
                best_of(repeat, device, lambda d: db.insert("T", arrays, device=d))))
    db.close()
    return out


def bench_duckdb(tmp: str, table: pa.Table, repeat: int) -> list[tuple[str, str, list[float]]]:
    if duckdb is None:
        return []
    con = duckdb.connect(os.path.join(tmp, "duck.db"))
    cols = ", ".join(["time BIGINT"] + [f"{c} BIGINT" for c in INT_COLS] + [f"{c} DOUBLE" for c in FLOAT_COLS])
    con.execute(f"CREATE TABLE t ({cols})")
    con.register("arrow_table", table)
    out = [("duckdb", "pyarrow Table",
            best_of(repeat, lambda i: None, lambda _: con.execute("INSERT INTO t SELECT * FROM arrow_table")))]
    if pd is not None:
        con.register("frame", table.to_pandas())
        out.append(("duckdb", "pandas DataFrame",
                    best_of(repeat, lambda i: None, lambda _: con.execute("INSERT INTO t SELECT * FROM frame"))))
    con.close()
    return out


def bench_sqlite(tmp: str, table: pa.Table, repeat: int) -> list[tuple[str, str, list[float]]]:
    con = sqlite3.connect(os.path.join(tmp, "lite.db"))
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")
    cols = ", ".join(["time INTEGER"] + [f"{c} INTEGER" for c in INT_COLS] + [f"{c} REAL" for c in FLOAT_COLS])
    con.execute(f"CREATE TABLE t ({cols})")
    marks = ", ".join("?" * table.num_columns)
    t0 = time.perf_counter()
    rows = list(zip(*(table[c].to_numpy().tolist() for c in table.column_names)))
    to_rows = time.perf_counter() - t0

    def run(_: object) -> None:
        with con:
            con.executemany(f"INSERT INTO t VALUES ({marks})", rows)

    out = [("sqlite3", "executemany (list of tuples)", best_of(repeat, lambda i: None, run))]
    out.append(("sqlite3", "  + building the tuples", [to_rows + min(out[0][2])]))
    con.close()
    return out


def per_call_overhead(calls: int) -> list[tuple[str, float]]:
    """µs per tiny insert (1 row, 2 columns) on an in-memory database."""
    db = arcadego.connect(None, sync="off")
    db.execute("CREATE DOCUMENT TYPE S; CREATE PROPERTY S.k INT64")
    batch = pa.record_batch({"time": pa.array([1], pa.int64()), "k": pa.array([1], pa.int64())})
    small = {"time": np.array([1], dtype=np.int64), "k": np.array([1], dtype=np.int64)}
    results = []

    def timed(fn: Callable[[], None]) -> float:
        for _ in range(50):
            fn()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return (time.perf_counter() - t0) / calls * 1e6

    results.append(("ctypes call of arcadego_version() (floor)", timed(arcadego.library_version)))
    results.append(("insert pyarrow RecordBatch, main thread", timed(lambda: db.insert("S", batch))))
    table = pa.Table.from_batches([batch])
    results.append(("insert pyarrow Table (a stream), main thread", timed(lambda: db.insert("S", table))))
    results.append(("insert dict of numpy arrays, main thread", timed(lambda: db.insert("S", small))))
    box: list[float] = []
    th = threading.Thread(target=lambda: box.append(timed(lambda: db.insert("S", batch))))
    th.start()
    th.join()
    results.append(("insert pyarrow RecordBatch, other thread (no Ctrl-C handoff)", box[0]))
    db.close()
    return results


def per_device_ingest(devices: int) -> tuple[float, float]:
    """M rows/s and seconds of writing devices devices of 10 rows x 5
    DOUBLE, one pyarrow Table each, 1,000 per transaction, on disk with
    sync="normal"."""
    rng = np.random.default_rng(3)
    times = np.arange(10, dtype=np.int64)
    tables = [pa.table({"time": times, **{f"f{c}": rng.random(10) for c in range(5)}}) for _ in range(64)]
    with tempfile.TemporaryDirectory(prefix="arcadego-bench-") as tmp:
        db = arcadego.connect(os.path.join(tmp, "db"), sync="normal")
        with db.transaction() as tx:
            tx.create_type("M")
            for c in range(5):
                tx.create_property("M", f"f{c}", "DOUBLE")
        t0 = time.perf_counter()
        for lo in range(0, devices, 1000):
            with db.transaction() as tx:
                for d in range(lo, min(devices, lo + 1000)):
                    tx.insert("M", tables[d % len(tables)], device=f"plant-{d % 100:02d}/dev-{d:07d}")
        spent = time.perf_counter() - t0
        db.close()
    return devices * 10 / spent / 1e6, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--devices", type=int, default=100_000)
    args = parser.parse_args()
    table = make_table(args.rows)
    print(f"ingest of {args.rows:,} rows x {table.num_columns} columns "
          f"({table.nbytes / 2**20:.0f} MiB), best of {args.repeat}, durable commits, "
          f"arcadego {arcadego.__version__}, duckdb {getattr(duckdb, '__version__', '-')}, "
          f"sqlite {sqlite3.sqlite_version}, pyarrow {pa.__version__}")
    results = []
    with tempfile.TemporaryDirectory(prefix="arcadego-bench-") as tmp:
        results += bench_arcadego(tmp, table, args.repeat)
        results += bench_duckdb(tmp, table, args.repeat)
        results += bench_sqlite(tmp, table, args.repeat)
    print(f"\n{'engine':<10} {'input':<32} {'best s':>8} {'median s':>9} {'M rows/s':>9}")
    for engine, what, times in results:
        best = min(times)
        print(f"{engine:<10} {what:<32} {best:8.3f} {statistics.median(times):9.3f} "
              f"{args.rows / best / 1e6:9.2f}")
    print(f"\nper-call overhead ({args.calls:,} tiny inserts of 1 row x 2 columns, in memory, sync=off)")
    for what, us in per_call_overhead(args.calls):
        print(f"  {what:<64} {us:8.1f} µs")
    rate, spent = per_device_ingest(args.devices)
    print(f"\ndevice by device: {args.devices:,} devices x 10 rows x 5 DOUBLE, a pyarrow Table each, "
          f"1,000 per transaction, sync=normal: {rate:.3f} M rows/s ({spent:.2f} s)")


if __name__ == "__main__":
    main()
