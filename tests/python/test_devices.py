"""devices() and device-prefix scans: the sorted device directories of the
memtable and of the files' footers, no data scan."""

from __future__ import annotations

import pytest

import arcadego


@pytest.mark.parametrize("flushed", [False, True])
def test_devices_and_prefix_scans(schema_db: arcadego.Database, flushed: bool) -> None:
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


def test_device_names_with_quotes_and_backslashes(mem_db: arcadego.Database) -> None:
    """devices() returns every name as written: quotes, backslashes and
    non-ASCII included (the library writes its JSON by hand)."""
    mem_db.execute("CREATE DOCUMENT TYPE Q; CREATE PROPERTY Q.k INT64")
    names = ['plain', 'with "quotes"', "back\\slash", "é☃ünï", "tab-less/slash", ""]
    for i, name in enumerate(names):
        mem_db.insert("Q", {"time": [i, i + 1], "k": [1, 2]}, device=name)
    got = mem_db.devices("Q")
    assert got["device"] == sorted(names)
    for name, rows, first, last in zip(got["device"], got["rows"], got["first"], got["last"]):
        i = names.index(name)
        assert (rows, first, last) == (2, i, i + 1)
