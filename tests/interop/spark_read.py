"""Apache Spark (delta-spark) reads arcadego's flushed types in place.

Run by ``make interop`` (build/interop.sh), which installs Java, pyspark and
the Delta jars first; by hand::

    .venv-interop/bin/python tests/interop/spark_read.py --jars a.jar,b.jar

It builds databases with arcadego (every property type with nulls, repeated
and out-of-order keys and a second flush over flushed keys, timestamp and
int64 time columns, a 10,000-column DOUBLE type, a property dropped and
re-created under its name), flushes them, and reads each type's Delta table
with ``spark.read.format("delta").load(path)``: the rows must be exactly
those of ``db.scan``, whole and under filters on device and time (Spark
skips files by the log's min/max statistics, so wrong statistics show as
missing rows). The type mapping is the one tests/python/test_delta_interop.py
documents: time columns in "ms"/"us" are Delta timestamps (UTC), int64
times, "s"/"ns" times and TIMESTAMP properties are longs, DATE is date.

Prints one PASS/FAIL line per check and "spark interop: N passed, M failed";
exits 1 when anything failed.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

import arcadego

PROPERTIES: list[tuple[str, str, pa.DataType]] = [
    ("b", "BOOLEAN", pa.bool_()),
    ("i", "INT32", pa.int32()),
    ("l", "INT64", pa.int64()),
    ("f", "FLOAT", pa.float32()),
    ("d", "DOUBLE", pa.float64()),
    ("s", "STRING", pa.string()),
    ("bin", "BINARY", pa.binary()),
    ("ts", "TIMESTAMP", pa.timestamp("ns")),
    ("dt", "DATE", pa.date32()),
]
TIMES: dict[str, tuple[pa.DataType, int, int]] = {  # time type, base, step
    "int64": (pa.int64(), -20, 7),
    "ms_utc": (pa.timestamp("ms", tz="UTC"), 1_700_000_000_000, 1_000),
    "ns": (pa.timestamp("ns"), 1_700_000_000_000_000_000, 1_000_000_000),
}
WIDE_COLUMNS = 10_000

# A Spark filter: (label, DataFrame -> DataFrame, db.scan keyword arguments).
Filter = tuple[str, Callable[[Any], Any], dict[str, Any]]


@dataclass
class Table:
    name: str  # what the summary calls it
    path: str  # the Delta table's directory
    scan: pa.Table  # db.scan of the type
    filters: list[tuple[str, Callable[[Any], Any], pa.Table]] = field(default_factory=list)
    forbidden: dict[str, list[Any]] = field(default_factory=dict)  # column -> values that must not appear


# ---------------------------------------------------------------------------
# databases


def value(rng: random.Random, typ: pa.DataType) -> Any:
    if pa.types.is_boolean(typ):
        return rng.random() < 0.5
    if pa.types.is_int32(typ):
        return rng.randint(-(1 << 31), (1 << 31) - 1)
    if pa.types.is_int64(typ) or pa.types.is_timestamp(typ):
        return rng.randint(-(1 << 61), 1 << 61)
    if pa.types.is_float32(typ):
        return rng.randint(-4000, 4000) / 8
    if pa.types.is_float64(typ):
        return rng.uniform(-1e12, 1e12)
    if pa.types.is_string(typ):
        return rng.choice(["", "a", "héllo", "naïve ☃"]) + str(rng.randint(0, 99))
    if pa.types.is_binary(typ):
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 5)))
    if pa.types.is_date32(typ):
        return rng.randint(-1000, 30000)
    raise AssertionError(typ)


def rows(rng: random.Random, rep: str, ticks: list[int], props: list[tuple[str, pa.DataType]],
         null_rate: float) -> pa.Table:
    time_type, base, step = TIMES[rep]
    cols: dict[str, pa.Array] = {"time": pa.array([base + t * step for t in ticks], pa.int64()).cast(time_type)}
    for name, typ in props:
        vals = [None if rng.random() < null_rate else value(rng, typ) for _ in ticks]
        cols[name] = pa.array(vals, pa.int64()).cast(typ) if pa.types.is_timestamp(typ) else pa.array(vals, typ)
    return pa.table(cols)


def time_filters(spark_f: Any, rep: str, lo_tick: int, hi_tick: int) -> list[Filter]:
    time_type, base, step = TIMES[rep]
    lo, hi = base + lo_tick * step, base + hi_tick * step
    col = spark_f.col("time")
    if pa.types.is_timestamp(time_type) and time_type.unit in ("ms", "us"):  # a Delta timestamp
        scale = 1000 if time_type.unit == "ms" else 1
        lo_l, hi_l = spark_f.timestamp_micros(spark_f.lit(lo * scale)), spark_f.timestamp_micros(spark_f.lit(hi * scale))
    else:
        lo_l, hi_l = spark_f.lit(lo), spark_f.lit(hi)
    return [
        (f"time in [{lo_tick}, {hi_tick})", lambda df: df.filter((col >= lo_l) & (col < hi_l)),
         {"start": lo, "end": hi}),
        (f"device d2, time in [{lo_tick}, {hi_tick})",
         lambda df: df.filter((spark_f.col("device") == "d2") & (col >= lo_l) & (col < hi_l)),
         {"device": "d2", "start": lo, "end": hi}),
    ]


def device_filters(spark_f: Any, devices: list[str]) -> list[Filter]:
    return [(f"device {d}", lambda df, d=d: df.filter(spark_f.col("device") == d), {"device": d}) for d in devices]


def expected(db: arcadego.Database, name: str, filters: list[Filter]) -> list[tuple[str, Callable[[Any], Any], pa.Table]]:
    return [(label, fn, db.scan(name, **kw).to_arrow()) for label, fn, kw in filters]


def table_path(db: arcadego.Database, name: str) -> str:
    paths = [t["path"] for t in db.stats()["types"] if t["name"] == name]
    if len(paths) != 1 or not Path(paths[0], "_delta_log").is_dir():
        raise RuntimeError(f"type {name}: no Delta table in stats()['types'] after flush(): {db.stats()['types']}")
    return str(paths[0])


def build_every_type(root: Path, spark_f: Any) -> list[Table]:
    """Every property type with nulls, per time representation; out-of-order
    and repeated keys; a second flush overwriting flushed keys."""
    props = [(n, t) for n, _, t in PROPERTIES]
    out = []
    with arcadego.connect(root / "every_type") as db:
        with db.transaction() as tx:
            for rep in TIMES:
                tx.create_type(f"T_{rep}")
                for name, ddl, _ in PROPERTIES:
                    tx.create_property(f"T_{rep}", name, ddl)
                tx.create_property(f"T_{rep}", "never", "DOUBLE")  # all null: no min/max
        rng = random.Random(1)
        for rep in TIMES:
            for dev in ("d1", "d2", "d3"):
                ticks = list(range(40))
                rng.shuffle(ticks)
                db.insert(f"T_{rep}", rows(rng, rep, ticks + [3, 17, 17], props, 0.25), device=dev)
                db.insert(f"T_{rep}", rows(rng, rep, [5, 1, 39], props, 0.6), device=dev)
        db.flush()
        for rep in TIMES:
            for dev in ("d1", "d2", "d3", "é-4"):
                db.insert(f"T_{rep}", rows(rng, rep, [0, 2, 39, 11, -3, 41, 60, 25, 25], props, 0.5), device=dev)
        db.flush()
        for rep in TIMES:
            name = f"T_{rep}"
            filters = device_filters(spark_f, ["d1", "d2", "é-4", "none"]) + time_filters(spark_f, rep, 10, 20)
            out.append(Table(f"every type, time {rep}", table_path(db, name), db.scan(name).to_arrow(),
                             expected(db, name, filters)))
    return out


def build_wide(root: Path, spark_f: Any) -> list[Table]:
    """WIDE_COLUMNS DOUBLE properties, a few rows."""
    names = [f"c{i:05d}" for i in range(WIDE_COLUMNS)]
    with arcadego.connect(root / "wide") as db:
        db.execute("CREATE DOCUMENT TYPE W;" + ";".join(f"CREATE PROPERTY W.{n} DOUBLE" for n in names))
        rng = random.Random(2)
        for dev in ("d1", "d2", "d3"):
            db.insert("W", rows(rng, "int64", [2, 1], [(n, pa.float64()) for n in names], 0.3), device=dev)
        db.flush()
        filters = device_filters(spark_f, ["d2"]) + time_filters(spark_f, "int64", 2, 3)[1:]  # each read ~15 s
        return [Table(f"{WIDE_COLUMNS} DOUBLE columns", table_path(db, "W"), db.scan("W").to_arrow(),
                      expected(db, "W", filters))]


def build_dropped(root: Path, spark_f: Any) -> list[Table]:
    """DROP PROPERTY T.x; CREATE PROPERTY T.x INT64 between two flushes: the
    old values of x must not come back."""
    with arcadego.connect(root / "dropped") as db:
        db.execute("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.x INT64; CREATE PROPERTY T.y STRING")
        db.insert("T", pa.table({"time": pa.array([1, 2, 3], pa.int64()), "x": pa.array([10, 20, 30], pa.int64()),
                                 "y": ["a", "b", "c"]}), device="d1")
        db.flush()
        db.execute("DROP PROPERTY T.x; CREATE PROPERTY T.x INT64")
        db.insert("T", pa.table({"time": pa.array([4], pa.int64()), "x": pa.array([7], pa.int64()),
                                 "y": ["d"]}), device="d1")
        db.insert("T", pa.table({"time": pa.array([2], pa.int64()), "y": ["bb"]}), device="d1")
        db.flush()
        scan = db.scan("T").to_arrow()
        assert [v for v in scan["x"].to_pylist() if v is not None] == [7], scan
        return [Table("dropped and re-created property", table_path(db, "T"), scan,
                      expected(db, "T", device_filters(spark_f, ["d1"])), forbidden={"x": [10, 20, 30]})]


def build_lifecycle(root: Path, spark_f: Any) -> list[Table]:
    """Deletes (a device, a time range), then a flush and a compaction:
    the table holds the live rows in one file, none of the deleted ones."""
    with arcadego.connect(root / "lifecycle") as db:
        db.execute("CREATE DOCUMENT TYPE L; CREATE PROPERTY L.k INT64")
        for flush in range(3):
            for dev in ("d1", "d2", "d3"):
                times = list(range(flush * 100, flush * 100 + 100))
                db.insert("L", pa.table({"time": pa.array(times, pa.int64()),
                                         "k": pa.array([t + 1000 * int(dev[1]) for t in times], pa.int64())}),
                          device=dev)
            db.flush()
        db.delete("L", device="d2")
        db.delete("L", device="d1", start=50, end=250)
        db.flush()
        db.compact("L")
        scan = db.scan("L").to_arrow()
        assert scan.num_rows == 300 + 100, scan.num_rows
        gone = [2000 + t for t in range(300)] + [1000 + t for t in range(50, 250)]  # k is unique per device
        return [Table("deleted rows and a compaction", table_path(db, "L"), scan,
                      expected(db, "L", device_filters(spark_f, ["d1", "d2"]) + time_filters(spark_f, "int64", 40, 60)),
                      forbidden={"k": gone})]


# ---------------------------------------------------------------------------
# comparing


def delta_time_is_timestamp(t: pa.DataType) -> bool:
    return pa.types.is_timestamp(t) and t.unit in ("ms", "us")


def as_delta(scan: pa.Table) -> pa.Table:
    """db.scan's rows as a Delta reader returns them: longs stay raw int64."""
    cols = {}
    for f, col in zip(scan.schema, scan.columns):
        if pa.types.is_timestamp(f.type) and not (f.name == "time" and delta_time_is_timestamp(f.type)):
            col = col.cast(pa.int64())
        cols[f.name] = col
    return pa.table(cols)


def canonical(table: pa.Table) -> list[dict[str, Any]]:
    cols = {}
    for name, col in zip(table.column_names, table.columns):
        t = col.type
        if pa.types.is_dictionary(t):  # db.scan's device column
            col = col.cast(t.value_type)
            t = col.type
        if pa.types.is_timestamp(t):
            col = col.cast(pa.timestamp("us", tz=t.tz)).cast(pa.int64())
        elif pa.types.is_large_string(t) or pa.types.is_string_view(t):
            col = col.cast(pa.string())
        elif pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
            col = col.cast(pa.binary())
        elif pa.types.is_date64(t):
            col = col.cast(pa.date32())
        cols[name] = col
    return pa.table(cols).sort_by([("device", "ascending"), ("time", "ascending")]).to_pylist()


def type_ok(name: str, scan_type: pa.DataType, got: pa.DataType) -> bool:
    if pa.types.is_dictionary(scan_type):  # the device column: Delta stores its values
        return type_ok(name, scan_type.value_type, got)
    if name == "time" and delta_time_is_timestamp(scan_type):
        return pa.types.is_timestamp(got) and got.tz in ("UTC", "+00:00", "Etc/UTC")
    if pa.types.is_timestamp(scan_type):
        return pa.types.is_int64(got)
    if pa.types.is_string(scan_type):
        return pa.types.is_string(got) or pa.types.is_large_string(got) or pa.types.is_string_view(got)
    if pa.types.is_binary(scan_type):
        return pa.types.is_binary(got) or pa.types.is_large_binary(got) or pa.types.is_binary_view(got)
    return got == scan_type


def compare(got: pa.Table, scan: pa.Table) -> str | None:
    """None if got holds exactly scan's rows, else what differs."""
    if sorted(got.column_names) != sorted(scan.column_names):
        extra = sorted(set(got.column_names) - set(scan.column_names))[:5]
        missing = sorted(set(scan.column_names) - set(got.column_names))[:5]
        return f"columns differ: extra {extra}, missing {missing}"
    for f in scan.schema:
        if not type_ok(f.name, f.type, got.schema.field(f.name).type):
            return f"column {f.name} is {got.schema.field(f.name).type} (arcadego: {f.type})"
    have, want = canonical(got.select(scan.column_names)), canonical(as_delta(scan))
    if len(have) != len(want):
        return f"{len(have)} rows, db.scan has {len(want)}"
    for i, (h, w) in enumerate(zip(have, want)):
        if h != w:
            diff = {k: (h[k], w[k]) for k in w if h[k] != w[k]}
            return f"row {i} ({w['device']}, {w['time']}) differs (spark, db.scan): {dict(list(diff.items())[:5])}"
    return None


# ---------------------------------------------------------------------------
# main


def spark_session(jars: str) -> Any:
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master("local[2]").appName("arcadego-interop")
            .config("spark.ui.enabled", "false")
            .config("spark.driver.memory", "2g")
            .config("spark.jars", jars)
            .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
            .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.databricks.delta.snapshotPartitions", "2")  # 50 tasks per log replay otherwise
            .getOrCreate())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jars", required=True, help="comma-separated delta-spark and delta-storage jars")
    ap.add_argument("--keep", action="store_true", help="keep the databases (their path is printed)")
    args = ap.parse_args()

    passed, failed = 0, 0

    def report(ok: bool, what: str, detail: str, seconds: float) -> None:
        nonlocal passed, failed
        passed, failed = passed + ok, failed + (not ok)
        print(f"{'PASS' if ok else 'FAIL'} {what}: {detail} ({seconds:.1f} s)", flush=True)

    tmp = tempfile.mkdtemp(prefix="arcadego-interop-")
    root = Path(tmp)
    t0 = time.monotonic()
    spark = spark_session(args.jars)
    spark.sparkContext.setLogLevel("ERROR")
    from pyspark.sql import functions as spark_f

    print(f"spark {spark.version} session started in {time.monotonic() - t0:.1f} s", flush=True)

    tables: list[Table] = []
    for build in (build_every_type, build_wide, build_dropped, build_lifecycle):
        t = time.monotonic()
        try:
            built = build(root, spark_f)
        except Exception:
            report(False, f"build {build.__name__}", traceback.format_exc(limit=3).strip(), time.monotonic() - t)
            continue
        tables += built
        print(f"built {', '.join(b.name for b in built)} in {time.monotonic() - t:.1f} s", flush=True)

    for table in tables:
        t = time.monotonic()
        try:
            df = spark.read.format("delta").load(table.path)
            got = df.toArrow()
            problem = compare(got, table.scan)
            for column, values in table.forbidden.items():
                back = [v for v in got[column].to_pylist() if v in values]
                if back:
                    problem = (problem or "") + f" old values of {column} are back: {back}"
            report(problem is None, table.name, problem or f"{table.scan.num_rows} rows", time.monotonic() - t)
        except Exception:
            report(False, table.name, traceback.format_exc(limit=3).strip(), time.monotonic() - t)
            continue
        for label, fn, want in table.filters:
            t = time.monotonic()
            try:
                problem = compare(fn(df).toArrow(), want)
                report(problem is None, f"{table.name}, {label}", problem or f"{want.num_rows} rows",
                       time.monotonic() - t)
            except Exception:
                report(False, f"{table.name}, {label}", traceback.format_exc(limit=3).strip(), time.monotonic() - t)
        t = time.monotonic()
        try:
            n = spark.sql(f"SELECT count(*) FROM delta.`{table.path}`").collect()[0][0]
        except Exception as e:  # noqa: BLE001 - reported
            n = f"error: {e}"
        report(n == table.scan.num_rows, f"{table.name}, SQL count(*)", f"{n} (db.scan: {table.scan.num_rows})",
               time.monotonic() - t)

    spark.stop()
    if args.keep or failed:
        print(f"databases kept in {tmp}")
    else:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    print(f"spark interop: {passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
