"""The in-tree PEP 517 backend: wheel layout, RECORD, tags, metadata, sdist."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

import arcadego

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def backend() -> ModuleType:
    spec = importlib.util.spec_from_file_location("arcadego_build", ROOT / "build" / "backend" / "arcadego_build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_wheel(backend: ModuleType, tmp_path: Path) -> None:
    name = backend.build_wheel(str(tmp_path), {"lib": arcadego.library_path()})
    assert name == f"arcadego-{arcadego.__version__}-py3-none-manylinux_2_34_x86_64.whl"
    with zipfile.ZipFile(tmp_path / name) as z:
        names = set(z.namelist())
        di = f"arcadego-{arcadego.__version__}.dist-info"
        for required in ("arcadego/__init__.py", "arcadego/py.typed", "arcadego/libarcadego.so",
                         "arcadego/pytest_plugin.py", f"{di}/METADATA", f"{di}/WHEEL",
                         f"{di}/entry_points.txt", f"{di}/RECORD"):
            assert required in names
        assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
        record = z.read(f"{di}/RECORD").decode().splitlines()
        listed = {}
        for line in record:
            path, digest, size = line.rsplit(",", 2)
            listed[path] = (digest, size)
        assert set(listed) == names
        for path, (digest, size) in listed.items():
            if path.endswith("RECORD"):
                assert digest == "" and size == ""
                continue
            data = z.read(path)
            want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={want}" and int(size) == len(data), path
        assert z.getinfo("arcadego/libarcadego.so").external_attr >> 16 & 0o111
        wheel = z.read(f"{di}/WHEEL").decode()
        assert "Root-Is-Purelib: false" in wheel and "Tag: py3-none-manylinux_2_34_x86_64" in wheel
        meta = z.read(f"{di}/METADATA").decode()
        assert "Requires-Dist: numpy" in meta
        assert 'Requires-Dist: pyarrow>=14; extra == "arrow"' in meta
        assert 'Requires-Dist: pandas>=2.0; extra == "pandas"' in meta
        assert "Provides-Extra: all" in meta
        assert "Requires-Python: >=3.11" in meta
        assert "Project-URL: Source, https://github.com/arcadego/arcadego" in meta
        assert "arcadego/include/arcadego.h" in names and "arcadego/pkgconfig/arcadego.pc" in names
        pc = z.read("arcadego/pkgconfig/arcadego.pc").decode()
        assert f"Version: {arcadego.__version__}" in pc and "Libs: -L${libdir} -larcadego" in pc
        entry = z.read(f"{di}/entry_points.txt").decode()
        assert "arcadego = arcadego.pytest_plugin" in entry.split("[pytest11]")[1]
        assert "arcadego = arcadego._cli:main" in entry.split("[console_scripts]")[1]


def test_prepare_metadata_matches_wheel(backend: ModuleType, tmp_path: Path) -> None:
    di = backend.prepare_metadata_for_build_wheel(str(tmp_path))
    assert di == f"arcadego-{arcadego.__version__}.dist-info"
    assert (tmp_path / di / "METADATA").read_text().startswith("Metadata-Version: 2.1\nName: arcadego\n")


def test_sdist(backend: ModuleType, tmp_path: Path) -> None:
    name = backend.build_sdist(str(tmp_path))
    with tarfile.open(tmp_path / name) as t:
        names = set(t.getnames())
    base = f"arcadego-{arcadego.__version__}"
    for required in ("pyproject.toml", "go.mod", "go.sum", "PKG-INFO", "capi/arcadego.h",
                     "python/arcadego/__init__.py", "build/backend/arcadego_build.py"):
        assert f"{base}/{required}" in names
    assert not any(n.endswith((".so", ".pyc")) for n in names)


def test_toml_fallback_parser_reads_our_pyproject(backend: ModuleType) -> None:
    text = (ROOT / "pyproject.toml").read_text()
    parsed = backend._parse_toml_subset(text)
    if sys.version_info >= (3, 11):
        import tomllib

        assert parsed == tomllib.loads(text)
    assert parsed["project"]["optional-dependencies"]["arrow"] == ["pyarrow>=14"]


def test_missing_prebuilt_library_is_an_error(backend: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="does not exist"):
        backend.build_wheel(str(tmp_path), {"lib": str(tmp_path / "nope.so")})


def test_wheel_tag_follows_the_glibc_the_library_needs(backend: ModuleType, tmp_path: Path) -> None:
    lib = tmp_path / "libfake.so"
    lib.write_bytes(b"\x7fELF\0GLIBC_2.2.5\0GLIBC_2.17\0GLIBC_2.28\0other\0")
    assert backend._glibc_needed(str(lib)) == (2, 28)
    if sys.platform.startswith("linux"):
        assert backend._tag(str(lib)).startswith("py3-none-manylinux_2_28_")
    old = tmp_path / "libold.so"
    old.write_bytes(b"\x7fELF\0no versions here\0")
    assert backend._glibc_needed(str(old)) == (2, 17)


@pytest.mark.parametrize("version, toolchain, ok", [
    ("go1.19.8", "", False),          # before toolchain switching: cannot fetch 1.26
    ("go1.22.1", "local", False),     # may not fetch it
    ("go1.22.1", "auto", True),       # fetches the toolchain go.mod names
    ("go1.26.0", "local", True),
    ("go1.27rc1", "local", True),
])
def test_go_toolchain_check(backend: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                            version: str, toolchain: str, ok: bool) -> None:
    """A Go too old for go.mod is refused before the build, naming both
    versions and where to get Go; one that can fetch the toolchain is not."""
    fake = tmp_path / "go"
    fake.write_text(f"#!/bin/sh\necho {version}\necho {toolchain or 'auto'}\n")
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "GOTOOLCHAIN": toolchain}
    monkeypatch.setenv("PATH", env["PATH"])
    if ok:
        backend._check_go("1.26", env)
        return
    with pytest.raises(RuntimeError, match=r"needs go 1\.26 or newer; `go` on PATH is go 1\.(19|22)"):
        backend._check_go("1.26", env)
