"""dict and numpy input, and results, without pyarrow.

This module runs in the second virtualenv that has no pyarrow (and no
pandas), and in the full one too. Nothing is skipped: the test of the
missing-pyarrow message checks the real absence where pyarrow is missing and
simulates it where it is installed.
"""

from __future__ import annotations

import datetime as dt
import importlib.util

import numpy as np
import pytest

import arcadego
from arcadego import _optional

HAVE_PYARROW = importlib.util.find_spec("pyarrow") is not None


def test_dict_of_lists_round_trip(arcadego_db: arcadego.Database) -> None:
    db = arcadego_db
    with db.transaction() as tx:
        tx.create_type("T")
        for name, ptype in [("i", "INT64"), ("i32", "INT32"), ("f", "DOUBLE"), ("f32", "FLOAT"),
                            ("b", "BOOLEAN"), ("s", "STRING"), ("y", "BINARY"),
                            ("ts", "TIMESTAMP"), ("d", "DATE")]:
            tx.create_property("T", name, ptype)
    data = {
        "time": [1, 2, 3],
        "i": [1, None, -3],
        "i32": [7, 8, None],
        "f": [1, None, 2.5],  # ints into a DOUBLE property: typed from the schema
        "f32": [0.5, None, None],
        "b": [True, None, False],
        "s": ["a", None, "héllo ✓"],
        "y": [b"\x00\x01", b"", None],
        "ts": [dt.datetime(2024, 1, 1, 12, 0, 0, 5), None, dt.datetime(1969, 12, 31)],
        "d": [dt.date(2024, 2, 29), None, dt.date(1970, 1, 1)],
    }
    db.insert("T", data, device="d1")
    got = db.scan("T").to_pydict()
    assert got["device"] == ["d1"] * 3
    assert got["time"] == [1, 2, 3]
    for key in data:
        if key != "time":
            assert got[key] == [float(v) if key == "f" and v is not None else v for v in data[key]], key


def test_numpy_round_trip(mem_db: arcadego.Database) -> None:
    n = 1000
    data = {
        "time": np.arange(n, dtype=np.int64),
        "i64": np.arange(n, dtype=np.int64) * 3,
        "i32": np.arange(n, dtype=np.int32),
        "u8": np.full(n, 200, dtype=np.uint8),
        "f64": np.linspace(0, 1, n),
        "f32": np.linspace(0, 1, n, dtype=np.float32),
        "b": np.arange(n) % 3 == 0,
        "s": np.array([f"v{i}" for i in range(n)]),
        "ts": np.arange(n).astype("datetime64[ms]"),
        "m": np.ma.array(np.arange(n), mask=np.arange(n) % 2 == 1),
    }
    mem_db.insert("N", data, device="dev")
    props = {p["name"]: p["type"] for p in mem_db.describe("N")["properties"]}
    assert props["i32"] == "INT32" and props["u8"] == "INT32" and props["f32"] == "FLOAT"
    got = mem_db.scan("N").to_pydict()
    assert got["time"] == list(range(n))
    assert got["i64"] == (np.arange(n) * 3).tolist()
    assert got["u8"] == [200] * n
    assert got["f64"] == data["f64"].tolist()
    assert got["f32"] == data["f32"].tolist()
    assert got["b"] == data["b"].tolist()
    assert got["s"] == data["s"].tolist()
    assert got["m"] == [i if i % 2 == 0 else None for i in range(n)]
    assert got["ts"][1] in (dt.datetime(1970, 1, 1, 0, 0, 0, 1000),)


def test_numpy_datetime_time_column_and_nat(mem_db: arcadego.Database) -> None:
    times = np.array(["2024-01-01T00:00:00", "2024-01-01T00:00:01"], dtype="datetime64[ns]")
    vals = np.array(["2024-01-01", "NaT"], dtype="datetime64[ns]")
    mem_db.insert("W", {"time": times, "v": vals})
    rows = mem_db.scan("W").to_pylist()
    assert [r["time"] for r in rows] == [dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 1)]
    assert [r["v"] for r in rows] == [dt.datetime(2024, 1, 1), None]


def test_ragged_dict_is_invalid_argument(mem_db: arcadego.Database) -> None:
    with pytest.raises(arcadego.InvalidArgumentError, match="different lengths") as info:
        mem_db.insert("R", {"time": [1, 2], "k": [1]})
    assert isinstance(info.value, ValueError)
    assert mem_db.types() == []


@pytest.mark.parametrize(
    "data, match",
    [
        ({"time": [1], "k": [None]}, "all None"),
        ({"time": [1, 2], "k": [1, "a"]}, "mixed"),
        ({"time": [1], "k": [[1, 2]]}, "unsupported"),
        ({"time": [1], "k": 5}, "expected a list"),
        ({}, "no columns"),
        ({"time": np.zeros((2, 2))}, "one-dimensional"),
    ],
    ids=["all-none", "mixed-types", "nested-list", "scalar", "empty", "2d-array"],
)
def test_bad_dict_input(mem_db: arcadego.Database, data: dict, match: str) -> None:
    with pytest.raises(arcadego.InvalidArgumentError, match=match):
        mem_db.insert("R", data)


def test_unsupported_object_is_invalid_argument(mem_db: arcadego.Database) -> None:
    with pytest.raises(arcadego.InvalidArgumentError, match="cannot insert"):
        mem_db.insert("R", [1, 2, 3])


def test_empty_strings_and_zero_rows(mem_db: arcadego.Database) -> None:
    mem_db.insert("E", {"time": [1, 2], "s": ["", ""]})
    mem_db.insert("E", {"time": np.array([], dtype=np.int64), "s": np.array([], dtype=str)})
    assert mem_db.scan("E").to_pydict() == {"device": ["", ""], "time": [1, 2], "s": ["", ""]}


def test_scan_filters(mem_db: arcadego.Database) -> None:
    for dev in ("a", "b", "c"):
        mem_db.insert("F", {"time": list(range(10)), "k": list(range(10))}, device=dev)
    res = mem_db.scan("F", columns=["k"], device=["a", "c"], start=2, end=5)
    rows = res.to_pylist()
    assert [(r["device"], r["time"]) for r in rows] == [(d, t) for d in "ac" for t in (2, 3, 4)]
    assert list(rows[0]) == ["device", "time", "k"]
    assert mem_db.scan("F", device="b").to_pydict()["k"] == list(range(10))
    with pytest.raises(arcadego.InvalidArgumentError):
        mem_db.scan("F", start=1.5)


def test_device_dictionary_is_decoded(mem_db: arcadego.Database) -> None:
    """The device column comes dictionary-encoded (int32 indices, one
    dictionary entry per batch): the reader gives plain str, batch by batch."""
    from arcadego import _cdata
    from arcadego._import import read_stream

    devices = ["zeta", "", "é-1", "alpha"]
    for dev in devices:
        mem_db.insert("V", {"time": [1, 2, 3], "k": [1, 2, 3]}, device=dev)
    res = mem_db.scan("V", batch_rows=2)
    want = [d for d in sorted(devices) for _ in range(3)]
    assert res.to_pydict()["device"] == want
    rows = res.to_pylist()
    assert [r["device"] for r in rows] == want and all(type(r["device"]) is str for r in rows)
    assert mem_db.scan("V", device="é-1").to_pylist()[2] == {"device": "é-1", "time": 3, "k": 3}
    address = res._scan()
    try:
        fields, _ = read_stream(address)
    finally:
        _cdata.free(address)
    assert [(f.name, f.format) for f in fields] == [("device", "i"), ("time", "l"), ("k", "l")]
    assert fields[0].dictionary is not None and fields[0].dictionary.format == "u"
    assert fields[1].dictionary is None


def test_devices_without_pyarrow(mem_db: arcadego.Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """devices() reads the library's Arrow batch with ctypes alone."""
    if HAVE_PYARROW:  # simulate the absence
        monkeypatch.setitem(_optional._cache, "pyarrow", None)
    for i, name in enumerate(["b/2", "a/1", "é-3"]):
        mem_db.insert("D", {"time": [i, i + 10], "k": [1, 2]}, device=name)
    assert mem_db.devices("D") == {"device": ["a/1", "b/2", "é-3"], "rows": [2, 2, 2],
                                   "first": [1, 0, 2], "last": [11, 10, 12]}
    assert mem_db.devices("D", prefix="b/") == {"device": ["b/2"], "rows": [2], "first": [0], "last": [10]}


def test_missing_pyarrow_is_reported(mem_db: arcadego.Database, monkeypatch: pytest.MonkeyPatch) -> None:
    mem_db.insert("P", {"time": [1], "k": [1]})
    if HAVE_PYARROW:  # simulate the absence
        monkeypatch.setitem(_optional._cache, "pyarrow", None)
    assert _optional.pyarrow() is None
    with pytest.raises(ImportError, match=r"arcadego\[arrow\]"):
        mem_db.scan("P").to_arrow()
    with pytest.raises(ImportError, match=r"devices_arrow\(\) needs pyarrow"):
        mem_db.devices_arrow("P")
    assert mem_db.scan("P").to_pylist() == [{"device": "", "time": 1, "k": 1}]


def test_no_pyarrow_venv_really_lacks_pyarrow() -> None:
    """In the no-pyarrow venv this proves the suite ran without pyarrow;
    in the full venv it proves pyarrow is importable."""
    if HAVE_PYARROW:
        import pyarrow  # noqa: F401
    else:
        with pytest.raises(ImportError):
            import pyarrow  # noqa: F401
        assert _optional.pyarrow() is None


def test_aggregate_last_and_where_without_pyarrow(mem_db: arcadego.Database) -> None:
    mem_db.insert("Q", {"time": [1, 2, 3, 4], "x": [1.0, None, 3.0, 5.0], "s": ["a", "b", None, "a"]}, device="d")
    mem_db.insert("Q", {"time": [2], "x": [9.0], "s": ["c"]}, device="e")
    assert mem_db.aggregate("Q", {"x": ["sum", "count"]}, by_device=True).to_pylist() == [
        {"device": "d", "time": 1, "x_sum": 9.0, "x_count": 3},
        {"device": "e", "time": 2, "x_sum": 9.0, "x_count": 1},
    ]
    assert mem_db.last("Q", ["s"]).to_pydict() == {"device": ["d", "e"], "time": [4, 2], "s": ["a", "c"], "s_time": [4, 2]}
    assert mem_db.scan("Q", columns=["s"], where=("x", ">", 2)).to_pydict() == {
        "device": ["d", "d", "e"], "time": [3, 4, 2], "s": [None, "a", "c"]}


def test_to_numpy_without_pyarrow(mem_db: arcadego.Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """to_numpy() gives the dtypes its docstring promises with or without
    pyarrow: numbers in their dtype (integers with nulls as float64 with
    NaN), booleans with nulls as objects, timestamps in their unit with NaT,
    strings and the device as objects; where pyarrow is installed, the same
    arrays as its to_numpy, batch boundaries (nulls in one batch only)
    included."""
    with mem_db.transaction() as tx:
        tx.create_type("U")
        for name, ptype in [("i", "INT64"), ("j", "INT32"), ("f", "DOUBLE"), ("b", "BOOLEAN"), ("c", "BOOLEAN"),
                            ("s", "STRING"), ("ts", "TIMESTAMP"), ("d", "DATE")]:
            tx.create_property("U", name, ptype)
    mem_db.insert("U", {"time": [1, 2], "i": [1, None], "j": [7, 8], "f": [0.5, None], "b": [True, None],
                        "c": [True, False], "s": ["a", None],
                        "ts": [dt.datetime(2024, 1, 1, 0, 0, 0, 1), None], "d": [dt.date(2024, 2, 29), None]},
                   device="d1")
    mem_db.insert("U", {"time": [3], "i": [5], "j": [9], "f": [1.5], "b": [False], "c": [True], "s": ["z"],
                        "ts": [dt.datetime(1969, 12, 31)], "d": [dt.date(1970, 1, 1)]}, device="d2")
    res = mem_db.scan("U")
    with_arrow = res.to_numpy() if HAVE_PYARROW else None
    if HAVE_PYARROW:
        monkeypatch.setitem(_optional._cache, "pyarrow", None)
    got = res.to_numpy()
    assert got["device"].dtype == object and got["device"].tolist() == ["d1", "d1", "d2"]
    assert got["time"].dtype == np.int64 and got["time"].tolist() == [1, 2, 3]
    assert got["i"].dtype == np.float64 and np.isnan(got["i"][1]) and got["i"][[0, 2]].tolist() == [1.0, 5.0]
    assert got["j"].dtype == np.int32 and got["j"].tolist() == [7, 8, 9]
    assert got["f"].dtype == np.float64 and np.isnan(got["f"][1])
    assert got["b"].dtype == object and got["b"].tolist() == [True, None, False]
    assert got["c"].dtype == bool and got["c"].tolist() == [True, False, True]
    assert got["s"].dtype == object and got["s"].tolist() == ["a", None, "z"]
    assert got["ts"].dtype == np.dtype("datetime64[ns]")
    assert got["ts"][0] == np.datetime64("2024-01-01T00:00:00.000001") and np.isnat(got["ts"][1])
    assert got["d"].dtype == np.dtype("datetime64[D]") and np.isnat(got["d"][1])
    assert got["d"][0] == np.datetime64("2024-02-29")
    if with_arrow is not None:
        assert list(with_arrow) == list(got)
        for name, arr in with_arrow.items():
            assert arr.dtype == got[name].dtype, name
            assert np.array_equal(arr, got[name], equal_nan=arr.dtype.kind in "fmM"), name
    empty = mem_db.scan("U", start=100).to_numpy()
    assert empty["i"].dtype == np.int64 and len(empty["i"]) == 0


def test_dict_exports_release_through_the_library() -> None:
    """A dict's structs carry the library's marking release callbacks (no
    call back into Python per struct): releasing the parent marks every
    child released, and what no call took is released by release_all."""
    import ctypes

    from arcadego import _export, _lib

    cols, n = _export.columns_from_mapping({"time": [1, 2], "x": [1.5, None], "s": ["a", "b"]}, lambda c: None)
    exp = _export.export_columns(cols, n)
    marks = (ctypes.cast(_lib.lib.arcadego_mark_schema_released, ctypes.c_void_p).value,
             ctypes.cast(_lib.lib.arcadego_mark_array_released, ctypes.c_void_p).value)
    assert set(exp.schemas[:, _export._S_RELEASE].tolist()) == {marks[0]}
    assert set(exp.arrays[:, _export._A_RELEASE].tolist()) == {marks[1]}
    exp.release_all()
    assert not exp.schemas[:, _export._S_RELEASE].any()
    assert not exp.arrays[:, _export._A_RELEASE].any()


def test_many_small_dict_inserts_keep_their_rows() -> None:
    """Each insert's buffers live until the library has copied them: a
    thousand small inserts, each of fresh lists, read back whole."""
    db = arcadego.connect(None, auto_create=True)
    try:
        for i in range(1000):
            db.insert("S", {"time": [i], "x": [float(i)], "s": [f"v{i}"]}, device=f"d{i % 7}")
        got = db.scan("S").to_pydict()
        assert sorted(zip(got["time"], got["x"], got["s"])) == [(i, float(i), f"v{i}") for i in range(1000)]
    finally:
        db.close()
