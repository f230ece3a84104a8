"""The cost of one call from Python into the library (`make bench`), by
how long the caller worked since its last call.

The call is arcadego_cancel of a handle that is not a database's (0),
which the library refuses after a lookup in its handle table: well under
a microsecond of work in Go, and nothing woken (a real cancel wakes what
waits on the database's context). Between two calls Python spins for a set time, as a loop of
point reads does between its calls. A call from a thread the Go runtime
did not start wakes the runtime from where the caller's work left it, so
it costs more after a longer gap; this is why a point read is one call
(arcadego_scan_first), not a stream's five. Median and p99 of 5,000 calls
per gap, printed, never asserted.

Usage: python tests/bench/bench_calls.py
"""

from __future__ import annotations

import time

import arcadego
from arcadego import _lib


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main() -> None:
    db = arcadego.connect(None)  # open, as in a loop of reads
    cancel = _lib.lib.arcadego_cancel
    print("| work in Python between two calls | a call into the library, p50 | p99 |")
    print("|---|---|---|")
    for gap_us in (0, 10, 30, 100, 300):
        times = []
        for _ in range(5000):
            if gap_us:
                spin(gap_us / 1e6)
            t0 = time.perf_counter()
            if cancel(None) == 0:
                raise SystemExit("arcadego_cancel took handle 0")
            times.append(time.perf_counter() - t0)
        times.sort()
        p50, p99 = times[len(times) // 2], times[int(len(times) * 0.99)]
        print(f"| {gap_us} µs | {p50 * 1e6:.2f} µs | {p99 * 1e6:.2f} µs |")
    db.close()


if __name__ == "__main__":
    main()
