"""Loading libarcadego and calling it.

The library is loaded on first use (``connect`` and the rest), not when
the package is imported. It contains a Go runtime, which imposes three
rules that this module enforces:

* Signal handlers: Go installs its SIGSEGV handler at load and chains to the
  handler that was there before. A ``faulthandler.enable()`` *after* the load
  replaces Go's handler, so a Go nil dereference that the library would have
  recovered becomes fatal. pytest enables faulthandler after loading its
  plugins (ours among them), so under pytest faulthandler is enabled here,
  before the load; pytest's own call is then a no-op.
* fork(): the Go runtime does not survive it. After a fork every call raises
  :class:`arcadego.Error` in the child instead of hanging.
* Ctrl-C: a call on the main thread that may run long (insert, scan) runs on
  a helper thread while the main thread waits; KeyboardInterrupt then calls
  ``arcadego_cancel`` and waits for the call to return before re-raising.

ctypes releases the GIL during every call, so threads run calls in parallel.
"""

from __future__ import annotations

import ctypes
import faulthandler
import os
import queue
import sys
import threading
import warnings
from ctypes import POINTER, c_char_p, c_int, c_size_t, c_void_p
from typing import Any, Callable

from ._cdata import _skip_release
from ._errors import CanceledError, Error, error_for_code

__all__ = ["lib", "library_path", "check", "check_fork", "run_cancellable", "FORK_MESSAGE"]

FORK_MESSAGE = (
    "arcadego cannot be used in a forked child; use the spawn or forkserver start method"
)

LIBRARY_NAME = "libarcadego.so"


def library_path() -> str:
    """Where the library is loaded from: $ARCADEGO_LIBRARY, else the package
    directory."""
    override = os.environ.get("ARCADEGO_LIBRARY")
    if override:
        return override
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)


def get_include() -> str:
    """The directory holding ``arcadego.h``, for C programs built against
    the installed library: ``gcc -I$(python -c "import arcadego;
    print(arcadego.get_include())") prog.c -L<dir of library_path()>
    -larcadego``."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


def pkgconfig_dir() -> str:
    """The directory holding ``arcadego.pc``: with it on ``PKG_CONFIG_PATH``,
    ``pkg-config --cflags --libs arcadego`` gives the flags of a C program
    built against the installed library."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "pkgconfig")


def _load() -> ctypes.CDLL:
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(
            f"arcadego: the native library was not found at {path}. Install the package with "
            "`pip install .` (which builds it), or build it with `make lib` and set "
            "ARCADEGO_LIBRARY=/path/to/libarcadego.so"
        )
    if "_pytest" in sys.modules and not faulthandler.is_enabled():
        try:
            faulthandler.enable()
        except (AttributeError, ValueError, OSError):  # no usable stderr
            pass
    return ctypes.CDLL(path)


lib = _load()

_err = POINTER(c_void_p)


def _proto(name: str, restype: Any, *argtypes: Any) -> None:
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)


_proto("arcadego_version", c_char_p)
_proto("arcadego_open", c_int, c_char_p, c_char_p, POINTER(c_void_p), _err)
_proto("arcadego_close", c_int, c_void_p, _err)
_proto("arcadego_begin", c_int, c_void_p, POINTER(c_void_p), _err)
_proto("arcadego_tx_exec", c_int, c_void_p, c_char_p, c_size_t, _err)
_proto("arcadego_tx_insert", c_int, c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_void_p, c_void_p, _err)
_proto("arcadego_tx_insert_stream", c_int, c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_void_p, _err)
_proto("arcadego_commit", c_int, c_void_p, _err)
_proto("arcadego_rollback", c_int, c_void_p)
_proto("arcadego_exec", c_int, c_void_p, c_char_p, c_size_t, _err)
_proto("arcadego_insert", c_int, c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_void_p, c_void_p, _err)
_proto("arcadego_insert_stream", c_int, c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_void_p, _err)
_proto("arcadego_tx_insert_long", c_int, c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_void_p, c_void_p, _err)
_proto("arcadego_tx_insert_stream_long", c_int, c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_void_p, _err)
_proto("arcadego_insert_long", c_int, c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_void_p, c_void_p, _err)
_proto("arcadego_insert_stream_long", c_int, c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_void_p, _err)
_proto("arcadego_scan", c_int, c_void_p, c_char_p, c_void_p, _err)
_proto("arcadego_scan_first", c_int, c_void_p, c_char_p, c_void_p, c_void_p, c_void_p, c_void_p, _err)
_proto("arcadego_explain", c_int, c_void_p, c_char_p, POINTER(c_void_p), _err)
_proto("arcadego_aggregate", c_int, c_void_p, c_char_p, c_void_p, _err)
_proto("arcadego_last", c_int, c_void_p, c_char_p, c_void_p, _err)
_proto("arcadego_describe", c_int, c_void_p, c_char_p, c_size_t, POINTER(c_void_p), _err)
_proto("arcadego_set_runtime", c_int, c_char_p, _err)
_proto("arcadego_cancel", c_int, c_void_p)
_proto("arcadego_flush", c_int, c_void_p, _err)
_proto("arcadego_checkpoint", c_int, c_void_p, _err)
_proto("arcadego_compact", c_int, c_void_p, c_char_p, c_size_t, _err)
_proto("arcadego_delete", c_int, c_void_p, c_char_p, _err)
_proto("arcadego_tx_delete", c_int, c_void_p, c_char_p, _err)
_proto("arcadego_clone", c_int, c_void_p, c_char_p, _err)
_proto("arcadego_stats", c_int, c_void_p, POINTER(c_void_p), _err)
_proto("arcadego_devices", c_int, c_void_p, c_char_p, POINTER(c_void_p), _err)
_proto("arcadego_device_list", c_int, c_void_p, c_char_p, c_void_p, c_void_p, _err)
_proto("arcadego_free", None, c_void_p)
_proto("arcadego_mark_schema_released", None, c_void_p)
_proto("arcadego_mark_array_released", None, c_void_p)


# ---------------------------------------------------------------------------
# fork detection

_forked = False


def _after_fork_in_child() -> None:
    global _forked
    _forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)
_skip_release.append(lambda: _forked)


def forked() -> bool:
    """True in a child process forked after the library was loaded."""
    return _forked


def check_fork() -> None:
    """Raise arcadego.Error in a forked child."""
    if _forked:
        raise Error(FORK_MESSAGE)


# ---------------------------------------------------------------------------
# status codes


def take_string(p: c_void_p) -> str:
    """Decode and free a string the library returned."""
    if not p.value:
        return ""
    try:
        return ctypes.string_at(p.value).decode("utf-8", "replace")
    finally:
        lib.arcadego_free(p)


def check(status: int, err: c_void_p | None = None) -> None:
    """Raise the exception of a status code, with the library's message."""
    message = take_string(err) if err is not None else ""
    if status != 0:
        raise error_for_code(status, message or f"arcadego status {status}")


# ---------------------------------------------------------------------------
# Ctrl-C


class _Worker:
    """One helper thread that runs the main thread's long calls, so that the
    main thread stays free to receive KeyboardInterrupt."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def _loop(self) -> None:
        while True:
            fn, args, done, box, keep = self._jobs.get()
            try:
                box.append((True, fn(*args)))
            except BaseException as e:  # handed back to the caller
                box.append((False, e))
            # The call is over: what it read may go now, not before (the
            # caller may have stopped waiting, see run_cancellable).
            del fn, args, keep
            done.release()

    def alive(self) -> bool:
        """Whether the helper thread runs (in this process)."""
        return self._thread is not None and self._pid == os.getpid() and self._thread.is_alive()

    def submit(self, fn: Callable[..., Any], args: tuple[Any, ...], keep: Any = None) -> tuple[Any, list[Any]]:
        done = threading.Lock()
        done.acquire()
        box: list[Any] = []
        if self._thread is None or self._pid != os.getpid():
            self._pid = os.getpid()
            self._jobs = queue.SimpleQueue()
            self._thread = threading.Thread(target=self._loop, name="arcadego-call", daemon=True)
            self._thread.start()
        self._jobs.put((fn, args, done, box, keep))
        return done, box


_worker = _Worker()


#: Inserts of at least this many cells (rows x columns), or of at least
#: HANDOFF_BYTES where the input tells its size, run on the helper thread;
#: smaller ones finish long before a person presses Ctrl-C, and the
#: handoff costs two thread wake-ups.
HANDOFF_CELLS = 1 << 18
HANDOFF_BYTES = 8 << 20


def run_cancellable(db: Any, fn: Callable[..., Any], *args: Any, handoff: bool = True, keep: Any = None) -> Any:
    """Run ``fn(*args)`` (a library call returning a status). On the main
    thread, with ``handoff``, run it on the helper thread so that Ctrl-C
    cancels it through arcadego_cancel(db). ``keep``: what the call reads
    (buffers, capsules), held by the helper until the call has returned,
    even if this function raised before (a second signal handler may raise
    where no handler can catch it, as the wait loops).

    Ctrl-C has one meaning: an exception says nothing was written. The
    call is always waited for (no buffer is freed while the library still
    reads it). If the cancel came in time, the call fails and the
    KeyboardInterrupt is raised. If the call had passed its commit point
    and succeeded anyway, it returns normally and the KeyboardInterrupt is
    raised after it has returned, in the caller (see _interrupt_after_return).
    """
    check_fork()
    if not handoff or threading.current_thread() is not threading.main_thread():
        return fn(*args)
    done, box = _worker.submit(fn, args, keep)
    interrupted: BaseException | None = None
    # The helper fills box before it releases done: box says the call is
    # over, whatever interrupted the wait for done.
    while True:
        try:
            if box:
                break
            if not done.acquire(timeout=0.25) and not _worker.alive():
                raise Error("arcadego's call thread ended without finishing its call")
            continue  # the loop's jump inside the try: a signal there is caught
        except Error:
            raise
        except BaseException as e:  # noqa: B036 - Ctrl-C, or whatever a signal handler raised
            # The call goes on reading the caller's buffers until it
            # returns: it is canceled and waited for. Of several such
            # exceptions, a SystemExit wins; otherwise the first.
            if interrupted is None or (isinstance(e, SystemExit) and not isinstance(interrupted, SystemExit)):
                interrupted = e
            lib.arcadego_cancel(db)
    ok, value = box[0]
    if interrupted is not None:
        if ok and value == 0:  # committed before the cancel could stop it
            _interrupt_after_return(sys._getframe(), interrupted)
            return value
        raise interrupted
    if not ok:
        raise value
    return value


def _interrupt_after_return(frame: Any, interrupt: BaseException | None = None) -> None:
    """Raise KeyboardInterrupt (or interrupt, another exception a signal
    handler raised during the call) in the code that called into arcadego,
    once the call has returned: at the caller's next call, or when the
    caller itself returns. frame is a frame of the call, inside the package.

    A signal raised before returning would be handled inside the call (the
    interpreter checks for signals at every call), so a profile hook, set
    for this thread only until it fires, watches for the package's outer
    frame to return and raises at the caller's next event. An exception
    from a profile hook propagates at that point of the caller's code."""
    while frame.f_back is not None and frame.f_back.f_globals.get("__name__", "").startswith(__package__ or "arcadego"):
        frame = frame.f_back  # the outermost frame of the package: the public call
    outer, caller = frame, frame.f_back
    if sys.getprofile() is not None or caller is None:
        # A profiler owns the hook. Another exception than Ctrl-C's (a
        # SIGTERM's SystemExit) must not be lost: raised now, from the
        # call. Ctrl-C: said, instead of taking the hook away.
        if interrupt is not None and not isinstance(interrupt, KeyboardInterrupt):
            raise interrupt
        level, f = 1, sys._getframe()
        while f is not None and f is not caller:  # the warning names the caller's line
            f, level = f.f_back, level + 1
        warnings.warn("Ctrl-C came after the commit point: the call was committed", RuntimeWarning,
                      stacklevel=level)
        return
    returned = False

    def hook(f: Any, event: str, arg: Any) -> None:
        nonlocal returned
        if f is outer and event == "return":
            returned = True
        elif returned and (f is caller or f.f_back is caller):
            sys.setprofile(None)
            if interrupt is not None and not isinstance(interrupt, KeyboardInterrupt):
                raise interrupt
            raise KeyboardInterrupt("Ctrl-C came during a call that had already committed: the call "
                                    "completed and returned, and the interrupt was raised after it")

    sys.setprofile(hook)


def version() -> str:
    """The library's version string."""
    return (lib.arcadego_version() or b"").decode()


__all__ += ["version", "take_string", "forked", "CanceledError"]
