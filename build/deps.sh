#!/usr/bin/env bash
# build/deps.sh: install the system packages the build and tests need, if
# missing: a C compiler (cgo, the C test), valgrind (the C test), pkg-config
# (the README's C build line) and
# Python's venv module. Go modules come from the Go module proxy and
# Python packages from PyPI (build/pyenv.sh).
set -euo pipefail
missing=()
command -v gcc >/dev/null || missing+=(gcc)
command -v valgrind >/dev/null || missing+=(valgrind)
command -v nm >/dev/null || missing+=(binutils)
command -v pkg-config >/dev/null || missing+=(pkgconf)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
command -v go >/dev/null || missing+=(golang-go)
if ((${#missing[@]})); then
  echo "build/deps.sh: installing ${missing[*]}"
  if [[ $(id -u) == 0 ]]; then sudo=(); else sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
fi

# go.mod names the Go it needs. A Go of 1.21 or later can fetch that
# toolchain itself from the module proxy (GOTOOLCHAIN=auto); an older one
# (Debian 12's golang-go is 1.19) cannot build the module: say so rather
# than fail later.
need="$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$(dirname "$0")/../go.mod")"
have="$(go env GOVERSION 2>/dev/null | sed 's/^go//; s/[^0-9.].*$//')"
minor() { echo "$1" | cut -d. -f2; }
if [[ -z "$have" || $(minor "$have") -lt 21 ]]; then
  echo "build/deps.sh: Go ${have:-(none)} cannot build this module, which needs Go $need;" \
    "install Go $need, or Go 1.21 or later with GOTOOLCHAIN=auto (which fetches $need from the module proxy)" >&2
  exit 1
fi
