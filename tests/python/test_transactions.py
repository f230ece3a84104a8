"""Transactions from Python: commit, rollback, failures, durability."""

from __future__ import annotations

from pathlib import Path

import pytest

import arcadego


def test_commit_makes_ddl_and_data_visible_together(arcadego_db: arcadego.Database) -> None:
    db = arcadego_db
    tx = db.transaction()
    tx.create_type("A")
    tx.create_property("A", "k", "INT64")
    tx.insert("A", {"time": [1, 2], "k": [10, 20]}, device="d")
    assert db.types() == []  # nothing visible before commit
    tx.commit()
    assert tx.closed
    assert db.types() == ["A"]
    assert db.scan("A").to_pydict()["k"] == [10, 20]


def test_exception_rolls_back_everything(arcadego_db: arcadego.Database) -> None:
    db = arcadego_db
    with pytest.raises(RuntimeError):
        with db.transaction() as tx:
            tx.create_type("A")
            tx.create_property("A", "k", "INT64")
            tx.insert("A", {"time": [1], "k": [1]})
            raise RuntimeError("boom")
    assert tx.closed
    assert db.types() == []


def test_explicit_rollback_leaves_nothing(schema_db: arcadego.Database) -> None:
    tx = schema_db.transaction()
    tx.insert("A", {"time": [1], "k": [1]})
    tx.create_type("B")
    tx.rollback()
    tx.rollback()  # a no-op
    assert schema_db.types() == ["A"]
    assert schema_db.scan("A").to_pylist() == []
    with pytest.raises(arcadego.ClosedError):
        tx.execute("CREATE DOCUMENT TYPE C")


def test_failed_statement_adds_nothing_and_transaction_stays_usable(schema_db: arcadego.Database) -> None:
    with schema_db.transaction() as tx:
        tx.create_type("B")
        with pytest.raises(arcadego.InvalidArgumentError, match="line 1"):
            tx.execute("CREATE DOCUMENT TYPE C; CREATE PROPERTY C.k NOSUCHTYPE")
        with pytest.raises(arcadego.AlreadyExistsError):
            tx.create_type("A")
        tx.create_property("B", "v", "STRING")
    assert sorted(schema_db.types()) == ["A", "B"]  # C from the failed script is absent
    assert schema_db.describe("B")["properties"] == [{"name": "v", "type": "STRING"}]


def test_failed_insert_in_transaction(schema_db: arcadego.Database) -> None:
    with schema_db.transaction() as tx:
        tx.insert("A", {"time": [1], "k": [1]})
        with pytest.raises(arcadego.Error):
            tx.insert("A", {"time": [2], "k": ["not an int"]})
        tx.insert("A", {"time": [3], "k": [3]})
    assert schema_db.scan("A").to_pydict()["k"] == [1, 3]


def test_reopen_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "db"
    with arcadego.connect(path) as db:
        with db.transaction() as tx:
            tx.create_type("A")
            tx.create_property("A", "k", "INT64")
            tx.create_index("A", ["k"], unique=True, name="by_k")
            tx.insert("A", {"time": [1, 2], "k": [1, 2]}, device="x")
        db.execute("CREATE DOCUMENT TYPE `we``ird name`; CREATE PROPERTY `we``ird name`.`a.b` DOUBLE")
        db.insert("we`ird name", {"time": [5], "a.b": [0.5]})
    assert db.closed
    with arcadego.connect(path) as db:
        assert sorted(db.types()) == ["A", "we`ird name"]
        assert db.describe("A")["indexes"] == [{"name": "by_k", "unique": True, "properties": ["k"]}]
        assert db.scan("A").to_pydict()["k"] == [1, 2]
        assert db.scan("we`ird name").to_pylist() == [{"device": "", "time": 5, "a.b": 0.5}]


def test_ddl_helpers_quote_any_name(mem_db: arcadego.Database) -> None:
    names = ["select", "a b", "x`y", "ünï", "ON", "1st"]
    with mem_db.transaction() as tx:
        for n in names:
            tx.create_type(n)
            tx.create_property(n, n, "INT32")
            tx.create_index(n, [n], name=n + "_idx")
    assert sorted(mem_db.types()) == sorted(names)
    for n in names:
        mem_db.drop_index(n + "_idx")
        mem_db.drop_property(n, n)
        mem_db.drop_type(n)
    assert mem_db.types() == []


def test_if_exists_flags(mem_db: arcadego.Database) -> None:
    mem_db.create_type("A")
    mem_db.create_type("A", if_not_exists=True)
    mem_db.create_property("A", "k", "INT64")
    mem_db.create_property("A", "k", "INT64", if_not_exists=True)
    mem_db.create_index("A", "k", name="i")
    mem_db.create_index("A", "k", name="i", if_not_exists=True)
    mem_db.drop_index("i")
    mem_db.drop_index("i", if_exists=True)
    mem_db.drop_property("A", "k")
    mem_db.drop_property("A", "k", if_exists=True)
    mem_db.drop_type("A")
    mem_db.drop_type("A", if_exists=True)
    with pytest.raises(arcadego.NotFoundError):
        mem_db.drop_type("A")


def test_dict_lists_follow_the_schema_after_it_changes(arcadego_db: arcadego.Database) -> None:
    # Lists of Python ints take the property's type; the package remembers
    # property types per type and must forget them when the schema changes.
    db = arcadego_db
    db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k DOUBLE")
    db.insert("A", {"time": [1], "k": [1]})
    db.execute("DROP PROPERTY A.k; CREATE PROPERTY A.k INT64")
    db.insert("A", {"time": [2], "k": [2]})
    with db.transaction() as tx:
        tx.drop_property("A", "k")
        tx.create_property("A", "k", "DOUBLE")
    db.insert("A", {"time": [3], "k": [3]})
    assert db.scan("A").to_pydict()["k"] == [None, None, 3.0]
    assert isinstance(db.scan("A", start=3).to_pylist()[0]["k"], float)


def test_a_column_of_none_takes_the_property_type_of_now(arcadego_db: arcadego.Database) -> None:
    # The package keeps no copy of the schema: a list of nothing but None
    # (which cannot tell its type) is typed by the property as it is at
    # the call, before and after the property is dropped and re-created.
    db = arcadego_db
    db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
    db.insert("A", {"time": [1], "k": [None]})
    with db.transaction() as tx:
        tx.drop_property("A", "k")
        tx.create_property("A", "k", "STRING")
    db.insert("A", {"time": [2], "k": [None]})
    assert db.describe("A")["properties"] == [{"name": "k", "type": "STRING"}]
    assert db.scan("A").to_pydict()["k"] == [None, None]
