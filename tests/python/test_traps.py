"""Small traps a new user falls into, each fixed: ":memory:", a scan of a
mistyped type or column raising at the call, device and time in
``columns``, opening a path twice in one process, a Result that iterates
and converts to polars and numpy, and the CLI never creating a database."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from typing import Any

import numpy as np
import pytest

import arcadego
from arcadego import _result


def test_memory_means_in_memory(tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with arcadego.connect(":memory:", auto_create=True) as db:
        db.insert("A", {"time": [1], "k": [1]})
        assert db.path is None
    assert os.listdir(tmp_path) == []


def test_scan_checks_at_the_call(schema_db: arcadego.Database) -> None:
    with pytest.raises(arcadego.NotFoundError, match="Nope"):
        schema_db.scan("Nope")
    with pytest.raises(arcadego.NotFoundError, match="zz"):
        schema_db.scan("A", columns=["k", "zz"])
    with pytest.raises(arcadego.InvalidArgumentError, match="start"):
        schema_db.scan("A", start=2**63)
    with pytest.raises(arcadego.InvalidArgumentError, match="batch_rows"):
        schema_db.scan("A", batch_rows=0)


def test_scan_checks_at_the_call_after_a_schema_change(schema_db: arcadego.Database) -> None:
    # A check that passed is remembered until the next DDL: each way of
    # changing the schema must make the next scan check again.
    schema_db.scan("A", columns=["k", "x"], device="d1")
    schema_db.scan("A", columns=["k", "x"], device="d2")  # remembered
    schema_db.execute("DROP PROPERTY A.x")
    with pytest.raises(arcadego.NotFoundError, match="x"):
        schema_db.scan("A", columns=["k", "x"], device="d3")
    schema_db.scan("A", columns=["k", "s"])
    with schema_db.transaction() as tx:
        tx.drop_property("A", "s")
    with pytest.raises(arcadego.NotFoundError, match="s"):
        schema_db.scan("A", columns=["k", "s"])
    schema_db.last("A", ["k"])
    schema_db.execute("DROP TYPE A")
    with pytest.raises(arcadego.NotFoundError, match="A"):
        schema_db.last("A", ["k"])
    with pytest.raises(arcadego.NotFoundError, match="A"):
        schema_db.scan("A", columns=["k"], device="d1")


def test_a_check_that_a_ddl_overtook_is_not_remembered(schema_db: arcadego.Database,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # A DDL that ends while a scan's check is in the library (another
    # thread's, here run inside the call) must not let the check pass later.
    from arcadego import _lib
    real = _lib.lib.arcadego_scan
    dropped = []

    def scan_then_drop(*args: Any) -> int:
        status = real(*args)
        if not dropped:
            dropped.append(True)
            schema_db.execute("DROP PROPERTY A.x")
        return status

    monkeypatch.setattr(_lib.lib, "arcadego_scan", scan_then_drop)
    schema_db.scan("A", columns=["k", "x"])  # checked before the drop
    monkeypatch.setattr(_lib.lib, "arcadego_scan", real)
    with pytest.raises(arcadego.NotFoundError, match="x"):
        schema_db.scan("A", columns=["k", "x"])


def test_device_and_time_may_be_named_in_columns(schema_db: arcadego.Database) -> None:
    schema_db.insert("A", {"time": [1, 2], "k": [10, 20]}, device="d")
    got = schema_db.scan("A", columns=["device", "time", "k"]).to_pydict()
    assert got == {"device": ["d", "d"], "time": [1, 2], "k": [10, 20]}


def test_opening_an_open_path_says_so(tmp_path: os.PathLike[str]) -> None:
    path = os.path.join(tmp_path, "db")
    db = arcadego.connect(path)
    with pytest.raises(arcadego.StorageError, match="already open in this process.*close"):
        arcadego.connect(path)
    db.close()
    arcadego.connect(path).close()  # once closed, it opens again


def test_result_iterates_and_converts(schema_db: arcadego.Database) -> None:
    pa = pytest.importorskip("pyarrow", reason="the full venv installs pyarrow")
    pl = pytest.importorskip("polars", reason="the full venv installs polars")
    schema_db.insert("A", {"time": [1, 2, 3], "k": [1, None, 3], "x": [0.5, 1.5, 2.5]}, device="d")
    res = schema_db.scan("A", columns=["k", "x"], batch_rows=2)
    batches = list(res)
    assert [b.num_rows for b in batches] == [2, 1]
    assert all(isinstance(b, pa.RecordBatch) for b in batches)
    frame = res.to_polars()
    assert isinstance(frame, pl.DataFrame)
    assert frame["k"].to_list() == [1, None, 3]
    arrays = res.to_numpy()
    assert list(arrays) == ["device", "time", "k", "x"]
    assert arrays["device"].tolist() == ["d", "d", "d"]
    np.testing.assert_array_equal(arrays["x"], [0.5, 1.5, 2.5])
    assert np.isnan(arrays["k"][1]) and arrays["k"][0] == 1


def test_cli_never_creates_a_database(tmp_path: os.PathLike[str]) -> None:
    missing = os.path.join(tmp_path, "mistyped")
    out = subprocess.run([sys.executable, "-m", "arcadego", "describe", missing], capture_output=True, text=True)
    assert out.returncode != 0
    assert "no database" in out.stderr
    assert not os.path.exists(missing)


def test_errors_stay_arcadego_errors(schema_db: arcadego.Database) -> None:
    """What pandas or pyarrow raise on the way in or out is an
    arcadego.Error, the original chained as __cause__."""
    pd = pytest.importorskip("pandas", reason="the full venv installs pandas")
    pytest.importorskip("pyarrow", reason="the full venv installs pyarrow")
    with pytest.raises(arcadego.InvalidArgumentError, match="pandas DataFrame") as e:
        schema_db.insert("A", pd.DataFrame({"time": [1, 2], "k": [1, "a"]}))
    assert e.value.__cause__ is not None
    with pytest.raises(arcadego.InvalidArgumentError, match="[Dd]uplicate"):
        schema_db.insert("A", pd.DataFrame([[1, 2, 3]], columns=["time", "k", "k"]))
    schema_db.insert("A", {"time": list(range(100)), "k": list(range(100))})
    seen = 0
    with pytest.raises(arcadego.CanceledError, match="database was closed") as e:
        for _ in schema_db.scan("A", batch_rows=10):
            seen += 1
            schema_db.close()  # the scan stops at its next batch
    assert seen == 1
    assert "context canceled" not in str(e.value)


def test_importing_the_package_loads_nothing() -> None:
    """The pytest plugin is imported by every pytest run in the
    environment: importing it, or the package, loads neither numpy nor the
    library; the first connect() does."""
    code = (
        "import sys, arcadego.pytest_plugin, arcadego\n"
        "assert 'numpy' not in sys.modules, 'numpy'\n"
        "assert 'arcadego._lib' not in sys.modules, 'library'\n"
        "arcadego.connect(None).close()\n"
        "assert 'arcadego._lib' in sys.modules\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_scan_bounds_as_times(mem_db: arcadego.Database) -> None:
    pa = pytest.importorskip("pyarrow", reason="the full venv installs pyarrow")
    pd = pytest.importorskip("pandas", reason="the full venv installs pandas")
    import datetime as dt
    mem_db.execute("CREATE DOCUMENT TYPE T; CREATE PROPERTY T.v INT64")
    mem_db.insert("T", pa.table({"time": pa.array([1_000_000, 2_000_000, 3_000_001], pa.timestamp("us", "UTC")),
                                 "v": [1, 2, 3]}), device="d")
    for start in (dt.datetime(1970, 1, 1, 0, 0, 2, tzinfo=dt.timezone.utc), np.datetime64(2, "s"),
                  pd.Timestamp("1970-01-01 00:00:02", tz="UTC"), np.int64(2_000_000)):
        assert mem_db.scan("T", start=start).to_pydict()["v"] == [2, 3], repr(start)
    # Rounded up: start inclusive, end exclusive.
    assert mem_db.scan("T", end=np.datetime64(3_000_001_500, "ns")).to_pydict()["v"] == [1, 2, 3]
    assert mem_db.scan("T", end=np.datetime64(3_000_000_500, "ns")).to_pydict()["v"] == [1, 2]
    assert mem_db.scan("T", start=np.datetime64("2300-01-01")).to_pydict()["v"] == []  # past numpy's ns range
    with pytest.raises(arcadego.InvalidArgumentError, match="NaT"):
        mem_db.scan("T", start=pd.NaT)
    mem_db.execute("CREATE DOCUMENT TYPE I")
    mem_db.insert("I", {"time": [1], "v": [1]})
    with pytest.raises(arcadego.InvalidArgumentError, match="plain integers"):
        mem_db.scan("I", start=dt.datetime(2024, 1, 1))


def _interruptible(result: int, cancel_seen: "threading.Event", started: "threading.Event") -> Any:
    """A stand-in for a library call: it starts, waits for the cancel that
    Ctrl-C sends, then returns result (0: it had committed anyway)."""
    def fn() -> int:
        started.set()
        assert cancel_seen.wait(60), "no cancel"
        return result
    return fn


def _signal_when_waiting(signum: int, started: "threading.Event") -> "threading.Thread":
    """Start a thread that sends signum to this process once the call has
    begun (started) and the main thread waits for it in run_cancellable
    (seen in its frame, not guessed from time); join it after the call."""
    from arcadego import _lib

    main = threading.main_thread().ident

    def send() -> None:
        import inspect
        lines, first = inspect.getsourcelines(_lib.run_cancellable)
        wait_line = first + next(i for i, ln in enumerate(lines) if "done.acquire" in ln)
        started.wait()  # an event, not a deadline: the call has begun
        while True:
            frame = sys._current_frames()[main]
            if frame.f_code.co_name == "run_cancellable" and frame.f_lineno == wait_line:
                break
            time.sleep(0.001)  # a poll interval: what ends the loop is the frame, not the time
        os.kill(os.getpid(), signum)

    sender = threading.Thread(target=send)
    sender.start()
    return sender


@pytest.mark.parametrize("status", [0, 8])
def test_ctrl_c_means_not_written(monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    """Ctrl-C during a call: if the call then fails (canceled in time,
    status 8), KeyboardInterrupt is raised from it; if it succeeded anyway
    (past its commit point, status 0), it returns normally and the
    KeyboardInterrupt comes after, at the caller's next call: an exception
    from a call always means nothing was written. Driven by events."""
    import signal

    from arcadego import _lib

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("Ctrl-C goes to the main thread")
    cancel_seen, started = threading.Event(), threading.Event()
    monkeypatch.setattr(_lib.lib, "arcadego_cancel", lambda db: cancel_seen.set())
    fn = _interruptible(status, cancel_seen, started)
    sender = _signal_when_waiting(signal.SIGINT, started)  # Ctrl-C
    try:
        if status == 0:
            got, after = None, []
            with pytest.raises(KeyboardInterrupt, match="already committed") as info:
                got = _lib.run_cancellable(object(), fn)
                after.append(got)  # the caller's next call: the interrupt arrives here
            assert got == 0, "the committed call did not return"
            assert after == [], "the interrupt was not delivered at the caller's next call"
            frame = info.tb.tb_frame if info.tb is not None else None
            assert frame is not None and frame.f_code.co_name == "test_ctrl_c_means_not_written"
            assert sys.getprofile() is None
        else:
            with pytest.raises(KeyboardInterrupt):
                _lib.run_cancellable(object(), fn)
    finally:
        sender.join()
    assert cancel_seen.is_set()


def test_ctrl_c_stops_to_arrow_between_batches(mem_db: arcadego.Database,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """to_arrow() reads a batch at a time, so Ctrl-C stops it at once, not
    after the whole result. The reader is held at its second batch until
    the signal is sent, so the test does not race the clock: a to_arrow
    that read the whole result before taking Ctrl-C would never get there."""
    import signal

    pa = pytest.importorskip("pyarrow", reason="to_arrow needs pyarrow")
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("Ctrl-C goes to the main thread")
    n = 200_000
    mem_db.insert("A", {"time": np.arange(n), "k": np.arange(n)}, device="d")
    reading, sent, abandoned = threading.Event(), threading.Event(), threading.Event()
    real_import = pa.RecordBatchReader._import_from_c

    class HeldReader:
        """The stream's reader, held before its second batch until Ctrl-C."""

        def __init__(self, address: int) -> None:
            self._reader = real_import(address)
            self.schema = self._reader.schema

        def __iter__(self) -> Any:
            for i, batch in enumerate(self._reader):
                if i == 1:
                    reading.set()
                    sent.wait()  # interruptible: Ctrl-C lands here or at the next line
                yield batch

        def close(self) -> None:
            self._reader.close()

    class HeldPyarrow:
        """pyarrow as to_arrow() sees it, with the held reader."""

        class RecordBatchReader:
            _import_from_c = staticmethod(HeldReader)

        def __getattr__(self, name: str) -> Any:
            return getattr(pa, name)

    real_require = _result._optional.require
    monkeypatch.setattr(_result._optional, "require",
                        lambda name, what: HeldPyarrow() if name == "pyarrow" else real_require(name, what))

    def send() -> None:
        reading.wait()
        if not abandoned.is_set():
            os.kill(os.getpid(), signal.SIGINT)
        sent.set()

    sender = threading.Thread(target=send)
    sender.start()
    finished = False
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            mem_db.scan("A", batch_rows=10).to_arrow()  # 20,000 batches
            finished = True
    finally:
        if not reading.is_set():  # the held reader was never reached: fail, not hang
            abandoned.set()
            reading.set()
        sender.join()
    assert not finished, "to_arrow read every batch before taking Ctrl-C"
    where = [entry for entry in e.traceback if entry.name == "to_arrow"]
    assert where and "batch" in str(where[-1].statement), "taken while reading batches"
    monkeypatch.undo()
    assert mem_db.scan("A", columns=["k"]).to_arrow().num_rows == n  # the database is fine


def test_interrupt_after_return_reaches_the_user_code() -> None:
    """The interrupt of a committed call is raised in the code that called
    the package, after the public call returned, however deep inside the
    package the call noticed it."""
    from arcadego import _lib

    package: dict[str, object] = {"__name__": "arcadego._fake", "_lib": _lib, "sys": sys}
    exec("def inner():\n    _lib._interrupt_after_return(sys._getframe())\n    return 7\n"
         "def public():\n    v = inner()\n    len('still inside the package')\n    return v\n", package)
    public = package["public"]
    got, after = None, []
    with pytest.raises(KeyboardInterrupt, match="already committed") as info:
        got = public()  # type: ignore[operator]
        after.append(got)
    assert got == 7 and after == []
    assert info.tb is not None and info.tb.tb_frame.f_code.co_name == "test_interrupt_after_return_reaches_the_user_code"
    assert sys.getprofile() is None


@pytest.mark.parametrize("at", ["scan", "stream", "read"])
def test_ctrl_c_as_a_scan_call_returns_releases_its_stream(mem_db: arcadego.Database,
                                                           monkeypatch: pytest.MonkeyPatch, at: str) -> None:
    """A Ctrl-C taken just after the library started a scan (the call
    returned success, the check of its status is interrupted) releases
    what the call made, not only the structs that hold it: the stream at
    the request check of scan() and at ``__arrow_c_stream__``; the schema
    and first batch of a read (to_arrow(), which starts the scan with its
    first batch)."""
    from arcadego import _cdata, _lib

    mem_db.insert("A", {"time": np.arange(10), "k": np.arange(10)}, device="d")
    res = mem_db.scan("A") if at != "scan" else None  # its check done, before the patches
    live: list[bool] = []
    real_release = _cdata.release_stream

    def spy(address: int) -> None:
        live.append(bool(_cdata.ArrowArrayStream.from_address(address).release))
        real_release(address)

    released: list[str] = []

    def spy_release(kind: str, fn_type: Any) -> Any:
        def bind(address: int) -> Any:
            release = fn_type(address)

            def call(ptr: Any) -> None:
                released.append(kind)
                release(ptr)
            return call
        return bind

    real_check = _lib.check

    def interrupted(status: int, err: Any) -> None:
        real_check(status, err)
        raise KeyboardInterrupt  # as if Ctrl-C landed as the call returned

    monkeypatch.setattr(_cdata, "release_stream", spy)
    monkeypatch.setattr(_cdata, "ArrayRelease", spy_release("batch", _cdata.ArrayRelease))
    monkeypatch.setattr(_cdata, "SchemaRelease", spy_release("schema", _cdata.SchemaRelease))
    monkeypatch.setattr(_lib, "check", interrupted)
    with pytest.raises(KeyboardInterrupt):
        if res is None:
            mem_db.scan("A", columns=["k"])
        elif at == "stream":
            res.__arrow_c_stream__()
        else:
            res.to_arrow()
    monkeypatch.undo()
    if at == "read":
        assert sorted(released) == ["batch", "schema"], "the first batch and the schema were released"
        assert live == []
    else:
        assert live == [True], "the started stream was released"
    assert mem_db.scan("A").to_arrow().num_rows == 10


def test_small_tables_in_memory_skip_the_helper_thread(mem_db: arcadego.Database,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """An insert from the main thread goes through the helper thread (so
    that Ctrl-C can cancel it) unless it is small and its rows are already
    in memory: a pyarrow Table, a polars or pandas DataFrame of a few rows
    is done in microseconds, and the handoff there and back took longer
    than the insert. A stream whose producer makes its batches as it is
    read, or a large table, still goes through it."""
    import numpy as np
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from arcadego import _lib

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("the handoff is the main thread's")
    handed: list[Any] = []
    submit = _lib._worker.submit

    def recording(fn: Any, args: Any, keep: Any = None) -> Any:
        handed.append(fn)
        return submit(fn, args, keep)

    monkeypatch.setattr(_lib._worker, "submit", recording)
    small = pa.table({"time": [1, 2], "x": [1.0, 2.0], "s": ["a", "b"]})
    big_rows = _lib.HANDOFF_CELLS // 3 + 1
    big = pa.table({"time": np.arange(big_rows, dtype=np.int64), "x": np.ones(big_rows), "s": ["v"] * big_rows})
    # Few cells, many bytes: a copy of them is no instant.
    wide_rows = 1000
    wide_value = "w" * (_lib.HANDOFF_BYTES // wide_rows)
    wide = pa.table({"time": np.arange(wide_rows, dtype=np.int64), "x": np.ones(wide_rows), "s": [wide_value] * wide_rows})
    cases: list[tuple[str, Any, bool, int]] = [  # what, a maker of the data (a reader is read once), handoff, rows
        ("pyarrow Table", lambda: small, False, 2),
        ("pyarrow RecordBatch", lambda: small.to_batches()[0], False, 2),
        ("polars DataFrame", lambda: pl.DataFrame({"time": [3, 4], "x": [3.0, 4.0], "s": ["c", "d"]}), False, 2),
        ("pandas DataFrame", lambda: pd.DataFrame({"time": [5, 6], "x": [5.0, 6.0], "s": ["e", "f"]}), False, 2),
        ("dict", lambda: {"time": [7, 8], "x": [7.0, 8.0], "s": ["g", "h"]}, False, 2),
        ("RecordBatchReader", lambda: pa.RecordBatchReader.from_batches(small.schema, small.to_batches()), True, 2),
        (f"pyarrow Table of {big_rows * 3:,} cells", lambda: big, True, big_rows),
        (f"pyarrow Table of {wide.get_total_buffer_size():,} bytes", lambda: wide, True, wide_rows),
        ("that as a RecordBatch", lambda: wide.combine_chunks().to_batches()[0], True, wide_rows),
        ("that as a polars DataFrame", lambda: pl.from_arrow(wide), True, wide_rows),
        ("that as a dict", lambda: {"time": list(range(wide_rows)), "x": [1.0] * wide_rows,
                                    "s": [wide_value] * wide_rows}, True, wide_rows),
        # Few bytes that expand: a dictionary (a pandas categorical), a view.
        ("a dictionary column", lambda: pa.table({"time": [9, 10], "x": [1.0, 2.0],
                                                  "s": pa.array(["i", "j"]).dictionary_encode()}), True, 2),
        ("a pandas categorical", lambda: pd.DataFrame({"time": [11, 12], "x": [1.0, 2.0],
                                                       "s": pd.Categorical(["k", "l"])}), True, 2),
        ("a polars Categorical", lambda: pl.DataFrame({"time": [13, 14], "x": [1.0, 2.0], "s": ["m", "n"]})
         .with_columns(pl.col("s").cast(pl.Categorical)), True, 2),
        # A slice is sized by its own rows, not its buffers'.
        ("a slice of a large table", lambda: big.slice(5, 2), False, 2),
        # Wider than _known_size looks at: milliseconds anyway.
        ("a 66-column pyarrow Table", lambda: pa.table({"time": [17, 18], "x": [1.0, 2.0], "s": ["q", "r"],
                                                        **{f"w{k}": [k, k] for k in range(63)}}), True, 2),
        # A producer that does not tell its bytes.
        ("a StructArray", lambda: pa.StructArray.from_arrays(
            [pa.array([15, 16]), pa.array([1.0, 2.0]), pa.array(["o", "p"])], names=["time", "x", "s"]), True, 2),
    ]
    for i, (what, make, expect_handoff, _) in enumerate(cases):
        handed.clear()
        mem_db.insert("H", make(), device=f"d{i}")
        assert bool(handed) == expect_handoff, what
        with mem_db.transaction() as tx:
            handed.clear()
            tx.insert("H", make(), device=f"t{i}")
            assert bool(handed) == expect_handoff, f"{what}, in a transaction"
    counts = mem_db.devices_arrow("H").to_pydict()
    assert dict(zip(counts["device"], counts["rows"])) == {
        f"{p}{i}": case[3] for i, case in enumerate(cases) for p in "dt"}


def test_polars_types_found_plain_are_remembered_and_no_others() -> None:
    """A polars DataFrame whose column types equal those of one found
    plain is known at once; one with a Categorical (nested or not) never
    is, however often it comes."""
    pl = pytest.importorskip("polars")
    from arcadego import _database

    plain = pl.DataFrame({"time": [1, 2], "s": ["a", "b"], "l": [["x"], ["y"]]})
    coded = plain.with_columns(pl.col("s").cast(pl.Categorical))
    nested = plain.with_columns(pl.col("l").cast(pl.List(pl.Categorical)))
    for _ in range(3):
        assert _database._known_size(coded) is None
        assert _database._known_size(nested) is None
        assert _database._known_size(plain) == (6, plain.estimated_size())
    assert tuple(plain.dtypes) in _database._plain_polars
    assert tuple(coded.dtypes) not in _database._plain_polars
    assert tuple(nested.dtypes) not in _database._plain_polars
    again = pl.DataFrame({"time": [3], "s": ["c"], "l": [["z"]]})  # another frame, the same types
    assert _database._known_size(again) == (3, again.estimated_size())


def test_schemas_found_plain_are_remembered_and_no_others() -> None:
    """A batch's schema equal to one found plain is known at once; one
    whose columns expand (a dictionary) is never taken as plain, however
    often it comes, nor are its names enough to match a plain one."""
    pa = pytest.importorskip("pyarrow")
    from arcadego import _database

    plain = pa.table({"time": [1, 2], "s": ["a", "b"]})
    coded = pa.table({"time": [1, 2], "s": pa.array(["a", "b"]).dictionary_encode()})
    for _ in range(3):
        assert _database._known_size(coded) is None
        assert _database._known_size(plain) == (4, plain.get_total_buffer_size())
        assert _database._known_size(coded.to_batches()[0]) is None
    again = pa.table({"time": [3], "s": ["c"]})  # another schema object, equal
    assert any(again.schema.equals(known) for known in _database._plain_schemas)
    assert not any(coded.schema.equals(known) for known in _database._plain_schemas)
    assert _database._known_size(again) == (2, again.get_total_buffer_size())

    class Labelled(pa.ExtensionType):  # named by its own name, stored as its storage type
        def __init__(self, storage: Any) -> None:
            super().__init__(storage, "test.labelled")

        def __arrow_ext_serialize__(self) -> bytes:
            return b""

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type: Any, serialized: bytes) -> Any:
            return cls(storage_type)

    coded_ext = pa.ExtensionArray.from_storage(Labelled(pa.dictionary(pa.int32(), pa.string())),
                                               pa.array(["a", "b"]).dictionary_encode())
    assert _database._known_size(pa.table({"time": [1, 2], "s": coded_ext})) is None
    for k in range(_database._PLAIN_SCHEMAS + 3):  # the list stays bounded
        assert _database._known_size(pa.table({f"c{k}": [k]})) == (1, 8)
    assert len(_database._plain_schemas) == _database._PLAIN_SCHEMAS


def test_an_exception_that_escapes_the_wait_keeps_the_input_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second exception may leave run_cancellable while the call still
    runs (a signal handler raises at any point, also right after the first
    one was caught: here the cancel raises, as a handler would there). What
    the call reads must then live until the call returns, held by the
    helper thread, not by the caller who has let go. Driven by events."""
    import gc
    import weakref

    from arcadego import _lib

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("the handoff is the main thread's")

    class Buffers:  # stands for an insert's input
        pass

    started, may_return, finished = threading.Event(), threading.Event(), threading.Event()
    buffers = Buffers()
    ref = weakref.ref(buffers)
    alive_at_return: list[bool] = []

    def fn() -> int:
        started.set()
        try:
            may_return.wait()
            return 8
        finally:
            alive_at_return.append(ref() is not None)
            finished.set()

    submit = _lib._worker.submit

    class Interrupted:  # the wait's lock: a first exception once the call runs
        def __init__(self, lock: Any) -> None:
            self.lock, self.raised = lock, False

        def acquire(self, timeout: float = -1) -> bool:
            started.wait()
            if not self.raised:
                self.raised = True
                raise KeyboardInterrupt("first")
            return bool(self.lock.acquire(timeout=timeout))

    def interrupted_submit(fn: Any, args: Any, keep: Any = None) -> Any:
        done, box = submit(fn, args, keep)
        return Interrupted(done), box

    def cancel(db: Any) -> int:
        raise SystemExit(143)  # the second: where no except clause of the wait reaches

    monkeypatch.setattr(_lib._worker, "submit", interrupted_submit)
    monkeypatch.setattr(_lib.lib, "arcadego_cancel", cancel)
    try:
        with pytest.raises(SystemExit):
            _lib.run_cancellable(object(), fn, keep=buffers)
        assert not finished.is_set(), "the call is still running"
        del buffers  # the caller lets go
        gc.collect()
        may_return.set()
        finished.wait()
        assert alive_at_return == [True], "the call's input went before the call returned"
    finally:
        may_return.set()


def test_an_exception_as_the_wait_ends_does_not_hang() -> None:
    """A signal handled just after the wait took the helper's lock (Ctrl-C
    as the call finishes) must not make the wait wait again for a lock it
    holds. Run in a child, so that a hang fails the test."""
    script = """
import threading
from arcadego import _lib
submit = _lib._worker.submit
class Late:
    def __init__(self, lock):
        self.lock, self.raised = lock, False
    def acquire(self, timeout=-1):
        got = self.lock.acquire(timeout=timeout)
        if got and not self.raised:
            self.raised = True
            raise KeyboardInterrupt("as the wait ended")
        return got
def late_submit(fn, args, keep=None):
    done, box = submit(fn, args, keep)
    return Late(done), box
_lib._worker.submit = late_submit
_lib.lib.arcadego_cancel = lambda db: 0
try:
    _lib.run_cancellable(object(), lambda: 8)
except KeyboardInterrupt as e:
    print("raised:", e)
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "raised: as the wait ended" in out.stdout


@pytest.mark.parametrize("status", [0, 8])
def test_other_exceptions_during_a_call_wait_for_it(monkeypatch: pytest.MonkeyPatch, status: int) -> None:
    """An exception other than KeyboardInterrupt that a signal handler
    raises while the main thread waits for a call (SIGTERM turned into
    SystemExit, an alarm) cancels the call and waits for it as Ctrl-C
    does, so that the caller never frees buffers the call still reads; the
    exception comes after, from the call (canceled in time, status 8) or
    at the caller's next call (committed anyway, status 0)."""
    import signal

    from arcadego import _lib

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run on the main thread")

    class Alarm(Exception):
        pass

    def handler(signum: int, frame: Any) -> None:
        raise Alarm("from a signal handler")

    old = signal.signal(signal.SIGUSR1, handler)
    cancel_seen, started, finished = threading.Event(), threading.Event(), threading.Event()
    monkeypatch.setattr(_lib.lib, "arcadego_cancel", lambda db: cancel_seen.set())
    wait_for_cancel = _interruptible(status, cancel_seen, started)

    def fn() -> int:
        try:
            return wait_for_cancel()
        finally:
            finished.set()
    sender = _signal_when_waiting(signal.SIGUSR1, started)
    try:
        if status == 0:
            after: list[int] = []
            with pytest.raises(Alarm):
                got = _lib.run_cancellable(object(), fn)
                assert finished.is_set(), "returned before the call had finished"
                after.append(got)  # the caller's next call: the exception arrives here
            assert after == [], "the exception was not delivered at the caller's next call"
            assert sys.getprofile() is None
        else:
            with pytest.raises(Alarm):
                _lib.run_cancellable(object(), fn)
            assert finished.is_set(), "raised before the call had finished"
    finally:
        sender.join()
        signal.signal(signal.SIGUSR1, old)
    assert cancel_seen.is_set()
