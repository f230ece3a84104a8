"""The ``arcadego`` command (also ``python -m arcadego``): a small CLI over
a database directory.

    arcadego init PATH                      create an empty database
    arcadego info PATH                      types, rows, devices, files, bytes
    arcadego describe PATH [TYPE]           print the schema as JSON
    arcadego exec PATH SCRIPT               run a DDL script ("-" reads stdin)
    arcadego import PATH FILE... --type T (--device D | --device-column C)
                                            load Parquet, CSV or Arrow IPC files
                                            in one transaction, with progress
    arcadego export PATH TYPE --to FILE     write a type (.parquet or .csv)
             [--device D] [--start S] [--end E]
    arcadego scan PATH TYPE [--device D] [--limit N]
                                            print rows as a table
    arcadego sql PATH QUERY                 run SQL over the types (DuckDB)
    arcadego version                        print the package and library versions

No command but init creates a database: a mistyped path is an error.
import, export, scan and sql need pyarrow (sql also DuckDB).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

import arcadego


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = argparse.ArgumentParser(prog="arcadego", description="arcadego database tool")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("init", help="create an empty database")
    p.add_argument("path")
    p = sub.add_parser("info", help="types with their rows, devices, files and bytes")
    p.add_argument("path")
    p = sub.add_parser("describe", help="print the schema as JSON")
    p.add_argument("path")
    p.add_argument("type", nargs="?", default=None)
    p = sub.add_parser("exec", help="run a DDL script as one transaction")
    p.add_argument("path")
    p.add_argument("script", help='the script text, or "-" to read it from stdin')
    p = sub.add_parser("delete", help="delete a type's rows by device and time range, in one transaction")
    p.add_argument("path")
    p.add_argument("type")
    p.add_argument("--device", action="append", help="only this device (repeatable; default: every device)")
    p.add_argument("--start", type=int, help="time >= START (default: no bound)")
    p.add_argument("--end", type=int, help="time < END (default: no bound)")
    p = sub.add_parser("compact", help="merge a type's Parquet files (every type's without TYPE)")
    p.add_argument("path")
    p.add_argument("type", nargs="?", default=None)
    p = sub.add_parser("import", help="load Parquet, CSV or Arrow IPC files in one transaction")
    p.add_argument("path")
    p.add_argument("files", nargs="+")
    p.add_argument("--type", required=True)
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--device", help="the device of every row")
    who.add_argument("--device-column", help="the column holding each row's device")
    p.add_argument("--format", choices=["parquet", "csv", "arrow"], help="default: from each file's extension")
    p.add_argument("--create", action="store_true", help="create the type and its properties from the files")
    p.add_argument("--no-progress", action="store_true")
    p = sub.add_parser("export", help="write a type to a Parquet or CSV file")
    p.add_argument("path")
    p.add_argument("type")
    p.add_argument("--to", required=True, help="the file: .parquet or .csv")
    p.add_argument("--device", action="append", help="only this device (repeatable)")
    p.add_argument("--start", type=int)
    p.add_argument("--end", type=int)
    p = sub.add_parser("scan", help="print a type's rows as a table")
    p.add_argument("path")
    p.add_argument("type")
    p.add_argument("--device", action="append")
    p.add_argument("--limit", type=int, default=20)
    p = sub.add_parser("sql", help="run a SQL query over the types with DuckDB")
    p.add_argument("path")
    p.add_argument("query")
    sub.add_parser("version", help="print the versions")
    args = parser.parse_args(argv)
    try:
        if args.command == "version":
            print(f"arcadego {arcadego.__version__} (library {arcadego.library_version()})")
            return 0
        if args.command == "init":
            if os.path.exists(args.path) and (not os.path.isdir(args.path) or os.listdir(args.path)):
                print(f"arcadego: {args.path!r} exists and is not an empty directory", file=sys.stderr)
                return 1
            arcadego.connect(args.path).close()
            return 0
        # Never create one: a mistyped path is an error, not a new database.
        if not os.path.isdir(os.path.join(args.path, "wal")):
            print(f"arcadego: no database at {args.path!r} (a database directory holds wal/)", file=sys.stderr)
            return 1
        # Reading commands open read-only: they work beside a process that
        # is writing the database, and cannot change it.
        read_only = args.command in ("describe", "info", "export", "scan", "sql")
        with arcadego.connect(args.path, auto_create=getattr(args, "create", False), read_only=read_only) as db:
            return _COMMANDS[args.command](db, args)
    except arcadego.Error as err:
        print(f"arcadego: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("arcadego: interrupted", file=sys.stderr)
        return 130


def _delete(db: arcadego.Database, args: argparse.Namespace) -> int:
    before = sum(db.devices(args.type)["rows"])
    db.delete(args.type, device=args.device, start=args.start, end=args.end)
    db.flush()  # made physical now: the files no longer hold the rows
    print(f"deleted {before - sum(db.devices(args.type)['rows']):,} rows of {args.type}")
    return 0


def _compact(db: arcadego.Database, args: argparse.Namespace) -> int:
    db.compact(args.type)
    files = sum(t["files"] for t in db.stats()["types"] if args.type in (None, t["name"]))
    print(f"compacted: {files} file{'s' if files != 1 else ''}")
    return 0


def _describe(db: arcadego.Database, args: argparse.Namespace) -> int:
    print(json.dumps(db.describe(args.type), indent=2))
    return 0


def _exec(db: arcadego.Database, args: argparse.Namespace) -> int:
    db.execute(sys.stdin.read() if args.script == "-" else args.script)
    return 0


def _info(db: arcadego.Database, args: argparse.Namespace) -> int:
    stats = db.stats()
    flushed = {t["name"]: t for t in stats["types"]}
    print(f"{'type':<24} {'devices':>10} {'rows':>14} {'files':>6} {'bytes':>14}")
    for name in db.types():
        devs = db.devices(name)
        t = flushed.get(name, {})
        print(f"{name:<24} {len(devs['device']):>10,} {sum(devs['rows']):>14,} {t.get('files', 0):>6} "
              f"{t.get('bytes', 0):>14,}")
    print(f"memtable {stats['memtable_bytes']:,} bytes, log {stats['wal_bytes']:,} bytes")
    return 0


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise arcadego.InvalidArgumentError("this command needs pyarrow: pip install pyarrow") from None
    return pyarrow


class _Progress:
    """A progress line on stderr: rows, MB/s (of Arrow data) and, when the
    total number of rows is known, percent and time left. Quiet when
    disabled or stderr is not a terminal (then only a final summary)."""

    def __init__(self, total_rows: int, enabled: bool) -> None:
        self.total = total_rows
        self.live = enabled and sys.stderr.isatty()
        self.start = time.perf_counter()
        self.rows = self.done = 0
        self.last = 0.0

    def update(self, rows: int, nbytes: int) -> None:
        self.rows += rows
        self.done += nbytes
        now = time.perf_counter()
        if not self.live or now - self.last < 0.2:
            return
        self.last = now
        elapsed = now - self.start
        rate = self.done / elapsed / 1e6 if elapsed else 0.0
        line = f"\r{self.rows:,} rows, {rate:.1f} MB/s"
        if self.total:
            frac = min(self.rows / self.total, 1.0)
            left = elapsed * (1 - frac) / frac if frac else 0.0
            line += f", {100 * frac:.0f}%, {left:.0f} s left"
        print(line, end="", file=sys.stderr, flush=True)

    def finish(self, what: str) -> None:
        elapsed = time.perf_counter() - self.start
        if self.live:
            print(file=sys.stderr)
        print(f"{what} {self.rows:,} rows in {elapsed:.1f} s", file=sys.stderr)


def _batches(pa: Any, path: str, fmt: str | None) -> Iterator[Any]:
    """The record batches of one file."""
    fmt = fmt or {".parquet": "parquet", ".pq": "parquet", ".csv": "csv", ".arrow": "arrow", ".feather": "arrow",
                  ".ipc": "arrow"}.get(os.path.splitext(path)[1].lower())
    if fmt == "parquet":
        import pyarrow.parquet as pq
        yield from pq.ParquetFile(path).iter_batches()
    elif fmt == "csv":
        import pyarrow.csv as pcsv
        yield from pcsv.open_csv(path)
    elif fmt == "arrow":
        import pyarrow.ipc as ipc
        try:
            reader = ipc.open_file(path)
            for i in range(reader.num_record_batches):
                yield reader.get_batch(i)
        except pa.ArrowInvalid:
            yield from ipc.open_stream(path)
    else:
        raise arcadego.InvalidArgumentError(f"{path!r}: unknown format (give --format parquet, csv or arrow)")


def _total_rows(path: str, fmt: str | None) -> int:
    """The rows of a Parquet file from its footer; 0 (unknown) otherwise."""
    if (fmt or os.path.splitext(path)[1].lower().lstrip(".")) in ("parquet", "pq"):
        import pyarrow.parquet as pq
        return int(pq.ParquetFile(path).metadata.num_rows)
    return 0


def _import(db: arcadego.Database, args: argparse.Namespace) -> int:
    """Every file in one transaction: all of them or, on an error or
    Ctrl-C, nothing. The batches are held by the transaction until it
    commits."""
    pa = _pyarrow()
    for f in args.files:
        if not os.path.isfile(f):
            raise arcadego.InvalidArgumentError(f"no file {f!r}")
    totals = [_total_rows(f, args.format) for f in args.files]
    progress = _Progress(sum(totals) if all(totals) else 0, not args.no_progress)
    tx = db.transaction()
    try:
        for f in args.files:
            for b in _batches(pa, f, args.format):
                if b.num_rows == 0:
                    continue
                if args.device_column is not None:
                    tx.insert(args.type, b, device_column=args.device_column)
                else:
                    tx.insert(args.type, b, device=args.device)
                progress.update(b.num_rows, b.nbytes)
        tx.commit()
    except BaseException:
        # Nothing of a failed or interrupted import is written.
        tx.rollback()
        if isinstance(sys.exc_info()[1], KeyboardInterrupt):
            print("\narcadego: interrupted: nothing was imported", file=sys.stderr)
        raise
    progress.finish("imported")
    return 0


def _export(db: arcadego.Database, args: argparse.Namespace) -> int:
    pa = _pyarrow()
    res = db.scan(args.type, device=args.device, start=args.start, end=args.end)
    reader = pa.RecordBatchReader.from_stream(res)
    # Plain strings for the device: a dictionary column is an Arrow detail
    # other tools need not see.
    fields = [pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type, f.nullable)
              for f in reader.schema]
    schema = pa.schema(fields)
    progress = _Progress(0, True)
    tmp = args.to + ".tmp"
    ext = os.path.splitext(args.to)[1].lower()
    if ext not in (".parquet", ".csv"):
        raise arcadego.InvalidArgumentError(f"--to {args.to!r}: give a .parquet or .csv file")
    try:
        if ext == ".parquet":
            import pyarrow.parquet as pq
            writer: Any = pq.ParquetWriter(tmp, schema)
        else:
            import pyarrow.csv as pcsv
            writer = pcsv.CSVWriter(tmp, schema)
        with writer:
            for b in reader:
                b = b.cast(schema)
                writer.write_batch(b)
                progress.update(b.num_rows, b.nbytes)
        os.replace(tmp, args.to)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    progress.finish("exported")
    return 0


def _scan(db: arcadego.Database, args: argparse.Namespace) -> int:
    pa = _pyarrow()
    rows = []
    for b in db.scan(args.type, device=args.device):
        rows.append(b)
        if sum(r.num_rows for r in rows) >= args.limit:
            break
    table = pa.Table.from_batches(rows) if rows else pa.table({})
    print(table.slice(0, args.limit).to_pandas().to_string() if table.num_rows else "(no rows)")
    return 0


def _sql(db: arcadego.Database, args: argparse.Namespace) -> int:
    try:
        import duckdb
    except ImportError:
        raise arcadego.InvalidArgumentError("sql needs DuckDB: pip install duckdb") from None
    _pyarrow()
    from . import duckdb as views

    con = duckdb.connect()
    # A view per type: a query reads the columns (and, where its filter
    # allows, the devices and times) it uses, not every type in full.
    views.attach(con, db)
    print(con.sql(args.query))
    return 0


_COMMANDS = {"describe": _describe, "exec": _exec, "info": _info, "import": _import, "export": _export,
             "scan": _scan, "sql": _sql, "delete": _delete, "compact": _compact}
