#!/usr/bin/env bash
# build/deps.sh: install the system packages the build and tests need, if
# missing: a C compiler (cgo, the C test), valgrind (the C test) and
# Python's venv module. Go modules come from the Go module proxy and
# Python packages from PyPI (build/pyenv.sh).
set -euo pipefail
missing=()
command -v gcc >/dev/null || missing+=(gcc)
command -v valgrind >/dev/null || missing+=(valgrind)
command -v nm >/dev/null || missing+=(binutils)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
command -v go >/dev/null || missing+=(golang-go)
if ((${#missing[@]})); then
  echo "build/deps.sh: installing ${missing[*]}"
  if [[ $(id -u) == 0 ]]; then sudo=(); else sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
fi
