"""The ``arcadego`` command: a small CLI over a database directory.

    arcadego init PATH              create an empty database
    arcadego describe PATH [TYPE]   print the schema as JSON
    arcadego exec PATH SCRIPT       run a DDL script ("-" reads it from stdin)

No command but init creates a database: a mistyped path is an error.
    arcadego version                print the package and library versions
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

import arcadego


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status."""
    parser = argparse.ArgumentParser(prog="arcadego", description="arcadego database tool")
    sub = parser.add_subparsers(dest="command", required=True)
    i = sub.add_parser("init", help="create an empty database")
    i.add_argument("path")
    d = sub.add_parser("describe", help="print the schema as JSON")
    d.add_argument("path")
    d.add_argument("type", nargs="?", default=None)
    e = sub.add_parser("exec", help="run a DDL script as one transaction")
    e.add_argument("path")
    e.add_argument("script", help='the script text, or "-" to read it from stdin')
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
        with arcadego.connect(args.path) as db:
            if args.command == "describe":
                print(json.dumps(db.describe(args.type), indent=2))
            else:
                script = sys.stdin.read() if args.script == "-" else args.script
                db.execute(script)
    except arcadego.Error as err:
        print(f"arcadego: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    return 0
