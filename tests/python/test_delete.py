"""db.delete and Transaction.delete: rows by device and time range."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import arcadego


def _fill(db: arcadego.Database) -> None:
    db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
    for dev in ("a", "b"):
        db.insert("A", {"time": list(range(10)), "k": list(range(10))}, device=dev)


def test_delete_by_device_and_range(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        _fill(db)
        db.delete("A", device="a", start=3, end=7)
        assert db.scan("A", device="a").to_pydict()["time"] == [0, 1, 2, 7, 8, 9]
        db.delete("A", end=1)  # every device
        assert db.scan("A", device="b").to_pydict()["time"] == list(range(1, 10))
        db.delete("A", device=["a", "b"], start=9)
        assert db.devices("A") == {"device": ["a", "b"], "rows": [4, 8], "first": [1, 1], "last": [8, 8]}
        db.flush()
        assert db.scan("A", device="a").to_pydict()["time"] == [1, 2, 7, 8]
    with arcadego.connect(tmp_path / "db") as db:
        assert db.scan("A", device="a").to_pydict()["time"] == [1, 2, 7, 8]
        db.delete("A")
        assert db.scan("A").to_pydict()["time"] == []
        assert db.devices("A")["device"] == []


def test_delete_in_a_transaction(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        _fill(db)
        with db.transaction() as tx:
            tx.insert("A", {"time": [20], "k": [20]}, device="a")
            tx.delete("A", device="a", start=5)  # deletes 5..9 and the 20 just added
            tx.insert("A", {"time": [30], "k": [30]}, device="a")  # after it: stays
            assert db.scan("A", device="a").to_pydict()["time"] == list(range(10))
        assert db.scan("A", device="a").to_pydict()["time"] == [0, 1, 2, 3, 4, 30]
        with pytest.raises(RuntimeError):
            with db.transaction() as tx:
                tx.delete("A")
                raise RuntimeError("rolled back")
        assert len(db.scan("A").to_pydict()["time"]) == 6 + 10


def test_delete_with_timestamps(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    with arcadego.connect(tmp_path / "db", auto_create=True) as db:
        times = pd.date_range("2026-01-01", periods=5, freq="D", tz="UTC")
        db.insert("S", pd.DataFrame({"time": times, "v": [1.0, 2.0, 3.0, 4.0, 5.0]}), device="s")
        db.delete("S", start=dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc), end=pd.Timestamp("2026-01-04", tz="UTC"))
        assert db.scan("S").to_pydict()["v"] == [1.0, 4.0, 5.0]


def test_delete_refusals(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        _fill(db)
        with pytest.raises(arcadego.NotFoundError, match="Nope"):
            db.delete("Nope")
        with pytest.raises(arcadego.InvalidArgumentError):
            db.delete("A", device="bad\x00")
        with pytest.raises(arcadego.InvalidArgumentError):
            db.delete("A", start=2**63)
        with pytest.raises(arcadego.InvalidArgumentError):
            db.delete(7)  # type: ignore[arg-type]
        assert len(db.scan("A").to_pydict()["time"]) == 20
    with arcadego.connect(tmp_path / "db", read_only=True) as reader:
        with pytest.raises(arcadego.InvalidArgumentError, match="read-only"):
            reader.delete("A")
