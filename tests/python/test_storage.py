"""connect(memtable_budget=...), Database.flush(), checkpoint() and stats()."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import arcadego

STATS_KEYS = {
    "memtable_bytes", "immutable_memtables", "immutable_bytes", "memtable_budget", "pool_bytes",
    "flushes", "flushed_rows", "flushed_bytes", "direct_writes", "checkpoints", "stalls", "stall_nanos",
    "wal_bytes", "wal_segments", "fsyncs", "types",
}
TYPE_KEYS = {"name", "id", "path", "files", "bytes", "rows", "delta_version"}


def _type_stats(db: arcadego.Database, name: str) -> dict[str, Any]:
    entries = [t for t in db.stats()["types"] if t["name"] == name]
    assert len(entries) == 1, db.stats()["types"]
    return entries[0]


@pytest.mark.parametrize("budget", [True, False, 1.5, "64MB", -1, -(1 << 40), 1 << 70])
def test_bad_memtable_budget(tmp_path: Path, budget: Any) -> None:
    with pytest.raises(arcadego.InvalidArgumentError, match="memtable_budget"):
        arcadego.connect(tmp_path / "db", memtable_budget=budget)


@pytest.mark.parametrize("budget", [None, 0, 1 << 20])
def test_memtable_budget(tmp_path: Path, budget: int | None) -> None:
    with arcadego.connect(tmp_path / "db", memtable_budget=budget) as db:
        assert db.memtable_budget == budget
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
        db.insert("A", {"time": [1, 2], "k": [10, 20]})
        assert db.scan("A").to_pydict()["k"] == [10, 20]


@pytest.mark.parametrize("threshold", [True, 1.5, "16MB", -2, 1 << 70])
def test_bad_direct_write_bytes(tmp_path: Path, threshold: Any) -> None:
    with pytest.raises(arcadego.InvalidArgumentError, match="direct_write_bytes"):
        arcadego.connect(tmp_path / "db", direct_write_bytes=threshold)
    assert not (tmp_path / "db").exists()


@pytest.mark.parametrize("threshold, direct", [(None, False), (0, False), (-1, False), (1, True)])
def test_direct_write_bytes(tmp_path: Path, threshold: int | None, direct: bool) -> None:
    """A small batch goes straight to Parquet only below a lowered threshold;
    either way a reopened database holds the same rows."""
    with arcadego.connect(tmp_path / "db", direct_write_bytes=threshold) as db:
        assert db.direct_write_bytes == threshold
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
        db.insert("A", {"time": [1, 2], "k": [10, 20]}, device="d")
        assert db.stats()["direct_writes"] == (1 if direct else 0)
        assert db.stats()["memtable_bytes"] == 0 if direct else db.stats()["memtable_bytes"] > 0
    with arcadego.connect(tmp_path / "db") as db:
        assert db.scan("A").to_pydict()["k"] == [10, 20]


def test_long_format_batch_goes_direct_from_a_quarter_of_the_threshold(tmp_path: Path) -> None:
    """With the default threshold (16 MiB), a long-format batch of about
    6 MB goes straight to Parquet; the same rows as one device's tablet,
    or the batch beside another insert into its type, take the log's way.
    Every row reads back either way."""
    pa = pytest.importorskip("pyarrow")
    np = pytest.importorskip("numpy")
    devices, per = 12_500, 10
    n = devices * per
    names = pa.array([f"dev-{d:05d}" for d in range(devices)]).take(pa.array(np.repeat(np.arange(devices), per)))
    cols = {f"f{j}": np.arange(n, dtype=np.float64) * (j + 1) for j in range(5)}

    def batch(t0: int) -> Any:
        return pa.table({"device": names, "time": np.tile(np.arange(t0, t0 + per, dtype=np.int64), devices), **cols})

    with arcadego.connect(tmp_path / "db") as db:
        with db.transaction() as tx:
            tx.create_type("M")
            for j in range(5):
                tx.create_property("M", f"f{j}", "DOUBLE")
        db.insert("M", batch(0), device_column="device")
        assert db.stats()["direct_writes"] == 1
        assert db.stats()["memtable_bytes"] == 0
        db.insert("M", pa.table({"time": np.arange(n, dtype=np.int64), **cols}), device="single")
        assert db.stats()["direct_writes"] == 1
        with db.transaction() as tx:
            tx.insert("M", batch(100), device_column="device")
            tx.insert("M", {"time": [1], "f0": [1.5]}, device="other")
        assert db.stats()["direct_writes"] == 1
        got = db.scan("M", device="dev-00007").to_pydict()
        assert got["time"] == list(range(10)) + list(range(100, 110))
        assert got["f3"] == [4.0 * (70 + i) for i in range(10)] * 2
        assert db.scan("M", device="single").to_arrow().num_rows == n


def test_closed_database_raises(tmp_path: Path) -> None:
    db = arcadego.connect(tmp_path / "db")
    db.close()
    for call in (db.flush, db.checkpoint, db.stats):
        with pytest.raises(arcadego.ClosedError):
            call()


def test_stats_keys(arcadego_db: arcadego.Database) -> None:
    st = arcadego_db.stats()
    assert STATS_KEYS <= set(st), STATS_KEYS - set(st)
    assert isinstance(st["types"], list)
    for key in STATS_KEYS - {"types"}:
        assert isinstance(st[key], int) and not isinstance(st[key], bool), key


@pytest.mark.parametrize("on_disk", [True, False], ids=["on disk", "in memory"])
def test_flush_and_checkpoint_change_no_row(tmp_path: Path, on_disk: bool) -> None:
    with arcadego.connect(tmp_path / "db" if on_disk else None) as db:
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE PROPERTY A.s STRING")
        db.insert("A", {"time": [3, 1, 2], "k": [30, None, 20], "s": ["c", "a", None]}, device="d1")
        before = db.scan("A").to_pylist()
        db.flush()
        assert db.scan("A").to_pylist() == before
        db.flush()  # nothing new
        db.checkpoint()
        assert db.scan("A").to_pylist() == before
        db.insert("A", {"time": [2, 4], "k": [21, 40]}, device="d1")  # an overwrite and a new row
        expected = db.scan("A").to_pylist()
        assert [r["k"] for r in expected] == [None, 21, 30, 40]
        assert [r["s"] for r in expected] == ["a", None, "c", None]
        db.flush()
        assert db.scan("A").to_pylist() == expected


def test_checkpoint_then_reopen(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
        db.insert("A", {"time": [1, 2], "k": [10, 20]}, device="d1")
        db.checkpoint()
        db.insert("A", {"time": [2, 3], "k": [21, 30]}, device="d1")
        expected = db.scan("A").to_pylist()
    with arcadego.connect(tmp_path / "db") as db:
        assert db.scan("A").to_pylist() == expected


# The tests below need the engine's storage tier (a real Flush).


def test_flush_moves_the_counters(arcadego_db: arcadego.Database) -> None:
    db = arcadego_db
    db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
    db.insert("A", {"time": list(range(100)), "k": list(range(100))}, device="d1")
    db.insert("A", {"time": list(range(50)), "k": list(range(50))}, device="d2")
    db.flush()
    st = db.stats()
    assert st["flushes"] >= 1
    assert st["flushed_rows"] >= 150
    assert st["flushed_bytes"] > 0
    assert "flush_error" not in st
    a = _type_stats(db, "A")
    assert TYPE_KEYS <= set(a)
    assert a["files"] >= 1
    assert a["rows"] == 150
    assert a["bytes"] > 0
    assert a["delta_version"] >= 0
    table = Path(a["path"])
    assert table.is_dir() and (table / "_delta_log").is_dir()
    assert table.resolve().is_relative_to(Path(db.path).resolve())

    version, flushes = a["delta_version"], st["flushes"]
    db.insert("A", {"time": [1000], "k": [1]}, device="d1")
    db.checkpoint()
    st = db.stats()
    assert st["checkpoints"] >= 1
    assert st["flushes"] > flushes
    assert _type_stats(db, "A")["delta_version"] > version
    assert _type_stats(db, "A")["rows"] == 151


def test_memtable_budget_in_stats(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db", memtable_budget=1 << 20) as db:
        assert db.stats()["memtable_budget"] == 1 << 20
    with arcadego.connect(tmp_path / "db") as db:
        assert db.stats()["memtable_budget"] == 64 << 20


def test_close_gives_the_memory_back(tmp_path: Path) -> None:
    """Closing the last database returns its memory to the operating
    system at once (kept result blocks, the Go heap's free pages): RSS goes
    back near where it was before the open."""
    code = (
        "import arcadego, numpy as np, pyarrow as pa\n"
        "def rss():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmRSS:'): return int(line.split()[1]) * 1024\n"
        "n = 1_000_000\n"
        "tbl = pa.table({'time': np.arange(n), **{f'f{i}': np.random.rand(n) for i in range(5)}})\n"
        "arcadego.connect(None).close()\n"
        "before = rss()\n"
        f"db = arcadego.connect({str(tmp_path / 'db')!r}, sync='off', auto_create=True)\n"
        "db.insert('A', tbl, device='d')\n"
        "t = db.scan('A').to_arrow(); del t\n"
        "peak = rss()\n"
        "db.close()\n"
        "after = rss()\n"
        "assert peak - before > 40 << 20, (before, peak)\n"
        "kept = (after - before) / (peak - before)\n"
        "assert kept < 0.3, (before >> 20, peak >> 20, after >> 20)\n"
        "print('ok', round(kept, 2))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.startswith("ok"), out.stdout + out.stderr
