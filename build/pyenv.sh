#!/usr/bin/env bash
# build/pyenv.sh VENV [--no-pyarrow]
#
# Creates (or reuses) the virtualenv VENV, installs arcadego into it with
# `pip install .` (the PEP 517 backend runs the Go build and puts
# libarcadego.so into the package), then the test dependencies:
#   default:       pytest numpy pandas pyarrow polars duckdb, and deltalake
#                  (pinned: the version whose reads of our Delta tables
#                  tests/python/test_delta_interop.py checks)
#   --no-pyarrow:  pytest numpy   (pyarrow is removed if it was there)
#
# ARCADEGO_PREBUILT_LIBRARY=path/to/libarcadego.so skips the Go build.
# PYTHON selects the interpreter (default python3).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: build/pyenv.sh VENV [--no-pyarrow]" >&2
  exit 2
fi
venv=$1
no_pyarrow=0
if [[ ${2:-} == --no-pyarrow ]]; then
  no_pyarrow=1
elif [[ -n ${2:-} ]]; then
  echo "build/pyenv.sh: unknown option $2" >&2
  exit 2
fi

# Readers of the Delta Lake tables a flush writes (delta-rs; polars.read_delta
# goes through it too).
DELTALAKE_VERSION=1.6.6

root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}

if [[ ! -x $venv/bin/python ]]; then
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)

if [[ $no_pyarrow == 1 ]]; then
  "${pip[@]}" install pytest numpy
  "${pip[@]}" uninstall -y pyarrow pandas polars duckdb >/dev/null 2>&1 || true
else
  "${pip[@]}" install pytest numpy pandas pyarrow polars duckdb "deltalake==$DELTALAKE_VERSION"
fi
# Reinstall the package itself every time: the sources may have changed.
"${pip[@]}" install --force-reinstall --no-deps "$root"
"$venv/bin/python" -c "import arcadego; print('arcadego', arcadego.__version__, 'from', arcadego.library_path())"
