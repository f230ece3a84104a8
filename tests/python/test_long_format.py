"""Long format: one batch holding the rows of many devices, each row's
device in a column, split by device in the library in one transaction.
Every input form that carries a device column loads in one call: dicts,
pyarrow tables and Parquet files, polars, pandas (categorical too), DuckDB
results, and a scan result inserted back as is."""

from __future__ import annotations

import os

import pytest

import arcadego

pa = pytest.importorskip("pyarrow", reason="the full venv installs pyarrow")
pq = pytest.importorskip("pyarrow.parquet", reason="the full venv installs pyarrow")
pl = pytest.importorskip("polars", reason="the full venv installs polars")
pd = pytest.importorskip("pandas", reason="the full venv installs pandas")
duckdb = pytest.importorskip("duckdb", reason="the full venv installs duckdb")

# Interleaved devices: the library groups them.
DEVICES = ["b", "a", "b", "c", "a", "b"]
TIMES = [1, 1, 2, 1, 2, 3]
VALUES = [10, 20, 30, 40, 50, 60]


def _expected() -> dict[str, list]:
    rows = sorted(zip(DEVICES, TIMES, VALUES))
    return {"device": [r[0] for r in rows], "time": [r[1] for r in rows], "k": [r[2] for r in rows]}


def _forms(tmp_path: os.PathLike[str]) -> dict[str, object]:
    table = pa.table({"dev": DEVICES, "time": TIMES, "k": VALUES})
    path = os.path.join(tmp_path, "long.parquet")
    pq.write_table(table, path)
    con = duckdb.connect()
    return {
        "dict": {"dev": DEVICES, "time": TIMES, "k": VALUES},
        "pyarrow": table,
        "pyarrow-batch": table.to_batches()[0],
        "parquet": pq.read_table(path),
        "polars": pl.DataFrame({"dev": DEVICES, "time": TIMES, "k": VALUES}),
        "pandas": pd.DataFrame({"dev": DEVICES, "time": TIMES, "k": VALUES}),
        "pandas-categorical": pd.DataFrame({"dev": pd.Categorical(DEVICES), "time": TIMES, "k": VALUES}),
        "dictionary-encoded": pa.table({"dev": pa.array(DEVICES).dictionary_encode(), "time": TIMES, "k": VALUES}),
        "duckdb": con.sql(f"select * from read_parquet('{path}')"),
    }


def test_every_form_with_a_device_column_loads_in_one_call(schema_db: arcadego.Database,
                                                             tmp_path: os.PathLike[str]) -> None:
    for i, (form, data) in enumerate(_forms(tmp_path).items()):
        name = f"L{i}"
        schema_db.execute(f"CREATE DOCUMENT TYPE {name}; CREATE PROPERTY {name}.k INT64")
        schema_db.insert(name, data, device_column="dev")
        assert schema_db.scan(name).to_pydict() == _expected(), form
        assert [p["name"] for p in schema_db.describe(name)["properties"]] == ["k"], form


def test_a_scan_result_goes_back_in_as_is(schema_db: arcadego.Database) -> None:
    schema_db.insert("A", {"dev": DEVICES, "time": TIMES, "k": VALUES}, device_column="dev")
    result = schema_db.scan("A", columns=["k"])
    schema_db.execute("CREATE DOCUMENT TYPE Copy; CREATE PROPERTY Copy.k INT64")
    schema_db.insert("Copy", result, device_column="device")  # the stream itself
    schema_db.insert("Copy", result.to_arrow(), device_column="device")  # and as a table: same rows
    assert schema_db.scan("Copy").to_pydict() == _expected()


def test_long_format_in_a_transaction_is_atomic(schema_db: arcadego.Database) -> None:
    with schema_db.transaction() as tx:
        tx.insert("A", {"dev": ["x", "y"], "time": [1, 1], "k": [1, 2]}, device_column="dev")
        # A null device fails the statement and adds nothing of it; the
        # transaction goes on.
        with pytest.raises(arcadego.InvalidArgumentError, match="row 1 has no device"):
            tx.insert("A", {"dev": ["z", None], "time": [1, 2], "k": [3, 4]}, device_column="dev")
        tx.insert("A", {"dev": ["x"], "time": [2], "k": [5]}, device_column="dev")
    got = schema_db.scan("A", columns=["k"]).to_pydict()
    assert got == {"device": ["x", "x", "y"], "time": [1, 2, 1], "k": [1, 5, 2]}


def test_every_form_loads_in_a_transaction_too(schema_db: arcadego.Database, tmp_path: os.PathLike[str]) -> None:
    """The transaction's stream path checks every batch before the first
    goes in; a device column may be named "device" (no property can be)."""
    forms = _forms(tmp_path)
    with schema_db.transaction() as tx:
        for i, (form, data) in enumerate(forms.items()):
            tx.execute(f"CREATE DOCUMENT TYPE T{i}; CREATE PROPERTY T{i}.k INT64")
            tx.insert(f"T{i}", data, device_column="dev")
        tx.execute("CREATE DOCUMENT TYPE Named; CREATE PROPERTY Named.k INT64")
        tx.insert("Named", pa.table({"device": DEVICES, "time": TIMES, "k": VALUES}), device_column="device")
    for i, form in enumerate(forms):
        assert schema_db.scan(f"T{i}").to_pydict() == _expected(), form
    assert schema_db.scan("Named").to_pydict() == _expected()


def test_a_bad_batch_of_a_stream_in_a_transaction_adds_nothing(schema_db: arcadego.Database) -> None:
    good = pa.record_batch({"dev": ["a", "b"], "time": [1, 1], "k": [1, 2]})
    bad = pa.record_batch({"dev": ["c", None], "time": [2, 2], "k": [3, 4]})
    with schema_db.transaction() as tx:
        with pytest.raises(arcadego.InvalidArgumentError, match="row 1 has no device"):
            tx.insert("A", pa.RecordBatchReader.from_batches(good.schema, [good, bad]), device_column="dev")
        tx.insert("A", {"dev": ["x"], "time": [5], "k": [9]}, device_column="dev")
    assert schema_db.scan("A", columns=["k"]).to_pydict() == {"device": ["x"], "time": [5], "k": [9]}


@pytest.mark.parametrize("data,column,fragment", [
    ({"dev": ["a"], "time": [1], "k": [1]}, "nope", 'no device column "nope"'),
    ({"dev": [1], "time": [1], "k": [1]}, "dev", "not STRING"),
    ({"dev": ["a", "b\n"], "time": [1, 2], "k": [1, 2]}, "dev", "control character"),
    ({"dev": ["a", "b"], "time": [1, 2], "k": [1.5, 2.5]}, "dev", 'column "k"'),
])
def test_bad_long_batches_add_nothing(schema_db: arcadego.Database, data: dict, column: str,
                                      fragment: str) -> None:
    with pytest.raises(arcadego.InvalidArgumentError, match=fragment):
        schema_db.insert("A", data, device_column=column)
    assert schema_db.scan("A").to_pydict()["time"] == []


def test_device_and_device_column_are_exclusive(schema_db: arcadego.Database) -> None:
    with pytest.raises(arcadego.InvalidArgumentError, match="not both"):
        schema_db.insert("A", {"dev": ["a"], "time": [1], "k": [1]}, device="a", device_column="dev")
