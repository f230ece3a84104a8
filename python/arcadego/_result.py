"""Scan results: a lazy handle that runs the scan at each conversion."""

from __future__ import annotations

import ctypes
import json
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _cdata, _lib, _optional
from ._errors import CanceledError, Error, InvalidArgumentError, NotFoundError, StorageError
from ._import import Field, iter_stream, read_stream, read_stream_numpy

if TYPE_CHECKING:  # pragma: no cover
    import pandas
    import pyarrow

    from ._database import Database

__all__ = ["Result"]


def _make_request_encoder() -> Callable[[dict[str, Any]], str]:
    """A function that encodes a request dict as json.dumps does, faster:
    json.dumps builds the json module's C encoder at every call, which
    costs more than encoding a small request (a point read's). Falls back
    to json.dumps where that encoder is missing or differs. Unlike
    json.dumps it does not look for cycles: a request that contains
    itself raises RecursionError (requests are built here, from checked
    values)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.dumps
    try:
        encoder = make(None, json.JSONEncoder().default, json.encoder.encode_basestring_ascii, None,
                       ": ", ", ", False, False, True)
        probe = {"type": "T", "devices": ["d\u00e9", "e"], "start": -1, "where": {"v": 0.5, "n": None, "b": True}}
        if "".join(encoder(probe, 0)) != json.dumps(probe):
            return json.dumps
    except Exception:  # an interpreter whose encoder takes other arguments
        return json.dumps
    return lambda request: "".join(encoder(request, 0))


_encode_request = _make_request_encoder()

# A str as JSON, as _encode_request writes it (both escape as json.dumps's
# default, ensure_ascii, does).
_quote: Callable[[str], str] = json.encoder.encode_basestring_ascii


def _device_request_json(type_name: str, devices_json: str) -> bytes:
    """_encode_request({"type": type_name, "devices": [...]}) for a
    devices list already encoded (without its brackets), written directly:
    a point read's scan() spent most of its time building and encoding
    the request and its probe generically."""
    return f'{{"type": {_quote(type_name)}, "devices": [{devices_json}]}}'.encode("utf-8")

# Result schemas imported by pyarrow, by the id arcadego_scan_first gives
# their layout (never the same id for two layouts), up to _MAX_SCHEMAS of
# them: the cache starts over when full.
_result_schemas: dict[int, Any] = {}
_MAX_SCHEMAS = 64


def _stream_failure(e: BaseException) -> Error:
    """The arcadego error for a failure that pyarrow reports while reading
    a result stream (its get_next returned an errno: pyarrow raises
    OSError or an ArrowException with the stream's message)."""
    message = str(e)
    if message.endswith(": canceled"):
        return CanceledError(message)
    if message.endswith(": invalid argument"):
        return InvalidArgumentError(message)
    if message.endswith(": not found"):
        return NotFoundError(message)
    return StorageError(message)


def _read_rest(reader: Any, pa: ModuleType) -> Iterator[Any]:
    """The batches of a result's RecordBatchReader, a failure of the
    library's stream raised as arcadego's error; the reader is closed
    however the reading ends."""
    try:
        yield from reader
    except (OSError, pa.ArrowException) as e:
        raise _stream_failure(e) from e
    finally:
        reader.close()


class Result:
    """The rows of one scan, converted on demand.

    A Result holds the request, not the rows: each conversion (``to_arrow()``,
    ``to_pandas()``, ``to_pylist()``, ``to_pydict()``, or a consumer of
    ``__arrow_c_stream__`` such as ``pyarrow.table(res)``,
    ``polars.DataFrame(res)`` or ``duckdb.sql("select * from res")``) runs
    the scan again, like a DuckDB relation, and sees the data committed by
    then. (``polars.from_arrow(res)`` works too but, as for any stream
    object, returns a struct Series: ``.struct.unnest()`` gives the frame.)

    Columns: ``device``, the time column, then the requested properties;
    rows are sorted by device, then time.

    The ``device`` column is dictionary-encoded in the Arrow stream
    (``dictionary<int32, string>``, not ordered): a batch's dictionary holds
    the names of the devices whose rows it holds (one, unless it joins the
    short runs of several devices, up to ``batch_rows`` rows), so the column
    costs 4 bytes a row instead of a copy of the name per row. Batches carry
    different dictionaries. ``to_pylist()`` and ``to_pydict()``
    give plain ``str``; ``to_pandas()`` a pandas Categorical; polars
    (``polars.DataFrame(res)``) reads it as ``pl.Categorical`` and DuckDB as
    VARCHAR. pyarrow keeps one dictionary per chunk, which some of its
    kernels refuse (see ``to_arrow()``).

    Example::

        res = db.scan("A", columns=["k"], device="d1", start=0, end=100)
        res.to_pylist()   # [{"device": "d1", "time": 1, "k": 7}, ...]
    """

    _function = "arcadego_scan"  # the library call that starts the stream
    # The call that starts it and returns its first batch (None: none).
    _first_function: str | None = "arcadego_scan_first"

    def __init__(self, db: Database, request: dict[str, Any], encoded: bytes | None = None) -> None:
        # encoded: the request as _encode_request would encode it, when
        # the caller has it already.
        self._db = db
        self._request = request
        self._json = _encode_request(request).encode("utf-8") if encoded is None else encoded

    @classmethod
    def _of_device(cls, db: Database, type_name: str, device: str) -> Result:
        """The Result of ``db.scan(type_name, device=device)`` with no
        other argument (a point read), its request and the probe of
        :meth:`_check` encoded directly."""
        result = cls(db, {"type": type_name, "devices": [device]}, _device_request_json(type_name, _quote(device)))
        result._check(_device_request_json(type_name, ""))
        return result

    @property
    def request(self) -> dict[str, Any]:
        """The scan request sent to the library (a copy)."""
        return dict(self._request)

    def __repr__(self) -> str:
        return f"<arcadego.Result {self._request!r}>"

    def _scan(self, request: bytes | None = None) -> int:
        """Start the scan of ``request`` (JSON; the Result's own by
        default) into a malloc'ed ArrowArrayStream; returns its address."""
        handle = self._db._require_open()  # refuses a forked child too
        address = _cdata.malloc_stream()
        err = ctypes.c_void_p()
        try:
            # Direct: starting a scan is quick; the rows come in get_next
            # calls of one batch each, between which Ctrl-C is delivered.
            status = getattr(_lib.lib, self._function)(handle, request or self._json, address, ctypes.byref(err))
            _lib.check(status, err)
        except BaseException:
            # Released, not only freed: a Ctrl-C taken after a call that
            # succeeded leaves a live stream (a failed call leaves none).
            _cdata.release_stream(address)
            raise
        return address

    def _check(self, probe: bytes | None = None) -> None:
        """Start the scan for no device and drop it: the library checks the
        type and the columns when a scan starts, so this raises what the
        first read would, at the call that made the Result, without
        listing the type's devices. probe: the request with no device,
        encoded, when the caller has it."""
        if probe is None:
            probe = _encode_request({**self._request, "devices": []}).encode("utf-8")
        self._db._require_open()  # refuses a forked child too
        # A probe that passed passes again until the schema changes (every
        # DDL goes through this handle); a miss here would only move the
        # error to the first read, which checks again.
        key = (self._function, probe)
        # The epoch before the call: a DDL of another thread during it
        # moves the epoch past what this probe saw.
        epoch = self._db._schema_epoch
        if self._db._probed.get(key) == epoch:
            return
        _cdata.release_stream(self._scan(probe))
        if len(self._db._probed) >= 256:
            self._db._probed.clear()
        self._db._probed[key] = epoch

    def __iter__(self) -> Iterator[Any]:
        """The rows a batch at a time: ``pyarrow.RecordBatch`` objects when
        pyarrow is installed, else one ``{column: [values]}`` dict per
        batch. Each iteration runs the scan again."""
        pa = _optional.pyarrow()
        if pa is not None:
            _, batches, reader = self._open_arrow(pa)
            yield from batches
            if reader is not None:
                yield from _read_rest(reader, pa)
            return
        address = self._scan()
        batches = iter_stream(address)
        try:
            for fields, columns in batches:
                yield {f.name: c for f, c in zip(fields, columns or [])}
        finally:
            batches.close()  # releases the stream before its memory goes
            _cdata.free(address)

    def to_polars(self) -> Any:
        """The rows as a polars.DataFrame (needs polars and pyarrow); the
        device column is a polars Categorical."""
        pl = _optional.require("polars", "Result.to_polars()")
        return pl.from_arrow(self.to_arrow())

    def to_numpy(self) -> dict[str, np.ndarray]:
        """The rows as ``{column: numpy array}``, with or without pyarrow:
        numbers in their numpy dtypes (an integer column with nulls becomes
        float64 with NaN), booleans as bool (with nulls: object with None),
        timestamps as datetime64 in their unit and dates as datetime64[D]
        (NaT for nulls; times with a zone in UTC), strings and the device
        as object arrays."""
        pa = _optional.pyarrow()
        if pa is not None:
            table = self.to_arrow()
            out = {}
            for name in table.column_names:
                col = table[name]
                if pa.types.is_dictionary(col.type):
                    col = col.cast(col.type.value_type)
                out[name] = col.to_numpy()
            return out
        address = self._scan()
        try:
            fields, columns = read_stream_numpy(address)
        finally:
            _cdata.free(address)
        return {f.name: c for f, c in zip(fields, columns)}

    def _reader(self, pa: ModuleType) -> Any:
        """Run the scan as a pyarrow.RecordBatchReader: imported from the
        stream's address, without the capsule and its registry that
        ``__arrow_c_stream__`` needs for consumers that keep it."""
        _cdata.sweep_stream_capsules()  # streams of capsules dropped unread, as __arrow_c_stream__ does
        address = self._scan()
        try:
            return pa.RecordBatchReader._import_from_c(address)  # moves the stream out
        finally:
            _cdata.release_stream(address)  # frees the struct (and releases the stream if not moved)

    def _open_arrow(self, pa: ModuleType) -> tuple[Any, list[Any], Any]:
        """Start the scan for pyarrow: its schema, the batches read by the
        call that started it, and a RecordBatchReader of the rest (None
        when there is no rest). A result of one batch, such as a device's
        rows, is then one call into the library, not a stream's five; and
        its schema is imported once per layout (the library numbers them),
        which cost pyarrow more than the batch."""
        if self._first_function is None:
            reader = self._reader(pa)
            return reader.schema, [], reader
        _cdata.sweep_stream_capsules()
        handle = self._db._require_open()  # refuses a forked child too
        schema, first, rest = _cdata.ArrowSchema(), _cdata.ArrowArray(), _cdata.ArrowArrayStream()
        schema_id, err = ctypes.c_uint64(), ctypes.c_void_p()
        try:
            status = getattr(_lib.lib, self._first_function)(handle, self._json, ctypes.byref(schema),
                                                             ctypes.byref(first), ctypes.byref(rest),
                                                             ctypes.byref(schema_id), ctypes.byref(err))
            _lib.check(status, err)
            out_schema = _result_schemas.get(schema_id.value) if schema_id.value else None
            if out_schema is None:
                out_schema = pa.Schema._import_from_c(ctypes.addressof(schema))  # moves it out
                if schema_id.value:
                    if len(_result_schemas) >= _MAX_SCHEMAS:
                        _result_schemas.clear()
                    _result_schemas[schema_id.value] = out_schema
            batches = []
            if first.release:  # the import moves the batch out
                batches.append(pa.RecordBatch._import_from_c(ctypes.addressof(first), out_schema))
            reader = pa.RecordBatchReader._import_from_c(ctypes.addressof(rest)) if rest.release else None
            return out_schema, batches, reader
        finally:
            # What was not moved out (a schema known already, a failed
            # import, a Ctrl-C between the call and an import) is
            # released here.
            _cdata.release(first, _cdata.ArrayRelease)
            _cdata.release(schema, _cdata.SchemaRelease)
            _cdata.release(rest, _cdata.StreamRelease)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Run the scan and return it as an "arrow_array_stream" PyCapsule
        (the Arrow PyCapsule interface). ``requested_schema`` is ignored."""
        return _cdata.new_stream_capsule(self._scan())

    def to_arrow(self) -> pyarrow.Table:
        """The rows as a pyarrow.Table (needs pyarrow): one chunk per batch,
        and a ``device`` column of type ``dictionary<int32, string>`` (the
        name is stored once, not once a row) whose chunks share one
        dictionary, so ``group_by`` and ``join`` on ``device`` work.

        The stream itself (``__arrow_c_stream__``, for polars, DuckDB or
        ``pyarrow.RecordBatchReader``) gives each batch a dictionary of its
        own devices. pyarrow does not ``sort_by`` a dictionary column;
        rows already come sorted by device then time, otherwise cast it:
        ``table.set_column(0, "device", table["device"].cast(pa.string()))``.
        """
        pa = _optional.require("pyarrow", "Result.to_arrow()")
        schema, batches, reader = self._open_arrow(pa)
        if reader is not None:
            # A batch at a time from Python, not read_all(): Ctrl-C is
            # taken between two batches instead of after the whole result.
            batches.extend(_read_rest(reader, pa))
        table = pa.Table.from_batches(batches, schema=schema)
        if len(batches) <= 1:
            return table  # one chunk: one dictionary already
        # One dictionary for all chunks (4 bytes a row): pyarrow's group_by,
        # join and IPC files refuse chunks with differing dictionaries.
        return table.unify_dictionaries()

    def _read(self) -> tuple[list[Field], list[list[Any]]]:
        """Run the scan and read it without pyarrow: fields and columns."""
        address = self._scan()
        try:
            return read_stream(address)
        finally:
            _cdata.free(address)

    def to_pydict(self) -> dict[str, list[Any]]:
        """The rows as {column: [values]} (no pyarrow needed). Timestamps
        become datetime.datetime (microsecond precision), dates
        datetime.date, nulls None; the dictionary-encoded device column
        plain str."""
        fields, columns = self._read()
        return {f.name: c for f, c in zip(fields, columns)}

    def to_pylist(self) -> list[dict[str, Any]]:
        """The rows as a list of dicts (no pyarrow needed)."""
        d = self.to_pydict()
        names = list(d)
        return [dict(zip(names, row)) for row in zip(*d.values())]

    def to_pandas(self) -> pandas.DataFrame:
        """The rows as a pandas.DataFrame (through pyarrow when installed).

        The ``device`` column is a pandas Categorical (from its Arrow
        dictionary encoding), with or without pyarrow: compare it with
        strings as usual (``df[df.device == "d1"]``), or
        ``df["device"].astype(str)`` for plain strings."""
        pd = _optional.require("pandas", "Result.to_pandas()")
        if _optional.pyarrow() is not None:
            return self.to_arrow().to_pandas()
        fields, columns = self._read()
        frame = pd.DataFrame({f.name: c for f, c in zip(fields, columns)})
        for f in fields:
            if f.dictionary is not None:
                frame[f.name] = frame[f.name].astype("category")
        return frame


class AggregateResult(Result):
    """The lazy result of :meth:`Database.aggregate`: read it as a scan's
    (``to_arrow()``, ``to_pandas()``, ``to_pylist()``, the Arrow stream),
    and each read computes the aggregates again over the committed rows.

    Columns: ``device`` (with ``by_device=True``), the time column (each
    bucket's start, or without ``every`` the group's first time), then one
    column per aggregate named ``<property>_<function>``.
    """

    _function = "arcadego_aggregate"
    _first_function = None

    def __repr__(self) -> str:
        return f"<arcadego.AggregateResult {self._request!r}>"


class LastResult(Result):
    """The lazy result of :meth:`Database.last`: one row per device, read
    again at each read. Columns: ``device``, the time column (the device's
    latest time), then per property its last non-null value and
    ``<property>_time``, that value's time (an int in the type's unit)."""

    _function = "arcadego_last"
    _first_function = None

    def __repr__(self) -> str:
        return f"<arcadego.LastResult {self._request!r}>"
