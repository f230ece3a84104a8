"""DuckDB over arcadego: each type a view of a DuckDB connection.

``attach(con, db)`` registers, for every type of ``db`` (or those named),
a view of that name whose rows are a fresh ``db.scan(type)`` at each query:
``con.sql("select device, avg(temperature) from Sensor group by all")``.
Needs the optional ``duckdb`` package (``pip install 'arcadego[sql]'``).

A view reads every column of its type (DuckDB's projection and filters
apply after the scan, since DuckDB hands neither to a stream); for wide
types, register a narrower scan yourself:
``con.register("Sensor", db.scan("Sensor", columns=["temperature"]))``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from . import _optional

if TYPE_CHECKING:  # pragma: no cover
    from ._database import Database


def attach(con: Any, db: Database, types: Iterable[str] | None = None, prefix: str = "") -> list[str]:
    """Register a view per type of ``db`` on the DuckDB connection ``con``
    (named ``prefix + type``); returns the view names. Each query of a view
    scans the type again, so it sees the rows committed by then."""
    _optional.require("duckdb", "arcadego.duckdb.attach()")
    names = list(types) if types is not None else [t["name"] for t in db.describe().get("types") or []]
    views = []
    for name in names:
        db.describe(name)  # an unknown type raises NotFoundError here
        view = prefix + name
        con.register(view, db.scan(name))
        views.append(view)
    return views
