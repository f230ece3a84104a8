"""Space returns: after drop_type, a delete of everything, or a compaction,
the bytes on disk come back to those of a fresh database holding the same
live rows (within 10 %), plus the Delta logs' JSON commits, which are
never folded (no Delta checkpoints) and take under a kilobyte each."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import arcadego

np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")

N = 50_000
SCHEMA = "CREATE DOCUMENT TYPE T; CREATE PROPERTY T.a DOUBLE; CREATE PROPERTY T.b INT64"


def _bytes(path: Path, skip_delta_logs: bool = False) -> int:
    total = 0
    for d, _, files in os.walk(path):
        if skip_delta_logs and os.path.basename(d) == "_delta_log":
            continue
        total += sum(os.path.getsize(os.path.join(d, f)) for f in files)
    return total


def _batch(seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"time": np.arange(N, dtype=np.int64), "a": rng.random(N), "b": rng.integers(0, 1 << 40, N)})


def _fresh(path: Path, rows: pa.Table | None = None) -> int:
    with arcadego.connect(path) as db:
        if rows is not None:
            db.execute(SCHEMA)
            if rows.num_rows:
                db.insert("T", rows, device_column="device")
            db.checkpoint()
    return _bytes(path)


def test_space_after_drop_type(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        db.execute(SCHEMA)
        for i in range(10):  # ten overwrites of the same keys
            db.insert("T", _batch(i), device="d")
            db.flush()
        assert _bytes(tmp_path / "db") > 500_000
        db.drop_type("T")
        db.checkpoint()
    assert _bytes(tmp_path / "db") <= _fresh(tmp_path / "fresh") + 1024


def test_space_after_deleting_everything(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        db.execute(SCHEMA)
        for i in range(10):
            db.insert("T", _batch(i), device=f"d{i}")
            db.flush()
        db.delete("T")
        db.checkpoint()
        assert db.scan("T").to_arrow().num_rows == 0
    fresh = _fresh(tmp_path / "fresh", _batch(0).slice(0, 0).append_column("device", pa.array([], pa.string())))
    assert _bytes(tmp_path / "db", skip_delta_logs=True) <= 1.1 * fresh + 1024
    logs = list((tmp_path / "db").glob("types/*/_delta_log/*.json"))
    assert sum(p.stat().st_size for p in logs) <= 1500 * len(logs)


def test_space_after_compaction(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        db.execute(SCHEMA + "; CREATE PROPERTY T.gone DOUBLE")
        for i in range(10):  # overlapping overwrites, and a property dropped later
            t = _batch(i).append_column("gone", pa.array(np.ones(N)))
            db.insert("T", t.slice(i * 1000, N // 2), device=f"d{i % 3}")
            db.flush()
        db.drop_property("T", "gone")
        db.compact()
        db.checkpoint()
        live = db.scan("T").to_arrow()
    fresh = _fresh(tmp_path / "fresh", live)
    assert _bytes(tmp_path / "db", skip_delta_logs=True) <= 1.1 * fresh
