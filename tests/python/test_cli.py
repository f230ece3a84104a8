"""The command line: import Parquet, CSV and Arrow IPC files (one
transaction, all or nothing, Ctrl-C included) and export a type back
identically; info, scan and sql."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import arcadego
from arcadego import _cli

pa = pytest.importorskip("pyarrow", reason="the CLI's import and export need pyarrow")
pq = pytest.importorskip("pyarrow.parquet", reason="the CLI's import and export need pyarrow")


def _data(n: int = 20_000) -> Any:
    rng = np.random.default_rng(1)
    return pa.table({"dev": [f"d{i % 37:02d}" for i in range(n)], "time": np.arange(n, dtype=np.int64) // 37,
                     "v": rng.random(n), "k": rng.integers(0, 1000, n)})


def _sorted(t: Any) -> Any:
    return t.sort_by([(t.column_names[0], "ascending"), ("time", "ascending")])


def test_import_export_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "db")
    assert _cli.main(["init", db]) == 0
    src = _data()
    pq.write_table(src, tmp_path / "in.parquet")
    assert _cli.main(["import", db, str(tmp_path / "in.parquet"), "--type", "M", "--device-column", "dev",
                      "--create"]) == 0
    assert "imported 20,000 rows" in capsys.readouterr().err
    assert _cli.main(["export", db, "M", "--to", str(tmp_path / "out.parquet")]) == 0
    out = pq.read_table(tmp_path / "out.parquet").rename_columns(["dev", "time", "v", "k"])
    assert _sorted(out).to_pydict() == _sorted(src).to_pydict()

    # CSV and Arrow IPC in, for one device each, then CSV out.
    import pyarrow.csv as pcsv
    import pyarrow.ipc as ipc
    part = src.drop_columns(["dev"]).slice(0, 100)
    part = part.set_column(0, "time", pa.array(np.arange(100, dtype=np.int64)))  # one device: distinct times
    pcsv.write_csv(part, tmp_path / "in.csv")
    with ipc.new_file(tmp_path / "in.arrow", part.schema) as w:
        w.write_table(part.set_column(0, "time", pa.array(part["time"].to_numpy() + 10**6)))
    assert _cli.main(["import", db, str(tmp_path / "in.csv"), str(tmp_path / "in.arrow"), "--type", "M",
                      "--device", "single", "--no-progress"]) == 0
    assert _cli.main(["export", db, "M", "--to", str(tmp_path / "out.csv"), "--device", "single"]) == 0
    back = pcsv.read_csv(tmp_path / "out.csv")
    assert back.num_rows == 200
    assert back["v"].to_pylist()[:100] == part["v"].to_pylist()

    capsys.readouterr()
    assert _cli.main(["info", db]) == 0
    info = capsys.readouterr().out
    assert "M" in info and "20,200" in info
    assert _cli.main(["scan", db, "M", "--limit", "3"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 4  # header and 3 rows


def test_an_interrupted_import_imports_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "db")
    assert _cli.main(["init", db]) == 0
    pq.write_table(_data(), tmp_path / "in.parquet", row_group_size=1000)
    real = _cli._batches

    def interrupted(pa_: Any, path: str, fmt: Any) -> Any:
        for b in real(pa_, path, fmt):
            yield b  # inserted into the transaction
            raise KeyboardInterrupt  # Ctrl-C while reading the rest

    monkeypatch.setattr(_cli, "_batches", interrupted)
    code = _cli.main(["import", db, str(tmp_path / "in.parquet"), "--type", "M", "--device-column", "dev",
                      "--create"])
    assert code == 130
    assert "nothing was imported" in capsys.readouterr().err
    with arcadego.connect(db) as d:
        assert d.types() == []  # the auto-created type went with the rest


def test_import_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "db")
    assert _cli.main(["init", db]) == 0
    assert _cli.main(["import", db, str(tmp_path / "missing.parquet"), "--type", "M", "--device", "d"]) == 1
    assert "no file" in capsys.readouterr().err
    pq.write_table(_data(10), tmp_path / "in.parquet")
    # Without --create the type must exist.
    assert _cli.main(["import", db, str(tmp_path / "in.parquet"), "--type", "M", "--device-column", "dev"]) == 1
    assert "NotFoundError" in capsys.readouterr().err


def test_sql(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("duckdb", reason="sql needs DuckDB")
    db = str(tmp_path / "db")
    assert _cli.main(["init", db]) == 0
    pq.write_table(_data(370), tmp_path / "in.parquet")
    assert _cli.main(["import", db, str(tmp_path / "in.parquet"), "--type", "M", "--device-column", "dev",
                      "--create", "--no-progress"]) == 0
    capsys.readouterr()
    assert _cli.main(["sql", db, "select count(distinct device) as n from M"]) == 0
    assert "37" in capsys.readouterr().out
    # One device of 370 rows over 37: 10 rows, 3 of them at times 2..4.
    assert _cli.main(["sql", db, "select count(*) as n from M where device = 'd05' and time between 2 and 4"]) == 0
    assert re.findall(r"│\s*(\d+)\s*│", capsys.readouterr().out) == ["3"]


def test_delete_and_compact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db_path = str(tmp_path / "db")
    with arcadego.connect(db_path) as db:
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
        for i in range(3):
            db.insert("A", {"time": [i * 10 + j for j in range(10)], "k": list(range(10))}, device=f"d{i}")
            db.flush()
    assert _cli.main(["delete", db_path, "A", "--device", "d1", "--start", "12", "--end", "15"]) == 0
    assert "deleted 3 rows of A" in capsys.readouterr().out
    assert _cli.main(["delete", db_path, "A", "--end", "5"]) == 0
    assert "deleted 5 rows" in capsys.readouterr().out
    assert _cli.main(["compact", db_path]) == 0
    assert "compacted: 1 file" in capsys.readouterr().out
    with arcadego.connect(db_path, read_only=True) as db:
        assert db.scan("A").to_pydict()["time"] == [5, 6, 7, 8, 9, 10, 11, 15, 16, 17, 18, 19] + list(range(20, 30))
    assert _cli.main(["delete", db_path, "Nope"]) == 1
    assert "NotFoundError" in capsys.readouterr().err
