"""Database.clone() and arcadego.testing templates."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

import arcadego
import arcadego.testing

SCHEMA = "; ".join(
    f"CREATE DOCUMENT TYPE T{i}; CREATE PROPERTY T{i}.k INT64; CREATE PROPERTY T{i}.s STRING; "
    f"CREATE INDEX ON T{i} (k) NOTUNIQUE"
    for i in range(100))

TEMPLATE = arcadego.testing.template(SCHEMA)


def test_clone_holds_the_rows_and_the_schema(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
        db.insert("A", {"time": [1, 2, 3], "k": [10, 20, 30]}, device="d")
        db.flush()
        db.insert("A", {"time": [4], "k": [40]}, device="d")
        db.clone(tmp_path / "copy")
        db.insert("A", {"time": [5], "k": [50]}, device="d")  # after the clone: not in it
    with arcadego.connect(tmp_path / "copy") as copy:
        assert copy.scan("A").to_pydict()["k"] == [10, 20, 30, 40]


def test_clone_refuses_a_directory_with_files(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("mine")
    with arcadego.connect(tmp_path / "db") as db:
        with pytest.raises(arcadego.AlreadyExistsError, match="not empty"):
            db.clone(tmp_path / "busy")
    assert (tmp_path / "busy" / "keep.txt").read_text() == "mine"
    with arcadego.connect(None) as mem:
        with pytest.raises(arcadego.InvalidArgumentError, match="in memory"):
            mem.clone(tmp_path / "m")


def test_template_gives_fresh_databases_with_the_schema(tmp_path: Path) -> None:
    first = TEMPLATE(tmp_path / "one")
    second = TEMPLATE(tmp_path / "two")
    try:
        assert len(first.types()) == 100 and first.types() == second.types()
        first.insert("T7", {"time": [1], "k": [1], "s": ["x"]})
        assert second.scan("T7").to_pydict()["k"] == []  # fresh: nothing shared
        assert first.describe("T7")["indexes"]
    finally:
        first.close()
        second.close()


def test_template_from_a_callable(tmp_path: Path) -> None:
    def build(db: arcadego.Database) -> None:
        db.execute("CREATE DOCUMENT TYPE Seeded; CREATE PROPERTY Seeded.k INT64")
        db.insert("Seeded", {"time": [1, 2], "k": [5, 6]}, device="d")

    tpl = arcadego.testing.template(build)
    try:
        with tpl(tmp_path / "db") as db:
            assert db.scan("Seeded").to_pydict()["k"] == [5, 6]
    finally:
        tpl.close()


@pytest.mark.arcadego_template(TEMPLATE)
def test_the_fixture_takes_a_template(arcadego_db: arcadego.Database) -> None:
    assert "T42" in arcadego_db.types()
    arcadego_db.insert("T42", {"time": [1], "k": [7], "s": ["y"]})
    assert arcadego_db.scan("T42").to_pydict()["k"] == [7]


def test_a_templated_database_is_quick(tmp_path: Path) -> None:
    """Not a timing assertion: prints what a fresh 100-type database costs
    (the benchmark script measures it against sqlite3 and DuckDB)."""
    TEMPLATE(tmp_path / "warm").close()
    times = []
    for i in range(20):
        t0 = time.perf_counter()
        db = TEMPLATE(tmp_path / f"db{i}")
        times.append(time.perf_counter() - t0)
        db.close()
    times.sort()
    print(f"fresh 100-type database from a template: p50 {times[10] * 1e3:.2f} ms, max {times[-1] * 1e3:.2f} ms")
    assert os.path.isdir(tmp_path / "db19")
