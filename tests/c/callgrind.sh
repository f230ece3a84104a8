#!/usr/bin/env bash
# tests/c/callgrind.sh LIBDIR [new|existing] [PER_TX]
#
# Counts the instructions of one one-row insert through the C ABI
# (tests/c/bench_insert.c's loop, into a new device each time or one of
# 1,000; PER_TX tablets a transaction, 0 = each its own commit) with
# valgrind's callgrind: the runs of 10,000 and of 30,000 inserts, their
# difference over 20,000, so that start-up and close cancel out. The Go
# collector is off and preemption signals too, so the count is the same
# from run to run; timings are bench.sh's. Needs valgrind.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
libdir="$(cd "${1:?usage: tests/c/callgrind.sh LIBDIR [new|existing] [PER_TX]}" && pwd)"
devices="${2:-new}"
per_tx="${3:-0}"
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

gcc -std=c11 -Wall -Wextra -Werror -O2 -I "$libdir" "$here/bench_insert.c" \
	-L "$libdir" -larcadego -Wl,-rpath,"$libdir" -o "$work/bench_insert"
count() {
	GODEBUG=asyncpreemptoff=1 GOGC=off GOMEMLIMIT=100GiB \
		valgrind --tool=callgrind --callgrind-out-file="$work/out.$1" \
		"$work/bench_insert" loop "$devices" "$per_tx" "$1" 2>&1 >/dev/null |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
small=$(count 10000)
large=$(count 30000)
echo "$devices devices, $per_tx tablets a transaction: $(((large - small) / 20000)) instructions an insert"
