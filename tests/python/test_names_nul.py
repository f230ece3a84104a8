"""A NUL inside a name would end the C string that carries it: "A\\x00B"
would silently name type A. Every name and script with a NUL is refused
with InvalidArgumentError, and nothing is written."""

from __future__ import annotations

import os

import pytest

import arcadego

pa = pytest.importorskip("pyarrow", reason="the full venv installs pyarrow")


def _types(db: arcadego.Database) -> list[str]:
    return [t["name"] for t in db.describe()["types"]]


def test_nul_in_names_is_refused(tmp_path: os.PathLike[str]) -> None:
    db = arcadego.connect(os.path.join(tmp_path, "db"), auto_create=True)
    try:
        db.insert("T", {"time": [1], "k": [1]}, device="d")
        cases = [
            lambda: db.insert("A\x00B", {"time": [1], "k": [1]}, device="d"),
            lambda: db.insert("T", {"time": [1], "k": [1]}, device="d\x00x"),
            lambda: db.insert("T", {"time": [1], "k\x00x": [1]}, device="d"),
            lambda: db.insert("T", pa.table({"time": [1], "k\x00x": [1]}), device="d"),
            lambda: db.execute("CREATE DOCUMENT TYPE Q;\x00 CREATE DOCUMENT TYPE R"),
            lambda: db.scan("T\x00x").to_arrow(),
            lambda: db.insert("T", {"time": [1], "k": [1]}, device="\ud800"),  # no UTF-8
        ]
        for i, case in enumerate(cases):
            with pytest.raises(arcadego.InvalidArgumentError) as e:
                case()
            assert "U+0000" in str(e.value) or "Unicode" in str(e.value), (i, str(e.value))
        with db.transaction() as tx:
            with pytest.raises(arcadego.InvalidArgumentError, match="U\\+0000"):
                tx.execute("CREATE DOCUMENT TYPE Q\x00")
            with pytest.raises(arcadego.InvalidArgumentError, match="U\\+0000"):
                tx.insert("A\x00", {"time": [1], "k": [1]}, device="d")
        assert _types(db) == ["T"]
        assert db.scan("T").to_pydict()["device"] == ["d"]
        assert db.scan("T").to_pydict()["k"] == [1]
    finally:
        db.close()
    with pytest.raises(arcadego.InvalidArgumentError, match="U\\+0000"):
        arcadego.connect(os.path.join(tmp_path, "x\x00y"))
    assert not os.path.exists(os.path.join(tmp_path, "x"))
