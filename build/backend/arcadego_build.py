"""A small PEP 517 build backend for arcadego (no setuptools needed).

build_wheel runs the Go build of the shared library (build/lib.sh OUTDIR,
or `go build -buildmode=c-shared` directly when the script is missing) and
writes a wheel holding python/arcadego/* plus libarcadego.so, tagged
py3-none-manylinux_<glibc the library needs>_<arch>: pure Python over
ctypes, so any CPython 3, on the glibc the library needs (2.34 when built
on Debian 12, read from its symbol versions).

Config settings (pip install . --config-settings=KEY=VALUE):
  lib=PATH    use this prebuilt libarcadego.so instead of building
              (also: environment variable ARCADEGO_PREBUILT_LIBRARY)

Metadata comes from pyproject.toml's [project] table; the version from
python/arcadego/_version.py.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from typing import Any

__all__ = [
    "get_requires_for_build_wheel",
    "get_requires_for_build_sdist",
    "get_requires_for_build_editable",
    "prepare_metadata_for_build_wheel",
    "prepare_metadata_for_build_editable",
    "build_wheel",
    "build_sdist",
    "build_editable",
]

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGE = "arcadego"
PACKAGE_DIR = os.path.join(ROOT, "python", PACKAGE)
LIBRARY = "libarcadego.so"
HEADER = os.path.join(ROOT, "capi", "arcadego.h")

# What an sdist carries: everything needed to build the wheel.
SDIST_INCLUDE = ["pyproject.toml", "README.md", "LICENSE", "go.mod", "go.sum",
                 "core", "arrowbridge", "capi", "cmd", "build", "python"]
SDIST_EXCLUDE_DIRS = {"__pycache__", "out", "out-cgocheck2", ".git", ".pytest_cache"}
SDIST_EXCLUDE_SUFFIXES = (".so", ".pyc", ".whl", ".a", ".o")


# ---------------------------------------------------------------------------
# pyproject.toml


def _parse_toml_subset(text: str) -> dict[str, Any]:
    """Enough TOML for our pyproject.toml on Pythons without tomllib:
    [a.b] tables, key = "string" | true/false | ["list", "of", "strings"]
    (lists may span lines), and # comments."""
    data: dict[str, Any] = {}
    table = data
    pending = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip() if '"' not in raw else raw.strip()
        if pending:
            pending += " " + line
            if "]" not in line:
                continue
            line, pending = pending, ""
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"\[([^\]]+)\]", line)
        if m:
            table = data
            for part in m.group(1).split("."):
                table = table.setdefault(part.strip().strip('"'), {})
            continue
        key, _, value = line.partition("=")
        key, value = key.strip().strip('"'), value.strip()
        if value.startswith("[") and "]" not in value:
            pending = line
            continue
        if value.startswith("["):
            table[key] = re.findall(r'"((?:[^"\\]|\\.)*)"', value)
        elif value in ("true", "false"):
            table[key] = value == "true"
        elif value.startswith("{"):
            table[key] = dict(re.findall(r'(\w+)\s*=\s*"([^"]*)"', value))
        else:
            table[key] = value.strip('"')
    return data


def _pyproject() -> dict[str, Any]:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        raw = f.read()
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        return _parse_toml_subset(raw.decode("utf-8"))
    return tomllib.loads(raw.decode("utf-8"))


def _version() -> str:
    with open(os.path.join(PACKAGE_DIR, "_version.py"), encoding="utf-8") as f:
        m = re.search(r'__version__\s*=\s*"([^"]+)"', f.read())
    if not m:
        raise RuntimeError("no __version__ in python/arcadego/_version.py")
    return m.group(1)


def _metadata() -> str:
    project = _pyproject()["project"]
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {_version()}",
        f"Summary: {project.get('description', '')}",
    ]
    if "requires-python" in project:
        lines.append(f"Requires-Python: {project['requires-python']}")
    license = project.get("license")
    if isinstance(license, dict) and "text" in license:
        lines.append(f"License: {license['text']}")
    for url_name, url in project.get("urls", {}).items():
        lines.append(f"Project-URL: {url_name}, {url}")
    for req in project.get("dependencies", []):
        lines.append(f"Requires-Dist: {req}")
    for extra, reqs in project.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for req in reqs:
            marker = f'extra == "{extra}"'
            if ";" in req:
                req, _, own = req.partition(";")
                marker = f"({own.strip()}) and {marker}"
            lines.append(f"Requires-Dist: {req.strip()}; {marker}")
    for c in project.get("classifiers", []):
        lines.append(f"Classifier: {c}")
    body = ""
    readme = project.get("readme")
    if isinstance(readme, str) and os.path.exists(os.path.join(ROOT, readme)):
        lines.append("Description-Content-Type: text/markdown")
        with open(os.path.join(ROOT, readme), encoding="utf-8") as f:
            body = f.read()
    return "\n".join(lines) + "\n\n" + body


def _entry_points() -> str:
    project = _pyproject()["project"]
    groups: dict[str, dict[str, str]] = {}
    if project.get("scripts"):
        groups["console_scripts"] = project["scripts"]
    for group, entries in project.get("entry-points", {}).items():
        groups[group] = entries
    out = []
    for group, entries in groups.items():
        out.append(f"[{group}]")
        out.extend(f"{k} = {v}" for k, v in entries.items())
        out.append("")
    return "\n".join(out)


def _glibc_needed(lib_path: str | None) -> tuple[int, int]:
    """The newest GLIBC_x.y symbol version the library needs (its version
    strings are plain text in the ELF file); (2, 17) when none is found."""
    best = (2, 17)
    if lib_path is None or not os.path.exists(lib_path):
        return (2, 34)  # what a build on Debian 12 needs
    with open(lib_path, "rb") as fh:
        for m in re.finditer(rb"GLIBC_(\d+)\.(\d+)", fh.read()):
            best = max(best, (int(m.group(1)), int(m.group(2))))
    return best


def _platform_tag(lib_path: str | None = None) -> str:
    if sys.platform.startswith("linux"):
        machine = platform.machine().lower()
        machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
        major, minor = _glibc_needed(lib_path)
        return f"manylinux_{major}_{minor}_{machine}"
    import sysconfig

    return re.sub(r"[-.]", "_", sysconfig.get_platform())


def _tag(lib_path: str | None = None) -> str:
    """The wheel tag: any CPython 3 (ctypes, no extension module), on the
    platform and glibc the built library needs."""
    return f"py3-none-{_platform_tag(lib_path)}"


def _dist_info_name() -> str:
    return f"{PACKAGE}-{_version()}.dist-info"


def _wheel_file(tag: str) -> str:
    return ("Wheel-Version: 1.0\n"
            f"Generator: arcadego_build {_version()}\n"
            "Root-Is-Purelib: false\n"
            f"Tag: {tag}\n")


# ---------------------------------------------------------------------------
# the Go build


def _build_library(out_dir: str, config_settings: dict[str, Any] | None) -> str:
    settings = config_settings or {}
    prebuilt = settings.get("lib") or os.environ.get("ARCADEGO_PREBUILT_LIBRARY")
    if prebuilt:
        path = prebuilt if os.path.isabs(prebuilt) else os.path.join(ROOT, prebuilt)
        if not os.path.isfile(path):
            raise RuntimeError(f"prebuilt library {path} does not exist")
        return path
    need = _go_mod_version()
    if shutil.which("go") is None and not os.path.exists("/usr/local/go/bin/go"):
        raise RuntimeError(f"building arcadego needs the Go toolchain (go {need} or newer, from "
                           "https://go.dev/dl/) on PATH, and a C compiler (cgo)")
    env = dict(os.environ)
    env.setdefault("CGO_ENABLED", "1")
    if shutil.which("go") is None:
        env["PATH"] = "/usr/local/go/bin" + os.pathsep + env.get("PATH", "")
    _check_go(need, env)
    script = os.path.join(ROOT, "build", "lib.sh")
    if os.path.exists(script):
        cmd = ["bash", script, out_dir]
    else:
        cmd = ["go", "build", "-buildmode=c-shared", "-trimpath", f"-ldflags=-s -w -X main.version={_version()}",
               "-o", os.path.join(out_dir, LIBRARY), "./capi"]
    print("arcadego_build: " + " ".join(cmd), file=sys.stderr, flush=True)
    try:
        subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=sys.stderr)
    except subprocess.CalledProcessError as e:
        raise RuntimeError(f"the Go build of {LIBRARY} failed (exit status {e.returncode}); "
                           "its output is above") from None
    path = os.path.join(out_dir, LIBRARY)
    if not os.path.isfile(path):
        raise RuntimeError(f"the Go build did not produce {path}")
    return path


def _go_mod_version() -> str:
    """The Go version go.mod's `go` line asks for, e.g. "1.26"."""
    with open(os.path.join(ROOT, "go.mod"), encoding="utf-8") as f:
        m = re.search(r"^go\s+(\d+\.\d+(?:\.\d+)?)\s*$", f.read(), re.M)
    if not m:
        raise RuntimeError("go.mod has no `go` line")
    return m.group(1)


def _version_tuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3])


def _check_go(need: str, env: dict[str, str]) -> None:
    """Refuse, with a message that says what to install, a Go toolchain
    that cannot build go.mod: older than it asks for, unless it is 1.21 or
    newer and may fetch the toolchain go.mod names (GOTOOLCHAIN=auto)."""
    try:
        out = subprocess.run(["go", "env", "GOVERSION", "GOTOOLCHAIN"], env={**env, "GOTOOLCHAIN": "local"},
                             capture_output=True, text=True, check=True, timeout=60).stdout.split()
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError(f"could not run `go env` ({e}); building arcadego needs go {need} or newer") from None
    have = out[0].removeprefix("go") if out else "?"
    toolchain = env.get("GOTOOLCHAIN") or (out[1] if len(out) > 1 else "")
    if not have[:1].isdigit() or _version_tuple(have) >= _version_tuple(need):
        return
    if _version_tuple(have) >= (1, 21) and not toolchain.startswith("local"):
        return  # go fetches the toolchain go.mod names from the module proxy
    raise RuntimeError(f"building arcadego needs go {need} or newer; `go` on PATH is go {have}"
                       + (" with GOTOOLCHAIN=local" if _version_tuple(have) >= (1, 21) else "")
                       + f". Install go {need} from https://go.dev/dl/ (or, with go 1.21 or newer, "
                       "set GOTOOLCHAIN=auto to let it fetch the toolchain)")


# ---------------------------------------------------------------------------
# wheels


def _date_time() -> tuple[int, int, int, int, int, int]:
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01
    return time.gmtime(max(epoch, 315532800))[:6]


class _WheelWriter:
    """Writes files into a wheel and keeps the RECORD."""

    def __init__(self, path: str) -> None:
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.records: list[str] = []
        self.date_time = _date_time()

    def add(self, arcname: str, data: bytes, mode: int = 0o644) -> None:
        info = zipfile.ZipInfo(arcname, date_time=self.date_time)
        info.external_attr = (0o100000 | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self, record_name: str) -> None:
        self.records.append(f"{record_name},,")
        info = zipfile.ZipInfo(record_name, date_time=self.date_time)
        info.external_attr = (0o100644) << 16
        self.zip.writestr(info, "\n".join(self.records) + "\n")
        self.zip.close()


def _pkg_config() -> str:
    """arcadego.pc, relative to its own directory (pkg-config's pcfiledir),
    so that it holds wherever the package is installed."""
    return ("prefix=${pcfiledir}/..\n"
            "includedir=${prefix}/include\n"
            "libdir=${prefix}\n\n"
            "Name: arcadego\n"
            "Description: Embedded Arrow-native store for wide time series and typed documents\n"
            f"Version: {_version()}\n"
            "Cflags: -I${includedir}\n"
            "Libs: -L${libdir} -larcadego\n")


def _package_files() -> list[str]:
    files = []
    for name in sorted(os.listdir(PACKAGE_DIR)):
        full = os.path.join(PACKAGE_DIR, name)
        if os.path.isfile(full) and (name.endswith(".py") or name == "py.typed"):
            files.append(name)
    return files


def _write_dist_info(w: _WheelWriter, tag: str) -> None:
    di = _dist_info_name()
    w.add(f"{di}/METADATA", _metadata().encode("utf-8"))
    w.add(f"{di}/WHEEL", _wheel_file(tag).encode())
    w.add(f"{di}/entry_points.txt", _entry_points().encode())
    w.add(f"{di}/top_level.txt", f"{PACKAGE}\n".encode())


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: dict[str, Any] | None = None) -> str:
    di = _dist_info_name()
    path = os.path.join(metadata_directory, di)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(path, "WHEEL"), "w") as f:
        f.write(_wheel_file(_tag()))
    with open(os.path.join(path, "entry_points.txt"), "w") as f:
        f.write(_entry_points())
    return di


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    """Build the library and write the wheel; returns its file name."""
    with tempfile.TemporaryDirectory(prefix="arcadego-build-") as tmp:
        lib_path = _build_library(tmp, config_settings)
        tag = _tag(lib_path)
        name = f"{PACKAGE}-{_version()}-{tag}.whl"
        os.makedirs(wheel_directory, exist_ok=True)
        w = _WheelWriter(os.path.join(wheel_directory, name))
        for f in _package_files():
            with open(os.path.join(PACKAGE_DIR, f), "rb") as fh:
                w.add(f"{PACKAGE}/{f}", fh.read())
        with open(lib_path, "rb") as fh:
            w.add(f"{PACKAGE}/{LIBRARY}", fh.read(), mode=0o755)
        with open(HEADER, "rb") as fh:  # for C programs: arcadego.get_include()
            w.add(f"{PACKAGE}/include/arcadego.h", fh.read())
        w.add(f"{PACKAGE}/pkgconfig/arcadego.pc", _pkg_config().encode())
        _write_dist_info(w, tag)
        w.close(f"{_dist_info_name()}/RECORD")
    return name


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    """PEP 660: a wheel with a .pth pointing at python/, and the library
    built into python/arcadego/ (ignored by git)."""
    with tempfile.TemporaryDirectory(prefix="arcadego-build-") as tmp:
        lib_path = _build_library(tmp, config_settings)
        tag = _tag(lib_path)
        name = f"{PACKAGE}-{_version()}-{tag}.whl"
        target = os.path.join(PACKAGE_DIR, LIBRARY)
        if os.path.abspath(lib_path) != os.path.abspath(target):
            shutil.copyfile(lib_path, target)
        os.makedirs(os.path.join(PACKAGE_DIR, "include"), exist_ok=True)
        shutil.copyfile(HEADER, os.path.join(PACKAGE_DIR, "include", "arcadego.h"))
        os.makedirs(os.path.join(PACKAGE_DIR, "pkgconfig"), exist_ok=True)
        with open(os.path.join(PACKAGE_DIR, "pkgconfig", "arcadego.pc"), "w", encoding="utf-8") as f:
            f.write(_pkg_config())
    os.makedirs(wheel_directory, exist_ok=True)
    w = _WheelWriter(os.path.join(wheel_directory, name))
    w.add(f"_{PACKAGE}_editable.pth", (os.path.join(ROOT, "python") + "\n").encode())
    _write_dist_info(w, tag)
    w.close(f"{_dist_info_name()}/RECORD")
    return name


# ---------------------------------------------------------------------------
# sdist


def _sdist_files() -> list[str]:
    out = []
    for top in SDIST_INCLUDE:
        full = os.path.join(ROOT, top)
        if os.path.isfile(full):
            out.append(top)
            continue
        for dirpath, dirnames, filenames in os.walk(full):
            dirnames[:] = sorted(d for d in dirnames if d not in SDIST_EXCLUDE_DIRS and not d.startswith(".venv"))
            for fn in sorted(filenames):
                if fn.endswith(SDIST_EXCLUDE_SUFFIXES):
                    continue
                out.append(os.path.relpath(os.path.join(dirpath, fn), ROOT))
    return out


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    """Write arcadego-VERSION.tar.gz with the Go and Python sources."""
    base = f"{PACKAGE}-{_version()}"
    name = f"{base}.tar.gz"
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    os.makedirs(sdist_directory, exist_ok=True)
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        def add_bytes(arcname: str, data: bytes, mode: int = 0o644) -> None:
            info = tarfile.TarInfo(arcname)
            info.size = len(data)
            info.mtime = mtime
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))

        for rel in _sdist_files():
            full = os.path.join(ROOT, rel)
            with open(full, "rb") as fh:
                data = fh.read()
            mode = 0o755 if os.access(full, os.X_OK) else 0o644
            add_bytes(f"{base}/{rel}", data, mode)
        add_bytes(f"{base}/PKG-INFO", _metadata().encode("utf-8"))
    return name
