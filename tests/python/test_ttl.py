"""ALTER TYPE ... SET TTL / set_ttl: rows older than the TTL disappear."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import arcadego

pd = pytest.importorskip("pandas")


def test_ttl_hides_and_compaction_removes(tmp_path: Path) -> None:
    now = pd.Timestamp.now(tz="UTC").floor("ms")
    times = [now - pd.Timedelta(days=10), now - pd.Timedelta(days=9), now - pd.Timedelta(hours=1)]
    with arcadego.connect(tmp_path / "db", auto_create=True) as db:
        db.insert("S", pd.DataFrame({"time": times, "v": [1.0, 2.0, 3.0]}), device="s")
        db.flush()
        db.set_ttl("S", dt.timedelta(days=7))
        assert db.describe("S")["ttl_ns"] == 7 * 86400 * 10**9
        assert db.scan("S").to_pydict()["v"] == [3.0]
        assert db.devices("S")["rows"] == [1]
        db.compact("S")
        assert db.stats()["types"][0]["rows"] == 1
        db.set_ttl("S", None)
        assert "ttl_ns" not in db.describe("S")
        assert db.scan("S").to_pydict()["v"] == [3.0], "compaction removed the expired rows for good"
        with db.transaction() as tx:
            tx.set_ttl("S", "30d")
        assert db.describe("S")["ttl_ns"] == 30 * 86400 * 10**9


def test_ttl_refusals(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db", auto_create=True) as db:
        db.insert("I", {"time": [1], "k": [1]}, device="d")  # plain integer times
        with pytest.raises(arcadego.InvalidArgumentError, match="timestamp"):
            db.set_ttl("I", "1d")
        with pytest.raises(arcadego.InvalidArgumentError):
            db.set_ttl("I", "1y")
        with pytest.raises(arcadego.InvalidArgumentError):
            db.set_ttl("I", dt.timedelta(0))
        with pytest.raises(arcadego.InvalidArgumentError):
            db.set_ttl("I", 5)  # type: ignore[arg-type]
        with pytest.raises(arcadego.NotFoundError):
            db.set_ttl("Nope", "1d")
        db.execute("CREATE DOCUMENT TYPE T; ALTER TYPE T SET TTL 1d")
        with pytest.raises(arcadego.InvalidArgumentError, match="TTL"):
            db.insert("T", {"time": [1], "k": [1]}, device="d")
