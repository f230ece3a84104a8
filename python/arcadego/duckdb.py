"""DuckDB over arcadego: each type a view of a DuckDB connection.

``attach(con, db)`` registers, for every type of ``db`` (or those named),
a view of that name whose rows are a fresh ``db.scan(type)`` at each query:
``con.sql("select device, avg(temperature) from Sensor group by all")``.
Needs the optional ``duckdb`` and ``pyarrow`` packages
(``pip install 'arcadego[sql]'``).

A view is a ``pyarrow.dataset.Dataset`` (see :func:`dataset`), which DuckDB
asks for the columns a query uses and the filters it can push down. The
scan reads only those columns (projection pushdown), and a filter made of
``and``-ed comparisons of ``device``, the time column or a property with a
constant becomes the scan's devices, time range and ``where``: a query of
one device reads that device only. pyarrow applies DuckDB's filter to the
scanned rows as well, so a filter the scan cannot take stays correct.

A view keeps the type's columns as they were at ``attach``: attach again
after adding or dropping properties.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from . import _optional

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow.dataset

    from ._database import Database

__all__ = ["attach", "dataset"]


def attach(con: Any, db: Database, types: Iterable[str] | None = None, prefix: str = "") -> list[str]:
    """Register a view per type of ``db`` on the DuckDB connection ``con``
    (named ``prefix + type``); returns the view names. Each query of a view
    scans the type again, so it sees the rows committed by then."""
    _optional.require("duckdb", "arcadego.duckdb.attach()")
    names = list(types) if types is not None else [t["name"] for t in db.describe().get("types") or []]
    views = []
    for name in names:
        view = prefix + name
        con.register(view, dataset(db, name))
        views.append(view)
    return views


def dataset(db: Database, type: str) -> pyarrow.dataset.Dataset:
    """The rows of one type as a ``pyarrow.dataset.Dataset`` whose
    ``scanner()`` (and so ``to_table()``, ``to_batches()``, ``head()``,
    ``count_rows()``) runs ``db.scan`` with the requested columns and, when
    the filter is made of the forms the module docstring names, the
    devices, time range and ``where`` it implies. Readers that push projections and filters
    into a dataset use it: DuckDB, and ``polars.scan_pyarrow_dataset``.
    An unknown type raises ``NotFoundError`` here."""
    return _dataset_class()(db, type)


_classes: dict[str, type] = {}


def _dataset_class() -> type:
    """The Dataset subclass, made on first use: pyarrow is optional."""
    if "dataset" in _classes:
        return _classes["dataset"]
    pa = _optional.require("pyarrow", "arcadego.duckdb")
    ds = _optional.require("pyarrow.dataset", "arcadego.duckdb")

    class TypeDataset(ds.InMemoryDataset):  # type: ignore[misc,name-defined]
        """One type of a database as a pyarrow Dataset (see :func:`dataset`).

        It subclasses InMemoryDataset over an empty table of the type's
        schema so that pyarrow has a valid object underneath; every read
        goes through :meth:`scanner`."""

        def __init__(self, db: Database, type: str) -> None:
            schema = db.scan(type, device=[]).to_arrow().schema
            super().__init__(schema.empty_table(), schema=schema)
            self._db = db
            self._type = type
            self._names = schema.names

        def __repr__(self) -> str:
            return f"<arcadego.duckdb.dataset {self._type!r}>"

        def scanner(self, columns: list[str] | None = None, filter: Any = None,
                    **options: Any) -> pyarrow.dataset.Scanner:
            """A scanner of a fresh scan of the type: the requested columns
            (all by default) of the rows ``filter`` keeps. The
            ``batch_size`` and other scan options of pyarrow are accepted;
            the scan's own batches are used."""
            if columns is not None and not isinstance(columns, (list, tuple)):
                raise TypeError("arcadego datasets take columns as a list of names, not expressions")
            pushed = _pushdown(filter, self.schema, self._db.time_column) if filter is not None else None
            request = pushed.request if pushed is not None else {}
            wanted = list(self._names if columns is None else columns)
            if filter is not None:
                # pyarrow filters the scanned batches: they need its columns.
                wanted += pushed.fields if pushed is not None else self._names
            scan = self._db.scan(self._type, columns=list(dict.fromkeys(wanted)), **request)
            reader = pa.RecordBatchReader._import_from_c_capsule(scan.__arrow_c_stream__())
            return ds.Scanner.from_batches(reader, columns=list(self._names if columns is None else columns),
                                           filter=filter)

        def _refuse(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("an arcadego dataset is read through scanner(), to_table(), to_batches(), "
                                      "head() or count_rows()")

        # These would read the empty table underneath: refused, not wrong.
        get_fragments = filter = join = join_asof = sort_by = replace_schema = _refuse

    _classes["dataset"] = TypeDataset
    return TypeDataset


class _Pushed:
    """What a DuckDB/pyarrow filter gives the scan: request keywords and
    the fields the filter reads."""

    def __init__(self) -> None:
        self.request: dict[str, Any] = {}
        self.fields: list[str] = []


# What pyarrow prints for the filters DuckDB pushes: "(name op literal)",
# "is_valid(name)", and DuckDB's form of "name in (...)".
_NAME = r"([A-Za-z_][A-Za-z0-9_]*)"
_COMPARISON = re.compile(r'\(' + _NAME + r' (==|<|<=|>|>=) ("(?:[^"\\]|\\.)*"|[^()" ]+(?: [^()" ]+)?)\)')
_VALID = re.compile(r"is_valid\(" + _NAME + r"\)")
_IN = re.compile(r"if_else\(is_valid\(" + _NAME + r"\), is_in\(\1, \{value_set=[a-z0-9_]+:\[(.*)\], "
                 r"null_matching_behavior=MATCH\}\), null\[bool\]\)", re.DOTALL)
_ITEM = re.compile(r'"(?:[^"\\]|\\.)*"|[^\s,"]+')
_OPS = {"==": "=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _pushdown(filter: Any, schema: Any, time_column: str) -> _Pushed | None:
    """The scan request that a filter implies, or None when the filter is
    not an ``and`` of comparisons of a column with a constant, ``in``
    lists and ``is not null``.

    pyarrow expressions cannot be walked from Python; their printed form
    is parsed, the expression is built again from the parts, and the
    parts are used only if that rebuilt expression equals the filter."""
    conditions: list[tuple[str, str, Any]] = []
    rebuilt = _parse(str(filter), schema, conditions)
    if rebuilt is None or not rebuilt.equals(filter):
        return None
    pushed = _Pushed()
    devices: set[str] | None = None
    start, end = None, None
    where: list[tuple[Any, ...]] = []
    for name, op, value in conditions:
        pushed.fields.append(name)
        if name == "device":
            if op == "is not null":
                continue
            names = set(value) if op == "in" else {value} if op == "=" else None
            if names is None:
                return None
            # A name no device can have matches no row (the scan would
            # refuse it as a bad name).
            names = {n for n in names if _possible_device(n)}
            devices = names if devices is None else devices & names
        elif name == time_column:
            if op in ("in", "is not null"):
                continue  # left to pyarrow
            lo, hi = {"=": (value, value + 1), ">": (value + 1, None), ">=": (value, None), "<": (None, value),
                      "<=": (None, value + 1)}[op]
            if lo is not None and lo < 2**63:
                start = lo if start is None else max(start, lo)
            if hi is not None and hi < 2**63:
                end = hi if end is None else min(end, hi)
        elif op == "is not null":
            where.append((name, op))
        else:
            where.append((name, op, value))
    if devices is not None:
        pushed.request["device"] = sorted(devices)
    if start is not None and end is not None and start >= end:
        start, end = 0, 0  # no time can match
    if start is not None:
        pushed.request["start"] = start
    if end is not None:
        pushed.request["end"] = end
    if where:
        pushed.request["where"] = where
    return pushed


def _parse(text: str, schema: Any, conditions: list[tuple[str, str, Any]]) -> Any:
    """The expression a printed filter stands for, rebuilt from the forms
    above (None for any other form); appends the conditions it holds as
    (column, op, value) with values in the scan's terms."""
    import pyarrow as pa
    import pyarrow.compute as pc

    halves = _strip_and(text)
    if halves is not None:
        left = _parse(halves[0], schema, conditions)
        right = _parse(halves[1], schema, conditions) if left is not None else None
        return None if right is None else left & right
    m = _VALID.fullmatch(text)
    if m is not None:
        if m.group(1) not in schema.names:
            return None
        conditions.append((m.group(1), "is not null", None))
        return pc.field(m.group(1)).is_valid()
    m = _COMPARISON.fullmatch(text) or _IN.fullmatch(text)
    if m is None or m.group(1) not in schema.names:
        return None
    name = m.group(1)
    field_type = schema.field(name).type
    value_type = field_type.value_type if pa.types.is_dictionary(field_type) else field_type
    texts = [m.group(3)] if m.re is _COMPARISON else _ITEM.findall(m.group(2))
    scalars = []
    for t in texts:
        value = _literal(t, value_type)
        if value is None or isinstance(value, float) and not math.isfinite(value):
            return None  # NaN and infinities stay with pyarrow (JSON has no such numbers)
        try:
            scalars.append(pa.scalar(value, type=value_type))
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            return None
    # Timestamps go to the scan as ints in the column's unit.
    values = [s.value if pa.types.is_timestamp(value_type) else s.as_py() for s in scalars]
    column = pc.field(name)
    if m.re is _IN:
        if not scalars:
            return None
        conditions.append((name, "in", values))
        return pc.if_else(column.is_valid(), pc.is_in(column, value_set=pa.array(scalars, type=value_type)),
                          pa.scalar(None, pa.bool_()))
    op = m.group(2)
    conditions.append((name, _OPS[op], values[0]))
    compare = {"==": pc.equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}[op]
    return compare(column, scalars[0])


def _possible_device(name: str) -> bool:
    """Whether a device may have this name: at most 256 bytes of UTF-8,
    no control characters (the engine's rules)."""
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return size <= 256 and not any(unicodedata.category(c) == "Cc" for c in name)


def _strip_and(s: str) -> tuple[str, str] | None:
    """"(a and b)" as (a, b), splitting at the ``and`` outside any
    parentheses or string; None for anything else."""
    if not (s.startswith("(") and s.endswith(")")):
        return None
    body = s[1:-1]
    depth = 0
    quoted = False
    i = 0
    while i < len(body):
        c = body[i]
        if quoted:
            if c == "\\":
                i += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0 and body.startswith(" and ", i):
            return body[:i], body[i + 5:]
        i += 1
    return None


def _literal(text: str, value_type: Any) -> Any:
    """A printed pyarrow constant read as the column's type, or None."""
    import numpy as np
    import pyarrow as pa

    if pa.types.is_string(value_type) or pa.types.is_large_string(value_type):
        if not (len(text) >= 2 and text[0] == '"' and text[-1] == '"'):
            return None
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    if text.startswith('"'):
        return None
    try:
        if pa.types.is_integer(value_type):
            return int(text)
        if pa.types.is_floating(value_type):
            return float(text)
        if pa.types.is_boolean(value_type):
            return {"true": True, "false": False}.get(text)
        if pa.types.is_timestamp(value_type):
            # As an int in the column's unit: pyarrow takes no naive
            # datetime64 for a zoned type (its print ends in "Z", UTC).
            moment = np.datetime64(text.removesuffix("Z").replace(" ", "T"))
            return int(moment.astype(f"datetime64[{value_type.unit}]").astype(np.int64))
    except ValueError:
        return None
    return None
