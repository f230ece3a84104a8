"""The README's Python quickstart runs as written (in a fresh directory),
and its C build line builds and runs the C example."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _block(after: str, lang: str) -> str:
    section = README[README.index(after):]
    m = re.search(rf"```{lang}\n(.*?)```", section, re.S)
    assert m, f"no {lang} block after {after!r}"
    return m.group(1)


def test_python_quickstart_runs(tmp_path: Path) -> None:
    pytest.importorskip("pandas", reason="the quickstart prints to_pandas()")
    code = _block("## Quickstart (Python)", "python")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "s-1" in out.stdout and "Meter" in out.stdout
    assert (tmp_path / "data").is_dir()


def test_c_build_line_builds_the_example(tmp_path: Path) -> None:
    lib = ROOT / "build" / "out" / "libarcadego.so"
    if shutil.which("gcc") is None or not lib.exists():
        pytest.skip("needs gcc and build/out (make lib); make test-c covers the C example too")
    line = next(ln for ln in _block("`tests/c/smoke.c` is a complete program", "sh").splitlines() if ln.startswith("gcc"))
    line = line.replace("-o smoke", f"-o {tmp_path / 'smoke'}").replace("./smoke", str(tmp_path / "smoke"))
    out = subprocess.run(["bash", "-c", line], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PWD": str(ROOT)})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "all checks passed" in out.stdout


def test_c_program_builds_against_the_installed_package(tmp_path: Path) -> None:
    """A C user of the wheel needs nothing but the package: the README's
    pkg-config lines build and run a program, with no rpath."""
    import arcadego

    if shutil.which("gcc") is None or shutil.which("pkg-config") is None:
        pytest.skip("needs gcc and pkg-config (build/deps.sh installs both); make test-c covers the C example too")
    assert os.path.isfile(os.path.join(arcadego.get_include(), "arcadego.h"))
    block = _block("ships\nthe header, the library", "sh")
    (tmp_path / "prog.c").write_text('#include <stdio.h>\n#include "arcadego.h"\n'
                                     'int main(void) { puts(arcadego_version()); return 0; }\n')
    script = block.replace("python -c", f"{sys.executable} -c")
    out = subprocess.run(["bash", "-ec", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == arcadego.__version__
    dynamic = subprocess.run(["readelf", "-d", str(tmp_path / "prog")], capture_output=True, text=True).stdout
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic
    assert "libarcadego.so" in dynamic


def test_go_quickstart_runs(tmp_path: Path) -> None:
    """The README's Go program builds against this checkout and prints its rows."""
    go = shutil.which("go") or ("/usr/local/go/bin/go" if os.path.exists("/usr/local/go/bin/go") else None)
    if go is None:
        pytest.skip("needs the Go toolchain (make test has it)")
    (tmp_path / "main.go").write_text(_block("The engine is usable directly from Go", "go"))
    need = re.search(r"^go (\S+)$", (ROOT / "go.mod").read_text(), re.M)
    assert need
    (tmp_path / "go.mod").write_text(f"module readme\n\ngo {need.group(1)}\n\n"
                                     "require github.com/arcadego/arcadego v0.0.0\n\n"
                                     f"replace github.com/arcadego/arcadego => {ROOT}\n")
    shutil.copy(ROOT / "go.sum", tmp_path / "go.sum")
    env = {**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
    out = subprocess.run([go, "run", "."], cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[:2] == ["d1 1 10", "d1 2 <nil>"]
    assert lines[2].startswith("2 rows: schema:"), lines  # arrowbridge.ToRecord of the batch
    assert "device: type=dictionary<values=utf8, indices=int32" in out.stdout and "k: type=int64, nullable" in out.stdout
    assert (tmp_path / "data" / "MANIFEST").is_file()
