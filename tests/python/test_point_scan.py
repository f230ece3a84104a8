"""scan(type, device=name) with no other argument (a point read) builds
its request directly instead of through the generic path: it must send
the very request the generic path sends, and refuse what it refuses, at
the same call."""

from __future__ import annotations

import pytest

import arcadego
from arcadego import _result

class _Name(str):
    """A str subclass that prints otherwise: its characters are what count."""

    def __str__(self) -> str:
        return "other"


NAMES = ["d1", "plant-07/dev-0012345", 'quote"d', "back\\slash", "tab\there", "é-ü-日本", "emoji-😀", "nul\x00in", "",
         _Name("sub")]


@pytest.mark.parametrize("name", NAMES)
def test_point_scan_sends_the_generic_request(mem_db: arcadego.Database, name: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    db = mem_db
    db.execute("CREATE DOCUMENT TYPE T")
    taken = []
    of_device = _result.Result._of_device.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(_result.Result, "_of_device",
                        classmethod(lambda cls, *a: taken.append(a) or of_device(cls, *a)))
    fast = db.scan("T", device=name)
    # ASCII names take the shortcut; the others the generic path, whose
    # check refuses lone surrogates (test_lone_surrogates_are_refused).
    assert bool(taken) == name.isascii()
    generic = _result.Result(db, db._scan_request("T", None, name, None, None, None, None, True, None))
    assert fast._json == generic._json
    assert fast.request == generic.request == {"type": "T", "devices": [name]}
    probe = _result._encode_request({"type": "T", "devices": []}).encode("utf-8")
    assert (fast._function, probe) in db._probed, "the fast path's probe is the generic one's"


def _storable(name: str) -> bool:
    """Whether insert takes name as a device: not empty, no control character."""
    return bool(name) and all(" " <= c != "\x7f" for c in name)


def test_point_scan_reads_the_device(mem_db: arcadego.Database) -> None:
    db = mem_db
    for name in filter(_storable, NAMES):
        db.insert("T", {"time": [1, 2], "v": [len(name), -1]}, device=name)
    for name in NAMES:
        result = db.scan("T", device=name)
        if not name:
            assert result.to_pylist() == []  # no such device
            continue
        if not _storable(name):
            with pytest.raises(arcadego.InvalidArgumentError, match="invalid device name"):
                result.to_pylist()  # as from the generic path: the probe names no device
            continue
        rows = result.to_pylist()
        assert rows == [{"device": name, "time": 1, "v": len(name)}, {"device": name, "time": 2, "v": -1}]


def test_point_scan_refuses_as_the_generic_path(mem_db: arcadego.Database) -> None:
    db = mem_db
    with pytest.raises(arcadego.NotFoundError, match=r'type "Nope": not found$'):
        db.scan("Nope", device="d1")  # at scan(), not at the first read
    db.execute("CREATE DOCUMENT TYPE T")
    db.scan("T", device="d1")
    db.execute("DROP TYPE T")  # a DDL: the probe that passed runs again
    with pytest.raises(arcadego.NotFoundError):
        db.scan("T", device="d1")
    with pytest.raises(arcadego.InvalidArgumentError, match="type must be str"):
        db.scan(1, device="d1")  # type: ignore[arg-type]
    with pytest.raises(arcadego.InvalidArgumentError, match="device must be str"):
        db.scan("Nope", device=[1])  # type: ignore[list-item]
    db.close()
    with pytest.raises(arcadego.ClosedError):
        db.scan("T", device="d1")


def test_lone_surrogates_are_refused(mem_db: arcadego.Database) -> None:
    """A lone surrogate has no UTF-8: refused in every request, as insert
    refuses it. (JSON would carry it as an escape that the library reads
    as U+FFFD: a scan of "a\\ud800" read the rows of "a\\ufffd".)"""
    db = mem_db
    db.insert("T", {"time": [1], "v": [1]}, device="a\ufffd")
    for call in (lambda: db.scan("T", device="a\ud800"), lambda: db.scan("T", device=["a\udfff"]),
                 lambda: db.scan("T", device_prefix="a\ud800"), lambda: db.delete("T", device="a\ud800"),
                 lambda: db.scan("T\ud800", device="a"), lambda: db.insert("T", {"time": [2], "v": [2]}, device="a\ud800")):
        with pytest.raises(arcadego.InvalidArgumentError, match="not valid Unicode"):
            call()
    assert db.scan("T", device="a\ufffd").to_pylist() == [{"device": "a\ufffd", "time": 1, "v": 1}]
