"""devices() and device-prefix scans: the sorted device directories of the
memtable and of the files' footers, no data scan."""

from __future__ import annotations

import ctypes
import datetime as dt
import json

import pytest

import arcadego
from arcadego import _cdata, _lib, _optional
from arcadego._import import read_device_list

try:  # the type of time stamps below, whichever way devices() decodes
    import pyarrow
except ImportError:
    pyarrow = None


@pytest.fixture(params=["pyarrow", "ctypes"])
def decoder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """devices() reads the library's Arrow batch with pyarrow when it is
    installed, else with ctypes alone: each test runs both ways."""
    if request.param == "ctypes":
        monkeypatch.setitem(_optional._cache, "pyarrow", None)
    elif _optional.pyarrow() is None:
        pytest.skip("pyarrow is not installed in this venv; the ctypes case runs")
    return str(request.param)


def devices_json(db: arcadego.Database, type: str, prefix: str | None = None) -> dict[str, list[object]]:
    """The listing through arcadego_devices, the JSON form of the C API."""
    request: dict[str, str] = {"type": type}
    if prefix is not None:
        request["prefix"] = prefix
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    _lib.check(_lib.lib.arcadego_devices(db._require_open(), json.dumps(request).encode(), ctypes.byref(out),
                                         ctypes.byref(err)), err)
    doc = json.loads(_lib.take_string(out) or "{}")
    return {k: doc.get(k) or [] for k in ("device", "rows", "first", "last")}


@pytest.mark.parametrize("flushed", [False, True])
def test_devices_and_prefix_scans(schema_db: arcadego.Database, flushed: bool, decoder: str) -> None:
    names = [f"plant-{p}/dev-{d:03d}" for p in range(3) for d in range(40)]
    schema_db.insert("A", {"dev": [n for n in names for _ in range(2)], "time": [1, 5] * len(names),
                           "k": list(range(2 * len(names)))}, device_column="dev")
    if flushed:
        schema_db.flush()
    # Newer rows of a few devices in the memtable, over flushed ones.
    schema_db.insert("A", {"dev": ["plant-1/dev-007", "plant-9/new"], "time": [9, 2], "k": [0, 0]},
                     device_column="dev")
    all_names = sorted(names + ["plant-9/new"])
    devs = schema_db.devices("A")
    assert devs["device"] == all_names
    i = devs["device"].index("plant-1/dev-007")
    assert (devs["rows"][i], devs["first"][i], devs["last"][i]) == (3, 1, 9)
    j = devs["device"].index("plant-9/new")
    assert (devs["rows"][j], devs["first"][j], devs["last"][j]) == (1, 2, 2)

    p1 = schema_db.devices("A", prefix="plant-1/")
    assert p1["device"] == [n for n in all_names if n.startswith("plant-1/")]
    assert schema_db.devices("A", prefix="zzz")["device"] == []

    got = schema_db.scan("A", columns=["k"], device_prefix="plant-1/dev-00").to_pydict()
    want_devs = [n for n in all_names if n.startswith("plant-1/dev-00")]
    assert sorted(set(got["device"])) == want_devs
    assert len(got["device"]) == 2 * len(want_devs) + 1  # dev-007 has a third row
    with pytest.raises(arcadego.NotFoundError):
        schema_db.devices("Nope")


def test_device_names_with_quotes_and_backslashes(mem_db: arcadego.Database, decoder: str) -> None:
    """devices() returns every name as written: quotes, backslashes and
    non-ASCII included, and the JSON form of the C API agrees."""
    mem_db.execute("CREATE DOCUMENT TYPE Q; CREATE PROPERTY Q.k INT64")
    names = ['plain', 'with "quotes"', "back\\slash", "é☃ünï", "tab-less/slash", ""]
    for i, name in enumerate(names):
        mem_db.insert("Q", {"time": [i, i + 1], "k": [1, 2]}, device=name)
    got = mem_db.devices("Q")
    assert got["device"] == sorted(names)
    for name, rows, first, last in zip(got["device"], got["rows"], got["first"], got["last"]):
        i = names.index(name)
        assert (rows, first, last) == (2, i, i + 1)
    assert devices_json(mem_db, "Q") == got


def test_devices_times_are_ints_in_the_types_unit(mem_db: arcadego.Database, decoder: str) -> None:
    """first and last stay ints in the type's time unit, as the JSON form
    gives them, though the Arrow batch types them as its timestamps; an
    ASCII-only listing and one with other names decode alike."""
    t0 = dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc)
    ms = int(t0.timestamp() * 1000)
    pa = pyarrow
    for name in ("plant-1", "plant-2", "plänt-3"):
        times = [t0, t0 + dt.timedelta(seconds=3)]
        data = (pa.table({"time": pa.array(times, pa.timestamp("ms", "UTC")), "k": [1, 2]}) if pa is not None
                else {"time": [ms, ms + 3000], "k": [1, 2]})
        mem_db.insert("M", data, device=name)
    if pa is not None:
        assert mem_db.describe("M")["time"] == {"unit": "ms", "zone": "UTC"}
    got = mem_db.devices("M")
    assert got == {"device": ["plant-1", "plant-2", "plänt-3"], "rows": [2, 2, 2],
                   "first": [ms] * 3, "last": [ms + 3000] * 3}
    assert all(type(v) is int for v in got["first"] + got["last"] + got["rows"])
    assert mem_db.devices("M", prefix="plant-") == {k: v[:2] for k, v in got.items()}
    assert devices_json(mem_db, "M") == got
    assert mem_db.devices("M", prefix="none") == {"device": [], "rows": [], "first": [], "last": []}


@pytest.mark.skipif(pyarrow is None, reason="devices_arrow() needs pyarrow; test_no_pyarrow.py checks its message")
def test_devices_arrow_is_devices_as_a_table(mem_db: arcadego.Database) -> None:
    pa = pyarrow
    t0 = dt.datetime(2026, 1, 2, tzinfo=dt.timezone.utc)
    for i, name in enumerate(["b", "a", "é"]):
        mem_db.insert("M", pa.table({"time": pa.array([t0 + dt.timedelta(seconds=i)], pa.timestamp("us", "UTC")),
                                     "k": [i]}), device=name)
    mem_db.insert("P", {"time": [5, 6], "k": [1, 2]}, device="d")
    table = mem_db.devices_arrow("M")
    assert table.schema == pa.schema([pa.field("device", pa.string(), nullable=False),
                                      pa.field("rows", pa.int64(), nullable=False),
                                      pa.field("first", pa.timestamp("us", "UTC"), nullable=False),
                                      pa.field("last", pa.timestamp("us", "UTC"), nullable=False)])
    assert table.column("device").to_pylist() == ["a", "b", "é"]
    assert table.column("first").to_pylist() == [t0 + dt.timedelta(seconds=1), t0, t0 + dt.timedelta(seconds=2)]
    as_ints = {name: (col.cast(pa.int64()) if pa.types.is_timestamp(col.type) else col).to_pylist()
               for name, col in zip(table.column_names, table.columns)}
    assert as_ints == mem_db.devices("M")
    assert mem_db.devices_arrow("P").to_pydict() == {"device": ["d"], "rows": [2], "first": [5], "last": [6]}
    assert mem_db.devices_arrow("M", prefix="zz").num_rows == 0
    with pytest.raises(arcadego.NotFoundError, match="Nope"):
        mem_db.devices_arrow("Nope")


@pytest.mark.skipif(pyarrow is None, reason="pyarrow builds the batches here")
@pytest.mark.parametrize("sliced", ["batch", "struct"])
@pytest.mark.parametrize("name_type", ["string", "large_string"])
@pytest.mark.parametrize("names", [[], ["plant/1", "", "é☃", "x"], [""]])
def test_device_list_decoding_of_any_name_layout(name_type: str, names: list[str], sliced: str, decoder: str) -> None:
    """The decoder reads a batch of the listing's layout whoever wrote it:
    utf8 or large_utf8 names (the library's past 2 GiB), empty ones,
    non-ASCII ones, no rows, and a slice of a longer batch, whose offset
    lies in its columns (a sliced record batch) or in the struct itself
    and its columns both (a sliced struct array of sliced columns)."""
    pa = pyarrow
    n = len(names)
    lead = 2  # rows in front, sliced off
    columns = [pa.array(["lead"] * lead + names, getattr(pa, name_type)()),
               pa.array(range(-lead, n), pa.int64()),
               pa.array([-i for i in range(-lead, n)], pa.timestamp("ns")),
               pa.array([3 * i for i in range(-lead, n)], pa.timestamp("ns"))]
    keys = ["device", "rows", "first", "last"]
    c_schema, c_batch = _cdata.ArrowSchema(), _cdata.ArrowArray()
    if sliced == "batch":
        pa.record_batch(columns, names=keys).slice(lead)._export_to_c(ctypes.addressof(c_batch),
                                                                     ctypes.addressof(c_schema))
    else:
        struct = pa.StructArray.from_arrays([c.slice(1) for c in columns], names=keys).slice(lead - 1)
        struct._export_to_c(ctypes.addressof(c_batch), ctypes.addressof(c_schema))
        assert c_batch.offset == lead - 1
    try:
        got = read_device_list(c_schema, c_batch, _optional.pyarrow())
    finally:
        if c_batch.release:
            _cdata.ArrayRelease(c_batch.release)(ctypes.pointer(c_batch))
        if c_schema.release:
            _cdata.SchemaRelease(c_schema.release)(ctypes.pointer(c_schema))
    assert got == {"device": names, "rows": list(range(n)), "first": [-i for i in range(n)],
                   "last": [3 * i for i in range(n)]}
