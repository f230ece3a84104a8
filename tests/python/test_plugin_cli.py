"""The pytest plugin, the CLI and the installed package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import arcadego
from arcadego._cli import main


def test_fixture_is_a_fresh_on_disk_database(arcadego_db: arcadego.Database, tmp_path: Path) -> None:
    assert arcadego_db.path is not None
    assert Path(arcadego_db.path).parent == tmp_path
    assert arcadego_db.types() == []
    assert not arcadego_db.closed


def test_fixture_through_pytester(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import arcadego

        DBS = []

        def test_one(arcadego_db):
            DBS.append(arcadego_db)
            arcadego_db.execute("CREATE DOCUMENT TYPE A")
            assert arcadego_db.types() == ["A"]

        def test_two(arcadego_db):
            assert DBS[0].closed            # closed after the first test
            assert arcadego_db.types() == []  # and this one is fresh
        """
    )
    # A subprocess: an in-process run would reset faulthandler's handlers.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "db")
    assert main(["exec", path, "CREATE DOCUMENT TYPE A"]) == 1  # no database there yet
    assert "no database" in capsys.readouterr().err
    assert not os.path.exists(path)
    assert main(["init", path]) == 0
    assert main(["init", path]) == 1  # not over an existing one
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert main(["init", str(a_file)]) == 1
    assert "not an empty directory" in capsys.readouterr().err
    assert main(["exec", path, "CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"]) == 0
    assert main(["describe", path]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["types"][0]["name"] == "A"
    assert main(["describe", path, "A"]) == 0
    assert json.loads(capsys.readouterr().out)["properties"] == [{"name": "k", "type": "INT64"}]
    assert main(["exec", path, "CREATE DOCUMENT TYPE A"]) == 1
    assert "AlreadyExistsError" in capsys.readouterr().err


def test_console_script_and_module(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "arcadego"
    assert exe.exists(), "the console script is installed by the wheel"
    subprocess.run([str(exe), "init", str(tmp_path / "db")], check=True, timeout=60)
    out = subprocess.run([str(exe), "exec", str(tmp_path / "db"), "-"], input="CREATE DOCUMENT TYPE Z",
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([sys.executable, "-m", "arcadego", "describe", str(tmp_path / "db")],
                         capture_output=True, text=True, timeout=60)
    assert json.loads(out.stdout)["types"][0]["name"] == "Z"


def test_library_comes_from_the_package_or_the_override() -> None:
    path = arcadego.library_path()
    override = os.environ.get("ARCADEGO_LIBRARY")
    if override:
        assert path == override
    else:
        assert Path(path).parent == Path(arcadego.__file__).parent
    assert Path(path).name == "libarcadego.so"
    assert arcadego.library_version() == arcadego.__version__
    assert (Path(arcadego.__file__).parent / "py.typed").exists()


def test_a_skipped_test_fails_the_suite(pytester: pytest.Pytester) -> None:
    # make test must not pass a test that did not run (a dependency missing
    # from the venv makes importorskip skip a whole module).
    pytester.makeconftest((Path(__file__).parent / "conftest.py").read_text())
    pytester.makepyfile(
        test_runs="""
        def test_runs():
            pass
        """,
        test_skipped="""
        import pytest

        missing = pytest.importorskip("no_such_module_arcadego")

        def test_never_runs():
            pass
        """,
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*skipped tests are not allowed*"])
