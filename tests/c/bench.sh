#!/usr/bin/env bash
# tests/c/bench.sh LIBDIR [existing|new|tx]
#
# Builds tests/c/bench_insert.c with gcc -O2 against LIBDIR/arcadego.h and
# LIBDIR/libarcadego.so and runs it: the fixed cost of a small insert
# through the C ABI.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
libdir="$(cd "${1:?usage: tests/c/bench.sh LIBDIR}" && pwd)"
bin="$(mktemp -d)/bench_insert"
trap 'rm -rf "$(dirname "$bin")"' EXIT

gcc -std=c11 -Wall -Wextra -Werror -O2 -I "$libdir" "$here/bench_insert.c" \
	-L "$libdir" -larcadego -Wl,-rpath,"$libdir" -o "$bin"
"$bin" "${@:2}"
