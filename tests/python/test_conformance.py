"""One conversion rule for every input form. The same logical column
(ints, floats, strings or booleans, with a null) goes into a property of
each type through every form a Python user has at hand: a dict of lists,
numpy arrays, a pyarrow Table, a polars DataFrame, pandas DataFrames of
numpy, nullable and Arrow dtypes. Each must store the same values or fail
with the same error kind; the library converts only what changes no value
(the README's conversion table) and refuses the rest, naming the column."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import arcadego

pa = pytest.importorskip("pyarrow", reason="the full venv installs pyarrow")
pd = pytest.importorskip("pandas", reason="the full venv installs pandas")
pl = pytest.importorskip("polars", reason="the full venv installs polars")

TIMES = [1, 2, 3]

# Logical columns: values with a null in the middle.
COLUMNS: dict[str, list[Any]] = {
    "ints": [7, None, -(2**31)],
    "floats": [0.5, None, -1.25],
    "strings": ["a", None, "héllo"],
    "bools": [True, None, False],
}

# The property types each logical column is stored into, and what is
# stored (None: refused with InvalidArgumentError).
EXPECTED: dict[tuple[str, str], list[Any] | None] = {
    ("ints", "INT64"): [7, None, -(2**31)],
    ("ints", "INT32"): [7, None, -(2**31)],
    ("ints", "DOUBLE"): [7.0, None, -(2.0**31)],
    ("ints", "STRING"): None,
    ("ints", "BOOLEAN"): None,
    ("floats", "DOUBLE"): [0.5, None, -1.25],
    ("floats", "FLOAT"): [0.5, None, -1.25],
    ("floats", "INT64"): None,
    ("floats", "STRING"): None,
    ("strings", "STRING"): ["a", None, "héllo"],
    ("strings", "INT64"): None,
    ("strings", "BINARY"): None,
    ("bools", "BOOLEAN"): [True, None, False],
    ("bools", "INT64"): None,
}


def _pandas_numpy(values: list[Any]) -> Any:
    # numpy dtypes have no null for ints and bools: a float NaN or an
    # object column stands for them, as pandas makes them.
    return pd.DataFrame({"time": TIMES, "c": values})


def _pandas_nullable(values: list[Any]) -> Any:
    kinds = {int: "Int64", float: "Float64", str: "string", bool: "boolean"}
    kind = kinds[type(next(v for v in values if v is not None))]
    return pd.DataFrame({"time": TIMES, "c": pd.array(values, dtype=kind)})


def _pandas_arrow(values: list[Any]) -> Any:
    return pd.DataFrame({"time": TIMES, "c": pd.Series(pa.array(values)).astype(pd.ArrowDtype(pa.array(values).type))})


def _numpy(values: list[Any]) -> Any:
    mask = [v is None for v in values]
    sample = next(v for v in values if v is not None)
    fill: Any = {int: 0, float: 0.0, str: "", bool: False}[type(sample)]
    arr = np.array([fill if v is None else v for v in values])
    return {"time": np.array(TIMES), "c": np.ma.masked_array(arr, mask=mask)}


FORMS: dict[str, Callable[[list[Any]], Any]] = {
    "dict": lambda values: {"time": TIMES, "c": values},
    "numpy": _numpy,
    "pyarrow": lambda values: pa.table({"time": TIMES, "c": values}),
    "polars": lambda values: pl.DataFrame({"time": TIMES, "c": values}),
    "pandas-nullable": _pandas_nullable,
    "pandas-arrow": _pandas_arrow,
}


_types = iter(range(10**9))


def _outcome(db: arcadego.Database, prop_type: str, data: Any) -> tuple[str, Any]:
    name = f"T{next(_types)}"  # a fresh type each time
    db.execute(f"CREATE DOCUMENT TYPE {name}; CREATE PROPERTY {name}.c {prop_type}")
    try:
        db.insert(name, data, device="d")
    except arcadego.Error as e:
        assert '"c"' in str(e), str(e)
        return type(e).__name__, None
    got = db.scan(name).to_pydict()
    assert got["time"] == TIMES
    return "ok", got["c"]


@pytest.mark.parametrize("column,prop_type", sorted(EXPECTED))
def test_every_input_form_stores_the_same(mem_db: arcadego.Database, column: str, prop_type: str) -> None:
    want = EXPECTED[(column, prop_type)]
    values = COLUMNS[column]
    outcomes = {form: _outcome(mem_db, prop_type, make(values)) for form, make in FORMS.items()}
    expected = ("InvalidArgumentError", None) if want is None else ("ok", want)
    assert outcomes == {form: expected for form in FORMS}


def test_pandas_numpy_dtypes_follow_the_same_rule(mem_db: arcadego.Database) -> None:
    """pandas keeps ints with a null as float64 (NaN): such a column is
    refused by an INT64 property (a float is not an int), while the same
    ints without a null, and the floats, are stored."""
    assert _outcome(mem_db, "INT64", _pandas_numpy([7, None, 9])) == ("InvalidArgumentError", None)
    assert _outcome(mem_db, "INT64", _pandas_numpy([7, 8, 9])) == ("ok", [7, 8, 9])
    assert _outcome(mem_db, "DOUBLE", _pandas_numpy([7, None, 9])) == ("ok", [7.0, None, 9.0])


@pytest.mark.parametrize("values,prop_type,fragment", [
    ([1.7, -1.5, "42", True], "INT64", "mixes booleans"),
    ([1, True], "INT64", "mixes booleans"),
    ([1.7, -1.5], "INT64", "DOUBLE"),
    ([2**53 + 1, 0.5], "DOUBLE", "not exact"),
    ([2**31], "INT32", "does not fit"),
    ([0.1], "FLOAT", "not exact"),
])
def test_lossy_values_are_refused_everywhere(mem_db: arcadego.Database, values: list[Any], prop_type: str,
                                              fragment: str) -> None:
    """What numpy and Arrow inputs were refused, a dict is refused too: the
    package coerces nothing on its own."""
    mem_db.execute(f"CREATE DOCUMENT TYPE A; CREATE PROPERTY A.c {prop_type}")
    with pytest.raises(arcadego.InvalidArgumentError, match=fragment):
        mem_db.insert("A", {"time": list(range(len(values))), "c": values}, device="d")
    assert mem_db.scan("A").to_pydict()["c"] == []


def test_decimals_are_refused_unless_asked_for_as_double(mem_db: arcadego.Database) -> None:
    """DuckDB's numeric literals, SUMs and HUGEINTs arrive as Arrow
    decimals, which no property type holds: refused, naming the column,
    unless decimal="double" asks for the nearest doubles."""
    duckdb = pytest.importorskip("duckdb", reason="the full venv installs duckdb")
    con = duckdb.connect()
    query = "select 1::BIGINT as time, 1.25::DECIMAL(10,2) as x, sum(2) as s"
    mem_db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.x DOUBLE; CREATE PROPERTY A.s DOUBLE")
    with pytest.raises(arcadego.InvalidArgumentError, match='"x".*decimal'):
        mem_db.insert("A", con.sql(query), device="d")
    with pytest.raises(arcadego.InvalidArgumentError, match="decimal must be"):
        mem_db.insert("A", con.sql(query), device="d", decimal="float")
    mem_db.insert("A", con.sql(query), device="d", decimal="double")
    mem_db.insert("A", pa.table({"time": [2], "x": pa.array([3], pa.decimal128(5, 0)), "s": [4.0]}), device="d",
                  decimal="double")
    assert mem_db.scan("A").to_pydict() == {"device": ["d", "d"], "time": [1, 2], "x": [1.25, 3.0], "s": [2.0, 4.0]}
