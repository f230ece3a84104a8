"""Storage benchmark (`make bench`): arcadego's flushed tier vs DuckDB files.

Figures, each engine in its own fresh subprocess per measurement (so peak
RSS is that process's VmHWM and no engine warms the other's caches):

 1. reopen: write R rows x (time INT64 + 10 DOUBLE), for 1 device and for
    100 devices (arcadego: one commit per 1M-row pyarrow table, a
    transaction of one insert per device in it, then close(); DuckDB:
    CREATE TABLE + INSERT from Arrow, same transactions, close()), then in a fresh process
    time connect(path) + a first tiny query (10 rows of one column of one
    device). Best of 3 processes.
 2. sustained ingest: 20M rows in 1M-row Arrow batches over 4 devices,
    arcadego sync="full" with background flushes (default 64 MiB memtable
    budget), DuckDB defaults; the final close() (arcadego, which
    checkpoints) or CHECKPOINT + close() (DuckDB) is counted. M rows/s,
    peak RSS, and arcadego's flushes and stalls.
 3. full scan (every column to Arrow) and a 1% time-range scan of the
    figure-1 databases, reopened (arcadego: all flushed, checked with
    stats()); arcadego also scans the same rows held in its memtable, as a
    reference for the flushed path. Best of 3 in one process.
 4. a 10,000-column DOUBLE type of a few hundred rows (flushed): one
    column scanned, first call after open (fresh process) and warm.

The OS page cache is warm for both engines (the files were just written).
The machine is shared and its timings swing: the table gives the best
run, the details below it every run. Figures are printed, never asserted.
Usage:

    python tests/bench/bench_storage.py [--quick] [--dir DIR] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

NFLOAT = 10
FLOATS = [f"f{i}" for i in range(NFLOAT)]
TYPE = "M"
WIDE = "wide"

FULL = {"reopen_rows": 5_000_000, "reopen_batch": 1_000_000, "ingest_rows": 20_000_000,
        "ingest_batch": 1_000_000, "ingest_devices": 4, "wide_cols": 10_000, "wide_rows": 300,
        "repeat": 3}
QUICK = {"reopen_rows": 400_000, "reopen_batch": 100_000, "ingest_rows": 2_000_000,
         "ingest_batch": 250_000, "ingest_devices": 4, "wide_cols": 2_000, "wide_rows": 100,
         "repeat": 3}


# --------------------------------------------------------------------------
# helpers used in the children


def vm_hwm() -> int:
    """Peak resident set size of this process, bytes (VmHWM)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def dir_bytes(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            total += os.path.getsize(os.path.join(root, name))
    return total


def segments(rows: int, batch: int, devices: int):
    """The writes of figure 1, in order: for each batch of `batch` rows (of
    the rows sorted by device, then time), a list of (device, first time,
    row offset in the batch, row count)."""
    per_dev = rows // devices
    for start in range(0, rows, batch):
        n = min(batch, rows - start)
        segs = []
        g = start
        while g < start + n:
            d, t = divmod(g, per_dev)
            take = min(per_dev - t, start + n - g)
            segs.append((f"d{d}", t, g - start, take))
            g += take
        yield start, n, segs


def batch_table(seed: int, n: int, t0: int = 0):
    """A table of n rows: time t0.. and 10 random doubles (seeded)."""
    import numpy as np
    import pyarrow as pa
    rng = np.random.default_rng(seed)
    cols = {"time": np.arange(t0, t0 + n, dtype=np.int64)}
    for c in FLOATS:
        cols[c] = rng.random(n)
    return pa.table(cols)


def chunk_table(start: int, n: int, segs):
    """Rows [start, start+n) of figure 1's data: times per device segment."""
    import numpy as np
    import pyarrow as pa
    if len(segs) == 1:
        return batch_table(start, n, segs[0][1])
    t = np.empty(n, dtype=np.int64)
    for _, t0, off, cnt in segs:
        t[off:off + cnt] = np.arange(t0, t0 + cnt, dtype=np.int64)
    return batch_table(start, n).set_column(0, "time", pa.array(t))


def duck_arrow(rel) -> Any:
    """A DuckDB relation (con.sql) as a pyarrow Table, whatever this version
    calls it (to_arrow_table on a DB-API result makes an extra copy)."""
    for name in ("to_arrow_table", "fetch_arrow_table", "arrow"):
        fn = getattr(rel, name, None)
        if fn is not None:
            return fn()
    raise RuntimeError("no Arrow fetch method on this DuckDB result")


DUCK_COLS = ", ".join(["device VARCHAR", "time BIGINT"] + [f"{c} DOUBLE" for c in FLOATS])


def arcadego_schema(db) -> None:
    with db.transaction() as tx:
        tx.create_type(TYPE)
        for c in FLOATS:
            tx.create_property(TYPE, c, "DOUBLE")


# --------------------------------------------------------------------------
# the children: each prints one JSON line "RESULT {...}"


def child_write(a: dict) -> dict:
    """Figure 1's data into a new database, closed at the end."""
    t_engine = 0.0
    if a["engine"] == "arcadego":
        import arcadego
        db = arcadego.connect(a["path"], sync="full")
        arcadego_schema(db)
        for start, n, segs in segments(a["rows"], a["batch"], a["devices"]):
            tbl = chunk_table(start, n, segs)
            t0 = time.perf_counter()
            if len(segs) == 1:
                db.insert(TYPE, tbl, device=segs[0][0])
            else:
                with db.transaction() as tx:
                    for dev, _, off, cnt in segs:
                        tx.insert(TYPE, tbl.slice(off, cnt), device=dev)
            t_engine += time.perf_counter() - t0
        st = db.stats()
        t0 = time.perf_counter()
        db.close()
        t_close = time.perf_counter() - t0
        extra = {"flushes": st["flushes"], "stalls": st["stalls"]}
    else:
        import duckdb
        con = duckdb.connect(a["path"])
        con.execute(f"CREATE TABLE t ({DUCK_COLS})")
        for start, n, segs in segments(a["rows"], a["batch"], a["devices"]):
            tbl = chunk_table(start, n, segs)
            t0 = time.perf_counter()
            con.execute("BEGIN")
            for dev, _, off, cnt in segs:
                con.register("seg", tbl.slice(off, cnt))
                con.execute(f"INSERT INTO t SELECT '{dev}' AS device, * FROM seg")
                con.unregister("seg")
            con.execute("COMMIT")
            t_engine += time.perf_counter() - t0
        t0 = time.perf_counter()
        con.close()
        t_close = time.perf_counter() - t0
        extra = {}
    return {"insert_s": t_engine, "close_s": t_close, "disk": dir_bytes(a["path"]), **extra}


def child_reopen(a: dict) -> dict:
    """connect + first tiny query in this fresh process."""
    t0 = time.perf_counter()
    if a["engine"] == "arcadego":
        import arcadego
        import pyarrow  # noqa: F401  (imported by to_arrow; not timed)
        t1 = time.perf_counter()
        db = arcadego.connect(a["path"], sync="full")
        t2 = time.perf_counter()
        tbl = db.scan(TYPE, columns=["f0"], device="d0", start=0, end=10).to_arrow()
        t3 = time.perf_counter()
        st = db.stats()
        extra = {"wal_bytes": st["wal_bytes"], "memtable_bytes": st["memtable_bytes"],
                 "files": sum(t["files"] for t in st["types"])}
        db.close()
    else:
        import duckdb
        import pyarrow  # noqa: F401
        t1 = time.perf_counter()
        con = duckdb.connect(a["path"])
        t2 = time.perf_counter()
        tbl = duck_arrow(con.sql("SELECT device, time, f0 FROM t WHERE device = 'd0' AND time < 10"))
        t3 = time.perf_counter()
        con.close()
        extra = {}
    return {"import_s": t1 - t0, "open_s": t2 - t1, "query_s": t3 - t2, "total_s": t3 - t1,
            "rows": tbl.num_rows, "rss": vm_hwm(), **extra}


def child_ingest(a: dict) -> dict:
    """Figure 2: batches of `batch` rows round-robin over devices."""
    import numpy as np
    import pyarrow as pa
    rows, batch, devices = a["rows"], a["batch"], a["devices"]
    base = batch_table(7, batch)  # the doubles, reused by every batch (new times)
    floats = [base[c] for c in FLOATS]
    nbatches = rows // batch
    stats: dict[str, Any] = {}
    if a["engine"] == "arcadego":
        import arcadego
        db = arcadego.connect(a["path"], sync="full")
        arcadego_schema(db)
        rss0 = vm_hwm()  # library loaded, batch made
        held = 0
        t0 = time.perf_counter()
        for i in range(nbatches):
            t_first = (i // devices) * batch
            tbl = pa.table([pa.array(np.arange(t_first, t_first + batch, dtype=np.int64))] + floats,
                           names=["time"] + FLOATS)
            db.insert(TYPE, tbl, device=f"d{i % devices}")
            st = db.stats()  # cheap; the memtables' high-water mark between inserts
            held = max(held, st["memtable_bytes"] + st["immutable_bytes"])
        t1 = time.perf_counter()
        stats = db.stats()
        db.close()
        t2 = time.perf_counter()
        stats = {k: stats[k] for k in ("flushes", "flushed_rows", "direct_writes", "stalls", "stall_nanos", "checkpoints",
                                       "memtable_bytes", "immutable_bytes", "wal_bytes", "fsyncs")}
        stats["max_memtables_bytes_after_an_insert"] = held
    else:
        import duckdb
        con = duckdb.connect(a["path"])
        con.execute(f"CREATE TABLE t ({DUCK_COLS})")
        rss0 = vm_hwm()
        t0 = time.perf_counter()
        for i in range(nbatches):
            t_first = (i // devices) * batch
            tbl = pa.table([pa.array(np.arange(t_first, t_first + batch, dtype=np.int64))] + floats,
                           names=["time"] + FLOATS)
            con.register("batch", tbl)
            con.execute(f"INSERT INTO t SELECT 'd{i % devices}' AS device, * FROM batch")
            con.unregister("batch")
        t1 = time.perf_counter()
        con.execute("CHECKPOINT")
        con.close()
        t2 = time.perf_counter()
    return {"rows": nbatches * batch, "insert_s": t1 - t0, "close_s": t2 - t1, "total_s": t2 - t0,
            "rss": vm_hwm(), "rss_before": rss0, "batch_bytes": base.nbytes, "disk": dir_bytes(a["path"]),
            "stats": stats}


def timed_runs(repeat: int, fn) -> tuple[list[float], Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


def child_scan(a: dict) -> dict:
    """Figure 3: full scan and a 1% time-range scan, `repeat` times each.
    With a["memtable"], arcadego first writes the rows into a new database
    whose memtable holds them all (no flush) and scans that."""
    rows, devices, repeat = a["rows"], a["devices"], a["repeat"]
    per_dev = rows // devices
    lo = per_dev // 2
    hi = lo + max(per_dev // 100, 1)  # 1% of each device's times
    info: dict[str, Any] = {}
    if a["engine"] == "arcadego":
        import arcadego
        if a.get("memtable"):
            db = arcadego.connect(a["path"], sync="off", memtable_budget=16 << 30)
            arcadego_schema(db)
            for start, n, segs in segments(rows, a["batch"], devices):
                tbl = chunk_table(start, n, segs)
                for dev, _, off, cnt in segs:
                    db.insert(TYPE, tbl.slice(off, cnt), device=dev)
        else:
            db = arcadego.connect(a["path"], sync="full")
            db.flush()  # a no-op after close(), which checkpointed: checked below
        st = db.stats()
        info = {"memtable_bytes": st["memtable_bytes"], "flushes": st["flushes"],
                "files": sum(t["files"] for t in st["types"]),
                "flushed_rows": sum(t["rows"] for t in st["types"])}
        full = lambda: db.scan(TYPE).to_arrow()  # noqa: E731
        rng = lambda: db.scan(TYPE, start=lo, end=hi).to_arrow()  # noqa: E731
    else:
        import duckdb
        db = duckdb.connect(a["path"])
        full = lambda: duck_arrow(db.sql("SELECT * FROM t"))  # noqa: E731
        rng = lambda: duck_arrow(db.sql(f"SELECT * FROM t WHERE time BETWEEN {lo} AND {hi - 1}"))  # noqa: E731
    full_t, tbl = timed_runs(repeat, full)
    full_rows, full_bytes = tbl.num_rows, tbl.nbytes
    del tbl
    rng_t, tbl = timed_runs(repeat, rng)
    out = {"full_s": full_t, "full_rows": full_rows, "full_bytes": full_bytes,
           "range_s": rng_t, "range_rows": tbl.num_rows, "rss": vm_hwm(), **info}
    db.close()
    return out


def child_wide_write(a: dict) -> dict:
    import numpy as np
    import pyarrow as pa
    cols, rows = a["cols"], a["rows"]
    rng = np.random.default_rng(3)
    names = [f"c{i}" for i in range(cols)]
    data = rng.random((cols, rows))
    tbl = pa.table([pa.array(np.arange(rows, dtype=np.int64))] + [pa.array(data[i]) for i in range(cols)],
                   names=["time"] + names)
    t0 = time.perf_counter()
    if a["engine"] == "arcadego":
        import arcadego
        db = arcadego.connect(a["path"], sync="full")
        script = [f"CREATE DOCUMENT TYPE {WIDE}"] + [f"CREATE PROPERTY {WIDE}.{n} DOUBLE" for n in names]
        db.execute("; ".join(script))
        db.insert(WIDE, tbl, device="d0")
        db.flush()
        st = db.stats()
        db.close()
        extra = {"files": sum(t["files"] for t in st["types"]), "memtable_bytes": st["memtable_bytes"]}
    else:
        import duckdb
        con = duckdb.connect(a["path"])
        ddl = ", ".join(["device VARCHAR", "time BIGINT"] + [f"{n} DOUBLE" for n in names])
        con.execute(f"CREATE TABLE {WIDE} ({ddl})")
        con.register("tbl", tbl)
        con.execute(f"INSERT INTO {WIDE} SELECT 'd0' AS device, * FROM tbl")
        con.execute("CHECKPOINT")
        con.close()
        extra = {}
    return {"write_s": time.perf_counter() - t0, "disk": dir_bytes(a["path"]), **extra}


def child_wide_scan(a: dict) -> dict:
    col = f"c{a['cols'] // 2}"
    import pyarrow  # noqa: F401  (imports are not timed, as in child_reopen)
    if a["engine"] == "arcadego":
        import arcadego
        t0 = time.perf_counter()
        db = arcadego.connect(a["path"], sync="full")
        t1 = time.perf_counter()
        q = lambda: db.scan(WIDE, columns=[col]).to_arrow()  # noqa: E731
    else:
        import duckdb
        t0 = time.perf_counter()
        db = duckdb.connect(a["path"])
        t1 = time.perf_counter()
        q = lambda: duck_arrow(db.sql(f"SELECT device, time, {col} FROM {WIDE}"))  # noqa: E731
    first_t, tbl = timed_runs(1, q)
    warm_t, tbl = timed_runs(a["repeat"], q)
    db.close()
    return {"open_s": t1 - t0, "first_s": first_t[0], "warm_s": warm_t, "rows": tbl.num_rows,
            "cols": tbl.num_columns, "rss": vm_hwm()}


CHILDREN = {"write": child_write, "reopen": child_reopen, "ingest": child_ingest, "scan": child_scan,
            "wide_write": child_wide_write, "wide_scan": child_wide_scan}


# --------------------------------------------------------------------------
# the parent


def run_child(task: str, **args: Any) -> dict:
    spec = json.dumps({"task": task, **args})
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", spec],
                          stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"child {task} {args} exited with {proc.returncode}:\n{proc.stdout}")
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"child {task} {args} printed no result:\n{proc.stdout}")


def fmt_s(sec: float) -> str:
    if sec < 1e-3:
        return f"{sec * 1e6:.0f} µs"
    if sec < 1:
        return f"{sec * 1e3:.1f} ms" if sec < 0.1 else f"{sec * 1e3:.0f} ms"
    return f"{sec:.2f} s"


def fmt_runs(times: list[float]) -> str:
    """best (median, range) of a list of seconds."""
    if len(times) == 1:
        return fmt_s(times[0])
    return (f"{fmt_s(min(times))} (med {fmt_s(statistics.median(times))}, "
            f"{fmt_s(min(times))}–{fmt_s(max(times))})")


def mib(b: float) -> str:
    return f"{b / 2**20:.0f} MiB"


def verdict(goal: str, met: bool) -> str:
    return f"{goal}: {'met' if met else '**not met**'}"


def ratio(better_when_smaller: bool, a: float, d: float) -> str:
    """How many times better arcadego is than DuckDB (> 1: arcadego ahead)."""
    if a <= 0 or d <= 0:
        return "-"
    r = d / a if better_when_smaller else a / d
    return f"{r:.2f}×"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument("--dir", default=None, help="where the databases go (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the databases")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        spec = json.loads(args.child)
        print("RESULT " + json.dumps(CHILDREN[spec.pop("task")](spec)), flush=True)
        return

    import duckdb
    import pyarrow as pa

    import arcadego
    cfg = QUICK if args.quick else FULL
    rep = cfg["repeat"]
    t_start = time.perf_counter()
    print(f"# bench_storage{' --quick' if args.quick else ''}: arcadego {arcadego.__version__} "
          f"(library {arcadego.library_version()}), duckdb {duckdb.__version__}, pyarrow {pa.__version__}, "
          f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    tmp = tempfile.mkdtemp(prefix="arcadego-bench-storage-", dir=args.dir)
    rows_out: list[tuple[str, str, str, str, str]] = []  # figure, arcadego, duckdb, ratio, goal
    details: list[str] = []

    def path(name: str) -> str:
        return os.path.join(tmp, name)

    def dbpath(engine: str, name: str) -> str:
        return path(f"{name}-{engine}" + (".duckdb" if engine == "duckdb" else ""))

    try:
        # -- figure 1: write, then reopen in fresh processes -------------------
        R, B = cfg["reopen_rows"], cfg["reopen_batch"]
        for devices in (1, 100):
            name = f"m{devices}"
            w = {e: run_child("write", engine=e, path=dbpath(e, name), rows=R, batch=B, devices=devices)
                 for e in ("arcadego", "duckdb")}
            details.append(f"write {R:,} rows, {devices} device(s): " + "; ".join(
                f"{e} inserts {fmt_s(v['insert_s'])} + close {fmt_s(v['close_s'])}, {mib(v['disk'])} on disk"
                + (f", {v['flushes']} flushes, {v['stalls']} stalls" if e == "arcadego" else "")
                for e, v in w.items()))
            runs: dict[str, list[dict]] = {"arcadego": [], "duckdb": []}
            for _ in range(rep):  # interleaved, so a load swing hits both
                for e in runs:
                    runs[e].append(run_child("reopen", engine=e, path=dbpath(e, name)))
            ta = [r["total_s"] for r in runs["arcadego"]]
            td = [r["total_s"] for r in runs["duckdb"]]
            rows_out.append((f"1. reopen + first query, {R / 1e6:g} M rows, {devices} device(s)",
                             fmt_runs(ta), fmt_runs(td), ratio(True, min(ta), min(td)),
                             verdict("arcadego ≤ DuckDB", min(ta) <= min(td))))
            rows_out.append((f"   on-disk size after close(), {devices} device(s)",
                             mib(w["arcadego"]["disk"]), mib(w["duckdb"]["disk"]),
                             ratio(True, w["arcadego"]["disk"], w["duckdb"]["disk"]), ""))
            for e, rs in runs.items():
                details.append(f"reopen {devices} device(s), {e}: " + ", ".join(
                    f"[open {fmt_s(r['open_s'])} + query {fmt_s(r['query_s'])}, {r['rows']} rows"
                    + (f", wal {r['wal_bytes']} B, memtable {r['memtable_bytes']} B, {r['files']} files"
                       if e == "arcadego" else "")
                    + f", import {fmt_s(r['import_s'])}]" for r in rs))
                if any(r["rows"] != 10 for r in rs):
                    details.append(f"  !! {e} returned {[r['rows'] for r in rs]} rows, expected 10")

        # -- figure 2: sustained ingest ------------------------------------------
        IR, IB, ID = cfg["ingest_rows"], cfg["ingest_batch"], cfg["ingest_devices"]
        ing = {}
        for e in ("arcadego", "duckdb"):
            p = dbpath(e, "ingest")
            ing[e] = run_child("ingest", engine=e, path=p, rows=IR, batch=IB, devices=ID)
            shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else os.remove(p)
        ra = ing["arcadego"]["rows"] / ing["arcadego"]["total_s"] / 1e6
        rd = ing["duckdb"]["rows"] / ing["duckdb"]["total_s"] / 1e6
        rows_out.append((f"2. sustained ingest, {IR / 1e6:g} M rows in {IB / 1e6:g} M-row batches, {ID} devices",
                         f"{ra:.2f} M rows/s", f"{rd:.2f} M rows/s", ratio(False, ra, rd),
                         verdict("arcadego ≥ 2× DuckDB", ra >= 2 * rd)))
        budget, ia = 64 << 20, ing["arcadego"]
        cap = 3 * budget + ia["batch_bytes"] + ia["rss_before"]
        rows_out.append(("   peak RSS of the ingesting process (before the first insert: "
                         f"{mib(ia['rss_before'])})", mib(ia["rss"]),
                         mib(ing["duckdb"]["rss"]), ratio(True, ia["rss"], ing["duckdb"]["rss"]),
                         verdict(f"arcadego ≤ 3×budget + batch + before = {mib(cap)}", ia["rss"] <= cap)))
        st = ing["arcadego"]["stats"]
        rows_out.append(("   arcadego flushes / stalls (stall time)",
                         f"{st['flushes']} / {st['stalls']} ({fmt_s(st['stall_nanos'] / 1e9)})", "", "", ""))
        for e, v in ing.items():
            details.append(f"ingest {e}: inserts {fmt_s(v['insert_s'])} + close {fmt_s(v['close_s'])} "
                           f"= {fmt_s(v['total_s'])}; peak RSS {mib(v['rss'])} (before the first insert "
                           f"{mib(v['rss_before'])}, batch {mib(v['batch_bytes'])}); {mib(v['disk'])} on disk"
                           + (f"; stats before close {json.dumps(v['stats'])}" if v["stats"] else ""))

        # -- figure 3: scans of the figure-1 data ----------------------------------
        for devices in (1, 100):
            name = f"m{devices}"
            sc = {e: run_child("scan", engine=e, path=dbpath(e, name), rows=R, devices=devices, repeat=rep)
                  for e in ("arcadego", "duckdb")}
            mem = run_child("scan", engine="arcadego", path=path(f"mem{devices}"), rows=R, batch=B,
                            devices=devices, repeat=rep, memtable=True)
            shutil.rmtree(path(f"mem{devices}"), ignore_errors=True)
            a, d = sc["arcadego"], sc["duckdb"]
            rows_out.append((f"3. full scan to Arrow, {R / 1e6:g} M rows × 12 cols, {devices} device(s)",
                             fmt_runs(a["full_s"]), fmt_runs(d["full_s"]),
                             ratio(True, min(a["full_s"]), min(d["full_s"])),
                             verdict("arcadego ahead", min(a["full_s"]) < min(d["full_s"]))))
            rows_out.append((f"   1% time-range scan, {devices} device(s)",
                             fmt_runs(a["range_s"]), fmt_runs(d["range_s"]),
                             ratio(True, min(a["range_s"]), min(d["range_s"])),
                             verdict("arcadego ahead", min(a["range_s"]) < min(d["range_s"]))))
            rows_out.append((f"   arcadego, same rows in the memtable: full / range, {devices} device(s)",
                             f"{fmt_s(min(mem['full_s']))} / {fmt_s(min(mem['range_s']))}", "",
                             f"flushed ÷ memtable {min(a['full_s']) / min(mem['full_s']):.2f}× / "
                             f"{min(a['range_s']) / min(mem['range_s']):.2f}×", "reference, no goal"))
            for e, v in (("arcadego", a), ("duckdb", d), ("arcadego memtable", mem)):
                details.append(f"scan {devices} device(s), {e}: full {[round(x, 4) for x in v['full_s']]} s "
                               f"({v['full_rows']:,} rows, {mib(v['full_bytes'])}), range "
                               f"{[round(x, 4) for x in v['range_s']]} s ({v['range_rows']:,} rows), "
                               f"peak RSS {mib(v['rss'])}"
                               + (f", memtable {v['memtable_bytes']} B, {v['files']} files, "
                                  f"{v['flushed_rows']:,} rows flushed, {v['flushes']} flushes"
                                  if "files" in v else ""))
            for key in ("full_rows", "range_rows"):
                got = {a[key], d[key], mem[key]}
                if len(got) != 1:
                    details.append(f"  !! {key} differ: arcadego {a[key]}, duckdb {d[key]}, memtable {mem[key]}")
            if a["full_rows"] != R:
                details.append(f"  !! full scan returned {a['full_rows']:,} rows, expected {R:,}")

        # -- figure 4: a wide type -------------------------------------------------
        WC, WR = cfg["wide_cols"], cfg["wide_rows"]
        ww = {e: run_child("wide_write", engine=e, path=dbpath(e, "wide"), cols=WC, rows=WR)
              for e in ("arcadego", "duckdb")}
        wruns: dict[str, list[dict]] = {"arcadego": [], "duckdb": []}
        for _ in range(rep):
            for e in wruns:
                wruns[e].append(run_child("wide_scan", engine=e, path=dbpath(e, "wide"), cols=WC, repeat=rep))
        fa = [r["open_s"] + r["first_s"] for r in wruns["arcadego"]]
        fd = [r["open_s"] + r["first_s"] for r in wruns["duckdb"]]
        wa = [x for r in wruns["arcadego"] for x in r["warm_s"]]
        wd = [x for r in wruns["duckdb"] for x in r["warm_s"]]
        rows_out.append((f"4. {WC:,}-column DOUBLE type, {WR} rows (flushed): open + scan of c{WC // 2}",
                         fmt_runs(fa), fmt_runs(fd), ratio(True, min(fa), min(fd)), ""))
        rows_out.append(("   the same scan again (warm)", fmt_runs(wa), fmt_runs(wd), ratio(True, min(wa), min(wd)), ""))
        rows_out.append(("   write (DDL + insert + flush/CHECKPOINT), on disk",
                         f"{fmt_s(ww['arcadego']['write_s'])}, {mib(ww['arcadego']['disk'])}",
                         f"{fmt_s(ww['duckdb']['write_s'])}, {mib(ww['duckdb']['disk'])}", "", ""))
        for e, rs in wruns.items():
            details.append(f"wide {e}: " + ", ".join(
                f"[open {fmt_s(r['open_s'])}, first {fmt_s(r['first_s'])}, warm "
                f"{'/'.join(fmt_s(x) for x in r['warm_s'])}, {r['rows']} rows × {r['cols']} cols, "
                f"RSS {mib(r['rss'])}]" for r in rs))
        if ww["arcadego"].get("memtable_bytes"):
            details.append(f"  !! wide type not fully flushed: {ww['arcadego']}")
    finally:
        if args.keep:
            print(f"databases kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    print("\n| figure | arcadego | DuckDB | ratio (> 1: arcadego better) | goal |")
    print("|---|---|---|---|---|")
    for r in rows_out:
        print("| " + " | ".join(r) + " |")
    print("\nTimes: best (median, range min–max) of the runs; arcadego sync=\"full\", DuckDB defaults, warm "
          "page cache. Open times exclude `import`. Ratio: DuckDB time ÷ arcadego time, arcadego rate ÷ "
          "DuckDB rate, DuckDB RSS ÷ arcadego RSS. Figure 2 reuses one batch of random doubles with new "
          "times for every batch.")
    print("\nDetails:")
    for line in details:
        print("- " + line)
    print(f"\nbench_storage took {time.perf_counter() - t_start:.0f} s "
          f"(load average now {' '.join(f'{x:.1f}' for x in os.getloadavg())})")


if __name__ == "__main__":
    main()
