"""Result batches are written into C blocks that the library keeps for a
while after their release and reuses for later results (not cleared: the
export writes every byte a reader reads), and flushed rows are decoded
into blocks that the batches point to: results read after others must be
exactly what was stored, whatever the earlier results left in the memory,
and stay so for as long as the caller keeps them."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import arcadego

pa = pytest.importorskip("pyarrow", reason="the full venv installs pyarrow")

ROWS = 150_000  # batches of 65,536 rows: blocks of a few MiB, pooled


def _expected() -> pa.Table:
    i = np.arange(ROWS)
    k = pa.array(i * 7, mask=(i % 5 == 0))
    x = pa.array(i / 3.0, mask=(i % 3 == 1))
    b = pa.array(i % 2 == 0, mask=(i % 7 == 3))
    s = pa.array([f"v{j % 97}" for j in range(ROWS)], mask=(i % 11 == 0))
    return pa.table({"time": pa.array(i, pa.int64()), "k": k, "x": x, "b": b, "s": s})


@pytest.mark.parametrize("flushed", [False, True])
def test_reused_result_memory_holds_only_the_new_rows(schema_db: arcadego.Database, flushed: bool) -> None:
    expected = _expected()
    schema_db.insert("A", expected, device="d")
    if flushed:
        schema_db.flush()
    cols = ["k", "x", "s", "b"]

    def check(columns: list[str], start: int | None = None, end: int | None = None) -> None:
        got = schema_db.scan("A", columns=columns, start=start, end=end).to_arrow()
        lo = start or 0
        hi = ROWS if end is None else end
        want = expected.slice(lo, hi - lo)
        assert got.num_rows == hi - lo
        assert got["time"].to_pylist() == want["time"].to_pylist()
        for c in columns:
            assert got[c].to_pylist() == want[c].to_pylist(), c
            assert got[c].null_count == want[c].null_count, c

    # The same scan again and again, then smaller ones into the larger
    # blocks the first left behind, then the full one again.
    for _ in range(3):
        check(cols)
        gc.collect()
    check(["b"])
    check(["s"], 10_000, 140_000)
    check(["x", "k"], 5, 70_001)
    gc.collect()
    check(cols)


def test_flushed_results_outlive_the_scan_and_the_database(schema_db: arcadego.Database, tmp_path) -> None:
    """Batches of flushed rows point into the blocks the scan decoded them
    into: they stay valid after the stream is released, the database is
    closed, and other scans have reused the library's memory."""
    expected = _expected()
    schema_db.insert("A", expected, device="d")
    schema_db.flush()
    table = schema_db.scan("A", columns=["k", "x"]).to_arrow()
    batches = list(schema_db.scan("A", columns=["k", "x"], start=1_000, end=120_000))
    schema_db.close()
    gc.collect()
    other = arcadego.connect(str(tmp_path / "other"), auto_create=True)
    try:
        junk = pa.table({"time": pa.array(np.arange(ROWS), pa.int64()), "k": pa.array(-np.arange(ROWS)),
                         "x": pa.array(np.full(ROWS, -1.5))})
        other.insert("A", junk, device="d")
        other.flush()
        for _ in range(3):
            assert other.scan("A").to_arrow().num_rows == ROWS
            gc.collect()
    finally:
        other.close()
    assert table["k"].to_pylist() == expected["k"].to_pylist()
    assert table["x"].to_pylist() == expected["x"].to_pylist()
    got = pa.Table.from_batches(batches)
    want = expected.slice(1_000, 119_000)
    assert got["time"].to_pylist() == want["time"].to_pylist()
    assert got["k"].to_pylist() == want["k"].to_pylist()
    assert got["x"].to_pylist() == want["x"].to_pylist()
