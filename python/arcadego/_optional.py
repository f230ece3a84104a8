"""Optional dependencies, imported lazily with a clear message when missing.

Tests replace these functions (monkeypatch) to exercise the code paths that
run without pyarrow.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["pyarrow", "require"]

_cache: dict[str, ModuleType | None] = {}

_EXTRAS = {"pyarrow": "arrow", "pandas": "pandas"}


def _try(name: str) -> ModuleType | None:
    if name not in _cache:
        try:
            _cache[name] = importlib.import_module(name)
        except ImportError:
            _cache[name] = None
    return _cache[name]


def pyarrow() -> ModuleType | None:
    """The pyarrow module, or None when it is not installed."""
    return _try("pyarrow")


def require(name: str, what: str) -> ModuleType:
    """Import ``name`` or raise ImportError saying how to install it."""
    module = _try(name)
    if module is None:
        extra = _EXTRAS.get(name)
        hint = f"pip install 'arcadego[{extra}]'" if extra else f"pip install {name}"
        raise ImportError(f"{what} needs {name}, which is not installed ({hint})")
    return module
