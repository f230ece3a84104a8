"""arcadego demo (`make demo`): why schema setup belongs in one transaction,
and what a 10,000-column write costs.

On a fresh temporary directory it
  1. creates 100 indexed types statement by statement (300 autocommit
     statements, each a durable commit) and then 100 more in ONE transaction,
     printing both times;
  2. inserts a pandas DataFrame (with NaN/None) and queries it back;
  3. inserts a 10,000-column batch (auto_create adds the properties in the
     same commit) into a chunk that already has rows;
  4. prints a query result as a DataFrame and the timings.
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings

import numpy as np

import arcadego

try:
    import pandas as pd
except ImportError:  # the demo venv has pandas; keep the demo runnable without
    pd = None


def ms(seconds: float) -> str:
    return f"{seconds * 1000:9.2f} ms"


def main() -> None:
    timings: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="arcadego-demo-") as tmp:
        path = os.path.join(tmp, "db")
        print(f"arcadego {arcadego.__version__}, database in {path} (sync=full: every commit is fsynced)\n")
        with arcadego.connect(path, sync="full", auto_create=True) as db:
            # 1a. Statement by statement: 300 commits, 300 fsyncs.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", arcadego.PerformanceWarning)
                t0 = time.perf_counter()
                for i in range(100):
                    db.create_type(f"Auto{i}")
                    db.create_property(f"Auto{i}", "k", "INT64")
                    db.create_index(f"Auto{i}", ["k"])
                autocommit = time.perf_counter() - t0
            timings.append(("100 indexed types, autocommit (300 commits)", autocommit))
            print(f"100 types + property + index, statement by statement: {ms(autocommit)}")
            for w in caught:
                print(f"  {w.category.__name__}: {w.message}")

            # 1b. The recommended way: one transaction, one log write, one fsync.
            t0 = time.perf_counter()
            with db.transaction() as tx:
                for i in range(100):
                    tx.create_type(f"Tx{i}")
                    tx.create_property(f"Tx{i}", "k", "INT64")
                    tx.create_index(f"Tx{i}", ["k"])
            batched = time.perf_counter() - t0
            timings.append(("100 indexed types, one transaction", batched))
            print(f"100 types + property + index, one transaction:       {ms(batched)}"
                  f"  ({autocommit / batched:.0f}x faster)")
            print(f"types now: {len(db.types())}, files in the database directory: "
                  f"{sum(len(f) for _, _, f in os.walk(path))}\n")

            # 2. A pandas DataFrame in, with missing values.
            n = 10_000
            t = np.arange(n, dtype=np.int64) * 1_000_000_000  # one reading per second
            if pd is not None:
                frame = pd.DataFrame({
                    "time": t,
                    "temperature": np.where(np.arange(n) % 97 == 0, np.nan, 20 + np.sin(np.arange(n) / 500)),
                    "status": np.where(np.arange(n) % 50 == 0, None, "ok"),
                })
            else:
                frame = {"time": t, "temperature": 20 + np.sin(np.arange(n) / 500)}
            with db.transaction() as tx:
                tx.create_type("Reading")
                tx.create_property("Reading", "temperature", "DOUBLE")
                tx.create_property("Reading", "status", "STRING")
            t0 = time.perf_counter()
            db.insert("Reading", frame, device="sensor-1")
            took = time.perf_counter() - t0
            timings.append((f"insert a {n:,}-row DataFrame", took))
            print(f"inserted a {n:,}-row DataFrame in {ms(took)}")

            # 3. 10,000 new columns into a chunk that already has rows.
            db.insert("Wide", {"time": np.arange(1000, dtype=np.int64), "c0": np.arange(1000.0)}, device="w")
            width = 10_000
            wide = {"time": np.array([1000], dtype=np.int64)}
            wide.update({f"c{j}": np.array([float(j)]) for j in range(1, width + 1)})
            try:
                import pyarrow as pa

                batch = pa.RecordBatch.from_pydict(wide)
                kind = "pyarrow batch"
            except ImportError:
                batch, kind = wide, "dict of numpy arrays"
            t0 = time.perf_counter()
            db.insert("Wide", batch, device="w")
            took = time.perf_counter() - t0
            timings.append((f"insert 1 row x {width:,} new columns ({kind}, auto_create)", took))
            props = len(db.describe("Wide")["properties"])
            print(f"inserted one row with {width:,} new columns ({kind}) into a 1,000-row chunk in "
                  f"{ms(took)}; type Wide now has {props:,} properties")
            t0 = time.perf_counter()
            db.insert("Wide", {"time": np.array([1001]), "c5000": np.array([1.5])}, device="w")
            timings.append(("next 1-column write to that chunk", time.perf_counter() - t0))

            # 4. Query results.
            res = db.scan("Reading", columns=["temperature", "status"], device="sensor-1",
                          start=0, end=10 * 1_000_000_000)
            print("\nscan('Reading', device='sensor-1', first 10 s):")
            print(res.to_pandas() if pd is not None else res.to_pylist())
            last = db.scan("Wide", columns=["c1", "c5000", f"c{width}"], device="w", start=999).to_pandas() \
                if pd is not None else db.scan("Wide", columns=["c1", "c5000"], start=999).to_pylist()
            print("\nscan('Wide', columns=['c1', 'c5000', 'c10000'], start=999):")
            print(last)

            # 5. Flush to Parquet: each type is a Delta Lake table that other
            #    engines read in place.
            t0 = time.perf_counter()
            db.flush()
            timings.append(("flush everything to Parquet + Delta, checkpoint", time.perf_counter() - t0))
            stats = db.stats()
            print(f"\nafter flush(): {stats['flushes']} flush, {stats['checkpoints']} checkpoint, "
                  f"log {stats['wal_bytes']:,} bytes")
            for t in stats["types"]:
                print(f"  {t['name']:<8} {t['rows']:>7,} rows in {t['files']} file(s), "
                      f"{t['bytes']:>10,} bytes  {os.path.relpath(t['path'], path)}/")
            reading = next(t["path"] for t in stats["types"] if t["name"] == "Reading")
            try:
                import polars

                print("\npolars.read_delta() of the Reading table:")
                print(polars.read_delta(reading).head(3))
            except ImportError:
                print(f"\n(read {reading} with polars.read_delta, deltalake, DuckDB or Spark)")

        print("\ntimings")
        for what, seconds in timings:
            print(f"  {what:<62} {ms(seconds)}")


if __name__ == "__main__":
    main()
