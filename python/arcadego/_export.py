"""Export Python data (dicts of lists or numpy arrays, pandas DataFrames) as
Arrow C Data Interface structs, without pyarrow.

A batch is exported as a struct array ("+s") whose children are the columns.
The structs live in one numpy block (the parent first, then the
children), so that a 10,000-column batch costs a few vectorized writes,
not 10,000 ctypes objects. Every buffer, string and struct belongs to one
:class:`Export` owner, which the caller keeps until the library call that
takes the structs has returned: the library releases what it takes before
it returns, and never moves children out. So the release callbacks are the
library's own, which only mark the structs released
(arcadego_mark_schema_released / _array_released): a callback into Python,
as ctypes makes one, cost tens of microseconds per struct released.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from typing import Any, Callable

import numpy as np

from ._cdata import ArrowArray, ArrowSchema
from ._errors import InvalidArgumentError

__all__ = ["Column", "Export", "columns_from_mapping", "columns_from_pandas", "export_columns"]

# Word positions of the release members (every member is 8 bytes on
# 64-bit).
_S_RELEASE = 7
_A_RELEASE = 8
_SCHEMA_WORDS = ctypes.sizeof(ArrowSchema) // 8
_ARRAY_WORDS = ctypes.sizeof(ArrowArray) // 8
_FLAG_NULLABLE = 2

# Property type names of the schema → Arrow format strings.
PROPERTY_FORMATS: dict[str, str] = {
    "BOOLEAN": "b",
    "INT32": "i",
    "INT64": "l",
    "FLOAT": "f",
    "DOUBLE": "g",
    "STRING": "u",
    "BINARY": "z",
    "TIMESTAMP": "tsn:",
    "DATE": "tdD",
}

_EMPTY = np.zeros(1, dtype=np.uint8)  # a valid address for zero-length buffers


def _addr(a: np.ndarray) -> int:
    """The data address of a numpy array (cheaper than ``a.ctypes.data``)."""
    return int(a.__array_interface__["data"][0])


class Column:
    """One column ready for export: format, length, null count, buffers.

    ``buffers`` follow the Arrow layout of the format: [validity, values]
    for fixed width, [validity, offsets, data] for strings and binary; a
    validity of None means no nulls.
    """

    __slots__ = ("name", "format", "length", "null_count", "buffers")

    def __init__(self, name: str, fmt: str, length: int, null_count: int,
                 buffers: list[np.ndarray | None]) -> None:
        self.name = name
        self.format = fmt
        self.length = length
        self.null_count = null_count
        self.buffers = buffers


class Export:
    """Owner of one exported batch: the struct blocks and every buffer.

    ``schema_address`` and ``array_address`` are the parent structs to hand
    to the consumer, which moves them.
    """

    def __init__(self, columns: list[Column], length: int) -> None:
        n = len(columns)
        self.cells = length * max(n, 1)
        self.nbytes = 0  # of the buffers
        # Pass 1: strings ("+s\0" "\0" then "format\0name\0" per column)
        # and the buffers to keep.
        parts = [b"+s\0\0"]
        offsets: list[int] = []
        pos = 4
        self.keep: list[Any] = []
        keep = self.keep.append
        addresses: list[int] = [0]  # the parent's validity buffer
        for c in columns:
            f = c.format.encode()
            nm = c.name.encode()
            offsets.append(pos)
            offsets.append(pos + len(f) + 1)
            parts += (f, b"\0", nm, b"\0")
            pos += len(f) + len(nm) + 2
            for b in c.buffers:
                if b is None:
                    addresses.append(0)
                else:
                    if b.nbytes == 0:
                        b = _EMPTY
                    keep(b)
                    self.nbytes += b.nbytes
                    addresses.append(_addr(b))
            addresses.extend(_ZEROS[: 3 - len(c.buffers)])
        # One block for the structs, the child pointer tables, the buffer
        # table and the strings: its address is read once (each read of a
        # numpy array's address builds a dict: a dozen of them were half
        # of a small insert's preparation).
        strings = b"".join(parts)
        sw_n, aw_n = (n + 1) * _SCHEMA_WORDS, (n + 1) * _ARRAY_WORDS
        at_arrays = sw_n
        at_schema_children = at_arrays + aw_n
        at_array_children = at_schema_children + n
        at_buffers = at_array_children + n
        at_strings = at_buffers + len(addresses)
        block = np.empty(at_strings + (len(strings) + 7) // 8, dtype=np.uint64)
        base = _addr(block)
        block[at_buffers:at_strings] = addresses
        block[at_strings:].view(np.uint8)[: len(strings)] = np.frombuffer(strings, dtype=np.uint8)
        self.block = block
        sbase, abase = base, base + 8 * at_arrays
        tbase, strbase = base + 8 * at_buffers, base + 8 * at_strings
        srel, arel = _release_addresses()
        # Pass 2: the struct words. Layouts (8-byte words):
        # schema: format name metadata flags n_children children dictionary release private
        # array:  length null_count offset n_buffers n_children buffers children dictionary release private
        sw = [strbase, strbase + 3, 0, 0, n, base + 8 * at_schema_children if n else 0, 0, srel, 0]
        aw = [length, 0, 0, 1, n, tbase, base + 8 * at_array_children if n else 0, 0, arel, 0]
        for i, c in enumerate(columns):
            sw += (strbase + offsets[2 * i], strbase + offsets[2 * i + 1], 0, _FLAG_NULLABLE, 0, 0, 0, srel, 0)
            aw += (c.length, c.null_count, 0, len(c.buffers), 0, tbase + 8 + 24 * i, 0, 0, arel, 0)
        block[:at_arrays] = sw
        block[at_arrays:at_schema_children] = aw
        if n:
            block[at_schema_children:at_array_children] = range(
                sbase + 8 * _SCHEMA_WORDS, sbase + 8 * _SCHEMA_WORDS * (n + 1), 8 * _SCHEMA_WORDS)
            block[at_array_children:at_buffers] = range(
                abase + 8 * _ARRAY_WORDS, abase + 8 * _ARRAY_WORDS * (n + 1), 8 * _ARRAY_WORDS)
        # Rows: 0 the parent, 1..n the children (views of the block).
        self.schemas: np.ndarray = block[:at_arrays].reshape(n + 1, _SCHEMA_WORDS)
        self.arrays: np.ndarray = block[at_arrays:at_schema_children].reshape(n + 1, _ARRAY_WORDS)
        self.schema_address = sbase
        self.array_address = abase

    def release_all(self) -> None:
        """Mark released what no consumer took (after a call that failed
        before taking the structs); the memory goes with the owner."""
        from . import _lib
        if self.schemas[0, _S_RELEASE]:
            _lib.lib.arcadego_mark_schema_released(self.schema_address)
        if self.arrays[0, _A_RELEASE]:
            _lib.lib.arcadego_mark_array_released(self.array_address)


_ZEROS = (0, 0, 0)
_releases: tuple[int, int] | None = None


def _release_addresses() -> tuple[int, int]:
    """The addresses of the library's marking release callbacks (loading
    the library: importing this module does not)."""
    global _releases
    if _releases is None:
        from . import _lib
        _releases = (ctypes.cast(_lib.lib.arcadego_mark_schema_released, ctypes.c_void_p).value or 0,
                     ctypes.cast(_lib.lib.arcadego_mark_array_released, ctypes.c_void_p).value or 0)
    return _releases


def export_columns(columns: list[Column], length: int) -> Export:
    """Export columns of equal length as one struct array."""
    return Export(columns, length)


# ---------------------------------------------------------------------------
# Conversion of Python values to columns.


def _bitmap(valid: np.ndarray) -> np.ndarray:
    return np.packbits(valid.astype(np.bool_, copy=False), bitorder="little")


def _validity(valid: np.ndarray | None) -> tuple[np.ndarray | None, int]:
    if valid is None:
        return None, 0
    nulls = int(valid.size - np.count_nonzero(valid))
    if nulls == 0:
        return None, 0
    return _bitmap(valid), nulls


def _fixed(name: str, fmt: str, values: np.ndarray, valid: np.ndarray | None) -> Column:
    bitmap, nulls = _validity(valid)
    return Column(name, fmt, len(values), nulls, [bitmap, np.ascontiguousarray(values)])


def _bools(name: str, values: np.ndarray, valid: np.ndarray | None) -> Column:
    bitmap, nulls = _validity(valid)
    return Column(name, "b", len(values), nulls, [bitmap, _bitmap(values)])


def _varwidth(name: str, fmt: str, items: Sequence[bytes], valid: np.ndarray | None) -> Column:
    """items: encoded values (b"" where null)."""
    n = len(items)
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1]) if n else 0
    if total < 2**31 - 1:
        offsets = offsets.astype(np.int32)
    else:  # large_utf8 / large_binary
        fmt = fmt.upper()
    data = np.frombuffer(b"".join(items), dtype=np.uint8) if total else _EMPTY
    bitmap, nulls = _validity(valid)
    return Column(name, fmt, n, nulls, [bitmap, offsets, data])


_TS_UNITS = {"s": "s", "ms": "m", "us": "u", "ns": "n"}


def _from_datetime64(name: str, arr: np.ndarray, valid: np.ndarray | None, tz: str = "") -> Column:
    unit, _ = np.datetime_data(arr.dtype)
    nat = np.isnat(arr)
    if nat.any():
        valid = ~nat if valid is None else (valid & ~nat)
    if unit == "D":
        days = arr.astype(np.int64)
        days[nat] = 0
        return _fixed(name, "tdD", days.astype(np.int32), valid)
    if unit not in _TS_UNITS:
        if unit in ("Y", "M", "W", "h", "m"):
            arr = arr.astype("datetime64[s]")
            unit = "s"
        else:
            arr = arr.astype("datetime64[ns]")
            unit = "ns"
    ints = arr.view(np.int64).copy()
    ints[nat] = 0
    return _fixed(name, f"ts{_TS_UNITS[unit]}:{tz}", ints, valid)


def _int_format(arr: np.ndarray, name: str) -> tuple[str, np.ndarray]:
    k, size = arr.dtype.kind, arr.dtype.itemsize
    if arr.dtype == np.int32:
        return "i", arr
    if arr.dtype == np.int64:
        return "l", arr
    if (k == "i" and size < 4) or (k == "u" and size < 4):
        return "i", arr.astype(np.int32)
    if k == "u" and size == 8 and arr.size and int(arr.max()) > 2**63 - 1:
        raise InvalidArgumentError(f"column {name!r}: uint64 value out of int64 range")
    return "l", arr.astype(np.int64)


def column_from_numpy(name: str, arr: np.ndarray, valid: np.ndarray | None = None,
                      nan_is_null: bool = False) -> Column:
    """A column from a one-dimensional numpy array (masked arrays give nulls)."""
    if isinstance(arr, np.ma.MaskedArray):
        mask = np.ma.getmaskarray(arr)
        valid = ~mask if valid is None else valid & ~mask
        arr = np.asarray(arr.data)
    if arr.ndim != 1:
        raise InvalidArgumentError(f"column {name!r}: expected a one-dimensional array, got shape {arr.shape}")
    k = arr.dtype.kind
    if k == "b":
        return _bools(name, arr, valid)
    if k in "iu":
        fmt, arr = _int_format(arr, name)
        return _fixed(name, fmt, arr, valid)
    if k == "f":
        if arr.dtype == np.float16:
            arr = arr.astype(np.float32)
        if nan_is_null:
            nan = np.isnan(arr)
            if nan.any():
                valid = ~nan if valid is None else valid & ~nan
        native = arr.astype(arr.dtype.newbyteorder("="), copy=False)
        return _fixed(name, "f" if arr.dtype == np.float32 else "g", native, valid)
    if k == "M":
        return _from_datetime64(name, arr, valid)
    if k == "U":
        items = [s.encode("utf-8") for s in arr.tolist()]
        if valid is not None:
            items = [b if v else b"" for b, v in zip(items, valid.tolist())]
        return _varwidth(name, "u", items, valid)
    if k == "S":
        items = arr.tolist()
        if valid is not None:
            items = [b if v else b"" for b, v in zip(items, valid.tolist())]
        return _varwidth(name, "z", items, valid)
    if k == "O":
        values = arr.tolist()
        if valid is not None:
            values = [x if v else None for x, v in zip(values, valid.tolist())]
        return column_from_list(name, values, None, nan_is_null)
    raise InvalidArgumentError(f"column {name!r}: unsupported numpy dtype {arr.dtype}")


def _is_null(v: Any, nan_is_null: bool) -> bool:
    if v is None:
        return True
    t = type(v).__name__
    if t in ("NAType", "NaTType"):
        return True
    if nan_is_null and isinstance(v, float) and math.isnan(v):
        return True
    return False


def column_from_list(name: str, values: Sequence[Any], null_format: str | None = None,
                     nan_is_null: bool = False) -> Column:
    """A column from a list of Python values (None is null).

    The type is taken from the values alone (bool, int, float, str, bytes,
    datetime, date, numpy scalars), never from the property: the library
    converts what converts losslessly and refuses the rest, the same for
    every caller. Only a column of nothing but None, whose values cannot
    tell, takes ``null_format`` (the Arrow format of the property).
    """
    values = list(values)
    types = set(map(type, values))
    valid: np.ndarray | None = None
    if not types <= {int, float, bool, str, bytes}:  # nulls or unusual types
        flags = [not _is_null(v, nan_is_null) for v in values]
        valid = np.array(flags, dtype=np.bool_)
        if valid.all():
            valid = None
        else:
            types = {type(v) for v, ok in zip(values, flags) if ok}
    elif nan_is_null and float in types:
        flags = [not (type(v) is float and v != v) for v in values]
        valid = np.array(flags, dtype=np.bool_)
        if valid.all():
            valid = None
        else:
            types = {type(v) for v, ok in zip(values, flags) if ok}
    kind = null_format if not types and null_format else _infer_format(name, types)
    if kind == "g" and int in types:
        big = next((v for v in filled_values(values, valid) if type(v) is int and abs(v) > 2**53), None)
        if big is not None:
            raise InvalidArgumentError(
                f"column {name!r}: {big} mixed with floats is not exact in a double (|v| > 2^53)")

    def filled(default: Any) -> list[Any]:
        if valid is None:
            return values
        return [v if ok else default for v, ok in zip(values, valid.tolist())]

    try:
        if kind == "b":
            return _bools(name, np.array(filled(False), dtype=np.bool_), valid)
        if kind in ("l", "i"):
            arr = np.array(filled(0), dtype=np.int64)
            if kind == "i":
                if arr.size and (int(arr.min()) < -(2**31) or int(arr.max()) > 2**31 - 1):
                    raise InvalidArgumentError(f"column {name!r}: value out of INT32 range")
                arr = arr.astype(np.int32)
            return _fixed(name, kind, arr, valid)
        if kind in ("g", "f"):
            arr = np.array(filled(0.0), dtype=np.float64 if kind == "g" else np.float32)
            return _fixed(name, kind, arr, valid)
        if kind in ("u", "U"):
            return _varwidth(name, "u", [v.encode("utf-8") for v in filled("")], valid)
        if kind in ("z", "Z"):
            return _varwidth(name, "z", [bytes(v) for v in filled(b"")], valid)
        if kind == "tdD":
            epoch = _dt.date(1970, 1, 1)
            days = [(v.date() if isinstance(v, _dt.datetime) else v) - epoch for v in filled(epoch)]
            return _fixed(name, "tdD", np.array([d.days for d in days], dtype=np.int32), valid)
        if kind.startswith("ts"):
            return _timestamps(name, filled(None), valid, kind)
        if kind == "M":  # numpy datetime64 scalars
            arr = np.array(filled(np.datetime64("NaT")))
            return _from_datetime64(name, arr, valid)
    except (TypeError, ValueError, OverflowError, AttributeError) as e:
        if isinstance(e, InvalidArgumentError):
            raise
        raise InvalidArgumentError(f"column {name!r}: cannot convert values to Arrow {kind!r}: {e}") from None
    raise InvalidArgumentError(f"column {name!r}: unsupported Arrow format {kind!r}")


_SIMPLE_FORMATS = {
    frozenset((int,)): "l",
    frozenset((float,)): "g",
    frozenset((int, float)): "g",
    frozenset((str,)): "u",
    frozenset((bool,)): "b",
    frozenset((bytes,)): "z",
}


def filled_values(values: list[Any], valid: np.ndarray | None) -> list[Any]:
    """values without its nulls."""
    if valid is None:
        return values
    return [v for v, ok in zip(values, valid.tolist()) if ok]


def _infer_format(name: str, types: set[type]) -> str:
    if any(issubclass(t, (bool, np.bool_)) for t in types) and not all(
            issubclass(t, (bool, np.bool_)) for t in types):
        # bool is an int to Python; True stored as 1 is no one's intent.
        names = ", ".join(sorted(t.__name__ for t in types))
        raise InvalidArgumentError(f"column {name!r}: mixes booleans with other values ({names})")
    simple = _SIMPLE_FORMATS.get(frozenset(types))
    if simple is not None:
        return simple
    if not types:
        raise InvalidArgumentError(
            f"column {name!r}: cannot infer a type without a value (the column is empty, or all None); "
            "create the property first or pass a typed numpy array")
    if all(issubclass(t, (bool, np.bool_)) for t in types):
        return "b"
    if all(issubclass(t, (int, np.integer)) for t in types):
        if all(issubclass(t, np.int32) for t in types):
            return "i"
        return "l"
    if all(issubclass(t, (int, float, np.integer, np.floating)) for t in types):
        if all(issubclass(t, np.float32) for t in types):
            return "f"
        return "g"
    if all(issubclass(t, str) for t in types):
        return "u"
    if all(issubclass(t, (bytes, bytearray, memoryview)) for t in types):
        return "z"
    if all(issubclass(t, _dt.datetime) for t in types):
        return "tsu:"
    if all(issubclass(t, _dt.date) for t in types):
        return "tdD"
    if all(issubclass(t, np.datetime64) for t in types):
        return "M"
    names = ", ".join(sorted(t.__name__ for t in types))
    raise InvalidArgumentError(f"column {name!r}: unsupported or mixed value types ({names})")


def _timestamps(name: str, values: list[Any], valid: np.ndarray | None, fmt: str) -> Column:
    unit = fmt[2]
    scale = {"s": 1, "m": 1000, "u": 1_000_000, "n": 1_000_000_000}[unit]
    tz = fmt[4:]
    aware = {v.tzinfo is not None and v.utcoffset() is not None
             for v in values if isinstance(v, _dt.datetime)}
    if len(aware) > 1:
        raise InvalidArgumentError(f"column {name!r}: mixes naive and time-zone-aware datetimes")
    is_aware = aware == {True}
    if is_aware and not tz:
        tz = "UTC"
    epoch_naive = _dt.datetime(1970, 1, 1)
    epoch_aware = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
    out = np.zeros(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if v is None:
            continue
        if isinstance(v, np.datetime64):
            out[i] = v.astype(f"datetime64[{ {'s': 's', 'm': 'ms', 'u': 'us', 'n': 'ns'}[unit] }]").astype(np.int64)
            continue
        if not isinstance(v, _dt.datetime):
            v = _dt.datetime(v.year, v.month, v.day)
        d = v - (epoch_aware if is_aware else epoch_naive)
        micros = (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds
        nanos = getattr(v, "nanosecond", 0)  # pandas Timestamp
        if scale >= 1_000_000:
            out[i] = micros * (scale // 1_000_000) + (nanos if unit == "n" else 0)
        else:
            out[i] = micros // (1_000_000 // scale)
    return _fixed(name, f"ts{unit}:{tz}", out, valid)


def _is_listlike(v: Any) -> bool:
    return isinstance(v, (list, tuple, range)) or (
        hasattr(v, "__len__") and hasattr(v, "__getitem__") and not isinstance(v, (str, bytes, Mapping)))


def columns_from_mapping(data: Mapping[str, Any],
                         null_format: Callable[[str], str | None] | None = None) -> tuple[list[Column], int]:
    """Columns from a dict of lists / numpy arrays (equal lengths required).
    null_format(column) gives the Arrow format of a list column of nothing
    but None (see column_from_list)."""
    if not data:
        raise InvalidArgumentError("no columns to insert")
    lengths: dict[str, int] = {}
    for name, v in data.items():
        if not isinstance(name, str):
            raise InvalidArgumentError(f"column names must be str, got {type(name).__name__}")
        if not (isinstance(v, np.ndarray) or _is_listlike(v)):
            raise InvalidArgumentError(
                f"column {name!r}: expected a list or a numpy array, got {type(v).__name__}")
        lengths[name] = len(v)
    if len(set(lengths.values())) > 1:
        detail = ", ".join(f"{k!r}: {n}" for k, n in lengths.items())
        raise InvalidArgumentError(f"columns have different lengths ({detail})")
    cols = []
    for name, v in data.items():
        if isinstance(v, np.ndarray):
            cols.append(column_from_numpy(name, v))
        elif type(v).__module__.startswith("pandas"):
            cols.extend(columns_from_pandas_series(name, v))
        else:
            values = list(v)
            fmt = None
            if null_format is not None and values and all(x is None for x in values):
                fmt = null_format(name)
            cols.append(column_from_list(name, values, fmt))
    return cols, next(iter(lengths.values()))


def columns_from_pandas_series(name: str, s: Any) -> list[Column]:
    """A column from a pandas Series without pyarrow (NaN, None, NaT, NA are null)."""
    dtype = s.dtype
    kind = getattr(dtype, "kind", "O")
    tz = getattr(dtype, "tz", None)
    if tz is not None:
        utc = s.dt.tz_convert("UTC").dt.tz_localize(None)
        return [_from_datetime64(name, utc.to_numpy(), None, "UTC")]
    if isinstance(dtype, np.dtype) and kind in "biufM":
        return [column_from_numpy(name, s.to_numpy(), nan_is_null=True)]
    numpy_dtype = getattr(dtype, "numpy_dtype", None)
    if numpy_dtype is not None and numpy_dtype.kind in "biuf":  # nullable Int64, boolean, Float64
        mask = s.isna().to_numpy()
        fill = False if numpy_dtype.kind == "b" else 0
        values = s.to_numpy(dtype=numpy_dtype, na_value=fill)
        return [column_from_numpy(name, values, ~mask if mask.any() else None, nan_is_null=True)]
    return [column_from_list(name, s.tolist(), None, nan_is_null=True)]


def columns_from_pandas(df: Any) -> tuple[list[Column], int]:
    """Columns from a pandas DataFrame without pyarrow. Named index levels
    (a DatetimeIndex called "time", say) become columns."""
    if any(n is not None for n in df.index.names):
        df = df.reset_index()
    cols: list[Column] = []
    seen = set()
    for name in df.columns:
        if not isinstance(name, str):
            raise InvalidArgumentError(f"column names must be str, got {name!r}")
        if name in seen:
            raise InvalidArgumentError(f"duplicate column name {name!r}")
        seen.add(name)
        cols.extend(columns_from_pandas_series(name, df[name]))
    return cols, len(df)
