"""Every exception class, raised by bad input; nothing written afterwards."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

import arcadego
from arcadego._errors import error_for_code


def test_hierarchy() -> None:
    classes = [arcadego.InvalidArgumentError, arcadego.NotFoundError, arcadego.AlreadyExistsError,
               arcadego.ConflictError, arcadego.StorageError, arcadego.ClosedError,
               arcadego.CorruptError, arcadego.CanceledError, arcadego.InternalError]
    assert [c.code for c in classes] == list(range(1, 10))
    for c in classes:
        assert issubclass(c, arcadego.Error)
        err = error_for_code(c.code, "msg")
        assert type(err) is c and str(err) == "msg"
    assert issubclass(arcadego.InvalidArgumentError, ValueError)
    assert issubclass(arcadego.NotFoundError, LookupError)
    assert issubclass(arcadego.StorageError, OSError)
    assert issubclass(arcadego.PerformanceWarning, UserWarning)
    assert isinstance(error_for_code(42, "x"), arcadego.InternalError)


def test_invalid_argument(schema_db: arcadego.Database) -> None:
    with pytest.raises(arcadego.InvalidArgumentError, match="line 1, column"):
        schema_db.execute("CREATE DOCUMENT TYPE")
    with pytest.raises(arcadego.InvalidArgumentError):
        schema_db.insert("A", {"time": [1], "k": np.array([1.5])})  # DOUBLE into INT64
    with pytest.raises(arcadego.InvalidArgumentError):
        schema_db.create_property("A", "time", "INT64")  # reserved name
    with pytest.raises(arcadego.InvalidArgumentError):
        schema_db.create_property("A", "z", "NOT A TYPE")
    with pytest.raises(arcadego.InvalidArgumentError):
        arcadego.connect(None, sync="sometimes")
    assert schema_db.scan("A").to_pylist() == []


def test_not_found(schema_db: arcadego.Database) -> None:
    with pytest.raises(arcadego.NotFoundError):
        schema_db.describe("Nope")
    with pytest.raises(arcadego.NotFoundError):
        schema_db.insert("Nope", {"time": [1], "k": [1]})  # auto_create is off
    with pytest.raises(arcadego.NotFoundError):
        schema_db.insert("A", {"time": [1], "unknown": [1]})
    with pytest.raises(arcadego.NotFoundError):
        schema_db.scan("Nope").to_pylist()
    with pytest.raises(arcadego.NotFoundError):
        schema_db.drop_index("nope")
    assert schema_db.types() == ["A"]


def test_already_exists(schema_db: arcadego.Database) -> None:
    with pytest.raises(arcadego.AlreadyExistsError):
        schema_db.create_type("A")
    with pytest.raises(arcadego.AlreadyExistsError):
        schema_db.create_property("A", "k", "INT64")


def test_conflict(mem_db: arcadego.Database) -> None:
    """A type dropped and re-created while a transaction holds timestamp
    rows for it: the rows no longer match how the type stores times."""
    def rows() -> dict:
        return {"time": np.array(["2024-01-01"], dtype="datetime64[ms]")}

    mem_db.create_type("T")
    mem_db.insert("T", rows())
    late = mem_db.transaction()
    late.insert("T", rows())
    with mem_db.transaction() as tx:
        tx.drop_type("T")
        tx.create_type("T")
    with pytest.raises(arcadego.ConflictError, match="concurrently"):
        late.commit()
    assert late.closed
    assert mem_db.scan("T").to_pylist() == []


def test_concurrent_create_of_the_same_type(mem_db: arcadego.Database) -> None:
    first = mem_db.transaction()
    second = mem_db.transaction()
    first.create_type("A")
    second.create_type("A")
    first.commit()
    with pytest.raises(arcadego.AlreadyExistsError):
        second.commit()
    assert mem_db.types() == ["A"]


def test_storage_error_when_open_in_another_process(tmp_path: Path) -> None:
    path = tmp_path / "db"
    with arcadego.connect(path):
        code = textwrap.dedent(f"""
            import arcadego
            try:
                arcadego.connect({str(path)!r})
            except arcadego.StorageError as e:
                print("StorageError", isinstance(e, OSError))
        """)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "StorageError True", out.stderr


def test_storage_error_when_path_is_a_file(tmp_path: Path) -> None:
    f = tmp_path / "file"
    f.write_text("not a directory")
    with pytest.raises(arcadego.StorageError):
        arcadego.connect(f)


def test_closed(tmp_path: Path) -> None:
    db = arcadego.connect(tmp_path / "db", auto_create=True)
    db.insert("A", {"time": [0], "k": [0]})
    tx = db.transaction()
    res = db.scan("A")
    db.close()
    db.close()  # closing twice is fine
    for call in (lambda: db.insert("A", {"time": [1]}), lambda: db.execute("CREATE DOCUMENT TYPE B"),
                 lambda: db.types(), lambda: res.to_pylist(), lambda: db.transaction()):
        with pytest.raises(arcadego.ClosedError):
            call()
    with pytest.raises(arcadego.ClosedError):  # closed with its database
        tx.commit()


def test_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "db"
    with arcadego.connect(path) as db:
        db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
        db.insert("A", {"time": [1], "k": [1]})
    segments = sorted(p for p in path.rglob("*.wal"))
    assert segments, list(path.rglob("*"))
    with open(segments[0], "r+b") as f:  # break the segment header's magic
        first = f.read(1)
        f.seek(0)
        f.write(bytes([first[0] ^ 0xFF]))
    with pytest.raises(arcadego.CorruptError, match=segments[0].name):
        arcadego.connect(path)


def test_canceled(mem_db: arcadego.Database) -> None:
    pa = pytest.importorskip("pyarrow")
    mem_db.insert("C", {"time": [0], "k": [0]})
    schema = pa.schema([("time", pa.int64()), ("k", pa.int64())])
    started = threading.Event()
    canceled = threading.Event()
    produced = []

    def batches():
        for i in range(1, 500):
            produced.append(i)
            if i == 2:
                # The second batch waits for the cancel: the insert is then
                # canceled in the middle of the stream, whatever the timing.
                started.set()
                assert canceled.wait(60), "the test never canceled"
            yield pa.record_batch([pa.array([i]), pa.array([i])], schema=schema)

    errors: list[BaseException] = []

    def insert() -> None:
        try:
            mem_db.insert("C", pa.RecordBatchReader.from_batches(schema, batches()))
        except BaseException as e:  # handed to the test thread
            errors.append(e)

    t = threading.Thread(target=insert)
    t.start()
    assert started.wait(60)
    mem_db.cancel()
    canceled.set()
    t.join(60)
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], arcadego.CanceledError), errors
    assert len(produced) < 499
    assert mem_db.scan("C").to_pydict()["k"] == [0]  # the canceled insert changed nothing


def test_keyboard_interrupt_cancels_a_long_insert(mem_db: arcadego.Database,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C on the main thread: the call is canceled, then
    KeyboardInterrupt propagates, and nothing was written."""
    pa = pytest.importorskip("pyarrow")
    import _thread

    from arcadego import _lib

    if threading.current_thread() is not threading.main_thread():
        pytest.fail("pytest runs tests on the main thread")
    # Know when the main thread has turned the interrupt into a cancel.
    canceled = threading.Event()
    cancel = _lib.lib.arcadego_cancel

    def cancel_and_tell(db):  # type: ignore[no-untyped-def]
        status = cancel(db)
        canceled.set()
        return status

    monkeypatch.setattr(_lib.lib, "arcadego_cancel", cancel_and_tell)
    schema = pa.schema([("time", pa.int64())])
    produced = []

    def batches():
        for i in range(500):
            produced.append(i)
            if i == 2:
                _thread.interrupt_main()
                # Produce nothing more until the interrupt has canceled the
                # call: the outcome does not depend on how fast that is.
                assert canceled.wait(60), "Ctrl-C never reached arcadego_cancel"
            yield pa.record_batch([pa.array([i])], schema=schema)

    with pytest.raises(KeyboardInterrupt):
        mem_db.insert("K", pa.RecordBatchReader.from_batches(schema, batches()))
    assert canceled.is_set()
    assert len(produced) < 500
    assert "K" not in mem_db.types() or mem_db.scan("K").to_pylist() == []


def test_bad_capsule_input(mem_db: arcadego.Database) -> None:
    class NotACapsule:
        def __arrow_c_stream__(self, requested_schema=None):
            return object()

    with pytest.raises(TypeError, match="PyCapsule"):
        mem_db.insert("X", NotACapsule())


def test_non_str_names(mem_db: arcadego.Database) -> None:
    with pytest.raises(arcadego.InvalidArgumentError):
        mem_db.create_type(5)  # type: ignore[arg-type]
    with pytest.raises(arcadego.InvalidArgumentError):
        mem_db.insert(b"A", {"time": [1]})  # type: ignore[arg-type]
    with pytest.raises(arcadego.InvalidArgumentError):
        mem_db.scan("A", device=[1])  # type: ignore[list-item]


def test_messages_do_not_repeat_the_kind(schema_db: arcadego.Database) -> None:
    """The exception's class says what kind of error it is: messages do not
    end with Go's ": invalid argument", except where the kind is all they
    say about the object they name."""
    db = schema_db
    db.execute("CREATE DOCUMENT TYPE K; CREATE PROPERTY K.k INT64")
    cases = [
        (lambda: db.insert("K", {"time": [1], "k": ["x"]}), arcadego.InvalidArgumentError, "is STRING but property"),
        (lambda: db.insert("K", {"time": [1], "zz": [1]}), arcadego.NotFoundError, "does not exist"),
        (lambda: db.scan("K", start=2**63), arcadego.InvalidArgumentError, "outside the int64 range"),
    ]
    for call, cls, says in cases:
        with pytest.raises(cls) as info:
            call()
        message = str(info.value)
        assert says in message
        assert not message.endswith((": invalid argument", ": not found")), message
    with pytest.raises(arcadego.NotFoundError, match=r'type "Nope": not found$'):
        db.scan("Nope")
    with pytest.raises(arcadego.AlreadyExistsError, match=r"already exists$"):
        db.execute("CREATE PROPERTY K.k INT64")
