#!/usr/bin/env bash
# tests/c/run.sh LIBDIR
#
# Builds tests/c/smoke.c with plain gcc against LIBDIR/arcadego.h and
# LIBDIR/libarcadego.so (as build/lib.sh lays them out), runs it, then runs
# it again under valgrind: any memory error in the C caller or libc and any
# definitely lost block fails; the Go runtime's own noise inside the
# library is suppressed (go-runtime.supp). Needs gcc and valgrind
# (Debian: apt-get install gcc valgrind).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for tool in gcc valgrind; do
	if ! command -v "$tool" >/dev/null; then
		echo "tests/c: $tool is missing (Debian: apt-get install -y $tool)" >&2
		exit 1
	fi
done
libdir="$(cd "${1:?usage: tests/c/run.sh LIBDIR}" && pwd)"
bin="$(mktemp -d)/smoke"
trap 'rm -rf "$(dirname "$bin")"' EXIT

gcc -std=c11 -Wall -Wextra -Werror -g -O1 -I "$libdir" "$here/smoke.c" \
	-L "$libdir" -larcadego -Wl,-rpath,"$libdir" -o "$bin"

echo "== smoke"
"$bin"

echo "== smoke under valgrind"
valgrind --quiet --error-exitcode=1 --leak-check=full \
	--errors-for-leak-kinds=definite --show-leak-kinds=definite \
	--suppressions="$here/go-runtime.supp" "$bin"
echo "tests/c: 2 passed, 0 failed"
