#!/usr/bin/env bash
# build/lib.sh OUTDIR [go build flags...]
#
# Builds OUTDIR/libarcadego.so (default OUTDIR: build/out) from ./capi as a
# stripped c-shared library that exports only the arcadego_* symbols
# (capi/exports.map), copies capi/arcadego.h beside it, and checks the two
# against each other: every function declared in the header is exported,
# and nothing but arcadego_* is. Extra arguments go to `go build`; the
# environment passes through, so
#   GOEXPERIMENT=cgocheck2 build/lib.sh build/out-cgocheck2
# builds the variant that checks every pointer passed between Go and C.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/build/out}"
shift || true
mkdir -p "$out"
out="$(cd "$out" && pwd)"
lib="$out/libarcadego.so"

cd "$root"
# One version, the package's: injected into the library at build time.
version="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/arcadego/_version.py)"
if [ -z "$version" ]; then
	echo "build/lib.sh: no __version__ in python/arcadego/_version.py" >&2
	exit 1
fi
# Packed relative relocations (DT_RELR) where the toolchain has them: a
# position-independent Go library carries a million bytes of relocations
# otherwise. The linker keeps the usual form when the C library cannot load
# the packed one.
extld="-Wl,--version-script=$root/capi/exports.map -Wl,-soname,libarcadego.so"
if printf 'int main(void) { return 0; }\n' | "${CC:-cc}" -x c - -o /dev/null -Wl,-z,pack-relative-relocs 2>/dev/null; then
	extld="$extld -Wl,-z,pack-relative-relocs"
fi
CGO_ENABLED=1 go build -buildmode=c-shared -trimpath \
	-ldflags "-s -w -X main.version=$version '-extldflags=$extld'" \
	"$@" -o "$lib" ./capi
rm -f "$out/libarcadego.h" # cgo's generated header; ours is arcadego.h
cp capi/arcadego.h "$out/arcadego.h"

# Functions declared in the header: "type arcadego_name(" at the start of a
# declaration, after comments are stripped.
declared="$(sed -e 's://.*$::' capi/arcadego.h |
	perl -0777 -pe 's:/\*.*?\*/::gs' |
	grep -oE '\barcadego_[a-z_]+[[:space:]]*\(' | sed -E 's/[[:space:]]*\($//' | sort -u)"
exported="$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u)"

status=0
missing="$(comm -23 <(echo "$declared") <(echo "$exported"))"
if [ -n "$missing" ]; then
	echo "lib.sh: declared in arcadego.h but not exported by $lib:" >&2
	echo "$missing" | sed 's/^/  /' >&2
	status=1
fi
extra="$(echo "$exported" | grep -vxF -f <(echo "$declared") || true)"
if [ -n "$extra" ]; then
	echo "lib.sh: exported by $lib but not declared in arcadego.h:" >&2
	echo "$extra" | sed 's/^/  /' >&2
	status=1
fi
if [ "$status" -ne 0 ]; then
	rm -f "$lib"
	exit "$status"
fi
echo "built $lib ($(echo "$declared" | wc -l) functions, $(du -h "$lib" | cut -f1))"
