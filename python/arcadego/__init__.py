"""arcadego: an embedded, Arrow-native store for wide time series and typed
documents.

Quickstart::

    import arcadego

    with arcadego.connect("data") as db:
        with db.transaction() as tx:            # schema setup: one durable write
            tx.create_type("A")
            tx.create_property("A", "k", "INT64")
            tx.create_index("A", ["k"], unique=False)
        db.insert("A", {"time": [1, 2, 3], "k": [10, None, 30]}, device="d1")
        print(db.scan("A", columns=["k"], device="d1").to_pylist())

Inputs: anything with ``__arrow_c_stream__`` or ``__arrow_c_array__``
(pyarrow, polars, DuckDB, nanoarrow), pandas DataFrames, dicts of lists or
numpy arrays. Results implement ``__arrow_c_stream__`` and convert with
``to_arrow()``, ``to_pandas()``, ``to_pylist()``, ``to_pydict()``.

The library (a Go runtime) is loaded on first use (``connect`` and the
rest; ``import arcadego`` alone loads nothing). It does not survive
``fork()``: in a forked child every call raises :class:`Error`; use the
"spawn" or "forkserver" start methods of multiprocessing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._errors import (
    AlreadyExistsError,
    CanceledError,
    ClosedError,
    ConflictError,
    CorruptError,
    Error,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    PerformanceWarning,
    StorageError,
)
from ._version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from ._database import Database, Transaction, connect, quote_name, set_runtime
    from ._lib import get_include, library_path, pkgconfig_dir
    from ._lib import version as library_version
    from ._result import AggregateResult, LastResult, Result

# The library (and numpy) load on first use of what needs them, not at
# ``import arcadego``: the pytest plugin is imported by every pytest run in
# the environment, most of which never open a database.
_LAZY = {
    "connect": ("._database", "connect"),
    "Database": ("._database", "Database"),
    "Transaction": ("._database", "Transaction"),
    "quote_name": ("._database", "quote_name"),
    "set_runtime": ("._database", "set_runtime"),
    "Result": ("._result", "Result"),
    "AggregateResult": ("._result", "AggregateResult"),
    "LastResult": ("._result", "LastResult"),
    "library_path": ("._lib", "library_path"),
    "get_include": ("._lib", "get_include"),
    "pkgconfig_dir": ("._lib", "pkgconfig_dir"),
    "library_version": ("._lib", "version"),
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'arcadego' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0], __name__), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "connect",
    "Database",
    "Transaction",
    "Result",
    "AggregateResult",
    "LastResult",
    "set_runtime",
    "quote_name",
    "library_path",
    "get_include",
    "pkgconfig_dir",
    "library_version",
    "Error",
    "InvalidArgumentError",
    "NotFoundError",
    "AlreadyExistsError",
    "ConflictError",
    "StorageError",
    "ClosedError",
    "CorruptError",
    "CanceledError",
    "InternalError",
    "PerformanceWarning",
    "__version__",
]
