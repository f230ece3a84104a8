"""The Arrow C Data and C Stream interface structs in ctypes, and the
PyCapsule helpers of the Arrow PyCapsule interface.

Pointer members that this package writes are declared ``c_void_p`` so that
NULL is easy to set and test; callbacks are cast to their function types
only to be called.
"""

from __future__ import annotations

import ctypes
import sys
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_int,
    c_int64,
    c_void_p,
)
from typing import Any, Callable

__all__ = [
    "ArrowSchema",
    "ArrowArray",
    "ArrowArrayStream",
    "capsule_pointer",
    "new_stream_capsule",
    "malloc_stream",
    "free",
    "call_release",
    "release",
    "sweep_stream_capsules",
    "exported_streams",
]


class ArrowSchema(Structure):
    """struct ArrowSchema."""


ArrowSchema._fields_ = [
    ("format", c_void_p),
    ("name", c_void_p),
    ("metadata", c_void_p),
    ("flags", c_int64),
    ("n_children", c_int64),
    ("children", POINTER(POINTER(ArrowSchema))),
    ("dictionary", POINTER(ArrowSchema)),
    ("release", c_void_p),
    ("private_data", c_void_p),
]


class ArrowArray(Structure):
    """struct ArrowArray."""


ArrowArray._fields_ = [
    ("length", c_int64),
    ("null_count", c_int64),
    ("offset", c_int64),
    ("n_buffers", c_int64),
    ("n_children", c_int64),
    ("buffers", POINTER(c_void_p)),
    ("children", POINTER(POINTER(ArrowArray))),
    ("dictionary", POINTER(ArrowArray)),
    ("release", c_void_p),
    ("private_data", c_void_p),
]


class ArrowArrayStream(Structure):
    """struct ArrowArrayStream."""

    _fields_ = [
        ("get_schema", c_void_p),
        ("get_next", c_void_p),
        ("get_last_error", c_void_p),
        ("release", c_void_p),
        ("private_data", c_void_p),
    ]


SchemaRelease = CFUNCTYPE(None, POINTER(ArrowSchema))
ArrayRelease = CFUNCTYPE(None, POINTER(ArrowArray))
StreamGetSchema = CFUNCTYPE(c_int, POINTER(ArrowArrayStream), POINTER(ArrowSchema))
StreamGetNext = CFUNCTYPE(c_int, POINTER(ArrowArrayStream), POINTER(ArrowArray))
StreamGetLastError = CFUNCTYPE(c_void_p, POINTER(ArrowArrayStream))
StreamRelease = CFUNCTYPE(None, POINTER(ArrowArrayStream))


# Release callbacks called from Python, by function type and address:
# making the ctypes function object costs 2 µs, and every point read
# releases the schema its call exported. The addresses are few (the
# library's and pyarrow's release functions); past 64 the cache starts
# over.
_release_fns: dict[tuple[Any, int], Any] = {}


def _release_fn(fn_type: Any, address: int) -> Any:
    """The ctypes function of type fn_type at address, made once."""
    key = (fn_type, address)
    fn = _release_fns.get(key)
    if fn is None:
        if len(_release_fns) >= 64:
            _release_fns.clear()
        fn = _release_fns[key] = fn_type(address)
    return fn


def release(struct: Any, fn_type: Any) -> None:
    """Call the release callback of a ctypes ArrowSchema, ArrowArray or
    ArrowArrayStream, if set (``fn_type``: SchemaRelease, ArrayRelease or
    StreamRelease). The callback marks the struct released."""
    if struct.release:
        _release_fn(fn_type, struct.release)(ctypes.byref(struct))


def call_release(ptr: Any, fn_type: Any) -> None:
    """Call the release callback of the struct ``ptr`` points to, if set.

    Function pointers made by CFUNCTYPE release the GIL while they run, so a
    producer's callback that needs the GIL (a Python producer) still works.
    """
    address = ptr.contents.release
    if address:
        _release_fn(fn_type, address)(ptr)


# The C library, for malloc and free of structs handed to other consumers.
_libc = ctypes.CDLL(None)
_malloc = _libc.malloc
_malloc.restype = c_void_p
_malloc.argtypes = [ctypes.c_size_t]
_free = _libc.free
_free.restype = None
_free.argtypes = [c_void_p]


def free(address: int) -> None:
    """free() memory from malloc_stream."""
    _free(address)


def release_stream(address: int) -> None:
    """Release the ArrowArrayStream at address (from malloc_stream) and
    free it."""
    try:
        call_release(ctypes.cast(address, POINTER(ArrowArrayStream)), StreamRelease)
    finally:
        _free(address)


def malloc_stream() -> int:
    """A zeroed ArrowArrayStream in C memory (freed by the capsule or free())."""
    address = _malloc(ctypes.sizeof(ArrowArrayStream))
    if not address:
        raise MemoryError("malloc of an ArrowArrayStream failed")
    ctypes.memset(address, 0, ctypes.sizeof(ArrowArrayStream))
    return int(address)


# PyCapsule functions, called with the GIL held.
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(c_void_p, ctypes.py_object, c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_PyCapsule_GetPointerRaw = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, c_void_p, c_char_p, c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi)
)
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(c_int, ctypes.py_object, c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi)
)

# Capsule names must outlive every capsule: module constants do.
STREAM_CAPSULE_NAME = b"arrow_array_stream"
SCHEMA_CAPSULE_NAME = b"arrow_schema"
ARRAY_CAPSULE_NAME = b"arrow_array"


def capsule_pointer(capsule: object, name: bytes) -> int:
    """The pointer inside an Arrow PyCapsule, checking its name.

    Raises TypeError when ``capsule`` is not a capsule of that name.
    """
    if not _PyCapsule_IsValid(capsule, name):
        raise TypeError(f"expected a PyCapsule named {name.decode()!r}, got {type(capsule).__name__}")
    return int(_PyCapsule_GetPointer(capsule, name))


# Set by the fork handler: in a forked child the producer (the Go runtime)
# must not be called, so an unconsumed stream is leaked instead of released.
_skip_release: list[Callable[[], bool]] = []

# Stream capsules handed out, by struct address. A capsule destructor
# written in Python (a ctypes callback) would run with whatever exception
# its consumer has pending when it drops the capsule: it would fail, leak
# the stream and swallow that exception. So capsules have no destructor:
# this registry keeps each one, and sweep_stream_capsules() releases the
# stream (if no consumer moved it) and frees the struct once the registry
# holds the only reference.
_exported: dict[int, object] = {}


def _refs(table: dict[int, object], key: int) -> int:
    obj = table.get(key)  # None: another thread's sweep took it
    return sys.getrefcount(obj) if obj is not None else 0


# References of an object held only by a dict, as _refs counts them (the
# count differs between Python versions, so it is measured, not assumed).
_probe: dict[int, object] = {0: object()}
_ONLY_IN_REGISTRY = _refs(_probe, 0)
del _probe


def sweep_stream_capsules() -> None:
    """Release and free the exported streams nobody holds any more."""
    for address in list(_exported):
        if _refs(_exported, address) > _ONLY_IN_REGISTRY:
            continue
        # Taken out before the release, which runs without the GIL: another
        # thread's sweep then no longer sees it (dict.pop is atomic), so no
        # stream is released or freed twice.
        if _exported.pop(address, None) is None:
            continue
        stream = ArrowArrayStream.from_address(address)
        if stream.release and not any(check() for check in _skip_release):
            StreamRelease(stream.release)(ctypes.pointer(stream))
        _free(address)


def new_stream_capsule(address: int) -> object:
    """Wrap a malloc'ed ArrowArrayStream in an "arrow_array_stream" capsule.

    The struct is released (if unconsumed) and freed by a later
    sweep_stream_capsules(), after every other reference is gone.
    """
    sweep_stream_capsules()
    capsule = _PyCapsule_New(address, STREAM_CAPSULE_NAME, None)
    _exported[address] = capsule
    return capsule


def exported_streams() -> int:
    """How many exported stream capsules are still tracked (for tests)."""
    return len(_exported)
