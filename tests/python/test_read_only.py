"""connect(read_only=True): read a database that another process writes; and compact()."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import arcadego
from arcadego import _cli

WRITER = textwrap.dedent("""
    import sys
    import arcadego
    db = arcadego.connect(sys.argv[1], sync="normal")
    db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
    db.insert("A", {"time": list(range(1000)), "k": list(range(1000))}, device="flushed")
    db.flush()
    db.insert("A", {"time": [1, 2], "k": [7, 8]}, device="logged")
    print("ready", flush=True)
    sys.stdin.readline()  # the reader has looked
    db.insert("A", {"time": [3], "k": [9]}, device="logged")
    print("more", flush=True)
    sys.stdin.readline()
    db.close()
""")


def _files(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            st = os.stat(os.path.join(dirpath, name))
            out[os.path.join(dirpath, name)] = (st.st_size, st.st_mtime_ns)
    return out


def test_read_only_beside_a_writing_process(tmp_path: Path) -> None:
    path = tmp_path / "db"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "ready"
        with pytest.raises(arcadego.StorageError):  # the writer holds the lock
            arcadego.connect(path)
        before = _files(path)
        with arcadego.connect(path, read_only=True) as db:
            assert db.read_only
            got = db.scan("A").to_pydict()
            assert len(got["k"]) == 1002
            assert db.scan("A", device="logged").to_pydict()["k"] == [7, 8]
            with pytest.raises(arcadego.InvalidArgumentError, match="read-only"):
                db.insert("A", {"time": [5], "k": [1]}, device="x")
            with pytest.raises(arcadego.InvalidArgumentError, match="read-only"):
                db.execute("CREATE PROPERTY A.z DOUBLE")
            with pytest.raises(arcadego.InvalidArgumentError, match="read-only"):
                db.flush()
            with pytest.raises(arcadego.InvalidArgumentError, match="read-only"):
                db.clone(tmp_path / "copy")
            writer.stdin.write("\n")
            writer.stdin.flush()
            assert writer.stdout.readline().strip() == "more"
            # Opened before the writer's last commit: it does not see it.
            assert db.scan("A", device="logged").to_pydict()["k"] == [7, 8]
        assert not (tmp_path / "copy").exists()
        with arcadego.connect(path, read_only=True) as db:
            assert db.scan("A", device="logged").to_pydict()["k"] == [7, 8, 9]
        after = _files(path)
        # The reader wrote nothing: every file it saw is as it was, except
        # the log the writer appended to meanwhile.
        changed = {p for p in before if before[p] != after.get(p) and os.sep + "wal" + os.sep not in p}
        assert not changed
    finally:
        if writer.stdin is not None:
            writer.stdin.write("\n")
            writer.stdin.close()
        assert writer.wait() == 0


def test_read_only_beside_a_writer_in_this_process(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
        db.insert("A", {"time": [1], "k": [10]}, device="d")
        with arcadego.connect(tmp_path / "db", read_only=True) as reader:
            assert reader.scan("A").to_pydict()["k"] == [10]
        db.insert("A", {"time": [2], "k": [20]}, device="d")  # the writer is unaffected
        assert db.scan("A").to_pydict()["k"] == [10, 20]


def test_read_only_refusals(tmp_path: Path) -> None:
    with pytest.raises(arcadego.NotFoundError):
        arcadego.connect(tmp_path / "nothing", read_only=True)
    assert not (tmp_path / "nothing").exists()
    with pytest.raises(arcadego.InvalidArgumentError, match="in memory"):
        arcadego.connect(None, read_only=True)
    with pytest.raises(arcadego.InvalidArgumentError, match="read_only"):
        arcadego.connect(tmp_path / "db", read_only="yes")  # type: ignore[arg-type]


def test_cli_reads_beside_a_writer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
        db.insert("A", {"time": [1, 2], "k": [10, 20]}, device="d")
        assert _cli.main(["info", str(tmp_path / "db")]) == 0
        out = capsys.readouterr().out
        assert "A" in out and " 2 " in out
        assert _cli.main(["scan", str(tmp_path / "db"), "A"]) == 0
        assert "20" in capsys.readouterr().out


def test_compact_from_python(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64; CREATE PROPERTY A.gone INT64")
        for i in range(3):
            db.insert("A", {"time": [i], "k": [i], "gone": [-i]}, device=f"d{i}")
            db.flush()
        db.execute("DROP PROPERTY A.gone")
        rows = db.scan("A").to_pydict()
        (path,) = [t["path"] for t in db.stats()["types"]]
        assert len(list(Path(path).glob("*.parquet"))) == 3
        db.compact()
        assert len(list(Path(path).glob("*.parquet"))) == 1
        assert db.stats()["compactions"] == 1
        assert db.scan("A").to_pydict() == rows
        with pytest.raises(arcadego.NotFoundError):
            db.compact("Nope")
        with arcadego.connect(tmp_path / "db", read_only=True) as reader:
            with pytest.raises(arcadego.InvalidArgumentError, match="read-only"):
                reader.compact()


LIFECYCLE_WRITER = textwrap.dedent("""
    import sys
    import arcadego
    db = arcadego.connect(sys.argv[1], sync="normal", memtable_budget=64 << 10)
    db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
    print("ready", flush=True)
    for n in range(300):
        db.insert("A", {"time": [n * 10 + i for i in range(10)], "k": [n * 10 + i for i in range(10)]},
                  device=f"d{n % 4}")
        if n % 50 == 49:
            db.delete("A", device="d0", end=(n - 40) * 10)  # the oldest rows of d0 go
        if n % 30 == 29:
            db.flush()
        if n % 70 == 69:
            db.compact()
    print("done", flush=True)
    sys.stdin.readline()
    db.close()
""")


def test_reader_beside_an_ingest_that_flushes_compacts_and_deletes(tmp_path: Path) -> None:
    """A reader opens read-only and scans again and again while another
    process ingests, deletes, flushes and compacts: no error, every row it
    sees was written as committed (k == time), and the rows of the devices
    nothing deletes from never go down."""
    path = tmp_path / "db"
    writer = subprocess.Popen([sys.executable, "-c", LIFECYCLE_WRITER, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdin is not None
    try:
        assert writer.stdout.readline().strip() == "ready"
        finished = threading.Event()
        out = writer.stdout
        threading.Thread(target=lambda: out.readline() == "done\n" and finished.set(), daemon=True).start()
        last = {"d1": 0, "d2": 0, "d3": 0}
        scans, done = 0, False
        while not done:
            done = finished.is_set()  # checked before the scan: one more scan after the last write
            with arcadego.connect(path, read_only=True) as db:
                got = db.scan("A").to_pydict()
            scans += 1
            assert got["k"] == got["time"]
            for dev in last:
                n = got["device"].count(dev)
                assert n >= last[dev], f"{dev}: {n} rows after {last[dev]}"
                last[dev] = n
        assert last == {"d1": 750, "d2": 750, "d3": 750}
        assert scans >= 2
    finally:
        writer.stdin.write("\n")
        writer.stdin.close()
        assert writer.wait() == 0


def test_refresh_sees_later_commits(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
        db.insert("A", {"time": [1], "k": [1]}, device="d")
        with arcadego.connect(tmp_path / "db", read_only=True) as reader:
            db.insert("A", {"time": [2], "k": [2]}, device="d")
            assert reader.scan("A").to_pydict()["k"] == [1]
            reader.refresh()
            assert reader.scan("A").to_pydict()["k"] == [1, 2]
        with pytest.raises(arcadego.InvalidArgumentError, match="read-only"):
            db.refresh()
