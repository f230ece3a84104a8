"""One-device reads from Python, as a long-running reader makes them:
rounds of ``db.scan(type, device=name).to_arrow()`` of random devices of
a type, each round's p50, p90 and p99 (`go run ./tests/bench/pointread`
times the same reads in Go, without what Python adds).

Usage: python tests/bench/point_reads.py DB [--type M] [--reads 5000]
[--rounds 3] [--seed 1] [--warm]

It opens the database read-only; `python tests/bench/bench_devices.py
--dir DIR` leaves its million devices in DIR/arcadego. ``--warm`` reads
every file of the database once first, so that the reads find it in the
page cache (a machine that pages out idle page cache puts a database
written minutes before partly back on disk). Figures are printed, never
asserted.
"""

from __future__ import annotations

import argparse
import os
import random
import time

import arcadego


def read_all(path: str) -> None:
    """Read every file under path once, into the page cache."""
    for root, _, files in os.walk(path):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                while f.read(1 << 20):
                    pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db")
    ap.add_argument("--type", default="M")
    ap.add_argument("--reads", type=int, default=5000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--warm", action="store_true")
    args = ap.parse_args()
    if args.reads <= 0 or args.rounds <= 0:
        ap.error("--reads and --rounds must be positive")
    if args.warm:
        read_all(args.db)
    db = arcadego.connect(args.db, read_only=True)
    try:
        devices = db.devices_arrow(args.type).column("device").to_pylist()
        if not devices:
            raise SystemExit(f"type {args.type!r} has no devices")
        print(f"{len(devices):,} devices of {args.type}; {args.rounds} rounds of {args.reads:,} reads of one random device")
        rng = random.Random(args.seed)
        for r in range(args.rounds):
            took = []
            for _ in range(args.reads):
                name = devices[rng.randrange(len(devices))]
                t0 = time.perf_counter_ns()
                table = db.scan(args.type, device=name).to_arrow()
                took.append(time.perf_counter_ns() - t0)
                if table.num_rows == 0:
                    raise SystemExit(f"device {name!r}: no rows")
            took.sort()
            n = len(took)
            print(f"round {r + 1}: p50 {took[n // 2] / 1e3:.1f} µs  p90 {took[n * 9 // 10] / 1e3:.1f} µs  "
                  f"p99 {took[n * 99 // 100] / 1e3:.1f} µs")
    finally:
        db.close()


if __name__ == "__main__":
    main()
