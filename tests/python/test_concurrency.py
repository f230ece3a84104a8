"""Threads, the performance warning, and fork()."""

from __future__ import annotations

import ctypes
import os
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest

import arcadego


def test_threads_insert_in_parallel(arcadego_db: arcadego.Database) -> None:
    db = arcadego_db
    db.execute("CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64")
    n_threads, n_batches, rows = 8, 20, 50
    errors: list[BaseException] = []
    barrier = threading.Barrier(n_threads)

    def writer(t: int) -> None:
        try:
            barrier.wait()
            for b in range(n_batches):
                times = np.arange(b * rows, (b + 1) * rows, dtype=np.int64)
                db.insert("A", {"time": times, "k": times * 10 + t}, device=f"dev{t}")
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    got = db.scan("A").to_pydict()
    assert len(got["time"]) == n_threads * n_batches * rows
    for t in range(n_threads):
        ks = db.scan("A", device=f"dev{t}").to_pydict()["k"]
        assert ks == [i * 10 + t for i in range(n_batches * rows)]


def test_threads_read_while_others_write(mem_db: arcadego.Database) -> None:
    mem_db.insert("R", {"time": [0], "k": [0]}, device="fixed")
    stop = threading.Event()
    seen: list[int] = []

    def reader() -> None:
        while not stop.is_set():
            seen.append(len(mem_db.scan("R", device="fixed").to_pylist()))

    th = threading.Thread(target=reader)
    th.start()
    for i in range(200):
        mem_db.insert("R", {"time": [i], "k": [i]}, device="moving")
    stop.set()
    th.join()
    assert seen and set(seen) == {1}


def test_performance_warning_once_after_32_autocommit_ddl(tmp_path: Path) -> None:
    with arcadego.connect(tmp_path / "db") as db:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for i in range(32):
                db.create_type(f"T{i}")
            assert caught == []
            db.create_type("T32")  # the 33rd
            for i in range(33, 40):
                db.create_type(f"T{i}")
        perf = [w for w in caught if issubclass(w.category, arcadego.PerformanceWarning)]
        assert len(perf) == 1
        assert "transaction()" in str(perf[0].message)
        assert perf[0].filename == __file__  # points at the caller's line


@pytest.mark.parametrize("how", ["memory", "sync-off", "transaction"])
def test_no_warning_when_ddl_is_cheap_or_batched(tmp_path: Path, how: str) -> None:
    path = None if how == "memory" else tmp_path / "db"
    with arcadego.connect(path, sync="off" if how == "sync-off" else "full") as db:
        with warnings.catch_warnings():
            warnings.simplefilter("error", arcadego.PerformanceWarning)
            if how == "transaction":
                with db.transaction() as tx:
                    for i in range(100):
                        tx.create_type(f"T{i}")
            else:
                for i in range(40):
                    db.create_type(f"T{i}")
        assert len(db.types()) >= 40


def test_fork_child_gets_a_clear_error(arcadego_db: arcadego.Database) -> None:
    arcadego_db.execute("CREATE DOCUMENT TYPE A")
    r, w = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() with threads running
        pid = os.fork()
    if pid == 0:  # child: never return into pytest
        os.close(r)
        try:
            try:
                arcadego_db.types()
                message = "no error"
            except arcadego.Error as e:
                message = f"{type(e).__name__}: {e}"
            try:
                arcadego.connect(None)
            except arcadego.Error as e:
                message += f" | {e}"
            arcadego_db.close()  # must not hang either
            os.write(w, message.encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        message = f.read().decode()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert message.startswith("Error: arcadego cannot be used in a forked child")
    assert "spawn or forkserver" in message
    assert message.count("forked child") == 2
    assert arcadego_db.types() == ["A"]  # the parent is unaffected


def test_two_sweeps_release_and_free_each_stream_once(
        mem_db: arcadego.Database, monkeypatch: pytest.MonkeyPatch) -> None:
    # A stream's release callback runs without the GIL, so another thread's
    # sweep (any scan converting its result) can run in the middle of it. The
    # second sweep is run there deterministically, from inside the release.
    from arcadego import _cdata

    mem_db.insert("S", {"time": [1], "k": [1]})
    result = mem_db.scan("S")  # scan() starts and drops a scan to check the request
    _cdata.sweep_stream_capsules()
    releases: list[int] = []
    frees: list[int] = []
    real_release, real_free = _cdata.StreamRelease, _cdata._free

    def release(fnptr: object) -> object:
        def call(ptr: object) -> None:
            releases.append(ctypes.addressof(ptr.contents))  # type: ignore[attr-defined]
            if len(releases) == 1:
                _cdata.sweep_stream_capsules()  # the other thread
            real_release(fnptr)(ptr)
        return call

    monkeypatch.setattr(_cdata, "StreamRelease", release)
    monkeypatch.setattr(_cdata, "_free", frees.append)  # freed below, once each
    result.__arrow_c_stream__()  # dropped at once, never consumed
    try:
        _cdata.sweep_stream_capsules()
    finally:
        monkeypatch.undo()
        for address in set(frees):
            real_free(address)
    assert len(releases) == 1 and frees == releases
    assert _cdata.exported_streams() == 0
