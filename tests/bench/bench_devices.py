"""Many devices (`make bench`): long-format ingest and per-device reads,
side by side with DuckDB.

D devices x 10 rows x 5 DOUBLE (devices named plant-PP/dev-NNNNNN, 100
plants), written in long-format batches of 1 M rows, each one commit:
arcadego with sync="full" (every commit fsynced) and its default memtable
budget, DuckDB with its defaults and a CHECKPOINT at the end. Each engine
runs in its own fresh process. Figures, printed, never asserted:

 1. ingest: rows/s over the time of the inserts and the final close
    (arcadego) or CHECKPOINT + close (DuckDB), not of making the batches
    in Python (about as long again here), and the process's user and
    system CPU time over the same spans; RSS growth of the ingesting
    process against the raw values (D x 10 x (8 + 5 x 8) bytes). Each
    engine ingests --rounds times (3), the engines in turn and the order
    reversed every other round, each into a new database; the figures
    are each engine's median round (by rows/s), with every round's rate
    beside them. On this machine a single ingest of either engine swings
    by a third from run to run. The reads below use the first round's
    databases, each right after its ingest;
 2. one device's rows: p50 and p99 over random devices, after reopen
    (arcadego: scan(device=...), 2,000 reads, each a few tens of µs;
    DuckDB: SELECT ... WHERE device = ?, 200 reads, each tens of ms). Of
    200 samples the p99 is the second slowest, which the first reads of a
    process (imports, first calls) decide; the first read is reported on
    its own. Beside arcadego's, the machine's own spread: p50 and p99 of
    a fixed memory-bound workload sized to the reads' median, run in the
    same process after the figures below;
 3. devices(): the device list with row counts and time bounds, as Python
    lists and as Arrow (devices_arrow()) (DuckDB: SELECT device, count(*),
    min(time), max(time) GROUP BY device, as Arrow), twice each, and
    through the JSON of arcadego_devices;
 4. a 1% device-prefix scan: plant-07/ (DuckDB: WHERE device LIKE
    'plant-07/%');
 5. the last value of one column for every device (arcadego: db.last;
    DuckDB: arg_max ... GROUP BY device), twice, then once more after a
    commit of one new row to each of 100 devices;
 6. arcadego alone, every row unflushed: the same batches into a database
    held in memory (connect(None), a memtable budget above the data, no
    direct writes), then devices() and devices_arrow() twice each (the
    first listing also sorts the memtable's device directory) and one
    device's rows, p50 and p99 of 2,000 reads.

Usage: python tests/bench/bench_devices.py [--devices N] [--rounds R] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any

FLOATS = [f"f{i}" for i in range(5)]
PER_DEVICE = 10
BATCH_ROWS = 1_000_000


def vm_hwm() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def vm_rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def name(d: int) -> str:
    return f"plant-{d % 100:02d}/dev-{d:07d}"


def batches(devices: int):
    """Long-format batches of about BATCH_ROWS rows: whole devices, each
    device's 10 rows together."""
    import numpy as np
    import pyarrow as pa
    per_batch = max(BATCH_ROWS // PER_DEVICE, 1)
    rng = np.random.default_rng(11)
    for lo in range(0, devices, per_batch):
        hi = min(devices, lo + per_batch)
        names = pa.array([name(d) for d in range(lo, hi)])
        idx = np.repeat(np.arange(hi - lo), PER_DEVICE)
        n = len(idx)
        cols = {"device": names.take(pa.array(idx)), "time": np.tile(np.arange(PER_DEVICE, dtype=np.int64), hi - lo)}
        for c in FLOATS:
            cols[c] = rng.random(n)
        yield pa.table(cols)


class Clock:
    """Adds up the wall time and the process's user and system CPU time
    of the blocks it is entered for."""

    def __init__(self) -> None:
        self.wall = self.user = self.sys = 0.0

    def __enter__(self) -> None:
        self._t0, self._r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)

    def __exit__(self, *exc: object) -> None:
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        self.wall += time.perf_counter() - self._t0
        self.user += r1.ru_utime - self._r0.ru_utime
        self.sys += r1.ru_stime - self._r0.ru_stime


def child_ingest(a: dict) -> dict:
    devices, path = a["devices"], a["path"]
    rss0 = vm_rss()
    rows = 0
    clock = Clock()  # the inserts' time and the close's, not the batches' making
    if a["engine"] == "arcadego":
        import arcadego
        db = arcadego.connect(path, sync="full")
        with db.transaction() as tx:
            tx.create_type("M")
            for c in FLOATS:
                tx.create_property("M", c, "DOUBLE")
        rss0 = vm_rss()
        for tbl in batches(devices):
            with clock:
                db.insert("M", tbl, device_column="device")
            rows += tbl.num_rows
        st = db.stats()
        with clock:
            db.close()
        extra = {"flushes": st["flushes"], "stalls": st["stalls"]}
    else:
        import duckdb
        con = duckdb.connect(path)
        con.execute("CREATE TABLE m (device VARCHAR, time BIGINT, " + ", ".join(f"{c} DOUBLE" for c in FLOATS) + ")")
        rss0 = vm_rss()
        for tbl in batches(devices):
            with clock:
                con.register("b", tbl)
                con.execute("INSERT INTO m SELECT * FROM b")
                con.unregister("b")
            rows += tbl.num_rows
        with clock:
            con.execute("CHECKPOINT")
            con.close()
        extra = {}
    return {"rows": rows, "seconds": clock.wall, "user_s": clock.user, "sys_s": clock.sys,
            "rss_growth": vm_hwm() - rss0, **extra}


def duck_arrow(rel: Any) -> Any:
    """A DuckDB result as a pyarrow Table, whatever this version calls it."""
    for attr in ("to_arrow_table", "fetch_arrow_table", "arrow"):
        fn = getattr(rel, attr, None)
        if fn is not None:
            return fn()
    raise RuntimeError("no Arrow fetch method on this DuckDB result")


def machine_reference(median_s: float, n: int) -> dict:
    """The machine's own spread, for reading a p99: n runs of a fixed
    workload (a numpy gather of k random elements of a 64 MiB array, each
    run the next k of 4 M random indices: memory-bound like a read of a
    device among a million) with k sized for a median of median_s, in the
    same process as the reads."""
    import numpy as np
    rng = np.random.default_rng(1)
    big = rng.random(8 << 20)
    idx = rng.integers(0, len(big), 1 << 22)
    at = 0

    def gather(k: int) -> float:
        nonlocal at
        if at + k > len(idx):
            at = 0
        t0 = time.perf_counter()
        big[idx[at:at + k]].sum()
        at += k
        return time.perf_counter() - t0
    k = 1024
    for _ in range(2):  # the gather's time grows with k in proportion
        median = max(1e-9, sorted(gather(k) for _ in range(51))[25])
        k = max(1, min(len(idx), int(k * median_s / median)))
    runs = sorted(gather(k) for _ in range(n))
    return {"ref_p50": runs[n // 2], "ref_p99": runs[int(n * 0.99)]}


def child_reads(a: dict) -> dict:
    import random
    devices, path = a["devices"], a["path"]
    rng = random.Random(5)
    picks = [name(rng.randrange(devices)) for _ in range(2000 if a["engine"] == "arcadego" else 200)]
    out: dict[str, Any] = {}
    if a["engine"] == "arcadego":
        import arcadego
        import pyarrow  # noqa: F401
        t0 = time.perf_counter()
        db = arcadego.connect(path)
        out["open_s"] = time.perf_counter() - t0
        one = lambda dev: db.scan("M", device=dev).to_arrow()  # noqa: E731
        listing = lambda: db.devices("M")  # noqa: E731
        listing_arrow = lambda: db.devices_arrow("M")  # noqa: E731

        def listing_json() -> dict[str, Any]:
            """The listing as devices() read it before: arcadego_devices' JSON."""
            import ctypes
            from arcadego import _lib
            out, err = ctypes.c_void_p(), ctypes.c_void_p()
            _lib.check(_lib.lib.arcadego_devices(db._require_open(), b'{"type": "M"}', ctypes.byref(out),
                                                 ctypes.byref(err)), err)
            return json.loads(_lib.take_string(out) or "{}")
        prefix = lambda: db.scan("M", device_prefix="plant-07/").to_arrow()  # noqa: E731
        latest = lambda: db.last("M", ["f0"]).to_arrow()  # noqa: E731
        write = lambda tbl: db.insert("M", tbl, device_column="device")  # noqa: E731
        count = lambda r: r.num_rows if hasattr(r, "num_rows") else len(r["device"])  # noqa: E731
    else:
        import duckdb
        # A parameterized query is a DB-API result, whose Arrow output
        # DuckDB warns makes a copy: that copy is part of its answer here.
        warnings.filterwarnings("ignore", message="Arrow output on a DB-API result")
        t0 = time.perf_counter()
        db = duckdb.connect(path)
        out["open_s"] = time.perf_counter() - t0
        one = lambda dev: duck_arrow(db.execute("SELECT * FROM m WHERE device = ?", [dev]))  # noqa: E731
        listing = lambda: duck_arrow(db.sql("SELECT device, count(*), min(time), max(time) FROM m GROUP BY device"))  # noqa: E731
        listing_arrow = listing
        listing_json = None
        prefix = lambda: duck_arrow(db.sql("SELECT * FROM m WHERE device LIKE 'plant-07/%'"))  # noqa: E731
        latest = lambda: duck_arrow(db.sql(  # noqa: E731
            "SELECT device, max(time), arg_max(f0, time) FILTER (WHERE f0 IS NOT NULL) FROM m GROUP BY device"))
        count = lambda r: r.num_rows  # noqa: E731

        def write(tbl: Any) -> None:
            db.register("b", tbl)
            db.execute("INSERT INTO m (device, time, f0) SELECT * FROM b")
            db.unregister("b")
    times = []
    for dev in picks:
        t0 = time.perf_counter()
        r = one(dev)
        times.append(time.perf_counter() - t0)
        assert count(r) == PER_DEVICE, (dev, count(r))
    out["one_first"], out["one_n"] = times[0], len(times)
    out["one_p99_200"] = sorted(times[:200])[198]  # as measured before: 200 reads
    times.sort()
    out["one_p50"] = times[len(times) // 2]
    out["one_p99"] = times[int(len(times) * 0.99)]
    t0 = time.perf_counter()
    r = listing()
    out["devices_s"] = time.perf_counter() - t0
    out["devices_n"] = count(r)
    t0 = time.perf_counter()
    r = listing_arrow()
    out["devices_arrow_s"] = time.perf_counter() - t0
    assert count(r) == out["devices_n"]
    for key, fn in (("devices_again_s", listing), ("devices_arrow_again_s", listing_arrow),
                    ("devices_json_s", listing_json)):
        if fn is not None:
            t0 = time.perf_counter()
            fn()
            out[key] = time.perf_counter() - t0
    best = None
    for _ in range(3):
        t0 = time.perf_counter()
        r = prefix()
        best = min(best or 1e9, time.perf_counter() - t0)
    out["prefix_s"] = best
    out["prefix_rows"] = count(r)
    t0 = time.perf_counter()
    r = latest()
    out["last_s"] = time.perf_counter() - t0
    assert count(r) == devices, count(r)
    t0 = time.perf_counter()
    r = latest()
    out["last_again_s"] = time.perf_counter() - t0
    # 100 devices written since the flush: one row each, one commit.
    import pyarrow as pa
    fresh = [name(d) for d in range(0, devices, max(1, devices // 100))]
    write(pa.table({"device": fresh, "time": [PER_DEVICE + 1] * len(fresh), "f0": [1.0] * len(fresh)}))
    t0 = time.perf_counter()
    r = latest()
    out["last_fresh_s"] = time.perf_counter() - t0
    assert count(r) == devices, count(r)
    if a["engine"] == "arcadego":  # last: its 96 MiB would disturb the timings above
        out.update(machine_reference(out["one_p50"], out["one_n"]))
    return out


def child_unflushed(a: dict) -> dict:
    import random
    import arcadego
    import pyarrow  # noqa: F401
    devices = a["devices"]
    raw = devices * PER_DEVICE * (8 + 8 * len(FLOATS))
    db = arcadego.connect(None, memtable_budget=4 * raw + (1 << 30), direct_write_bytes=-1)
    with db.transaction() as tx:
        tx.create_type("M")
        for c in FLOATS:
            tx.create_property("M", c, "DOUBLE")
    out: dict[str, Any] = {"rows": 0, "seconds": 0.0}
    for tbl in batches(devices):
        t0 = time.perf_counter()
        db.insert("M", tbl, device_column="device")
        out["seconds"] += time.perf_counter() - t0
        out["rows"] += tbl.num_rows
    out["flushes"] = db.stats()["flushes"]
    for key, fn in (("devices_s", lambda: db.devices("M")), ("devices_arrow_s", lambda: db.devices_arrow("M")),
                    ("devices_again_s", lambda: db.devices("M")),
                    ("devices_arrow_again_s", lambda: db.devices_arrow("M"))):
        t0 = time.perf_counter()
        r = fn()
        out[key] = time.perf_counter() - t0
        n = r.num_rows if hasattr(r, "num_rows") else len(r["device"])
        assert n == devices, n
    rng = random.Random(5)
    spent = []
    for dev in [name(rng.randrange(devices)) for _ in range(2000)]:
        t0 = time.perf_counter()
        tbl = db.scan("M", device=dev).to_arrow()
        spent.append(time.perf_counter() - t0)
        assert tbl.num_rows == PER_DEVICE, tbl.num_rows
    spent.sort()
    out["one_p50"], out["one_p99"] = spent[len(spent) // 2], spent[len(spent) * 99 // 100]
    db.close()
    return out


def run_child(task: str, **args: Any) -> dict:
    spec = json.dumps({"task": task, **args})
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", spec], stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"child {task} {args} exited with {proc.returncode}:\n{proc.stdout}")
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"child {task} printed no result:\n{proc.stdout}")


def remove(path: str) -> None:
    """Removes a database (a directory, or DuckDB's file and its log)."""
    if os.path.isdir(path):
        shutil.rmtree(path)
    for p in (path, path + ".wal"):
        if os.path.isfile(p):
            os.remove(p)


def fmt_s(sec: float) -> str:
    if sec < 1e-3:
        return f"{sec * 1e6:.0f} µs"
    if sec < 1:
        return f"{sec * 1e3:.1f} ms"
    return f"{sec:.2f} s"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", type=int, default=1_000_000)
    ap.add_argument("--dir")
    ap.add_argument("--rounds", type=int, default=3, help="ingests of each engine, in turn")
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.child:
        spec = json.loads(args.child)
        fn = {"ingest": child_ingest, "reads": child_reads, "unflushed": child_unflushed}[spec.pop("task")]
        print("RESULT " + json.dumps(fn(spec)), flush=True)
        return
    base = args.dir or tempfile.mkdtemp(prefix="bench-devices-")
    try:
        engines = ("arcadego", "duckdb")
        path = lambda engine, r: os.path.join(base, f"{engine}-{r}" + (".duckdb" if engine == "duckdb" else ""))  # noqa: E731
        rate = lambda r: r["rows"] / r["seconds"] / 1e6  # noqa: E731
        ingests: dict[str, list[dict]] = {e: [] for e in engines}
        reads = {}
        for r in range(args.rounds):
            for engine in engines if r % 2 == 0 else engines[::-1]:
                ingests[engine].append(run_child("ingest", engine=engine, path=path(engine, r), devices=args.devices))
                if r == 0:  # right after the ingest: the kernel pages out file pages unused for a minute or so
                    reads[engine] = run_child("reads", engine=engine, path=path(engine, r), devices=args.devices)
                else:
                    remove(path(engine, r))
        res = {e: (sorted(ingests[e], key=rate)[len(ingests[e]) // 2], reads[e]) for e in engines}
        mem = run_child("unflushed", devices=args.devices)
        raw = args.devices * PER_DEVICE * (8 + 8 * len(FLOATS))
        a, d = res["arcadego"], res["duckdb"]
        print(f"# bench_devices: {args.devices:,} devices x {PER_DEVICE} rows x {len(FLOATS)} DOUBLE, "
              f"raw values {raw / 2**20:.0f} MiB")
        print("| figure | arcadego | DuckDB |")
        print("|---|---|---|")
        print(f"| long-format ingest, durable (M rows/s), median of {args.rounds} | {rate(a[0]):.2f} | {rate(d[0]):.2f} |")
        print(f"| the rounds in turn | {' / '.join(f'{rate(x):.2f}' for x in ingests['arcadego'])} | "
              f"{' / '.join(f'{rate(x):.2f}' for x in ingests['duckdb'])} |")
        print(f"| CPU time of the ingest, user / system | {a[0]['user_s']:.2f} s / {a[0]['sys_s']:.2f} s | "
              f"{d[0]['user_s']:.2f} s / {d[0]['sys_s']:.2f} s |")
        print(f"| RSS growth of the ingest (× raw values) | {a[0]['rss_growth'] / 2**20:.0f} MiB "
              f"({a[0]['rss_growth'] / raw:.2f}×) | {d[0]['rss_growth'] / 2**20:.0f} MiB ({d[0]['rss_growth'] / raw:.2f}×) |")
        print(f"| one device's rows, p50 / p99 (over {a[1]['one_n']:,} / {d[1]['one_n']:,} reads) | "
              f"{fmt_s(a[1]['one_p50'])} / {fmt_s(a[1]['one_p99'])} | {fmt_s(d[1]['one_p50'])} / {fmt_s(d[1]['one_p99'])} |")
        print(f"| the machine's spread: a fixed workload of that median, p50 / p99 (after the other figures) | "
              f"{fmt_s(a[1]['ref_p50'])} / {fmt_s(a[1]['ref_p99'])} | |")
        print(f"| the first of those reads | {fmt_s(a[1]['one_first'])} | {fmt_s(d[1]['one_first'])} |")
        print(f"| p99 of the first 200 reads only | {fmt_s(a[1]['one_p99_200'])} | {fmt_s(d[1]['one_p99_200'])} |")
        print(f"| devices() of {a[1]['devices_n']:,} devices (arcadego: Python lists; DuckDB: Arrow) | "
              f"{fmt_s(a[1]['devices_s'])} | {fmt_s(d[1]['devices_s'])} |")
        print(f"| the same as Arrow (devices_arrow(); DuckDB: the same query again) | "
              f"{fmt_s(a[1]['devices_arrow_s'])} | {fmt_s(d[1]['devices_arrow_s'])} |")
        print(f"| the two again, in turn | {fmt_s(a[1]['devices_again_s'])} / "
              f"{fmt_s(a[1]['devices_arrow_again_s'])} | {fmt_s(d[1]['devices_again_s'])} / "
              f"{fmt_s(d[1]['devices_arrow_again_s'])} |")
        print(f"| the same through JSON (arcadego_devices, as devices() read it before) | "
              f"{fmt_s(a[1]['devices_json_s'])} | |")
        print(f"| 1% device-prefix scan ({a[1]['prefix_rows']:,} rows) | {fmt_s(a[1]['prefix_s'])} | {fmt_s(d[1]['prefix_s'])} |")
        print(f"| last value of one column, every device | {fmt_s(a[1]['last_s'])} | {fmt_s(d[1]['last_s'])} |")
        print(f"| the same again | {fmt_s(a[1]['last_again_s'])} | {fmt_s(d[1]['last_again_s'])} |")
        print(f"| the same after a write to 100 devices | {fmt_s(a[1]['last_fresh_s'])} | {fmt_s(d[1]['last_fresh_s'])} |")
        print(f"| open | {fmt_s(a[1]['open_s'])} | {fmt_s(d[1]['open_s'])} |")
        print(f"\nEvery row unflushed, in a database held in memory ({mem['flushes']} flushes):\n")
        print("| figure | arcadego |")
        print("|---|---|")
        print(f"| long-format ingest into memory (M rows/s) | {rate(mem):.2f} |")
        print(f"| devices(), the first listing (sorts the device directory) | {fmt_s(mem['devices_s'])} |")
        print(f"| devices_arrow(), next | {fmt_s(mem['devices_arrow_s'])} |")
        print(f"| the two again, in turn | {fmt_s(mem['devices_again_s'])} / {fmt_s(mem['devices_arrow_again_s'])} |")
        print(f"| one device's rows, p50 / p99 (2,000 reads) | {fmt_s(mem['one_p50'])} / {fmt_s(mem['one_p99'])} |")
        print(f"\narcadego ingest (the median round): {a[0]}\nduckdb ingest (the median round): {d[0]}")
    finally:
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
