"""pandas DataFrames in (with NaN, None, NaT) and out, with pyarrow and
through the numpy path that works without it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import arcadego
from arcadego import _optional

pd = pytest.importorskip("pandas", reason="the full venv installs pandas")


def _frame() -> pd.DataFrame:
    return pd.DataFrame({
        "time": np.arange(4, dtype=np.int64),
        "x": [1.5, np.nan, None, 4.0],
        "s": ["a", None, np.nan, "d"],
        "t": pd.to_datetime(["2024-01-01", None, pd.NaT, "2024-01-04"]),
        "i": pd.array([1, None, 3, pd.NA], dtype="Int64"),
        "b": [True, False, True, False],
    })


@pytest.fixture(params=["pyarrow", "numpy"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run with pyarrow (when installed) and with the numpy fallback."""
    if request.param == "numpy":
        monkeypatch.setitem(_optional._cache, "pyarrow", None)
    else:
        pytest.importorskip("pyarrow")
    return str(request.param)


def test_dataframe_nulls_round_trip(mem_db: arcadego.Database, path: str) -> None:
    mem_db.insert("D", _frame(), device="p")
    out = mem_db.scan("D").to_pandas()
    assert list(out.columns) == ["device", "time", "x", "s", "t", "i", "b"]
    assert out["x"].iloc[0] == 1.5 and out["x"].isna().tolist() == [False, True, True, False]
    assert out["s"].isna().tolist() == [False, True, True, False]
    assert out["t"].isna().tolist() == [False, True, True, False]
    assert out["t"].iloc[3] == pd.Timestamp("2024-01-04")
    assert out["i"].isna().tolist() == [False, True, False, True]
    assert out["b"].tolist() == [True, False, True, False]
    rows = mem_db.scan("D").to_pylist()
    assert rows[1]["x"] is None and rows[1]["s"] is None and rows[1]["t"] is None
    assert rows[3]["i"] is None and not math.isnan(rows[0]["x"])


def test_named_index_becomes_a_column(mem_db: arcadego.Database, path: str) -> None:
    df = pd.DataFrame({"v": [1, 2]}, index=pd.Index([10, 20], name="time"))
    mem_db.insert("I", df)
    assert mem_db.scan("I").to_pydict()["time"] == [10, 20]


def test_unnamed_index_is_dropped(mem_db: arcadego.Database, path: str) -> None:
    df = pd.DataFrame({"time": [1, 2], "v": [1, 2]}, index=[5, 9])
    mem_db.insert("J", df)
    assert mem_db.describe("J")["properties"] == [{"name": "v", "type": "INT64"}]


def test_timezone_aware_column(mem_db: arcadego.Database, path: str) -> None:
    df = pd.DataFrame({"time": [1], "t": pd.to_datetime(["2024-01-01 12:00"]).tz_localize("Europe/Paris")})
    mem_db.insert("Z", df)
    got = mem_db.scan("Z").to_pandas()["t"].iloc[0]
    assert pd.Timestamp(got).value == pd.Timestamp("2024-01-01 11:00", tz="UTC").value


def test_device_is_categorical(mem_db: arcadego.Database, path: str) -> None:
    """The dictionary-encoded device column is a Categorical on both paths."""
    for dev in ("b", "a"):
        mem_db.insert("C", {"time": [1, 2], "k": [1, 2]}, device=dev)
    out = mem_db.scan("C").to_pandas()
    assert isinstance(out["device"].dtype, pd.CategoricalDtype)
    assert list(out["device"].cat.categories) == ["a", "b"]
    assert out["device"].tolist() == ["a", "a", "b", "b"]
    assert out[out["device"] == "b"]["k"].tolist() == [1, 2]
    empty = mem_db.scan("C", start=10).to_pandas()
    assert len(empty) == 0 and isinstance(empty["device"].dtype, pd.CategoricalDtype)


def test_to_pandas_without_pyarrow(mem_db: arcadego.Database, monkeypatch: pytest.MonkeyPatch) -> None:
    mem_db.insert("N", {"time": [1, 2], "k": [5, None]})
    monkeypatch.setitem(_optional._cache, "pyarrow", None)
    out = mem_db.scan("N").to_pandas()
    assert out["time"].tolist() == [1, 2]
    assert out["k"].iloc[0] == 5 and pd.isna(out["k"].iloc[1])


@pytest.mark.parametrize("named_index", [False, True])
def test_wide_numeric_frame_matches_from_pandas(mem_db: arcadego.Database, named_index: bool,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A wide frame of plain numpy columns takes a short path (one 2-D array
    per dtype, not a Series per column): the rows stored are those of
    pyarrow's from_pandas, NaN as null included."""
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    n = 7
    cols: dict[str, object] = {"time": np.arange(n, dtype=np.int64) * 10}
    for i in range(80):
        kind = i % 5
        if kind == 0:
            v = rng.normal(size=n)
            v[rng.random(n) < 0.3] = np.nan
        elif kind == 1:
            v = rng.integers(-1000, 1000, size=n)
        elif kind == 2:
            v = rng.random(n) < 0.5
        elif kind == 3:
            v = rng.normal(size=n).astype(np.float32)
        else:
            v = rng.integers(0, 100, size=n).astype(np.int32)
        cols[f"c{i}"] = v
    df = pd.DataFrame(cols)
    if named_index:
        df = df.set_index("time")
    from arcadego import _database

    took: list[bool] = []
    original = _database._numeric_frame_to_arrow

    def spy(pa_module: object, frame: object) -> object:
        table = original(pa_module, frame)
        took.append(table is not None)
        return table

    monkeypatch.setattr(_database, "_numeric_frame_to_arrow", spy)
    db = mem_db
    with db.transaction() as tx:
        tx.create_type("Fast")
        tx.create_type("Slow")
    reference = pa.Table.from_pandas(df.reset_index() if named_index else df, preserve_index=False)
    for name, data in (("Fast", df), ("Slow", reference)):
        with db.transaction() as tx:
            for c in reference.column_names:
                if c != "time":
                    typ = {"double": "DOUBLE", "int64": "INT64", "bool": "BOOLEAN", "float": "FLOAT",
                           "int32": "INT32"}[str(reference.schema.field(c).type)]
                    tx.create_property(name, c, typ)
        db.insert(name, data, device="d")
    assert took == [True], "the wide frame did not take the short path"
    fast, slow = db.scan("Fast").to_arrow(), db.scan("Slow").to_arrow()
    assert fast.num_rows == n
    assert fast.to_pylist() == slow.to_pylist()
    assert fast.column("c0").null_count == reference.column("c0").null_count > 0
