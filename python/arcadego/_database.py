"""Database, Transaction and connect()."""

from __future__ import annotations

import builtins
import ctypes
import datetime as _dt
import json
import math
import operator
import os
import sys
import threading
import warnings
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Callable, TypeVar, Union

import numpy as np

from . import _cdata, _export, _lib, _optional
from ._errors import (
    ClosedError,
    InvalidArgumentError,
    NotFoundError,
    PerformanceWarning,
    StorageError,
)
from ._import import read_device_list
from ._result import AggregateResult, LastResult, Result, _encode_request

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow

__all__ = ["connect", "Database", "Transaction", "quote_name", "PathLike"]

PathLike = Union[str, "os.PathLike[str]"]

#: Autocommit DDL calls on a durable database before PerformanceWarning.
AUTOCOMMIT_DDL_WARN_AFTER = 32

#: devices() decodes names with pyarrow, three times faster than a Python
#: loop, for listings this long (importing pyarrow takes about 60 ms), or
#: from _PYARROW_LOADED_LISTING devices when pyarrow is loaded already
#: (below, its import of the batch costs more than the loop).
_PYARROW_LISTING = 250_000
_PYARROW_LOADED_LISTING = 64

_T = TypeVar("_T")

_PROPERTY_TYPES = ("BOOLEAN", "INT32", "INT64", "FLOAT", "DOUBLE", "STRING", "BINARY", "TIMESTAMP", "DATE")
_SYNC_MODES = ("full", "normal", "off")
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def quote_name(name: str) -> str:
    """Quote a type, property or index name for a DDL script: backticks
    around it, a backtick inside doubled, so any valid name works."""
    if not isinstance(name, str):
        raise InvalidArgumentError(f"names must be str, got {type(name).__name__}")
    return "`" + name.replace("`", "``") + "`"


def _user_stacklevel() -> int:
    """The warnings stacklevel of the first frame outside this package."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PACKAGE_DIR:
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def _encode(value: str, what: str) -> bytes:
    """value as the NUL-terminated UTF-8 the C ABI takes for paths and
    JSON. A NUL inside it would end the C string early, and a lone
    surrogate has no UTF-8: both are refused, naming the value."""
    if isinstance(value, str) and "\x00" in value:
        raise InvalidArgumentError(f"invalid {what} {value!r}: control character U+0000 (NUL)")
    return _utf8(value, what)


def _utf8(value: str, what: str) -> bytes:
    """value as UTF-8, for the names and scripts the C ABI takes with their
    length: the library checks every byte of them (a NUL included) by the
    same rules for every caller. A lone surrogate has no UTF-8: refused."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be str, got {type(value).__name__}")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidArgumentError(f"invalid {what} {value!r}: not valid Unicode ({e.reason})") from None


def _is_pandas_frame(data: Any) -> bool:
    t = type(data)
    return t.__module__.startswith("pandas") and t.__name__ == "DataFrame"


class _Schema:
    """DDL helpers shared by Database (autocommit) and Transaction.

    Each builds a backtick-quoted script and hands it to ``execute``.
    """

    def execute(self, script: str) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def create_type(self, name: str, if_not_exists: bool = False) -> None:
        """CREATE DOCUMENT TYPE name [IF NOT EXISTS]."""
        self.execute(f"CREATE DOCUMENT TYPE {quote_name(name)}" + (" IF NOT EXISTS" if if_not_exists else ""))

    def drop_type(self, name: str, if_exists: bool = False) -> None:
        """DROP TYPE name [IF EXISTS]."""
        self.execute(f"DROP TYPE {quote_name(name)}" + (" IF EXISTS" if if_exists else ""))

    def create_property(self, type: str, name: str, property_type: str, if_not_exists: bool = False) -> None:
        """CREATE PROPERTY type.name TYPE [IF NOT EXISTS].

        ``property_type`` is one of BOOLEAN, INT32, INT64, FLOAT, DOUBLE,
        STRING, BINARY, TIMESTAMP, DATE (or an alias the parser accepts).
        """
        if not isinstance(property_type, str) or not property_type.replace("_", "").isalnum():
            raise InvalidArgumentError(
                f"invalid property type {property_type!r}; expected one of {', '.join(_PROPERTY_TYPES)}")
        self.execute(f"CREATE PROPERTY {quote_name(type)}.{quote_name(name)} {property_type}"
                     + (" IF NOT EXISTS" if if_not_exists else ""))

    def drop_property(self, type: str, name: str, if_exists: bool = False) -> None:
        """DROP PROPERTY type.name [IF EXISTS]."""
        self.execute(f"DROP PROPERTY {quote_name(type)}.{quote_name(name)}" + (" IF EXISTS" if if_exists else ""))

    def create_index(self, type: str, properties: Sequence[str], unique: bool = False,
                     name: str | None = None, if_not_exists: bool = False) -> None:
        """CREATE INDEX [name] ON type (p1, p2, ...) UNIQUE|NOTUNIQUE.

        Without ``name`` the index is called "type[p1,p2]".
        """
        if isinstance(properties, str):
            properties = [properties]
        if not properties:
            raise InvalidArgumentError("create_index needs at least one property")
        cols = ", ".join(quote_name(p) for p in properties)
        head = "CREATE INDEX" + (f" {quote_name(name)}" if name is not None else "")
        head += " IF NOT EXISTS" if if_not_exists else ""
        self.execute(f"{head} ON {quote_name(type)} ({cols}) {'UNIQUE' if unique else 'NOTUNIQUE'}")

    def drop_index(self, name: str, if_exists: bool = False) -> None:
        """DROP INDEX name [IF EXISTS]."""
        self.execute(f"DROP INDEX {quote_name(name)}" + (" IF EXISTS" if if_exists else ""))

    def set_ttl(self, type: str, ttl: str | _dt.timedelta | None) -> None:
        """ALTER TYPE type SET TTL ttl|NONE: rows older than ``ttl`` (a
        ``timedelta``, or a string such as "30d", "12h", "90m", "45s",
        "500ms", "2w"; None: no TTL) are skipped by scans from now on and
        left out by compactions. The type's times must be timestamps.
        """
        if ttl is None:
            text = "NONE"
        elif isinstance(ttl, _dt.timedelta):
            ms = ttl // _dt.timedelta(milliseconds=1)
            if ms <= 0 or ttl % _dt.timedelta(milliseconds=1):
                raise InvalidArgumentError(f"ttl must be a positive whole number of milliseconds, got {ttl!r}")
            text = f"{ms}ms"
        elif isinstance(ttl, str) and ttl.isalnum():
            text = ttl
        else:
            raise InvalidArgumentError(f"ttl must be a timedelta, a string such as '30d', or None, got {ttl!r}")
        self.execute(f"ALTER TYPE {quote_name(type)} SET TTL {text}")


class _Input:
    """One input batch made ready for the library: either (schema, array)
    struct addresses or a stream address, plus what keeps them alive."""

    __slots__ = ("schema", "array", "stream", "keep", "export", "size")

    def __init__(self) -> None:
        self.schema = 0
        self.array = 0
        self.stream = 0
        self.keep: Any = None
        self.export: _export.Export | None = None
        # Cells (rows x columns) and bytes of a source already in memory
        # (pyarrow, polars, a converted pandas frame), when known; None for
        # a stream whose producer makes its batches as they are read.
        self.size: tuple[int, int] | None = None

    def small(self) -> bool:
        """Whether the insert is over too soon for Ctrl-C to matter: fewer
        cells than HANDOFF_CELLS, and fewer bytes than HANDOFF_BYTES where
        the source tells them (a few wide strings can make a long copy)."""
        size = self.size
        if size is None and self.export is not None:
            size = (int(self.export.cells), self.export.nbytes)
        if size is None:  # a producer that does not tell its bytes
            return False
        cells, nbytes = size
        return cells < _lib.HANDOFF_CELLS and nbytes < _lib.HANDOFF_BYTES

    def finish(self) -> None:
        """Release what the library did not take (it always moves, but a
        failure before the call must not leak)."""
        if self.export is not None:
            self.export.release_all()
            self.export = None
        self.keep = None


_UNIT_NANOS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


_WHERE_OPS = ("=", "!=", "<", "<=", ">", ">=", "in", "is null", "is not null")


def _where_json(where: Any) -> dict[str, Any]:
    """The JSON form of a value filter: a condition is a tuple
    ``("x", ">", 0.5)``, ``("s", "in", ["a", "b"])`` or ``("x", "is null")``;
    a list of filters is their "and"; ``{"or": [...]}`` and
    ``{"and": [...]}`` join filters; a dict with "property" is taken as the
    JSON form itself."""
    if isinstance(where, tuple):
        if len(where) not in (2, 3) or not isinstance(where[0], str) or where[1] not in _WHERE_OPS:
            raise InvalidArgumentError(f"a condition is (property, op[, value]) with op one of {', '.join(_WHERE_OPS)}; "
                                       f"got {where!r}")
        cond: dict[str, Any] = {"property": where[0], "op": where[1]}
        takes_value = where[1] not in ("is null", "is not null")
        if takes_value != (len(where) == 3):
            raise InvalidArgumentError(f"where: op {where[1]!r} " + ("needs a value" if takes_value else "takes no value")
                                       + f", got {where!r}")
        if takes_value:
            value = where[2]
            if isinstance(value, (list, tuple, set, frozenset)):
                value = [_where_value(v, where) for v in value]
            else:
                value = _where_value(value, where)
            cond["value"] = value
        return cond
    if isinstance(where, list):
        if not where:
            raise InvalidArgumentError("where: an empty list of conditions")
        return {"and": [_where_json(w) for w in where]} if len(where) > 1 else _where_json(where[0])
    if isinstance(where, Mapping):
        if "property" in where:
            cond = dict(where)
            if "value" in cond:  # the JSON form's values, checked as the tuples' are
                value, shown = cond["value"], (cond.get("property"), cond.get("op"), cond["value"])
                if isinstance(value, (list, tuple, set, frozenset)):
                    cond["value"] = [_where_value(v, shown) for v in value]
                else:
                    cond["value"] = _where_value(value, shown)
            return cond
        if len(where) == 1 and next(iter(where)) in ("and", "or"):
            key = next(iter(where))
            items = where[key]
            if not isinstance(items, (list, tuple)) or not items:
                raise InvalidArgumentError(f"where: {key!r} needs a non-empty list of filters")
            return {key: [_where_json(w) for w in items]}
    raise InvalidArgumentError(f"where: a condition tuple, a list of filters or {{'and'|'or': [...]}}, "
                               f"got {builtins.type(where).__name__}")


_UNIT_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_INTERVAL_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9, "d": 86400 * 10**9,
                "w": 7 * 86400 * 10**9}


def _interval(db: Database, type_name: str, text: str) -> int:
    """An interval such as "15m" in the time unit of a type whose times are
    timestamps."""
    unit = (db.describe(type_name).get("time") or {}).get("unit")
    if unit not in _UNIT_NS:
        raise InvalidArgumentError(f"every={text!r}: {type_name!r} has no timestamp times (yet); give an int in its unit")
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    suffix = text[len(number):]
    if suffix not in _INTERVAL_NS or not number.isdigit() or int(number) <= 0:
        raise InvalidArgumentError(f"every={text!r}: a positive whole number and a unit of "
                                   f"{', '.join(_INTERVAL_NS)}, such as '15m'")
    ns = int(number) * _INTERVAL_NS[suffix]
    if ns % _UNIT_NS[unit]:
        raise InvalidArgumentError(f"every={text!r} is not a whole number of {unit}, the unit of {type_name!r}")
    return ns // _UNIT_NS[unit]


def _json_float(v: float) -> Any:
    """v for a filter's JSON: JSON has no NaN nor infinities, which the
    library takes as {"float": "NaN" | "Infinity" | "-Infinity"}."""
    if math.isfinite(v):
        return v
    return {"float": "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")}


def _where_value(v: Any, cond: tuple[Any, ...]) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if v is None:
        raise InvalidArgumentError(f"where: a comparison with None is never true (as with NULL in SQL); for rows "
                                   f"without a value use ({cond[0]!r}, 'is null'); got {cond!r}")
    if isinstance(v, float):
        return _json_float(v)
    if isinstance(v, (bool, int, str)):
        return v
    raise InvalidArgumentError(f"where: a value is a bool, int, float or str (TIMESTAMP properties as ints in "
                               f"nanoseconds, DATE as days), got {builtins.type(v).__name__}")


def _time_range(db: Database, type_name: str, start: Any, end: Any) -> dict[str, int]:
    """start and end of a scan or delete as the library's int64 bounds
    ({} for None), datetimes converted to the type's time unit."""
    out: dict[str, int] = {}
    time_kind: dict[str, Any] | None = None
    for key, value in (("start", start), ("end", end)):
        if value is None:
            continue
        if isinstance(value, np.integer):
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            if time_kind is None:
                time_kind = db.describe(type_name).get("time") or {}
            value = _time_bound(key, value, type_name, time_kind)
        if not -(2**63) <= value < 2**63:
            raise InvalidArgumentError(f"{key} {value} is outside the int64 range of times")
        out[key] = value
    return out


def _delete_request(db: Database, type: str, device: str | Sequence[str] | None, start: Any, end: Any) -> bytes:
    request: dict[str, Any] = {"type": _check_str(type, "type")}
    if device is not None:
        devices = [device] if isinstance(device, str) else list(device)
        request["devices"] = [_check_str(d, "device") for d in devices]
    request.update(_time_range(db, type, start, end))
    return _encode(json.dumps(request), "delete request")


def _time_bound(key: str, value: Any, type_name: str, time_kind: dict[str, Any]) -> int:
    """A scan bound given as a datetime, pandas Timestamp or numpy
    datetime64, in the unit of type_name's time column: the first time of
    that unit at or after the instant (so that start stays inclusive and
    end exclusive). A naive value is read in UTC when the type's times have
    a zone."""
    unit = time_kind.get("unit") or ""
    if unit not in _UNIT_NANOS:
        raise InvalidArgumentError(
            f"{key} is a {builtins.type(value).__name__}, but type {type_name!r} stores times as plain "
            "integers (or has none yet): pass an int")
    if builtins.type(value).__name__ == "NaTType":  # pandas.NaT
        raise InvalidArgumentError(f"{key} is NaT")
    if builtins.type(value).__name__ == "Timestamp" and hasattr(value, "value"):  # pandas
        nanos = int(value.value)
    elif isinstance(value, np.datetime64):
        if np.isnat(value):
            raise InvalidArgumentError(f"{key} is NaT")
        # In Python ints from the value's own unit: no overflow past 2262.
        base, count = np.datetime_data(value.dtype)
        per = {"W": 7 * 86400 * 10**9, "D": 86400 * 10**9, "h": 3600 * 10**9, "m": 60 * 10**9, "s": 10**9,
               "ms": 10**6, "us": 10**3, "ns": 1}.get(base)
        if per is None:
            raise InvalidArgumentError(f"{key}: numpy datetime64 unit {base!r} is not supported")
        nanos = int(value.astype(np.int64)) * count * per
    elif isinstance(value, _dt.datetime):
        if value.tzinfo is not None and value.utcoffset() is not None:
            d = value - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        else:
            d = value - _dt.datetime(1970, 1, 1)
        nanos = ((d.days * 86400 + d.seconds) * 10**6 + d.microseconds) * 1000
    elif isinstance(value, _dt.date):
        nanos = (value - _dt.date(1970, 1, 1)).days * 86400 * 10**9
    else:
        raise InvalidArgumentError(
            f"{key} must be an int, a datetime, a pandas Timestamp or a numpy datetime64, got "
            f"{builtins.type(value).__name__}")
    step = _UNIT_NANOS[unit]
    bound = -(-nanos // step)  # ceiling
    if not -(2**63) <= bound < 2**63:
        raise InvalidArgumentError(f"{key} {value!r} is outside the int64 range of {unit}")
    return bound


def _column_names(data: Any) -> list[Any]:
    """The column names of data where it tells them without a copy (dict
    keys, pandas and polars columns, a pyarrow schema), else []."""
    if isinstance(data, Mapping):
        return list(data.keys())
    if _is_pandas_frame(data):
        return list(data.columns)
    schema = getattr(data, "schema", None)
    names = getattr(schema, "names", None)
    if isinstance(names, list):
        return names
    columns = getattr(data, "columns", None)
    return list(columns) if isinstance(columns, list) else []


def _known_size(data: Any) -> tuple[int, int] | None:
    """Cells and bytes of a pyarrow Table or RecordBatch or a polars
    DataFrame, whose exports read memory already there; None for any other
    source (a DuckDB relation or a reader may compute its batches as it
    goes), and for columns whose values the library expands from fewer
    bytes (dictionaries, as pandas categoricals become; views; run-end
    encoding): a 2 KiB value repeated 100,000 times is 1 MB of buffers and
    200 MB to copy."""
    kind = type(data)
    module, name = kind.__module__, kind.__name__
    try:
        if module == "pyarrow.lib" and name in ("Table", "RecordBatch"):
            if data.num_columns > _SIZED_COLUMNS or not _plain_arrow_schema(data.schema):
                return None
            nbytes = int(data.get_total_buffer_size())  # whole buffers: cheap, a slice's too
            if nbytes >= _lib.HANDOFF_BYTES:
                nbytes = int(data.nbytes)  # the slice's own ranges
            return int(data.num_rows) * int(data.num_columns), nbytes
        if module.split(".")[0] == "polars" and name == "DataFrame":
            if data.width > _SIZED_COLUMNS or not _plain_polars_dtypes(data.dtypes):
                return None
            rows, cols = data.shape
            return int(rows) * int(cols), int(data.estimated_size())
    except Exception:  # noqa: BLE001 - an unknown version of either: taken as large
        return None
    return None


# The most columns of a batch whose size _known_size works out: a wider one
# takes milliseconds, which the handoff hardly adds to, and naming 10,000
# column types took 27 ms.
_SIZED_COLUMNS = 64


# Column types found plain, the newest last, _PLAIN_SCHEMAS of each kind:
# a loop of inserts of one shape compares each batch's types with these
# instead of naming every column's type (pyarrow: 0.2 µs against 20 µs for
# six columns, the better part of a small insert's time in Python; polars,
# whose types compare their parameters too: a few µs against 12).
_plain_schemas: list[Any] = []  # pyarrow schemas
_plain_polars: list[tuple[Any, ...]] = []  # tuples of polars dtypes
_PLAIN_SCHEMAS = 8


def _remembered_plain(known: list[Any], key: Any, same: Callable[[Any, Any], bool],
                      type_names: Callable[[], Iterable[str]]) -> bool:
    """Whether key (a batch's column types) is plain: equal (``same``) to
    one in known, else no name of type_names() (called only then: listing
    a pyarrow schema's types costs more than the comparisons) is of a type
    that a copy expands (see _expanded); a plain key is remembered."""
    if any(same(key, k) for k in known):
        return True
    if any(_expanded(name) for name in type_names()):
        return False
    if len(known) >= _PLAIN_SCHEMAS:
        del known[0]
    known.append(key)
    return True


def _plain_arrow_schema(schema: Any) -> bool:
    """Whether no column of a pyarrow schema has a type that a copy
    expands (see _expanded)."""
    # An extension type is named by its own name: its storage type tells.
    return _remembered_plain(_plain_schemas, schema, lambda a, b: a.equals(b),
                             lambda: (str(getattr(t, "storage_type", t)) for t in schema.types))


def _plain_polars_dtypes(dtypes: list[Any]) -> bool:
    """Whether no column of a polars DataFrame, by its dtypes, has a type
    that a copy expands (see _expanded)."""
    key = tuple(dtypes)
    return _remembered_plain(_plain_polars, key, operator.eq, lambda: (str(t).lower() for t in key))


def _expanded(type_name: str) -> bool:
    """Whether an Arrow (or polars) type, by name, holds values that a copy
    expands: dictionary-encoded (polars Categorical and Enum export so),
    view or run-end encoded."""
    return any(word in type_name for word in ("dictionary", "view", "run_end", "categorical", "enum"))


def _prepare_input(db: Database, type_name: str, data: Any) -> _Input:
    # The C Data Interface carries names as NUL-terminated strings: a NUL
    # inside one would silently shorten it.
    for name in _column_names(data):
        if isinstance(name, str) and "\x00" in name:
            raise InvalidArgumentError(f"invalid column name {name!r}: control character U+0000 (NUL)")
    inp = _Input()
    if _is_pandas_frame(data):
        pa = _optional.pyarrow()
        if pa is not None:
            df = data.reset_index() if any(n is not None for n in data.index.names) else data
            try:
                table = _numeric_frame_to_arrow(pa, df)
                if table is None:
                    table = pa.Table.from_pandas(df, preserve_index=False)
            except (pa.ArrowException, ValueError, TypeError) as e:
                # A column of mixed objects, duplicate names, ...
                raise InvalidArgumentError(f"pandas DataFrame: {e}") from e
            inp.keep = table.__arrow_c_stream__()
            inp.stream = _cdata.capsule_pointer(inp.keep, _cdata.STREAM_CAPSULE_NAME)
            inp.size = _known_size(table)
            return inp
        cols, n = _export.columns_from_pandas(data)
    elif hasattr(data, "__arrow_c_array__"):
        schema_capsule, array_capsule = data.__arrow_c_array__()
        inp.keep = (schema_capsule, array_capsule)
        inp.schema = _cdata.capsule_pointer(schema_capsule, _cdata.SCHEMA_CAPSULE_NAME)
        inp.array = _cdata.capsule_pointer(array_capsule, _cdata.ARRAY_CAPSULE_NAME)
        inp.size = _known_size(data)
        return inp
    elif hasattr(data, "__arrow_c_stream__"):
        inp.keep = data.__arrow_c_stream__()
        inp.stream = _cdata.capsule_pointer(inp.keep, _cdata.STREAM_CAPSULE_NAME)
        inp.size = _known_size(data)
        return inp
    elif isinstance(data, Mapping):
        cols, n = _export.columns_from_mapping(data, lambda c: db._null_format(type_name, c))
    else:
        raise InvalidArgumentError(
            f"cannot insert a {type(data).__module__}.{type(data).__name__}: expected an object with "
            "__arrow_c_stream__ or __arrow_c_array__ (pyarrow, polars, DuckDB, ...), a pandas "
            "DataFrame, or a dict of lists / numpy arrays")
    inp.export = _export.export_columns(cols, n)
    inp.schema = inp.export.schema_address
    inp.array = inp.export.array_address
    return inp


# Columns from which a DataFrame counts as wide: building a Series per
# column is then most of an insert, and the short path below takes one
# 2-D array per dtype instead.
_WIDE = 64


def _stacked_arrow(pa: Any, names: list[str], columns: list[Any], from_pandas: bool) -> Any:
    """A pyarrow Table of equal-length 1-D numpy columns: one contiguous
    2-D array and one Arrow conversion per dtype, sliced per column."""
    import numpy as np

    groups: dict[Any, list[int]] = {}
    for i, c in enumerate(columns):
        groups.setdefault(c.dtype, []).append(i)
    arrays: list[Any] = [None] * len(names)
    for positions in groups.values():
        block = np.stack([columns[i] for i in positions])  # one row per column
        rows = block.shape[1]
        flat = pa.array(block.reshape(-1), from_pandas=from_pandas)
        for j, i in enumerate(positions):
            arrays[i] = flat.slice(j * rows, rows)
    return pa.Table.from_arrays(arrays, names=names)


def _numeric_frame_to_arrow(pa: Any, df: Any) -> Any:
    """A DataFrame whose columns are all plain numpy numbers, booleans or
    naive datetimes, as a pyarrow Table, column by column from one 2-D
    array per dtype; None for any other frame. pa.Table.from_pandas builds
    a Series and metadata per column: 0.45 s for a row of 10,000 columns,
    where this takes a few milliseconds. NaN is null, as from_pandas has it."""
    import numpy as np

    dtypes = list(df.dtypes)
    names = list(df.columns)
    if (len(names) < _WIDE or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names)
            or not all(isinstance(d, np.dtype) and d.kind in "biufM" for d in dtypes)):
        return None
    groups: dict[Any, list[int]] = {}
    for i, d in enumerate(dtypes):
        groups.setdefault(d, []).append(i)
    columns: list[Any] = [None] * len(names)
    for positions in groups.values():
        block = np.ascontiguousarray(df.iloc[:, positions].to_numpy().T)  # one row per column
        for j, i in enumerate(positions):
            columns[i] = block[j]
    return _stacked_arrow(pa, names, columns, from_pandas=True)


def _decimals_as_double(data: Any) -> Any:
    """data (an Arrow producer) as a pyarrow RecordBatchReader whose
    decimal columns are float64."""
    pa = _optional.require("pyarrow", 'insert(..., decimal="double")')
    if hasattr(data, "__arrow_c_stream__"):
        reader = pa.RecordBatchReader.from_stream(data)
    elif hasattr(data, "__arrow_c_array__"):
        reader = pa.RecordBatchReader.from_batches(*_one_batch(pa, pa.record_batch(data)))
    elif _is_pandas_frame(data):
        table = pa.Table.from_pandas(data, preserve_index=False)
        reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches())
    else:
        raise InvalidArgumentError('decimal="double" takes Arrow data (pyarrow, polars, DuckDB, ...) or pandas')
    fields = [pa.field(f.name, pa.float64(), f.nullable, f.metadata) if pa.types.is_decimal(f.type) else f
              for f in reader.schema]
    target = pa.schema(fields, metadata=reader.schema.metadata)
    if target.equals(reader.schema):
        return reader
    return pa.RecordBatchReader.from_batches(target, (b.cast(target) for b in reader))


def _one_batch(pa: Any, batch: Any) -> tuple[Any, list[Any]]:
    return batch.schema, [batch]


def _insert(db: Database, handle: int, in_tx: bool, type_name: str, data: Any, device: str,
            device_column: str | None = None, decimal: str | None = None) -> None:
    if decimal is not None:
        if decimal != "double":
            raise InvalidArgumentError(f'decimal must be None or "double", got {decimal!r}')
        data = _decimals_as_double(data)
    t = _utf8(type_name, "type")
    long = device_column is not None
    if long and device:
        raise InvalidArgumentError("give device or device_column, not both")
    d = _utf8(device_column, "device column") if long else _utf8(device if device is not None else "", "device")
    inp = _prepare_input(db, type_name, data)
    err = ctypes.c_void_p()
    lib = _lib.lib
    suffix = "_long" if long else ""
    try:
        if inp.stream:
            # Cancellable unless the stream reads a small table in memory
            # (a tablet per device: the handoff to the helper thread and
            # back was most of such an insert's time).
            fn = getattr(lib, ("arcadego_tx_insert_stream" if in_tx else "arcadego_insert_stream") + suffix)
            status = _lib.run_cancellable(db._handle, fn, handle, t, len(t), d, len(d), inp.stream, ctypes.byref(err),
                                          handoff=not inp.small(), keep=(inp.keep, inp.export))
        else:
            fn = getattr(lib, ("arcadego_tx_insert" if in_tx else "arcadego_insert") + suffix)
            status = _lib.run_cancellable(db._handle, fn, handle, t, len(t), d, len(d), inp.schema, inp.array,
                                          ctypes.byref(err), handoff=not inp.small(),
                                          keep=(inp.keep, inp.export))
        _lib.check(status, err)
    finally:
        inp.finish()


class Transaction(_Schema):
    """DDL and inserts that commit together, durably, with one log write.

    Use it as a context manager: it commits when the block ends normally and
    rolls back when it raises. This is the recommended way to set up a
    schema: 100 types with a property and an index cost one fsync, not 300.

    Example::

        with db.transaction() as tx:
            tx.create_type("A")
            tx.create_property("A", "k", "INT64")
            tx.create_index("A", ["k"], unique=False)
            tx.insert("A", {"time": [1, 2], "k": [10, 20]}, device="d1")

    A statement that fails raises and adds nothing; the transaction stays
    usable. A transaction must not be used from two threads at once.
    """

    def __init__(self, db: Database, handle: int) -> None:
        self._ddl = False  # whether execute() added DDL
        self._db = db
        self._handle: int | None = handle

    @property
    def closed(self) -> bool:
        """True once committed or rolled back."""
        return self._handle is None

    def _require_open(self) -> int:
        _lib.check_fork()
        if self._handle is None:
            raise ClosedError("the transaction is already committed or rolled back")
        return self._handle

    def execute(self, script: str) -> None:
        """Add the statements of a DDL script, e.g.
        ``"CREATE DOCUMENT TYPE A; CREATE PROPERTY A.k INT64"``."""
        handle = self._require_open()
        err = ctypes.c_void_p()
        script_bytes = _utf8(script, "script")
        self._ddl = True  # the commit moves the schema epoch
        status = _lib.lib.arcadego_tx_exec(handle, script_bytes, len(script_bytes), ctypes.byref(err))
        _lib.check(status, err)

    def insert(self, type: str, data: Any, device: str = "", device_column: str | None = None,
               decimal: str | None = None) -> None:
        """Add a batch for ``type`` and ``device``, or for the devices of
        its ``device_column`` (see Database.insert)."""
        _insert(self._db, self._require_open(), True, type, data, device, device_column, decimal)

    def delete(self, type: str, device: str | Sequence[str] | None = None,
               start: int | _dt.datetime | Any | None = None, end: int | _dt.datetime | Any | None = None) -> None:
        """Delete, at commit, the rows of ``type`` with ``start <= time <
        end`` (None: unbounded) of ``device`` (a name or a list; None:
        every device) that were committed before the transaction or added
        to it before this call; see :meth:`Database.delete`."""
        request = _delete_request(self._db, type, device, start, end)
        err = ctypes.c_void_p()
        _lib.check(_lib.lib.arcadego_tx_delete(self._require_open(), request, ctypes.byref(err)), err)

    def commit(self) -> None:
        """Validate everything, write one log record, wait for its fsync,
        publish. The transaction is closed afterwards, whatever the result."""
        handle = self._require_open()
        self._handle = None
        err = ctypes.c_void_p()
        # Not handed off: a commit that reached its log write is not
        # interruptible anyway.
        try:
            status = _lib.lib.arcadego_commit(handle, ctypes.byref(err))
        finally:
            if self._ddl:
                self._db._schema_epoch += 1
        _lib.check(status, err)

    def rollback(self) -> None:
        """Discard everything added. A no-op on a closed transaction."""
        if self._handle is None or _lib.forked():
            self._handle = None
            return
        handle, self._handle = self._handle, None
        _lib.lib.arcadego_rollback(handle)

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.rollback()

    def __del__(self) -> None:
        try:
            self.rollback()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"<arcadego.Transaction {'closed' if self.closed else 'open'}>"


class Database(_Schema):
    """An open database. Create it with :func:`connect`.

    Thread safe: threads may insert and scan in parallel (the GIL is
    released during every library call).

    Example::

        with arcadego.connect("data") as db:
            with db.transaction() as tx:
                tx.create_type("A")
                tx.create_property("A", "k", "INT64")
            db.insert("A", {"time": [1, 2], "k": [10, 20]}, device="d1")
            print(db.scan("A").to_pylist())
    """

    def __init__(self, handle: int, path: str | None, sync: str, auto_create: bool, time_column: str,
                 memtable_budget: int | None = None, direct_write_bytes: int | None = None,
                 read_only: bool = False) -> None:
        self._handle: int | None = handle
        self.path = path
        self.sync = sync
        self.auto_create = auto_create
        self.time_column = time_column
        self.memtable_budget = memtable_budget
        self.direct_write_bytes = direct_write_bytes
        self.read_only = read_only
        self._ddl_lock = threading.Lock()
        self._autocommit_ddl = 0
        self._warned = False
        # Scan probes that passed (Result._check), valid while the schema
        # epoch they passed in lasts: each DDL path moves it.
        self._schema_epoch = 0
        self._probed: dict[tuple[str, bytes], int] = {}

    # -- lifecycle ---------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True after close()."""
        return self._handle is None

    def _require_open(self) -> int:
        _lib.check_fork()
        handle = self._handle
        if handle is None:
            raise ClosedError("the database is closed")
        return handle

    def close(self) -> None:
        """Close the database; open transactions are rolled back. Closing a
        closed database does nothing."""
        if self._handle is None:
            return
        if _lib.forked():  # the Go runtime is gone in a forked child
            self._handle = None
            return
        handle, self._handle = self._handle, None
        _cdata.sweep_stream_capsules()
        err = ctypes.c_void_p()
        status = _lib.lib.arcadego_close(handle, ctypes.byref(err))
        _lib.check(status, err)

    def refresh(self) -> None:
        """Read-only handles: see what the writer has committed since this
        handle opened (or last refreshed); results read later see it too.
        A writer sees its own commits at once and has nothing to refresh.

        Example::

            with arcadego.connect("data", read_only=True) as db:
                while True:
                    db.refresh()
                    show(db.scan("Sensor", start=t0).to_pandas())
        """
        self._require_open()
        if not self.read_only:
            raise InvalidArgumentError("refresh() is for read-only handles: a writer sees its own commits at once")
        fresh = connect(self.path, time_column=self.time_column, read_only=True)
        old, self._handle, fresh._handle = self._handle, fresh._handle, None
        self._schema_epoch += 1
        err = ctypes.c_void_p()
        _lib.check(_lib.lib.arcadego_close(old, ctypes.byref(err)), err)

    def __enter__(self) -> Database:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        where = self.path if self.path is not None else ":memory:"
        return f"<arcadego.Database {where!r}{' closed' if self.closed else ''}>"

    def cancel(self) -> None:
        """Cancel the scans and inserts running on this database in other
        threads; they raise CanceledError and change nothing."""
        _lib.lib.arcadego_cancel(self._require_open())

    # -- writes ------------------------------------------------------------

    def transaction(self) -> Transaction:
        """Begin a transaction (use it with ``with``)."""
        handle = self._require_open()
        out = ctypes.c_void_p()
        err = ctypes.c_void_p()
        status = _lib.lib.arcadego_begin(handle, ctypes.byref(out), ctypes.byref(err))
        _lib.check(status, err)
        return Transaction(self, int(out.value or 0))

    def execute(self, script: str) -> None:
        """Run a DDL script as one transaction (autocommit), e.g.
        ``db.execute("CREATE DOCUMENT TYPE B; CREATE PROPERTY B.k INT64")``.

        Each call is one durable commit: for many statements, use one
        script or :meth:`transaction`.
        """
        handle = self._require_open()
        err = ctypes.c_void_p()
        script_bytes = _utf8(script, "script")
        try:
            status = _lib.lib.arcadego_exec(handle, script_bytes, len(script_bytes), ctypes.byref(err))
        finally:
            self._schema_epoch += 1
        _lib.check(status, err)
        self._count_autocommit_ddl()

    def _count_autocommit_ddl(self) -> None:
        if self.path is None or self.sync == "off" or self._warned:
            return
        with self._ddl_lock:
            self._autocommit_ddl += 1
            if self._autocommit_ddl <= AUTOCOMMIT_DDL_WARN_AFTER or self._warned:
                return
            self._warned = True
        warnings.warn(
            f"{AUTOCOMMIT_DDL_WARN_AFTER} autocommit DDL statements on a durable database, each "
            "paying its own fsync: put schema setup in one `with db.transaction() as tx:` block "
            "(or one execute() script) to commit it with a single durable write",
            PerformanceWarning,
            stacklevel=_user_stacklevel(),
        )

    def insert(self, type: str, data: Any, device: str = "", device_column: str | None = None,
               decimal: str | None = None) -> None:
        """Insert one batch as one transaction.

        ``data``: an object with ``__arrow_c_stream__`` or
        ``__arrow_c_array__`` (pyarrow Table/RecordBatch, polars DataFrame,
        DuckDB relation or result, nanoarrow, ...), a pandas DataFrame, or a
        dict of lists / numpy arrays (no pyarrow needed; None is null). The
        time column (``time`` unless connect() said otherwise) holds int64 or
        timestamps; the other columns are properties.

        Long format: with ``device_column``, the batch holds the rows of any
        number of devices, each row's device in that column (strings,
        categorical or dictionary-encoded, no nulls), which is not stored;
        the library splits the rows by device, in the same transaction. A
        scan result, which carries ``device``, goes back in as is.

        DECIMAL columns (DuckDB's ``SUM`` and numeric literals, HUGEINT) have
        no property type and are refused, unless ``decimal="double"``, which
        converts them to DOUBLE (the nearest double: an opt-in loss of
        precision; needs pyarrow).

        Example::

            db.insert("A", {"time": [1, 2, 3], "k": [7, None, 9]}, device="d1")
            db.insert("A", {"device": ["d1", "d2"], "time": [4, 4], "k": [1, 2]},
                      device_column="device")
        """
        handle = self._require_open()
        _insert(self, handle, False, type, data, device, device_column, decimal)

    def _null_format(self, type_name: str, column: str) -> str | None:
        """The Arrow format of property ``column`` of ``type_name``, asked
        of the library (never cached), for a list column of nothing but
        None, whose values cannot tell its type. None when there is no such
        property."""
        try:
            props = self.describe(type_name).get("properties") or []
        except NotFoundError:
            return None
        for p in props:
            if p.get("name") == column:
                return _export.PROPERTY_FORMATS.get(str(p.get("type", "")).upper())
        return None

    # -- reads -------------------------------------------------------------

    def devices(self, type: str, prefix: str | None = None) -> dict[str, list[Any]]:
        """The devices of ``type`` (those whose names start with ``prefix``),
        sorted, from metadata: no data is read. Returns
        ``{"device": [...], "rows": [...], "first": [...], "last": [...]}``:
        each device's row count (exact unless rows were overwritten since
        the device's last flush, then an upper bound) and least and greatest
        time, in the type's time unit (ints). :meth:`devices_arrow` gives
        the same as a pyarrow.Table, without making a Python object per
        value.

        Example::

            devs = db.devices("Sensor", prefix="plant-7/")
            pandas.DataFrame(devs)
        """
        def read(schema: _cdata.ArrowSchema, batch: _cdata.ArrowArray) -> dict[str, list[Any]]:
            n = batch.length
            use_pa = n >= _PYARROW_LISTING or (n >= _PYARROW_LOADED_LISTING and "pyarrow" in sys.modules)
            return read_device_list(schema, batch, _optional.pyarrow() if use_pa else None)

        return self._device_list(type, prefix, read)

    def devices_arrow(self, type: str, prefix: str | None = None) -> pyarrow.Table:
        """:meth:`devices` as a pyarrow.Table (needs pyarrow): columns
        ``device`` (string), ``rows`` (int64), ``first`` and ``last`` (of
        the type of the type's time column: timestamp in its unit and zone,
        or int64).

        Example::

            db.devices_arrow("Sensor").sort_by([("rows", "descending")]).slice(0, 10)
        """
        pa = _optional.require("pyarrow", "devices_arrow()")

        def to_table(schema: _cdata.ArrowSchema, batch: _cdata.ArrowArray) -> pyarrow.Table:
            # Moves both structs into pyarrow, which releases them with the table.
            struct = pa.Array._import_from_c(ctypes.addressof(batch), ctypes.addressof(schema))
            return pa.Table.from_batches([pa.RecordBatch.from_struct_array(struct)])

        return self._device_list(type, prefix, to_table)

    def _device_list(self, type: str, prefix: str | None,
                     read: Callable[[_cdata.ArrowSchema, _cdata.ArrowArray], _T]) -> _T:
        """Run arcadego_device_list and return ``read(schema, batch)`` of its
        batch, releasing what ``read`` did not move out."""
        handle = self._require_open()
        request: dict[str, Any] = {"type": _check_str(type, "type")}
        if prefix is not None:
            request["prefix"] = _check_str(prefix, "prefix")
        schema, batch, err = _cdata.ArrowSchema(), _cdata.ArrowArray(), ctypes.c_void_p()
        try:
            status = _lib.lib.arcadego_device_list(handle, _encode(_encode_request(request), "request"),
                                                   ctypes.byref(schema), ctypes.byref(batch), ctypes.byref(err))
            _lib.check(status, err)
            return read(schema, batch)
        finally:
            _cdata.release(batch, _cdata.ArrayRelease)
            _cdata.release(schema, _cdata.SchemaRelease)

    def scan(self, type: str, columns: Sequence[str] | None = None,
             device: str | Sequence[str] | None = None,
             start: int | _dt.datetime | Any | None = None, end: int | _dt.datetime | Any | None = None,
             batch_rows: int | None = None, device_prefix: str | None = None,
             with_device: bool = True, where: Any = None) -> Result:
        """Scan one type: rows with ``start <= time < end`` of the given
        devices (all by default; ``device_prefix``: those whose names start
        with it), with the given property columns (all by default).
        Returns a lazy :class:`Result`.

        ``with_device=False`` leaves the ``device`` column out of the
        result (the time column comes first); it needs ``device`` to name
        one device, whose rows the result then holds.

        ``where`` keeps the rows a value filter accepts: a condition tuple
        ``("temperature", ">", 30.5)``, ``("status", "in", ["warn", "fail"])``,
        ``("status", "is null")`` (ops ``=``, ``!=``, ``<``, ``<=``, ``>``,
        ``>=``, ``in``, ``is null``, ``is not null``), a list of filters
        (all must hold) or ``{"or": [filters]}`` / ``{"and": [filters]}``.
        As in SQL, a comparison with a null is false (a value of ``None`` is
        refused: use ``"is null"``); floats compare as IEEE 754 says (NaN
        equals nothing). The filter's properties need not be among
        ``columns``; values of TIMESTAMP properties are ints in nanoseconds
        since the epoch, of DATE properties days. It is evaluated in the
        library, batch by batch.

        ``start`` and ``end`` are ints in the type's time unit (numpy
        integers too) or, for a type whose times are timestamps, a
        ``datetime``, ``date``, pandas ``Timestamp`` or numpy ``datetime64``,
        converted to the type's unit (rounded up, so that ``start`` stays
        inclusive and ``end`` exclusive; a naive value is read in UTC when
        the type's times have a zone).

        Example::

            db.scan("A", columns=["k"], device="d1", start=0, end=10**9).to_pandas()

        A filter that constrains the leading properties of an index
        (``=`` or ``in`` on each, then a range on the next) reads through
        the index: see :meth:`explain` and :meth:`lookup`.
        """
        if (isinstance(device, str) and isinstance(type, str) and device.isascii() and type.isascii()
                and columns is None and start is None and end is None and batch_rows is None
                and device_prefix is None and with_device is True and where is None):
            return Result._of_device(self, type, device)  # a point read: the same request, encoded directly
        result = Result(self, self._scan_request(type, columns, device, start, end, batch_rows, device_prefix,
                                                 with_device, where))
        result._check()  # a bad type or column raises here, not at the first read
        return result

    def _scan_request(self, type: str, columns: Sequence[str] | None, device: str | Sequence[str] | None,
                      start: Any, end: Any, batch_rows: int | None, device_prefix: str | None,
                      with_device: bool, where: Any) -> dict[str, Any]:
        """The request of :meth:`scan`, checked."""
        self._require_open()
        request: dict[str, Any] = {"type": _check_str(type, "type")}
        if device is not None:
            devices = [device] if isinstance(device, str) else list(device)
            request["devices"] = [_check_str(d, "device") for d in devices]
        if not isinstance(with_device, bool):
            raise InvalidArgumentError(f"with_device must be a bool, got {builtins.type(with_device).__name__}")
        if not with_device:
            if len(request.get("devices", [])) != 1:
                raise InvalidArgumentError("with_device=False needs device= naming one device: "
                                           "without the column, rows of several devices could not be told apart")
            request["with_device"] = False
        if where is not None:
            request["where"] = _where_json(where)
        if device_prefix is not None:
            request["device_prefix"] = _check_str(device_prefix, "device_prefix")
        if columns is not None:
            if isinstance(columns, str):
                columns = [columns]
            # device and time come with every result: naming them is fine.
            request["properties"] = [_check_str(c, "column") for c in columns
                                     if c not in (self.time_column, "device")]
        request.update(_time_range(self, type, start, end))
        if batch_rows is not None:
            if isinstance(batch_rows, bool) or not isinstance(batch_rows, (int, np.integer)):
                raise InvalidArgumentError(f"batch_rows must be an int, got {builtins.type(batch_rows).__name__}")
            if not 0 < batch_rows < 2**31:
                raise InvalidArgumentError(f"batch_rows must be in 1 .. 2**31-1, got {batch_rows}")
            request["batch_rows"] = int(batch_rows)
        return request

    def lookup(self, type: str, columns: Sequence[str] | None = None, **key: Any) -> Result:
        """Rows whose properties equal, or fall in, the given values: a
        scan with a filter, which an index over those properties serves
        (see :meth:`explain`). Each keyword is a property: a value for
        ``=``, a ``(low, high)`` tuple for ``low <= p <= high`` (either end
        may be None), a list or set for ``in``. Rows come sorted by device,
        then time.

        Example::

            db.execute("CREATE INDEX ON A (k) UNIQUE")
            db.lookup("A", k=42).to_pandas()
            db.lookup("A", k=(10, 20), columns=["v"])
        """
        if not key:
            raise InvalidArgumentError("lookup needs at least one property=value")
        where: list[Any] = []
        for prop, value in key.items():
            if isinstance(value, tuple):
                if len(value) != 2:
                    raise InvalidArgumentError(f"lookup {prop}: a range is a (low, high) tuple, got {len(value)} values")
                low, high = value
                if low is not None:
                    where.append((prop, ">=", low))
                if high is not None:
                    where.append((prop, "<=", high))
                if low is None and high is None:
                    where.append((prop, "is not null"))
            elif isinstance(value, (list, set, frozenset)):
                where.append((prop, "in", list(value)))
            elif value is None:
                raise InvalidArgumentError(f"lookup {prop}=None: nulls are not indexed; scan with where=({prop!r}, 'is null')")
            else:
                where.append((prop, "=", value))
        return self.scan(type, columns=columns, where=where)

    def explain(self, type: str, where: Any = None, device: str | Sequence[str] | None = None,
                start: Any = None, end: Any = None, device_prefix: str | None = None) -> str:
        """How :meth:`scan` with these arguments would read its rows,
        without reading them: ``"index NAME on TYPE (k = 42): 1 candidate
        rows in 1 devices, ..."`` when the filter goes through an index,
        else ``"scan of TYPE: ..."``."""
        handle = self._require_open()
        request = self._scan_request(type, None, device, start, end, None, device_prefix, True, where)
        out = ctypes.c_void_p()
        err = ctypes.c_void_p()
        status = _lib.lib.arcadego_explain(handle, _encode(json.dumps(request), "request"), ctypes.byref(out),
                                           ctypes.byref(err))
        _lib.check(status, err)
        return _lib.take_string(out) or ""

    def aggregate(self, type: str, aggregates: Mapping[str, str | Sequence[str]],
                  device: str | Sequence[str] | None = None,
                  start: int | _dt.datetime | Any | None = None, end: int | _dt.datetime | Any | None = None,
                  by_device: bool = False, every: int | str | None = None, origin: int = 0,
                  device_prefix: str | None = None, where: Any = None,
                  fill: str | None = None) -> AggregateResult:
        """Aggregates of one type's rows, computed in the library (the rows
        are not handed to Python): ``aggregates`` maps properties to
        functions, ``{"temperature": ["min", "max", "mean"], "k": "count"}``;
        the functions are ``count``, ``min``, ``max``, ``sum``, ``mean``,
        ``first`` and ``last``. The rows are those ``scan`` would return for
        the same ``device``, ``device_prefix``, ``start`` and ``end``.

        ``by_device=True`` gives each device its own result rows; ``every``
        (an int in the type's time unit, or for a type whose times are
        timestamps a string such as ``"15m"``, ``"1h"``, ``"1d"``, ``"1w"``,
        ``"500ms"``)
        cuts time into buckets ``[origin + k*every, origin + (k+1)*every)``,
        one result row each; ``origin`` is in the time unit too, and counts
        from the epoch in UTC whatever the type's zone (days of a
        ``Europe/Paris`` type start at 01:00 local in winter unless
        ``origin`` says otherwise). Buckets without rows have no result row
        unless ``fill`` (which needs ``every``) gives them one, from the
        range's first bucket (``start``'s, else the first with rows) to its
        last: ``"null"`` (null aggregates), ``"previous"`` (those of the
        bucket before) or ``"linear"`` (numbers interpolated between the
        buckets on both sides, integers rounded; other types null); their
        counts are 0. A range without rows has no result rows, filled or not.

        Nulls are skipped, as in SQL; a group without a value of a property
        has null aggregates of it (``count``: 0). Result types: ``count``
        INT64, ``sum`` INT64 for integers (summed exactly; a total beyond
        INT64 raises InvalidArgumentError) and DOUBLE for floats, ``mean``
        DOUBLE (of integers, the exact sum over the count),
        ``min``/``max``/``first``/``last`` the property's type; ``min`` and
        ``max`` take numbers, timestamps, dates and strings, and NaN is the
        greatest number. Columns are named ``<property>_<function>``.
        ``where`` filters the rows first, as ``scan``'s.

        Example::

            db.aggregate("Sensor", {"temperature": ["mean", "max"]}, by_device=True, every=3600).to_pandas()
        """
        self._require_open()
        if not isinstance(aggregates, Mapping) or not aggregates:
            raise InvalidArgumentError("aggregates must be a non-empty dict of property -> function(s), "
                                       f"got {builtins.type(aggregates).__name__}")
        pairs: list[list[str]] = []
        for prop, fns in aggregates.items():
            for fn in [fns] if isinstance(fns, str) else list(fns):
                pairs.append([_check_str(prop, "property"), _check_str(fn, "function")])
        request: dict[str, Any] = {"type": _check_str(type, "type"), "aggregates": pairs}
        if device is not None:
            devices = [device] if isinstance(device, str) else list(device)
            request["devices"] = [_check_str(d, "device") for d in devices]
        if device_prefix is not None:
            request["device_prefix"] = _check_str(device_prefix, "device_prefix")
        if not isinstance(by_device, bool):
            raise InvalidArgumentError(f"by_device must be a bool, got {builtins.type(by_device).__name__}")
        request["by_device"] = by_device
        if where is not None:
            request["where"] = _where_json(where)
        if isinstance(every, str):
            every = _interval(self, type, every)
        if fill is not None:
            request["fill"] = _check_str(fill, "fill")
        for name, value in (("every", every), ("origin", origin)):
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise InvalidArgumentError(f"{name} must be an int in the type's time unit, "
                                           f"got {builtins.type(value).__name__}")
            request[name] = int(value)
        request.update(_time_range(self, type, start, end))
        result = AggregateResult(self, request)
        result._check()  # a bad type, property or function raises here
        return result

    def last(self, type: str, columns: Sequence[str] | None = None, device: str | Sequence[str] | None = None,
             device_prefix: str | None = None) -> LastResult:
        """The latest values of each device: one row per device with rows,
        in name order, with the device's latest time, then for each
        property (all by default) its last non-null value and
        ``<property>_time``, that value's time (an int in the type's time
        unit); both are None for a device that never had a value of it.

        Each device is read backward from its latest time, in windows that
        reach four times further back each, until every property has a
        value: a device whose latest row holds them all costs one point
        read, not a scan.

        Example::

            db.last("Sensor", ["temperature"]).to_pandas()
        """
        self._require_open()
        request: dict[str, Any] = {"type": _check_str(type, "type")}
        if columns is not None:
            if isinstance(columns, str):
                columns = [columns]
            request["properties"] = [_check_str(c, "column") for c in columns]
        if device is not None:
            devices = [device] if isinstance(device, str) else list(device)
            request["devices"] = [_check_str(d, "device") for d in devices]
        if device_prefix is not None:
            request["device_prefix"] = _check_str(device_prefix, "device_prefix")
        result = LastResult(self, request)
        result._check()  # a bad type or property raises here
        return result

    def describe(self, type: str | None = None) -> dict[str, Any]:
        """The schema as a dict: for one type
        ``{"name": .., "properties": [{"name": .., "type": "INT64"}], "indexes": [..]}``,
        for None ``{"types": [...]}``. Raises NotFoundError for an unknown type."""
        handle = self._require_open()
        out = ctypes.c_void_p()
        err = ctypes.c_void_p()
        arg = None if type is None else _utf8(type, "type")
        status = _lib.lib.arcadego_describe(handle, arg, 0 if arg is None else len(arg), ctypes.byref(out),
                                            ctypes.byref(err))
        _lib.check(status, err)
        doc = json.loads(_lib.take_string(out) or "{}")
        if type is None:
            return doc
        types = doc.get("types") or []
        for t in types:
            if t.get("name") == type:
                return t
        if len(types) == 1:
            return types[0]
        raise NotFoundError(f"type {type!r} not found")

    def types(self) -> list[str]:
        """The names of every type."""
        return [t["name"] for t in self.describe().get("types") or []]

    # -- storage -----------------------------------------------------------

    def clone(self, dest: PathLike) -> None:
        """Write a consistent copy of the database into directory ``dest``,
        which must not exist or be empty: every commit acknowledged before
        the call. Parquet files are hard-linked, the rest copied, so a
        database holding its schema clones in about a millisecond. Open the
        copy with ``connect(dest)``. Commits may run meanwhile. Raises
        AlreadyExistsError when ``dest`` is not empty, InvalidArgumentError
        for a database in memory.

        Example::

            db.clone("backup-2026-11-30")
            copy = arcadego.connect("backup-2026-11-30")
        """
        handle = self._require_open()
        path = os.fspath(dest)
        if not isinstance(path, str):
            path = os.fsdecode(path)
        err = ctypes.c_void_p()
        status = _lib.lib.arcadego_clone(handle, _encode(path, "clone destination"), ctypes.byref(err))
        _lib.check(status, err)

    def flush(self) -> None:
        """Write everything committed so far to the types' tables and
        return once it is there. Each type with data is a Delta Lake table
        (Parquet files and ``_delta_log/``) whose directory is
        ``stats()["types"][i]["path"]``; Spark, delta-rs, polars and DuckDB
        read it in place. Scans return the same rows before and after.
        Raises StorageError when a write or fsync fails.

        Example::

            db.insert("A", {"time": [1, 2], "k": [10, 20]}, device="d1")
            db.flush()
            import deltalake
            path = next(t["path"] for t in db.stats()["types"] if t["name"] == "A")
            deltalake.DeltaTable(path).to_pyarrow_table()
        """
        handle = self._require_open()
        err = ctypes.c_void_p()
        status = _lib.lib.arcadego_flush(handle, ctypes.byref(err))
        _lib.check(status, err)

    def checkpoint(self) -> None:
        """Flush, then write a snapshot of the catalog and delete the log
        segments the flushed data covers, so the next open replays less.

        Example::

            db.checkpoint()
            assert db.stats()["checkpoints"] >= 1
        """
        handle = self._require_open()
        err = ctypes.c_void_p()
        status = _lib.lib.arcadego_checkpoint(handle, ctypes.byref(err))
        _lib.check(status, err)

    def delete(self, type: str, device: str | Sequence[str] | None = None,
               start: int | _dt.datetime | Any | None = None, end: int | _dt.datetime | Any | None = None) -> None:
        """Delete the rows of ``type`` with ``start <= time < end`` (None:
        unbounded; ints in the type's time unit, or datetimes as in
        :meth:`scan`) of ``device`` (a name or a list; None: every device),
        as one transaction. Rows inserted afterwards stay. Scans see it at
        once; the next flush rewrites the Parquet files that held the rows.
        Raises NotFoundError for an unknown type.

        Example::

            db.delete("Sensor", device="s-1", end=1_700_000_000)  # everything before
            db.delete("Sensor")                                  # every row
        """
        handle = self._require_open()
        request = _delete_request(self, type, device, start, end)
        err = ctypes.c_void_p()
        _lib.check(_lib.lib.arcadego_delete(handle, request, ctypes.byref(err)), err)

    def compact(self, type: str | None = None) -> None:
        """Flush, then merge the Parquet files of ``type`` (None: every
        type) into as few as their size allows (about a million rows
        each), now, in one Delta commit per type; deleted rows, expired
        rows and the columns of dropped properties go, and the old files
        are deleted. The same runs in the background after a
        flush, for a type with 8 or more small files.

        Example::

            for i in range(2):
                db.insert("Sensor", {"time": [i], "temperature": [20.5]}, device=f"s{i}")
                db.flush()  # a file each
            db.compact("Sensor")  # one file (a type of one file is left as it is)
            assert db.stats()["compactions"] >= 1
        """
        handle = self._require_open()
        err = ctypes.c_void_p()
        arg = None if type is None else _utf8(type, "type")
        status = _lib.lib.arcadego_compact(handle, arg, 0 if arg is None else len(arg), ctypes.byref(err))
        _lib.check(status, err)

    def stats(self) -> dict[str, Any]:
        """The database's counters and storage as a dict: ``memtable_bytes``,
        ``immutable_memtables``, ``immutable_bytes``, ``memtable_budget``,
        ``pool_bytes`` (memory of flushed memtables kept for the next ones),
        ``flushes``, ``flushed_rows``, ``flushed_bytes``, ``direct_writes``, ``checkpoints``,
        ``compactions``, ``index_sidecars_built``, ``index_sidecars_merged``,
        ``stalls``, ``stall_nanos``, ``wal_bytes``, ``wal_segments``,
        ``fsyncs``, ``flush_error`` (only while the last flush failed) and
        ``types``: one dict per type with flushed data, by name, with
        ``name``, ``id``, ``path`` (the Delta table's directory, "" in
        memory), ``files``, ``bytes``, ``rows``, ``delta_version``.
        Counters count since connect().

        Example::

            db.flush()
            {t["name"]: t["files"] for t in db.stats()["types"]}
        """
        handle = self._require_open()
        out = ctypes.c_void_p()
        err = ctypes.c_void_p()
        status = _lib.lib.arcadego_stats(handle, ctypes.byref(out), ctypes.byref(err))
        _lib.check(status, err)
        doc: dict[str, Any] = json.loads(_lib.take_string(out) or "{}")
        return doc


def _check_str(value: Any, what: str) -> str:
    """value, a str for a JSON request. A lone surrogate is refused as
    _utf8 refuses it, here at the call: JSON carries it as an escape that
    the library refuses too, but only when the request is sent (a scan's,
    at its first read)."""
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{what} must be str, got {type(value).__name__}")
    if not value.isascii():
        _utf8(value, what)
    return value


def connect(path: PathLike | None = None, sync: str = "full", auto_create: bool = False,
            time_column: str = "time", memtable_budget: int | None = None,
            direct_write_bytes: int | None = None, read_only: bool = False) -> Database:
    """Open (creating if needed) the database in directory ``path``; None
    or "" opens a database held only in memory.

    ``sync``: "full" (a commit returns after its fsync), "normal"
    (background fsync every few ms) or "off". ``auto_create``: inserts
    create missing types and properties, typed from the batch, in the same
    commit. ``time_column``: the name of the time column of inserted batches.
    ``memtable_budget``: bytes of committed data held in memory before
    they are flushed to Parquet in the background (None or 0: 64 MiB).
    ``direct_write_bytes``: a transaction's inserts into one type of at
    least this many bytes are written straight to Parquet files, once,
    instead of to the log and later to Parquet again (None or 0: 16 MiB;
    -1: never); a long-format batch (``device_column``) that is its type's
    only write in the transaction is, from a quarter of it (4 MiB by
    default). Inserts that could meet older rows of the same devices and
    times still in memory go the usual way.

    ``read_only``: open an existing database that another process (or
    another handle in this one) may be writing, without its lock and
    without writing a byte: a notebook or dashboard beside an ingest
    process. The handle sees the database as it was on disk when it
    opened, nothing committed later (connect again to see more); writes,
    DDL, flush, checkpoint and clone raise InvalidArgumentError, and a path
    without a database raises NotFoundError.

    Example::

        with arcadego.connect("data", sync="full", memtable_budget=256 << 20) as db:
            ...
    """
    _lib.check_fork()
    if sync not in _SYNC_MODES:
        raise InvalidArgumentError(f"sync must be one of {', '.join(_SYNC_MODES)}, got {sync!r}")
    if not isinstance(time_column, str) or not time_column:
        raise InvalidArgumentError("time_column must be a non-empty str")
    if memtable_budget is not None:
        if isinstance(memtable_budget, bool) or not isinstance(memtable_budget, int):
            raise InvalidArgumentError(
                f"memtable_budget must be an int (bytes) or None, got {type(memtable_budget).__name__}")
        if memtable_budget < 0:
            raise InvalidArgumentError(f"memtable_budget must be >= 0 bytes (0: the default), got {memtable_budget}")
    if direct_write_bytes is not None:
        if isinstance(direct_write_bytes, bool) or not isinstance(direct_write_bytes, int):
            raise InvalidArgumentError(
                f"direct_write_bytes must be an int (bytes) or None, got {type(direct_write_bytes).__name__}")
        if direct_write_bytes < -1:
            raise InvalidArgumentError(
                f"direct_write_bytes must be >= 0 bytes (0: the default) or -1 (never), got {direct_write_bytes}")
    if not isinstance(read_only, bool):
        raise InvalidArgumentError(f"read_only must be a bool, got {type(read_only).__name__}")
    p: str | None = None
    if path is not None:
        p = os.fspath(path)
        if not isinstance(p, str):
            p = os.fsdecode(p)
        if p in ("", ":memory:"):  # as sqlite3 and DuckDB spell it
            p = None
        elif "\x00" in p:
            raise InvalidArgumentError(f"invalid path {p!r}: control character U+0000 (NUL)")
    if read_only and p is None:
        raise InvalidArgumentError("read_only needs the path of a database on disk, not one in memory")
    if p is not None and not read_only:
        other = _open_databases.get(os.path.realpath(p))
        if other is not None and other._handle is not None:
            raise StorageError(
                f"{p!r} is already open in this process ({other!r}): a directory has one open handle at a "
                "time; close the other one first (db.close(), or open it with `with arcadego.connect(...)`), "
                "or keep using it")
    opts: dict[str, Any] = {"sync": sync, "auto_create": bool(auto_create), "time_column": time_column}
    if memtable_budget is not None:
        opts["memtable_budget"] = int(memtable_budget)
    if direct_write_bytes is not None:
        opts["direct_write_bytes"] = int(direct_write_bytes)
    if read_only:
        opts["read_only"] = True
    options = json.dumps(opts)
    out = ctypes.c_void_p()
    err = ctypes.c_void_p()
    status = _lib.lib.arcadego_open(None if p is None else os.fsencode(p), options.encode(),
                                    ctypes.byref(out), ctypes.byref(err))
    _lib.check(status, err)
    db = Database(int(out.value or 0), p, sync, bool(auto_create), time_column, memtable_budget,
                  direct_write_bytes, read_only)
    if p is not None and not read_only:
        _open_databases[os.path.realpath(p)] = db
    return db


# The databases open in this process by directory, to tell a second
# connect() of the same path (a notebook cell run twice) what happened.
_open_databases: weakref.WeakValueDictionary[str, Database] = weakref.WeakValueDictionary()


def set_runtime(gomaxprocs: int | None = None, memory_limit: int | None = None,
                gc_percent: int | None = None) -> None:
    """Set Go runtime limits of the library (which the Go runtime otherwise
    reads only from the environment at process start).

    Unless ``GOMEMLIMIT`` is set, the library paces its garbage collector
    to the memtables: memory is the most the open databases' memtables have
    held plus half their budgets, rather than twice what is live. A
    ``memory_limit`` replaces that pacing for the life of the process.

    Example::

        arcadego.set_runtime(gomaxprocs=2, memory_limit=4 << 30)
    """
    _lib.check_fork()
    opts = {k: v for k, v in (("gomaxprocs", gomaxprocs), ("memory_limit", memory_limit),
                              ("gc_percent", gc_percent)) if v is not None}
    err = ctypes.c_void_p()
    status = _lib.lib.arcadego_set_runtime(json.dumps(opts).encode(), ctypes.byref(err))
    _lib.check(status, err)
