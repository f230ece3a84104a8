"""Indexes from Python: lookups equal pyarrow's filter of a full scan,
across the memtable, flushed files, compaction and reopening; UNIQUE
conflicts leave nothing behind; explain names the index."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import arcadego


def _rows(table: pa.Table) -> list[tuple]:
    return sorted(zip(*(table.column(c).to_pylist() for c in ("device", "time", "k"))))


def test_lookups_match_a_filtered_scan(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    db = arcadego.connect(tmp_path / "db")
    with db.transaction() as tx:
        tx.create_type("A")
        tx.create_property("A", "k", "INT64")
        tx.create_property("A", "s", "STRING")
        tx.create_index("A", ["k"], unique=False)
        tx.create_index("A", ["s", "k"], unique=False)
    for step in range(8):
        for d in range(5):
            n = 50
            k = rng.integers(0, 40, n)
            tbl = pa.table({"time": rng.permutation(200)[:n].astype(np.int64),
                            "k": pa.array(k, mask=rng.random(n) < 0.1),
                            "s": pa.array(rng.choice(["x", "y", "z"], n), mask=rng.random(n) < 0.1)})
            db.insert("A", tbl, device=f"d{d}")
        if step == 3:
            db.flush()
        if step == 5:
            db.compact("A")
        if step == 6:
            db.close()
            db = arcadego.connect(tmp_path / "db")
        full = db.scan("A").to_arrow()
        for key, mask in [
            ({"k": 7}, pc.equal(full["k"], 7)),
            ({"k": (5, 9)}, pc.and_(pc.greater_equal(full["k"], 5), pc.less_equal(full["k"], 9))),
            ({"k": [1, 2, 39]}, pc.is_in(full["k"], pa.array([1, 2, 39]))),
            ({"s": "y", "k": (None, 10)}, pc.and_(pc.equal(full["s"], "y"), pc.less_equal(full["k"], 10))),
        ]:
            got = db.lookup("A", **key).to_arrow()
            assert _rows(got) == _rows(full.filter(pc.fill_null(mask, False))), (step, key)
    assert db.explain("A", where=("k", "=", 7)).startswith("index A[k] on A (k = 7):")
    assert db.explain("A", where=[("s", "=", "x"), ("k", ">", 3)]).startswith("index A[s,k] on A (s = x and k > 3):")
    assert db.explain("A", where=("s", "!=", "x")).startswith("scan of A")
    db.close()


def test_unique_conflicts_write_nothing(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        db.execute("CREATE DOCUMENT TYPE U; CREATE PROPERTY U.k INT64; CREATE INDEX byk ON U (k) UNIQUE")
        db.insert("U", {"time": [1, 2], "k": [7, 8]}, device="a")
        with pytest.raises(arcadego.ConflictError, match=r'UNIQUE index "byk": key \(k = 7\)'):
            db.insert("U", {"time": [1], "k": [7]}, device="b")
        db.flush()
        with pytest.raises(arcadego.ConflictError, match=r"k = 8"):
            with db.transaction() as tx:
                tx.insert("U", {"time": [5], "k": [100]}, device="c")
                tx.insert("U", {"time": [6], "k": [8]}, device="c")
        assert db.lookup("U", k=100).to_arrow().num_rows == 0
        assert db.scan("U").to_arrow().num_rows == 2
        db.insert("U", {"time": [3, 4], "k": [None, None]}, device="a")  # nulls are not indexed


def test_index_on_an_empty_type_creates_no_file(tmp_path: Path) -> None:
    def files() -> list[str]:
        return sorted(os.path.relpath(os.path.join(r, f), tmp_path) for r, _, fs in os.walk(tmp_path) for f in fs)

    with arcadego.connect(tmp_path / "db") as db:
        db.execute("CREATE DOCUMENT TYPE E; CREATE PROPERTY E.k INT64")
        before = files()
        db.execute("CREATE INDEX ON E (k) UNIQUE")
        assert files() == before
        with pytest.raises(arcadego.InvalidArgumentError):
            db.lookup("E", k=None)
