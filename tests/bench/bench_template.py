"""Fresh database per test (`make bench`): a 100-type indexed schema.

arcadego: arcadego.testing.template(schema) builds the schema once; each
"test" clones it to a fresh directory and connects (sync "full" and
"off"). sqlite3 and DuckDB: each "test" opens a fresh file and creates the
same 100 tables (an INT64 and a STRING column) with an index each, in one
transaction. p50 and p99 over the runs, printed, never asserted.

Usage: python tests/bench/bench_template.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import tempfile
import time

TYPES = 100


def arcadego_schema() -> str:
    return "; ".join(f"CREATE DOCUMENT TYPE T{i}; CREATE PROPERTY T{i}.k INT64; CREATE PROPERTY T{i}.s STRING; "
                     f"CREATE INDEX ON T{i} (k) NOTUNIQUE" for i in range(TYPES))


def sql_schema() -> list[str]:
    out = []
    for i in range(TYPES):
        out.append(f"CREATE TABLE t{i} (device TEXT, time BIGINT, k BIGINT, s TEXT)")
        out.append(f"CREATE INDEX t{i}_k ON t{i} (k)")
    return out


def percentiles(times: list[float]) -> str:
    times = sorted(times)
    return f"p50 {times[len(times) // 2] * 1e3:.2f} ms, p99 {times[min(len(times) - 1, len(times) * 99 // 100)] * 1e3:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    import arcadego
    import arcadego.testing

    base = tempfile.mkdtemp(prefix="bench-template-")
    print(f"# bench_template: a fresh database with {TYPES} indexed types, {args.runs} runs each")
    print("| engine | how | fresh database |")
    print("|---|---|---|")
    try:
        for sync in ("full", "off"):
            tpl = arcadego.testing.template(arcadego_schema(), sync=sync)
            tpl(os.path.join(base, f"warm-{sync}")).close()
            times = []
            for i in range(args.runs):
                path = os.path.join(base, f"a-{sync}-{i}")
                t0 = time.perf_counter()
                db = tpl(path)
                times.append(time.perf_counter() - t0)
                db.close()
                shutil.rmtree(path)
            tpl.close()
            print(f"| arcadego | template clone + connect, sync={sync} | {percentiles(times)} |")
        schema = sql_schema()
        times = []
        for i in range(args.runs):
            path = os.path.join(base, f"s{i}.sqlite")
            t0 = time.perf_counter()
            con = sqlite3.connect(path, isolation_level=None)
            con.execute("BEGIN")
            for stmt in schema:
                con.execute(stmt)
            con.execute("COMMIT")
            times.append(time.perf_counter() - t0)
            con.close()
            os.remove(path)
        print(f"| sqlite3 {sqlite3.sqlite_version} | connect + 200 DDL in one transaction | {percentiles(times)} |")
        try:
            import duckdb
        except ImportError:
            print("| DuckDB | not installed | |")
            return
        times = []
        for i in range(max(10, args.runs // 10)):
            path = os.path.join(base, f"d{i}.duckdb")
            t0 = time.perf_counter()
            con = duckdb.connect(path)
            con.execute("BEGIN TRANSACTION")
            for stmt in schema:
                con.execute(stmt)
            con.execute("COMMIT")
            times.append(time.perf_counter() - t0)
            con.close()
            os.remove(path)
        print(f"| DuckDB {duckdb.__version__} | connect + 200 DDL in one transaction | {percentiles(times)} |")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
