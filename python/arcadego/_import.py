"""Read an ArrowArrayStream into Python values without pyarrow.

Handles the types the engine emits (utf8, large_utf8, binary, large_binary,
int8..int64, uint8..uint64, float32, float64, bool, timestamp of any unit
and zone, date32, date64, null), and dictionary-encoded columns of them (the
device column of results is dictionary<int32, utf8>), decoded to plain
values. numpy does the bulk conversion; values are copied out before each
batch is released.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
from collections.abc import Iterator
from typing import Any, Callable

import numpy as np

from ._cdata import (
    ArrayRelease,
    ArrowArray,
    ArrowArrayStream,
    ArrowSchema,
    SchemaRelease,
    StreamGetLastError,
    StreamGetNext,
    StreamGetSchema,
    StreamRelease,
    call_release,
)
from ._errors import (
    CanceledError,
    Error,
    InternalError,
    InvalidArgumentError,
    StorageError,
)

__all__ = ["read_stream", "read_device_list", "Field"]

_ECANCELED = 125
_ERRNO_ERRORS: dict[int, type[Error]] = {
    22: InvalidArgumentError,  # EINVAL
    5: StorageError,  # EIO
    _ECANCELED: CanceledError,
}

_INTS = {"c": np.int8, "C": np.uint8, "s": np.int16, "S": np.uint16,
         "i": np.int32, "I": np.uint32, "l": np.int64, "L": np.uint64,
         "f": np.float32, "g": np.float64, "e": np.float16}
_TS_NUMPY_UNIT = {"s": "s", "m": "ms", "u": "us", "n": "ns"}


class Field:
    """Name and Arrow format of one column; for a dictionary-encoded column,
    ``format`` is that of the indices and ``dictionary`` the Field of the
    values (else None)."""

    __slots__ = ("name", "format", "dictionary")

    def __init__(self, name: str, fmt: str, dictionary: Field | None = None) -> None:
        self.name = name
        self.format = fmt
        self.dictionary = dictionary

    def __repr__(self) -> str:
        if self.dictionary is not None:
            return f"Field({self.name!r}, {self.format!r}, {self.dictionary!r})"
        return f"Field({self.name!r}, {self.format!r})"


_MAX_DICTIONARY_DEPTH = 4


def _field(schema: ArrowSchema, depth: int = 0) -> Field:
    """The Field of a child schema (its dictionary's, recursively)."""
    name = ctypes.string_at(schema.name).decode("utf-8") if schema.name else ""
    fmt = ctypes.string_at(schema.format).decode()
    dictionary = None
    if schema.dictionary:
        if depth >= _MAX_DICTIONARY_DEPTH:
            raise InternalError(f"column {name!r}: dictionaries nested too deep")
        dictionary = _field(schema.dictionary.contents, depth + 1)
    return Field(name, fmt, dictionary)


def _view(address: int | None, dtype: Any, count: int) -> np.ndarray:
    if count <= 0 or not address:
        return np.empty(0, dtype=dtype)
    nbytes = count * np.dtype(dtype).itemsize
    return np.frombuffer((ctypes.c_char * nbytes).from_address(address), dtype=dtype, count=count)


def _bits(address: int | None, offset: int, length: int) -> np.ndarray:
    raw = _view(address, np.uint8, (offset + length + 7) // 8)
    return np.unpackbits(raw, bitorder="little")[offset:offset + length].astype(np.bool_)


def _tzinfo(tz: str) -> _dt.tzinfo | None:
    if not tz:
        return None
    if tz in ("UTC", "utc", "Z", "+00:00", "Etc/UTC"):
        return _dt.timezone.utc
    if tz[0] in "+-" and len(tz) == 6 and tz[3] == ":":
        sign = 1 if tz[0] == "+" else -1
        return _dt.timezone(sign * _dt.timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6])))
    try:
        import zoneinfo

        return zoneinfo.ZoneInfo(tz)
    except Exception:  # unknown zone: keep UTC rather than fail the read
        return _dt.timezone.utc


def _timestamps(ints: np.ndarray, unit: str, tz: str) -> list[Any]:
    values = ints.astype(f"datetime64[{_TS_NUMPY_UNIT[unit]}]").astype("datetime64[us]").tolist()
    info = _tzinfo(tz)
    if info is None:
        return values
    out: list[Any] = []
    for v in values:
        if isinstance(v, _dt.datetime):
            v = v.replace(tzinfo=_dt.timezone.utc)
            if info is not _dt.timezone.utc:
                v = v.astimezone(info)
        out.append(v)
    return out


def _column(arr: ArrowArray, fmt: str, offset: int, length: int,
            dictionary: Field | None = None) -> list[Any]:
    """The values of one child array as a list (None for nulls); with
    ``dictionary`` (the Field of the values), ``fmt`` is the format of the
    indices and the values are looked up in the array's dictionary."""
    bufs = arr.buffers
    if dictionary is not None:
        return _dictionary_column(arr, fmt, offset, length, dictionary)
    valid: np.ndarray | None = None
    if arr.null_count != 0 and fmt != "n" and bufs[0]:
        valid = _bits(bufs[0], offset, length)
    if fmt == "n":
        return [None] * length
    if fmt in _INTS:
        values = _view(bufs[1], _INTS[fmt], offset + length)[offset:].tolist()
    elif fmt == "b":
        values = _bits(bufs[1], offset, length).tolist()
    elif fmt in ("u", "U", "z", "Z"):
        odt = np.int32 if fmt in ("u", "z") else np.int64
        offs = _view(bufs[1], odt, offset + length + 1)[offset:] if length else np.zeros(1, odt)
        start, end = int(offs[0]), int(offs[-1])
        blob = ctypes.string_at(bufs[2] + start, end - start) if end > start else b""
        rel = (offs - start).tolist()
        values = [blob[rel[i]:rel[i + 1]] for i in range(length)]
        if fmt in ("u", "U"):
            values = [v.decode("utf-8") for v in values]
    elif fmt.startswith("ts") and len(fmt) >= 4:
        ints = _view(bufs[1], np.int64, offset + length)[offset:]
        values = _timestamps(ints, fmt[2], fmt[4:])
    elif fmt == "tdD":
        days = _view(bufs[1], np.int32, offset + length)[offset:]
        values = days.astype("datetime64[D]").tolist()
    elif fmt == "tdm":
        ms = _view(bufs[1], np.int64, offset + length)[offset:]
        values = ms.astype("datetime64[ms]").astype("datetime64[D]").tolist()
    else:
        raise InternalError(f"cannot read Arrow format {fmt!r} without pyarrow")
    if valid is not None:
        values = [v if ok else None for v, ok in zip(values, valid.tolist())]
    return values


def _numpy_column(arr: ArrowArray, fmt: str, offset: int, length: int,
                  dictionary: Field | None = None) -> np.ndarray:
    """The values of one child array as a numpy array, as pyarrow's
    ``to_numpy`` gives them: numbers in their dtype (an integer column with
    nulls as float64 with NaN), booleans as bool (with nulls: object with
    None), timestamps as datetime64 in their unit and dates as
    datetime64[D] (nulls NaT; a zone's times in UTC), the rest as object
    arrays (None for nulls)."""
    bufs = arr.buffers
    valid: np.ndarray | None = None
    if dictionary is None and arr.null_count != 0 and fmt != "n" and bufs[0]:
        valid = _bits(bufs[0], offset, length)
    if dictionary is None and fmt in _INTS:
        values = _view(bufs[1], _INTS[fmt], offset + length)[offset:].copy()
        if valid is not None:
            values = values.astype(np.float64) if fmt not in ("f", "g") else values
            values[~valid] = np.nan
        return values
    if dictionary is None and (fmt.startswith("ts") and len(fmt) >= 4 or fmt in ("tdD", "tdm")):
        dt = {"tdD": np.int32, "tdm": np.int64}.get(fmt, np.int64)
        unit = "D" if fmt == "tdD" else "ms" if fmt == "tdm" else _TS_NUMPY_UNIT[fmt[2]]
        values = _view(bufs[1], dt, offset + length)[offset:].astype(np.int64).astype(f"datetime64[{unit}]")
        if fmt == "tdm":
            values = values.astype("datetime64[D]")
        if valid is not None:
            values[~valid] = np.datetime64("NaT")
        return values
    if dictionary is None and fmt == "b" and valid is None:
        return _bits(bufs[1], offset, length).astype(bool)
    out = np.empty(length, dtype=object)
    out[:] = _column(arr, fmt, offset, length, dictionary)
    return out


def _empty_numpy(f: Field) -> np.ndarray:
    """An empty column of f's numpy type (see _numpy_column)."""
    if f.dictionary is None and f.format in _INTS:
        return np.empty(0, _INTS[f.format])
    if f.dictionary is None and f.format.startswith("ts") and len(f.format) >= 4:
        return np.empty(0, f"datetime64[{_TS_NUMPY_UNIT[f.format[2]]}]")
    if f.format in ("tdD", "tdm"):
        return np.empty(0, "datetime64[D]")
    if f.dictionary is None and f.format == "b":
        return np.empty(0, bool)
    return np.empty(0, object)


def _dictionary_column(arr: ArrowArray, fmt: str, offset: int, length: int, dictionary: Field) -> list[Any]:
    """The values of a dictionary-encoded array: its indices (``fmt``) looked
    up in its dictionary array, whose values have the Field ``dictionary``."""
    if fmt not in _INTS or fmt in ("f", "g", "e"):
        raise InternalError(f"dictionary indices of Arrow format {fmt!r}")
    if not arr.dictionary:
        raise InternalError("dictionary-encoded column without a dictionary array")
    d = arr.dictionary.contents
    values = _column(d, dictionary.format, d.offset, d.length, dictionary.dictionary)
    if length <= 0:
        return []
    bufs = arr.buffers
    valid: np.ndarray | None = None
    if arr.null_count != 0 and bufs[0]:
        valid = _bits(bufs[0], offset, length)
    indices = _view(bufs[1], _INTS[fmt], offset + length)[offset:].astype(np.int64)
    if valid is not None:
        indices = np.where(valid, indices, 0)  # a null's index may be anything
        if not valid.any():
            return [None] * length
    if indices.min() < 0 or indices.max() >= len(values):
        raise InternalError(f"dictionary index out of range (dictionary of {len(values)} values)")
    lookup = np.empty(len(values), dtype=object)
    lookup[:] = values
    out = lookup[indices].tolist()
    if valid is not None:
        out = [v if ok else None for v, ok in zip(out, valid.tolist())]
    return out


def _stream_error(stream: Any, code: int, what: str) -> Error:
    message = ""
    if stream.contents.get_last_error:
        p = StreamGetLastError(stream.contents.get_last_error)(stream)
        if p:
            message = ctypes.string_at(p).decode("utf-8", "replace")
    cls = _ERRNO_ERRORS.get(code, Error)
    return cls(f"{what}: {message or f'errno {code}'}")


def iter_stream(address: int, call: Callable[..., Any] | None = None,
                with_schema: bool = False, numpy: bool = False) -> Iterator[tuple[list[Field], list[Any] | None]]:
    """Read the struct-typed stream at ``address`` a batch at a time: yield
    the fields and the batch's columns of Python values (first the fields
    and None, with_schema); release the stream at the end (or when the
    generator is closed).

    ``call(fn, *args)`` runs the stream's get_next (so that a caller can make
    it cancellable); by default it is called directly. ``numpy``: the
    columns are numpy arrays (see _numpy_column), not lists.
    """
    run = call or (lambda fn, *a: fn(*a))
    read = _numpy_column if numpy else _column
    stream = ctypes.cast(address, ctypes.POINTER(ArrowArrayStream))
    try:
        schema = ArrowSchema()
        rc = StreamGetSchema(stream.contents.get_schema)(stream, ctypes.byref(schema))
        if rc != 0:
            raise _stream_error(stream, rc, "reading the result schema")
        try:
            fields = [_field(schema.children[i].contents) for i in range(schema.n_children)]
        finally:
            call_release(ctypes.pointer(schema), SchemaRelease)
        if with_schema:
            yield fields, None
        get_next = StreamGetNext(stream.contents.get_next)
        while True:
            batch = ArrowArray()
            rc = run(get_next, stream, ctypes.byref(batch))
            if rc != 0:
                raise _stream_error(stream, rc, "reading a result batch")
            if not batch.release:
                return
            try:
                if batch.n_children != len(fields):
                    raise InternalError(
                        f"result batch has {batch.n_children} columns, schema {len(fields)}")
                columns = []
                for i, f in enumerate(fields):
                    child = batch.children[i].contents
                    columns.append(read(child, f.format, batch.offset + child.offset, batch.length, f.dictionary))
            finally:
                call_release(ctypes.pointer(batch), ArrayRelease)
            yield fields, columns
    finally:
        call_release(stream, StreamRelease)


def read_stream(address: int, call: Callable[..., Any] | None = None) -> tuple[list[Field], list[list[Any]]]:
    """Read every batch of the struct-typed stream at ``address`` into
    columns of Python values, then release the stream (see iter_stream)."""
    fields: list[Field] = []
    columns: list[list[Any]] = []
    for batch_fields, batch_columns in iter_stream(address, call, with_schema=True):
        if batch_columns is None:
            fields, columns = batch_fields, [[] for _ in batch_fields]
            continue
        for col, values in zip(columns, batch_columns):
            col.extend(values)
    return fields, columns


def read_stream_numpy(address: int) -> tuple[list[Field], list[np.ndarray]]:
    """Read every batch of the struct-typed stream at ``address`` into numpy
    columns (see _numpy_column), then release the stream."""
    fields: list[Field] = []
    parts: list[list[np.ndarray]] = []
    for batch_fields, batch_columns in iter_stream(address, with_schema=True, numpy=True):
        if batch_columns is None:
            fields, parts = batch_fields, [[] for _ in batch_fields]
            continue
        for col, values in zip(parts, batch_columns):
            col.append(values)
    # Batches of one column may differ (nulls in one only): concatenate
    # finds the common type, float64 or object, as for one batch.
    return fields, [np.concatenate(p) if len(p) > 1 else p[0] if p else _empty_numpy(f)
                    for f, p in zip(fields, parts)]


def read_device_list(schema: ArrowSchema, batch: ArrowArray, pa: Any = None) -> dict[str, list[Any]]:
    """The columns of arcadego_device_list's batch as lists: "device" as
    str, "rows", "first" and "last" as ints (times in the type's unit, as
    arcadego_devices gives them). Values are copied out; with ``pa``
    (pyarrow), which decodes a million names three times faster than a
    Python loop, the structs are moved into a pyarrow batch, else left to
    the caller to release. ctypes reads the buffers: for the few devices
    of a small listing, numpy's views cost more than the values."""
    n = batch.length
    kids = [batch.children[i][0] for i in range(4)]

    def values(kid: ArrowArray, ctype: Any, count: int) -> list[int]:
        off = batch.offset + kid.offset  # a struct's offset applies to its children too
        return (ctype * (off + count)).from_address(kid.buffers[1])[off:] if count else []

    columns: dict[str, list[Any]] = {key: values(kids[i], ctypes.c_int64, n)
                                     for i, key in enumerate(("rows", "first", "last"), 1)}
    if pa is not None:
        # As a struct array: pyarrow refuses a record batch whose struct
        # has an offset, and field() applies it.
        imported = pa.Array._import_from_c(ctypes.addressof(batch), ctypes.addressof(schema))
        return {"device": imported.field(0).to_pylist(), **columns}
    large = ctypes.string_at(schema.children[0][0].format) == b"U"
    offs = values(kids[0], ctypes.c_int64 if large else ctypes.c_int32, n + 1) if n else [0, 0]
    start = offs[0]
    blob = ctypes.string_at(kids[0].buffers[2] + start, offs[-1] - start) if offs[-1] > start else b""
    offs = [o - start for o in offs]
    text = blob.decode("utf-8")
    if len(text) == len(blob):  # ASCII: byte offsets are character offsets
        names = [text[offs[i]:offs[i + 1]] for i in range(n)]
    else:
        names = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n)]
    return {"device": names, **columns}
